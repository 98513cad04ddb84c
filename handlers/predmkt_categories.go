package handlers

import (
	"context"

	"mdq/query"
)

// predmktCategoryRoutes are the per-category and crypto-family routes of the
// prediction market. Like every prediction-market route they reject unknown query
// parameters and answer errors as {"error": ...}.
func predmktCategoryRoutes() []*Route {
	return []*Route{{
		Method: "GET", Path: "/v1/predmkt/categories", Area: "predmkt", StrictParams: true,
		Summary:     "Markets, volume, traders and smart-money cohort size per category",
		Description: "One row per category (Crypto, Sports, Politics, Pop-Culture, Tech), in that order. Market counts are the lake's current state; volumes and trades count each tape trade once (taker fills) in [now - window, now]; traders count every wallet with a fill, taker or maker. smart_money_wallets is the size of the category's smart-money cohort (at least 1,000 USD realized PnL, five resolved markets and 5,000 USD volume, all on that category; invalid resolutions excluded), from the hourly board the smart_money route uses.",
		Response:    []query.CategoryRow{},
		MCP:         &MCPTool{Credits: 1, Name: "predmkt_categories", Description: "Per prediction-market category (Crypto, Sports, Politics, Pop-Culture, Tech): market counts (open, resolved, invalid), USD volume over 24h, 7d and all time, trades and traders, the size of the category's smart-money cohort and the last trade time."},
		Run: func(ctx context.Context, q *query.Queries, _ Values) (any, error) {
			return q.PredmktCategoriesList(ctx)
		},
	}, {
		Method: "GET", Path: "/v1/predmkt/families", Area: "predmkt", StrictParams: true,
		Summary:     "Crypto up/down market families: outcomes so far and the market trading now",
		Description: "One row per (asset, tenor) family of short-dated crypto up-or-down markets, assets alphabetical, tenors shortest first. up_wins and down_wins count valid resolutions by winning outcome (index 0 is Up). current_market is the open market whose trading window contains now, with the Up token's latest recorded mid (null when none); null when no market of the family is trading.",
		Params: []Param{
			{Name: "asset", Kind: Enum, Enum: query.PredmktFamilyAssets, Doc: "only this asset; default every asset", Example: "btc"},
			{Name: "tenor", Kind: Enum, Enum: query.PredmktFamilyTenors, Doc: "only this tenor; default every tenor"},
		},
		Response: []query.FamilyRow{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_families", Description: "Short-dated crypto up/down prediction-market families (btc, eth, sol; 15m, 1h, 1d): how many resolved Up versus Down, the market trading now with its Up probability (mid), and 24-hour USD volume."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktFamilies(ctx, query.PredmktFamiliesParams{Asset: v.Str("asset"), Tenor: v.Str("tenor")})
		},
	}}
}
