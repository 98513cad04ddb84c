package handlers

import (
	"context"
	"strings"
	"time"

	"mdq/query"
)

// Perpetuals-venue routes. Errors answer {"error": ...}; keyset cursors are bound to the
// filter parameters that produced them (a cursor resent with other filters is a 400).

var (
	pdWindowParam = Param{Name: "window", Kind: Enum, Enum: []string{"1d", "7d", "30d", "all"}, Default: "30d",
		Doc: "rolling window of N times 24 hours ending now; all is unbounded"}
	pdOrderParam = Param{Name: "order", Kind: Enum, Enum: []string{"asc", "desc"}, Default: "desc"}
	pdCursor     = Param{Name: "cursor", Kind: String, Doc: "nextCursor of the previous page; resend the same filters"}
	pdStart      = Param{Name: "start", Kind: String, Doc: "ISO-8601 UTC lower bound, inclusive (2026-11-01T00:00:00Z or 2026-11-01)"}
	pdEnd        = Param{Name: "end", Kind: String, Doc: "ISO-8601 UTC upper bound, inclusive; default now"}
)

func pdLimit(def, max float64) Param {
	return Param{Name: "limit", Kind: Int, Default: int64(def), Min: F(1), ClampHi: F(max),
		Doc: "rows per page; default " + num(def) + ", above " + num(max) + " is served at " + num(max)}
}

