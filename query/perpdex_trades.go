package query

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// WalletTrade is one reconstructed trade: a position cycle on one asset from flat to
// flat (a flip closes one trade and opens the next).
type WalletTrade struct {
	Asset           string   `json:"asset" doc:"coin; builder-deployed markets are <dex>:<symbol>"`
	Direction       string   `json:"direction" doc:"long or short"`
	OpenTS          string   `json:"open_ts" doc:"first fill, ISO-8601 UTC with microseconds"`
	CloseTS         string   `json:"close_ts" doc:"the fill that returned the position to flat; for an open trade (is_complete false), its latest fill so far"`
	DurationSeconds int64    `json:"duration_seconds" doc:"close_ts minus open_ts, whole seconds"`
	EntryPrice      *float64 `json:"entry_price" doc:"VWAP of the fills that opened or added; null when the trade began before the recorded fills"`
	ExitPrice       *float64 `json:"exit_price" doc:"VWAP of the fills that reduced or closed; null while nothing was reduced"`
	MaxSizeToken    float64  `json:"max_size_token" doc:"largest absolute position during the trade"`
	MaxSizeUsd      float64  `json:"max_size_usd" doc:"largest absolute position times the price of the fill that reached it"`
	VolumeUsd       float64  `json:"volume_usd" doc:"notional of every fill (flip fills count only their part)"`
	RealizedPnl     float64  `json:"realized_pnl" doc:"sum of closed PnL of the trade's closing fills, partial closes included, before fees"`
	TotalFee        float64  `json:"total_fee" doc:"fees of the trade's fills (a flip's fee is split by size)"`
	FillCount       int64    `json:"fill_count"`
	IsComplete      bool     `json:"is_complete" doc:"false while the position is still open"`
}

// PerpdexTradeKey is the keyset position of a trade row.
type PerpdexTradeKey struct {
	CloseTS time.Time `json:"c"`
	Asset   string    `json:"a"`
	TradeNo int64     `json:"n"`
}

// PerpdexWalletTradesParams are the inputs of PerpdexWalletTrades.
type PerpdexWalletTradesParams struct {
	Wallet     string
	Coin       string // "" for every asset
	Start, End time.Time
	Limit      int
	After      *PerpdexTradeKey
}

// WalletTradesPage is the envelope of /v1/perpdex/wallets/{address}/trades.
type WalletTradesPage struct {
	Wallet     string           `json:"wallet"`
	Trades     []WalletTrade    `json:"trades"`
	NextCursor *string          `json:"nextCursor"`
	Next       *PerpdexTradeKey `json:"-"`
}

func pdNullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// PerpdexWalletTrades pages one wallet's trades, newest close first. It reads the
// wallet's trades from the published table (one small row group; the same rows and
// order as sql/perpdex/wallet_trades.sql): two binary searches find the page's end, so
// the work is bounded by the wallet's own trades.
func (q *Queries) PerpdexWalletTrades(ctx context.Context, p PerpdexWalletTradesParams) (WalletTradesPage, error) {
	page := WalletTradesPage{Wallet: p.Wallet, Trades: []WalletTrade{}}
	ts, err := q.perpdexWalletTrades(ctx, p.Wallet)
	if err != nil {
		return page, err
	}
	fromUS, toUS := p.Start.UnixMicro(), p.End.UnixMicro()
	// hi: one past the newest trade that may be served (close <= end, key < cursor).
	hi, _ := slices.BinarySearchFunc(ts, toUS, func(t pdTradeRow, us int64) int {
		if t.closeUS <= us {
			return -1
		}
		return 1
	})
	if p.After != nil {
		after := pdTradeRow{closeUS: p.After.CloseTS.UnixMicro(), asset: p.After.Asset, tradeNo: p.After.TradeNo}
		if i, _ := slices.BinarySearchFunc(ts, &after, func(t pdTradeRow, a *pdTradeRow) int { return pdTradeCmp(&t, a) }); i < hi {
			hi = i
		}
	}
	var last PerpdexTradeKey
	for i := hi - 1; i >= 0 && ts[i].closeUS >= fromUS; i-- {
		r := &ts[i]
		if p.Coin != "" && r.asset != p.Coin {
			continue
		}
		if len(page.Trades) == p.Limit {
			page.Next = &last
			break
		}
		page.Trades = append(page.Trades, pdWalletTrade(r))
		last = PerpdexTradeKey{time.UnixMicro(r.closeUS).UTC(), r.asset, r.tradeNo}
	}
	return page, nil
}

