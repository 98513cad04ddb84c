package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// SPEC §4.3, §7 and §8 rules of the perpetuals routes, on the tiny demo lake.

func pdStatus(t *testing.T, h http.Handler, target string, code int, contains string) {
	t.Helper()
	c, body := get(t, h, target)
	if c != code || !strings.Contains(string(body), contains) {
		t.Fatalf("%s: %d %s (want %d containing %q)", target, c, body, code, contains)
	}
	if code == 400 {
		var e map[string]string
		if json.Unmarshal(body, &e) != nil || e["error"] == "" {
			t.Fatalf("%s: 400 body is not {\"error\": ...}: %s", target, body)
		}
	}
}

// pdPages follows nextCursor from base (which must end in a query string) and returns
// the concatenated rows decoded by rowsOf.
func pdPages[P any](t *testing.T, h http.Handler, base string, rowsOf func(P) (int, *string)) int {
	t.Helper()
	total, cursor, pages := 0, "", 0
	for {
		target := base
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		var p P
		pdGetJSON(t, h, target, &p)
		n, next := rowsOf(p)
		total += n
		pages++
		if next == nil {
			return total
		}
		if n == 0 || pages > 10000 {
			t.Fatalf("%s: cursor loop", base)
		}
		cursor = *next
	}
}

