package query

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/sqlrows"
	"mdq/internal/testlake"
	"mdq/lake"
)

// familyOracle is the board's own query (the one query per board the family's one
// pass replaced) with its arguments, and whether its row order is part of the board.
func familyOracle(f *ocFamily, key string, at time.Time) (query string, args []any, ordered bool) {
	parts := strings.Split(key, ".")
	chain, w := parts[0], parts[1]
	switch f {
	case screenerFamily:
		first := Date(at.AddDate(0, 0, -OnchainScreenerWindows[w]))
		return onchainScreenerSQL, []any{chain, first, micros(at), parts[2] == "true", OnchainSmartMoneyPnL}, false
	case discoverFamily:
		since, until := windowBounds(at, w)
		return onchainDiscoverSQL, []any{chain, since, until}, false
	}
	since, until := windowBounds(at, w)
	return onchainTokenTransfersBoardSQL, []any{chain, since, until, OnchainTransferRows}, true
}

// canonical sorts a board's rows when its order is not part of it (Go ranks those).
func canonical(rows [][]any, ordered bool) [][]any {
	if !ordered {
		slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	}
	return rows
}

// checkFamilies compares, for every chain and family at board hour at, each board cut
// from the family's one pass with the board's own query, field for field (floats by
// their bits), and fails on a family whose boards are all empty on every chain (it
// would prove nothing).
func checkFamilies(t *testing.T, q *Queries, what string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, f := range []*ocFamily{screenerFamily, discoverFamily, transfersFamily} {
		total := 0
		for _, chain := range OnchainChains {
			if err := q.smartCohort(ctx, chain, at); err != nil {
				t.Fatal(err)
			}
			conn, err := q.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.familyPass(ctx, conn, f, chain, at); err != nil {
				t.Fatalf("%s %s: %v", f.name, chain, err)
			}
			for _, k := range f.keys(chain) {
				got := queryRows(t, conn, f.cut, k)
				query, args, ordered := familyOracle(f, k, at)
				want := queryRows(t, q.db, query, args...)
				total += len(want)
				sameBoard(t, fmt.Sprintf("%s at %s: %s board %s", what, at.Format(time.RFC3339), f.name, k),
					canonical(got, ordered), canonical(want, ordered))
			}
			conn.Close()
		}
		if total == 0 {
			t.Fatalf("%s at %s: %s all empty", what, at.Format(time.RFC3339), f.name)
		}
	}
}

