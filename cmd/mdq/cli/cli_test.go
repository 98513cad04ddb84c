package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mdq/cmd/mdq/cli"
	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Do(args, strings.NewReader(""), &out, &errb, "test")
	return code, out.String(), errb.String()
}

// TestQueryCommandsMatchRouteTable: `mdq query` has one subcommand per route of the
// table, with one flag per parameter, and nothing else.
func TestQueryCommandsMatchRouteTable(t *testing.T) {
	root := cli.NewRoot("test", nil)
	qc, _, err := root.Find([]string{"query"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, area := range qc.Commands() {
		for _, c := range area.Commands() {
			got[area.Name()+" "+c.Name()] = true
		}
	}
	want := map[string]bool{}
	for _, rt := range handlers.Routes() {
		if rt.Area == "platform" {
			continue
		}
		k := rt.Area + " " + rt.CLIName()
		want[k] = true
		c, _, err := root.Find([]string{"query", rt.Area, rt.CLIName()})
		if err != nil || c.Name() != rt.CLIName() {
			t.Errorf("no CLI subcommand for %s", rt.Path)
			continue
		}
		for _, p := range rt.Params {
			if c.Flags().Lookup(p.Name) == nil {
				t.Errorf("%s: no --%s flag", rt.Path, p.Name)
			}
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("CLI has %q; the route table does not", k)
		}
	}
	if len(want) == 0 {
		t.Fatal("no routes")
	}
}

// TestQueryOutputEqualsRESTBody: `mdq query ... --format json` prints the REST body
// byte for byte.
func TestQueryOutputEqualsRESTBody(t *testing.T) {
	dir := testlake.Tiny(t)
	q, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var tok string
	q.DB().QueryRowContext(context.Background(), //nolint:errcheck
		"SELECT token_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&tok)
	srv := httptest.NewServer((&handlers.API{Q: q}).Handler())
	defer srv.Close()
	for _, c := range []struct {
		args []string
		path string
	}{
		{[]string{"query", "predmkt", "ohlcv", "--token_id", tok, "--interval", "1h", "--limit", "7"},
			"/v1/predmkt/ohlcv?token_id=" + tok + "&interval=1h&limit=7"},
	} {
		code, out, errs := run(t, append(c.args, "--data", dir, "--clock", testlake.End.Format(time.RFC3339))...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || out != string(body) {
			t.Fatalf("%v:\nCLI  %q\nREST %q", c.args, out, body)
		}
		if len(body) < 10 {
			t.Fatalf("empty body: %q", body)
		}
	}
}

// TestQueryOutputEqualsRESTForEveryRoute: every route of the table with example
// parameters prints, through `mdq query`, exactly the body REST serves.
func TestQueryOutputEqualsRESTForEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every route twice")
	}
	dir := testlake.Copy(t) // hourly boards are written into the lake
	q, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	srv := httptest.NewServer((&handlers.API{Q: q}).Handler())
	defer srv.Close()
	compared := 0
	for _, rt := range handlers.Routes() {
		if rt.Area == "platform" || rt.Path == "/v1/usage" {
			continue // no CLI twin; usage answers about the caller
		}
		qv, vars, target, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			t.Errorf("%s: no Example for %s", rt.Path, missing)
			continue
		}
		args := []string{"query", rt.Area, rt.CLIName(), "--data", dir, "--clock", testlake.End.Format(time.RFC3339)}
		for k, v := range vars {
			args = append(args, "--"+k, v)
		}
		for k := range qv {
			args = append(args, "--"+k, qv.Get(k))
		}
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", rt.Path, code, errs)
			continue
		}
		req, _ := http.NewRequest(rt.Method, srv.URL+target, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || out != string(body) {
			t.Errorf("%s %s: REST %d\nCLI  %.300q\nREST %.300q", rt.Method, target, resp.StatusCode, out, body)
			continue
		}
		compared++
	}
	t.Logf("%d routes: CLI output equals the REST body", compared)
	if compared < 40 {
		t.Fatalf("only %d routes compared", compared)
	}
}

// TestQueryFormats: csv and table render the rows with a header.
func TestQueryFormats(t *testing.T) {
	dir := testlake.Tiny(t)
	code, out, errs := run(t, "sql", "--data", dir, "--format", "csv", "SELECT 1 AS b, 'x' AS a UNION ALL SELECT 2, 'y' ORDER BY b")
	if code != 0 || out != "b,a\n1,x\n2,y\n" {
		t.Fatalf("exit %d out %q err %s", code, out, errs)
	}
	code, out, _ = run(t, "sql", "--data", dir, "--format", "json", "SELECT 2 AS b, 1 AS a")
	if code != 0 || out != "[{\"b\":2,\"a\":1}]\n" {
		t.Fatalf("json %q", out)
	}
	code, _, errs = run(t, "sql", "--data", dir, "--format", "xml", "SELECT 1")
	if code == 0 || !strings.Contains(errs, "use json, csv or table") {
		t.Fatalf("bad format accepted: %s", errs)
	}
}

// TestBadInputIsClear: a missing lake, a bad parameter and a bad flag each give a
// clear error and a non-zero exit.
func TestBadInputIsClear(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "predmkt", "ohlcv", "--data", empty, "--token_id", "1", "--interval", "1h"}, "no lake at " + empty + ": run mdq demo or mdq ingest"},
		{[]string{"serve", "--data", empty, "--addr", "127.0.0.1:0"}, "no lake at " + empty},
		{[]string{"query", "predmkt", "ohlcv", "--data", testlake.Tiny(t), "--token_id", "1", "--interval", "2h"}, `400: interval "2h" is not one of 1m, 5m, 1h, 1d`},
		{[]string{"serve", "--data", testlake.Tiny(t), "--clock", "yesterday"}, `--clock "yesterday" is not an RFC3339 time`},
		{[]string{"serve", "--nope"}, "unknown flag: --nope"},
		{[]string{"demo", "--data", testlake.Tiny(t), "--scale", "tiny"}, "is not empty: pass --force"},
		{[]string{"demo", "--data", empty, "--scale", "huge"}, `--scale "huge": use tiny, small, medium or large`},
	} {
		code, _, errs := run(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errs, c.want)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatal("a refused command wrote into the directory")
	}
}

