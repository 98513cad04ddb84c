package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

func openQueries(t *testing.T, dir string) *query.Queries {
	t.Helper()
	q, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// get serves one request through the full handler and returns status and body. Every
// exchange is validated against the generated OpenAPI document (openapi_test.go).
func get(t *testing.T, h http.Handler, target string) (int, []byte) {
	t.Helper()
	return serve(t, h, httptest.NewRequest("GET", target, nil))
}

// serve is get for any request (POST routes, headers): served, then validated against
// the generated OpenAPI document.
func serve(t *testing.T, h http.Handler, req *http.Request) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	validateExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec.Code, rec.Body.Bytes()
}

// busiestToken picks the outcome token with the most trades.
func busiestToken(t *testing.T, q *query.Queries) string {
	t.Helper()
	var tok string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT token_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestRouteTableDrivesRouter: the router holds exactly the routes of the table, with
// their methods, and nothing else.
func TestRouteTableDrivesRouter(t *testing.T) {
	api := &handlers.API{}
	got := map[string]bool{}
	err := api.Router().Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := r.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := r.GetMethods()
		for _, m := range methods {
			got[m+" "+tpl] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, rt := range handlers.Routes() {
		key := rt.Method + " " + rt.Path
		if want[key] {
			t.Errorf("route declared twice: %s", key)
		}
		want[key] = true
		if !got[key] {
			t.Errorf("route table has %s; the router does not", key)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("router has %s; the route table does not", k)
		}
	}
}

// TestCLINamesUnique: every route has its own `mdq query <area> <name>`.
func TestCLINamesUnique(t *testing.T) {
	seen := map[string]string{}
	for _, rt := range handlers.Routes() {
		k := rt.Area + " " + rt.CLIName()
		if prev, dup := seen[k]; dup {
			t.Errorf("%s and %s share the CLI name %q", prev, rt.Path, k)
		}
		seen[k] = rt.Path
	}
}

func TestHealthz(t *testing.T) {
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler()
	code, body := get(t, h, "/healthz")
	if code != 200 || !bytes.Contains(body, []byte(`"status":"ok"`)) || !bytes.Contains(body, []byte(`"now":"2026-11-20T12:00:00Z"`)) {
		t.Fatalf("healthz %d %s", code, body)
	}
}

// TestErrorsAreJSON: unknown paths and methods answer JSON, never plain text.
func TestErrorsAreJSON(t *testing.T) {
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler()
	for _, tc := range []struct {
		method, target string
		code           int
		key            string
	}{
		{"GET", "/v1/predmkt/nope", 404, "error"},
		{"GET", "/v1/onchain/nope", 404, "detail"},
		{"POST", "/v1/predmkt/ohlcv", 405, "error"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
		var body map[string]string
		if rec.Code != tc.code || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body[tc.key] == "" {
			t.Errorf("%s %s: %d %s", tc.method, tc.target, rec.Code, rec.Body)
		}
	}
}

// TestPanicIs503WithoutDetail: a panic anywhere behind the router answers 503 with a
// generic JSON body; the log gets the detail.
func TestPanicIs503WithoutDetail(t *testing.T) {
	var logBuf bytes.Buffer
	api := &handlers.API{Q: openQueries(t, testlake.Tiny(t)), Log: slog.New(slog.NewJSONHandler(&logBuf, nil)),
		Mounts: []handlers.Mount{{Prefix: "/boom", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("driver exploded: secret detail")
		})}}}
	code, body := get(t, api.Handler(), "/boom")
	if code != 503 || bytes.Contains(body, []byte("secret")) {
		t.Fatalf("%d %s", code, body)
	}
	if !strings.Contains(logBuf.String(), "secret detail") || !strings.Contains(logBuf.String(), "request_id") {
		t.Fatalf("log lacks the panic: %s", logBuf.String())
	}
}

// TestCorruptFileIs503AndNamed: a corrupt Parquet file makes the routes over its table
// answer 503 with no driver text, the log names the file, and other routes keep working.
func TestCorruptFileIs503AndNamed(t *testing.T) {
	dir := testlake.Copy(t)
	q := openQueries(t, dir)
	tok := busiestToken(t, q)
	files, _ := filepath.Glob(filepath.Join(dir, "archive/venue=predmkt/date=*/trades.parquet"))
	if len(files) == 0 {
		t.Fatal("no trades files")
	}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("PAR1 this is not parquet PAR1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logBuf bytes.Buffer
	api := &handlers.API{Q: q, Log: slog.New(slog.NewJSONHandler(&logBuf, nil))}
	h := api.Handler()
	code, body := get(t, h, "/v1/predmkt/ohlcv?interval=1h&token_id="+tok)
	if code != 503 || string(body) != "{\"error\":\"store unavailable\"}\n" {
		t.Fatalf("corrupt: %d %s", code, body)
	}
	if !strings.Contains(logBuf.String(), "trades.parquet") {
		t.Fatalf("log does not name the file: %s", logBuf.String())
	}
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Fatalf("healthz after corruption: %d", code)
	}
	var n int
	if err := q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM perpdex_fills").Scan(&n); err != nil {
		t.Fatalf("another table stopped working: %v", err)
	}
}