// queryRows runs a query on a database or one connection (a family's temporary table
// is its connection's) and returns its rows as scanned values, in order; boardRowsOf
// is it on the store's database.
func queryRows(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) [][]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out, err := sqlrows.All(rows)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publishedSame checks the boards the store published for its clock's hour (through
// the board functions, so the family's one pass published them) against each board's
// own query.
func publishedSame(t *testing.T, q *Queries, what string) {
	t.Helper()
	ctx := context.Background()
	at := ocBoardHour(q.Now())
	if err := q.OnchainWarm(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*ocFamily{screenerFamily, discoverFamily, transfersFamily} {
		sig, err := filesSignature(q.dir, f.sources...)
		if err != nil {
			t.Fatal(err)
		}
		for _, chain := range OnchainChains {
			if f == discoverFamily && chain == "base" {
				continue // discover serves ethereum and bsc
			}
			for _, k := range f.keys(chain) {
				rel, err := f.table.Path(k, boardBuilt(at, sig))
				if err != nil {
					t.Fatal(err)
				}
				got := queryRows(t, q.db, "SELECT * FROM read_parquet($1, hive_partitioning = false)", filepath.Join(q.dir, filepath.FromSlash(rel)))
				query, args, ordered := familyOracle(f, k, at)
				want := queryRows(t, q.db, query, args...)
				sameBoard(t, fmt.Sprintf("%s: published %s board %s", what, f.name, k), canonical(got, ordered), canonical(want, ordered))
			}
		}
	}
}

// TestOnchainBoardFamiliesSameAsPerBoardSQL: the screener, discover and transfers
// boards cut from their family's one pass over the widest window equal, field for
// field, the boards of each board's own query (screener.sql, discover.sql,
// token_transfers_board.sql), at the lake's hour, an hour just after midnight, midnight
// itself and an hour in the middle of a day, and again after the newest day arrives
// and is published incrementally; and the boards the store publishes through the
// families are those.
func TestOnchainBoardFamiliesSameAsPerBoardSQL(t *testing.T) {
	dir := testlake.Copy(t)
	ctx := context.Background()
	clock := testlake.Now()
	q, err := Open(ctx, dir, Options{Now: func() time.Time { return clock }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })

	// The newest day is put aside first: the lake as it stood before that day landed.
	day := clock.Truncate(24 * time.Hour)
	held := t.TempDir()
	var moved [][2]string
	for _, chain := range OnchainChains {
		rel, err := lake.OnchainTransfers.Path(chain, Date(day))
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Stat(src); err != nil {
			continue
		}
		dst := filepath.Join(held, chain+".parquet")
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, [2]string{dst, src})
	}
	if len(moved) == 0 {
		t.Fatal("no transfers on the newest day")
	}
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	clock = day
	for _, at := range []time.Time{day, day.Add(-24*time.Hour + time.Hour), day.Add(-3*24*time.Hour + 13*time.Hour)} {
		checkFamilies(t, q, "before the newest day", at)
		// The bands published then are those of the clock's date (edgesPlan), whose
		// legs have not landed: its midnight reads them, the days before every leg.
		if bands := checkHistoryBoards(t, q, "before the newest day", at); bands != (at == day) {
			t.Fatalf("before the newest day at %s: bands read %t", at.Format(time.RFC3339), bands)
		}
	}
	publishedSame(t, q, "before the newest day")

	// The day lands: its legs are published incrementally, the boards follow.
	for _, m := range moved {
		if err := os.Rename(m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	p, err := q.PublishOnchainLegs(ctx)
	if err != nil || len(p.Written) != len(moved) {
		t.Fatalf("the newest day's publication: %+v %v", p, err)
	}
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	clock = testlake.Now()
	for _, at := range []time.Time{ocBoardHour(clock), day.Add(time.Hour), day} {
		checkFamilies(t, q, "after the newest day", at)
		if !checkHistoryBoards(t, q, "after the newest day", at) {
			t.Fatalf("after the newest day at %s: the bands not read", at.Format(time.RFC3339))
		}
	}
	publishedSame(t, q, "after the newest day")
}

// TestSmartCohortInPlaceAtHourTurn: smartCohort returns only once the cohort of the hour
// asked for is in onchain_cohort_mem, also at an hour turn (the previous hour's cohort
// built): the screener boards read it right after. The rows are the cohort query's.
func TestSmartCohortInPlaceAtHourTurn(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	at := ocBoardHour(testlake.Now())
	// The query the cohort replaced, which reads every leg.
	before, err := os.ReadFile("testdata/onchain_smart_cohort_before.sql")
	if err != nil {
		t.Fatal(err)
	}
	sel := cohortSelect(string(before))
	nonEmpty := false
	for _, h := range []time.Time{at.Add(-2 * time.Hour), at.Add(-time.Hour), at} {
		for _, chain := range OnchainChains {
			if err := q.smartCohort(ctx, chain, h); err != nil {
				t.Fatal(err)
			}
			var got, want int
			if err := q.db.QueryRow("SELECT count(*) FROM onchain_cohort_mem WHERE chain = $1 AND until_us = $2", chain, micros(h)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if err := q.db.QueryRow("SELECT count(*) FROM ("+sel+")", chain, micros(h), OnchainSmartMoneyPnL).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s at %s: %d cohort rows in place, the cohort has %d", chain, h.Format(time.RFC3339), got, want)
			}
			nonEmpty = nonEmpty || want > 0
		}
	}
	if !nonEmpty {
		t.Fatal("every cohort empty: the check proves nothing")
	}
}
