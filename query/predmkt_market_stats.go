package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var predmktMarketStatsSQL = sqlfiles.MustRead("predmkt/market_stats.sql")

// PredmktOutcomeStats are the trading figures of one outcome token of a market.
type PredmktOutcomeStats struct {
	TokenID         string   `json:"token_id"`
	OutcomeIndex    int      `json:"outcome_index"`
	Outcome         string   `json:"outcome"`
	VolumeUSD       float64  `json:"volume_usd" doc:"USD traded up to now, each trade once"`
	VolumeShares    float64  `json:"volume_shares" doc:"outcome-token shares traded"`
	Trades          int64    `json:"trades"`
	TakerBuyUSD     float64  `json:"taker_buy_usd" doc:"USD of trades whose taker bought this outcome"`
	TakerSellUSD    float64  `json:"taker_sell_usd" doc:"USD of trades whose taker sold this outcome"`
	VWAP            *float64 `json:"vwap" doc:"volume-weighted average price, volume_usd / volume_shares; null without trades"`
	Open            *float64 `json:"open" doc:"first trade price; null without trades"`
	High            *float64 `json:"high"`
	Low             *float64 `json:"low"`
	LastPrice       *float64 `json:"last_price" doc:"last trade price; null without trades"`
	VolumeWindowUSD float64  `json:"volume_window_usd" doc:"USD traded in [now - hours, now]"`
	TradesWindow    int64    `json:"trades_window"`
	Holders         int64    `json:"holders" doc:"wallets with a positive net position (buys minus sells over all their fills)"`
	SharesHeld      float64  `json:"shares_held" doc:"sum of the positive net positions: shares outstanding"`
	FirstTradeTS    *string  `json:"first_trade_ts" doc:"ISO-8601 UTC, ms; null without trades"`
	LastTradeTS     *string  `json:"last_trade_ts"`
}

// PredmktMarketStats is the body of /v1/predmkt/markets/{condition_id}/stats.
type PredmktMarketStats struct {
	ConditionID     string                `json:"condition_id"`
	Title           string                `json:"title"`
	Status          string                `json:"status" doc:"open, resolved or invalid"`
	WindowHours     int64                 `json:"window_hours" doc:"the hours of the window figures, ending now"`
	VolumeUSD       float64               `json:"volume_usd" doc:"both outcomes, each trade once"`
	VolumeWindowUSD float64               `json:"volume_window_usd"`
	Trades          int64                 `json:"trades"`
	TradesWindow    int64                 `json:"trades_window"`
	Traders         int64                 `json:"traders" doc:"distinct wallets with a fill (taker or maker) up to now"`
	TradersWindow   int64                 `json:"traders_window" doc:"distinct wallets with a fill in the window"`
	FirstTradeTS    *string               `json:"first_trade_ts" doc:"ISO-8601 UTC, ms; null when the market never traded"`
	LastTradeTS     *string               `json:"last_trade_ts"`
	Outcomes        []PredmktOutcomeStats `json:"outcomes" doc:"one entry per outcome token, by outcome_index"`
}

// PredmktMarketStats answers /v1/predmkt/markets/{condition_id}/stats; ErrNotFound
// for an unknown market. Window figures cover [now - hours, now].
func (q *Queries) PredmktMarketStats(ctx context.Context, conditionID string, hours int64) (PredmktMarketStats, error) {
	src, err := q.marketSource("predmkt market stats")
	if err != nil {
		return PredmktMarketStats{}, err
	}
	info, err := q.marketInfo(ctx, src, conditionID)
	if err != nil {
		return PredmktMarketStats{}, err
	}
	st := PredmktMarketStats{ConditionID: info.ConditionID, Title: info.Title, Status: info.Status, WindowHours: hours,
		Outcomes: []PredmktOutcomeStats{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt market stats"
	now := q.Now().UnixMilli()
	rows, err := q.db.QueryContext(ctx, predmktMarketStatsSQL, conditionID, now, now-hours*3_600_000)
	if err != nil {
		return st, wrap(ctx, op, err)
	}
	defer rows.Close()
	var vol, volW int64
	var first, last sql.NullInt64
	for rows.Next() {
		var o PredmktOutcomeStats
		var v, sh, buy, sell, vw, held int64
		var open, high, low, lp sql.NullFloat64
		var ft, lt sql.NullInt64
		if err := rows.Scan(&o.TokenID, &o.OutcomeIndex, &o.Outcome, &v, &sh, &o.Trades, &buy, &sell,
			&open, &high, &low, &lp, &vw, &o.TradesWindow, &ft, &lt, &o.Holders, &held, &st.Traders, &st.TradersWindow); err != nil {
			return st, wrap(ctx, op, err)
		}
		o.VolumeUSD, o.VolumeShares = MicroUSD(v), Round(float64(sh)/1e6, 6)
		o.TakerBuyUSD, o.TakerSellUSD, o.VolumeWindowUSD = MicroUSD(buy), MicroUSD(sell), MicroUSD(vw)
		o.SharesHeld = Round(float64(held)/1e6, 6)
		if sh > 0 {
			p := Round(float64(v)/float64(sh), 6)
			o.VWAP = &p
		}
		o.Open, o.High, o.Low, o.LastPrice = pmNullF(open), pmNullF(high), pmNullF(low), pmNullF(lp)
		o.FirstTradeTS, o.LastTradeTS = isoPtr(ft), isoPtr(lt)
		vol, volW = vol+v, volW+vw
		st.Trades += o.Trades
		st.TradesWindow += o.TradesWindow
		if ft.Valid && (!first.Valid || ft.Int64 < first.Int64) {
			first = ft
		}
		if lt.Valid && (!last.Valid || lt.Int64 > last.Int64) {
			last = lt
		}
		st.Outcomes = append(st.Outcomes, o)
	}
	if err := rows.Err(); err != nil {
		return st, wrap(ctx, op, err)
	}
	st.VolumeUSD, st.VolumeWindowUSD = MicroUSD(vol), MicroUSD(volW)
	st.FirstTradeTS, st.LastTradeTS = isoPtr(first), isoPtr(last)
	return st, nil
}

func pmNullF(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}
