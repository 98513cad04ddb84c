package query

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// boardRowsOf runs a board query and returns its rows as scanned values, in order.
func boardRowsOf(t *testing.T, q *Queries, query string, args ...any) [][]any {
	t.Helper()
	return queryRows(t, q.db, query, args...)
}

// sameBoardValue compares two scanned values exactly: floats by their bits.
func sameBoardValue(a, b any) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return math.Float64bits(fa) == math.Float64bits(fb)
	}
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

// sameBoard compares the rows of two board queries field for field.
func sameBoard(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d columns, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if !sameBoardValue(got[i][j], want[i][j]) {
				t.Fatalf("%s: row %d (%v) column %d: got %v, want %v", what, i, want[i][0], j, got[i][j], want[i][j])
			}
		}
	}
}

// perpdexBoardOracle is sql/perpdex/board.sql as it was before the fills' per-day
// partial sums (every fill read raw), with exact decimal sums: the oracle of
// TestPerpdexBoardSame. perpdex_board_before.sql is the same with double sums, which
// a different grouping (days, then the window) changes in the last bits.
func perpdexBoardOracle(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pdBoardCheck compares the board of q's lake, computed with the published partial
// sums and with every fill raw, with the oracle's, field for field, for every window
// at each clock: all wallets in one pass (and one bucket when buckets).
func pdBoardCheck(t *testing.T, q *Queries, what string, buckets bool, clocks ...time.Time) {
	t.Helper()
	ctx := context.Background()
	oracle := perpdexBoardOracle(t, "perpdex_board_exact.sql")
	for _, at := range clocks {
		lab, err := q.perpdexLabelsAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range PerpdexWindowNames {
			start := PerpdexWindowStart(w, at)
			bs, be, err := q.PerpdexBoardBatches(ctx, start, at)
			if err != nil {
				t.Fatal(err)
			}
			ranges := [][2]string{{"0x", "0y"}}
			if buckets {
				ranges = append(ranges, bucketRangeArr("a"))
			}
			for _, r := range ranges {
				want := boardRowsOf(t, q, oracle, start, at, r[0], r[1], lab.current)
				if len(want) == 0 && r[0] == "0x" {
					t.Fatalf("%s %s %s: an empty board proves nothing", what, at, w)
				}
				// The partial sums with the carry across days and the per-snapshot positions,
				// with each alone, with neither, and every row raw.
				for _, mode := range []struct{ partials, carry, snaps bool }{
					{true, true, true}, {true, true, false}, {true, false, true}, {true, false, false}, {false, false, false},
				} {
					lo, hi := perpdexBoardDays(start, at, mode.partials)
					cs, ce, whole, err := q.perpdexCarryDates(start, hi, mode.carry)
					if err != nil {
						t.Fatal(err)
					}
					if mode.carry && !ce.Valid && w != "all" {
						t.Fatalf("%s %s %s: no carry date before the board's day proves nothing", what, at, w)
					}
					if mode.carry && w == "all" && !whole.Valid {
						t.Fatalf("%s %s: the window all without its carry proves nothing", what, at)
					}
					// The window all's trades from their carry (with the carry across days) and
					// one by one.
					tc, tFrom := sql.NullTime{}, start
					if mode.carry {
						if tc, tFrom, err = q.perpdexTradesCarryDate(start, at.Truncate(24*time.Hour)); err != nil {
							t.Fatal(err)
						}
						if w == "all" && !tc.Valid {
							t.Fatalf("%s %s: the window all without its trades carry proves nothing", what, at)
						}
					}
					got := boardRowsOf(t, q, perpdexBoardSQL, start, at, r[0], r[1], lab.current, bs, be, lo, hi, cs, ce, mode.snaps, whole, tc, tFrom)
					sameBoard(t, fmt.Sprintf("%s: %s %s wallets [%s, %s) partials %v carry %v (%v, %v) snaps %v trades carry %v", what, at.Format(time.RFC3339), w, r[0], r[1],
						mode.partials, mode.carry, cs, ce, mode.snaps, tc), got, want)
				}
			}
		}
	}
}

func bucketRangeArr(b string) [2]string { lo, hi := bucketRange(b); return [2]string{lo, hi} }

// pdBoardQueries opens a copy of the tiny lake with its fills' partial sums published
// and one DuckDB thread (a parallel double sum, as in the equity and trade figures,
// adds in an order that varies between runs).
func pdBoardQueries(t *testing.T) *Queries {
	ctx := context.Background()
	q, err := Open(ctx, testlake.Copy(t), Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if _, err := q.db.Exec("SET threads = 1"); err != nil {
		t.Fatal(err)
	}
	if err := q.perpdexEnsure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := q.PublishPerpdexDaily(ctx)
	if err != nil || len(ps) != len(perpdexDailies)+2 || ps[len(ps)-2].Table != lake.PerpdexWalletCarry.Name ||
		ps[len(ps)-1].Table != lake.PerpdexTradesCarry.Name {
		t.Fatalf("first publication %+v %v", ps, err)
	}
	for _, p := range ps {
		if len(p.Written) == 0 || len(p.Written) != p.Partitions {
			t.Fatalf("first publication %+v", p)
		}
	}
	return q
}

// pdClocks are the clocks a board is checked at: the lake's hour, and past hours
// inside a day (both window edges cut a day) and at midnight (the window starts and
// ends on a day boundary).
func pdClocks() []time.Time {
	now := PerpdexBoardTime(testlake.Now())
	day := now.Truncate(24 * time.Hour)
	return []time.Time{now, now.Add(-3*24*time.Hour - 7*time.Hour), day.Add(-2 * 24 * time.Hour)}
}

// TestPerpdexBoardSame: the board computed from the fills' published per-day partial
// sums (complete days) and raw fills (the window's partial edge days) gives the rows
// of the board computed from raw fills alone, field for field (floats by their bits),
// for every window, at the lake's clock and at past clocks (mid-day, midnight, just
// after midnight); the equity at the window start and end (av) from the accounts' day
// units equals the oracle's scan of every snapshot.
func TestPerpdexBoardSame(t *testing.T) {
	q := pdBoardQueries(t)
	// Beside pdClocks, an hour just after midnight: the window start's day (read raw for
	// the equity at the start) is then almost whole, and the board hour's day one hour.
	day := PerpdexBoardTime(testlake.Now()).Truncate(24 * time.Hour)
	pdBoardCheck(t, q, "tiny", true, append(pdClocks(), day.Add(-24*time.Hour+time.Hour))...)
}

// TestPerpdexBoardSameAsBefore: the exact sums change the board's double sums (and mean
// leverage) only in their last bits (the grouping of a double sum changes them as much): every other
// field is the same bits as the query before them.
func TestPerpdexBoardSameAsBefore(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	before, exact := perpdexBoardOracle(t, "perpdex_board_before.sql"), perpdexBoardOracle(t, "perpdex_board_exact.sql")
	// realized_gross, fees, volume, cum, the trades' long and short PnL, gross win and
	// loss and expectancy, avg_lev, funding paid
	sums := map[int]bool{3: true, 4: true, 5: true, 6: true, 14: true, 15: true, 16: true, 17: true, 18: true, 25: true, 26: true}
	for _, at := range pdClocks() {
		lab, err := q.perpdexLabelsAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range PerpdexWindowNames {
			start := PerpdexWindowStart(w, at)
			want := boardRowsOf(t, q, before, start, at, "0x", "0y", lab.current)
			got := boardRowsOf(t, q, exact, start, at, "0x", "0y", lab.current)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%s %s: %d rows, want %d", at, w, len(got), len(want))
			}
			for i := range got {
				for j := range got[i] {
					if sums[j] && got[i][j] != nil && want[i][j] != nil {
						g, h := got[i][j].(float64), want[i][j].(float64)
						if math.Abs(g-h) > 1e-9*math.Max(1, math.Abs(h)) {
							t.Fatalf("%s %s row %d column %d: %v, want %v", at, w, i, j, g, h)
						}
					} else if !sameBoardValue(got[i][j], want[i][j]) {
						t.Fatalf("%s %s row %d column %d: %v, want %v", at, w, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// pdDailyMatchesFills fails unless the published partial sums are those of the fills
// in the lake now, as a full rebuild would write them (and the same for positions and
// funding).
func pdDailyMatchesFills(t *testing.T, q *Queries, what string) {
	t.Helper()
	pdDailyMatches(t, q, what, `SELECT wallet, CAST(time AS DATE) AS day, sum(CAST(closed_pnl AS DECIMAL(38, 10))) AS realized_x,
		sum(CAST(fee AS DECIMAL(38, 10))) AS fee_x, sum(CAST(px * sz AS DECIMAL(38, 10))) AS volume_x, count(*) AS fills
		FROM perpdex_fills GROUP BY ALL`, `SELECT wallet, day, realized_x, fee_x, volume_x, fills FROM perpdex_fills_daily`)
	pdDailyMatches(t, q, what, `SELECT wallet, CAST(snapshot_ts AS DATE) AS day, sum(CAST(leverage AS DECIMAL(38, 10))), count(leverage)
		FROM perpdex_positions GROUP BY ALL`, `SELECT wallet, day, leverage_x, leverage_n FROM perpdex_positions_daily`)
	pdDailyMatches(t, q, what, `SELECT wallet, snapshot_ts, sum(CAST(leverage AS DECIMAL(38, 10))), count(leverage), sum(unrealized_pnl)
		FROM perpdex_positions GROUP BY ALL`, `SELECT wallet, snapshot_ts, leverage_x, leverage_n, unrealized_pnl FROM perpdex_positions_snaps`)
	pdDailyMatches(t, q, what, `SELECT wallet, CAST(time AS DATE) AS day, sum(CAST(usdc AS DECIMAL(38, 10)))
		FROM perpdex_funding GROUP BY ALL`, `SELECT wallet, day, usdc_x FROM perpdex_funding_daily`)
	// The builders' day aggregates of every date at once (a trade's sides share a day).
	full := strings.Replace(perpdexDailies[3].query, "WHERE date = $1::DATE AND", "WHERE", 1)
	if full == perpdexDailies[3].query {
		t.Fatal("builders_daily.sql no longer has its date condition")
	}
	pdDailyMatches(t, q, what, strings.TrimRight(strings.TrimSpace(full), ";"),
		`SELECT * EXCLUDE (date) FROM perpdex_builders_daily`)
	// The accounts' day segments of every date at once.
	full = strings.Replace(perpdexDailies[4].query, "WHERE date = $1::DATE", "", 1)
	if full == perpdexDailies[4].query {
		t.Fatal("accounts_daily.sql no longer has its date condition")
	}
	pdDailyMatches(t, q, what, strings.TrimRight(strings.TrimSpace(full), ";"),
		`SELECT * EXCLUDE (date) FROM perpdex_accounts_daily`)
	pdCarryMatches(t, q, what)
	pdTradesCarryMatches(t, q, what)
}

// pdCarryMatches fails unless every published perpdex_wallet_carry date holds what the
// raw rows on or before it give (the oracle: the last snapshot by time, the first day
// and its first value, the exact lifetime sums, the days with fills, the highest value
// and the largest drawdown from a window function over every snapshot), and the sidecar
// names exactly the dates of the sources.
func pdCarryMatches(t *testing.T, q *Queries, what string) {
	t.Helper()
	done, err := readSidecar[carrySource](carrySidecar(q.dir))
	if err != nil {
		t.Fatal(err)
	}
	var dates []string
	for _, tb := range []*lake.Table{lake.PerpdexAccounts, lake.PerpdexFills, lake.PerpdexFunding, lake.PerpdexPositions} {
		files, _ := tb.Files(q.dir)
		for _, f := range files {
			if d := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date="); !slices.Contains(dates, d) {
				dates = append(dates, d)
			}
		}
	}
	if len(done) != len(dates) || len(dates) == 0 {
		t.Fatalf("%s: carry sidecar has %d dates, the sources %d", what, len(done), len(dates))
	}
	for _, d := range dates {
		if done[d].Rows == 0 {
			t.Fatalf("%s: no carry for %s", what, d)
		}
		pdDailyMatches(t, q, what+" carry "+d, `
			WITH a AS (
			    SELECT wallet, max(snapshot_ts) AS last_ts, arg_max(account_value, snapshot_ts) AS last_av,
			           CAST(CAST(min(snapshot_ts) AS DATE) AS TIMESTAMP) AS first_ts, arg_min(account_value, snapshot_ts) AS first_av,
			           max(account_value) AS peak,
			           max(CASE WHEN rp > 0 THEN (rp - account_value) / rp * 100 ELSE 0 END) AS dd_pct, max(rp - account_value) AS dd_usd
			    FROM (SELECT *, max(account_value) OVER (PARTITION BY wallet ORDER BY snapshot_ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS rp
			          FROM perpdex_accounts WHERE date <= DATE '`+d+`')
			    GROUP BY wallet
			), f AS (
			    SELECT wallet, sum(CAST(closed_pnl AS DECIMAL(38, 10))) AS realized_x, sum(CAST(fee AS DECIMAL(38, 10))) AS fee_x,
			           sum(CAST(px * sz AS DECIMAL(38, 10))) AS volume_x, count(DISTINCT CAST(time AS DATE)) AS fill_days,
			           max(CAST(time AS DATE)) AS last_fill_day
			    FROM perpdex_fills WHERE date <= DATE '`+d+`' GROUP BY wallet
			), u AS (
			    SELECT wallet, sum(CAST(usdc AS DECIMAL(38, 10))) AS funding_x FROM perpdex_funding WHERE date <= DATE '`+d+`' GROUP BY wallet
			), p AS (
			    SELECT wallet, sum(CAST(leverage AS DECIMAL(38, 10))) AS lev_x, count(leverage) AS lev_n
			    FROM perpdex_positions WHERE date <= DATE '`+d+`' GROUP BY wallet
			)
			SELECT wallet, a.last_ts, a.last_av, a.first_ts, a.first_av, f.realized_x, f.fee_x, f.volume_x, f.fill_days, f.last_fill_day,
			       u.funding_x, p.lev_x, p.lev_n, a.peak, a.dd_pct, a.dd_usd
			FROM a FULL JOIN f USING (wallet) FULL JOIN u USING (wallet) FULL JOIN p USING (wallet)`,
			`SELECT * EXCLUDE (date) FROM perpdex_wallet_carry WHERE date = DATE '`+d+`'`)
	}
}

// TestPerpdexAccountsDailyIncremental: the drawdowns from the accounts' day segments
// equal the raw oracle's after a corrected accounts file (values moved, snapshots
// dropped, a new peak inside the day), a removed day and the same day back late, with
// only the changed date republished each time.
func TestPerpdexAccountsDailyIncremental(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	src := testlake.Tiny(t)
	files, _ := lake.PerpdexAccounts.Files(src)
	if len(files) < 4 {
		t.Fatalf("tiny lake: %d accounts dates", len(files))
	}
	day := strings.TrimPrefix(filepath.Base(filepath.Dir(files[len(files)-3])), "date=")
	rel, _ := lake.PerpdexAccounts.Path(day)
	path := filepath.Join(q.dir, filepath.FromSlash(rel))
	publish := func(what string, written, removed []string) {
		t.Helper()
		ps, err := q.PublishPerpdexDaily(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, p := range ps {
			if p.Table == lake.PerpdexWalletCarry.Name {
				pdCarryWrote(t, q, what, p, written, removed)
			} else if p.Table != lake.PerpdexAccountsDaily.Name {
				if len(p.Written)+len(p.Removed) != 0 {
					t.Fatalf("%s: %+v", what, p)
				}
			} else if !slices.Equal(p.Written, written) || !slices.Equal(p.Removed, removed) {
				t.Fatalf("%s: wrote %v removed %v, want %v and %v", what, p.Written, p.Removed, written, removed)
			}
		}
		pdDailyMatchesFills(t, q, what)
		pdBoardCheck(t, q, what, false, pdClocks()...)
	}
	if _, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexAccounts, []string{day},
		`SELECT * REPLACE (CASE WHEN hour(snapshot_ts) = 15 THEN account_value * 3 + 1000
		                        WHEN hour(snapshot_ts) % 4 = 1 THEN account_value * 0.7 ELSE account_value END AS account_value)
		 FROM read_parquet($1, hive_partitioning = false) WHERE hour(snapshot_ts) % 7 <> 3`, files[len(files)-3]); err != nil {
		t.Fatal(err)
	}
	publish("a corrected accounts day", []string{day}, nil)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	publish("the day removed", nil, []string{day})
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	publish("the day back, late", []string{day}, nil)
}

// pdBuildersCheck compares the builders board computed from the published per-day
// aggregates (complete days) and raw fills (the edge days), and from raw fills alone
// through the same query, with builder_metrics.sql (the board's query before them),
// field for field (floats by their bits), for every window at each clock.
func pdBuildersCheck(t *testing.T, q *Queries, what string, clocks ...time.Time) {
	t.Helper()
	for _, at := range clocks {
		for _, w := range PerpdexWindowNames {
			start := PerpdexWindowStart(w, at)
			want := boardRowsOf(t, q, perpdexBuilderMetricsSQL, nil, start, at, "builder")
			if len(want) == 0 && w == "all" {
				t.Fatalf("%s %s: an empty builders board proves nothing", what, at)
			}
			for _, partials := range []bool{true, false} {
				lo, hi := perpdexBoardDays(start, at, partials)
				got := boardRowsOf(t, q, perpdexBuildersBoardSQL, start, at, lo, hi)
				sameBoard(t, fmt.Sprintf("%s: builders %s %s partials %v", what, at.Format(time.RFC3339), w, partials), got, want)
			}
		}
	}
}

// TestPerpdexBuildersBoardSame: the builders board from the per-day aggregates equals
// builder_metrics.sql's, for every window, at the lake's clock and at past clocks
// (inside a day, at midnight, and on the instant of the newest fill, which the window
// includes).
func TestPerpdexBuildersBoardSame(t *testing.T) {
	q := pdBoardQueries(t)
	pdDailyMatchesFills(t, q, "tiny")
	var last time.Time
	if err := q.db.QueryRow("SELECT max(time) FROM perpdex_fills WHERE builder IS NOT NULL").Scan(&last); err != nil {
		t.Fatal(err)
	}
	pdBuildersCheck(t, q, "tiny", append(pdClocks(), last, last.Truncate(24*time.Hour), last.Truncate(24*time.Hour).Add(-time.Microsecond))...)
}

// pdCarryWrote fails unless a carry publication after the per-day tables wrote (or
// removed) changed (and removed) rewrote exactly the carry dates from the first of them
// on: the dates before it keep their files.
func pdCarryWrote(t *testing.T, q *Queries, what string, p DayPublication, changed, removed []string) {
	t.Helper()
	first := slices.Min(append(slices.Clone(changed), removed...))
	done, err := readSidecar[carrySource](carrySidecar(q.dir))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for d := range done {
		if d >= first {
			want = append(want, d)
		}
	}
	slices.Sort(want)
	if !slices.Equal(p.Written, want) || len(want) == 0 || len(want) == len(done) {
		t.Fatalf("%s: carry wrote %v, want %v (of %d dates)", what, p.Written, want, len(done))
	}
	for _, d := range p.Removed {
		if !slices.Contains(removed, d) {
			t.Fatalf("%s: carry removed %s", what, d)
		}
	}
}

func pdDailyMatches(t *testing.T, q *Queries, what, full, pub string) {
	t.Helper()
	var diff, n int64
	if err := q.db.QueryRow(`SELECT (SELECT count(*) FROM (((`+full+`) EXCEPT ALL (`+pub+`)) UNION ALL ((`+pub+`) EXCEPT ALL (`+full+`)))),
		(SELECT count(*) FROM (`+pub+`))`).Scan(&diff, &n); err != nil {
		t.Fatal(err)
	}
	if diff != 0 || n == 0 {
		t.Fatalf("%s: %d rows of the published partial sums (%d) differ from the source's: %s", what, diff, n, pub)
	}
}

// TestPerpdexBoardIncremental: after each publication of the partial sums (fills days
// removed, a new day, a day that arrives after a later one, a corrected file, a
// publication with nothing to do), only the changed dates are rewritten, the partial
// sums equal a full rebuild's, and the boards equal the raw oracle's.
func TestPerpdexBoardIncremental(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	src := testlake.Tiny(t)
	var dates []string
	files, _ := lake.PerpdexFills.Files(src)
	for _, f := range files {
		dates = append(dates, strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date="))
	}
	if len(dates) < 8 {
		t.Fatalf("tiny lake: %d fills dates", len(dates))
	}
	d := func(i int) string { return dates[len(dates)-i] } // d(1) is the newest
	path := func(dir, day string) string {
		rel, _ := lake.PerpdexFills.Path(day)
		return filepath.Join(dir, filepath.FromSlash(rel))
	}
	restore := func(day string) {
		b, err := os.ReadFile(path(src, day))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(path(q.dir, day)), 0o755)
		if err := os.WriteFile(path(q.dir, day), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(what string, written, removed []string) {
		t.Helper()
		// The closed trades first, as every publishing path does: the trades carry folds
		// them.
		if _, err := q.PublishPerpdexClosedTrades(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		ps, err := q.PublishPerpdexDaily(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		slices.Sort(written)
		slices.Sort(removed)
		for _, p := range ps {
			if p.Table == lake.PerpdexWalletCarry.Name {
				pdCarryWrote(t, q, what, p, written, removed)
			} else if p.Table == lake.PerpdexTradesCarry.Name {
				pdTradesCarryWrote(t, q, what, p, written, removed)
			} else if p.Table != lake.PerpdexFillsDaily.Name && p.Table != lake.PerpdexBuildersDaily.Name {
				if len(p.Written)+len(p.Removed) != 0 { // only fills files changed
					t.Fatalf("%s: %+v", what, p)
				}
			} else if !slices.Equal(p.Written, written) || !slices.Equal(p.Removed, removed) {
				t.Fatalf("%s: wrote %v removed %v, want %v and %v", what, p.Written, p.Removed, written, removed)
			}
		}
		pdDailyMatchesFills(t, q, what)
		c := pdClocks()
		pdBoardCheck(t, q, what, false, c[0], c[1])
		pdBuildersCheck(t, q, what, c...)
	}
	for _, day := range []string{d(1), d(4), d(6)} {
		if err := os.RemoveAll(filepath.Dir(path(q.dir, day))); err != nil {
			t.Fatal(err)
		}
	}
	publish("three days removed", nil, []string{d(1), d(4), d(6)})
	restore(d(4))
	publish("a day back", []string{d(4)}, nil)
	restore(d(6))
	publish("a late day (before one already back)", []string{d(6)}, nil)
	// Corrected files: every fifth fill dropped and prices moved, and a wallet with a
	// single fill on a window's edge: at noon of d(2), the first instant of the 1d
	// window at the lake's hour (raw edge day), and at midnight of d(3), the first
	// instant of a complete day.
	for _, c := range []struct{ day, wallet, at string }{
		{d(2), "0xffffffffffffffffffffffffffffffffffffff01", d(2) + " 12:00:00"},
		{d(3), "0x0000000000000000000000000000000000000001", d(3) + " 00:00:00"},
	} {
		if _, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexFills, []string{c.day},
			`SELECT * REPLACE (px * 1.001 AS px) FROM read_parquet($1, hive_partitioning = false) WHERE tid % 5 <> 0
			 UNION ALL
			 SELECT * REPLACE ($2 AS wallet, $3::TIMESTAMP AS time, 12.5 AS closed_pnl) FROM (FROM read_parquet($1, hive_partitioning = false) LIMIT 1)`,
			path(src, c.day), c.wallet, c.at); err != nil {
			t.Fatal(err)
		}
	}
	publish("corrected days", []string{d(2), d(3)}, nil)
	for _, w := range []string{"0xffffffffffffffffffffffffffffffffffffff01", "0x0000000000000000000000000000000000000001"} {
		var n int
		if err := q.db.QueryRow("SELECT count(*) FROM perpdex_fills_daily WHERE wallet = $1 AND fills = 1", w).Scan(&n); err != nil || n != 1 {
			t.Fatalf("one-fill wallet %s: %d daily rows %v", w, n, err)
		}
	}
	restore(d(1))
	publish("a new day", []string{d(1)}, nil)
	ps, err := q.PublishPerpdexDaily(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if len(p.Written)+len(p.Removed) != 0 {
			t.Fatalf("nothing changed: %+v", p)
		}
	}
}

// TestPerpdexDailyLayoutRepublishes: a date published under another layout of its
// table (row groups) is rewritten once, with the table's row groups, and only for the
// tables whose layout changed (the board reads one wallet bucket of each file and
// skips the other row groups); the boards still equal the raw oracle's.
func TestPerpdexDailyLayoutRepublishes(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	for _, d := range perpdexDailies {
		path := filepath.Join(q.dir, filepath.FromSlash(d.sidecar))
		done, err := readSidecar[string](path)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range done { // as a publication before the layout was part of it
			done[k] = strings.Split(v, "|row groups")[0]
		}
		if err := writeSidecar(path, done); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := q.PublishPerpdexDaily(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if p.Table == lake.PerpdexWalletCarry.Name || p.Table == lake.PerpdexTradesCarry.Name { // folded from dates rewritten alike: the same bytes
			if len(p.Written)+len(p.Removed) != 0 {
				t.Fatalf("carry rewritten for an unchanged source: %+v", p)
			}
			continue
		}
		dst := perpdexDailies[i].dst
		if want := map[bool]int{true: p.Partitions, false: 0}[dst.RowGroup != 0]; len(p.Written) != want {
			t.Fatalf("%s: rewrote %d of %d dates, want %d", p.Table, len(p.Written), p.Partitions, want)
		}
		if dst.RowGroup == 0 {
			continue
		}
		var biggest int64
		if err := q.db.QueryRow(`SELECT max(row_group_num_rows) FROM parquet_metadata($1)`,
			filepath.Join(q.dir, filepath.FromSlash(dst.Prefix), "*", dst.File)).Scan(&biggest); err != nil {
			t.Fatal(err)
		}
		if biggest == 0 || biggest > int64(dst.RowGroup) {
			t.Fatalf("%s: a row group of %d rows, want at most %d", p.Table, biggest, dst.RowGroup)
		}
	}
	ps, err = q.PublishPerpdexDaily(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if len(p.Written)+len(p.Removed) != 0 {
			t.Fatalf("nothing changed: %+v", p)
		}
	}
	pdDailyMatchesFills(t, q, "layout")
	pdBoardCheck(t, q, "layout", false, pdClocks()[0])
}

// TestPerpdexBoardCarrySparseWallets: wallets whose equity the board takes from the
// carry across days, not from a snapshot of the window's edge days: one whose only
// snapshot is days before the 1d and 7d windows (its start equity is that snapshot,
// from the carry before the start's day), one whose first snapshot is inside the
// windows after their start's day (its start equity is that first value, from the carry
// before the board's day), one whose first snapshot is on the start's day after the
// start (read raw), each with a fill in every window. The board equals the raw oracle's
// with and without the carry, and the carry equals the raw fold.
func TestPerpdexBoardCarrySparseWallets(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	at := PerpdexBoardTime(testlake.Now())
	day := at.Truncate(24 * time.Hour)
	oneDay := at.Add(-24 * time.Hour)
	add := func(tb *lake.Table, date time.Time, query string, args ...any) {
		t.Helper()
		rel, _ := tb.Path(Date(date))
		path := filepath.Join(q.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("no %s file for %s: %v", tb.Name, Date(date), err)
		}
		if _, err := lake.CopyQuery(ctx, q.db, q.dir, tb, []string{Date(date)},
			`SELECT * FROM read_parquet($1, hive_partitioning = false) UNION ALL `+query, append([]any{path}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	snap := `SELECT * REPLACE ($2 AS wallet, $3::TIMESTAMP AS snapshot_ts, $4::DOUBLE AS account_value) FROM (FROM read_parquet($1, hive_partitioning = false) LIMIT 1)`
	fill := `SELECT * REPLACE ($2 AS wallet, $3::TIMESTAMP AS time, 7.25 AS closed_pnl) FROM (FROM read_parquet($1, hive_partitioning = false) LIMIT 1)`
	sparse := []struct {
		wallet string
		snaps  []time.Time
	}{
		{"0x00000000000000000000000000000000000000c1", []time.Time{day.Add(-9*24*time.Hour + 5*time.Hour)}},
		{"0x00000000000000000000000000000000000000c2", []time.Time{day.Add(-12*time.Hour - 24*time.Hour + 30*time.Minute), day.Add(-3 * time.Hour)}},
		{"0x00000000000000000000000000000000000000c3", []time.Time{oneDay.Add(time.Hour), day.Add(-2 * time.Hour)}},
	}
	for i, w := range sparse {
		for j, s := range w.snaps {
			if s.Before(day.Add(-10 * 24 * time.Hour)) {
				t.Fatal("the lake has no accounts that early")
			}
			add(lake.PerpdexAccounts, s, snap, w.wallet, s, 1000*float64(i+1)+float64(j))
		}
		add(lake.PerpdexFills, at.Add(-time.Hour), fill, w.wallet, at.Add(-time.Hour))
	}
	if _, err := q.PublishPerpdexDaily(ctx); err != nil {
		t.Fatal(err)
	}
	pdDailyMatchesFills(t, q, "sparse wallets")
	pdBoardCheck(t, q, "sparse wallets", false, at)
	// The three are on every board, with the start equity the rules give.
	lab, err := q.perpdexLabelsAt(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	start := PerpdexWindowStart("1d", at)
	bs, be, _ := q.PerpdexBoardBatches(ctx, start, at)
	lo, hi := perpdexBoardDays(start, at, true)
	cs, ce, whole, _ := q.perpdexCarryDates(start, hi, true)
	want := map[string]float64{sparse[0].wallet: 1000, sparse[1].wallet: 2000, sparse[2].wallet: 3000}
	for _, r := range boardRowsOf(t, q, perpdexBoardSQL, start, at, "0x", "0y", lab.current, bs, be, lo, hi, cs, ce, true, whole, nil, start) {
		if w, ok := want[r[0].(string)]; ok {
			if r[2].(float64) != w {
				t.Fatalf("%s: start equity %v, want %v", r[0], r[2], w)
			}
			delete(want, r[0].(string))
		}
	}
	if len(want) != 0 {
		t.Fatalf("not on the 1d board: %v", want)
	}
}

// TestPerpdexCarryOtherLayout: a lake whose perpdex_wallet_carry was written by another
// fold (fewer columns, as the first carry had) is rewritten whole by the next
// publication, and then equals the raw oracle; a publication after it writes nothing.
func TestPerpdexCarryOtherLayout(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	done, err := readSidecar[carrySource](carrySidecar(q.dir))
	if err != nil || len(done) == 0 {
		t.Fatal(len(done), err)
	}
	for d, e := range done {
		rel, _ := lake.PerpdexWalletCarry.Path(d)
		path := filepath.Join(q.dir, filepath.FromSlash(rel))
		if _, err := q.db.Exec(`COPY (SELECT wallet, last_ts, last_av, first_ts, first_av, realized_x, fee_x FROM read_parquet('` + path + `'))
			TO '` + path + `.old' (FORMAT parquet)`); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".old", path); err != nil {
			t.Fatal(err)
		}
		e.Layout = ""
		done[d] = e
	}
	if err := writeSidecar(carrySidecar(q.dir), done); err != nil {
		t.Fatal(err)
	}
	if err := q.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := q.PublishPerpdexDaily(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := ps[len(ps)-2]; p.Table != lake.PerpdexWalletCarry.Name || len(p.Written) != len(done) {
		t.Fatalf("carry after another layout: %+v, want %d dates written", p, len(done))
	}
	pdCarryMatches(t, q, "other layout")
	pdBoardCheck(t, q, "other layout", false, pdClocks()[0])
	ps, err = q.PublishPerpdexDaily(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps[len(ps)-2:] {
		if len(p.Written)+len(p.Removed) != 0 {
			t.Fatalf("nothing changed: %+v", p)
		}
	}
}

// pdTradesCarryWrote fails unless a trades carry publication after fills files changed
// (or were removed) rewrote the close dates from one on, no later than the first at or
// after the first change (a fill closing a position never seen open can move an older
// trade's close, so the first rewritten may be earlier), and kept the dates before it.
func pdTradesCarryWrote(t *testing.T, q *Queries, what string, p DayPublication, changed, removed []string) {
	t.Helper()
	first := slices.Min(append(slices.Clone(changed), removed...))
	done, err := readSidecar[tradesCarrySource](tradesCarrySidecar(q.dir))
	if err != nil {
		t.Fatal(err)
	}
	var dates []string
	for d := range done {
		dates = append(dates, d)
	}
	slices.Sort(dates)
	if len(p.Written) == 0 {
		t.Fatalf("%s: trades carry wrote nothing", what)
	}
	from := slices.Index(dates, p.Written[0])
	if from <= 0 || !slices.Equal(p.Written, dates[from:]) {
		t.Fatalf("%s: trades carry wrote %v, not the dates from one on of %v", what, p.Written, dates)
	}
	for _, d := range dates {
		if d >= first {
			if p.Written[0] > d {
				t.Fatalf("%s: trades carry wrote from %s, after %s (the first change %s)", what, p.Written[0], d, first)
			}
			break
		}
	}
}

// pdTradesCarryMatches fails unless every close date of a complete trade has a current
// perpdex_trades_carry entry holding what plain Go computes from the published complete trades closed on or
// before it, taken one by one in the board's order (close_ts, asset, trade_no): the
// counts, the sums (to 1e-9 of their size: the carry's are exact decimals of each
// trade's PnL to 10 places), the durations, the longest runs and the runs at the end.
func pdTradesCarryMatches(t *testing.T, q *Queries, what string) {
	t.Helper()
	type trade struct {
		wallet, dir string
		close       time.Time
		pnl         float64
		dur         int64
	}
	rows, err := q.db.Query(`SELECT wallet, direction, close_ts, realized_pnl, open_ts FROM perpdex_closed_trades
		WHERE is_complete ORDER BY wallet, close_ts, asset, trade_no`)
	if err != nil {
		t.Fatal(err)
	}
	var trades []trade
	for rows.Next() {
		var tr trade
		var open time.Time
		if err := rows.Scan(&tr.wallet, &tr.dir, &tr.close, &tr.pnl, &open); err != nil {
			t.Fatal(err)
		}
		tr.dur = (tr.close.UnixMicro() - open.UnixMicro()) / 1_000_000
		trades = append(trades, tr)
	}
	rows.Close()
	done, err := readSidecar[tradesCarrySource](tradesCarrySidecar(q.dir))
	if err != nil {
		t.Fatal(err)
	}
	version, err := q.closedTradesVersion()
	if err != nil {
		t.Fatal(err)
	}
	dates, chains, err := q.tradesCarryChains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != len(dates) || len(dates) == 0 {
		t.Fatalf("%s: trades carry sidecar has %d dates, the trades close on %d", what, len(done), len(dates))
	}
	type carry struct {
		n, wins, losses, longs, longWins, shorts, shortWins, dur, maxW, maxL, runW, runL int64
		pnl, longPnl, shortPnl, grossWin, grossLoss                                      float64
	}
	checked := 0
	for _, d := range dates {
		if done[d].Chain != chains[d] || done[d].Layout != tradesCarryLayout || done[d].Trades != version {
			t.Fatalf("%s: trades carry of %s not current", what, d)
		}
		end, _ := time.Parse(time.DateOnly, d)
		end = end.Add(24 * time.Hour)
		want := map[string]*carry{}
		for _, tr := range trades {
			if !tr.close.Before(end) {
				continue
			}
			c := want[tr.wallet]
			if c == nil {
				c = &carry{}
				want[tr.wallet] = c
			}
			c.n++
			c.pnl += tr.pnl
			c.dur += tr.dur
			win, loss := tr.pnl > 0, tr.pnl < 0
			if tr.dir == "long" {
				c.longs++
				c.longPnl += tr.pnl
			} else {
				c.shorts++
				c.shortPnl += tr.pnl
			}
			switch {
			case win:
				c.wins++
				c.grossWin += tr.pnl
				if tr.dir == "long" {
					c.longWins++
				} else {
					c.shortWins++
				}
				c.runW, c.runL = c.runW+1, 0
			case loss:
				c.losses++
				c.grossLoss += tr.pnl
				c.runW, c.runL = 0, c.runL+1
			default:
				c.runW, c.runL = 0, 0
			}
			c.maxW, c.maxL = max(c.maxW, c.runW), max(c.maxL, c.runL)
		}
		if done[d].Rows != int64(len(want)) {
			t.Fatalf("%s: trades carry of %s has %d rows, want %d", what, d, done[d].Rows, len(want))
		}
		if len(want) == 0 {
			continue
		}
		rows, err := q.db.Query(`SELECT wallet, n, wins, losses, longs, long_wins, shorts, short_wins, dur_s, max_w, max_l, run_w, run_l,
			pnl_x::DOUBLE, long_pnl_x::DOUBLE, short_pnl_x::DOUBLE, gross_win_x::DOUBLE, gross_loss_x::DOUBLE
			FROM perpdex_trades_carry WHERE date = $1::DATE`, d)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for rows.Next() {
			var w string
			var c carry
			if err := rows.Scan(&w, &c.n, &c.wins, &c.losses, &c.longs, &c.longWins, &c.shorts, &c.shortWins, &c.dur, &c.maxW, &c.maxL,
				&c.runW, &c.runL, &c.pnl, &c.longPnl, &c.shortPnl, &c.grossWin, &c.grossLoss); err != nil {
				t.Fatal(err)
			}
			e := want[w]
			if e == nil {
				t.Fatalf("%s: trades carry of %s has %s, which closed no complete trade by then", what, d, w)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			ints := [][2]int64{{c.n, e.n}, {c.wins, e.wins}, {c.losses, e.losses}, {c.longs, e.longs}, {c.longWins, e.longWins},
				{c.shorts, e.shorts}, {c.shortWins, e.shortWins}, {c.dur, e.dur}, {c.maxW, e.maxW}, {c.maxL, e.maxL}, {c.runW, e.runW}, {c.runL, e.runL}}
			for i, p := range ints {
				if p[0] != p[1] {
					t.Fatalf("%s: trades carry of %s, %s: figure %d is %d, want %d (%+v against %+v)", what, d, w, i, p[0], p[1], c, *e)
				}
			}
			if !near(c.pnl, e.pnl) || !near(c.longPnl, e.longPnl) || !near(c.shortPnl, e.shortPnl) || !near(c.grossWin, e.grossWin) || !near(c.grossLoss, e.grossLoss) {
				t.Fatalf("%s: trades carry of %s, %s: sums %+v, want %+v", what, d, w, c, *e)
			}
			if c.maxW > 1 || c.maxL > 1 {
				checked++
			}
			got++
		}
		rows.Close()
		if got != len(want) {
			t.Fatalf("%s: trades carry of %s has %d wallets, want %d", what, d, got, len(want))
		}
	}
	if checked == 0 {
		t.Fatalf("%s: no run longer than one trade: the streaks prove nothing", what)
	}
}

// TestPerpdexTradesCarryRepublishes: a publication with nothing changed writes no trades
// carry date; one of another fold (layout) rewrites every date; publications cancelled
// at random points leave no temporary file, no listed date without its file, and a
// board of the window all that still equals the oracle (reading the carry only when the
// whole of it is checked); the next publication completes it.
func TestPerpdexTradesCarryRepublishes(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	pdTradesCarryMatches(t, q, "first")
	last := func(ps []DayPublication) DayPublication { return ps[len(ps)-1] }
	ps, err := q.PublishPerpdexDaily(ctx)
	if err != nil || last(ps).Table != lake.PerpdexTradesCarry.Name || len(last(ps).Written)+len(last(ps).Removed) != 0 {
		t.Fatalf("nothing changed: %+v %v", ps, err)
	}
	side := tradesCarrySidecar(q.dir)
	edit := func(f func(*tradesCarrySource)) int {
		done, err := readSidecar[tradesCarrySource](side)
		if err != nil || len(done) == 0 {
			t.Fatal(len(done), err)
		}
		for d, e := range done {
			f(&e)
			done[d] = e
		}
		if err := writeSidecar(side, done); err != nil {
			t.Fatal(err)
		}
		return len(done)
	}
	n := edit(func(e *tradesCarrySource) { e.Layout = "" })
	p, err := q.publishPerpdexTradesCarry(ctx)
	if err != nil || len(p.Written) != n {
		t.Fatalf("another layout: %+v %v, want %d dates written", p, err, n)
	}
	pdTradesCarryMatches(t, q, "another layout")
	at := PerpdexBoardTime(testlake.Now())
	lab, err := q.perpdexLabelsAt(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	start := PerpdexWindowStart("all", at)
	bs, be, _ := q.PerpdexBoardBatches(ctx, start, at)
	want := boardRowsOf(t, q, perpdexBoardOracle(t, "perpdex_board_exact.sql"), start, at, "0x", "0y", lab.current)
	board := func(what string) bool {
		t.Helper()
		tc, tFrom, err := q.perpdexTradesCarryDate(start, at.Truncate(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := perpdexBoardDays(start, at, true)
		cs, ce, whole, _ := q.perpdexCarryDates(start, hi, true)
		sameBoard(t, what, boardRowsOf(t, q, perpdexBoardSQL, start, at, "0x", "0y", lab.current, bs, be, lo, hi, cs, ce, true, whole, tc, tFrom), want)
		return tc.Valid
	}
	rng := rand.New(rand.NewPCG(5, 6))
	cancelled := 0
	for i := range 8 {
		edit(func(e *tradesCarrySource) { e.Chain, e.Trades = "changed", "" }) // every date folded again
		cctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(120))*time.Millisecond)
		_, err := q.publishPerpdexTradesCarry(cctx)
		cancel()
		if err != nil {
			cancelled++
		}
		done, _ := readSidecar[tradesCarrySource](side)
		for d := range done {
			rel, _ := lake.PerpdexTradesCarry.Path(d)
			if !fileExists(filepath.Join(q.dir, filepath.FromSlash(rel))) {
				t.Fatalf("round %d: %s is listed without its file", i, d)
			}
		}
		filepath.Walk(filepath.Join(q.dir, "perpdex"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.Contains(filepath.Base(p), ".tmp-") {
				t.Fatalf("round %d: temporary file left: %s", i, p)
			}
			return nil
		})
		if read := board(fmt.Sprintf("round %d", i)); read && err != nil {
			t.Fatalf("round %d: a cancelled publication's carry was read", i)
		}
	}
	if cancelled == 0 {
		t.Fatal("no publication was cancelled; the test did not test cancellation")
	}
	if _, err := q.publishPerpdexTradesCarry(ctx); err != nil {
		t.Fatal(err)
	}
	pdTradesCarryMatches(t, q, "after cancellations")
	if !board("after cancellations") {
		t.Fatal("the window all read no carry after a complete publication")
	}
}
