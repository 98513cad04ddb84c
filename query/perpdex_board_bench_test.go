package query

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// BenchmarkPerpdexBoardBuild measures the query work of one hour's perpetuals
// leaderboards on MDQ_BENCH_LAKE (tiny by default): every window and wallet group
// drained, as perpdexComputeBoard runs them (the Parquet write of the result, a few MB,
// is left out). before is the query before this change (testdata), raw is
// sql/perpdex/board.sql reading every row raw (position batches bound, one equity
// scan, date-partition conditions), partials the same with the per-day partial sums
// published but not the carry across days, window_dd the hourly build before the
// drawdowns came from perpdex_accounts_daily (testdata), carry the partial sums and
// perpdex_wallet_carry for the equity and lifetime PnL, snaps the same and
// perpdex_positions_snaps, now the hourly build (the same, and the window "all"'s
// complete days from the carry and its trades up to the day before the board's from
// perpdex_trades_carry). Run with -benchtime=1x on a large lake.
func BenchmarkPerpdexBoardBuild(b *testing.B) {
	ctx := context.Background()
	at := PerpdexBoardTime(testlake.BenchNow(b))
	q, err := Open(ctx, testlake.Bench(b), Options{Now: func() time.Time { return at }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if err := q.perpdexEnsure(ctx); err != nil {
		b.Fatal(err)
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		b.Fatal(err)
	}
	lab, err := q.perpdexLabelsAt(ctx, at)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := q.PublishPerpdexDaily(ctx); err != nil {
		b.Fatal(err)
	}
	before, err := os.ReadFile("testdata/perpdex_board_before.sql")
	if err != nil {
		b.Fatal(err)
	}
	drain := func(query string, args ...any) { drainQuery(ctx, b, q.db, query, args...) }
	windowDD, err := os.ReadFile("testdata/perpdex_board_window_dd.sql")
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []string{"before", "raw", "partials", "window_dd", "carry", "snaps", "now"} {
		b.Run(v, func(b *testing.B) {
			perWindow := map[string]time.Duration{}
			cpuWindow := map[string]time.Duration{}
			for b.Loop() {
				for _, w := range PerpdexWindowNames {
					t0, c0 := time.Now(), processCPU()
					start := PerpdexWindowStart(w, at)
					bs, be, err := q.PerpdexBoardBatches(ctx, start, at)
					if err != nil {
						b.Fatal(err)
					}
					lo, hi := perpdexBoardDays(start, at, v != "before" && v != "raw")
					cs, ce, whole, err := q.perpdexCarryDates(start, hi, v == "carry" || v == "snaps" || v == "now")
					if v != "now" {
						whole = sql.NullTime{} // the window "all" from every day's partial sums
					}
					if err != nil {
						b.Fatal(err)
					}
					tc, tFrom := sql.NullTime{}, start
					if v == "now" { // the window "all"'s trades from their carry
						if tc, tFrom, err = q.perpdexTradesCarryDate(start, at.Truncate(24*time.Hour)); err != nil {
							b.Fatal(err)
						}
					}
					for _, g := range perpdexBoardGroups {
						blo, bhi := boardGroupRange(g)
						if v == "before" {
							drain(string(before), start, at, blo, bhi, lab.current)
						} else if v == "window_dd" {
							drain(string(windowDD), start, at, blo, bhi, lab.current, bs, be, lo, hi)
						} else {
							drain(perpdexBoardSQL, start, at, blo, bhi, lab.current, bs, be, lo, hi, cs, ce, v == "snaps" || v == "now", whole, tc, tFrom)
						}
					}
					perWindow[w] = time.Since(t0)
					cpuWindow[w] = processCPU() - c0
				}
			}
			for w, d := range perWindow {
				b.ReportMetric(d.Seconds(), w+"_s")
				b.ReportMetric(cpuWindow[w].Seconds(), w+"_cpu_s")
			}
		})
	}
}

// BenchmarkPerpdexDailyPublication measures the incremental maintenance of the
// boards' per-day partial sums on MDQ_BENCH_LAKE: the full build (no sidecars) of the
// lake without the newest date of each source (fills, positions, funding) against the
// publication of those dates once they are put back, in the same run; ratio is one day
// over full. It moves the newest partitions aside and back and rewrites only derived
// files.
func BenchmarkPerpdexDailyPublication(b *testing.B) {
	dir := testlake.Bench(b)
	q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return testlake.BenchNow(b) }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	var newest, aside []string
	seen := map[*lake.Table]bool{} // fills feed two tables: their newest date moves once
	for _, d := range perpdexDailies {
		if seen[d.src] {
			continue
		}
		seen[d.src] = true
		files, err := d.src.Files(dir)
		if err != nil || len(files) < 2 {
			b.Fatal("no files", d.src.Name, err)
		}
		n := filepath.Dir(files[len(files)-1])
		newest = append(newest, n)
		// Aside inside the table's own directory (the tables share a parent), where its
		// glob (date=*) does not see it.
		aside = append(aside, filepath.Join(filepath.Dir(n), ".bench-"+filepath.Base(n)))
	}
	written := func(ps []DayPublication) int {
		n := 0
		for _, p := range ps {
			n += len(p.Written)
		}
		return n
	}
	var full, day time.Duration
	for b.Loop() {
		moved := 0
		putBack := func() {
			for i := 0; i < moved; i++ {
				if err := os.Rename(aside[i], newest[i]); err != nil {
					b.Error(err)
				}
			}
			moved = 0
		}
		for i := range newest {
			if err := os.Rename(newest[i], aside[i]); err != nil {
				putBack()
				b.Fatal(err)
			}
			moved++
		}
		for _, d := range perpdexDailies {
			os.Remove(filepath.Join(dir, filepath.FromSlash(d.sidecar)))
		}
		t0 := time.Now()
		ps, err := q.PublishPerpdexDaily(ctx)
		full = time.Since(t0)
		putBack()
		if err != nil {
			b.Fatal(err)
		}
		if written(ps) == 0 {
			b.Fatal("full: nothing written")
		}
		t0 = time.Now()
		ps, err = q.PublishPerpdexDaily(ctx)
		day = time.Since(t0)
		if err != nil || written(ps) != len(perpdexDailies) {
			b.Fatalf("one day: %+v %v", ps, err)
		}
	}
	b.ReportMetric(full.Seconds(), "full_s")
	b.ReportMetric(day.Seconds(), "one_day_s")
	b.ReportMetric(day.Seconds()/full.Seconds(), "ratio")
}

// BenchmarkPerpdexBuildersBoardBuild measures the builders board's hourly query on
// MDQ_BENCH_LAKE for every window: before (builder_metrics.sql, every fill of the
// window) against the board from the per-day aggregates (perpdex_builders_daily,
// published first) and raw edge days, in the same run.
func BenchmarkPerpdexBuildersBoardBuild(b *testing.B) {
	ctx := context.Background()
	at := PerpdexBoardTime(testlake.BenchNow(b))
	q, err := Open(ctx, testlake.Bench(b), Options{Now: func() time.Time { return at }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if _, err := q.PublishPerpdexDaily(ctx); err != nil {
		b.Fatal(err)
	}
	drain := func(query string, args ...any) { drainQuery(ctx, b, q.db, query, args...) }
	for _, v := range []string{"before", "partials"} {
		b.Run(v, func(b *testing.B) {
			perWindow := map[string]time.Duration{}
			cpuWindow := map[string]time.Duration{}
			for b.Loop() {
				for _, w := range PerpdexWindowNames {
					t0, c0 := time.Now(), processCPU()
					start := PerpdexWindowStart(w, at)
					if v == "before" {
						drain(perpdexBuilderMetricsSQL, nil, start, at, "builder")
					} else {
						lo, hi := perpdexBoardDays(start, at, true)
						drain(perpdexBuildersBoardSQL, start, at, lo, hi)
					}
					perWindow[w] += time.Since(t0)
					cpuWindow[w] += processCPU() - c0
				}
			}
			for w, d := range perWindow {
				b.ReportMetric(d.Seconds()/float64(b.N), w+"_s")
				b.ReportMetric(cpuWindow[w].Seconds()/float64(b.N), w+"_cpu_s")
			}
		})
	}
}
