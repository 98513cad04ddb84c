package handlers

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

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
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Required: true, Doc: "outcome-token id (decimal digit string)",
				Example: "68783291989961754191311255821197966179714110417478218772409060504263891222377"},
			{Name: "interval", Kind: Enum, Required: true, Enum: []string{"1m", "5m", "1h", "1d"},
				EnumMessage: "interval %q is not one of 1m, 5m, 1h, 1d", Example: "1h"},
			{Name: "from", Kind: Int, Lenient: true, Default: int64(0), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "to", Kind: Int, Lenient: true, Default: int64(math.MaxInt64), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "limit", Kind: Int, Default: int64(500), Min: F(1), ClampHi: F(1000), Doc: "default 500; hard cap 1000"},
		},
		Response: []query.CandleBar{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_ohlcv", Description: "Candles (open, high, low, close as probabilities; volume in shares) of one prediction-market outcome token."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktOHLCV(ctx, query.PredmktOHLCVParams{
				TokenID: v.Str("token_id"), Interval: v.Str("interval"),
				From: v.Int("from"), To: v.Int("to"), Limit: int(v.Int("limit")),
			})
		},
	}, predmktLeaderboardRoute(), predmktSmartMoneyRoute(), predmktOrderbookRoute(), predmktEventsRoute(),
		predmktMarketsRoute(), predmktMarketRoute(), predmktMarketStatsRoute(), predmktMarketHoldersRoute(),
		predmktOHLCVExportRoute(), predmktTradesRoute(), predmktSettlementsRoute(),
		predmktWalletRoute(), predmktWalletPositionsRoute(), predmktWalletTradesRoute(), predmktWalletPnLRoute()}
}

var predmktCategoryEnum = append([]string{"all"}, query.PredmktCategories...)

func predmktLeaderboardRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/leaderboard", Area: "predmkt", StrictParams: true,
		Summary:     "Wallet leaderboard by realized PnL",
		Description: "Served from a board rebuilt every hour (and by `mdq rebuild`) and cached for the hour. Realized PnL counts only resolved markets: the winning outcome pays 1 per share, the losing 0; invalid resolutions settle nothing. With category set every figure is recomputed on that category's markets only. Ties break on wallet address.",
		Params: []Param{
			{Name: "category", Kind: Enum, Default: "all", Enum: predmktCategoryEnum, Doc: "all or one category; every figure is recomputed on it"},
			{Name: "window", Kind: Enum, Default: "all", Enum: []string{"24h", "7d", "30d", "all"}, Doc: "window of realized_pnl_window_usd (by resolution time), volume_window_usd and trades_window"},
			{Name: "sort", Kind: Enum, Default: "realized_pnl", Enum: query.LeaderboardSorts, Doc: "volume_24h and trades_24h sort on the window figures; hit_rate puts nulls last; ties break on address"},
			{Name: "min_resolved", Kind: Int, Default: int64(20), Min: F(0), Max: F(4294967295), Doc: "minimum resolved markets"},
			{Name: "min_volume_usd", Kind: Number, Default: float64(0), Min: F(0), Doc: "minimum lifetime buys plus sells"},
			{Name: "min_avg_usd", Kind: Number, Default: float64(0), Min: F(0), Doc: "minimum average trade; 20 excludes every wallet tagged bot"},
			{Name: "limit", Kind: Int, Default: int64(20), Min: F(1), ClampHi: F(50), Doc: "default 20; above 50 is served at 50"},
			{Name: "offset", Kind: Int, Default: int64(0), Min: F(0), Max: F(1000), Doc: "rows to skip, 0 to 1000; rank continues"},
		},
		Response: []query.WalletBoardRow{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_leaderboard", Description: "Prediction-market wallets ranked by realized PnL, hit rate, volume or activity, overall or in one category, with bot/whale/hot/cold tags."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktLeaderboard(ctx, query.PredmktLeaderboardParams{
				Category: v.Str("category"), Window: v.Str("window"), Sort: v.Str("sort"),
				MinResolved: v.Int("min_resolved"), MinVolumeUSD: v.Float("min_volume_usd"), MinAvgUSD: v.Float("min_avg_usd"),
				Limit: int(v.Int("limit")), Offset: int(v.Int("offset")),
			})
		},
	}
}

func predmktSmartMoneyRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/smart_money", Area: "predmkt", StrictParams: true,
		Summary:     "What the smart-money cohort is buying",
		Description: "The cohort (per category: at least 1,000 USD realized PnL, five resolved markets and 5,000 USD volume on that category) comes from the hourly board. flows: cohort buys and sells per market in the last hours, by net_inflow. mispricings: markets where the cohort put in at least 500 USD and the side's mid is at least 0.03 above the cohort's average entry, by delta then total_buy_value.",
		Params: []Param{
			{Name: "mode", Kind: Enum, Default: "flows", Enum: []string{"flows", "mispricings"}},
			{Name: "hours", Kind: Int, Default: int64(24), Min: F(1), Max: F(720), Doc: "window back from now, 1 to 720"},
			{Name: "category", Kind: String, Default: "all", MaxLen: 64, Doc: "all or Crypto, Sports, Politics, Pop-Culture, Tech (exact); an unknown category answers []"},
			{Name: "limit", Kind: Int, Default: int64(10), Min: F(1), ClampHi: F(20), Doc: "default 10; above 20 is served at 20"},
		},
		// Two row shapes by mode (SmartMoneyFlowRow, SmartMoneyMispricingRow); the route
		// table has no one-of, so the schema is an array of objects described above.
		Response: []any{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_smart_money", Description: "Prediction-market smart-money signals: net flows of the profitable-wallet cohort per market, or markets whose mid has moved past the cohort's entry."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktSmartMoney(ctx, query.PredmktSmartMoneyParams{
				Mode: v.Str("mode"), Hours: v.Int("hours"), Category: v.Str("category"), Limit: int(v.Int("limit")),
			})
		},
	}
}

func predmktOrderbookRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/orderbook", Area: "predmkt", StrictParams: true,
		Summary:     "Order-book snapshot of one outcome token",
		Description: "Levels of the book snapshot nearest at or before ts (the latest when ts is omitted), bids then asks, level 1 at the touch on each side, each (side, level) once. as_of_ts is the snapshot used, which can be old. A ts before the token's tape began answers [].",
		Params: []Param{
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Required: true, Doc: "outcome-token id", Example: "68783291989961754191311255821197966179714110417478218772409060504263891222377"},
			{Name: "ts", Kind: Int, Doc: "epoch ms; default now"},
			{Name: "depth", Kind: Int, Default: int64(25), Min: F(1), ClampHi: F(25), Doc: "levels per side; default 25, hard cap 25"},
		},
		Response: []query.BookRow{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_orderbook", Description: "Order-book levels of one prediction-market outcome token at a point in time."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			ts := q.Now().UnixMilli()
			if v.Has("ts") {
				ts = v.Int("ts")
			}
			return q.PredmktOrderbook(ctx, query.PredmktOrderbookParams{TokenID: v.Str("token_id"), TS: ts, Depth: int(v.Int("depth"))})
		},
	}
}

func predmktEventsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/events", Area: "predmkt", StrictParams: true,
		Summary:     "Raw per-market event tape",
		Description: "The recorder's tape from the archive's book_events files, ordered by (local_ts, seq, token_id), over the half-open window [from_ms, to_ms) of local_ts, at most 24 hours. Loop on has_more, passing next_cursor back as cursor. bids and asks are JSON text; numeric fields an event type does not populate are 0, text fields empty.",
		Params: []Param{
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Doc: "one token; same as a one-element token_ids", Example: "68783291989961754191311255821197966179714110417478218772409060504263891222377"},
			{Name: "token_ids", Kind: List, Pattern: TokenIDPattern, Message: "token_ids item %q is not an outcome-token id (a decimal digit string)", MaxItems: query.EventsMaxTokens,
				ItemsMessage: "token_ids holds %d tokens; the maximum is 100", Doc: "comma-separated, at most 100; wins over token_id"},
			{Name: "from_ms", Kind: Int, Required: true, Doc: "epoch ms, inclusive, on local_ts", Example: "1795172400000"},
			{Name: "to_ms", Kind: Int, Required: true, Doc: "epoch ms, exclusive; greater than from_ms, at most 86,400,000 ms after it", Example: "1795176000000"},
			{Name: "event_type", Kind: Enum, Enum: []string{"book", "price_change", "trade", "tick_size_change", "status"}},
			{Name: "cursor", Kind: String, Doc: "next_cursor of the previous page: <local_ts>:<seq>:<token_id>; resumes strictly after it"},
			{Name: "limit", Kind: Int, Default: int64(5000), Min: F(1), ClampHi: F(50000), Doc: "default 5000; hard cap 50000"},
		},
		Response: query.EventsPage{},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			from, to := v.Int("from_ms"), v.Int("to_ms")
			if to <= from {
				return nil, BadInput("to_ms (%d) must be greater than from_ms (%d)", to, from)
			}
			// The span in uint64: with to > from it is exact, where to - from in int64
			// overflows for far-apart ends and would pass the check.
			if span := uint64(to) - uint64(from); span > query.EventsMaxWindowMs {
				return nil, BadInput("window of %d ms exceeds the maximum of %d ms (24 hours)", span, query.EventsMaxWindowMs)
			}
			toks := v.List("token_ids")
			if len(toks) == 0 && v.Str("token_id") != "" {
				toks = []string{v.Str("token_id")}
			}
			p := query.PredmktEventsParams{TokenIDs: toks, FromMs: from, ToMs: to, EventType: v.Str("event_type"), Limit: int(v.Int("limit"))}
			if c := v.Str("cursor"); c != "" {
				cur, err := parseEventCursor(c)
				if err != nil {
					return nil, err
				}
				p.After = &cur
			}
			return q.PredmktEvents(ctx, p)
		},
	}
}

// TokenIDPattern is an outcome-token id: a decimal digit string (a uint256 has at
// most 78 digits). 6.6e+76, as a client encoding a large number sends it, is refused.
const TokenIDPattern = `^[0-9]{1,78}$`

// parseEventCursor reads <local_ts>:<seq>:<token_id>.
func parseEventCursor(s string) (query.EventCursor, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) == 3 && parts[2] != "" {
		lt, err1 := strconv.ParseInt(parts[0], 10, 64)
		seq, err2 := strconv.ParseInt(parts[1], 10, 64)
		if err1 == nil && err2 == nil {
			return query.EventCursor{LocalTS: lt, Seq: seq, TokenID: parts[2]}, nil
		}
	}
	return query.EventCursor{}, BadInput("cursor %q is not of the form <local_ts>:<seq>:<token_id>", s)
}

// Designed routes (SPEC names them without showing them): markets, trade tape,
// settlements, the candle export and wallet pages. Listing routes page by an opaque
// keyset cursor bound to their filters (a cursor resent with other filters is a 400).

var (
	pmConditionRe = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	pmConditionID = Param{Name: "condition_id", In: "path", Kind: String, Required: true,
		Doc: "market id: 0x followed by 64 hex digits", Example: "0xbac0da3432c410142187ef4b128a069ee45024a147b8df901e46656164f693bb"}
	pmWallet = Param{Name: "address", In: "path", Kind: Address, Required: true, Doc: "proxy wallet, 0x-prefixed 40 hex digits",
		Example: "0x21f839801b99033064425928f998dbf97ccfe7ed",
		Message: "address %q is not a 0x-prefixed 40-hex-digit wallet address"}
	pmCursor = Param{Name: "cursor", Kind: String, Doc: "nextCursor of the previous page; resend the same filters"}
	pmFromMs = Param{Name: "from_ms", Kind: Int, Default: int64(0), Min: F(0), Doc: "epoch ms, inclusive; default the beginning"}
	pmToMs   = Param{Name: "to_ms", Kind: Int, Default: int64(math.MaxInt64), Min: F(0), Doc: "epoch ms, exclusive; default no bound"}
)

