package query

import (
	"context"
	"os"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// BenchmarkPredmktBoard measures the prediction-market board of the bench lake's last
// hour (MDQ_BENCH_LAKE, tiny by default): compute is one hour's computation (what a new
// board hour costs, the Parquet write left out), compute_before the same with the
// board query before the per-day sums (testdata: every fill read raw), load the read back of the published
// board (what `mdq rebuild` with nothing due costs). cpu-s/op is the process's CPU
// seconds (user plus system) per board, the figure to compare on a shared machine.
// The lake's derived tables are published first (the bench writes into the lake).
func BenchmarkPredmktBoard(b *testing.B) {
	ctx := AsBuild(context.Background())
	at := testlake.BenchNow(b).Truncate(time.Hour)
	q, err := Open(ctx, testlake.Bench(b), Options{Now: func() time.Time { return at }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if _, err := q.PublishDayTables(ctx); err != nil {
		b.Fatal(err)
	}
	if _, _, err := q.PublishPredmktBoard(ctx); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, f func() (*Board, error)) {
		cpu0 := processCPU()
		for b.Loop() {
			bd, err := f()
			if err != nil || bd == nil {
				b.Fatal(bd, err)
			}
		}
		b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	}
	before, err := os.ReadFile("testdata/predmkt_board_before.sql")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compute_before", func(b *testing.B) {
		run(b, func() (*Board, error) { return q.scanBoard(ctx, at, string(before), at.UnixMilli()) })
	})
	b.Run("compute", func(b *testing.B) { run(b, func() (*Board, error) { return q.computeBoard(ctx, at) }) })
	b.Run("load", func(b *testing.B) { run(b, func() (*Board, error) { return q.loadBoard(ctx, at) }) })
}
