package query_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// BenchmarkPerpdexClosedTradesPublication measures the incremental-maintenance target
// of the closed trades on MDQ_BENCH_LAKE (tiny by default): the full rebuild (no
// sidecar) of the lake without its newest fills day, against the publication of that
// day once it is put back (restarting from the checkpoint the rebuild wrote, as a
// day's ingest does), in the same run; ratio is one day over full (target: at most
// 0.10). It moves the newest fills partition aside and back and rewrites only derived
// files.
func BenchmarkPerpdexClosedTradesPublication(b *testing.B) {
	dir := testlake.Bench(b)
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return testlake.BenchNow(b) }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	files, err := lake.PerpdexFills.Files(dir)
	if err != nil || len(files) < 2 {
		b.Fatal("no fills", err)
	}
	newest := filepath.Dir(files[len(files)-1])
	aside := filepath.Join(filepath.Dir(filepath.Dir(newest)), ".bench-"+filepath.Base(newest))
	var full, day time.Duration
	for b.Loop() {
		if err := os.Rename(newest, aside); err != nil {
			b.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "perpdex", "closed_trades", "_sources.json"))
		p, err := q.PublishPerpdexClosedTradesFrom(ctx)
		if rerr := os.Rename(aside, newest); rerr != nil {
			b.Fatal(rerr)
		}
		if err != nil || p.From != "" {
			b.Fatalf("full: %+v %v", p, err)
		}
		full = p.Took
		p, err = q.PublishPerpdexClosedTradesFrom(ctx)
		if err != nil || p.From == "" {
			b.Fatalf("one day: %+v %v", p, err)
		}
		day = p.Took
	}
	b.ReportMetric(full.Seconds(), "full_s")
	b.ReportMetric(day.Seconds(), "one_day_s")
	b.ReportMetric(day.Seconds()/full.Seconds(), "ratio")
}
