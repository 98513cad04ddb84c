package handlers

import (
	"context"
	"regexp"
	"strings"

	"mdq/query"
)

var pdHexFragment = regexp.MustCompile(`^(0x)?[0-9a-f]{1,40}$`)

// pdTradersRoute is /v1/perpdex/traders: a search over the trader board whose win-rate
// filter is a percent (the leaderboard's is a fraction).
func pdTradersRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/perpdex/traders", Area: "perpdex",
		Summary:     "Search traders by wallet fragment, cohorts and minimums",
		Description: "The leaderboard's rows (TraderRow, same window board, same sort keys) filtered by a fragment of the wallet address, the size and pnl cohorts at once, and minimum trades, win rate, volume and account value. min_win_rate here is a percent: 60 means 60% (the leaderboard's min_win_rate is a fraction, 0.6). rank is the position in the filtered order.",
		Params: []Param{
			pdWindowParam,
			{Name: "sort", Kind: Enum, Enum: query.PerpdexSortKeyNames, Default: "pnl",
				EnumMessage: "sort %q is not a trader sort key: use one of " + strings.Join(query.PerpdexSortKeyNames, ", ")},
			pdOrderParam,
			{Name: "search", Kind: String, MaxLen: 42, Doc: "hex fragment of the wallet address, any case, optional 0x prefix (0x prefix: the address starts with it)"},
			{Name: "size_cohort", Kind: Enum, Enum: query.PerpdexCohortSlugs("size"), Doc: "size band slug"},
			{Name: "pnl_cohort", Kind: Enum, Enum: query.PerpdexCohortSlugs("pnl"), Doc: "pnl band slug (3x_smart, ...)"},
			{Name: "min_trades", Kind: Int, Default: int64(0), Min: F(0), Doc: "minimum closed trades"},
			{Name: "min_win_rate", Kind: Number, Default: 0.0, Min: F(0), Max: F(100), Doc: "percent 0 to 100 (60 is 60%); unlike the leaderboard's fraction"},
			{Name: "min_volume", Kind: Number, Default: 0.0, Min: F(0), Doc: "minimum window volume, USD"},
			{Name: "min_account_value", Kind: Number, Default: 0.0, Min: F(0), Doc: "minimum account value, USD"},
			pdLimit(50, 500), pdCursor,
		},
		Response: query.TraderPage{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_traders", Description: "Search perpetuals-venue traders by wallet fragment, size and PnL cohort, minimum trades, win rate (percent, 60 = 60%), volume and account value; sorted by any leaderboard metric."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			search := strings.ToLower(v.Str("search"))
			if search != "" && !pdHexFragment.MatchString(search) {
				return nil, badInput("search %q is not a hex fragment of a wallet address", v.Str("search"))
			}
			fp := Fingerprint(v, "window", "sort", "order", "search", "size_cohort", "pnl_cohort", "min_trades",
				"min_win_rate", "min_volume", "min_account_value")
			after, err := CursorAfter[query.BoardKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PerpdexTraders(ctx, query.PerpdexTradersParams{Window: v.Str("window"), Sort: v.Str("sort"),
				Desc: v.Str("order") == "desc", Search: search, SizeCohort: v.Str("size_cohort"), PnlCohort: v.Str("pnl_cohort"),
				MinTrades: v.Int("min_trades"), MinWinRatePct: v.Float("min_win_rate"), MinVolume: v.Float("min_volume"),
				MinAccountValue: v.Float("min_account_value"), Limit: int(v.Int("limit")), After: after})
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}
