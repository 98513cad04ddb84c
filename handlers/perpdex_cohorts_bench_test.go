package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// BenchmarkPerpdexCohortsRebuild times the cohort publication on the bench lake
// (MDQ_BENCH_LAKE; it writes the two derived tables there): a full build, the
// incremental refresh after one more hour completes (the newest date's partition and
// today's labels rewritten), a refresh with nothing due, and beside them the same SQL
// of an incremental refresh run directly in DuckDB (rows drained, no Parquet written;
// the publication has DuckDB write them to Parquet, lake.CopyQuery).
//
//	MDQ_BENCH_LAKE=/tmp/pdx-medium go test ./handlers -run '^$' -bench PerpdexCohortsRebuild -benchtime 3x
func BenchmarkPerpdexCohortsRebuild(b *testing.B) {
	ctx := context.Background()
	dir := testlake.Bench(b)
	end := testlake.BenchNow(b)
	var clock atomic.Int64
	clock.Store(end.UnixNano())
	q, err := query.Open(ctx, dir, query.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if err := q.PerpdexRefreshDerived(ctx); err != nil { // closed trades: built hourly anyway
		b.Fatal(err)
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			if _, err := q.RebuildPerpdexCohorts(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	// One hour behind: drop today's labels and the newest date's partition, publish at
	// end - 1h (untimed), then time the refresh at end.
	behind := func(b *testing.B) {
		b.StopTimer()
		last := end.Add(-time.Hour).Truncate(time.Hour)
		p, _ := lake.PerpdexCohortsHourly.Path(query.Date(last))
		c, _ := lake.PerpdexCohortsCurrent.Path()
		for _, f := range []string{p, c} {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
		clock.Store(end.Add(-time.Hour).UnixNano())
		if _, err := q.RebuildPerpdexCohorts(ctx, false); err != nil {
			b.Fatal(err)
		}
		clock.Store(end.UnixNano())
		b.StartTimer()
	}
	b.Run("incremental_one_hour", func(b *testing.B) {
		for b.Loop() {
			behind(b)
			r, err := q.RebuildPerpdexCohorts(ctx, false)
			if err != nil || len(r.HourlyDates) != 1 || !r.CurrentBuilt {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	b.Run("nothing_due", func(b *testing.B) {
		for b.Loop() {
			if r, err := q.RebuildPerpdexCohorts(ctx, false); err != nil || len(r.HourlyDates) != 0 || r.CurrentBuilt {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	// The same statements as incremental_one_hour, directly in DuckDB.
	var snap time.Time
	if err := q.DB().QueryRowContext(ctx, "SELECT max(snapshot_ts) FROM perpdex_accounts WHERE snapshot_ts <= $1", end).Scan(&snap); err != nil {
		b.Fatal(err)
	}
	last := end.Add(-time.Hour).Truncate(time.Hour)
	dayStart := last.Truncate(24 * time.Hour)
	hourly, current := query.PerpdexCohortStatements()
	b.Run("duckdb_direct", func(b *testing.B) {
		for b.Loop() {
			for _, s := range []string{"perpdex/cohort_flows.sql", "perpdex/cohort_third_fill.sql"} {
				if _, err := q.DB().ExecContext(ctx, sqlfiles.MustRead(s)); err != nil {
					b.Fatal(err)
				}
			}
			pdDrain(b, q, hourly.SQL, append([]any{dayStart, last}, hourly.Args...)...)
			pdDrain(b, q, current.SQL, append([]any{snap, snap}, current.Args...)...)
		}
	})
}
