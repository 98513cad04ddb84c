package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/sqlrows"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// perDate is the split that reads every leg from the per-date onchain_legs files: with
// it the per-wallet SQL is the SQL these routes ran before onchain_wallet_legs.
const perDate = "0001-01-01"

// sqlRows runs a SQL file and returns every row, every column as text.
func sqlRows(t *testing.T, q *query.Queries, file string, args ...any) [][]string {
	t.Helper()
	return queryRows(t, q, file, sqlfiles.MustRead(file), args...)
}

// beforeRows runs the SQL a per-wallet file held before onchain_wallet_legs (every leg
// read from the per-date onchain_legs files; testdata/onchain_wallet_before).
func beforeRows(t *testing.T, q *query.Queries, file string, args ...any) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "onchain_wallet_before", filepath.Base(file)))
	if err != nil {
		t.Fatal(err)
	}
	return queryRows(t, q, file+" (before)", string(b), args...)
}

func queryRows(t *testing.T, q *query.Queries, file, text string, args ...any) [][]string {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(), text, args...)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	defer rows.Close()
	all, err := sqlrows.All(rows)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := make([][]string, 0, len(all))
	for _, vals := range all {
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprintf("%#v", v)
		}
		out = append(out, row)
	}
	return out
}

// checkWalletLegs compares, for a sample of wallets (the busiest of each chain, and one
// of three buckets, first and last among them) and several clocks, every per-wallet SQL
// file reading the published wallet segments with the SQL it replaced (every leg from
// the per-date legs) and with itself reading the per-date legs only, row for row and
// field for field; and the legs segments, over the dates the sidecar gives them, with
// the per-date legs as multisets.
var checkStep int

