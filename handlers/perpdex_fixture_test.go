package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// A hand-built perpetuals lake for the edge cases the rules name: a flip, a partial
// close, an open trade at the window's end, liquidations on both label bases, a
// wallet with a send, a builder whose only fills predate the window, and positions
// laid out around the three match bands.

func pdW(i int) string { return fmt.Sprintf("0x%040x", 0xd000+i) }

type pdFixture struct {
	rows map[*lake.Table]map[string][][]any // table -> date partition ("" unpartitioned) -> rows
	tid  int64
}

func newPdFixture() *pdFixture { return &pdFixture{rows: map[*lake.Table]map[string][][]any{}} }

func (f *pdFixture) add(t *lake.Table, at time.Time, vals ...any) {
	m := f.rows[t]
	if m == nil {
		m = map[string][][]any{}
		f.rows[t] = m
	}
	part := ""
	if len(t.Partitions) > 0 {
		part = at.Format("2006-01-02")
	}
	m[part] = append(m[part], vals)
}

// fill appends one user fill; builder "" means no builder code.
func (f *pdFixture) fill(at time.Time, wallet, coin, side string, px, sz, start, closedPnl, fee float64, builder string, liq bool) {
	f.tid++
	dir := map[bool]string{true: "Open Long", false: "Open Short"}[side == "B"]
	var b, bf, liqMark any
	if builder != "" {
		b, bf = builder, fee/2
	}
	if liq {
		liqMark = px * 1.001
	}
	f.add(lake.PerpdexFills, at, at, wallet, coin, "", side, px, sz, dir, start, closedPnl, fee, "USDC", b, bf, nil,
		true, fmt.Sprintf("0x%064x", f.tid), f.tid, f.tid, liq, liqMark)
}