func TestPerpdexLiquidationsRules(t *testing.T) {
	q, h := pdTiny(t)
	var all query.LiquidationsPage
	pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000", &all)
	var n int
	q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM perpdex_fills WHERE liquidation").Scan(&n) //nolint:errcheck
	if n == 0 || len(all.Liquidations) != n {
		t.Fatalf("%d rows, lake has %d liquidation fills", len(all.Liquidations), n)
	}
	t.Run("newest first", func(t *testing.T) {
		for i := 1; i < len(all.Liquidations); i++ {
			if all.Liquidations[i].LiqTS > all.Liquidations[i-1].LiqTS {
				t.Fatalf("row %d newer than %d", i, i-1)
			}
		}
	})
	t.Run("default limit 100", func(t *testing.T) {
		var p query.LiquidationsPage
		pdGetJSON(t, h, "/v1/perpdex/liquidations", &p)
		if len(p.Liquidations) != min(100, n) {
			t.Fatalf("%d", len(p.Liquidations))
		}
	})
	t.Run("limit above 5000 is served at 5000, zero is 400", func(t *testing.T) {
		var p query.LiquidationsPage
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=9000", &p)
		if len(p.Liquidations) != min(5000, n) {
			t.Fatal(len(p.Liquidations))
		}
		pdStatus(t, h, "/v1/perpdex/liquidations?limit=0", 400, "limit")
	})
	t.Run("cursor pages give the whole list, in order, labels and all", func(t *testing.T) {
		pdLiquidationPagesEqual(t, h, all.Liquidations)
	})
	t.Run("cursor resent with different filters is a 400 that says so", func(t *testing.T) {
		var p query.LiquidationsPage
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/liquidations?limit=2&direction=long&cursor="+*p.NextCursor, 400, "different filter")
		pdStatus(t, h, "/v1/perpdex/liquidations?cursor=garbage", 400, "cursor")
	})
	t.Run("direction, coin, wallet and time filters", func(t *testing.T) {
		first := all.Liquidations[len(all.Liquidations)/2]
		var p query.LiquidationsPage
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000&direction=long&coin="+url.QueryEscape(first.Asset), &p)
		for _, r := range p.Liquidations {
			if r.Side != "long" || r.Asset != first.Asset {
				t.Fatalf("%+v", r)
			}
		}
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000&wallet=0x"+strings.ToUpper(first.Wallet[2:]), &p)
		if len(p.Liquidations) == 0 {
			t.Fatal("upper-case wallet filter found nothing")
		}
		for _, r := range p.Liquidations {
			if r.Wallet != first.Wallet {
				t.Fatalf("%+v", r)
			}
		}
		start := "2026-11-18T00:00:00Z"
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000&start="+start+"&end=2026-11-19", &p)
		for _, r := range p.Liquidations {
			if r.LiqTS < "2026-11-18" || r.LiqTS > "2026-11-19T00:00:00.000000+00:00" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("bad input is 400 with error", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/liquidations?direction=up", 400, "direction")
		pdStatus(t, h, "/v1/perpdex/liquidations?wallet=0x12", 400, "wallet")
		pdStatus(t, h, "/v1/perpdex/liquidations?start=yesterday", 400, "start")
		pdStatus(t, h, "/v1/perpdex/liquidations?limit=ten", 400, "limit")
	})
	t.Run("label basis: point_in_time from the hour's label, else current, else null", func(t *testing.T) {
		pit, cur := 0, 0
		for _, r := range all.Liquidations {
			ts, _ := time.Parse("2006-01-02T15:04:05.000000-07:00", r.LiqTS)
			var hs, hp, cs, cp *string
			q.DB().QueryRowContext(context.Background(), "SELECT size_cohort, pnl_cohort FROM perpdex_cohorts_hourly WHERE wallet = $1 AND hour_ts = $2",
				r.Wallet, ts.Truncate(time.Hour)).Scan(&hs, &hp) //nolint:errcheck
			q.DB().QueryRowContext(context.Background(), "SELECT size_cohort, pnl_cohort FROM perpdex_cohorts_current WHERE wallet = $1",
				r.Wallet).Scan(&cs, &cp) //nolint:errcheck
			switch {
			case hp != nil:
				pit++
				if *r.PnlCohortBasis != "point_in_time" || *r.PnlCohort != *hp || *r.SizeCohort != *hs {
					t.Fatalf("%+v", r)
				}
			case cp != nil:
				cur++
				if *r.PnlCohortBasis != "current" || *r.PnlCohort != *cp {
					t.Fatalf("%+v", r)
				}
			default:
				if r.PnlCohort != nil || r.SizeCohort != nil {
					t.Fatalf("%+v", r)
				}
			}
			if ts.Before(query.PerpdexLabelStart) && r.PnlCohortBasis != nil && *r.PnlCohortBasis != "current" {
				t.Fatalf("before 2026-04-07 must be current: %+v", r)
			}
		}
		if pit == 0 || cur == 0 || !all.LabelComputed.Lookahead || all.LabelComputed.Grading == "" || all.LabelComputed.Caveat == "" {
			t.Fatalf("pit %d current %d label_computed %+v", pit, cur, all.LabelComputed)
		}
	})
}

// pdLiquidationPagesEqual: cursor pages of 7 and of 101 rows, concatenated, equal want
// (the whole list in one page) row for row, labels included.
func pdLiquidationPagesEqual(t *testing.T, h http.Handler, want []query.LiquidationRow) {
	t.Helper()
	for _, limit := range []int{7, 101} {
		var rows []query.LiquidationRow
		got := pdPages(t, h, fmt.Sprintf("/v1/perpdex/liquidations?limit=%d", limit), func(p query.LiquidationsPage) (int, *string) {
			rows = append(rows, p.Liquidations...)
			return len(p.Liquidations), p.NextCursor
		})
		if got != len(want) || !reflect.DeepEqual(rows, want) {
			t.Fatalf("limit %d: %d rows over pages, %d in the one page; equal: %v", limit, got, len(want), reflect.DeepEqual(rows, want))
		}
	}
}

// TestPerpdexLiquidationPagesFromPublishedDays: with perpdex_liquidations published,
// a page is read from the newest days that can hold it, then twice and four times as
// many rows' worth of days, then every day; every way gives the pages of the raw
// fills: the same rows, order and labels as the unpublished lake's single page.
func TestPerpdexLiquidationPagesFromPublishedDays(t *testing.T) {
	_, raw := pdTiny(t)
	var want query.LiquidationsPage
	pdGetJSON(t, raw, "/v1/perpdex/liquidations?limit=5000", &want)
	q := openQueries(t, testlake.Copy(t))
	if err := q.WarmDayTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := (&handlers.API{Q: q}).Handler()
	var all query.LiquidationsPage
	pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000", &all)
	if len(all.Liquidations) == 0 || !reflect.DeepEqual(all.Liquidations, want.Liquidations) {
		t.Fatalf("published: %d rows, raw %d; equal: %v", len(all.Liquidations), len(want.Liquidations), reflect.DeepEqual(all.Liquidations, want.Liquidations))
	}
	pdLiquidationPagesEqual(t, h, want.Liquidations)
}

func TestPerpdexLeaderboardRules(t *testing.T) {
	_, h := pdTiny(t)
	base := "/v1/perpdex/leaderboard?window=all&limit=500"
	t.Run("every sort key orders its column, nulls last, both orders", func(t *testing.T) {
		for _, key := range query.PerpdexSortKeyNames {
			for _, order := range []string{"desc", "asc"} {
				var p query.TraderPage
				pdGetJSON(t, h, base+"&sort="+key+"&order="+order, &p)
				get := query.PerpdexSortKeys[key]
				seenNull := false
				for i, r := range p.Traders {
					r := r
					v := get(&r)
					if r.Rank != i+1 {
						t.Fatalf("%s: rank %d at %d", key, r.Rank, i)
					}
					if v == nil {
						seenNull = true
						continue
					}
					if seenNull {
						t.Fatalf("%s %s: value after null at %d", key, order, i)
					}
					if i > 0 {
						prev := p.Traders[i-1]
						pv := get(&prev)
						if pv != nil && (order == "desc" && *v > *pv || order == "asc" && *v < *pv) {
							t.Fatalf("%s %s: out of order at %d: %v after %v", key, order, i, *v, *pv)
						}
					}
				}
			}
		}
	})
	t.Run("unknown sort is 400, never a default", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/leaderboard?sort=sharpe", 400, "sort")
		pdStatus(t, h, "/v1/perpdex/leaderboard?window=2d", 400, "window")
		pdStatus(t, h, "/v1/perpdex/leaderboard?order=up", 400, "order")
		pdStatus(t, h, "/v1/perpdex/leaderboard?axis=style", 400, "axis")
		pdStatus(t, h, "/v1/perpdex/leaderboard?min_trades=x", 400, "min_trades")
	})
	t.Run("limit default 25, max 500 served silently", func(t *testing.T) {
		var p, big query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/leaderboard?window=all", &p)
		pdGetJSON(t, h, "/v1/perpdex/leaderboard?window=all&limit=100000", &big)
		if len(p.Traders) != min(25, p.TotalCount) || len(big.Traders) != min(500, big.TotalCount) {
			t.Fatalf("%d %d of %d", len(p.Traders), len(big.Traders), p.TotalCount)
		}
	})
	t.Run("min_win_rate is a fraction 0 to 1", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/leaderboard?min_win_rate=60", 400, "min_win_rate")
		var p query.TraderPage
		pdGetJSON(t, h, base+"&min_win_rate=0.6", &p)
		if len(p.Traders) == 0 {
			t.Fatal("no wallet wins 60%")
		}
		for _, r := range p.Traders {
			if r.WinRate < 0.6 {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("min_trades and min_volume filter; totalCount is the filtered population", func(t *testing.T) {
		var all, p query.TraderPage
		pdGetJSON(t, h, base, &all)
		pdGetJSON(t, h, base+"&min_trades=20&min_volume=1000000", &p)
		want := 0
		for _, r := range all.Traders {
			if r.TradeCount >= 20 && r.TotalVolume >= 1e6 {
				want++
			}
		}
		if p.TotalCount != want || len(p.Traders) != want || want == 0 || want == all.TotalCount {
			t.Fatalf("%d rows, want %d of %d", p.TotalCount, want, all.TotalCount)
		}
	})
	t.Run("cohort on each axis, slug with underscores, both labels returned", func(t *testing.T) {
		var p query.TraderPage
		pdGetJSON(t, h, base+"&axis=pnl&cohort=3x_smart", &p)
		var p2 query.TraderPage
		pdGetJSON(t, h, base+"&axis=pnl&cohort=3x%20smart", &p2)
		if len(p.Traders) == 0 || len(p2.Traders) != len(p.Traders) {
			t.Fatalf("%d %d", len(p.Traders), len(p2.Traders))
		}
		for _, r := range p.Traders {
			if *r.PnlCohort != "3x_smart" || r.SizeCohort == nil {
				t.Fatalf("%+v", r)
			}
		}
		pdGetJSON(t, h, base+"&cohort=whale", &p)
		for _, r := range p.Traders {
			if *r.SizeCohort != "whale" || r.PnlCohort == nil {
				t.Fatalf("%+v", r)
			}
		}
		pdGetJSON(t, h, base+"&axis=pnl_abs&cohort=small_winner", &p)
		for _, r := range p.Traders {
			if r.CumRealizedPnl <= 0 || r.CumRealizedPnl >= 10000 {
				t.Fatalf("%+v", r)
			}
		}
		pdStatus(t, h, "/v1/perpdex/leaderboard?axis=size&cohort=3x_smart", 400, "cohort")
	})
	t.Run("cursor pages continue the rank and cover the board; other filters are refused", func(t *testing.T) {
		var all query.TraderPage
		pdGetJSON(t, h, base+"&sort=volume", &all)
		var seen []string
		cursor := ""
		for {
			var p query.TraderPage
			target := "/v1/perpdex/leaderboard?window=all&sort=volume&limit=7"
			if cursor != "" {
				target += "&cursor=" + cursor
			}
			pdGetJSON(t, h, target, &p)
			for _, r := range p.Traders {
				if r.Rank != len(seen)+1 || r.Wallet != all.Traders[len(seen)].Wallet {
					t.Fatalf("rank %d wallet %s at %d", r.Rank, r.Wallet, len(seen))
				}
				seen = append(seen, r.Wallet)
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if len(seen) != all.TotalCount {
			t.Fatalf("%d of %d", len(seen), all.TotalCount)
		}
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/leaderboard?window=all&limit=3", &p)
		pdStatus(t, h, "/v1/perpdex/leaderboard?window=7d&limit=3&cursor="+*p.NextCursor, 400, "different filter")
	})
	t.Run("pnl_pct is null under 1 USD of equity", func(t *testing.T) {
		var p query.TraderPage
		pdGetJSON(t, h, base, &p)
		for _, r := range p.Traders {
			if r.PnlPct != nil && r.Roi != 0 && !pdNear(*r.PnlPct, r.Roi*100, 1e-3) {
				t.Fatalf("%+v", r)
			}
		}
	})
}

func TestPerpdexFlowAdjustedRules(t *testing.T) {
	q, h := pdTiny(t)
	var p query.FlowAdjustedPage
	pdGetJSON(t, h, "/v1/perpdex/leaderboard/flow-adjusted?limit=500&window=30d", &p)
	if p.RankedBy == "" || len(p.Traders) == 0 {
		t.Fatalf("%+v", p)
	}
	unbalanced := 0
	for i, r := range p.Traders {
		if i > 0 && r.TotalRealizedPnl > p.Traders[i-1].TotalRealizedPnl {
			t.Fatalf("ranked on fills-derived realized PnL: %d", i)
		}
		var sends int
		q.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM perpdex_ledger WHERE wallet = $1 AND kind IN ('send_in','send_out')
			AND time >= $2 AND time < $3`, r.Wallet, testlake.Now().Add(-30*24*time.Hour), testlake.Now()).Scan(&sends) //nolint:errcheck
		if r.FlowUnbalanced != (sends > 0) {
			t.Fatalf("flow_unbalanced %v with %d sends: %s", r.FlowUnbalanced, sends, r.Wallet)
		}
		if r.FlowUnbalanced {
			unbalanced++
		}
	}
	if unbalanced == 0 {
		t.Error("tiny lake has no wallet with a send: flow_unbalanced untested on demo data")
	}
	t.Run("limit default 100 and cap 500", func(t *testing.T) {
		var d query.FlowAdjustedPage
		pdGetJSON(t, h, "/v1/perpdex/leaderboard/flow-adjusted?limit=99999&window=all", &d)
		if len(d.Traders) != min(500, d.TotalCount) {
			t.Fatal(len(d.Traders))
		}
		pdStatus(t, h, "/v1/perpdex/leaderboard/flow-adjusted?window=90d", 400, "window")
	})
	t.Run("cursor bound to the window", func(t *testing.T) {
		var a query.FlowAdjustedPage
		pdGetJSON(t, h, "/v1/perpdex/leaderboard/flow-adjusted?limit=5", &a)
		pdStatus(t, h, "/v1/perpdex/leaderboard/flow-adjusted?window=7d&cursor="+*a.NextCursor, 400, "different filter")
		got := pdPages(t, h, "/v1/perpdex/leaderboard/flow-adjusted?limit=9", func(p query.FlowAdjustedPage) (int, *string) { return len(p.Traders), p.NextCursor })
		if got != a.TotalCount {
			t.Fatalf("%d of %d", got, a.TotalCount)
		}
	})
}

func TestPerpdexStatsRules(t *testing.T) {
	q, h := pdTiny(t)
	var n int
	q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM perpdex_venue_stats").Scan(&n) //nolint:errcheck
	t.Run("hourly rows newest first, default limit 500", func(t *testing.T) {
		var p query.StatsPage
		pdGetJSON(t, h, "/v1/perpdex/stats", &p)
		if len(p.Metrics) != min(n, 500) || p.Metrics[0].TS != "2026-11-20T12:00:00Z" {
			t.Fatalf("%d rows of %d, first %s", len(p.Metrics), n, p.Metrics[0].TS)
		}
		for i := 1; i < len(p.Metrics); i++ {
			if p.Metrics[i].TS >= p.Metrics[i-1].TS {
				t.Fatal("not newest first")
			}
		}
	})
	t.Run("without a cursor start only narrows a window of limit hours back from end", func(t *testing.T) {
		var p query.StatsPage
		pdGetJSON(t, h, "/v1/perpdex/stats?start=2026-11-01&end=2026-11-20T10:00:00Z&limit=5", &p)
		if len(p.Metrics) != 5 || p.Metrics[0].TS != "2026-11-20T10:00:00Z" || p.Metrics[4].TS != "2026-11-20T06:00:00Z" || p.NextCursor == nil {
			t.Fatalf("%+v", p)
		}
		pdGetJSON(t, h, "/v1/perpdex/stats?start=2026-11-20T08:00:00Z&end=2026-11-20T10:00:00Z&limit=50", &p)
		if len(p.Metrics) != 3 || p.NextCursor != nil {
			t.Fatalf("%d rows", len(p.Metrics))
		}
	})
	t.Run("cursor continues down to start", func(t *testing.T) {
		got := pdPages(t, h, "/v1/perpdex/stats?start=2026-11-15&limit=24", func(p query.StatsPage) (int, *string) { return len(p.Metrics), p.NextCursor })
		if got != 5*24+12+1 {
			t.Fatalf("%d hourly rows from 2026-11-15 to now", got)
		}
	})
	t.Run("limit max 5000 and bad input", func(t *testing.T) {
		var p query.StatsPage
		pdGetJSON(t, h, "/v1/perpdex/stats?limit=9999", &p)
		if len(p.Metrics) != min(n, 5000) {
			t.Fatal(len(p.Metrics))
		}
		pdStatus(t, h, "/v1/perpdex/stats?end=tomorrow", 400, "end")
		pdStatus(t, h, "/v1/perpdex/stats?limit=-1", 400, "limit")
	})
}

func TestPerpdexWalletTradesRules(t *testing.T) {
	_, h := pdTiny(t)
	var lb query.TraderPage
	pdGetJSON(t, h, "/v1/perpdex/leaderboard?window=all&sort=trades&limit=1", &lb)
	w := lb.Traders[0].Wallet
	var all query.WalletTradesPage
	pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=5000", &all)
	t.Run("newest first by close time, default limit 100", func(t *testing.T) {
		var p query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/0x"+strings.ToUpper(w[2:])+"/trades", &p)
		if p.Wallet != w || len(p.Trades) != min(100, len(all.Trades)) {
			t.Fatalf("%d", len(p.Trades))
		}
		for i := 1; i < len(all.Trades); i++ {
			if all.Trades[i].CloseTS > all.Trades[i-1].CloseTS {
				t.Fatal("not newest first")
			}
		}
	})
	t.Run("start and end filter on close time", func(t *testing.T) {
		var p query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=5000&start=2026-11-15&end=2026-11-17", &p)
		want := 0
		for _, tr := range all.Trades {
			if tr.CloseTS >= "2026-11-15" && tr.CloseTS <= "2026-11-17T00:00:00.000000Z" {
				want++
			}
		}
		if len(p.Trades) != want || want == 0 {
			t.Fatalf("%d, want %d", len(p.Trades), want)
		}
	})
	t.Run("coin filter", func(t *testing.T) {
		var p query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=5000&coin=BTC", &p)
		for _, tr := range p.Trades {
			if tr.Asset != "BTC" {
				t.Fatal(tr.Asset)
			}
		}
	})
	t.Run("cursor pages and filter binding", func(t *testing.T) {
		got := pdPages(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=13", func(p query.WalletTradesPage) (int, *string) { return len(p.Trades), p.NextCursor })
		if got != len(all.Trades) {
			t.Fatalf("%d of %d", got, len(all.Trades))
		}
		var p query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=2&coin=ETH&cursor="+*p.NextCursor, 400, "different filter")
	})
	t.Run("malformed address is 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/wallets/0xabc/trades", 400, "address")
		pdStatus(t, h, "/v1/perpdex/wallets/0xabc/trades/summary", 400, "address")
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/trades/summary?window=2d", 400, "window")
	})
	t.Run("an unknown wallet has no trades", func(t *testing.T) {
		var p query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+pdW(9)+"/trades", &p)
		var s query.TradesSummary
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+pdW(9)+"/trades/summary", &s)
		if len(p.Trades) != 0 || p.NextCursor != nil || s.Overall.TradeCount != 0 || len(s.ByCoin) != 0 {
			t.Fatalf("%+v %+v", p, s)
		}
	})
}

func TestPerpdexBuildersRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("every sort key orders its column; unknown sort is 400", func(t *testing.T) {
		for _, s := range []string{"fee", "volume", "users", "fills"} {
			for _, o := range []string{"desc", "asc"} {
				var p query.BuildersPage
				pdGetJSON(t, h, "/v1/perpdex/builders?window=all&sort="+s+"&order="+o, &p)
				val := func(r query.BuilderRow) float64 {
					return map[string]float64{"fee": r.FeeUsd, "volume": r.VolumeUsd, "users": float64(r.Users), "fills": float64(r.Fills)}[s]
				}
				for i := 1; i < len(p.Builders); i++ {
					a, b := val(p.Builders[i-1]), val(p.Builders[i])
					if o == "desc" && b > a || o == "asc" && b < a || p.Builders[i].Rank != i+1 {
						t.Fatalf("%s %s at %d", s, o, i)
					}
				}
				if p.Sort != s || p.Order != o || len(p.Builders) == 0 {
					t.Fatalf("%+v", p)
				}
			}
		}
		pdStatus(t, h, "/v1/perpdex/builders?sort=revenue", 400, "sort")
	})
	t.Run("stats is never a builder lookup; one bucket per date, 31 for 30d", func(t *testing.T) {
		var s query.BuildersStats
		pdGetJSON(t, h, "/v1/perpdex/builders/stats", &s)
		if s.Window.Window != "30d" || len(s.Daily) != 31 || s.Totals.Builders == 0 || s.Lifetime.FirstSeen == nil {
			t.Fatalf("%d buckets %+v", len(s.Daily), s.Totals)
		}
		var sum float64
		for i, d := range s.Daily {
			sum += d.FeeUsd
			if i > 0 && d.Date <= s.Daily[i-1].Date {
				t.Fatal("dates not ascending")
			}
		}
		if !pdNear(sum, s.Totals.FeeUsd, 0.1) {
			t.Fatalf("daily fees %v, totals %v", sum, s.Totals.FeeUsd)
		}
		var s7 query.BuildersStats
		pdGetJSON(t, h, "/v1/perpdex/builders/stats?window=7d", &s7)
		if len(s7.Daily) != 8 {
			t.Fatal(len(s7.Daily))
		}
	})
	t.Run("market_share_pct audits as share_volume_usd over venue_volume_usd", func(t *testing.T) {
		var p query.BuildersPage
		pdGetJSON(t, h, "/v1/perpdex/builders?window=7d", &p)
		for _, b := range p.Builders {
			if !pdNear(b.MarketSharePct, b.ShareVolumeUsd/p.VenueVolumeUsd*100, 1e-4) || b.MarketSharePct > 100 {
				t.Fatalf("%+v", b)
			}
		}
	})
	t.Run("breakdown_limit default 100, max 1000; totals count the whole window", func(t *testing.T) {
		var p query.BuildersPage
		pdGetJSON(t, h, "/v1/perpdex/builders?window=all", &p)
		b := p.Builders[0].Builder
		var full, cut, capped query.BuilderDetail
		pdGetJSON(t, h, "/v1/perpdex/builders/"+b+"?window=all", &full)
		pdGetJSON(t, h, "/v1/perpdex/builders/"+b+"?window=all&breakdown_limit=2", &cut)
		pdGetJSON(t, h, "/v1/perpdex/builders/"+b+"?window=all&breakdown_limit=5000", &capped)
		if int64(len(full.ByAsset)) != full.Totals.Assets || len(cut.ByAsset) != 2 || cut.Totals.Assets != full.Totals.Assets ||
			cut.Totals.Dexes != full.Totals.Dexes || len(capped.ByAsset) != len(full.ByAsset) || full.Totals.Assets < 3 {
			t.Fatalf("full %d/%d cut %d/%d", len(full.ByAsset), full.Totals.Assets, len(cut.ByAsset), cut.Totals.Assets)
		}
		if len(full.UserVolumeDistribution) != 10 || full.Lifetime.FirstSeen == nil {
			t.Fatalf("%+v", full.UserVolumeDistribution)
		}
		pdStatus(t, h, "/v1/perpdex/builders/"+b+"?breakdown_limit=0", 400, "breakdown_limit")
		pdStatus(t, h, "/v1/perpdex/builders/0x12", 400, "builder")
		var u query.BuilderUsersPage
		pdGetJSON(t, h, "/v1/perpdex/builders/"+b+"/users?window=all&limit=1000", &u)
		if int64(u.TotalCount) != full.Totals.Users || len(u.Users) != u.TotalCount {
			t.Fatalf("users %d, totals %d", u.TotalCount, full.Totals.Users)
		}
		got := pdPages(t, h, "/v1/perpdex/builders/"+b+"/users?window=all&limit=2", func(p query.BuilderUsersPage) (int, *string) { return len(p.Users), p.NextCursor })
		if got != u.TotalCount {
			t.Fatal(got)
		}
	})
	t.Run("the three fee columns are distinct", func(t *testing.T) {
		var p query.BuildersPage
		pdGetJSON(t, h, "/v1/perpdex/builders?window=all", &p)
		for _, b := range p.Builders {
			if !pdNear(b.TraderFeeUsd, b.FeeUsd+b.FeeUsdNode+b.BuilderRoutedDeployerFeeUsd, 0.05) || b.FeeUsd >= b.TraderFeeUsd {
				t.Fatalf("%+v", b)
			}
		}
	})
}

func TestPerpdexHoldersRules(t *testing.T) {
	q, h := pdTiny(t)
	var n int
	q.DB().QueryRowContext(context.Background(), "SELECT count(DISTINCT wallet) FROM perpdex_hype_balances").Scan(&n) //nolint:errcheck
	var p query.HoldersPage
	pdGetJSON(t, h, "/v1/perpdex/hype/holders?limit=500", &p)
	t.Run("union of spot and staked", func(t *testing.T) {
		only := 0
		for _, r := range p.Holders {
			if (r.SpotAmount == 0) != (r.StakedAmount == 0) {
				only++
			}
			if !pdNear(r.TotalAmount, r.SpotAmount+r.StakedAmount, 1e-9) {
				t.Fatalf("%+v", r)
			}
		}
		if len(p.Holders) != n || only == 0 {
			t.Fatalf("%d rows of %d wallets, %d in one source only", len(p.Holders), n, only)
		}
	})
	t.Run("one price for every row", func(t *testing.T) {
		for _, r := range p.Holders {
			if !pdNear(r.TotalAmountUsd, r.TotalAmount**p.HypePriceUsd, 0.006) {
				t.Fatalf("%+v at %v", r, *p.HypePriceUsd)
			}
		}
	})
	t.Run("rank counts in the requested direction", func(t *testing.T) {
		var a query.HoldersPage
		pdGetJSON(t, h, "/v1/perpdex/hype/holders?limit=500&order=asc", &a)
		for i := range a.Holders {
			if a.Holders[i].Rank != int64(i+1) || a.Holders[i].Wallet != p.Holders[len(p.Holders)-1-i].Wallet && a.Holders[i].TotalAmount != p.Holders[len(p.Holders)-1-i].TotalAmount {
				t.Fatalf("asc %d: %+v", i, a.Holders[i])
			}
		}
		got := pdPages(t, h, "/v1/perpdex/hype/holders?limit=9", func(p query.HoldersPage) (int, *string) { return len(p.Holders), p.NextCursor })
		if got != n {
			t.Fatal(got)
		}
		var c query.HoldersPage
		pdGetJSON(t, h, "/v1/perpdex/hype/holders?limit=2", &c)
		pdStatus(t, h, "/v1/perpdex/hype/holders?order=asc&cursor="+*c.NextCursor, 400, "different filter")
	})
}

var _ = fmt.Sprint

// TestPerpdexDesignedRoutes: /markets, /wallets/{address}/fills and /ledger against the
// raw tables.
func TestPerpdexDesignedRoutes(t *testing.T) {
	q, h := pdTiny(t)
	t.Run("markets: one row per coin, volume each trade once over 24h", func(t *testing.T) {
		var m query.MarketsPage
		pdGetJSON(t, h, "/v1/perpdex/markets", &m)
		var coins int
		q.DB().QueryRowContext(context.Background(), "SELECT count(DISTINCT coin) FROM perpdex_marks").Scan(&coins) //nolint:errcheck
		if len(m.Markets) != coins || coins == 0 {
			t.Fatalf("%d markets of %d coins", len(m.Markets), coins)
		}
		fills := pdReadFills(t, q)
		for _, r := range m.Markets {
			var vol float64
			for _, f := range fills {
				if f.coin == r.Coin && f.side == "B" && f.time.After(testlake.Now().Add(-24*time.Hour)) && !f.time.After(testlake.Now()) {
					vol += f.px * f.sz
				}
			}
			if !pdNear(r.Volume24hUsd, vol, 0.011) || r.MarkPrice <= 0 {
				t.Fatalf("%+v, oracle volume %v", r, vol)
			}
		}
	})
	var lb query.TraderPage
	pdGetJSON(t, h, "/v1/perpdex/leaderboard?window=all&sort=trades&limit=1", &lb)
	w := lb.Traders[0].Wallet
	t.Run("wallet fills newest first, every fill once over pages", func(t *testing.T) {
		var n int
		q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM perpdex_fills WHERE wallet = $1", w).Scan(&n) //nolint:errcheck
		got := pdPages(t, h, "/v1/perpdex/wallets/"+w+"/fills?limit=500", func(p query.WalletFillsPage) (int, *string) { return len(p.Fills), p.NextCursor })
		if got != n {
			t.Fatalf("%d of %d", got, n)
		}
		var p query.WalletFillsPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/fills?limit=50", &p)
		for i := 1; i < len(p.Fills); i++ {
			if p.Fills[i].Time > p.Fills[i-1].Time {
				t.Fatal("not newest first")
			}
		}
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/fills?coin=ETH&cursor="+*p.NextCursor, 400, "different filter")
	})
	t.Run("wallet ledger holds deposits, withdrawals and sends", func(t *testing.T) {
		var lw string
		q.DB().QueryRowContext(context.Background(), "SELECT wallet FROM perpdex_ledger GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&lw) //nolint:errcheck
		var n int
		q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM perpdex_ledger WHERE wallet = $1", lw).Scan(&n) //nolint:errcheck
		got := pdPages(t, h, "/v1/perpdex/wallets/"+lw+"/ledger?limit=1", func(p query.WalletLedgerPage) (int, *string) { return len(p.Events), p.NextCursor })
		if got != n || n == 0 {
			t.Fatalf("%d of %d", got, n)
		}
	})
}
