package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// pdFill is one raw row of perpdex_fills, read with a plain SELECT.
type pdFill struct {
	wallet, coin, side, feeToken, dex string
	time                              time.Time
	tid                               int64
	px, sz, start, closedPnl, fee     float64
	builder                           sql.NullString
	builderFee, deployerFee           sql.NullFloat64
	crossed, liquidation              bool
}

func pdReadFills(t testing.TB, q *query.Queries) []pdFill {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(), `SELECT wallet, coin, side, fee_token, coalesce(dex, ''), time, tid, px, sz,
		start_position, closed_pnl, fee, builder, builder_fee, deployer_fee, crossed, liquidation FROM perpdex_fills`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pdFill
	for rows.Next() {
		var f pdFill
		if err := rows.Scan(&f.wallet, &f.coin, &f.side, &f.feeToken, &f.dex, &f.time, &f.tid, &f.px, &f.sz, &f.start,
			&f.closedPnl, &f.fee, &f.builder, &f.builderFee, &f.deployerFee, &f.crossed, &f.liquidation); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// pdTrade is the oracle's reconstructed trade.
type pdTrade struct {
	wallet, asset, dir                 string
	open, close                        time.Time
	openSz, openNtl, closeSz, closeNtl float64
	maxTok, maxUsd, vol, pnl, fee      float64
	fills                              int64
	complete                           bool
}

func (tr *pdTrade) leg(f *pdFill, sz float64, opening bool, before, after, pnl float64) {
	if tr.fills == 0 {
		tr.open = f.time
	}
	tr.close = f.time
	tr.fills++
	if opening {
		tr.openSz += sz
		tr.openNtl += sz * f.px
	} else {
		tr.closeSz += sz
		tr.closeNtl += sz * f.px
	}
	m := math.Max(math.Abs(before), math.Abs(after))
	tr.maxTok = math.Max(tr.maxTok, m)
	tr.maxUsd = math.Max(tr.maxUsd, m*f.px)
	tr.vol += sz * f.px
	tr.pnl += pnl
	tr.fee += f.fee * sz / f.sz
	tr.complete = math.Abs(after) < 1e-9
}

// pdOracleTrades reconstructs trades from fills in plain Go: walk each wallet's fills
// on one asset in (time, tid) order and cut a trade each time the position returns to
// flat or changes sign.
func pdOracleTrades(fills []pdFill) []*pdTrade {
	fs := append([]pdFill(nil), fills...)
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.wallet != b.wallet {
			return a.wallet < b.wallet
		}
		if a.coin != b.coin {
			return a.coin < b.coin
		}
		if !a.time.Equal(b.time) {
			return a.time.Before(b.time)
		}
		return a.tid < b.tid
	})
	var out []*pdTrade
	var cur *pdTrade
	for i := range fs {
		f := &fs[i]
		if i == 0 || f.wallet != fs[i-1].wallet || f.coin != fs[i-1].coin {
			cur = nil
		}
		delta := f.sz
		if f.side == "A" {
			delta = -f.sz
		}
		pos := f.start
		end := pos + delta
		sign := func(x float64) float64 {
			if math.Abs(x) < 1e-9 {
				return 0
			}
			return math.Copysign(1, x)
		}
		s0, s1 := sign(pos), sign(end)
		newTrade := func(dir float64) {
			d := "long"
			if dir < 0 {
				d = "short"
			}
			cur = &pdTrade{wallet: f.wallet, asset: f.coin, dir: d}
			out = append(out, cur)
		}
		switch {
		case s0 == 0:
			newTrade(s1)
			cur.leg(f, f.sz, true, 0, end, f.closedPnl)
		case s1 == s0 && math.Abs(end) > math.Abs(pos):
			if cur == nil {
				newTrade(s0)
			}
			cur.leg(f, f.sz, true, pos, end, 0)
		case s1 == 0 || s1 == s0:
			if cur == nil {
				newTrade(s0)
			}
			cur.leg(f, f.sz, false, pos, end, f.closedPnl)
		default: // flip
			if cur == nil {
				newTrade(s0)
			}
			cur.leg(f, math.Abs(pos), false, pos, 0, f.closedPnl)
			cur.complete = true
			newTrade(s1)
			cur.leg(f, math.Abs(end), true, 0, end, 0)
		}
	}
	return out
}

func pdNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol+1e-9*math.Abs(b) }

func pdGetJSON(t *testing.T, h http.Handler, target string, out any) {
	t.Helper()
	code, body := get(t, h, target)
	if code != 200 {
		t.Fatalf("%s: %d %s", target, code, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
}

func pdTiny(t *testing.T) (*query.Queries, http.Handler) {
	q := openQueries(t, testlake.Tiny(t))
	return q, (&handlers.API{Q: q}).Handler()
}

// TestPerpdexTradesAgainstOracle: every wallet's trades from /wallets/{address}/trades
// equal a plain-Go reconstruction from the raw fills, row by row.
func TestPerpdexTradesAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills := pdReadFills(t, q)
	if len(fills) == 0 {
		t.Fatal("tiny lake has no perpdex fills")
	}
	byWallet := map[string][]*pdTrade{}
	seq := map[*pdTrade]int{}
	for i, tr := range pdOracleTrades(fills) {
		byWallet[tr.wallet] = append(byWallet[tr.wallet], tr)
		seq[tr] = i
	}
	var flips, partial, open int
	for w, want := range byWallet {
		sort.SliceStable(want, func(i, j int) bool {
			if !want[i].close.Equal(want[j].close) {
				return want[i].close.After(want[j].close)
			}
			if want[i].asset != want[j].asset {
				return want[i].asset > want[j].asset
			}
			return seq[want[i]] > seq[want[j]] // a flip's new trade closes with the old one: newer first
		})
		var page query.WalletTradesPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades?limit=5000&start=2000-01-01", &page)
		if len(page.Trades) != len(want) {
			t.Fatalf("%s: %d trades, oracle %d", w, len(page.Trades), len(want))
		}
		for i, g := range page.Trades {
			o := want[i]
			if g.Asset != o.asset || g.Direction != o.dir || g.OpenTS != query.ISOMicros(o.open) || g.CloseTS != query.ISOMicros(o.close) ||
				g.FillCount != o.fills || g.IsComplete != o.complete || g.DurationSeconds != int64(o.close.Sub(o.open)/time.Second) ||
				!pdNear(g.VolumeUsd, o.vol, 0.011) || !pdNear(g.RealizedPnl, o.pnl, 0.011) || !pdNear(g.TotalFee, o.fee, 0.011) ||
				!pdNear(g.MaxSizeToken, o.maxTok, 1e-8) || !pdNear(g.MaxSizeUsd, o.maxUsd, 0.011) {
				t.Fatalf("%s trade %d: %+v\noracle %+v", w, i, g, *o)
			}
			if o.openSz > 0 && (g.EntryPrice == nil || !pdNear(*g.EntryPrice, o.openNtl/o.openSz, 1e-6)) {
				t.Fatalf("%s trade %d entry %v, oracle %v", w, i, g.EntryPrice, o.openNtl/o.openSz)
			}
			if (o.closeSz > 0) != (g.ExitPrice != nil) || o.closeSz > 0 && !pdNear(*g.ExitPrice, o.closeNtl/o.closeSz, 1e-6) {
				t.Fatalf("%s trade %d exit %v, oracle %v/%v", w, i, g.ExitPrice, o.closeNtl, o.closeSz)
			}
			if o.complete && o.fills > 2 && o.pnl != 0 {
				partial++
			}
			if !o.complete {
				open++
			}
		}
	}
	for _, f := range fills {
		if f.start != 0 && math.Signbit(f.start) != math.Signbit(f.start+map[string]float64{"B": f.sz, "A": -f.sz}[f.side]) &&
			math.Abs(f.start+map[string]float64{"B": f.sz, "A": -f.sz}[f.side]) > 1e-9 {
			flips++
		}
	}
	if flips == 0 || open == 0 || partial == 0 {
		t.Errorf("tiny lake lacks cases: %d flips, %d open trades, %d multi-fill trades", flips, open, partial)
	}
}

// pdOracleStats computes TradeStats in plain Go.
func pdOracleStats(ts []*pdTrade, from time.Time) query.TradeStats {
	var s query.TradeStats
	var gains, losses, durs, sizes []float64
	var pnl, fee, vol, lw, sw float64
	for _, tr := range ts {
		s.TradeCount++
		if tr.complete {
			s.ClosedTradeCount++
		} else {
			s.OpenTradeCount++
		}
		s.FillCount += tr.fills
		if tr.pnl > 0 {
			s.Wins++
			gains = append(gains, tr.pnl)
		} else if tr.pnl < 0 {
			s.Losses++
			losses = append(losses, tr.pnl)
		}
		if tr.dir == "long" {
			s.LongTrades++
			if tr.pnl > 0 {
				lw++
			}
		} else {
			s.ShortTrades++
			if tr.pnl > 0 {
				sw++
			}
		}
		pnl += tr.pnl
		fee += tr.fee
		vol += tr.vol
		durs = append(durs, float64(int64(tr.close.Sub(tr.open)/time.Second)))
		sizes = append(sizes, tr.maxUsd)
	}
	median := func(x []float64) float64 {
		sort.Float64s(x)
		n := len(x)
		if n%2 == 1 {
			return x[n/2]
		}
		return (x[n/2-1] + x[n/2]) / 2
	}
	sum := func(x []float64) (s float64) {
		for _, v := range x {
			s += v
		}
		return
	}
	s.WinRate = float64(s.Wins) / float64(s.TradeCount)
	s.NetPnl = pnl - fee
	s.TotalWinningPnl, s.TotalLosingPnl = sum(gains), sum(losses)
	if len(gains) > 0 {
		g, m := sum(gains)/float64(len(gains)), median(gains)
		s.AvgGain, s.MedianGain = &g, &m
	}
	if len(losses) > 0 {
		l, m := sum(losses)/float64(len(losses)), median(losses)
		s.AvgLoss, s.MedianLoss = &l, &m
		pf := sum(gains) / -sum(losses)
		s.ProfitFactor = &pf
	}
	s.MedianDuration, s.AvgDuration = median(durs), sum(durs)/float64(len(durs))
	s.MedianSizeUsd, s.AvgTradeSize = median(sizes), sum(sizes)/float64(len(sizes))
	for _, d := range durs {
		s.MaxDuration = math.Max(s.MaxDuration, d)
	}
	for _, z := range sizes {
		s.MaxTradeSizeUsd = math.Max(s.MaxTradeSizeUsd, z)
	}
	s.Expectancy = pnl / float64(s.TradeCount)
	s.TotalFees, s.TotalVolume = fee, vol
	_ = lw
	_ = sw
	return s
}

// TestPerpdexTradesSummaryAgainstOracle: TradeStats overall and by coin equal a plain-Go
// computation over the oracle trades that opened or closed in the rolling window (open
// trades counted, partial-close PnL included), for every window, on the most active wallets.
func TestPerpdexTradesSummaryAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills := pdReadFills(t, q)
	byWallet := map[string][]*pdTrade{}
	nf := map[string]int{}
	for _, f := range fills {
		nf[f.wallet]++
	}
	for _, tr := range pdOracleTrades(fills) {
		byWallet[tr.wallet] = append(byWallet[tr.wallet], tr)
	}
	wallets := make([]string, 0, len(nf))
	for w := range nf {
		wallets = append(wallets, w)
	}
	sort.Slice(wallets, func(i, j int) bool {
		return nf[wallets[i]] > nf[wallets[j]] || nf[wallets[i]] == nf[wallets[j]] && wallets[i] < wallets[j]
	})
	now := testlake.Now()
	for _, w := range wallets[:8] {
		for win, d := range map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "all": 0} {
			from := time.Unix(0, 0)
			if d > 0 {
				from = now.Add(-d)
			}
			var in []*pdTrade
			coins := map[string][]*pdTrade{}
			for _, tr := range byWallet[w] {
				if (!tr.open.Before(from) || !tr.close.Before(from)) && !tr.open.After(now) {
					in = append(in, tr)
					coins[tr.asset] = append(coins[tr.asset], tr)
				}
			}
			var got query.TradesSummary
			pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/trades/summary?window="+win, &got)
			if got.Wallet != w || got.Window != win {
				t.Fatalf("envelope %s %s", got.Wallet, got.Window)
			}
			if len(in) == 0 {
				if got.Overall.TradeCount != 0 || len(got.ByCoin) != 0 {
					t.Fatalf("%s %s: expected empty summary, got %+v", w, win, got.Overall)
				}
				continue
			}
			cmp := func(label string, g query.TradeStats, o query.TradeStats) {
				t.Helper()
				ok := g.TradeCount == o.TradeCount && g.ClosedTradeCount == o.ClosedTradeCount && g.OpenTradeCount == o.OpenTradeCount &&
					g.FillCount == o.FillCount && g.Wins == o.Wins && g.Losses == o.Losses && g.LongTrades == o.LongTrades &&
					g.ShortTrades == o.ShortTrades && pdNear(g.WinRate, o.WinRate, 1e-6) && pdNear(g.NetPnl, o.NetPnl, 0.011) &&
					pdNear(g.TotalWinningPnl, o.TotalWinningPnl, 0.011) && pdNear(g.TotalLosingPnl, o.TotalLosingPnl, 0.011) &&
					pdNear(g.MedianDuration, o.MedianDuration, 0.006) && pdNear(g.AvgDuration, o.AvgDuration, 0.006) &&
					pdNear(g.MaxDuration, o.MaxDuration, 0) && pdNear(g.MedianSizeUsd, o.MedianSizeUsd, 0.011) &&
					pdNear(g.AvgTradeSize, o.AvgTradeSize, 0.011) && pdNear(g.MaxTradeSizeUsd, o.MaxTradeSizeUsd, 0.011) &&
					pdNear(g.Expectancy, o.Expectancy, 0.011) && pdNear(g.TotalFees, o.TotalFees, 0.011) && pdNear(g.TotalVolume, o.TotalVolume, 0.011)
				for _, p := range [][2]*float64{{g.AvgGain, o.AvgGain}, {g.AvgLoss, o.AvgLoss}, {g.MedianGain, o.MedianGain}, {g.MedianLoss, o.MedianLoss}} {
					ok = ok && (p[0] == nil) == (p[1] == nil) && (p[0] == nil || pdNear(*p[0], *p[1], 0.011))
				}
				ok = ok && (g.ProfitFactor == nil) == (o.ProfitFactor == nil) && (g.ProfitFactor == nil || pdNear(*g.ProfitFactor, *o.ProfitFactor, 1e-5))
				if !ok {
					t.Fatalf("%s %s %s:\n got    %+v\n oracle %+v", w, win, label, g, o)
				}
			}
			cmp("overall", got.Overall, pdOracleStats(in, from))
			if len(got.ByCoin) != len(coins) {
				t.Fatalf("%s %s: %d coins, oracle %d", w, win, len(got.ByCoin), len(coins))
			}
			var share float64
			for _, c := range got.ByCoin {
				cmp(c.Asset, c, pdOracleStats(coins[c.Asset], from))
				share += c.VolumeSharePct
			}
			if !pdNear(share, 100, 1e-3) {
				t.Fatalf("%s %s: volume_share_pct sums to %v", w, win, share)
			}
		}
	}
}

