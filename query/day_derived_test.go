package query_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/sqlrows"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// The per-day tables (predmkt_market_days, perpdex_liquidations) must change the cost of
// /v1/predmkt/markets and /v1/perpdex/liquidations, never their answers: these tests run
// the routes' SQL beside the whole-table scans they replaced (testdata/*_scan.sql, the
// SQL before the tables) and compare every row, field for field, at many clocks (day
// boundaries, the 24-hour window's edge, before any data), before any publication, after
// a full one and after each incremental step (a new day, a late day, a corrected file,
// a removed file), and compare the published tables with a rebuild from scratch.

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// allRows runs text and renders every row as one string, columns in order.
func allRows(t *testing.T, db query.DBTX, text string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), text, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	all, err := sqlrows.All(rows)
	if err != nil {
		t.Fatal(err)
	}
	return formatRows(all)
}

// formatRows writes each row as its values with their Go types, for comparisons.
func formatRows(all [][]any) []string {
	var out []string
	for _, vals := range all {
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString("|")
			}
			fmt.Fprintf(&b, "%T:%v", v, v)
		}
		out = append(out, b.String())
	}
	return out
}

// marketClocks are the clocks the market list is compared at: the lake's end, the
// edges of a day, of an hour and of the 24-hour window, clocks inside an hour, earlier
// days and a time before any trade.
func marketClocks() []time.Time {
	end := testlake.Now()
	day := time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, time.UTC)
	return []time.Time{end, day, day.Add(-time.Millisecond), day.Add(time.Millisecond), day.Add(-24 * time.Hour),
		end.Add(-24 * time.Hour), end.Add(-37*time.Hour - 13*time.Minute), end.Add(-5 * 24 * time.Hour), end.Add(48 * time.Hour),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		// Inside an hour, on its last and on its first millisecond (the per-hour table's
		// edges: the hours the clock and the window's start fall inside are read raw).
		end.Add(-5*time.Hour - 29*time.Minute - 31*time.Second - 7*time.Millisecond), end.Add(-3*time.Hour - time.Millisecond),
		end.Add(-30 * time.Hour), end.Add(-26*time.Hour + 41*time.Minute)}
}

// checkMarkets compares markets.sql (with the store's date plan) with the scan at every
// clock, for every sort, the first market alone and a filtered page after a key.
func checkMarkets(t *testing.T, q *query.Queries, step string) {
	t.Helper()
	src := marketSources(t, q)
	for _, at := range marketClocks() {
		_, plan, tokPlan, desc, err := q.MarketDaysPlanForTest(at.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		src.check(t, q, step+" (plan "+desc+")", at, sqlfiles.MustRead("predmkt/markets.sql"), plan,
			sqlfiles.MustRead("predmkt/market_tokens.sql"), tokPlan)
	}
}

// marketSources is what checkMarkets compares with: the scans, a market and every one.
type marketSourcesT struct {
	scan, tokScan, some, ids string
}

func marketSources(t *testing.T, q *query.Queries) marketSourcesT {
	t.Helper()
	s := marketSourcesT{scan: readTestdata(t, "markets_scan.sql"), tokScan: readTestdata(t, "market_tokens_scan.sql")}
	if err := q.DB().QueryRowContext(context.Background(), "SELECT min(condition_id) FROM predmkt_trades").Scan(&s.some); err != nil {
		t.Fatal(err)
	}
	if err := q.DB().QueryRowContext(context.Background(), "SELECT string_agg(condition_id, ',') FROM predmkt_markets").Scan(&s.ids); err != nil {
		t.Fatal(err)
	}
	return s
}

// check compares the market list's SQL cur (with its arguments from $12 on) and its
// tokens' tokCur (from $3 on) with the scans at one clock.
func (s marketSourcesT) check(t *testing.T, q *query.Queries, step string, at time.Time, cur string, plan []any, tokCur string, tokPlan []any) {
	t.Helper()
	now := at.UnixMilli()
	want := allRows(t, q.DB(), s.tokScan, s.ids, now)
	got := allRows(t, q.DB(), tokCur, append([]any{s.ids, now}, tokPlan...)...)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: market tokens at %s: %d rows, want %d; first difference %s",
			step, at.Format(time.RFC3339Nano), len(got), len(want), firstDiff(got, want))
	}
	for _, c := range []struct {
		cat, status, sort, cid string
		k                      int64
	}{
		{"", "", "volume", "", math.MinInt64}, {"", "", "volume_24h", "", math.MinInt64}, {"", "", "trades", "", math.MinInt64},
		{"", "", "created", "", math.MinInt64}, {"", "", "end", "", math.MinInt64}, {"", "", "volume", s.some, math.MinInt64},
		{"Crypto", "open", "volume_24h", "", -1}, {"", "resolved", "trades", "", -3},
	} {
		args := []any{now, c.cat, c.status, "", "", "", c.sort, c.cid, c.k, "", 1_000_000}
		want := allRows(t, q.DB(), s.scan, args...)
		got := allRows(t, q.DB(), cur, append(args, plan...)...)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: markets at %s %+v: %d rows, want %d; first difference %s",
				step, at.Format(time.RFC3339Nano), c, len(got), len(want), firstDiff(got, want))
		}
	}
}

