package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"mdq/archive"
	"mdq/handlers"
	"mdq/lake"
	"mdq/query"
	"mdq/ratelimit"
)

// smallLake writes a lake marker and a few archive files with lake.Writer.
func smallLake(t testing.TB, rows int) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, day := range []string{"2026-11-18", "2026-11-19"} {
		if _, err := w.Write(ctx, lake.PerpdexTrades, []string{day}, func(add lake.AppendFunc) error {
			for i := 0; i < rows; i++ {
				ts := int64(1763510400000 + i*37)
				if err := add("BTC", ts, ts+3, int64(i), "B", 90000.5+float64(i%100), 0.01*float64(i%7+1),
					fmt.Sprintf("0x%064x", i), int64(i), fmt.Sprintf("0x%040x", i), fmt.Sprintf("0x%040x", i+1)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, lake.MarkerFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveAPI wires the API exactly as `mdq serve` does (same flags, same hook) and
// returns its handler.
func serveAPI(t testing.TB, data string, args ...string) http.Handler {
	t.Helper()
	ctx := context.Background()
	cfg := &Config{Data: data}
	cmd := newServeCmd(cfg)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	q, err := query.Open(ctx, data, query.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	api := &handlers.API{Q: q, Log: log}
	cleanup, err := accessHook(ctx, cfg, cmd, api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup(); q.Close() })
	return api.Handler()
}

func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Do(args, strings.NewReader(""), &out, &errb, "test")
	if code != 0 {
		t.Logf("mdq %v: %s", args, errb.String())
	}
	return out.String(), code
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestKeysTokensDevKeyCLI(t *testing.T) {
	data := t.TempDir()
	out, code := run(t, "keys", "create", "--data", data, "--user", "alice", "--name", "laptop")
	key := lastLine(out)
	if code != 0 || !strings.HasPrefix(key, "mdq_") {
		t.Fatalf("keys create: %d %q", code, out)
	}
	id := strings.Split(key, "_")[1]
	out, _ = run(t, "keys", "list", "--data", data)
	if !strings.Contains(out, id) || !strings.Contains(out, "laptop") || strings.Contains(out, key) {
		t.Fatalf("keys list: %q", out)
	}
	if _, code := run(t, "keys", "revoke", "--data", data, id); code != 0 {
		t.Fatal("revoke")
	}
	if _, code := run(t, "keys", "revoke", "--data", data, "nope"); code == 0 {
		t.Fatal("revoking an unknown id must fail")
	}
	out, code = run(t, "tokens", "issue", "--data", data, "--user", "alice", "--ttl", "2h")
	if tok := lastLine(out); code != 0 || !strings.HasPrefix(tok, "mdqt_") {
		t.Fatalf("tokens issue: %q", out)
	}
	// dev-key run twice (make run twice) leaves the first key valid and stores no key
	// in clear: the second run shows the key's id, not the key.
	d1, _ := run(t, "dev-key", "--data", data)
	d1again, _ := run(t, "dev-key", "--data", data)
	if k := lastLine(d1); !strings.HasPrefix(k, "mdq_") || strings.Contains(d1again, k) || !strings.Contains(d1again, "still valid") {
		t.Fatalf("second dev-key: %q then %q", d1, d1again)
	}
	if err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(lastLine(d1))) {
			t.Errorf("%s holds the dev key in clear", path)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	{
		s, _ := ratelimit.Open(data)
		_, err := s.Authenticate(context.Background(), lastLine(d1), "")
		s.Close()
		if err != nil {
			t.Fatalf("the first dev key was invalidated by the second run: %v", err)
		}
	}
	d2, _ := run(t, "dev-key", "--data", data, "--new")
	k1, k2 := lastLine(d1), lastLine(d2)
	if k1 == k2 || !strings.HasPrefix(k2, "mdq_") {
		t.Fatalf("dev keys %q %q", k1, k2)
	}
	s, _ := ratelimit.Open(data)
	defer s.Close()
	if _, err := s.Authenticate(context.Background(), k1, ""); err == nil {
		t.Fatal("the earlier dev key must be revoked")
	}
	if _, err := s.Authenticate(context.Background(), k2, ""); err != nil {
		t.Fatal(err)
	}
	// With every dev key revoked, a new one is created and printed.
	info, _ := s.ListKeys(context.Background(), devUser)
	for _, k := range info {
		if k.RevokedAt == nil {
			s.RevokeKey(context.Background(), k.ID) //nolint:errcheck
		}
	}
	d3, _ := run(t, "dev-key", "--data", data)
	if k3 := lastLine(d3); k3 == k2 || !strings.Contains(d3, "new") {
		t.Fatalf("with no valid dev key: %q", d3)
	}
}

type reply struct {
	status int
	hdr    http.Header
	body   map[string]any
	raw    []byte
}

func do(h http.Handler, method, path string, hdr map[string]string) reply {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := reply{status: rec.Code, hdr: rec.Header(), raw: rec.Body.Bytes()}
	json.Unmarshal(rec.Body.Bytes(), &r.body) //nolint:errcheck
	return r
}

func TestServeAuthAndBudget(t *testing.T) {
	data := smallLake(t, 2000)
	s, err := ratelimit.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, key, _ := s.CreateKey(ctx, "alice", "")
	_, tok1, _ := s.IssueToken(ctx, "bob", 3600e9)
	_, tok2, _ := s.IssueToken(ctx, "bob", 3600e9)
	s.Close()
	h := serveAPI(t, data, "--hourly-limit", "3")

	// Missing and invalid credentials: 401, and the body says which.
	r := do(h, "GET", "/v1/usage", nil)
	if r.status != 401 || !strings.HasPrefix(r.body["error"].(string), "missing credential") {
		t.Fatalf("missing: %d %s", r.status, r.raw)
	}
	for _, hdr := range []map[string]string{{"X-API-Key": "mdq_000000000000_nope"}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}} {
		r = do(h, "GET", "/v1/usage", hdr)
		if r.status != 401 || !strings.HasPrefix(r.body["error"].(string), "invalid credential") {
			t.Fatalf("invalid %v: %d %s", hdr, r.status, r.raw)
		}
	}
	// On-chain routes answer 401 as {"detail": ...}.
	for _, rt := range handlers.Routes() {
		if rt.Area == "onchain" && rt.Method == "GET" && !strings.Contains(rt.Path, "{") {
			r = do(h, "GET", rt.Path, nil)
			if r.status != 401 || r.body["detail"] == nil {
				t.Fatalf("%s without key: %d %s", rt.Path, r.status, r.raw)
			}
			break
		}
	}

	// A key (header name in any case) spends its own budget; usage reports it.
	r = do(h, "GET", "/v1/usage", map[string]string{"x-api-key": key})
	if r.status != 200 || r.body["used"].(float64) != 1 || r.body["remaining"].(float64) != 2 || r.body["limit"].(float64) != 3 ||
		r.hdr.Get("X-RateLimit-Limit") != "3" || r.hdr.Get("X-RateLimit-Remaining") != "2" || r.hdr.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("usage: %d %s %v", r.status, r.raw, r.hdr)
	}
	do(h, "GET", "/v1/usage", map[string]string{"X-API-KEY": key})
	do(h, "GET", "/v1/usage", map[string]string{"X-Api-Key": key})
	r = do(h, "GET", "/v1/usage", map[string]string{"X-API-Key": key})
	if r.status != 429 || r.hdr.Get("Retry-After") != "60" || r.hdr.Get("X-RateLimit-Remaining") != "0" || r.body["error"] == nil {
		t.Fatalf("4th request: %d %s %v", r.status, r.raw, r.hdr)
	}
	// Two OAuth tokens of one user share one pool; the key's spending does not touch it.
	for i, tk := range []string{tok1, tok2, tok1} {
		if r = do(h, "GET", "/v1/usage", map[string]string{"authorization": "bearer " + tk}); r.status != 200 {
			t.Fatalf("pooled %d: %d %s", i, r.status, r.raw)
		}
	}
	if r.body["budget_key"] != "user:bob" {
		t.Fatalf("budget_key %v", r.body["budget_key"])
	}
	if r = do(h, "GET", "/v1/usage", map[string]string{"Authorization": "Bearer " + tok2}); r.status != 429 {
		t.Fatalf("4th pooled request: %d", r.status)
	}

	// The archive: manifest and samples without a key; everything else 401; with a key
	// 200 even though the key's budget is spent (downloads never spend, never 429).
	m := do(h, "GET", "/archive/manifest.json", nil)
	if m.status != 200 || m.body["range_requests"] != true {
		t.Fatalf("manifest: %d %s", m.status, m.raw)
	}
	man, _ := archive.ReadManifest(archive.Root(data))
	if len(man.Samples) == 0 {
		t.Fatal("no samples")
	}
	if r = do(h, "GET", "/archive/"+man.Samples[0].Path, nil); r.status != 200 {
		t.Fatalf("sample: %d", r.status)
	}
	file := "/archive/" + man.Files[0].Path
	if r = do(h, "GET", file, nil); r.status != 401 || r.body["error"] == nil {
		t.Fatalf("archive file without key: %d %s", r.status, r.raw)
	}
	if r = do(h, "GET", "/archive/samples/../"+man.Files[0].Path, nil); r.status == 200 {
		t.Fatalf("samples/.. must not open the archive: %d", r.status)
	}
	for i := 0; i < 5; i++ {
		r = do(h, "GET", file, map[string]string{"X-API-Key": key, "Range": "bytes=0-99"})
		if r.status != 206 || len(r.raw) != 100 || r.hdr.Get("X-RateLimit-Remaining") != "" {
			t.Fatalf("archive with a spent key: %d %d", r.status, len(r.raw))
		}
	}
}

// cutter cuts the first `cuts` transfers of path after `at` body bytes, and records
// the Range header of every request.
type cutter struct {
	mu     sync.Mutex
	next   http.Handler
	path   string
	at     int
	cuts   int
	ranges []string
}

type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	c.ResponseWriter.Write(p[:c.left])                   //nolint:errcheck
	http.NewResponseController(c.ResponseWriter).Flush() //nolint:errcheck
	panic(http.ErrAbortHandler)
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	cut := false
	if r.URL.Path == c.path {
		c.ranges = append(c.ranges, r.Header.Get("Range"))
		if c.cuts > 0 {
			c.cuts--
			cut = true
		}
	}
	c.mu.Unlock()
	if cut {
		w = &cutWriter{ResponseWriter: w, left: c.at}
	}
	c.next.ServeHTTP(w, r)
}

func TestMirrorResumesCutTransfer(t *testing.T) {
	remote := smallLake(t, 40000)
	s, _ := ratelimit.Open(remote)
	_, key, _ := s.CreateKey(context.Background(), "mirror", "")
	s.Close()
	h := serveAPI(t, remote)
	man, err := archive.ReadManifest(archive.Root(remote))
	if err != nil {
		t.Fatal(err)
	}
	big := man.Files[1]
	if big.Bytes < 100_000 {
		t.Fatalf("fixture too small: %d bytes", big.Bytes)
	}
	c := &cutter{next: h, path: "/archive/" + big.Path, at: int(big.Bytes / 3), cuts: 2}
	srv := httptest.NewServer(c)
	defer srv.Close()

	local := t.TempDir()
	// First run: one attempt after the cut is allowed, and it is cut too: the run fails
	// and leaves a partial file.
	out, code := run(t, "mirror", "--data", local, "--from", srv.URL, "--key", key, "--retries", "1", "--parallel", "2")
	if code == 0 {
		t.Fatalf("first run should fail on the twice-cut file: %s", out)
	}
	partial := filepath.Join(archive.Root(local), filepath.FromSlash(filepath.Dir(big.Path)), "."+filepath.Base(big.Path)+".partial")
	if st, err := os.Stat(partial); err != nil || st.Size() != 2*int64(c.at) {
		t.Fatalf("partial after two cuts: %v, want %d bytes", err, 2*c.at)
	}
	// Second run: resumes with a Range request from the cut and completes.
	out, code = run(t, "mirror", "--data", local, "--from", srv.URL, "--key", key)
	if code != 0 || !strings.Contains(out, "(1 resumed)") {
		t.Fatalf("second run: %d %s", code, out)
	}
	c.mu.Lock()
	ranges := append([]string(nil), c.ranges...)
	c.mu.Unlock()
	if want := fmt.Sprintf("bytes=%d-", 2*c.at); len(ranges) != 3 || ranges[1] != fmt.Sprintf("bytes=%d-", c.at) || ranges[2] != want {
		t.Fatalf("ranges sent %v, want the last to be %s", ranges, want)
	}
	for _, e := range append(append(man.Files, man.Families...), man.Samples...) {
		a, _ := os.ReadFile(filepath.Join(archive.Root(remote), filepath.FromSlash(e.Path)))
		b, err := os.ReadFile(filepath.Join(archive.Root(local), filepath.FromSlash(e.Path)))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s differs after mirroring: %v", e.Path, err)
		}
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Fatal("partial file left behind")
	}
	// Third run: nothing to fetch. The copied manifest is fresh for the mirrored files.
	out, code = run(t, "mirror", "--data", local, "--from", srv.URL, "--key", key)
	if code != 0 || !strings.Contains(out, "0 downloaded") {
		t.Fatalf("third run: %s", out)
	}
	if wrote, err := archive.RefreshDir(context.Background(), archive.Root(local)); err != nil || wrote {
		t.Fatalf("mirrored manifest should be current: %v %v", wrote, err)
	}
	// Header names are case-insensitive on the wire.
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/usage HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nConnection: close\r\n\r\n", key)
	raw, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.HasPrefix(string(raw), "HTTP/1.1 200") {
		t.Fatalf("lower-case x-api-key: %.80s", raw)
	}
	// A bad key: the mirror fails clearly.
	if _, code := run(t, "mirror", "--data", t.TempDir(), "--from", srv.URL, "--key", "mdq_000000000000_x"); code == 0 {
		t.Fatal("mirror with a bad key succeeded")
	}
}