// TestPerpdexBuildersAgainstOracle: /builders rows and /builders/{builder} totals equal
// plain-Go sums over the raw builder-code fills in the window.
func TestPerpdexBuildersAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills := pdReadFills(t, q)
	now := testlake.Now()
	for _, win := range []string{"1d", "7d", "30d", "all"} {
		from := query.PerpdexWindowStart(win, now)
		type agg struct {
			fee, vol, trader, deployer, node, pnl, share float64
			fills, crossed                               int64
			users                                        map[string]float64
			days, assets, dexes                          map[string]bool
			tids                                         map[int64]bool
		}
		want := map[string]*agg{}
		var venue float64
		for _, f := range fills {
			if f.time.Before(from) || f.time.After(now) {
				continue
			}
			if f.side == "B" {
				venue += f.px * f.sz
			}
			if !f.builder.Valid {
				continue
			}
			a := want[f.builder.String]
			if a == nil {
				a = &agg{users: map[string]float64{}, days: map[string]bool{}, assets: map[string]bool{}, dexes: map[string]bool{}, tids: map[int64]bool{}}
				want[f.builder.String] = a
			}
			n := f.px * f.sz
			a.fee += f.builderFee.Float64
			a.vol += n
			if !a.tids[f.tid] {
				a.share += n
				a.tids[f.tid] = true
			}
			a.trader += f.fee
			a.deployer += f.deployerFee.Float64
			a.node += f.fee - f.builderFee.Float64 - f.deployerFee.Float64
			a.pnl += f.closedPnl
			a.fills++
			if f.crossed {
				a.crossed++
			}
			a.users[f.wallet] += f.closedPnl
			a.days[f.time.Format("2006-01-02")] = true
			a.assets[f.coin] = true
			a.dexes[f.dex] = true
		}
		var page query.BuildersPage
		pdGetJSON(t, h, "/v1/perpdex/builders?limit=500&window="+win, &page)
		if len(page.Builders) != len(want) {
			t.Fatalf("%s: %d builders, oracle %d", win, len(page.Builders), len(want))
		}
		if !pdNear(page.VenueVolumeUsd, venue, 0.011) {
			t.Fatalf("%s venue volume %v, oracle %v", win, page.VenueVolumeUsd, venue)
		}
		for i, b := range page.Builders {
			a := want[b.Builder]
			if a == nil || b.Fills != a.fills || b.Users != int64(len(a.users)) || !pdNear(b.FeeUsd, a.fee, 0.011) ||
				!pdNear(b.VolumeUsd, a.vol, 0.011) || !pdNear(b.ShareVolumeUsd, a.share, 0.011) || !pdNear(b.TraderFeeUsd, a.trader, 0.011) ||
				!pdNear(b.BuilderRoutedDeployerFeeUsd, a.deployer, 0.011) || !pdNear(b.FeeUsdNode, a.node, 0.011) ||
				!pdNear(b.ClosedPnlUsd, a.pnl, 0.011) || b.CrossedFills != a.crossed || b.ActiveDays != int64(len(a.days)) ||
				!pdNear(b.MarketSharePct, a.share/venue*100, 1e-5) || !pdNear(b.TakerPct, float64(a.crossed)/float64(a.fills)*100, 1e-5) {
				t.Fatalf("%s builder %s: %+v, oracle %+v", win, b.Builder, b, a)
			}
			if i > 0 && page.Builders[i-1].FeeUsd < b.FeeUsd {
				t.Fatalf("%s: sort=fee not descending at %d", win, i)
			}
			var d query.BuilderDetail
			pdGetJSON(t, h, "/v1/perpdex/builders/"+b.Builder+"?breakdown_limit=1&window="+win, &d)
			var prof int64
			for _, p := range a.users {
				if p > 0 {
					prof++
				}
			}
			if d.Totals.Assets != int64(len(a.assets)) || d.Totals.Dexes != int64(len(a.dexes)) || d.Totals.ProfitableUsers != prof ||
				!pdNear(d.Totals.FeeUsd, a.fee, 0.011) || len(d.ByAsset) != 1 || len(d.UserVolumeDistribution) != 10 {
				t.Fatalf("%s builder %s detail totals %+v (by_asset %d), oracle assets %d dexes %d profitable %d",
					win, b.Builder, d.Totals, len(d.ByAsset), len(a.assets), len(a.dexes), prof)
			}
			var users int64
			var vol float64
			for _, dec := range d.UserVolumeDistribution {
				users += dec.Users
				vol += dec.VolumeUsd
			}
			if users != int64(len(a.users)) || !pdNear(vol, a.vol, 0.1) {
				t.Fatalf("%s builder %s: deciles hold %d users %v volume, oracle %d %v", win, b.Builder, users, vol, len(a.users), a.vol)
			}
		}
	}
}

