package query_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// BenchmarkOnchainLegsPublication measures the incremental-maintenance target on
// MDQ_BENCH_LAKE (tiny by default): the full publication of the legs (every
// partition, as after the sidecar is lost) against the publication of one more day
// (the newest day's transfers files of every chain replaced, as a day's ingest does),
// in the same run; ratio is one day over full (target: at most 0.10). It rewrites
// only derived files, with the same content.
func BenchmarkOnchainLegsPublication(b *testing.B) {
	dir := testlake.Bench(b)
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return testlake.BenchNow(b) }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	files, err := lake.OnchainTransfers.Files(dir)
	if err != nil || len(files) == 0 {
		b.Fatal("no transfers", err)
	}
	byDate := map[string][]string{}
	for _, f := range files {
		d := filepath.Base(filepath.Dir(f))
		byDate[d] = append(byDate[d], f)
	}
	dates := make([]string, 0, len(byDate))
	for d := range byDate {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	newest := byDate[dates[len(dates)-1]]
	var full, day time.Duration
	for b.Loop() {
		os.Remove(filepath.Join(dir, "onchain", "legs", "_sources.json"))
		p, err := q.PublishOnchainLegs(ctx)
		if err != nil {
			b.Fatal(err)
		}
		full = p.Took
		now := time.Now()
		for _, f := range newest {
			os.Chtimes(f, now, now) // a replaced file: new signature
		}
		p, err = q.PublishOnchainLegs(ctx)
		if err != nil || len(p.Written) != len(newest) {
			b.Fatalf("one day: %+v %v", p, err)
		}
		day = p.Took
	}
	b.ReportMetric(full.Seconds(), "full_s")
	b.ReportMetric(day.Seconds(), "one_day_s")
	b.ReportMetric(day.Seconds()/full.Seconds(), "ratio")
}
