package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var (
	perpdexWalletTradesSQL  = sqlfiles.MustRead("perpdex/wallet_trades.sql")
	perpdexTradesSummarySQL = sqlfiles.MustRead("perpdex/trades_summary.sql")
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

// PerpdexWalletTrades pages one wallet's trades, newest close first.
func (q *Queries) PerpdexWalletTrades(ctx context.Context, p PerpdexWalletTradesParams) (WalletTradesPage, error) {
	page := WalletTradesPage{Wallet: p.Wallet, Trades: []WalletTrade{}}
	if err := q.perpdexEnsure(ctx); err != nil {
		return page, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aTS, aAsset, aNo any
	if p.After != nil {
		aTS, aAsset, aNo = p.After.CloseTS, p.After.Asset, p.After.TradeNo
	}
	rows, err := q.db.QueryContext(ctx, perpdexWalletTradesSQL, p.Wallet, pdNullStr(p.Coin), p.Start, p.End, aTS, aAsset, aNo, p.Limit+1)
	if err != nil {
		return page, wrap(ctx, "perpdex wallet trades", err)
	}
	defer rows.Close()
	var last PerpdexTradeKey
	for rows.Next() {
		var (
			t            WalletTrade
			open, closeT time.Time
			entry, exit  sql.NullFloat64
			no           int64
		)
		if err := rows.Scan(&t.Asset, &t.Direction, &open, &closeT, &entry, &exit, &t.MaxSizeToken, &t.MaxSizeUsd,
			&t.VolumeUsd, &t.RealizedPnl, &t.TotalFee, &t.FillCount, &t.IsComplete, &no); err != nil {
			return page, wrap(ctx, "perpdex wallet trades", err)
		}
		if len(page.Trades) == p.Limit {
			page.Next = &last
			break
		}
		t.OpenTS, t.CloseTS = ISOMicros(open), ISOMicros(closeT)
		t.DurationSeconds = int64(closeT.Sub(open) / time.Second)
		if entry.Valid {
			t.EntryPrice = &entry.Float64
		}
		if exit.Valid {
			t.ExitPrice = &exit.Float64
		}
		t.MaxSizeUsd, t.VolumeUsd = Round(t.MaxSizeUsd, 2), Round(t.VolumeUsd, 2)
		t.RealizedPnl, t.TotalFee = Round(t.RealizedPnl, 2), Round(t.TotalFee, 2)
		t.EntryPrice, t.ExitPrice = RoundPtr(t.EntryPrice, 6), RoundPtr(t.ExitPrice, 6)
		t.MaxSizeToken = Round(t.MaxSizeToken, 8)
		page.Trades = append(page.Trades, t)
		last = PerpdexTradeKey{closeT, t.Asset, no}
	}
	return page, wrap(ctx, "perpdex wallet trades", rows.Err())
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

func pdTSPtr(t sql.NullTime) *string {
	if !t.Valid {
		return nil
	}
	s := ISOMicros(t.Time)
	return &s
}

// PerpdexTradesSummary computes TradeStats over the wallet's trades in a rolling window
// of N times 24 hours ending at the store clock.
func (q *Queries) PerpdexTradesSummary(ctx context.Context, wallet, window string) (TradesSummary, error) {
	out := TradesSummary{Wallet: wallet, Window: window, ByCoin: []TradeStats{}}
	if err := q.perpdexEnsure(ctx); err != nil {
		return out, err
	}
	end := q.Now()
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexTradesSummarySQL, wallet, PerpdexWindowStart(window, end), end)
	if err != nil {
		return out, wrap(ctx, "perpdex trades summary", err)
	}
	defer rows.Close()
	var overallVol float64 // unrounded, for the per-coin shares
	for rows.Next() {
		var (
			s                                      TradeStats
			asset                                  sql.NullString
			lwins, swins                           int64
			pnl, win, loss                         sql.NullFloat64
			mg, ml, md, ad, xd, ms, as, xs, fee, v sql.NullFloat64
			ft, lt, fo, lc                         sql.NullTime
		)
		if err := rows.Scan(&asset, &s.TradeCount, &s.ClosedTradeCount, &s.OpenTradeCount, &s.FillCount, &s.Wins, &s.Losses,
			&s.LongTrades, &s.ShortTrades, &lwins, &swins, &pnl, &win, &loss, &mg, &ml, &md, &ad, &xd, &ms, &as, &xs,
			&fee, &v, &ft, &lt, &fo, &lc); err != nil {
			return out, wrap(ctx, "perpdex trades summary", err)
		}
		s.Asset = asset.String
		s.WinRate, s.LongWinRate, s.ShortWinRate = pdRatio(s.Wins, s.TradeCount), pdRatio(lwins, s.LongTrades), pdRatio(swins, s.ShortTrades)
		s.NetPnl = Round(pnl.Float64-fee.Float64, 2)
		s.TotalWinningPnl, s.TotalLosingPnl = Round(win.Float64, 2), Round(loss.Float64, 2)
		if s.Wins > 0 {
			s.AvgGain = pdPtr(win.Float64/float64(s.Wins), 2)
		}
		if s.Losses > 0 {
			s.AvgLoss = pdPtr(loss.Float64/float64(s.Losses), 2)
		}
		if mg.Valid {
			s.MedianGain = pdPtr(mg.Float64, 2)
		}
		if ml.Valid {
			s.MedianLoss = pdPtr(ml.Float64, 2)
		}
		s.MedianDuration, s.AvgDuration, s.MaxDuration = Round(md.Float64, 2), Round(ad.Float64, 2), Round(xd.Float64, 2)
		s.MedianSizeUsd, s.AvgTradeSize, s.MaxTradeSizeUsd = Round(ms.Float64, 2), Round(as.Float64, 2), Round(xs.Float64, 2)
		if loss.Float64 < 0 {
			s.ProfitFactor = pdPtr(win.Float64/-loss.Float64, 6)
		}
		if s.Wins > 0 && s.Losses > 0 {
			s.PayoffRatio = pdPtr((win.Float64/float64(s.Wins))/(-loss.Float64/float64(s.Losses)), 6)
		}
		if s.TradeCount > 0 {
			s.Expectancy = Round(pnl.Float64/float64(s.TradeCount), 2)
		}
		s.TotalFees, s.TotalVolume = Round(fee.Float64, 2), Round(v.Float64, 2)
		s.FirstTradeTS, s.LastTradeTS, s.FirstOpenTS, s.LastCloseTS = pdTSPtr(ft), pdTSPtr(lt), pdTSPtr(fo), pdTSPtr(lc)
		if !asset.Valid {
			if s.TradeCount > 0 {
				s.VolumeSharePct = 100
			}
			out.Overall, overallVol = s, v.Float64
			continue
		}
		if overallVol > 0 {
			s.VolumeSharePct = Round(v.Float64/overallVol*100, 6)
		}
		out.ByCoin = append(out.ByCoin, s)
	}
	return out, wrap(ctx, "perpdex trades summary", rows.Err())
}
