package handlers

import (
	"context"

	"mdq/query"
)

// pdWalletRoute is /v1/perpdex/wallets/{address}: one wallet's account overview.
func pdWalletRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/wallets/{address}", Area: "perpdex", CLI: "wallet",
		Summary:     "One wallet's account overview: equity, open positions, cohorts, lifetime figures",
		Description: "Latest hourly account snapshot, the wallet's positions in the newest position batch (count, notional, unrealized PnL), today's cohort labels and lifetime totals of fills, trades, funding and ledger flows. Nothing after now counts. 404 for a wallet the lake holds nothing of.",
		Params:      []Param{pdAddress},
		Response:    query.WalletOverview{},
		MCP:         &MCPTool{Credits: 1, Name: "perpdex_wallet", Description: "One perpetuals-venue wallet: account value, open position count and unrealized PnL, size and PnL cohort labels, and lifetime volume, PnL, fees, funding, trades and deposits."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexWallet(ctx, v.Str("address"))
		},
	}
}

// pdWalletPositionsRoute is /v1/perpdex/wallets/{address}/positions.
func pdWalletPositionsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/wallets/{address}/positions", Area: "perpdex",
		Summary:     "One wallet's open positions in the newest snapshot batch",
		Description: "The wallet's rows of the newest venue-wide position snapshot batch at or before now, largest notional first; [] when the wallet is flat in it.",
		Params:      []Param{pdAddress},
		Response:    query.WalletPositionsPage{},
		MCP:         &MCPTool{Credits: 1, Name: "perpdex_wallet_positions", Description: "A perpetuals-venue wallet's open positions: coin, side, size, entry and mark price, leverage, liquidation price and unrealized PnL."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexWalletPositions(ctx, v.Str("address"))
		},
	}
}

// pdWalletFundingRoute is /v1/perpdex/wallets/{address}/funding.
func pdWalletFundingRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/wallets/{address}/funding", Area: "perpdex",
		Summary:     "One wallet's hourly funding payments, newest first",
		Description: "One row per position and funding hour: the rate applied and the payment (negative when the wallet paid). Ordered by time descending, then coin.",
		Params:      []Param{pdAddress, {Name: "coin", Kind: String, Doc: "asset (exact); omit for all"}, pdStart, pdEnd, pdLimit(100, 2000), pdCursor},
		Response:    query.WalletFundingPage{},
		MCP:         &MCPTool{Credits: 1, Name: "perpdex_wallet_funding", Description: "A wallet's hourly funding payments (negative when it paid), newest first."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			start, end, err := pdRange(q, v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "address", "coin", "start", "end")
			after, err := CursorAfter[query.FundingKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PerpdexWalletFunding(ctx, v.Str("address"), v.Str("coin"), start, end, int(v.Int("limit")), after)
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

// pdWalletPortfolioRoute is /v1/perpdex/wallets/{address}/portfolio.
func pdWalletPortfolioRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/wallets/{address}/portfolio", Area: "perpdex",
		Summary:     "One wallet's account value and cumulative PnL, hourly or daily",
		Description: "One point per bucket from the window start's bucket to now's: the bucket's last account snapshot (null without one), its PnL (closed PnL minus fees plus funding) and the PnL summed from the window start. For all, the series starts at the wallet's first bucket with data.",
		Params: []Param{pdAddress,
			{Name: "window", Kind: Enum, Enum: []string{"1d", "7d", "30d", "all"}, Default: "7d", Doc: "rolling N times 24 hours ending now; all is unbounded"},
			{Name: "resolution", Kind: Enum, Enum: []string{"hourly", "daily"}, Default: "hourly", Doc: "bucket width: UTC hours or UTC dates"}},
		Response: query.PortfolioPage{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_wallet_portfolio", Description: "A wallet's account value and cumulative PnL series over a window, hourly or daily."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexWalletPortfolio(ctx, v.Str("address"), v.Str("window"), v.Str("resolution"))
		},
	}
}

// pdFundingRoute is /v1/perpdex/funding: the venue's funding rate history.
func pdFundingRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/funding", Area: "perpdex",
		Summary:     "Hourly funding rates per coin, newest first",
		Description: "One row per coin and funding hour with a payment: the rate applied, its annualized form and how many positions paid or received it. Ordered by time descending, then coin.",
		Params:      []Param{{Name: "coin", Kind: String, Doc: "venue coin ticker (exact); omit for all"}, pdStart, pdEnd, pdLimit(500, 5000), pdCursor},
		Response:    query.FundingPage{},
		MCP:         &MCPTool{Credits: 1, Name: "perpdex_funding", Description: "Hourly funding-rate history per coin, with the annualized rate."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			start, end, err := pdRange(q, v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "coin", "start", "end")
			after, err := CursorAfter[query.FundingKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PerpdexFunding(ctx, v.Str("coin"), start, end, int(v.Int("limit")), after)
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

// pdMarketRoute is /v1/perpdex/markets/{coin}: one coin's hourly history.
func pdMarketRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/markets/{coin}", Area: "perpdex", CLI: "market",
		Summary:     "One coin's hourly history: mark, open interest, funding rate, volume",
		Description: "One row per hourly mark in the window, oldest first: the mark, the open interest of the position batch taken on that hour (null before position snapshots began), the funding rate applied on it and the volume of the hour's trades (each trade once). 404 for a coin without any mark or fill.",
		Params: []Param{
			{Name: "coin", In: "path", Kind: String, Required: true, Doc: "venue coin ticker (exact, e.g. BTC or xyz:TSLA)", Example: "BTC"},
			{Name: "window", Kind: Enum, Enum: []string{"1d", "7d", "30d", "all"}, Default: "7d", Doc: "rolling N times 24 hours ending now; all is unbounded"},
		},
		Response: query.MarketHistory{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_market", Description: "One coin's hourly history: mark price, open interest, funding rate and volume."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexMarketHistory(ctx, v.Str("coin"), v.Str("window"))
		},
	}
}