// pdWalletTrade formats one trade row as the route serves it.
func pdWalletTrade(r *pdTradeRow) WalletTrade {
	t := WalletTrade{Asset: r.asset, Direction: "short", FillCount: r.fills, IsComplete: r.complete}
	if r.long {
		t.Direction = "long"
	}
	open, closeT := time.UnixMicro(r.openUS).UTC(), time.UnixMicro(r.closeUS).UTC()
	t.OpenTS, t.CloseTS = ISOMicros(open), ISOMicros(closeT)
	t.DurationSeconds = int64(closeT.Sub(open) / time.Second)
	if r.hasEntry {
		t.EntryPrice = pdPtr(r.entry, 6)
	}
	if r.hasExit {
		t.ExitPrice = pdPtr(r.exit, 6)
	}
	t.MaxSizeToken, t.MaxSizeUsd, t.VolumeUsd = Round(r.maxTok, 8), Round(r.maxUsd, 2), Round(r.vol, 2)
	t.RealizedPnl, t.TotalFee = Round(r.pnl, 2), Round(r.fee, 2)
	return t
}

// TradeStats summarises a set of trades (SPEC 2.3): open trades are counted and
// partial-close PnL is included.
type TradeStats struct {
	Asset            string   `json:"asset,omitempty"`
	TradeCount       int64    `json:"trade_count" doc:"trades that opened or closed in the window, open ones included"`
	ClosedTradeCount int64    `json:"closed_trade_count"`
	OpenTradeCount   int64    `json:"open_trade_count"`
	FillCount        int64    `json:"fill_count"`
	Wins             int64    `json:"wins" doc:"trades with realized PnL above 0 (partial closes of open trades count)"`
	Losses           int64    `json:"losses" doc:"trades with realized PnL below 0"`
	WinRate          float64  `json:"win_rate" doc:"wins / trade_count, fraction"`
	LongTrades       int64    `json:"long_trades"`
	ShortTrades      int64    `json:"short_trades"`
	LongWinRate      float64  `json:"long_win_rate"`
	ShortWinRate     float64  `json:"short_win_rate"`
	NetPnl           float64  `json:"net_pnl" doc:"realized PnL minus fees"`
	TotalWinningPnl  float64  `json:"total_winning_pnl"`
	TotalLosingPnl   float64  `json:"total_losing_pnl" doc:"negative or 0"`
	AvgGain          *float64 `json:"avg_gain"`
	AvgLoss          *float64 `json:"avg_loss" doc:"negative"`
	MedianGain       *float64 `json:"median_gain"`
	MedianLoss       *float64 `json:"median_loss"`
	MedianDuration   float64  `json:"median_duration" doc:"seconds"`
	AvgDuration      float64  `json:"avg_duration" doc:"seconds"`
	MaxDuration      float64  `json:"max_duration" doc:"seconds"`
	MedianSizeUsd    float64  `json:"median_size_usd" doc:"median of max_size_usd"`
	AvgTradeSize     float64  `json:"avg_trade_size" doc:"mean of max_size_usd"`
	MaxTradeSizeUsd  float64  `json:"max_trade_size_usd"`
	ProfitFactor     *float64 `json:"profit_factor" doc:"total_winning_pnl / -total_losing_pnl; null without a loss"`
	PayoffRatio      *float64 `json:"payoff_ratio" doc:"avg_gain / -avg_loss; null without both"`
	Expectancy       float64  `json:"expectancy" doc:"realized PnL per trade"`
	TotalFees        float64  `json:"total_fees"`
	TotalVolume      float64  `json:"total_volume"`
	VolumeSharePct   float64  `json:"volume_share_pct" doc:"share of the wallet's window volume, percentage points (100 overall)"`
	FirstTradeTS     *string  `json:"first_trade_ts" doc:"earliest open_ts of the counted trades"`
	LastTradeTS      *string  `json:"last_trade_ts" doc:"latest fill of the counted trades"`
	FirstOpenTS      *string  `json:"first_open_ts" doc:"earliest open inside the window"`
	LastCloseTS      *string  `json:"last_close_ts" doc:"latest close of a completed trade"`
}

