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
// Limit is cut at its recent end. The bars are those of ohlcv.sql, computed from the
// taker trades the tape index holds in memory (see docs/PREDMKT.md, Speed).
func (q *Queries) PredmktOHLCV(ctx context.Context, p PredmktOHLCVParams) ([]CandleBar, error) {
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return nil, wrap(ctx, "predmkt ohlcv", err)
	}
	width := OHLCVIntervals[p.Interval]
	items := []CandleBar{}
	if p.From > p.To || width <= 0 {
		return items, nil
	}
	t := ix.tapeTakerTrades(p.TokenID, p.From, p.To)
	for i, ts := range t.ts {
		bucket := ts - ts%width
		if n := len(items); n == 0 || items[n-1].TS != bucket {
			if n == p.Limit {
				break
			}
			items = append(items, CandleBar{TS: bucket, Open: t.price[i], High: t.price[i], Low: t.price[i]})
		}
		b := &items[len(items)-1]
		b.High, b.Low = max(b.High, t.price[i]), min(b.Low, t.price[i])
		b.Close = t.price[i]
		b.Volume += t.size[i]
		b.Trades++
	}
	return items, nil
}

// ohlcvFromSQL computes the same bars straight from the files; the tests hold the
// index to it.
func (q *Queries) ohlcvFromSQL(ctx context.Context, p PredmktOHLCVParams) ([]CandleBar, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, predmktOHLCVSQL, p.TokenID, OHLCVIntervals[p.Interval], p.From, p.To, p.Limit)
	if err != nil {
		return nil, wrap(ctx, "predmkt ohlcv", err)
	}
	defer rows.Close()
	items := []CandleBar{}
	for rows.Next() {
		var i CandleBar
		if err := rows.Scan(&i.TS, &i.Open, &i.High, &i.Low, &i.Close, &i.Volume, &i.Trades); err != nil {
			return nil, wrap(ctx, "predmkt ohlcv", err)
		}
		items = append(items, i)
	}
	return items, wrap(ctx, "predmkt ohlcv", rows.Err())
}
