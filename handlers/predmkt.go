package handlers

import (
	"context"
	"math"

	"mdq/query"
)

// predmktRoutes are the prediction-market routes. Every one rejects unknown query
// parameters (SPEC §7) and answers errors as {"error": ...}.
func predmktRoutes() []*Route {
	return []*Route{{
		Method: "GET", Path: "/v1/predmkt/ohlcv", Area: "predmkt", StrictParams: true,
		Summary:     "Candles of one outcome token",
		Description: "Bars from trades for 1m, 5m, 1h or 1d, oldest first; only intervals that traded. Prices are probabilities 0 to 1; volume is outcome-token shares. A window wider than limit is cut at its recent end: advance from to reach later bars.",
		Params: []Param{
			{Name: "token_id", Kind: String, Required: true, Doc: "outcome-token id (decimal digit string)"},
			{Name: "interval", Kind: Enum, Required: true, Enum: []string{"1m", "5m", "1h", "1d"},
				EnumMessage: "interval %q is not one of 1m, 5m, 1h, 1d"},
			{Name: "from", Kind: Int, Lenient: true, Default: int64(0), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "to", Kind: Int, Lenient: true, Default: int64(math.MaxInt64), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "limit", Kind: Int, Default: int64(500), Min: F(1), ClampHi: F(1000), Doc: "default 500; hard cap 1000"},
		},
		Response: []query.CandleBar{},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktOHLCV(ctx, query.PredmktOHLCVParams{
				TokenID: v.Str("token_id"), Interval: v.Str("interval"),
				From: v.Int("from"), To: v.Int("to"), Limit: int(v.Int("limit")),
			})
		},
	}}
}