// pdTime parses an ISO-8601 UTC bound; def applies when the parameter was not sent.
func pdTime(v Values, name string, def time.Time) (time.Time, error) {
	s := v.Str(name)
	if s == "" {
		return def, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badInput("%s must be an ISO-8601 UTC time such as 2026-11-01T00:00:00Z, got %q", name, s)
}

// pdRange parses start and end; end defaults to the store clock.
func pdRange(q *query.Queries, v Values) (time.Time, time.Time, error) {
	start, err := pdTime(v, "start", time.Unix(0, 0).UTC())
	if err != nil {
		return start, start, err
	}
	end, err := pdTime(v, "end", q.Now())
	return start, end, err
}

var pdAddress = Param{Name: "address", In: "path", Kind: Address, Required: true, Doc: "wallet, 0x-prefixed 40 hex digits",
	Example: "0xb493efeb346bbe1c7dee8a1daa7f5726c49f2ceb",
	Message: "address %q is not a 0x-prefixed 40-hex-digit wallet address"}

func perpdexRoutes() []*Route {
	return []*Route{
		{
			Method: "GET", Path: "/v1/perpdex/liquidations", Area: "perpdex",
			Summary:     "Liquidations, newest first, with the cohort labels of the liquidated wallet",
			Description: "Liquidated users' fills. Each row carries the cohort label published for its hour (point_in_time) or, before 2026-04-07, in the newest unpublished hours and for wallets missing from that hour, today's label (current, lookahead). Wallets in neither source have null labels.",
			Params: []Param{
				{Name: "coin", Kind: String, Doc: "venue coin ticker (exact, e.g. BTC or xyz:TSLA)"},
				{Name: "wallet", Kind: Address, Doc: "one wallet"},
				pdStart, pdEnd,
				{Name: "direction", Kind: Enum, Enum: []string{"long", "short"}, Doc: "the side that was closed"},
				pdLimit(100, 5000), pdCursor,
			},
			Response: query.LiquidationsPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_liquidations", Description: "Recent liquidations on the perpetuals venue with the liquidated wallet's size and PnL cohort (point-in-time where published)."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				start, end, err := pdRange(q, v)
				if err != nil {
					return nil, err
				}
				fp := Fingerprint(v, "coin", "wallet", "start", "end", "direction")
				after, err := CursorAfter[query.LiquidationKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexLiquidations(ctx, query.PerpdexLiquidationsParams{Coin: v.Str("coin"), Wallet: v.Str("wallet"),
					Direction: v.Str("direction"), Start: start, End: end, Limit: int(v.Int("limit")), After: after})
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/leaderboard", Area: "perpdex",
			Summary:     "Trader leaderboard over a window, rebuilt hourly",
			Description: "Every wallet with a fill in the window, with trade-derived metrics (closed trades reconstructed from fills). Sort by any metric; filter by cohort on the size, pnl or pnl_abs axis and by minimum trades, win rate (a fraction) and volume. Both cohort labels are returned whatever the axis.",
			Params: []Param{
				pdWindowParam,
				{Name: "sort", Kind: Enum, Enum: query.PerpdexSortKeyNames, Default: "pnl",
					EnumMessage: "sort %q is not a leaderboard sort key: use one of " + strings.Join(query.PerpdexSortKeyNames, ", ")},
				pdOrderParam,
				{Name: "cohort", Kind: String, MaxLen: 64, Doc: "one label slug on the chosen axis; spaces read as underscores (3x smart = 3x_smart)"},
				{Name: "axis", Kind: Enum, Enum: []string{"size", "pnl", "pnl_abs"}, Default: "size"},
				{Name: "min_trades", Kind: Int, Default: int64(0), Min: F(0), Doc: "minimum closed trades"},
				{Name: "min_win_rate", Kind: Number, Default: 0.0, Min: F(0), Max: F(1), Doc: "fraction 0 to 1 (0.6 is 60%)"},
				{Name: "min_volume", Kind: Number, Default: 0.0, Min: F(0), Doc: "minimum window volume, USD"},
				pdLimit(25, 500), pdCursor,
			},
			Response: query.TraderPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_leaderboard", Description: "Perpetuals-venue trader leaderboard: PnL, ROI, win rates, drawdowns and cohorts per wallet over 1d, 7d, 30d or all."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				axis := v.Str("axis")
				cohort := strings.ReplaceAll(strings.TrimSpace(v.Str("cohort")), " ", "_")
				if cohort != "" {
					ok := false
					for _, s := range query.PerpdexCohortSlugs(axis) {
						if strings.EqualFold(s, cohort) {
							ok, cohort = true, s
						}
					}
					if !ok {
						return nil, badInput("cohort %q is not a label of axis %s: use one of %s", v.Str("cohort"), axis,
							strings.Join(query.PerpdexCohortSlugs(axis), ", "))
					}
				}
				fp := Fingerprint(v, "window", "sort", "order", "axis", "cohort", "min_trades", "min_win_rate", "min_volume")
				after, err := CursorAfter[query.BoardKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexLeaderboard(ctx, query.PerpdexLeaderboardParams{Window: v.Str("window"), Sort: v.Str("sort"),
					Desc: v.Str("order") == "desc", Axis: axis, Cohort: cohort, MinTrades: v.Int("min_trades"),
					MinWinRate: v.Float("min_win_rate"), MinVolume: v.Float("min_volume"), Limit: int(v.Int("limit")), After: after})
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/leaderboard/flow-adjusted", Area: "perpdex",
			Summary:     "Leaderboard ranked on fills-derived realized PnL, with flow attribution",
			Description: "TraderRow plus attributed (trading, funding and account movements), flow (deposits, withdrawals, sends) and flow_unbalanced (a send in the window makes attributed unreliable; rank unaffected, never filtered).",
			Params:      []Param{pdWindowParam, pdLimit(100, 500), pdCursor},
			Response:    query.FlowAdjustedPage{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_leaderboard_flow_adjusted", Description: "Traders ranked on realized trading PnL from fills (deposits excluded), with deposits, withdrawals, funding and unrealized PnL attributed."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				fp := Fingerprint(v, "window")
				after, err := CursorAfter[query.BoardKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexFlowAdjusted(ctx, v.Str("window"), int(v.Int("limit")), after)
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/stats", Area: "perpdex",
			Summary:     "Hourly venue-wide statistics, newest first",
			Description: "Without a cursor the page covers the limit hours ending at end (start only narrows it, so size limit to the range); with a cursor it continues down to start.",
			Params:      []Param{pdStart, pdEnd, pdLimit(500, 5000), pdCursor},
			Response:    query.StatsPage{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_stats", Description: "Hourly venue-wide statistics, newest first: total perp equity, wallets, open positions long and short, open interest, positions in profit."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				start, end, err := pdRange(q, v)
				if err != nil {
					return nil, err
				}
				fp := Fingerprint(v, "start", "end")
				before, err := CursorAfter[time.Time](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexStats(ctx, query.PerpdexStatsParams{Start: start, End: end, Limit: int(v.Int("limit")), Before: before})
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/wallets/{address}/trades", Area: "perpdex",
			Summary:     "One wallet's trades reconstructed from fills, newest close first",
			Description: "A trade is a position cycle on one asset from flat to flat; a flip closes one and opens the next. start and end filter on close time (for an open trade, its latest fill).",
			Params:      []Param{pdAddress, {Name: "coin", Kind: String, Doc: "asset (exact, e.g. BTC or xyz:TSLA); omit for all"}, pdStart, pdEnd, pdLimit(100, 5000), pdCursor},
			Response:    query.WalletTradesPage{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_wallet_trades", Description: "A wallet's closed and open trades reconstructed from fills (flat to flat), newest first: direction, entry and exit VWAP, size, PnL, fees, duration."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				start, end, err := pdRange(q, v)
				if err != nil {
					return nil, err
				}
				fp := Fingerprint(v, "address", "coin", "start", "end")
				after, err := CursorAfter[query.PerpdexTradeKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexWalletTrades(ctx, query.PerpdexWalletTradesParams{Wallet: v.Str("address"), Coin: v.Str("coin"),
					Start: start, End: end, Limit: int(v.Int("limit")), After: after})
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/wallets/{address}/trades/summary", Area: "perpdex",
			Summary:     "TradeStats of one wallet, overall and by coin",
			Description: "Over trades that opened or closed in a rolling window of N times 24 hours (all: every trade). Open trades are counted and partial-close PnL is included.",
			Params:      []Param{pdAddress, {Name: "window", Kind: Enum, Enum: []string{"1d", "7d", "30d", "all"}, Default: "all"}},
			Response:    query.TradesSummary{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_wallet_trades_summary", Description: "Trade statistics of one wallet over a rolling window, overall and per coin: wins, losses, win rates, PnL, profit factor, durations, sizes. Open trades and partial-close PnL are included."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				return q.PerpdexTradesSummary(ctx, v.Str("address"), v.Str("window"))
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/builders", Area: "perpdex",
			Summary:     "Builder codes ranked by fee, volume, users or fills",
			Description: "sort=fee ranks the builder's own cut (builder_fee), not the traders' fee.",
			Params: []Param{pdWindowParam,
				{Name: "sort", Kind: Enum, Enum: []string{"fee", "volume", "users", "fills"}, Default: "fee"},
				pdOrderParam, pdLimit(100, 500), pdCursor},
			Response: query.BuildersPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_builders", Description: "Builder-code front ends of the perpetuals venue ranked by their fee revenue, volume, users or fills, with market share."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				fp := Fingerprint(v, "window", "sort", "order")
				after, err := CursorAfter[query.BoardKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexBuilders(ctx, v.Str("window"), v.Str("sort"), v.Str("order"), int(v.Int("limit")), after)
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/builders/stats", Area: "perpdex",
			Summary:     "All builders: window totals, lifetime and one bucket per date",
			Description: "The literal segment stats is never a builder lookup. Read lifetime.first_seen for the actual coverage start.",
			Params:      []Param{pdWindowParam},
			Response:    query.BuildersStats{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_builders_stats", Description: "Venue-wide builder-code economics: totals, daily buckets and lifetime coverage."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				return q.PerpdexBuildersStats(ctx, v.Str("window"))
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/builders/{builder}", Area: "perpdex", CLI: "builder",
			Summary:     "One builder: totals, by asset, by dex, user volume deciles, lifetime",
			Description: "totals.assets and totals.dexes count the whole window even when by_asset and by_dex are truncated to breakdown_limit rows. 404 for a builder with no fill in the history.",
			Params: []Param{
				{Name: "builder", In: "path", Kind: Address, Required: true, Message: "builder %q is not a 0x-prefixed 40-hex-digit address",
					Example: "0xfb2349430d72010c587d0ea4845ae6d630da53bd"},
				pdWindowParam,
				{Name: "breakdown_limit", Kind: Int, Default: int64(100), Min: F(1), ClampHi: F(1000), Doc: "rows per breakdown; default 100, above 1000 served at 1000"},
			},
			Response: query.BuilderDetail{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_builder", Description: "One builder code's fees, volume, market share, assets, dexes, user deciles and lifetime figures."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				return q.PerpdexBuilder(ctx, v.Str("builder"), v.Str("window"), int(v.Int("breakdown_limit")))
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/builders/{builder}/users", Area: "perpdex", CLI: "builder-users",
			Summary: "The wallets behind a builder's totals, largest window volume first",
			Params: []Param{{Name: "builder", In: "path", Kind: Address, Required: true, Message: "builder %q is not a 0x-prefixed 40-hex-digit address",
				Example: "0xfb2349430d72010c587d0ea4845ae6d630da53bd"}, pdWindowParam, pdLimit(100, 1000), pdCursor},
			Response: query.BuilderUsersPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_builder_users", Description: "The wallets behind a builder's totals over a window: volume, fills, fees paid to the builder and closed PnL per user."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				fp := Fingerprint(v, "builder", "window")
				after, err := CursorAfter[query.BoardKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexBuilderUsers(ctx, v.Str("builder"), v.Str("window"), int(v.Int("limit")), after)
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/hype/holders", Area: "perpdex",
			Summary:     "HYPE holders by spot plus staked balance",
			Description: "The union of spot and staked (delegated) balances, last known per wallet; USD at one price (hype_price_usd) for every row; rank counts in the requested order.",
			Params:      []Param{pdOrderParam, pdLimit(100, 500), pdCursor},
			Response:    query.HoldersPage{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_hype_holders", Description: "HYPE holders ranked by spot plus staked balance, with USD at one current price and cohort labels."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				fp := Fingerprint(v, "order")
				after, err := CursorAfter[int64](v, fp)
				if err != nil {
					return nil, err
				}
				var rank int64
				if after != nil {
					rank = *after
				}
				page, err := q.PerpdexHypeHolders(ctx, v.Str("order") == "desc", rank, int(v.Int("limit")))
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/positions/match", Area: "perpdex",
			Summary:     "Open positions like a described one",
			Description: "Same coin and side, leverage within 0.5, entry inside the first of three bands that matches (tight 0.05%, medium 0.5%, wide 1.0%), ranked by closeness of entry to the mark; only positions seen within 15 minutes of the newest snapshot batch.",
			Params: []Param{
				{Name: "coin", Kind: String, Required: true, Doc: "venue coin ticker", Example: "ETH"},
				{Name: "side", Kind: Enum, Required: true, Enum: []string{"long", "short"}, Example: "long"},
				{Name: "leverage", Kind: Number, Required: true, Min: F(1e-9), Doc: "positive; matched within plus or minus 0.5", Example: "10"},
				{Name: "entry_price", Kind: Number, Required: true, Min: F(1e-12), Doc: "positive", Example: "1900"},
				{Name: "mark_price", Kind: Number, Min: F(1e-12), Doc: "ranks matches; defaults to entry_price"},
				{Name: "limit", Kind: Int, Default: int64(50), ClampLo: F(1), ClampHi: F(50), Doc: "declared default 50, max 500; clamped into 1 to 50, never rejected"},
			},
			Response: query.MatchPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_positions_match", Description: "Find open perpetuals positions matching a coin, side, leverage and entry price (for example to identify a wallet from a screenshot)."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				m := query.MatchQuery{Coin: v.Str("coin"), Side: v.Str("side"), Leverage: v.Float("leverage"), EntryPrice: v.Float("entry_price"),
					MarkPriceHint: v.Float("entry_price")}
				if v.Has("mark_price") {
					m.MarkPriceHint = v.Float("mark_price")
				}
				return q.PerpdexMatchPositions(ctx, m, int(v.Int("limit"))) // the in-memory newest batch (query/perpdex_positions_match.go)
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/markets", Area: "perpdex",
			Summary:     "Every coin: mark, open interest, funding rate and 24h volume",
			Description: "Mark is the latest hourly mark; open interest is from the newest position batch; funding is the latest hourly rate; volume counts each trade once over the last 24 hours. Ordered by 24h volume.",
			Response:    query.MarketsPage{},
			MCP:         &MCPTool{Credits: 1, Name: "perpdex_markets", Description: "Every perpetual coin: mark price, open interest, funding rate and 24h volume."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				return q.PerpdexMarkets(ctx)
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/wallets/{address}/fills", Area: "perpdex",
			Summary:  "One wallet's fills, newest first",
			Params:   []Param{pdAddress, {Name: "coin", Kind: String, Doc: "asset (exact); omit for all"}, pdStart, pdEnd, pdLimit(100, 2000), pdCursor},
			Response: query.WalletFillsPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_wallet_fills", Description: "A wallet's raw fills, newest first: coin, side, price, size, direction, closed PnL, fees, builder."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				start, end, err := pdRange(q, v)
				if err != nil {
					return nil, err
				}
				fp := Fingerprint(v, "address", "coin", "start", "end")
				after, err := CursorAfter[query.FillKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexWalletFills(ctx, v.Str("address"), v.Str("coin"), start, end, int(v.Int("limit")), after)
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		{
			Method: "GET", Path: "/v1/perpdex/wallets/{address}/ledger", Area: "perpdex",
			Summary:  "One wallet's deposits, withdrawals and sends, newest first",
			Params:   []Param{pdAddress, pdStart, pdEnd, pdLimit(100, 2000), pdCursor},
			Response: query.WalletLedgerPage{},
			MCP:      &MCPTool{Credits: 1, Name: "perpdex_wallet_ledger", Description: "A wallet's deposits, withdrawals and sends, newest first."},
			Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
				start, end, err := pdRange(q, v)
				if err != nil {
					return nil, err
				}
				fp := Fingerprint(v, "address", "start", "end")
				after, err := CursorAfter[query.LedgerKey](v, fp)
				if err != nil {
					return nil, err
				}
				page, err := q.PerpdexWalletLedger(ctx, v.Str("address"), start, end, int(v.Int("limit")), after)
				page.NextCursor = NextCursor(fp, page.Next)
				return page, err
			},
		},
		pdOHLCVRoute(), pdTradersRoute(), pdWalletRoute(), pdWalletPositionsRoute(), pdWalletFundingRoute(),
		pdWalletPortfolioRoute(), pdMarketRoute(), pdFundingRoute(), pdPositionsRoute(), pdCohortsRoute(),
		pdLiquidationMapRoute(),
	}
}