func checkWalletLegs(t *testing.T, q *query.Queries, step string) {
	t.Helper()
	ctx := context.Background()
	h, r := q.WalletLegsSplit()
	if h == perDate {
		t.Fatalf("%s: no wallet segments published", step)
	}
	legCols := "chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number"
	var extra, missing int64
	if err := q.DB().QueryRowContext(ctx, `WITH seg AS (
		SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'history' AND date <= CAST($1 AS DATE)
		UNION ALL SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'recent' AND date > CAST($1 AS DATE) AND date <= CAST($2 AS DATE)),
		per AS (SELECT `+legCols+` FROM onchain_legs WHERE date <= CAST($2 AS DATE))
		SELECT (SELECT count(*) FROM (SELECT * FROM seg EXCEPT ALL SELECT * FROM per)),
		       (SELECT count(*) FROM (SELECT * FROM per EXCEPT ALL SELECT * FROM seg))`, h, r).Scan(&extra, &missing); err != nil {
		t.Fatal(err)
	}
	if extra != 0 || missing != 0 {
		t.Fatalf("%s: segments (history to %s, recent to %s) have %d legs the per-date legs lack and lack %d", step, h, r, extra, missing)
	}
	var wallets []string
	rows, err := q.DB().QueryContext(ctx, `SELECT wallet FROM (
		SELECT wallet, row_number() OVER (PARTITION BY chain ORDER BY count(*) DESC, wallet) AS k FROM onchain_legs GROUP BY chain, wallet) WHERE k = 1
		UNION SELECT min(wallet) FROM onchain_legs WHERE substr(wallet, 3, 1) IN ('0', '7', 'f') GROUP BY substr(wallet, 3, 1) ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		rows.Scan(&w) //nolint:errcheck
		wallets = append(wallets, w)
	}
	rows.Close()
	if len(wallets) < 5 {
		t.Fatalf("%s: %d wallets sampled", step, len(wallets))
	}
	checkWalletEdges(t, q, step, wallets)
	now := testlake.Now()
	us := func(c time.Time, d time.Duration) int64 { return c.Add(-d).UnixMicro() }
	const day = 24 * time.Hour
	// Clocks: the lake's, mid-day in the past, and on a day boundary inside the history.
	// Each step checks the lake's clock and one of the past ones, in turn (every clock
	// at every step takes minutes on a loaded machine).
	past := []time.Time{now.Add(-3*day - 5*time.Hour), now.Truncate(day).Add(-6 * day)}
	checkStep++
	for _, c := range []time.Time{now, past[checkStep%2]} {
		for i, w := range wallets {
			v := wallets[(i+1)%len(wallets)]
			cases := []struct {
				file     string
				chain, b string // the chain and second wallet the files are listed for
				args     []any
			}{
				{"onchain/wallet.sql", "", "", []any{w, us(c, 0)}},
				{"onchain/wallet_transactions.sql", "ethereum", "", []any{"ethereum", w, us(c, 30*day), us(c, 0), "", 0.0, false, int64(0), int64(0), "", 101}},
				{"onchain/wallet_transactions.sql", "base", "", []any{"base", w, us(c, 7*day), us(c, 0), "", 10.0, true, us(c, 2*day), int64(5), "0x8", 20}},
				{"onchain/wallet_counterparties.sql", "bsc", "", []any{"bsc", w, us(c, 30*day), us(c, 0), 50}},
				{"onchain/wallet_counterparties.sql", "ethereum", "", []any{"ethereum", w, us(c, day), us(c, 0), 5}},
				{"onchain/wallet_pnl.sql", "ethereum", "", []any{"ethereum", w, c.AddDate(0, 0, -29).Format(time.DateOnly), us(c, 0)}},
				{"onchain/wallet_compare.sql", "base", v, []any{"base", w, v, us(c, 30*day), us(c, 0), 50}},
				{"onchain/wallet_compare.sql", "ethereum", w, []any{"ethereum", w, w, us(c, 7*day), us(c, 0), 3}},
			}
			tail := func(file, chain, b, h, r string) []any {
				a, err := q.WalletSQLArgs(ctx, file, chain, w, b, h, r)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			for _, tc := range cases {
				got := sqlRows(t, q, tc.file, append(tc.args, tail(tc.file, tc.chain, tc.b, h, r)...)...)
				want := beforeRows(t, q, tc.file, tc.args...)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %s %v at %s: segments give\n%v\nthe SQL before\n%v", step, tc.file, tc.args, c, got, want)
				}
				if perDate := sqlRows(t, q, tc.file, append(tc.args, tail(tc.file, tc.chain, tc.b, perDate, perDate)...)...); !reflect.DeepEqual(perDate, want) {
					t.Fatalf("%s: %s %v at %s: per-date legs give\n%v\nthe SQL before\n%v", step, tc.file, tc.args, c, perDate, want)
				}
			}
		}
	}
}

// checkWalletEdges: the published onchain_wallet_edges are those due at the store's
// clock (serving date d: the clock's date, or the day after the recent split r when
// that is later; newest legs date through: two days before d, or r when older); they
// hold exactly the segments' legs dated up to through whose block date is one of d's
// edge days, the bands the other days' sums; and wallet_edges.sql reading them answers
// as the SQL before at clocks across d.
func checkWalletEdges(t *testing.T, q *query.Queries, step string, wallets []string) {
	t.Helper()
	ctx := context.Background()
	h, r := q.WalletLegsSplit()
	d, through := q.WalletEdges()
	rd, err := time.Parse(time.DateOnly, r)
	if err != nil {
		t.Fatalf("%s: split to %q", step, r)
	}
	wantDay := q.Now().UTC().Truncate(24 * time.Hour)
	if next := rd.AddDate(0, 0, 1); wantDay.Before(next) {
		wantDay = next
	}
	wantThrough := min(r, wantDay.AddDate(0, 0, -2).Format(time.DateOnly))
	if d != wantDay.Format(time.DateOnly) || through != wantThrough {
		t.Fatalf("%s: edges published for %q through %q, split to %s at %s: want %s through %s", step, d, through, r, q.Now(), wantDay.Format(time.DateOnly), wantThrough)
	}
	day := wantDay
	var edges []time.Time
	for _, k := range []int{0, 1, 7, 30, 90} {
		edges = append(edges, day.AddDate(0, 0, -k))
	}
	legCols := "chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number"
	var n, extra, missing int64
	if err := q.DB().QueryRowContext(ctx, `WITH seg AS (
		SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'history' AND date <= CAST($1 AS DATE) AND date <= CAST($2 AS DATE)
		UNION ALL SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'recent' AND date > CAST($1 AS DATE) AND date <= CAST($2 AS DATE)),
		want AS (SELECT * FROM seg WHERE list_contains(CAST($3 AS DATE[]), CAST(block_time AS DATE))),
		got AS (SELECT `+legCols+` FROM onchain_wallet_edges)
		SELECT (SELECT count(*) FROM got), (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want)),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got))`, h, through, edges).Scan(&n, &extra, &missing); err != nil {
		t.Fatal(err)
	}
	// None only when no edge day but the 30d and 90d ones (before the lake) is held.
	if (n == 0 && through >= day.AddDate(0, 0, -7).Format(time.DateOnly)) || extra != 0 || missing != 0 {
		t.Fatalf("%s: edges of %s hold %d legs, %d the segments' edge days lack, and lack %d", step, d, n, extra, missing)
	}
	// The bands: the segments' legs of the other days before d, summed per band by the
	// window holding the day on d.
	bandCols := "chain, wallet, token, band, inflow, outflow, tx_count, first_time, last_time"
	if err := q.DB().QueryRowContext(ctx, `WITH seg AS (
		SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'history' AND date <= CAST($1 AS DATE) AND date <= CAST($2 AS DATE)
		UNION ALL SELECT `+legCols+` FROM onchain_wallet_legs WHERE segment = 'recent' AND date > CAST($1 AS DATE) AND date <= CAST($2 AS DATE)),
		want AS (SELECT chain, wallet, token, CASE WHEN day_diff <= 6 THEN 2 WHEN day_diff <= 29 THEN 3 WHEN day_diff <= 89 THEN 4 ELSE 5 END AS band,
			sum(usd) FILTER (WHERE dir = 1) AS inflow, sum(usd) FILTER (WHERE dir = -1) AS outflow,
			count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx_count, min(block_time) AS first_time, max(block_time) AS last_time
			FROM (SELECT *, date_diff('day', CAST(block_time AS DATE), CAST($4 AS DATE)) AS day_diff FROM seg)
			WHERE day_diff >= 1 AND NOT list_contains(CAST($3 AS DATE[]), CAST(block_time AS DATE)) GROUP BY ALL),
		got AS (SELECT `+bandCols+` FROM onchain_wallet_bands)
		SELECT (SELECT count(*) FROM got), (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want)),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got))`, h, through, edges, day).Scan(&n, &extra, &missing); err != nil {
		t.Fatal(err)
	}
	if extra != 0 || missing != 0 { // none before the lake's third day
		t.Fatalf("%s: bands of %s hold %d rows, %d the segments' legs do not sum to, and lack %d", step, d, n, extra, missing)
	}
	for _, c := range []time.Time{day, day.Add(9*time.Hour + 17*time.Minute), day.Add(24*time.Hour - time.Microsecond)} {
		for _, w := range wallets {
			args := []any{w, c.UnixMicro()}
			tail, err := q.WalletSQLArgs(ctx, "onchain/wallet_edges.sql", "", w, "", h, r)
			if err != nil {
				t.Fatal(err)
			}
			got := sqlRows(t, q, "onchain/wallet_edges.sql", append(args, tail...)...)
			if want := beforeRows(t, q, "onchain/wallet.sql", args...); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: wallet_edges.sql for %s at %s gives\n%v\nthe SQL before\n%v", step, w, c, got, want)
			}
		}
	}
}

// moveTransfers moves the transfers files of the given dates (every chain) between the
// lake and a holding directory.
func moveTransfers(t *testing.T, dir, held string, back bool, dates ...string) {
	t.Helper()
	for _, d := range dates {
		for _, c := range []string{"base", "bsc", "ethereum"} {
			f := transferFile(t, dir, c, d)
			h := filepath.Join(held, c+"-"+d+".parquet")
			from, to := f, h
			if back {
				from, to = h, f
				os.MkdirAll(filepath.Dir(f), 0o755) //nolint:errcheck
			}
			if err := os.Rename(from, to); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func publishLegs(t *testing.T, q *query.Queries, step string) query.LegsPublication {
	t.Helper()
	p, err := q.PublishOnchainLegs(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	// The per-wallet routes define the wallet_legs macro (and transactions the token
	// side table) on first use.
	if _, _, err := q.OnchainWalletTransactions(context.Background(), query.OnchainWalletTransactionsParams{
		Chain: "ethereum", Address: "0x0000000000000000000000000000000000000001", Days: 30, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOnchainWalletLegsEqualPerDateLegs: the wallet-clustered copy of the legs answers
// every per-wallet SQL exactly as the per-date legs do, after every kind of incremental
// publication (the first, with compaction; new days into the recent segments; a
// corrected and a removed day inside the history; the removed day arriving late; new
// days up to the next compaction), at the lake's clock and past clocks; and each
// publication rewrote only the segments it had to.
func TestOnchainWalletLegsEqualPerDateLegs(t *testing.T) {
	dir := testlake.Copy(t)
	held := t.TempDir()
	q := openStore(t, dir)
	// The tiny lake's days run from 2026-11-10 to 2026-11-20; hold back all but two.
	later := []string{"2026-11-12", "2026-11-13", "2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20"}
	moveTransfers(t, dir, held, false, later...)
	p := publishLegs(t, q, "first")
	if !p.Wallet.Compacted || p.Wallet.History != "2026-11-10" || p.Wallet.Recent != "2026-11-10" {
		t.Fatalf("first publication: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "first")
	if again := publishLegs(t, q, "again"); len(again.Wallet.Written) != 0 {
		t.Fatalf("nothing due, yet: %+v", again.Wallet)
	}

	for i, d := range later[:4] { // new days: the recent segments grow
		moveTransfers(t, dir, held, true, d)
		p := publishLegs(t, q, "new day "+d)
		if p.Wallet.Compacted || p.Wallet.History != "2026-11-10" || p.Wallet.Recent != []string{"2026-11-11", "2026-11-12", "2026-11-13", "2026-11-14"}[i] ||
			strings.Join(p.Wallet.Written, ",") != "chain=base/segment=recent,chain=bsc/segment=recent,chain=ethereum/segment=recent" {
			t.Fatalf("new day %s: %+v", d, p.Wallet)
		}
		checkWalletLegs(t, q, "new day "+d)
	}

	// A corrected day inside the history: that chain's history only.
	correctFile(t, transferFile(t, dir, "bsc", "2026-11-10"))
	p = publishLegs(t, q, "corrected history day")
	if p.Wallet.Compacted || strings.Join(p.Wallet.Written, ",") != "chain=bsc/segment=history" {
		t.Fatalf("corrected history day: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "corrected history day")

	// A day of the recent segment removed, then arriving late.
	f := transferFile(t, dir, "ethereum", "2026-11-12")
	if err := os.Rename(f, filepath.Join(held, "late.parquet")); err != nil {
		t.Fatal(err)
	}
	p = publishLegs(t, q, "removed recent day")
	if strings.Join(p.Wallet.Written, ",") != "chain=ethereum/segment=recent" {
		t.Fatalf("removed recent day: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "removed recent day")
	if err := os.Rename(filepath.Join(held, "late.parquet"), f); err != nil {
		t.Fatal(err)
	}
	p = publishLegs(t, q, "late recent day")
	if strings.Join(p.Wallet.Written, ",") != "chain=ethereum/segment=recent" {
		t.Fatalf("late recent day: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "late recent day")

	// New days until the recent segments would span more than walletRecentDays: the
	// publication that gets there compacts (history to the newest complete day).
	compacted := ""
	for _, d := range later[4:] {
		moveTransfers(t, dir, held, true, d)
		p := publishLegs(t, q, "new day "+d)
		if p.Wallet.Compacted {
			compacted = d
			if p.Wallet.History != p.Wallet.Recent {
				t.Fatalf("compaction at %s: %+v", d, p.Wallet)
			}
		}
		checkWalletLegs(t, q, "new day "+d)
	}
	if compacted != "2026-11-19" { // recent to 2026-11-18, 8 days after the history's 2026-11-10
		t.Fatalf("compacted at %q", compacted)
	}
	// One more day after the compaction: recent segments again.
	correctFile(t, transferFile(t, dir, "base", "2026-11-15"))
	p = publishLegs(t, q, "after compaction")
	if p.Wallet.Compacted || strings.Join(p.Wallet.Written, ",") != "chain=base/segment=history" {
		t.Fatalf("after compaction: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "after compaction")
	// A lake with a single day left: no segments, every leg from the per-date files.
	moveTransfers(t, dir, held, false, append([]string{"2026-11-10", "2026-11-11"}, later[:len(later)-1]...)...)
	p = publishLegs(t, q, "one day")
	if h, r := q.WalletLegsSplit(); h != perDate || r != perDate || p.Wallet.History != "" {
		t.Fatalf("one day left: split %s %s, %+v", h, r, p.Wallet)
	}
	if files, _ := lake.OnchainWalletLegs.Files(dir); len(files) != 0 {
		t.Fatalf("one day left: %d segment files", len(files))
	}
}

// TestWalletEdgesStayWhenTheirDayLands: the edges and bands are those of the clock's
// date. Published at its midnight, before its legs land, they hold the legs up to two
// days before it and the boards of that hour read them; the day's landing (the split
// moves to the day before) republishes neither, and a summary through them still
// answers as the SQL before; a corrected file they read republishes them.
func TestWalletEdgesStayWhenTheirDayLands(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	held := t.TempDir()
	day := testlake.Now().UTC().Truncate(24 * time.Hour)
	var clock atomic.Int64
	clock.Store(day.UnixMicro())
	q, err := query.Open(ctx, dir, query.Options{Now: func() time.Time { return time.UnixMicro(clock.Load()).UTC() }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	date := func(k int) string { return day.AddDate(0, 0, k).Format(time.DateOnly) }
	sidecar := func() string {
		b, err := os.ReadFile(filepath.Join(dir, "onchain", "wallet_edges", "_edges.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	moveTransfers(t, dir, held, false, date(0))
	p := publishLegs(t, q, "midnight")
	if p.Wallet.Recent != date(-2) || p.Wallet.Edges != date(0) {
		t.Fatalf("midnight, the day's legs not landed: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "midnight")
	args, err := q.OnchainHistoryArgs("ethereum", day)
	if err != nil || args[0] != date(-2) {
		t.Fatalf("the boards of midnight read the legs after %v (%v), not the bands through %s", args[0], err, date(-2))
	}
	published := sidecar()

	moveTransfers(t, dir, held, true, date(0))
	clock.Store(day.Add(13 * time.Hour).UnixMicro())
	p = publishLegs(t, q, "the day landed")
	if p.Wallet.Recent != date(-1) || p.Wallet.Edges != "" || sidecar() != published {
		t.Fatalf("the day landed: %+v, edges sidecar %s (was %s)", p.Wallet, sidecar(), published)
	}
	checkWalletLegs(t, q, "the day landed")
	if args, err := q.OnchainHistoryArgs("ethereum", day.Add(13*time.Hour)); err != nil || args[0] != date(-2) {
		t.Fatalf("the boards of 13:00 read the legs after %v (%v)", args[0], err)
	}

	// A file the version read, corrected: a new version.
	correctFile(t, transferFile(t, dir, "bsc", date(-3)))
	p = publishLegs(t, q, "corrected")
	if p.Wallet.Edges != date(0) || sidecar() == published {
		t.Fatalf("a corrected file the edges read: %+v", p.Wallet)
	}
	checkWalletLegs(t, q, "corrected")
}

// TestOnchainWalletTransactionsNearDayFirstSamePages: paging a wallet's transactions
// (which asks the newest day first) gives, page after page, exactly the transfers and
// order of one page holding the whole window (which reads the whole window), for busy
// and quiet wallets, filters, and a past clock.
func TestOnchainWalletTransactionsNearDayFirstSamePages(t *testing.T) {
	q := openStore(t, testlake.Copy(t))
	ctx := context.Background()
	var wallets []string
	rows, err := q.DB().QueryContext(ctx, `SELECT wallet FROM (SELECT wallet, count(*) n FROM onchain_transfers, LATERAL (SELECT unnest([from_address, to_address]) AS wallet)
		WHERE chain = 'ethereum' GROUP BY 1) ORDER BY n DESC, wallet LIMIT 3`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		rows.Scan(&w) //nolint:errcheck
		wallets = append(wallets, w)
	}
	rows.Close()
	wallets = append(wallets, "0x0000000000000000000000000000000000000001")
	pages := 0
	for _, at := range []*query.Queries{q, q.At(testlake.Now().Add(-50 * time.Hour))} {
		for _, w := range wallets {
			for _, f := range []query.OnchainWalletTransactionsParams{
				{Chain: "ethereum", Address: w, Days: 30, Limit: 7},
				{Chain: "ethereum", Address: w, Days: 7, Limit: 40, MinUSD: 5},
			} {
				all := f
				all.Limit = 1 << 20
				want, next, err := at.OnchainWalletTransactions(ctx, all)
				if err != nil || next != nil {
					t.Fatal(err, next)
				}
				var got []query.WalletTransaction
				for {
					items, next, err := at.OnchainWalletTransactions(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					got = append(got, items...)
					if next == nil {
						break
					}
					f.After = next
				}
				if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Fatalf("%s %+v: pages give %d transfers, one page %d", w, f, len(got), len(want))
				}
			}
		}
	}
	if pages < 50 {
		t.Fatalf("only %d pages: the wallets are too quiet to test paging", pages)
	}
}
