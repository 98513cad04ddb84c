package handlers

import (
	"context"
	"strings"

	"mdq/query"
)

// pdOHLCVRoute is /v1/perpdex/ohlcv: price candles of one coin from its fills.
func pdOHLCVRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/ohlcv", Area: "perpdex",
		Summary:     "Price candles of one coin, oldest first",
		Description: "Candles from the venue's fills, each trade once (its buy-side fill), on epoch-aligned buckets. from and to bound the bucket start (epoch ms, both inclusive; to defaults to now); a range wider than limit buckets is cut at its recent end: advance from to reach later bars. Buckets without a trade are absent; an unknown coin or from later than to gives no candles.",
		Params: []Param{
			{Name: "coin", Kind: String, Required: true, MaxLen: 64, Doc: "venue coin ticker (exact, e.g. BTC or xyz:TSLA)", Example: "BTC"},
			{Name: "interval", Kind: Enum, Required: true, Enum: query.PerpdexIntervalNames, Example: "1h", Doc: "1m, 5m, 15m, 1h, 4h or 1d",
				EnumMessage: "interval %q is not one of " + strings.Join(query.PerpdexIntervalNames, ", ")},
			{Name: "from", Kind: Int, Default: int64(0), Min: F(0), Doc: "epoch milliseconds, inclusive, on the bucket start; default 0"},
			{Name: "to", Kind: Int, Min: F(0), Doc: "epoch milliseconds, inclusive, on the bucket start; default now"},
			{Name: "limit", Kind: Int, Default: int64(500), Min: F(1), ClampHi: F(1000), Doc: "candles; default 500, above 1000 served at 1000"},
		},
		Response: query.OHLCVPage{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_ohlcv", Description: "Price candles (open, high, low, close, volume) of one perpetuals-venue coin at 1m, 5m, 15m, 1h, 4h or 1d."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			to := q.Now().UnixMilli()
			if v.Has("to") {
				to = v.Int("to")
			}
			return q.PerpdexOHLCV(ctx, query.PerpdexOHLCVParams{Coin: v.Str("coin"), Interval: v.Str("interval"),
				From: v.Int("from"), To: to, Limit: int(v.Int("limit"))})
		},
	}
}
