package cli_test

import (
	"os"
	"testing"
)

// TestMain removes what the point-in-time tests keep for the whole run (the published
// full lake, the lake cuts) once every test is done: they live outside t.TempDir
// because the stores over them stay open from test to test.
func TestMain(m *testing.M) {
	code := m.Run()
	pit.Lock()
	for _, q := range pit.stores {
		q.Close()
	}
	full := pit.full
	pit.Unlock()
	cuts.Lock()
	root := cuts.root
	cuts.Unlock()
	for _, d := range []string{full, root} {
		if d != "" {
			os.RemoveAll(d) //nolint:errcheck // best effort: a temporary directory
		}
	}
	os.Exit(code)
}