func (f *pdFixture) write(t *testing.T) string {
	dir := t.TempDir()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for tbl, parts := range f.rows {
		for part, rows := range parts {
			var pv []string
			if part != "" {
				pv = []string{part}
			}
			if _, err := w.Write(context.Background(), tbl, pv, func(app lake.AppendFunc) error {
				for _, r := range rows {
					if err := app(r...); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := lake.WriteFileAtomic(filepath.Join(dir, lake.MarkerFile), []byte(`{"kind":"fixture"}`)); err != nil {
		t.Fatal(err)
	}
	return dir
}

var pdNow = testlake.Now() // 2026-11-20T12:00:00Z

// pdFixtureLake builds the edge-case lake. Fill history starts on 2026-11-15.
func pdFixtureLake(t *testing.T) (*query.Queries, http.Handler) {
	f := newPdFixture()
	h := func(d time.Duration) time.Time { return pdNow.Add(-d) }
	a, b, c := pdW(1), pdW(2), pdW(3)
	builderX, builderY := pdW(100), pdW(101)
	// Wallet A, BTC: open 2, partial close 1, flip to short 2, close flat, then a
	// trade still open at the window's end.
	f.fill(h(50*time.Hour), a, "BTC", "B", 100, 2, 0, 0, 0.2, builderY, false)
	f.fill(h(40*time.Hour), a, "BTC", "A", 110, 1, 2, 10, 0.1, builderY, false)
	f.fill(h(30*time.Hour), a, "BTC", "A", 120, 3, 1, 20, 0.3, builderY, false)
	f.fill(h(20*time.Hour), a, "BTC", "B", 115, 2, -2, 10, 0.2, builderY, false)
	f.fill(h(10*time.Minute), a, "BTC", "B", 100, 1, 0, 0, 0.1, "", false)
	// Wallet B, ETH: a short liquidated in a published hour, a liquidation before
	// 2026-04-07 (current basis), and a send in the window.
	f.fill(h(5*time.Hour), b, "ETH", "A", 2000, 1, 0, 0, 1, "", false)
	f.fill(h(3*time.Hour+30*time.Minute), b, "ETH", "B", 2100, 1, -1, -100, 1, "", true)
	old := time.Date(2026, 3, 30, 10, 15, 0, 0, time.UTC)
	f.fill(old, b, "SOL", "B", 100, 10, 0, 0, 0.5, "", false)
	f.fill(old.Add(time.Hour), b, "SOL", "A", 80, 10, 10, -200, 0.5, "", true)
	// Wallet C: unlabelled anywhere, liquidated long; builder X's only fills, on the
	// first day of the recorded history.
	f.fill(time.Date(2026, 11, 15, 1, 0, 0, 0, time.UTC), c, "SOL", "B", 100, 5, 0, 0, 0.2, builderX, false)
	f.fill(time.Date(2026, 11, 15, 2, 0, 0, 0, time.UTC), c, "SOL", "A", 90, 5, 5, -50, 0.2, builderX, true)

	// Ledger: B sends to A inside the window; A deposits.
	f.add(lake.PerpdexLedger, h(6*time.Hour), h(6*time.Hour), b, "send_out", 50.0, a, "0x01")
	f.add(lake.PerpdexLedger, h(6*time.Hour), h(6*time.Hour), a, "send_in", 50.0, b, "0x01")
	f.add(lake.PerpdexLedger, h(60*time.Hour), h(60*time.Hour), a, "deposit", 1000.0, nil, "0x02")

	// Accounts: hourly equity of A and B over the last three days.
	for i := 72; i >= 0; i-- {
		at := h(time.Duration(i) * time.Hour)
		f.add(lake.PerpdexAccounts, at, at, a, 1000.0+float64(i%5)*10, 0.0, 0.0)
		f.add(lake.PerpdexAccounts, at, at, b, 5000.0-float64(72-i), 0.0, 0.0)
	}
	// Cohorts are mdq's own (derived on first use): B put 1,000 in before its first
	// fill, so at 08:00 (account 4,932, net flow in 950) and today (4,928) it made
	// about 3.98x: fish, 3x_smart. A's labels are computed likewise; C has no account
	// snapshot and is in neither table.
	f.add(lake.PerpdexLedger, old.Add(-time.Hour), old.Add(-time.Hour), b, "deposit", 1000.0, nil, "0x03")

	// Positions around the match bands (ETH, entry 2000, leverage 10): newest batch 11:55.
	newest := pdNow.Add(-5 * time.Minute)
	pos := func(at time.Time, w string, szi, entry, lev float64) {
		f.add(lake.PerpdexPositions, at, at, w, "ETH", szi, entry, 2001.0, lev, entry*0.9, (2001-entry)*szi, 2001*abs(szi))
	}
	pos(newest, pdW(11), 1, 2000.5, 10)                    // tight
	pos(newest, pdW(12), 2, 1999.2, 10.4)                  // tight
	pos(newest, pdW(13), 1, 2000, 11)                      // leverage off by 1.0
	pos(newest, pdW(14), 1, 2008, 10)                      // medium (0.4%)
	pos(newest, pdW(15), -1, 2000, 10)                     // wrong side
	pos(newest.Add(-20*time.Minute), pdW(16), 1, 2000, 10) // stale: 20 minutes before the newest batch
	pos(newest.Add(-10*time.Minute), pdW(17), 1, 2000.9, 9.6)
	pos(newest, pdW(11), 0.5, 2000.5, 10) // another coin row would differ; same wallet twice is not possible per batch
	// HYPE: spot-only, staked-only and both; one mark.
	f.add(lake.PerpdexHypeBalances, pdNow, pdW(21), "spot", 100.0, pdNow)
	f.add(lake.PerpdexHypeBalances, pdNow, pdW(22), "staked", 300.0, pdNow)
	f.add(lake.PerpdexHypeBalances, pdNow, pdW(23), "spot", 50.0, pdNow)
	f.add(lake.PerpdexHypeBalances, pdNow, pdW(23), "staked", 100.0, pdNow)
	f.add(lake.PerpdexMarks, h(time.Hour), h(time.Hour), "HYPE", 20.0)
	f.add(lake.PerpdexMarks, h(2*time.Hour), h(2*time.Hour), "HYPE", 19.0)
	// Venue stats: 48 hourly rows.
	for i := 0; i < 48; i++ {
		at := h(time.Duration(i) * time.Hour)
		f.add(lake.PerpdexVenueStats, at, at, 1e6+float64(i), int64(10), int64(4), int64(2), int64(2), 100.0, 50.0, 50.0, int64(i%4))
	}
	q := openQueries(t, f.write(t))
	return q, (&handlers.API{Q: q}).Handler()
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestPerpdexFixtureTrades: a partial close, a flip and an open trade at the window's
// end, reconstructed exactly.
func TestPerpdexFixtureTrades(t *testing.T) {
	_, h := pdFixtureLake(t)
	var page query.WalletTradesPage
	pdGetJSON(t, h, "/v1/perpdex/wallets/"+pdW(1)+"/trades", &page)
	if len(page.Trades) != 3 {
		t.Fatalf("%d trades: %+v", len(page.Trades), page.Trades)
	}
	open, short, long := page.Trades[0], page.Trades[1], page.Trades[2]
	t.Run("open trade at the window end is_complete false, exit null", func(t *testing.T) {
		if open.IsComplete || open.ExitPrice != nil || open.Direction != "long" || *open.EntryPrice != 100 || open.FillCount != 1 {
			t.Fatalf("%+v", open)
		}
	})
	t.Run("flip closes one trade and opens the next", func(t *testing.T) {
		if short.Direction != "short" || !short.IsComplete || *short.EntryPrice != 120 || *short.ExitPrice != 115 ||
			short.MaxSizeToken != 2 || short.RealizedPnl != 10 || short.TotalFee != 0.4 || short.FillCount != 2 ||
			short.OpenTS != long.CloseTS {
			t.Fatalf("%+v", short)
		}
	})
	t.Run("partial close PnL is included and exit is the VWAP of reductions", func(t *testing.T) {
		if long.Direction != "long" || !long.IsComplete || *long.EntryPrice != 100 || *long.ExitPrice != 115 ||
			long.MaxSizeToken != 2 || long.RealizedPnl != 30 || long.TotalFee != 0.4 || long.FillCount != 3 ||
			long.DurationSeconds != 20*3600 || long.VolumeUsd != 430 {
			t.Fatalf("%+v", long)
		}
	})
	t.Run("timestamps carry microseconds", func(t *testing.T) {
		if len(long.OpenTS) != len("2026-11-18T10:00:00.000000Z") {
			t.Fatalf("%s", long.OpenTS)
		}
	})
	t.Run("summary counts the open trade and includes partial-close PnL", func(t *testing.T) {
		var s query.TradesSummary
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+pdW(1)+"/trades/summary", &s)
		o := s.Overall
		if s.Window != "all" || o.TradeCount != 3 || o.OpenTradeCount != 1 || o.ClosedTradeCount != 2 || o.Wins != 2 ||
			o.NetPnl != 40-0.9 || o.FillCount != 6 || len(s.ByCoin) != 1 || s.ByCoin[0].Asset != "BTC" {
			t.Fatalf("%+v", s)
		}
		var d1 query.TradesSummary
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+pdW(1)+"/trades/summary?window=1d", &d1)
		// 1d: the short (closed 20h ago) and the open trade; the long closed 30h ago.
		if d1.Overall.TradeCount != 2 {
			t.Fatalf("1d: %+v", d1.Overall)
		}
	})
}

// TestPerpdexFixtureLiquidations: basis point_in_time for a published hour, current
// before 2026-04-07, null labels for a wallet in neither source.
func TestPerpdexFixtureLiquidations(t *testing.T) {
	_, h := pdFixtureLake(t)
	var page query.LiquidationsPage
	pdGetJSON(t, h, "/v1/perpdex/liquidations", &page)
	if len(page.Liquidations) != 3 {
		t.Fatalf("%+v", page.Liquidations)
	}
	eth, solC, solB := page.Liquidations[0], page.Liquidations[1], page.Liquidations[2]
	t.Run("published hour carries the label as it stood then (point_in_time)", func(t *testing.T) {
		if eth.Wallet != pdW(2) || eth.Side != "short" || *eth.PnlCohortBasis != "point_in_time" || *eth.PnlCohort != "3x_smart" || *eth.SizeCohort != "fish" {
			t.Fatalf("%+v", eth)
		}
	})
	t.Run("rows before 2026-04-07 carry today's label (current)", func(t *testing.T) {
		if solB.Side != "long" || *solB.PnlCohortBasis != "current" || *solB.PnlCohort != "3x_smart" || !page.LabelComputed.Lookahead {
			t.Fatalf("%+v", solB)
		}
	})
	t.Run("wallet in neither source has null cohorts", func(t *testing.T) {
		if solC.Wallet != pdW(3) || solC.SizeCohort != nil || solC.PnlCohort != nil {
			t.Fatalf("%+v", solC)
		}
	})
	t.Run("liq_ts is ISO-8601 UTC with offset", func(t *testing.T) {
		if eth.LiqTS[len(eth.LiqTS)-6:] != "+00:00" {
			t.Fatal(eth.LiqTS)
		}
	})
}

// TestPerpdexFixtureFlowAdjusted: a send in the window sets flow_unbalanced without
// moving the rank or filtering the row.
func TestPerpdexFixtureFlowAdjusted(t *testing.T) {
	_, h := pdFixtureLake(t)
	var page query.FlowAdjustedPage
	pdGetJSON(t, h, "/v1/perpdex/leaderboard/flow-adjusted?window=7d", &page)
	if page.RankedBy == "" || len(page.Traders) != 3 || page.TotalCount != 3 {
		t.Fatalf("%+v", page)
	}
	got := map[string]query.FlowAdjustedRow{}
	for i, r := range page.Traders {
		got[r.Wallet] = r
		if r.Rank != i+1 || i > 0 && page.Traders[i-1].TotalRealizedPnl < r.TotalRealizedPnl {
			t.Fatalf("ranked on realized PnL: %+v", page.Traders)
		}
	}
	a, b := got[pdW(1)], got[pdW(2)]
	if !a.FlowUnbalanced || !b.FlowUnbalanced {
		t.Fatalf("a send in the window makes flow_unbalanced true: %+v %+v", a.FlowUnbalanced, b.FlowUnbalanced)
	}
	if a.Flow.DepositUsd != 1000 || a.Flow.NetExternalFlowUsd != 1000 || a.Flow.NetTotalFlowUsd != 1050 || b.Flow.NetTotalFlowUsd != -50 {
		t.Fatalf("flow %+v %+v", a.Flow, b.Flow)
	}
	if a.Attributed.RealizedTradingPnl != 40 || a.TotalRealizedPnl != 40-0.9 || b.Attributed.RealizedTradingPnl != -100 {
		t.Fatalf("attributed %+v %+v", a.Attributed, b.Attributed)
	}
	var none query.FlowAdjustedPage
	pdGetJSON(t, h, "/v1/perpdex/leaderboard/flow-adjusted?window=1d", &none)
	for _, r := range none.Traders {
		if r.Wallet == pdW(2) && !r.FlowUnbalanced {
			t.Fatal("send 6h ago is inside 1d")
		}
	}
}

// TestPerpdexFixtureBuilderBeforeWindow: a builder with no fills in a window that the
// history does not reach answers zeros with active_days 0 and its lifetime figures;
// market_share_window_start is the overlap of window and history.
func TestPerpdexFixtureBuilderBeforeWindow(t *testing.T) {
	_, h := pdFixtureLake(t)
	var d query.BuilderDetail
	pdGetJSON(t, h, "/v1/perpdex/builders/"+pdW(100)+"?window=1d", &d)
	if d.Totals.Fills != 0 || d.Totals.ActiveDays != 0 || d.Totals.FeeUsd != 0 || d.Lifetime.Fills != 2 || d.Totals.BiggestDay != nil ||
		len(d.UserVolumeDistribution) != 10 || d.Window.Start == nil {
		t.Fatalf("%+v", d)
	}
	var d30 query.BuilderDetail
	pdGetJSON(t, h, "/v1/perpdex/builders/"+pdW(100)+"?window=30d", &d30)
	// History starts with B's SOL fills on 2026-03-30 (before the window), so the
	// overlap starts at the window start.
	if *d30.Totals.MarketShareWindowStart != query.ISOMicros(pdNow.Add(-30*24*time.Hour)) || d30.Totals.Fills != 2 || d30.Totals.ActiveDays != 1 {
		t.Fatalf("%+v", d30.Totals)
	}
	code, body := get(t, h, "/v1/perpdex/builders/"+pdW(999))
	if code != 404 {
		t.Fatalf("unknown builder: %d %s", code, body)
	}
	var st query.BuildersStats
	pdGetJSON(t, h, "/v1/perpdex/builders/stats?window=30d", &st)
	if len(st.Daily) != 31 || st.Totals.Builders != 2 || *st.Lifetime.FirstSeen != query.ISOMicros(time.Date(2026, 11, 15, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("stats: %d buckets, %+v %+v", len(st.Daily), st.Totals, st.Lifetime)
	}
}

// TestPerpdexFixturePositionsMatch: bands in order, leverage within 0.5, the 15-minute
// rule, ranking by closeness to the mark and the clamped limit.
func TestPerpdexFixturePositionsMatch(t *testing.T) {
	_, h := pdFixtureLake(t)
	match := func(qs string) query.MatchPage {
		var m query.MatchPage
		pdGetJSON(t, h, "/v1/perpdex/positions/match?coin=ETH&side=long&leverage=10&"+qs, &m)
		return m
	}
	addrs := func(m query.MatchPage) []string {
		var out []string
		for _, r := range m.Matches {
			out = append(out, r.Address)
		}
		return out
	}
	eq := func(a []string, b ...string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
	t.Run("tight band first, leverage within 0.5, stale and wrong side excluded, ranked by closeness to entry when no mark", func(t *testing.T) {
		m := match("entry_price=2000")
		if *m.ToleranceUsed != "tight" || !eq(addrs(m), pdW(11), pdW(12), pdW(17)) || m.MatchCount != 3 || m.Query.MarkPriceHint != 2000 {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("mark_price ranks the matches", func(t *testing.T) {
		m := match("entry_price=2000&mark_price=2001")
		if !eq(addrs(m), pdW(17), pdW(11), pdW(12)) || m.Query.MarkPriceHint != 2001 {
			t.Fatalf("%v", addrs(m))
		}
	})
	t.Run("medium band when tight is empty", func(t *testing.T) {
		m := match("entry_price=2012")
		if *m.ToleranceUsed != "medium" || !eq(addrs(m), pdW(14)) {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("wide band when medium is empty", func(t *testing.T) {
		m := match("entry_price=2025")
		if *m.ToleranceUsed != "wide" || !eq(addrs(m), pdW(14)) {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("no match: empty list and null tolerance", func(t *testing.T) {
		m := match("entry_price=5000")
		if m.ToleranceUsed != nil || len(m.Matches) != 0 {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("limit clamped into 1 to 50, never rejected", func(t *testing.T) {
		for _, l := range []string{"0", "-3", "1"} {
			if m := match("entry_price=2000&limit=" + l); len(m.Matches) != 1 {
				t.Fatalf("limit=%s: %d", l, len(m.Matches))
			}
		}
		for _, l := range []string{"500", "100000"} {
			if m := match("entry_price=2000&limit=" + l); len(m.Matches) != 3 {
				t.Fatalf("limit=%s: %d", l, len(m.Matches))
			}
		}
	})
	t.Run("required parameters and positive numbers", func(t *testing.T) {
		for _, target := range []string{"/v1/perpdex/positions/match?side=long&leverage=10&entry_price=1",
			"/v1/perpdex/positions/match?coin=ETH&side=up&leverage=10&entry_price=1",
			"/v1/perpdex/positions/match?coin=ETH&side=long&leverage=abc&entry_price=1",
			"/v1/perpdex/positions/match?coin=ETH&side=long&leverage=10&entry_price=-1"} {
			if code, body := get(t, h, target); code != 400 || body[0] != '{' {
				t.Fatalf("%s: %d %s", target, code, body)
			}
		}
	})
}

// TestPerpdexFixtureHolders: the union of spot and staked, one price for every row,
// rank in the requested direction.
func TestPerpdexFixtureHolders(t *testing.T) {
	_, h := pdFixtureLake(t)
	var d, a query.HoldersPage
	pdGetJSON(t, h, "/v1/perpdex/hype/holders", &d)
	pdGetJSON(t, h, "/v1/perpdex/hype/holders?order=asc", &a)
	if len(d.Holders) != 3 || *d.HypePriceUsd != 20 || d.LabelBasis != "current" {
		t.Fatalf("%+v", d)
	}
	want := []string{pdW(22), pdW(23), pdW(21)}
	for i, r := range d.Holders {
		if r.Wallet != want[i] || r.Rank != int64(i+1) || r.TotalAmountUsd != r.TotalAmount*20 || r.SpotAmountUsd != r.SpotAmount*20 {
			t.Fatalf("desc %d: %+v", i, r)
		}
		if ar := a.Holders[2-i]; ar.Wallet != r.Wallet || ar.Rank != int64(3-i) {
			t.Fatalf("asc rank counts in that direction: %+v", a.Holders)
		}
	}
	var p1, p2 query.HoldersPage
	pdGetJSON(t, h, "/v1/perpdex/hype/holders?limit=2", &p1)
	pdGetJSON(t, h, "/v1/perpdex/hype/holders?limit=2&cursor="+*p1.NextCursor, &p2)
	if len(p2.Holders) != 1 || p2.Holders[0].Rank != 3 || p2.NextCursor != nil {
		t.Fatalf("page 2 %+v", p2)
	}
	sort.Strings(want)
}
