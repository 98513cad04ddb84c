package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// rawFiles lists the files of dir's tables that demo writes and mdq never derives
// (relative path, size, modification time), and lake.json: what a demo --force would
// remove first, and what a server over the lake leaves alone.
func rawFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, tb := range lake.Tables() {
		if tb.Derived {
			continue
		}
		files, err := tb.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, files...)
	}
	out = append(out, filepath.Join(dir, lake.MarkerFile))
	for i, f := range out {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = fmt.Sprintf("%s %d %d", f, st.Size(), st.ModTime().UnixNano())
	}
	sort.Strings(out)
	return out
}

// `mdq demo --force` refuses a lake another process has open (here `mdq serve`), with
// a clear error and no file changed; once that process has ended, it runs.
func TestDemoRefusesALakeInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := testlake.Copy(t)
	before := rawFiles(t, dir)
	var stderr bytes.Buffer
	srv, base := startServe(t, dir, &stderr)
	end := testlake.End.Format(time.RFC3339)
	code, _, errOut := run(t, "demo", "--data", dir, "--scale", "tiny", "--seed", "2", "--end", end, "--force")
	if code == 0 || !strings.Contains(errOut, "lake in use: another mdq process") || !strings.Contains(errOut, "stop it first") {
		t.Fatalf("demo --force on a served lake: exit %d, stderr %q", code, errOut)
	}
	if after := rawFiles(t, dir); len(before) < 50 || strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the refused demo changed the lake's tables: %d files before, %d after", len(before), len(after))
	}
	if status, body := getStatus(t, base+"/healthz"); status != 200 {
		t.Fatalf("server after the refused demo: %d %s", status, body)
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.Wait() //nolint:errcheck // its exit status is not this test's
	code, out, errOut := run(t, "demo", "--data", dir, "--scale", "tiny", "--seed", "2", "--end", end, "--force")
	if code != 0 || !strings.Contains(out, "demo lake (tiny, seed 2)") {
		t.Fatalf("demo --force once the server ended: exit %d, %s %s", code, out, errOut)
	}
}
