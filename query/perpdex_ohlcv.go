package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexOHLCVSQL = sqlfiles.MustRead("perpdex/ohlcv.sql")

// PerpdexIntervals maps each candle interval of /v1/perpdex/ohlcv to its width.
var PerpdexIntervals = map[string]time.Duration{
	"1m": time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute,
	"1h": time.Hour, "4h": 4 * time.Hour, "1d": 24 * time.Hour,
}

// PerpdexIntervalNames lists the candle intervals in order.
var PerpdexIntervalNames = []string{"1m", "5m", "15m", "1h", "4h", "1d"}

// PerpdexCandle is one price candle of a perpetuals coin.
type PerpdexCandle struct {
	TS        int64    `json:"ts" doc:"bucket start, epoch milliseconds (epoch-aligned: 4h at 00, 04, ... UTC; 1d at midnight UTC)"`
	Time      string   `json:"time" doc:"bucket start, ISO-8601 UTC"`
	Open      float64  `json:"open" doc:"price of the bucket's first trade (by time, then trade id)"`
	High      float64  `json:"high"`
	Low       float64  `json:"low"`
	Close     float64  `json:"close" doc:"price of the bucket's last trade"`
	Volume    float64  `json:"volume" doc:"tokens traded, each trade once"`
	VolumeUsd *float64 `json:"volume_usd" doc:"sum of price times size, each trade once; null for a bucket served from the venue's own candle (candleSnapshot carries no quote volume)"`
	Trades    int64    `json:"trades"`
}

// OHLCVPage is the envelope of /v1/perpdex/ohlcv.
type OHLCVPage struct {
	Coin     string          `json:"coin"`
	Interval string          `json:"interval"`
	Candles  []PerpdexCandle `json:"candles" doc:"oldest first; buckets without a trade are absent"`
}

// PerpdexOHLCVParams are the inputs of PerpdexOHLCV.
type PerpdexOHLCVParams struct {
	Coin     string
	Interval string // a key of PerpdexIntervals
	From, To int64  // epoch ms, both inclusive, compared with the bucket start
	Limit    int
}

// PerpdexOHLCV returns candles of one coin from its fills and the venue's ingested
// candles (ohlcv.sql says which serves a bucket), oldest first; a range wider than
// Limit buckets is cut at its recent end.
func (q *Queries) PerpdexOHLCV(ctx context.Context, p PerpdexOHLCVParams) (OHLCVPage, error) {
	page := OHLCVPage{Coin: p.Coin, Interval: p.Interval, Candles: []PerpdexCandle{}}
	if p.From > p.To {
		return page, nil
	}
	width := PerpdexIntervals[p.Interval].Milliseconds()
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexOHLCVSQL, p.Coin, width, p.From, p.To, p.Limit, q.Now(), p.Interval)
	if err != nil {
		return page, wrap(ctx, "perpdex ohlcv", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c PerpdexCandle
		var usd sql.NullFloat64
		if err := rows.Scan(&c.TS, &c.Open, &c.High, &c.Low, &c.Close, &c.Volume, &usd, &c.Trades); err != nil {
			return page, wrap(ctx, "perpdex ohlcv", err)
		}
		c.Time = ISOSeconds(time.UnixMilli(c.TS))
		c.Volume, c.VolumeUsd = Round(c.Volume, 8), pdNF(usd, 2)
		page.Candles = append(page.Candles, c)
	}
	return page, wrap(ctx, "perpdex ohlcv", rows.Err())
}

// pdNF returns nil for a NULL double and a pointer to the value rounded to places
// otherwise.
func pdNF(n sql.NullFloat64, places int) *float64 {
	if !n.Valid {
		return nil
	}
	r := Round(n.Float64, places)
	return &r
}

// pdNT returns nil for a NULL time and its ISO-8601 UTC seconds form otherwise.
func pdNT(t sql.NullTime) *string {
	if !t.Valid {
		return nil
	}
	s := ISOSeconds(t.Time)
	return &s
}

// pdSide names the side of a signed position size.
func pdSide(szi float64) string {
	if szi < 0 {
		return "short"
	}
	return "long"
}

func pdAbs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
