package query

import (
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// boardBefore is the board of hour computed by the board query before the per-day
// sums (testdata/predmkt_board_before.sql: every fill read raw), the oracle.
func boardBefore(t *testing.T, q *Queries, hour time.Time) *Board {
	t.Helper()
	b, err := os.ReadFile("testdata/predmkt_board_before.sql")
	if err != nil {
		t.Fatal(err)
	}
	bd, err := q.scanBoard(context.Background(), hour, string(b), hour.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return bd
}

// predmktBoardClocks are the board hours checked: the lake's end, the midnight before
// it and the hour after, mid-day hours of earlier days (with fills after the clock in
// the lake) and an hour before most of the history.
func predmktBoardClocks() []time.Time {
	end := testlake.Now().Truncate(time.Hour)
	mid := end.Truncate(24 * time.Hour)
	return []time.Time{end, mid, mid.Add(time.Hour), mid.Add(-11 * time.Hour), end.AddDate(0, 0, -3).Add(3 * time.Hour),
		end.AddDate(0, 0, -7), end.AddDate(0, 0, -8).Add(-5 * time.Hour)}
}

// checkBoardSameAsRaw: the board computed from the per-day sums and the cut days' raw
// fills equals the board of every fill read raw, row for row and figure for figure,
// at each clock; wantRaw bounds the trades dates read raw at the lake's end.
func checkBoardSameAsRaw(t *testing.T, q *Queries, step string, wantRawAtEnd int) {
	t.Helper()
	for _, at := range predmktBoardClocks() {
		got, err := q.computeBoard(context.Background(), at)
		if err != nil {
			t.Fatalf("%s at %s: %v", step, at, err)
		}
		want := boardBefore(t, q, at)
		if len(got.Cats["all"]) == 0 && at.Equal(testlake.Now()) {
			t.Fatalf("%s at %s: empty board", step, at)
		}
		if !reflect.DeepEqual(got.Cats, want.Cats) {
			for cat, es := range want.Cats {
				if !reflect.DeepEqual(got.Cats[cat], es) {
					for i := range es {
						if i >= len(got.Cats[cat]) || !reflect.DeepEqual(got.Cats[cat][i], es[i]) {
							var g any = "missing"
							if i < len(got.Cats[cat]) {
								g = got.Cats[cat][i]
							}
							t.Fatalf("%s at %s, %s row %d: per-day %+v, raw %+v", step, at, cat, i, g, es[i])
						}
					}
					t.Fatalf("%s at %s, %s: %d rows, raw %d", step, at, cat, len(got.Cats[cat]), len(es))
				}
			}
			t.Fatalf("%s at %s: boards differ", step, at)
		}
	}
	_, raw, err := q.predmktBoardPlan(testlake.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if tf, _ := q.emptyFile(lake.PredmktTrades); raw != tf {
		n = 1
		for _, c := range raw {
			if c == rune(fileSep[0]) {
				n++
			}
		}
	}
	if wantRawAtEnd >= 0 && n > wantRawAtEnd {
		t.Fatalf("%s: the board at the lake's end reads %d trades dates raw, want at most %d", step, n, wantRawAtEnd)
	}
}

// TestPredmktBoardDaysSameAsRaw: the prediction-market board summed from
// predmkt_wallet_days equals the board over every raw fill at several clocks (the lake's
// end, just after midnight, mid-day with later fills in the lake), before any
// publication (all raw), after it, with a new day and a late day landed but not yet
// published and after their incremental publication, and after a corrected day.
func TestPredmktBoardDaysSameAsRaw(t *testing.T) {
	dir := testlake.Copy(t)
	q, err := Open(context.Background(), dir, Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	publish := func() {
		t.Helper()
		if _, err := q.PublishDayTables(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	end := testlake.Now()
	today, older := end.Format("2006-01-02"), end.AddDate(0, 0, -4).Format("2006-01-02")
	aside := t.TempDir()
	move := func(date, from, to string) {
		t.Helper()
		rel, _ := lake.PredmktTrades.Path(date)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(from, rel), filepath.Join(to, rel)); err != nil {
			t.Fatal(err)
		}
	}
	move(today, dir, aside)
	move(older, dir, aside)
	checkBoardSameAsRaw(t, q, "nothing published", -1)
	publish()
	// At the end, with today put aside: yesterday ends the lake; the 24-hour window's
	// start cuts yesterday, the 7- and 30-day windows' their own days.
	checkBoardSameAsRaw(t, q, "published", 3)
	move(today, aside, dir)
	move(older, aside, dir)
	checkBoardSameAsRaw(t, q, "new and late day, not yet published", -1)
	publish()
	checkBoardSameAsRaw(t, q, "new and late day published", 3)

	correctTradesDay(t, q, end.AddDate(0, 0, -1).Format("2006-01-02"))
	checkBoardSameAsRaw(t, q, "corrected day, not yet published", -1)
	publish()
	checkBoardSameAsRaw(t, q, "corrected day published", 3)
}

// correctTradesDay replaces the predmkt_trades file of date with a corrected one:
// amounts changed, a third of the fills dropped.
func correctTradesDay(t *testing.T, q *Queries, date string) {
	t.Helper()
	rel, _ := lake.PredmktTrades.Path(date)
	file := filepath.Join(q.dir, filepath.FromSlash(rel))
	if _, err := q.db.Exec("COPY (SELECT * REPLACE (usd * 1.5 + 0.0000004 AS usd, size * 0.7 AS size) FROM read_parquet(" +
		lake.QuoteString(file) + ", hive_partitioning = false) WHERE hash(trade_id) % 3 <> 0) TO " + lake.QuoteString(file+".fix") + " (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".fix", file); err != nil {
		t.Fatal(err)
	}
}

// compareEntries (the oracle of TestPredmktBoardOrderSameAsPairwise, the
// comparison the board sorted with before sort values) orders two entries by key: negative when a ranks first. Entries hold
// rounded figures, so values that print equal tie, and ties go to the address.
func compareEntries(a, c *BoardEntry, w int, key string) int {
	desc := func(x, y float64) int { return cmp.Compare(y, x) }
	switch key {
	case "realized_pnl_asc":
		return cmp.Compare(a.PnL, c.PnL)
	case "realized_pnl_window", "realized_pnl_window_asc":
		x, _, _ := a.window(w)
		y, _, _ := c.window(w)
		if key == "realized_pnl_window_asc" {
			return cmp.Compare(x, y)
		}
		return desc(x, y)
	case "hit_rate":
		switch {
		case a.HitRate == nil && c.HitRate == nil:
			return 0
		case a.HitRate == nil:
			return 1
		case c.HitRate == nil:
			return -1
		}
		return desc(*a.HitRate, *c.HitRate)
	case "resolved":
		return cmp.Compare(c.Resolved, a.Resolved)
	case "volume_24h":
		_, x, _ := a.window(w)
		_, y, _ := c.window(w)
		return desc(x, y)
	case "trades_24h":
		_, _, x := a.window(w)
		_, _, y := c.window(w)
		return cmp.Compare(y, x)
	case "volume_all":
		return desc(a.Volume, c.Volume)
	case "trades_all":
		return cmp.Compare(c.Trades, a.Trades)
	case "markets":
		return cmp.Compare(c.Markets, a.Markets)
	case "last_seen":
		return cmp.Compare(c.LastTS, a.LastTS)
	default: // realized_pnl
		return desc(a.PnL, c.PnL)
	}
}

// TestPredmktBoardOrderSameAsPairwise: every (category, window, sort) order of the board
// sorted by per-entry sort values equals the pairwise comparison of the entries with
// ties broken by address, on the tiny lake's board plus entries made to tie (equal
// figures, zero and negative zero, no hit rate).
func TestPredmktBoardOrderSameAsPairwise(t *testing.T) {
	q, err := Open(context.Background(), testlake.Copy(t), Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	b, err := q.computeBoard(context.Background(), testlake.Now())
	if err != nil {
		t.Fatal(err)
	}
	es := b.Cats["all"]
	if len(es) < 10 {
		t.Fatalf("%d entries", len(es))
	}
	negZero := math.Copysign(0, -1)
	extra := []BoardEntry{
		{Wallet: "0x0000000000000000000000000000000000000001", PnL: negZero, Volume: negZero},
		{Wallet: "0x0000000000000000000000000000000000000002"},
		{Wallet: "0xffffffffffffffffffffffffffffffffffffffff", PnL: es[0].PnL, Volume: es[0].Volume, Trades: es[0].Trades,
			HitRate: es[0].HitRate, Resolved: es[0].Resolved, LastTS: es[0].LastTS, Markets: es[0].Markets,
			PnLWin: es[0].PnLWin, VolumeWin: es[0].VolumeWin, TradesWin: es[0].TradesWin},
	}
	all := append(append([]BoardEntry{}, es...), extra...)
	old := b
	b = newBoard(old.Hour) // a fresh board: no order cached before the extra entries
	for cat, es := range old.Cats {
		b.Cats[cat] = es
	}
	b.Cats["all"] = all
	b.finish()
	for cat, es := range b.Cats {
		for _, key := range LeaderboardSorts {
			for w := -1; w < len(boardWindows); w++ {
				want := make([]int32, len(es))
				for i := range want {
					want[i] = int32(i)
				}
				slices.SortFunc(want, func(x, y int32) int {
					if c := compareEntries(&es[x], &es[y], w, key); c != 0 {
						return c
					}
					return cmp.Compare(es[x].Wallet, es[y].Wallet)
				})
				if got := b.order(cat, w, key); !slices.Equal(got, want) {
					t.Fatalf("%s, window %d, sort %s: order differs from the pairwise comparison", cat, w, key)
				}
			}
		}
	}
}

// TestPredmktBoardReadBackSameAsComputed: the board read back from its published file
// equals the board computed (every category's entries, figure for figure, and every
// order), and setCategories gives each category its rows in read order whether the
// rows of a category come together or not.
func TestPredmktBoardReadBackSameAsComputed(t *testing.T) {
	q, err := Open(context.Background(), testlake.Copy(t), Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	ctx := AsBuild(context.Background())
	computed, err := q.RebuildPredmktBoard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := q.loadBoard(ctx, computed.Hour)
	if err != nil || loaded == nil {
		t.Fatalf("read back: %v %v", loaded, err)
	}
	if !reflect.DeepEqual(loaded.Cats, computed.Cats) {
		t.Fatal("the board read back differs from the board computed")
	}
	for cat := range computed.Cats {
		for _, key := range LeaderboardSorts {
			for w := -1; w < len(boardWindows); w++ {
				if !slices.Equal(loaded.order(cat, w, key), computed.order(cat, w, key)) {
					t.Fatalf("%s, window %d, sort %s: orders differ", cat, w, key)
				}
			}
		}
	}

	e := func(w string) BoardEntry { return BoardEntry{Wallet: w} }
	for _, tc := range []struct {
		name string
		cats []string
		want map[string][]string
	}{
		{"together", []string{"a", "a", "b", "c", "c"}, map[string][]string{"a": {"1", "2"}, "b": {"3"}, "c": {"4", "5"}}},
		{"interleaved", []string{"a", "b", "a", "c", "b"}, map[string][]string{"a": {"1", "3"}, "b": {"2", "5"}, "c": {"4"}}},
	} {
		flat := make([]BoardEntry, len(tc.cats))
		for i := range flat {
			flat[i] = e(string(rune('1' + i)))
		}
		b := &Board{Cats: map[string][]BoardEntry{}}
		b.setCategories(tc.cats, flat)
		if len(b.Cats) != len(tc.want) {
			t.Fatalf("%s: categories %v", tc.name, b.Cats)
		}
		for c, ws := range tc.want {
			var got []string
			for _, x := range b.Cats[c] {
				got = append(got, x.Wallet)
			}
			if !slices.Equal(got, ws) {
				t.Fatalf("%s: %s holds %v, want %v", tc.name, c, got, ws)
			}
		}
	}
}

// TestPredmktBoardPassesTileTheWallets: board.sql's passes leave no wallet out and
// take none twice: the first range is open below, the last open above, and each
// starts where the one before ends (the board equals the raw oracle in
// checkBoardSameAsRaw, every pass's rows together).
func TestPredmktBoardPassesTileTheWallets(t *testing.T) {
	ps := predmktBoardPasses
	if len(ps) == 0 || ps[0][0] != "" || ps[len(ps)-1][1] != "" {
		t.Fatalf("passes %q: the first must start at '' and the last end at ''", ps)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i][0] != ps[i-1][1] || ps[i][0] == "" || (ps[i][1] != "" && ps[i][1] <= ps[i][0]) {
			t.Fatalf("passes %q: range %d does not start where %d ends", ps, i, i-1)
		}
	}
}