func pmLimit(def, max float64) Param {
	return Param{Name: "limit", Kind: Int, Default: int64(def), Min: F(1), ClampHi: F(max),
		Doc: "rows per page; default " + num(def) + ", above " + num(max) + " is served at " + num(max)}
}

// anyIfAll maps the enumeration value "all" to the query's "no filter" ("").
func anyIfAll(s string) string {
	if s == "all" {
		return ""
	}
	return s
}

// pmCondition reads a condition id (path or query), lower-cased; "" when absent.
func pmCondition(v Values, name string) (string, error) {
	s := v.Str(name)
	if s == "" {
		return "", nil
	}
	if !pmConditionRe.MatchString(s) {
		return "", BadInput("%s %q is not a market id (0x followed by 64 hex digits)", name, s)
	}
	return strings.ToLower(s), nil
}

// pmWindow reads from_ms and to_ms: a half-open window whose end must exceed its start.
func pmWindow(v Values) (int64, int64, error) {
	from, to := v.Int("from_ms"), v.Int("to_ms")
	if to <= from {
		return 0, 0, BadInput("to_ms (%d) must be greater than from_ms (%d)", to, from)
	}
	return from, to, nil
}

func predmktMarketsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/markets", Area: "predmkt", StrictParams: true,
		Summary:     "Market list with status, family and trading figures",
		Description: "Markets filtered by category, status, crypto family (asset, tenor) and a text search, in sort order with ties on condition_id; page with nextCursor. Figures are as of now: volume counts each trade once; a market is resolved once its resolution (at or before now) names a winner, invalid when it resolved void, open otherwise.",
		Params: []Param{
			{Name: "category", Kind: Enum, Default: "all", Enum: predmktCategoryEnum, Doc: "all or one category"},
			{Name: "status", Kind: Enum, Default: "all", Enum: append([]string{"all"}, query.PredmktMarketStatuses...), Doc: "open (no resolution yet), resolved, invalid or all"},
			{Name: "asset", Kind: Enum, Enum: query.PredmktFamilyAssets, Doc: "crypto up/down family asset; default any market"},
			{Name: "tenor", Kind: Enum, Enum: query.PredmktFamilyTenors, Doc: "crypto up/down family tenor; default any market"},
			{Name: "search", Kind: String, MaxLen: 200, Doc: "case-insensitive substring of the title or slug", Example: "bitcoin"},
			{Name: "sort", Kind: Enum, Default: "volume", Enum: query.PredmktMarketSorts,
				Doc: "volume and volume_24h (USD, largest first), trades (most first), created (newest first), end (soonest scheduled end first)"},
			pmLimit(50, 200), pmCursor,
		},
		Response: query.PredmktMarketsPage{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_markets", Description: "Find prediction markets by category, status (open, resolved, invalid), crypto family or text, with their outcomes, last prices and USD volume."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			fp := Fingerprint(v, "category", "status", "asset", "tenor", "search", "sort")
			after, err := CursorAfter[query.PredmktMarketKey](v, fp)
			if err != nil {
				return nil, err
			}
			p := query.PredmktMarketsParams{Category: anyIfAll(v.Str("category")), Status: anyIfAll(v.Str("status")), Asset: v.Str("asset"),
				Tenor: v.Str("tenor"), Search: v.Str("search"), Sort: v.Str("sort"), Limit: int(v.Int("limit")), After: after}
			page, err := q.PredmktMarkets(ctx, p)
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

func predmktMarketRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/markets/{condition_id}", Area: "predmkt", StrictParams: true, CLI: "market",
		Summary:     "One market with its outcome tokens, last prices and mids",
		Description: "The market's listing (as in /markets) with, per outcome token, the last trade price and the latest recorded mid at or before now. 404 for a market the lake does not hold.",
		Params:      []Param{pmConditionID},
		Response:    query.PredmktMarketDetail{},
		MCP:         &MCPTool{Credits: 1, Name: "predmkt_market", Description: "One prediction market by condition id: question, category, status and winner, volume, and each outcome's last price and mid (probability)."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			id, err := pmCondition(v, "condition_id")
			if err != nil {
				return nil, err
			}
			return q.PredmktMarket(ctx, id)
		},
	}
}

func predmktMarketStatsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/markets/{condition_id}/stats", Area: "predmkt", StrictParams: true,
		Summary:     "Trading statistics of one market, per outcome",
		Description: "Volume (USD and shares, each trade once), trades, taker buy and sell USD, VWAP, open/high/low/last price, window figures over [now - hours, now], holders and shares outstanding per outcome token, and distinct traders for the market. 404 for an unknown market.",
		Params: []Param{pmConditionID,
			{Name: "hours", Kind: Int, Default: int64(24), Min: F(1), Max: F(720), Doc: "window of the *_window figures, 1 to 720; default 24"}},
		Response: query.PredmktMarketStats{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_market_stats", Description: "Trading statistics of one prediction market per outcome: volume, trades, VWAP, price range, recent-window volume, holder counts and traders."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			id, err := pmCondition(v, "condition_id")
			if err != nil {
				return nil, err
			}
			return q.PredmktMarketStats(ctx, id, v.Int("hours"))
		},
	}
}

func predmktMarketHoldersRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/markets/{condition_id}/holders", Area: "predmkt", StrictParams: true,
		Summary:     "Top holders of each outcome token of a market",
		Description: "Per outcome token, the wallets with the largest net positions (shares bought minus sold over every fill, taker and maker, up to now), largest first with ties on address; only positive positions hold. Redemptions after resolution are not in the tape, so a resolved market lists its holders as they stood at settlement. 404 for an unknown market.",
		Params:      []Param{pmConditionID, {Name: "limit", Kind: Int, Default: int64(20), Min: F(1), ClampHi: F(100), Doc: "holders per outcome; default 20, above 100 is served at 100"}},
		Response:    query.PredmktMarketHolders{},
		MCP:         &MCPTool{Credits: 1, Name: "predmkt_market_holders", Description: "Largest holders of each outcome of one prediction market by net shares, with their average buy price."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			id, err := pmCondition(v, "condition_id")
			if err != nil {
				return nil, err
			}
			return q.PredmktMarketHolders(ctx, id, int(v.Int("limit")))
		},
	}
}

func predmktOHLCVExportRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/ohlcv/export", Area: "predmkt", StrictParams: true,
		Summary:     "NDJSON export of every candle of one outcome token",
		Description: "The bars of /v1/predmkt/ohlcv (same token_id, interval and inclusive from/to) as newline-delimited JSON, one CandleBar per line, oldest first, with no bar cap. Streamed as the store produces them. An empty series is an empty body.",
		Params: []Param{
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Required: true, Doc: "outcome-token id (decimal digit string)",
				Example: "68783291989961754191311255821197966179714110417478218772409060504263891222377"},
			{Name: "interval", Kind: Enum, Required: true, Enum: []string{"1m", "5m", "1h", "1d"},
				EnumMessage: "interval %q is not one of 1m, 5m, 1h, 1d", Example: "1h"},
			{Name: "from", Kind: Int, Lenient: true, Default: int64(0), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "to", Kind: Int, Lenient: true, Default: int64(math.MaxInt64), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
		},
		Response:    []query.CandleBar{},
		ContentType: "application/x-ndjson",
		Stream: func(ctx context.Context, q *query.Queries, v Values, w io.Writer) error {
			enc := newLineEncoder(w)
			return q.PredmktOHLCVExport(ctx, query.PredmktOHLCVExportParams{TokenID: v.Str("token_id"), Interval: v.Str("interval"),
				From: v.Int("from"), To: v.Int("to")}, func(b *query.CandleBar) error { return enc.Encode(b) })
		},
	}
}

func predmktTradesRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/trades", Area: "predmkt", StrictParams: true,
		Summary:     "The trade tape of a market, token or wallet",
		Description: "Each tape trade once, with its taker and maker and the taker's side, over the half-open window [from_ms, to_ms) of ts. At least one of condition_id, token_id and wallet (taker or maker) is required; they combine. Ordered by (ts, seq, token_id), newest first by default; page with nextCursor.",
		Params: []Param{
			{Name: "condition_id", Kind: String, Doc: "market id", Example: "0xbac0da3432c410142187ef4b128a069ee45024a147b8df901e46656164f693bb"},
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Doc: "outcome-token id"},
			{Name: "wallet", Kind: Address, Doc: "trades where this wallet was taker or maker"},
			pmFromMs, pmToMs,
			{Name: "order", Kind: Enum, Default: "desc", Enum: []string{"desc", "asc"}, Doc: "desc (newest first) or asc"},
			pmLimit(100, 1000), pmCursor,
		},
		Response: query.PredmktTradesPage{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_trades", Description: "Recent prediction-market trades of a market, outcome token or wallet: price, shares, USD, taker side, taker and maker."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			cid, err := pmCondition(v, "condition_id")
			if err != nil {
				return nil, err
			}
			if cid == "" && v.Str("token_id") == "" && v.Str("wallet") == "" {
				return nil, BadInput("one of condition_id, token_id or wallet is required")
			}
			from, to, err := pmWindow(v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "condition_id", "token_id", "wallet", "from_ms", "to_ms", "order")
			after, err := CursorAfter[query.PredmktTradeKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PredmktTrades(ctx, query.PredmktTradesParams{ConditionID: cid, TokenID: v.Str("token_id"),
				Wallet: v.Str("wallet"), From: from, To: to, Desc: v.Str("order") == "desc", Limit: int(v.Int("limit")), After: after})
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

func predmktSettlementsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/settlements", Area: "predmkt", StrictParams: true,
		Summary:     "Market resolutions with the winning outcome and settled value",
		Description: "Resolutions at or before now, newest first (ties on condition_id), over the half-open window [from_ms, to_ms) of resolved_ts. An invalid resolution has no winner and pays nothing. payout_usd is the value settled: the positive net shares of the winning outcome at 1 USD each. Page with nextCursor.",
		Params: []Param{
			{Name: "category", Kind: Enum, Default: "all", Enum: predmktCategoryEnum, Doc: "all or one category"},
			{Name: "status", Kind: Enum, Default: "all", Enum: []string{"all", "resolved", "invalid"}, Doc: "resolved (with a winner), invalid or all"},
			pmFromMs, pmToMs, pmLimit(50, 500), pmCursor,
		},
		Response: query.PredmktSettlementsPage{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_settlements", Description: "Recently resolved prediction markets: winning outcome or invalid, resolution time, traded volume and the USD paid to winning holders."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			from, to, err := pmWindow(v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "category", "status", "from_ms", "to_ms")
			after, err := CursorAfter[query.PredmktSettlementKey](v, fp)
			if err != nil {
				return nil, err
			}
			p := query.PredmktSettlementsParams{Category: anyIfAll(v.Str("category")), Status: anyIfAll(v.Str("status")), From: from, To: to,
				Limit: int(v.Int("limit")), After: after}
			page, err := q.PredmktSettlements(ctx, p)
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

func predmktWalletRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/wallets/{address}", Area: "predmkt", StrictParams: true, CLI: "wallet",
		Summary:     "Wallet profile: lifetime and per-category figures, tags and rank",
		Description: "The wallet's entries on the hourly board (the leaderboard's figures and definitions): overall (category all) and one entry per category it traded, each with its rank by realized PnL among every wallet of that category's board (no filters). 404 for a wallet with no fill.",
		Params:      []Param{pmWallet},
		Response:    query.PredmktWalletProfile{},
		MCP:         &MCPTool{Credits: 1, Name: "predmkt_wallet", Description: "Profile of one prediction-market wallet: realized PnL (lifetime and 24h/7d/30d), hit rate, volume, trades, tags and rank, overall and per category."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktWallet(ctx, v.Str("address"))
		},
	}
}

func predmktWalletPositionsRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/wallets/{address}/positions", Area: "predmkt", StrictParams: true,
		Summary:     "A wallet's positions per outcome token, open and settled",
		Description: "The wallet's fills netted per outcome token as of now: shares, USD in and out, cost basis and average entry, and PnL. Realized PnL follows the board: only at a valid resolution (sells minus buys plus 1 USD per winning share); an invalid resolution settles nothing (void). Open positions carry unrealized PnL at the latest recorded mid. Most recently traded first; page with nextCursor.",
		Params: []Param{pmWallet,
			{Name: "status", Kind: Enum, Default: "all", Enum: append([]string{"all"}, query.PositionStatuses...), Doc: "open, settled, void or all"},
			pmLimit(100, 500), pmCursor},
		Response: query.PredmktPositionsPage{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_wallet_positions", Description: "Open and settled positions of one prediction-market wallet per outcome: shares, cost basis, average entry, realized PnL and unrealized PnL at the current mid."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			fp := Fingerprint(v, "address", "status")
			after, err := CursorAfter[query.PredmktPositionKey](v, fp)
			if err != nil {
				return nil, err
			}
			st := v.Str("status")
			if st == "all" {
				st = ""
			}
			page, err := q.PredmktWalletPositions(ctx, query.PredmktWalletPositionsParams{Wallet: v.Str("address"), Status: st,
				Limit: int(v.Int("limit")), After: after})
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

func predmktWalletTradesRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/wallets/{address}/trades", Area: "predmkt", StrictParams: true,
		Summary:     "A wallet's fills, newest first",
		Description: "Every fill of the wallet (taker or maker) from its own side, over the half-open window [from_ms, to_ms) of ts, optionally on one market or token, newest first by (ts, seq, token_id); page with nextCursor.",
		Params: []Param{pmWallet,
			{Name: "condition_id", Kind: String, Doc: "only this market"},
			{Name: "token_id", Kind: String, Pattern: TokenIDPattern, Message: "token_id %q is not an outcome-token id (a decimal digit string)", Doc: "only this outcome token"},
			pmFromMs, pmToMs, pmLimit(100, 1000), pmCursor},
		Response: query.PredmktWalletTradesPage{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_wallet_trades", Description: "Recent fills of one prediction-market wallet: market, outcome, role, side, price, shares and USD."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			cid, err := pmCondition(v, "condition_id")
			if err != nil {
				return nil, err
			}
			from, to, err := pmWindow(v)
			if err != nil {
				return nil, err
			}
			fp := Fingerprint(v, "address", "condition_id", "token_id", "from_ms", "to_ms")
			after, err := CursorAfter[query.PredmktTradeKey](v, fp)
			if err != nil {
				return nil, err
			}
			page, err := q.PredmktWalletTrades(ctx, query.PredmktWalletTradesParams{Wallet: v.Str("address"), ConditionID: cid,
				TokenID: v.Str("token_id"), From: from, To: to, Limit: int(v.Int("limit")), After: after})
			page.NextCursor = NextCursor(fp, page.Next)
			return page, err
		},
	}
}

