package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var predmktOHLCVExportSQL = sqlfiles.MustRead("predmkt/export.sql")

// PredmktOHLCVExportParams are the inputs of PredmktOHLCVExport.
type PredmktOHLCVExportParams struct {
	TokenID  string
	Interval string // 1m, 5m, 1h or 1d
	From, To int64  // epoch ms, both inclusive
}

// PredmktOHLCVExport calls emit with every bar of one token, oldest first, as DuckDB
// produces them: no bar cap, and memory does not grow with the series. It runs under
// the caller's context only (no per-query timeout), since a long export to a slow
// client is not a stuck query; an error from emit stops the export and is returned.
func (q *Queries) PredmktOHLCVExport(ctx context.Context, p PredmktOHLCVExportParams, emit func(*CandleBar) error) error {
	const op = "predmkt ohlcv export"
	p.To = min(p.To, q.Now().UnixMilli()) // no bar after the clock, as PredmktOHLCV
	rows, err := q.db.QueryContext(ctx, predmktOHLCVExportSQL, p.TokenID, OHLCVIntervals[p.Interval], p.From, p.To)
	if err != nil {
		return wrap(ctx, op, err)
	}
	defer rows.Close()
	var b CandleBar
	for rows.Next() {
		if err := rows.Scan(&b.TS, &b.Open, &b.High, &b.Low, &b.Close, &b.Volume, &b.Trades); err != nil {
			return wrap(ctx, op, err)
		}
		if err := emit(&b); err != nil {
			return err
		}
	}
	return wrap(ctx, op, rows.Err())
}
