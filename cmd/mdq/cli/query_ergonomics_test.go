package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
	"mdq/ratelimit"
)

func runOut(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Do(args, strings.NewReader(""), &out, &errb, "test")
	return out.String(), errb.String(), code
}

// TestQueryHelpShowsTypesDefaultsEnumsExamples: each flag's help names its type,
// default, enumeration and an example, and the command shows a runnable example.
func TestQueryHelpShowsTypesDefaultsEnumsExamples(t *testing.T) {
	out, _, code := runOut(t, "query", "predmkt", "events", "--help")
	if code != 0 {
		t.Fatal(code)
	}
	for _, want := range []string{
		"(required) [integer] epoch ms, inclusive, on local_ts (e.g. 1795172400000)",
		"[one of book|price_change|trade|tick_size_change|status]",
		"(default 5000)",
		"[comma-separated list]",
		"mdq query predmkt events --from_ms 1795172400000 --to_ms 1795176000000",
		"--remote localhost:8080",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(out, "9223372036854775807") {
		t.Error("help shows a no-bound sentinel default")
	}
}

// TestQueryTablePrintsCursor: csv and table output of a paged route print the
// envelope's cursor with the flag that fetches the next page (csv: on stderr), and
// following it gives the next page.
func TestQueryTablePrintsCursor(t *testing.T) {
	dir := testlake.Tiny(t)
	out, _, code := runOut(t, "query", "predmkt", "markets", "--data", dir, "--clock", "2026-11-20T12:00:00Z", "--limit", "2", "--format", "table")
	if code != 0 {
		t.Fatal(out)
	}
	i := strings.Index(out, "(next page: --cursor ")
	if i < 0 {
		t.Fatalf("no cursor in table output:\n%s", out)
	}
	cursor := strings.TrimSuffix(strings.TrimSpace(out[i+len("(next page: --cursor "):]), ")")
	csvOut, csvNotes, _ := runOut(t, "query", "predmkt", "markets", "--data", dir, "--clock", "2026-11-20T12:00:00Z", "--limit", "2", "--format", "csv")
	if strings.Contains(csvOut, "#") || !strings.Contains(csvNotes, "--cursor "+cursor) {
		t.Fatalf("csv: stdout %q, stderr %q", csvOut, csvNotes)
	}
	next, errs, code := runOut(t, "query", "predmkt", "markets", "--data", dir, "--clock", "2026-11-20T12:00:00Z", "--limit", "2", "--format", "table", "--cursor", cursor)
	if code != 0 || next == out {
		t.Fatalf("next page: %d %s %s", code, next, errs)
	}
}

// TestQueryRemoteEqualsLocal: --remote runs the same subcommand against a server, with
// the key from $MDQ_KEY; its JSON is the local body byte for byte; a missing key is
// the server's 401 message.
func TestQueryRemoteEqualsLocal(t *testing.T) {
	data := testlake.Copy(t)
	s, err := ratelimit.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := s.CreateKey(context.Background(), "remote", "")
	s.Close()
	ctx := context.Background()
	cfg := &Config{Data: data}
	cmd := newServeCmd(cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	q, err := query.Open(ctx, data, query.Options{Logger: log, Now: func() time.Time { return testlake.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	api := &handlers.API{Q: q, Log: log}
	cleanup, err := accessHook(ctx, cfg, cmd, api)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cleanup(); q.Close() }()
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	const wallet = "0x21f839801b99033064425928f998dbf97ccfe7ed"
	args := []string{"query", "predmkt", "wallets-positions", "--address", wallet}
	local, errs, code := runOut(t, append(args, "--data", data, "--clock", "2026-11-20T12:00:00Z")...)
	if code != 0 {
		t.Fatalf("local: %s", errs)
	}
	t.Setenv("MDQ_KEY", key)
	remote, errs, code := runOut(t, append(args, "--remote", strings.TrimPrefix(srv.URL, "http://"))...)
	if code != 0 || remote != local {
		t.Fatalf("remote differs (%d %s):\nremote %.300s\nlocal  %.300s", code, errs, remote, local)
	}
	table, errs, code := runOut(t, append(args, "--remote", srv.URL, "--format", "table")...)
	if code != 0 || table == remote {
		t.Fatalf("remote table: %d %s", code, errs)
	}
	t.Setenv("MDQ_KEY", "")
	_, errs, code = runOut(t, append(args, "--remote", srv.URL)...)
	if code == 0 || !strings.Contains(errs, "401: missing credential") {
		t.Fatalf("no key: %d %s", code, errs)
	}
}

// TestQueryRefusesBadTokenIDs: the CLI shares REST's validation: an empty or
// non-digit token id is a 400 message, not an empty answer.
func TestQueryRefusesBadTokenIDs(t *testing.T) {
	dir := testlake.Tiny(t)
	for _, tc := range []struct{ value, want string }{
		{"", "400: token_id is required"},
		{"6.6e+76", `400: token_id "6.6e+76" is not an outcome-token id (a decimal digit string)`},
	} {
		_, errs, code := runOut(t, "query", "predmkt", "orderbook", "--data", dir, "--token_id", tc.value)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("--token_id %q: %d %s", tc.value, code, errs)
		}
	}
}