func predmktWalletPnLRoute() *Route {
	return &Route{
		Method: "GET", Path: "/v1/predmkt/wallets/{address}/pnl", Area: "predmkt", StrictParams: true,
		Summary:     "A wallet's daily realized PnL series",
		Description: "One entry per UTC day, oldest first, ending on the store clock's date: realized PnL of the markets that resolved validly that day (by resolution time), the markets counted, and the running total since the tape began. Same PnL definition as the board; invalid resolutions add nothing.",
		Params: []Param{pmWallet,
			{Name: "days", Kind: Int, Default: int64(30), Min: F(1), ClampHi: F(365), Doc: "days in the series; default 30, above 365 is served at 365"},
			{Name: "category", Kind: Enum, Default: "all", Enum: predmktCategoryEnum, Doc: "all or one category: only that category's markets"}},
		Response: query.PredmktWalletPnL{},
		MCP:      &MCPTool{Credits: 1, Name: "predmkt_wallet_pnl", Description: "Daily realized PnL of one prediction-market wallet by market resolution day, with the cumulative total."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktWalletPnL(ctx, query.PredmktWalletPnLParams{Wallet: v.Str("address"), Category: v.Str("category"), Days: v.Int("days")})
		},
	}
}

// newLineEncoder writes one JSON value per line the way Encode does (no HTML escaping).
func newLineEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