// pdPositionsRoute is /v1/perpdex/positions: the largest open positions venue-wide.
func pdPositionsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/positions", Area: "perpdex",
		Summary:     "The largest open positions venue-wide, from the newest snapshot batch",
		Description: "Positions of the newest position snapshot batch at or before now, largest notional (position_value) first, then coin and wallet; filter by coin and side. Holders carry today's cohort labels.",
		Params: []Param{
			{Name: "coin", Kind: String, Doc: "venue coin ticker (exact); omit for all"},
			{Name: "side", Kind: Enum, Enum: []string{"long", "short"}},
			pdLimit(100, 500), pdCursor,
		},
		Response: query.VenuePositionsPage{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_positions", Description: "The largest open positions on the perpetuals venue (optionally one coin or side) with entry, mark, leverage, liquidation price, unrealized PnL and the holder's cohorts."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			fp := Fingerprint(v, "coin", "side")
			after, err := CursorAfter[query.PositionKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PerpdexPositions(ctx, v.Str("coin"), v.Str("side"), int(v.Int("limit")), after)
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

// pdCohortsRoute is /v1/perpdex/cohorts: hourly positioning of each coin by cohort.
func pdCohortsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/cohorts", Area: "perpdex",
		Summary:     "Hourly long/short positioning of each coin, split by cohort",
		Description: "For each position batch taken on the hour: each coin's long and short notional, split by the holders' size or pnl cohort (the label published for that hour, else today's, else unknown). Newest hour first, then coin and cohort slug.",
		Params: []Param{
			{Name: "coin", Kind: String, Doc: "venue coin ticker (exact); omit for all"},
			{Name: "axis", Kind: Enum, Enum: []string{"size", "pnl"}, Default: "size"},
			pdStart, pdEnd, pdLimit(500, 5000), pdCursor,
		},
		Response: query.CohortsPage{},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			start, end, err := pdRange(q, v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "coin", "axis", "start", "end")
			after, err := CursorAfter[query.CohortKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PerpdexCohorts(ctx, query.PerpdexCohortsParams{Coin: v.Str("coin"), Axis: v.Str("axis"),
				Start: start, End: end, Limit: int(v.Int("limit")), After: after})
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

// pdMaxLiqBuckets bounds a liquidation map's bucket count.
const pdMaxLiqBuckets = 400

// pdLiquidationMapRoute is /v1/perpdex/liquidations/map.
func pdLiquidationMapRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/liquidations/map", Area: "perpdex",
		Summary:     "Estimated liquidation clusters around the mark",
		Description: "The liquidation prices of one coin's open positions in the newest snapshot batch, bucketed from mark * (1 - range_pct/100) to mark * (1 + range_pct/100) in steps of mark * bucket_pct/100: long and short notional at risk per bucket and cumulatively from the mark outward. An estimate: positions move, and the venue's liquidation price assumes today's margin. A coin without a position in the batch (or unknown) answers no buckets, null mark_price and snapshot_ts.",
		Params: []Param{
			{Name: "coin", Kind: String, Required: true, MaxLen: 64, Doc: "venue coin ticker (exact)", Example: "BTC"},
			{Name: "range_pct", Kind: Number, Default: 20.0, Min: F(0.5), Max: F(90), Doc: "percent of the mark on each side; default 20"},
			{Name: "bucket_pct", Kind: Number, Default: 1.0, Min: F(0.05), Max: F(10), Doc: "bucket width, percent of the mark; default 1; range_pct * 2 / bucket_pct at most 400 buckets"},
		},
		Response: query.LiquidationMap{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_liquidation_map", Description: "Where a perpetuals coin's open positions would be liquidated: long and short notional per price bucket around the mark, from the newest position snapshot."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			if n := query.PerpdexLiquidationBuckets(v.Float("range_pct"), v.Float("bucket_pct")); n > pdMaxLiqBuckets {
				return nil, badInput("range_pct %s with bucket_pct %s makes %d buckets; at most %d", num(v.Float("range_pct")),
					num(v.Float("bucket_pct")), n, pdMaxLiqBuckets)
			}
			return q.PerpdexLiquidationMap(ctx, v.Str("coin"), v.Float("range_pct"), v.Float("bucket_pct"))
		},
	}
}