var _ = fmt.Sprintf

type pdAcct struct {
	wallet string
	ts     time.Time
	av     float64
}

func pdReadAccounts(t *testing.T, q *query.Queries) []pdAcct {
	rows, err := q.DB().QueryContext(context.Background(), "SELECT wallet, snapshot_ts, account_value FROM perpdex_accounts")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pdAcct
	for rows.Next() {
		var a pdAcct
		if err := rows.Scan(&a.wallet, &a.ts, &a.av); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ts.Before(out[j].ts) })
	return out
}

// TestPerpdexLeaderboardAgainstOracle: every wallet's TraderRow metrics for each window
// equal a plain-Go computation from raw fills, the oracle trades and the account series.
func TestPerpdexLeaderboardAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills := pdReadFills(t, q)
	trades := pdOracleTrades(fills)
	accts := pdReadAccounts(t, q)
	end := query.PerpdexBoardTime(testlake.Now())
	for _, win := range []string{"1d", "7d", "30d", "all"} {
		start := query.PerpdexWindowStart(win, end)
		type o struct {
			realized, fees, vol, cum            float64
			n, wins, losses, ws, ls, curW, curL int64
			longPnl, shortPnl, gw, gl, sum      float64
			av, peak, maxDD                     float64
			hasAV                               bool
		}
		want := map[string]*o{}
		for _, f := range fills {
			if !f.time.Before(start) && f.time.Before(end) {
				w := want[f.wallet]
				if w == nil {
					w = &o{}
					want[f.wallet] = w
				}
				w.realized += f.closedPnl
				w.fees += f.fee
				w.vol += f.px * f.sz
			}
		}
		for _, f := range fills {
			if w := want[f.wallet]; w != nil && f.time.Before(end) {
				w.cum += f.closedPnl - f.fee
			}
		}
		ts := append([]*pdTrade(nil), trades...)
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].close.Before(ts[j].close) })
		for _, tr := range ts {
			w := want[tr.wallet]
			if w == nil || !tr.complete || tr.close.Before(start) || !tr.close.Before(end) {
				continue
			}
			w.n++
			w.sum += tr.pnl
			if tr.dir == "long" {
				w.longPnl += tr.pnl
			} else {
				w.shortPnl += tr.pnl
			}
			switch {
			case tr.pnl > 0:
				w.wins++
				w.gw += tr.pnl
				w.curW++
				w.curL = 0
			case tr.pnl < 0:
				w.losses++
				w.gl += tr.pnl
				w.curL++
				w.curW = 0
			default:
				w.curW, w.curL = 0, 0
			}
			w.ws, w.ls = max(w.ws, w.curW), max(w.ls, w.curL)
		}
		for _, a := range accts {
			w := want[a.wallet]
			if w == nil || a.ts.After(end) {
				continue
			}
			w.av, w.hasAV = a.av, true
			if a.ts.Before(start) {
				continue
			}
			w.peak = math.Max(w.peak, a.av)
			if w.peak > 0 {
				w.maxDD = math.Max(w.maxDD, (w.peak-a.av)/w.peak*100)
			}
		}
		var page query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/leaderboard?limit=500&window="+win, &page)
		if page.TotalCount != len(want) || len(page.Traders) != len(want) {
			t.Fatalf("%s: %d rows (total %d), oracle %d", win, len(page.Traders), page.TotalCount, len(want))
		}
		for _, r := range page.Traders {
			w := want[r.Wallet]
			ok := w != nil && pdNear(r.TotalRealizedPnl, w.realized-w.fees, 0.011) && pdNear(r.CumRealizedPnl, w.cum, 0.011) &&
				pdNear(r.TotalVolume, w.vol, 0.011) && pdNear(r.TotalFee, w.fees, 0.011) && r.TradeCount == w.n &&
				r.WinCount == w.wins && r.LossCount == w.losses && r.MaxWinStreak == w.ws && r.MaxLossStreak == w.ls &&
				pdNear(r.LongPnl, w.longPnl, 0.011) && pdNear(r.ShortPnl, w.shortPnl, 0.011) &&
				pdNear(r.AccountValue, w.av, 0.011) && pdNear(r.MaxDrawdownPct, w.maxDD, 1e-5)
			if ok && w.n > 0 {
				ok = pdNear(r.WinRate, float64(w.wins)/float64(w.n), 1e-6) && r.Expectancy != nil && pdNear(*r.Expectancy, w.sum/float64(w.n), 0.011)
			}
			if ok && w.gl < 0 {
				ok = r.ProfitFactor != nil && pdNear(*r.ProfitFactor, w.gw/-w.gl, 1e-5)
			}
			if !ok {
				t.Fatalf("%s %s:\n got    %+v\n oracle %+v", win, r.Wallet, r, w)
			}
		}
	}
}
