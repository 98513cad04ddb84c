package query

import (
	"context"
	"database/sql"
	"math"

	sqlfiles "mdq/sql"
)

var perpdexLiquidationMapSQL = sqlfiles.MustRead("perpdex/liquidation_map.sql")

// LiquidationBucket is one price bucket of a liquidation map.
type LiquidationBucket struct {
	PriceLo        float64 `json:"price_lo" doc:"inclusive"`
	PriceHi        float64 `json:"price_hi" doc:"exclusive, but the top bucket includes the range's upper edge"`
	LongUsd        float64 `json:"long_usd" doc:"notional (position_value) of long positions whose liquidation price falls in the bucket"`
	ShortUsd       float64 `json:"short_usd"`
	LongPositions  int64   `json:"long_positions"`
	ShortPositions int64   `json:"short_positions"`
	CumLongUsd     float64 `json:"cum_long_usd" doc:"long notional liquidated by a fall to price_lo: long_usd of this bucket and every one above it"`
	CumShortUsd    float64 `json:"cum_short_usd" doc:"short notional liquidated by a rise to price_hi: short_usd of this bucket and every one below it"`
}

// LiquidationMap is the body of /v1/perpdex/liquidations/map.
type LiquidationMap struct {
	Coin               string              `json:"coin"`
	SnapshotTS         *string             `json:"snapshot_ts" doc:"the newest position batch at or before now; null when the coin has no position in it"`
	MarkPrice          *float64            `json:"mark_price" doc:"the coin's mark in that batch; null when the coin has no position in it"`
	RangePct           float64             `json:"range_pct"`
	BucketPct          float64             `json:"bucket_pct"`
	Positions          int64               `json:"positions" doc:"the coin's open positions in the batch"`
	WithoutLiquidation int64               `json:"positions_without_liquidation_price" doc:"positions reporting liquidation price 0.0 (not mapped)"`
	OutOfRange         int64               `json:"positions_out_of_range" doc:"positions whose liquidation price lies outside mark plus or minus range_pct"`
	TotalLongUsd       float64             `json:"total_long_usd" doc:"long notional mapped"`
	TotalShortUsd      float64             `json:"total_short_usd"`
	Buckets            []LiquidationBucket `json:"buckets" doc:"every bucket from mark * (1 - range) upward, lowest price first, empty ones included; [] when the coin has no position in the batch"`
}

// PerpdexLiquidationBuckets is the bucket count of a map: the range on both sides of
// the mark divided by the bucket width, rounded up.
func PerpdexLiquidationBuckets(rangePct, bucketPct float64) int {
	return int(math.Ceil(2*rangePct/bucketPct - 1e-9))
}

// PerpdexLiquidationMap estimates where one coin's open positions would be liquidated:
// their liquidation prices in the newest batch bucketed around the mark. A coin without
// a position in the batch gets no buckets and null mark and snapshot.
func (q *Queries) PerpdexLiquidationMap(ctx context.Context, coin string, rangePct, bucketPct float64) (LiquidationMap, error) {
	out := LiquidationMap{Coin: coin, RangePct: rangePct, BucketPct: bucketPct, Buckets: []LiquidationBucket{}}
	n := PerpdexLiquidationBuckets(rangePct, bucketPct)
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexLiquidationMapSQL, coin, q.Now(), rangePct/100, bucketPct/100, n)
	if err != nil {
		return out, wrap(ctx, "perpdex liquidation map", err)
	}
	defer rows.Close()
	type agg struct {
		long, short   float64
		nLong, nShort int64
	}
	got := map[int64]agg{}
	var lo, width float64
	found := false
	for rows.Next() {
		var (
			mark, lo0, w0 sql.NullFloat64
			ts            sql.NullTime
			i             sql.NullInt64
			a             agg
		)
		if err := rows.Scan(&mark, &ts, &out.Positions, &out.WithoutLiquidation, &lo0, &w0, &i, &a.long, &a.short, &a.nLong, &a.nShort); err != nil {
			return out, wrap(ctx, "perpdex liquidation map", err)
		}
		if !mark.Valid {
			continue
		}
		found = true
		m, s := mark.Float64, ISOSeconds(ts.Time)
		out.MarkPrice, out.SnapshotTS, lo, width = &m, &s, lo0.Float64, w0.Float64
		if i.Valid {
			got[i.Int64] = a
		}
	}
	if err := rows.Err(); err != nil {
		return out, wrap(ctx, "perpdex liquidation map", err)
	}
	if !found || out.Positions == 0 {
		return out, nil
	}
	mapped := int64(0)
	hi := *out.MarkPrice * (1 + rangePct/100)
	for i := 0; i < n; i++ {
		a := got[int64(i)]
		b := LiquidationBucket{PriceLo: Round(lo+float64(i)*width, 8), PriceHi: Round(math.Min(lo+float64(i+1)*width, hi), 8),
			LongUsd: Round(a.long, 2), ShortUsd: Round(a.short, 2), LongPositions: a.nLong, ShortPositions: a.nShort}
		out.TotalLongUsd += a.long
		out.TotalShortUsd += a.short
		mapped += a.nLong + a.nShort
		out.Buckets = append(out.Buckets, b)
	}
	// Cumulative figures: longs from the top bucket down, shorts from the bottom up.
	var cl, cs float64
	for i := n - 1; i >= 0; i-- {
		cl += got[int64(i)].long
		out.Buckets[i].CumLongUsd = Round(cl, 2)
	}
	for i := 0; i < n; i++ {
		cs += got[int64(i)].short
		out.Buckets[i].CumShortUsd = Round(cs, 2)
	}
	out.OutOfRange = out.Positions - out.WithoutLiquidation - mapped
	out.TotalLongUsd, out.TotalShortUsd = Round(out.TotalLongUsd, 2), Round(out.TotalShortUsd, 2)
	return out, nil
}
