package cli_test

import (
	"runtime/debug"
	"testing"

	"mdq/cmd/mdq/cli"
	"mdq/query"
)

// TestValidateSetsGoMemoryLimit: every command sets the Go side of --memory-limit (the
// budget less DuckDB's share) as the soft limit before it runs, so an ingest's heap is
// bounded before any store opens; a bad value is refused and changes nothing.
func TestValidateSetsGoMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	goShare := func(total int64) int64 { return total - int64(float64(total)*query.MemoryDuckDBShare) }
	cases := []struct {
		flag string
		want int64
	}{
		{"1GB", goShare(1 << 30)},
		{"512MB", goShare(512 << 20)},
		{"", goShare(query.DefaultMemoryLimit())},
	}
	for _, c := range cases {
		cfg := &cli.Config{Data: t.TempDir(), MemoryFlag: c.flag}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%q: %v", c.flag, err)
		}
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("--memory-limit %q: Go soft limit %d, want %d", c.flag, got, c.want)
		}
	}
	before := debug.SetMemoryLimit(-1)
	if err := (&cli.Config{Data: t.TempDir(), MemoryFlag: "lots"}).Validate(); err == nil {
		t.Error("--memory-limit lots was accepted")
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("a refused --memory-limit changed the Go limit from %d to %d", before, got)
	}
}

// TestServeSetsGCTarget: serve runs the Go collector at ServeGCPercent (the heap stops
// at 1.5 times its live set, which keeps the large lake's peak RSS under 4 GB), unless
// GOGC is set in the environment.
func TestServeSetsGCTarget(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "")
	cli.ServeGC()
	if got := debug.SetGCPercent(100); got != cli.ServeGCPercent {
		t.Errorf("serve's GC target %d, want %d", got, cli.ServeGCPercent)
	}
	t.Setenv("GOGC", "200")
	cli.ServeGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: the GC target changed to %d", got)
	}
}
