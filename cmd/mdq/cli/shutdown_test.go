package cli_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestShutdownCutsLongDownloadAndExitsZero: SIGTERM during an archive download that
// outlasts the grace period cuts it, writes its access-log line and exits 0.
func TestShutdownCutsLongDownloadAndExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := testlake.Copy(t)
	files, _ := filepath.Glob(filepath.Join(dir, "archive", "venue=*", "date=*", "*.parquet"))
	var big string
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			big, size = f, st.Size()
		}
	}
	if size < 64<<10 {
		t.Fatalf("no archive file over 64 KiB in the tiny lake (largest %d bytes)", size)
	}
	rel, _ := filepath.Rel(filepath.Join(dir, "archive"), big)
	var stderr bytes.Buffer
	// 1 KB/s: the download lasts far beyond the 10 s grace period.
	cmd, base := startServe(t, dir, &stderr, "--no-auth", "--archive-bandwidth", "0.001")
	resp, err := http.Get(base + "/archive/" + filepath.ToSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
		t.Fatalf("download did not start: %v", err)
	}
	go io.Copy(io.Discard, resp.Body) //nolint:errcheck // keeps reading until the server cuts it
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM with a long download: %v\n%s", err, stderr.String())
		}
	case <-time.After(40 * time.Second): // a bound on a hang, not a speed target
		t.Fatalf("still running 40 s after SIGTERM\n%s", stderr.String())
	}
	log := stderr.String()
	var line string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"msg":"request"`) && strings.Contains(l, filepath.ToSlash(rel)) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("the cut download has no access-log line:\n%s", log)
	}
	if !strings.Contains(log, `"msg":"stopped"`) {
		t.Fatalf("no clean stop in the log:\n%s", log)
	}
	t.Logf("access log of the cut download: %s", line)
}