// checkLiquidations compares liquidations.sql (with the store's date plan) with the
// scan: every filter, and the whole history paged 7 rows at a time by keyset, at the
// end of the lake and at past clocks (end and labels of that clock).
func checkLiquidations(t *testing.T, q *query.Queries, step string) {
	t.Helper()
	scan := readTestdata(t, "liquidations_scan.sql")
	var coin, wallet string
	if err := q.DB().QueryRowContext(context.Background(), "SELECT coin, wallet FROM perpdex_fills WHERE liquidation ORDER BY time DESC, tid LIMIT 1").Scan(&coin, &wallet); err != nil {
		t.Fatal(err)
	}
	days, raw, desc, err := q.LiquidationDaysPlanForTest()
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(0, 0).UTC()
	pits := 0
	defer func() {
		if pits == 0 {
			t.Errorf("%s: no liquidation carried a point-in-time label: the hourly join went unchecked", step)
		}
	}()
	for _, at := range []time.Time{testlake.Now(), testlake.Now().Add(-30 * time.Hour), testlake.Now().Add(-6 * 24 * time.Hour)} {
		lab, until, err := q.PerpdexLabelsArgs(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			coin, wallet, dir any
			start             time.Time
		}{
			{nil, nil, nil, epoch}, {coin, nil, nil, epoch}, {nil, wallet, nil, epoch}, {nil, nil, "long", epoch}, {nil, nil, "short", epoch},
			{nil, nil, nil, at.Add(-50 * time.Hour)},
		} {
			var aT, aTid, aW any
			for page := 0; ; page++ {
				args := []any{c.coin, c.wallet, c.start, at, c.dir, aT, aTid, aW, 7, lab, until}
				want := allRows(t, q.DB(), scan, args...)
				page, err := q.LiquidationPageForTest(context.Background(), args, days, raw)
				if err != nil {
					t.Fatal(err)
				}
				got := formatRows(page)
				if !slices.Equal(got, want) {
					t.Fatalf("%s: liquidations at %s %+v page %d (%s): %d rows, want %d; first difference %s",
						step, at.Format(time.RFC3339), c, page, desc, len(got), len(want), firstDiff(got, want))
				}
				for _, r := range want {
					if f := strings.Split(r, "|"); f[10] == "bool:true" {
						pits++
					}
				}
				if len(want) < 7 {
					break
				}
				var k struct {
					t   time.Time
					tid int64
					w   string
				}
				if err := q.DB().QueryRowContext(context.Background(), "SELECT time, tid, wallet FROM ("+strings.TrimRight(strings.TrimSpace(scan), ";")+") x(time, wallet, coin, side, sz, usd, mark, tid, hs, hp, pit, cs, cp) ORDER BY time, tid, wallet LIMIT 1",
					args...).Scan(&k.t, &k.tid, &k.w); err != nil {
					t.Fatal(err)
				}
				aT, aTid, aW = k.t, k.tid, k.w
			}
		}
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("row %d:\n got  %s\n want %s", i, g, w)
		}
	}
	return "none"
}

// dayTablesContent digests every published partition of both tables and their sidecars.
func dayTablesContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	for _, tb := range []*lake.Table{lake.PredmktMarketDays, lake.PredmktMarketTotals, lake.PredmktMarketHours, lake.PredmktMarketFills, lake.PerpdexLiquidations} {
		files, err := tb.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			var n int64
			var h string
			if err := db.QueryRow("SELECT count(*), CAST(coalesce(sum(hash(r)::HUGEINT), 0) AS VARCHAR) FROM read_parquet("+lake.QuoteString(f)+") r").Scan(&n, &h); err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, f)
			out[filepath.ToSlash(rel)] = fmt.Sprintf("%d:%s", n, h)
		}
		b, err := os.ReadFile(filepath.Join(dir, tb.Prefix, "_sources.json"))
		if err != nil {
			t.Fatal(err)
		}
		out[tb.Prefix+"/_sources.json"] = string(b)
	}
	return out
}

func publishDays(t *testing.T, q *query.Queries) map[string][]string {
	t.Helper()
	pubs, err := q.PublishDayTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range pubs {
		out[p.Table] = append(append([]string{}, p.Written...), prefixAll("-", p.Removed)...)
	}
	return out
}

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = p + s[i]
	}
	return out
}

