package cli_test

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestRestartReadyFromPublishedTables: a server restarted in the same hour finds every
// area's derived tables published for the serving clock and is ready on that check,
// before (not after) reading the boards back into memory.
func TestRestartReadyFromPublishedTables(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := testlake.Copy(t)
	serveUntilReady := func() string {
		t.Helper()
		var stderr bytes.Buffer
		cmd, base := startServe(t, dir, &stderr, "--log-level", "debug", "--access-log", "off")
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if code, _ := getStatus(t, base+"/readyz"); code == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not ready after 3 minutes")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		cmd.Wait() //nolint:errcheck
		return stderr.String()
	}
	first := serveUntilReady() // computes and publishes the boards of the hour
	if strings.Contains(first, `"derived tables current","areas":{"onchain":true,"perpdex":true,"perpdex_cohorts":true,"predmkt":true}`) {
		t.Fatalf("a lake without published boards was found current:\n%s", first)
	}
	second := serveUntilReady()
	if !strings.Contains(second, `"derived tables current","areas":{"onchain":true,"perpdex":true,"perpdex_cohorts":true,"predmkt":true}`) {
		t.Fatalf("the restart did not find its derived tables current:\n%s", second)
	}
}
