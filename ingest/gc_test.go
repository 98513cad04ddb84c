package ingest

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestStageRaisesGCTarget: the collector's target is bulkGCPercent while any stage is
// open and back to what it was once the last one closes (a second Close of the same
// stage does not end another's), and GOGC in the environment is left alone.
func TestStageRaisesGCTarget(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the stage leaves the collector alone (the rule under test)")
	}
	ctx := context.Background()
	before := gcPercent()
	a, err := NewStage(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewStage(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := gcPercent(); got != bulkGCPercent {
		t.Fatalf("two stages open: GC target %d, want %d", got, bulkGCPercent)
	}
	a.Close()
	a.Close()
	if got := gcPercent(); got != bulkGCPercent {
		t.Errorf("one stage still open: GC target %d, want %d", got, bulkGCPercent)
	}
	b.Close()
	if got := gcPercent(); got != before {
		t.Errorf("every stage closed: GC target %d, want %d as before", got, before)
	}
	t.Setenv("GOGC", "100")
	c, err := NewStage(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC set: GC target %d, want it left at %d", got, before)
	}
}