// TradesSummary is the envelope of /v1/perpdex/wallets/{address}/trades/summary.
type TradesSummary struct {
	Wallet  string       `json:"wallet"`
	Window  string       `json:"window"`
	Overall TradeStats   `json:"overall"`
	ByCoin  []TradeStats `json:"by_coin"`
}

func pdUSPtr(us int64, ok bool) *string {
	if !ok {
		return nil
	}
	s := ISOMicros(time.UnixMicro(us).UTC())
	return &s
}

// PerpdexTradesSummary computes TradeStats over the wallet's trades in a rolling window
// of N times 24 hours ending at the store clock. It reads the wallet's trades from the
// published table and aggregates them in Go: the same figures as
// sql/perpdex/trades_summary.sql over perpdex_closed_trades, without a scan of every
// wallet's trades per request.
func (q *Queries) PerpdexTradesSummary(ctx context.Context, wallet, window string) (TradesSummary, error) {
	out := TradesSummary{Wallet: wallet, Window: window, ByCoin: []TradeStats{}}
	ts, err := q.perpdexWalletTrades(ctx, wallet)
	if err != nil {
		return out, err
	}
	end := q.Now()
	fromUS, toUS := PerpdexWindowStart(window, end).UnixMicro(), end.UnixMicro()
	// A trade opened or closed in the window when close_ts >= start (open_ts <= close_ts,
	// so an open inside the window implies a close inside it): a suffix of the wallet's
	// trades in close order.
	lo, _ := slices.BinarySearchFunc(ts, fromUS, func(t pdTradeRow, us int64) int { return cmp.Compare(t.closeUS, us) })
	var all pdStatsAcc
	by := map[string]*pdStatsAcc{}
	for i := lo; i < len(ts); i++ {
		t := &ts[i]
		if t.openUS > toUS {
			continue
		}
		all.add(t, fromUS)
		a := by[t.asset]
		if a == nil {
			a = &pdStatsAcc{}
			by[t.asset] = a
		}
		a.add(t, fromUS)
	}
	out.Overall = all.stats("")
	if all.n > 0 {
		out.Overall.VolumeSharePct = 100
	}
	// By coin: largest unrounded volume first, then asset.
	assets := make([]string, 0, len(by))
	for a := range by {
		assets = append(assets, a)
	}
	slices.SortFunc(assets, func(a, b string) int {
		if c := cmp.Compare(by[b].vol, by[a].vol); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, a := range assets {
		s := by[a].stats(a)
		if all.vol > 0 {
			s.VolumeSharePct = Round(by[a].vol/all.vol*100, 6)
		}
		out.ByCoin = append(out.ByCoin, s)
	}
	return out, nil
}

// pdStatsAcc accumulates the TradeStats of one group of trades.
type pdStatsAcc struct {
	n, closed, fills, wins, losses, longs, shorts, lwins, swins int64
	pnl, win, loss, fee, vol, sizeSum, sizeMax                  float64
	durSum, durMax                                              int64
	gains, lossList, durs, sizes                                []float64
	first, last, firstOpen, lastClose                           int64
	hasFirstOpen, hasLastClose                                  bool
}

func (a *pdStatsAcc) add(t *pdTradeRow, fromUS int64) {
	dur := (t.closeUS - t.openUS) / 1_000_000
	if a.n == 0 || t.openUS < a.first {
		a.first = t.openUS
	}
	if a.n == 0 || t.closeUS > a.last {
		a.last = t.closeUS
	}
	if a.n == 0 || t.maxUsd > a.sizeMax {
		a.sizeMax = t.maxUsd
	}
	if a.n == 0 || dur > a.durMax {
		a.durMax = dur
	}
	a.n++
	a.fills += t.fills
	if t.complete {
		a.closed++
		if !a.hasLastClose || t.closeUS > a.lastClose {
			a.lastClose, a.hasLastClose = t.closeUS, true
		}
	}
	if t.openUS >= fromUS && (!a.hasFirstOpen || t.openUS < a.firstOpen) {
		a.firstOpen, a.hasFirstOpen = t.openUS, true
	}
	if t.long {
		a.longs++
	} else {
		a.shorts++
	}
	switch {
	case t.pnl > 0:
		a.wins++
		a.win += t.pnl
		a.gains = append(a.gains, t.pnl)
		if t.long {
			a.lwins++
		} else {
			a.swins++
		}
	case t.pnl < 0:
		a.losses++
		a.loss += t.pnl
		a.lossList = append(a.lossList, t.pnl)
	}
	a.pnl += t.pnl
	a.fee += t.fee
	a.vol += t.vol
	a.durSum += dur
	a.durs = append(a.durs, float64(dur))
	a.sizeSum += t.maxUsd
	a.sizes = append(a.sizes, t.maxUsd)
}

// pdMedian is DuckDB's median (quantile_cont at 0.5): the middle value, or for an even
// count lo + (hi - lo) * 0.5 of the two middle ones. It sorts xs.
func pdMedian(xs []float64) (float64, bool) {
	n := len(xs)
	if n == 0 {
		return 0, false
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2], true
	}
	lo, hi := xs[n/2-1], xs[n/2]
	return lo + (hi-lo)*0.5, true
}

func (a *pdStatsAcc) stats(asset string) TradeStats {
	s := TradeStats{Asset: asset, TradeCount: a.n, ClosedTradeCount: a.closed, OpenTradeCount: a.n - a.closed,
		FillCount: a.fills, Wins: a.wins, Losses: a.losses, LongTrades: a.longs, ShortTrades: a.shorts}
	s.WinRate, s.LongWinRate, s.ShortWinRate = pdRatio(a.wins, a.n), pdRatio(a.lwins, a.longs), pdRatio(a.swins, a.shorts)
	s.NetPnl = Round(a.pnl-a.fee, 2)
	s.TotalWinningPnl, s.TotalLosingPnl = Round(a.win, 2), Round(a.loss, 2)
	if a.wins > 0 {
		s.AvgGain = pdPtr(a.win/float64(a.wins), 2)
	}
	if a.losses > 0 {
		s.AvgLoss = pdPtr(a.loss/float64(a.losses), 2)
	}
	if m, ok := pdMedian(a.gains); ok {
		s.MedianGain = pdPtr(m, 2)
	}
	if m, ok := pdMedian(a.lossList); ok {
		s.MedianLoss = pdPtr(m, 2)
	}
	if a.n > 0 {
		md, _ := pdMedian(a.durs)
		ms, _ := pdMedian(a.sizes)
		s.MedianDuration, s.AvgDuration, s.MaxDuration = Round(md, 2), Round(float64(a.durSum)/float64(a.n), 2), Round(float64(a.durMax), 2)
		s.MedianSizeUsd, s.AvgTradeSize, s.MaxTradeSizeUsd = Round(ms, 2), Round(a.sizeSum/float64(a.n), 2), Round(a.sizeMax, 2)
		s.Expectancy = Round(a.pnl/float64(a.n), 2)
	}
	if a.loss < 0 {
		s.ProfitFactor = pdPtr(a.win/-a.loss, 6)
	}
	if a.wins > 0 && a.losses > 0 {
		s.PayoffRatio = pdPtr((a.win/float64(a.wins))/(-a.loss/float64(a.losses)), 6)
	}
	s.TotalFees, s.TotalVolume = Round(a.fee, 2), Round(a.vol, 2)
	s.FirstTradeTS, s.LastTradeTS = pdUSPtr(a.first, a.n > 0), pdUSPtr(a.last, a.n > 0)
	s.FirstOpenTS, s.LastCloseTS = pdUSPtr(a.firstOpen, a.hasFirstOpen), pdUSPtr(a.lastClose, a.hasLastClose)
	return s
}
