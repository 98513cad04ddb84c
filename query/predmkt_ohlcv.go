package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var predmktOHLCVSQL = sqlfiles.MustRead("predmkt/ohlcv.sql")

// OHLCVIntervals maps each accepted interval to its bucket width in milliseconds.
var OHLCVIntervals = map[string]int64{"1m": 60_000, "5m": 300_000, "1h": 3_600_000, "1d": 86_400_000}

// PredmktOHLCVParams are the inputs of PredmktOHLCV.
type PredmktOHLCVParams struct {
	TokenID  string
	Interval string // 1m, 5m, 1h or 1d
	From, To int64  // epoch ms, both inclusive
	Limit    int
}

// CandleBar is one bar of /v1/predmkt/ohlcv.
type CandleBar struct {
	TS     int64   `json:"ts" doc:"bar start, epoch ms"`
	Open   float64 `json:"open" doc:"first trade price (probability 0 to 1)"`
	High   float64 `json:"high"`
	Low    float64 `json:"low"`
	Close  float64 `json:"close" doc:"last trade price"`
	Volume float64 `json:"volume" doc:"outcome-token shares traded, not dollars"`
	Trades int64   `json:"trades"`
}

// PredmktOHLCV returns the bars of one token, oldest first; a window wider than
// Limit is cut at its recent end. The bars are ohlcv.sql's over the trades files of
// the dates the range touches (see docs/PREDMKT.md, Speed).
func (q *Queries) PredmktOHLCV(ctx context.Context, p PredmktOHLCVParams) ([]CandleBar, error) {
	const op = "predmkt ohlcv"
	items := []CandleBar{}
	width := OHLCVIntervals[p.Interval]
	// No bar after the clock: a trade later than the store clock was not yet known.
	p.To = min(p.To, q.Now().UnixMilli())
	if p.From > p.To || width <= 0 {
		return items, nil
	}
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	lo, hi, ok := ix.tradeDates(p.From, p.To)
	if !ok {
		return items, nil // no trades file holds a trade of the range
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	// The trades files are sorted by token then time: DuckDB reads only the row
	// groups of this token, in the date partitions the range touches.
	rows, err := q.db.QueryContext(ctx, predmktOHLCVSQL, p.TokenID, width, p.From, p.To, p.Limit, lo, hi)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var i CandleBar
		if err := rows.Scan(&i.TS, &i.Open, &i.High, &i.Low, &i.Close, &i.Volume, &i.Trades); err != nil {
			return nil, wrap(ctx, op, err)
		}
		items = append(items, i)
	}
	return items, wrap(ctx, op, rows.Err())
}
