package query

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// BenchmarkOnchainHistoryBoards measures the queries of one hour's on-chain boards that
// read the wallet bands (ocBands) on MDQ_BENCH_LAKE (tiny by default), every chain, at
// the lake's own hour: raw passes each SQL file the empty bands and edges and no split,
// so it reads every leg as the queries did before the bands; bands passes what the
// store passes on a board hour of the bands' serving date. The result rows are
// drained, not written. Reports wall and CPU seconds per query (summed over chains).
// It publishes the legs (and so the bands) first when they are not current. Run with
// -benchtime=1x on a large lake.
func BenchmarkOnchainHistoryBoards(b *testing.B) {
	ctx := context.Background()
	at := ocBoardHour(testlake.BenchNow(b))
	q, err := Open(ctx, testlake.Bench(b), Options{Now: func() time.Time { return at }, NoGoLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if err := q.onchainLegs(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		b.Fatal(err)
	}
	if err := q.onchainSide(ctx); err != nil {
		b.Fatal(err)
	}
	drain := func(query string, args ...any) { drainQuery(ctx, b, q.db, query, args...) }
	var none []any
	for _, t := range []*lake.Table{lake.OnchainWalletEdges, lake.OnchainWalletBands} {
		f, err := q.emptyFile(t, "built=_", "chain=_", "bucket=_")
		if err != nil {
			b.Fatal(err)
		}
		none = append(none, []string{f})
	}
	none = append([]any{noSplit}, none...)
	emptyBase, err := q.emptyFile(lake.OnchainHoldersBase, "built=_", "chain=_")
	if err != nil {
		b.Fatal(err)
	}
	noneHolders := []any{noSplit, none[1], []string{emptyBase}}
	for _, mode := range []string{"raw", "bands"} {
		b.Run(mode, func(b *testing.B) {
			wall, cpu := map[string]time.Duration{}, map[string]time.Duration{}
			for b.Loop() {
				clear(wall)
				clear(cpu)
				for _, chain := range OnchainChains {
					if err := q.smartCohort(ctx, chain, at); err != nil { // the screener's cohort, in place
						b.Fatal(err)
					}
					hist, err := q.ocBandsFor(chain, at, true)
					if err != nil {
						b.Fatal(err)
					}
					if hist.built == "" {
						b.Fatalf("%s at %s: no bands to read", chain, at)
					}
					extra, holders := hist.args(), hist.holdersArgs()
					if mode == "raw" {
						extra, holders = none, noneHolders
					}
					run := func(name, text string, args ...any) {
						t0, c0 := time.Now(), processCPU()
						if name == "holders" {
							drain(text, append(args, holders...)...)
						} else {
							drain(text, append(args, extra...)...)
						}
						wall[name] += time.Since(t0)
						cpu[name] += processCPU() - c0
					}
					run("cohort", cohortSelect(onchainSmartCohortSQL), chain, micros(at), OnchainSmartMoneyPnL)
					run("holders", onchainTokenHoldersSQL, chain, micros(at), OnchainTokenHoldersCap)
					if chain != "base" { // discover serves ethereum and bsc
						run("discover", discoverFamily.all, discoverFamily.args(chain, at)...)
					}
					run("screener", screenerFamily.all, screenerFamily.args(chain, at)...)
					run("transfers", transfersFamily.all, transfersFamily.args(chain, at)...)
				}
			}
			for name := range wall {
				b.ReportMetric(wall[name].Seconds(), name+"_s")
				b.ReportMetric(cpu[name].Seconds(), name+"_cpu_s")
			}
		})
	}
}

// drainQuery runs a query and reads its rows to the end, discarding them: a benchmark
// measures the query's work without the caller's.
func drainQuery(ctx context.Context, tb testing.TB, db *sql.DB, query string, args ...any) {
	tb.Helper()
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
}
