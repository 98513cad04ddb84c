package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var (
	perpdexMarketHistorySQL = sqlfiles.MustRead("perpdex/market_history.sql")
	perpdexCoinExistsSQL    = sqlfiles.MustRead("perpdex/coin_exists.sql")
)

// MarketHour is one hour of a coin's history.
type MarketHour struct {
	TS                string   `json:"ts" doc:"hour, ISO-8601 UTC"`
	MarkPrice         float64  `json:"mark_price" doc:"the hourly mark"`
	OpenInterestUsd   *float64 `json:"open_interest_usd" doc:"long notional of the position batch taken on this hour (equals the short side); null when no batch was taken"`
	OpenInterestLong  *float64 `json:"open_interest_long_usd"`
	OpenInterestShort *float64 `json:"open_interest_short_usd"`
	OpenPositions     *int64   `json:"open_positions" doc:"positions in that batch; null without a batch"`
	FundingRate       *float64 `json:"funding_rate" doc:"rate applied on this hour, fraction per hour; null without a payment"`
	VolumeUsd         float64  `json:"volume_usd" doc:"notional of trades in [ts, ts + 1h), each trade once"`
	Trades            int64    `json:"trades"`
}

// MarketHistory is the body of /v1/perpdex/markets/{coin}.
type MarketHistory struct {
	Coin   string            `json:"coin"`
	Window PerpdexWindowSpan `json:"window"`
	Hours  []MarketHour      `json:"hours" doc:"one per hourly mark in the window, oldest first"`
}

// PerpdexMarketHistory returns one coin's hourly history over a rolling window ending
// now; ErrNotFound for a coin without any mark or fill.
func (q *Queries) PerpdexMarketHistory(ctx context.Context, coin, window string) (MarketHistory, error) {
	now := q.Now()
	span, start := pdSpan(window, now)
	out := MarketHistory{Coin: coin, Window: span, Hours: []MarketHour{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var ok bool
	if err := q.db.QueryRowContext(ctx, perpdexCoinExistsSQL, coin, now).Scan(&ok); err != nil {
		return out, wrap(ctx, "perpdex market history", err)
	}
	if !ok {
		return out, ErrNotFound
	}
	rows, err := q.db.QueryContext(ctx, perpdexMarketHistorySQL, coin, start, now)
	if err != nil {
		return out, wrap(ctx, "perpdex market history", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			h    MarketHour
			ts   time.Time
			l, s sql.NullFloat64
			n    sql.NullInt64
			rate sql.NullFloat64
		)
		if err := rows.Scan(&ts, &h.MarkPrice, &l, &s, &n, &rate, &h.VolumeUsd, &h.Trades); err != nil {
			return out, wrap(ctx, "perpdex market history", err)
		}
		h.TS = ISOSeconds(ts)
		h.OpenInterestLong, h.OpenInterestShort = pdNF(l, 2), pdNF(s, 2)
		h.OpenInterestUsd = h.OpenInterestLong
		if n.Valid {
			h.OpenPositions = &n.Int64
		}
		if rate.Valid {
			h.FundingRate = &rate.Float64
		}
		h.VolumeUsd = Round(h.VolumeUsd, 2)
		out.Hours = append(out.Hours, h)
	}
	return out, wrap(ctx, "perpdex market history", rows.Err())
}