// TestServeEndToEnd builds the binary, serves the tiny lake on loopback, answers
// /healthz and a data route, and shuts down cleanly on SIGTERM.
func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := mdqBinary(t)
	dir := testlake.Tiny(t)
	cmd := exec.Command(bin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--clock", "2026-11-20T12:00:00Z")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no banner: %v %s", err, stderr.String())
	}
	base := strings.Fields(line)[3] // "mdq serving on http://HOST:PORT (data ...)"
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"now":"2026-11-20T12:00:00Z"`) {
		t.Fatalf("healthz: %d %s", resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"request"`) || !strings.Contains(logs, `"request_id"`) || !strings.Contains(logs, "shutting down") {
		t.Fatalf("access log missing: %s", logs)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// mdqBinary builds bin/mdq once per test binary.
func mdqBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		d, err := os.MkdirTemp("", "mdq-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(d, "mdq")
		build := exec.Command("go", "build", "-o", binPath, "mdq/cmd/mdq")
		build.Stderr = os.Stderr
		binErr = build.Run()
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// startServe starts `mdq serve` on loopback over dir (clock 12:30 on the tiny lake's
// last day) and returns its base URL.
func startServe(t *testing.T, dir string, stderr *bytes.Buffer, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	return startServeArgs(t, dir, stderr, append([]string{"--clock", "2026-11-20T12:30:00Z"}, extra...)...)
}

// startServeArgs starts `mdq serve --data dir --addr 127.0.0.1:0 extra...`.
func startServeArgs(t testing.TB, dir string, stderr *bytes.Buffer, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(mdqBinary(t), args...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no banner: %v %s", err, stderr.String())
	}
	return cmd, strings.Fields(line)[3]
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReadyzBeforeAndAfterWarm: /readyz answers 503 with a JSON reason until every
// area's derived state is current for the serving clock, then 200; /healthz (liveness)
// is 200 throughout.
func TestReadyzBeforeAndAfterWarm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var stderr bytes.Buffer
	_, base := startServe(t, testlake.Copy(t), &stderr)
	if code, _ := getStatus(t, base+"/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	seen503 := false
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := getStatus(t, base+"/readyz")
		if code == 200 {
			if !strings.Contains(body, `"ready":true`) || !strings.Contains(body, "ready as of 2026-11-20T12:00:00Z") {
				t.Fatalf("ready body: %s", body)
			}
			break
		}
		if code != 503 || !strings.Contains(body, `"ready":false`) || !strings.Contains(body, `"reason":"`) {
			t.Fatalf("not-ready answer: %d %s", code, body)
		}
		seen503 = true
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 2 minutes: %s\n%s", body, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !seen503 {
		t.Log("the warm-up finished before the first probe; only the ready state was observed")
	}
}

// TestShutdownDuringBuildEndsWithin15s: SIGTERM while the derived state is being built
// (right after start) ends the process cleanly (exit 0) within 15 s.
func TestShutdownDuringBuildEndsWithin15s(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var stderr bytes.Buffer
	cmd, base := startServe(t, testlake.Copy(t), &stderr)
	code, body := getStatus(t, base+"/readyz")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15 s after SIGTERM\n%s", stderr.String())
	}
	t.Logf("readyz at SIGTERM: %d %s; exited in %s", code, body, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop in the log: %s", stderr.String())
	}
}