// rewriteFile replaces a partition file with the rows of sel over it (a corrected
// export), through a temporary file and a rename.
func rewriteFile(t *testing.T, file, sel string) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tmp := file + ".fix"
	q := strings.ReplaceAll(sel, "SRC", "read_parquet("+lake.QuoteString(file)+", hive_partitioning = false)")
	if _, err := db.Exec("COPY (" + q + ") TO " + lake.QuoteString(tmp) + " (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

func TestDayTablesMatchScan(t *testing.T) {
	dir := testlake.Copy(t)
	q := openStore(t, dir)
	check := func(step string) {
		t.Helper()
		checkMarkets(t, q, step)
		checkLiquidations(t, q, step)
		// Once published, the market list at the lake's end reads the totals through the
		// day before the two its clock and window cut.
		if !strings.Contains(step, "not yet") && !strings.HasPrefix(step, "nothing") {
			totals, _, _, desc, err := q.MarketDaysPlanForTest(testlake.Now().UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			if want := testlake.Now().AddDate(0, 0, -2).Format("2006-01-02"); totals != want {
				t.Fatalf("%s: the market list at the end reads totals of %q, want %q", step, totals, want)
			}
			// And no raw fill at all: the day the window cuts comes from its hours (the
			// lake ends on the hour, so no hour is cut).
			if raw, err := q.MarketPlanReadsRawForTest(testlake.Now().UnixMilli()); err != nil || raw {
				t.Fatalf("%s: the market list at the end reads raw fills (plan %s, %v)", step, desc, err)
			}
			// Inside an hour, the hours the clock and the window's start fall inside come
			// from predmkt_market_fills, not from the raw trades.
			inside := testlake.Now().Add(-29*time.Minute - 31*time.Second).UnixMilli()
			_, _, _, desc, err = q.MarketDaysPlanForTest(inside)
			if err != nil {
				t.Fatal(err)
			}
			if raw, err := q.MarketPlanReadsRawForTest(inside); err != nil || raw || !strings.Contains(desc, "hourFills:"+testlake.Now().AddDate(0, 0, -1).Format("2006-01-02")) {
				t.Fatalf("%s: the market list inside an hour reads raw fills or no fills (plan %s, %v)", step, desc, err)
			}
		}
	}
	partFile := func(tb *lake.Table, date string) string {
		rel, err := tb.Path(date)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, filepath.FromSlash(rel))
	}
	end := testlake.Now()
	today, yesterday, older := end.Format("2006-01-02"), end.AddDate(0, 0, -1).Format("2006-01-02"), end.AddDate(0, 0, -4).Format("2006-01-02")
	// Hold back today (a new day still to come) and an older day (a late day).
	aside := t.TempDir()
	move := func(tb *lake.Table, date, from, to string) {
		t.Helper()
		rel, _ := tb.Path(date)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(from, rel), filepath.Join(to, rel)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range []*lake.Table{lake.PredmktTrades, lake.PerpdexFills} {
		move(tb, today, dir, aside)
		move(tb, older, dir, aside)
	}
	// A store lists the source partitions at most once a second on the request path
	// (query/day_files_cache.go): after a change to the source files, each check waits
	// that second out, so it sees the lake as a request a moment later would.
	changed := func() { time.Sleep(query.DayFilesFresh + 50*time.Millisecond) }

	check("nothing published (every date raw)")
	w := publishDays(t, q)
	if len(w["predmkt_market_days"]) < 5 || len(w["predmkt_market_hours"]) < 5 || len(w["predmkt_market_fills"]) < 5 || len(w["perpdex_liquidations"]) < 5 {
		t.Fatalf("first publication wrote %v", w)
	}
	check("first publication")
	if w := publishDays(t, q); len(w["predmkt_market_days"])+len(w["predmkt_market_hours"])+len(w["predmkt_market_fills"])+len(w["perpdex_liquidations"]) != 0 {
		t.Fatalf("a second publication with nothing new wrote %v", w)
	}

	// The new day and the late day land: served raw before the publication, from the
	// tables after it, which recomputes those two dates only.
	for _, tb := range []*lake.Table{lake.PredmktTrades, lake.PerpdexFills} {
		move(tb, today, aside, dir)
		move(tb, older, aside, dir)
	}
	changed()
	check("new and late day, not yet published")
	w = publishDays(t, q)
	for _, name := range []string{"predmkt_market_days", "predmkt_market_hours", "predmkt_market_fills", "perpdex_liquidations"} {
		if got := w[name]; !slices.Equal(got, []string{older, today}) {
			t.Fatalf("new and late day: %s wrote %v, want [%s %s]", name, got, older, today)
		}
	}
	check("new and late day published")

	// A corrected file: rows dropped, amounts changed, liquidation flags moved.
	rewriteFile(t, partFile(lake.PredmktTrades, yesterday), "SELECT * REPLACE (usd * 1.5 + 0.0000004 AS usd) FROM SRC WHERE hash(trade_id) % 3 <> 0")
	rewriteFile(t, partFile(lake.PerpdexFills, yesterday), "SELECT * REPLACE (liquidation OR hash(tid) % 50 = 0 AS liquidation, sz * 2 AS sz) FROM SRC WHERE hash(tid) % 4 <> 0")
	changed()
	check("corrected day, not yet published")
	w = publishDays(t, q)
	for _, name := range []string{"predmkt_market_days", "predmkt_market_hours", "predmkt_market_fills", "perpdex_liquidations"} {
		if got := w[name]; !slices.Equal(got, []string{yesterday}) {
			t.Fatalf("corrected day: %s wrote %v, want [%s]", name, got, yesterday)
		}
	}
	if got, want := w["predmkt_market_totals"], []string{yesterday, today}; !slices.Equal(got, want) {
		t.Fatalf("corrected day: totals wrote %v, want %v (the corrected day and every later one)", got, want)
	}
	check("corrected day published")

	// A removed file: its date leaves both tables.
	for _, tb := range []*lake.Table{lake.PredmktTrades, lake.PerpdexFills} {
		if err := os.Remove(partFile(tb, older)); err != nil {
			t.Fatal(err)
		}
	}
	changed()
	check("removed day, not yet published")
	w = publishDays(t, q)
	for _, name := range []string{"predmkt_market_days", "predmkt_market_hours", "predmkt_market_fills", "perpdex_liquidations"} {
		if got := w[name]; !slices.Equal(got, []string{"-" + older}) {
			t.Fatalf("removed day: %s did %v, want [-%s]", name, got, older)
		}
	}
	check("removed day published")

	// The tables after these steps equal a publication from scratch.
	inc := dayTablesContent(t, dir)
	for _, tb := range []*lake.Table{lake.PredmktMarketDays, lake.PredmktMarketTotals, lake.PredmktMarketHours, lake.PredmktMarketFills, lake.PerpdexLiquidations} {
		if err := os.RemoveAll(filepath.Join(dir, tb.Prefix)); err != nil {
			t.Fatal(err)
		}
	}
	publishDays(t, q)
	full := dayTablesContent(t, dir)
	for k, v := range full {
		if strings.HasSuffix(k, "_sources.json") {
			continue // same sources, same signatures; compared as a key set below
		}
		if inc[k] != v {
			t.Errorf("%s: incremental %s, full rebuild %s", k, inc[k], v)
		}
	}
	if len(inc) != len(full) {
		t.Errorf("incremental publication has %d files, a full rebuild %d", len(inc), len(full))
	}
	check("full rebuild")
}

// TestDayTablesRoutesSameBytes: the two routes' bodies through the store API, at the
// lake's end and at a past clock (as_of), are the same before any publication (every
// date raw, as before the tables) and after one.
func TestDayTablesRoutesSameBytes(t *testing.T) {
	dir := testlake.Copy(t)
	q := openStore(t, dir)
	bodies := func() []string {
		var out []string
		for _, at := range []time.Time{testlake.Now(), testlake.Now().Add(-29*time.Hour - 17*time.Minute)} {
			v := q.At(at)
			for _, sort := range query.PredmktMarketSorts {
				p, err := v.PredmktMarkets(context.Background(), query.PredmktMarketsParams{Sort: sort, Limit: 200})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(p)
				out = append(out, string(b))
				if len(p.Markets) > 0 {
					d, err := v.PredmktMarket(context.Background(), p.Markets[0].ConditionID)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := json.Marshal(d)
					out = append(out, string(b))
				}
			}
			// Every page of 7, then of 3 after a start: the route reads the newest published
			// days first and must give the page every day gives.
			for _, lp := range []query.PerpdexLiquidationsParams{
				{Start: time.Unix(0, 0).UTC(), End: at, Limit: 5000},
				{Start: time.Unix(0, 0).UTC(), End: at, Limit: 7},
				{Start: at.Add(-75 * time.Hour), End: at.Add(-2 * time.Hour), Limit: 3},
				{Start: time.Unix(0, 0).UTC(), End: at, Limit: 2, Direction: "long"},
			} {
				for {
					l, err := v.PerpdexLiquidations(context.Background(), lp)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := json.Marshal(l)
					out = append(out, string(b))
					if l.Next == nil {
						break
					}
					lp.After = l.Next
				}
			}
		}
		return out
	}
	before := bodies()
	publishDays(t, q)
	after := bodies()
	if !slices.Equal(before, after) {
		t.Fatalf("bodies changed with the tables published: %s", firstDiff(after, before))
	}
}
