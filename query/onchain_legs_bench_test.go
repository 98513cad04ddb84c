package query_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// BenchmarkOnchainLegsPublication measures the incremental-maintenance target on
// MDQ_BENCH_LAKE (tiny by default): the full publication of the legs (every
// partition, as after the sidecars are lost, with the wallet-clustered copy compacted
// from them) against the publication of one more day (the newest day's transfers files
// of every chain arriving after it: their legs, and the wallet copy's recent segments),
// in the same run; ratio is one day over full (target: at most 0.10). wallet_full_s is
// the compaction of the wallet copy alone (every few days, see walletRecentDays). It
// rewrites only derived files, with the same content, and puts the held files back.
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
	held := filepath.Join(dir, ".tmp", "bench-held")
	if err := os.MkdirAll(held, 0o755); err != nil {
		b.Fatal(err)
	}
	hold := func(f string) string {
		return filepath.Join(held, strings.ReplaceAll(filepath.ToSlash(f[len(dir):]), "/", "_"))
	}
	var full, walletFull, day time.Duration
	for b.Loop() {
		for _, f := range newest {
			if err := os.Rename(f, hold(f)); err != nil {
				b.Fatal(err)
			}
		}
		os.Remove(filepath.Join(dir, "onchain", "legs", "_sources.json"))
		os.Remove(filepath.Join(dir, "onchain", "wallet_legs", "_sources.json"))
		p, err := q.PublishOnchainLegs(ctx)
		if err != nil {
			b.Fatal(err)
		}
		full, walletFull = p.Took, p.Wallet.Took
		for _, f := range newest { // the next day arrives
			if err := os.Rename(hold(f), f); err != nil {
				b.Fatal(err)
			}
		}
		p, err = q.PublishOnchainLegs(ctx)
		if err != nil || len(p.Written) != len(newest) || p.Wallet.Compacted {
			b.Fatalf("one day: %+v %v", p, err)
		}
		day = p.Took
	}
	b.ReportMetric(full.Seconds(), "full_s")
	b.ReportMetric(walletFull.Seconds(), "wallet_full_s")
	b.ReportMetric(day.Seconds(), "one_day_s")
	b.ReportMetric(day.Seconds()/full.Seconds(), "ratio")
}