// TestNoLake: opening a directory without a lake names it and says what to run.
func TestNoLake(t *testing.T) {
	dir := t.TempDir()
	_, err := query.Open(context.Background(), dir, query.Options{})
	if err == nil || err.Error() != "no lake at "+dir+": run mdq demo or mdq ingest" {
		t.Fatalf("err = %v", err)
	}
}

// TestParamParsing covers the generic rules of the route table's parameters.
func TestParamParsing(t *testing.T) {
	rt := &handlers.Route{Area: "onchain", Params: []handlers.Param{
		{Name: "limit", Kind: handlers.Int, Default: int64(100), Max: handlers.F(1000), ClampHi: handlers.F(50), ZeroIsDefault: true},
		{Name: "window", Kind: handlers.Enum, Enum: []string{"24h", "30d"}, Default: "30d", EnumFallback: "30d"},
		{Name: "chain", Kind: handlers.Enum, Enum: []string{"ethereum", "bsc", "base"}, Default: "ethereum",
			EnumMessage: "chain '%s' not supported (use ethereum, bsc, or base)"},
		{Name: "min_usd", Kind: handlers.Number, Default: 1.0},
		{Name: "from", Kind: handlers.Int, Lenient: true, Default: int64(0)},
		{Name: "address", In: "path", Kind: handlers.Address, Message: "Bad EVM address %q (requires 0x prefix and exactly 42 characters)"},
	}}
	for _, tc := range []struct {
		name, query string
		vars        map[string]string
		check       func(handlers.Values) bool
		wantErr     string
	}{
		{"defaults (a default above the applied cap is applied at the cap)", "", nil, func(v handlers.Values) bool {
			return v.Int("limit") == 50 && v.Str("window") == "30d" && v.Float("min_usd") == 1 && !v.Has("limit")
		}, ""},
		{"zero resolves to default", "limit=0", nil, func(v handlers.Values) bool { return v.Int("limit") == 50 }, ""},
		{"empty resolves to default", "limit=", nil, func(v handlers.Values) bool { return v.Int("limit") == 50 }, ""},
		{"accepted and applied", "limit=7", nil, func(v handlers.Values) bool { return v.Int("limit") == 7 }, ""},
		{"accepted but capped", "limit=1000", nil, func(v handlers.Values) bool { return v.Int("limit") == 50 }, ""},
		{"over accepted", "limit=1001", nil, nil, "limit must be at most 1000"},
		{"not integer", "limit=abc", nil, nil, "limit must be an integer"},
		{"enum fallback", "window=31d", nil, func(v handlers.Values) bool { return v.Str("window") == "30d" }, ""},
		{"enum message", "chain=solana", nil, nil, "chain 'solana' not supported (use ethereum, bsc, or base)"},
		{"explicit zero honoured without ZeroIsDefault", "min_usd=0", nil, func(v handlers.Values) bool { return v.Float("min_usd") == 0 && v.Has("min_usd") }, ""},
		{"NaN refused", "min_usd=NaN", nil, nil, "min_usd must be a finite number"},
		{"lenient ignored", "from=2026-01-01", nil, func(v handlers.Values) bool { return v.Int("from") == 0 }, ""},
		{"address lower-cased", "", map[string]string{"address": "0xABCDEF0000000000000000000000000000000001"},
			func(v handlers.Values) bool { return v.Str("address") == "0xabcdef0000000000000000000000000000000001" }, ""},
		{"bad address message", "", map[string]string{"address": "abc"}, nil, `Bad EVM address "abc" (requires 0x prefix and exactly 42 characters)`},
	} {
		q, _ := url.ParseQuery(tc.query)
		v, err := rt.Parse(q, tc.vars)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !tc.check(v) {
			t.Errorf("%s: err = %v, values wrong", tc.name, err)
		}
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
