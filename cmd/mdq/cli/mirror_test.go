package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"mdq/archive"
	"mdq/ratelimit"
)

// countRefusals counts archive requests answered 401.
type countRefusals struct {
	next    http.Handler
	refused atomic.Int32
}

func (c *countRefusals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRec{ResponseWriter: w}
	c.next.ServeHTTP(rec, r)
	if rec.code == http.StatusUnauthorized && strings.HasPrefix(r.URL.Path, "/archive/venue=") {
		c.refused.Add(1)
	}
}

type statusRec struct {
	http.ResponseWriter
	code int
}

func (s *statusRec) WriteHeader(c int) { s.code = c; s.ResponseWriter.WriteHeader(c) }

// TestMirrorErgonomics: a refused key stops the run at the first 401 with one clear
// line; the key is read from MDQ_KEY; --from accepts host:port; an --include glob that
// selects nothing is warned about.
func TestMirrorErgonomics(t *testing.T) {
	remote := smallLake(t, 2000)
	s, _ := ratelimit.Open(remote)
	_, key, _ := s.CreateKey(context.Background(), "mirror", "")
	s.Close()
	c := &countRefusals{next: serveAPI(t, remote)}
	srv := httptest.NewServer(c)
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")

	t.Run("a refused key stops at the first 401 with one line", func(t *testing.T) {
		t.Setenv("MDQ_KEY", "mdq_000000000000_wrong")
		var out, errb bytes.Buffer
		code := Do([]string{"mirror", "--data", t.TempDir(), "--from", srv.URL, "--parallel", "1"}, strings.NewReader(""), &out, &errb, "test")
		stderr := errb.String()
		if code == 0 || strings.Count(stderr, "refused") != 1 || strings.Contains(stderr, "failed") ||
			!strings.Contains(stderr, "mdq: the remote archive refused the key (401 Unauthorized): pass a valid key with --key or MDQ_KEY\n") {
			t.Fatalf("exit %d, stderr %q", code, errb.String())
		}
		if n := c.refused.Load(); n != 1 {
			t.Fatalf("%d archive files requested after the first 401, want the run to stop at 1", n)
		}
	})
	t.Run("key from MDQ_KEY and host:port", func(t *testing.T) {
		t.Setenv("MDQ_KEY", key)
		out, code := run(t, "mirror", "--data", t.TempDir(), "--from", hostPort)
		if code != 0 || !strings.Contains(out, "downloaded") || strings.Contains(out, " 0 downloaded") {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
	t.Run("an include glob that selects nothing is warned about", func(t *testing.T) {
		t.Setenv("MDQ_KEY", key)
		var out, errb bytes.Buffer
		code := Do([]string{"mirror", "--data", t.TempDir(), "--from", srv.URL, "--include", "venue=nope/*", "--include", "trades.parquet"},
			strings.NewReader(""), &out, &errb, "test")
		if code != 0 || !strings.Contains(errb.String(), `--include "venue=nope/*" selects no file`) || strings.Contains(errb.String(), `"trades.parquet" selects no file`) {
			t.Fatalf("exit %d, stderr %s", code, errb.String())
		}
	})
}

// TestMirrorInterruptReportsRemaining: a run cut by its context (an interrupt) returns
// one error and lists the files that are not in place yet; a second run fetches them.
func TestMirrorInterruptReportsRemaining(t *testing.T) {
	remote := smallLake(t, 2000)
	s, _ := ratelimit.Open(remote)
	_, key, _ := s.CreateKey(context.Background(), "mirror", "")
	s.Close()
	srv := httptest.NewServer(serveAPI(t, remote))
	defer srv.Close()
	local := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	res, err := archive.Mirror(ctx, archive.MirrorOptions{From: srv.URL, Key: key, DataDir: local, Parallel: 1,
		OnFile: func(path, status string) {
			if status == "downloaded" {
				cancel() // the interrupt arrives after the first file
			}
		}})
	if !errors.Is(err, context.Canceled) || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("err = %v, want one context.Canceled", err)
	}
	if res.Downloaded != 1 || len(res.Remaining) != res.Files-res.Skipped-1 || len(res.Remaining) == 0 {
		t.Fatalf("downloaded %d, remaining %v of %d", res.Downloaded, res.Remaining, res.Files)
	}
	res2, err := archive.Mirror(context.Background(), archive.MirrorOptions{From: srv.URL, Key: key, DataDir: local})
	if err != nil || res2.Downloaded != len(res.Remaining) || len(res2.Remaining) != 0 {
		t.Fatalf("second run: %+v %v", res2, err)
	}
}
