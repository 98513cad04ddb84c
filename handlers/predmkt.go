package handlers

import (
	"context"
	"math"
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
			{Name: "token_id", Kind: String, Required: true, Doc: "outcome-token id (decimal digit string)"},
			{Name: "interval", Kind: Enum, Required: true, Enum: []string{"1m", "5m", "1h", "1d"},
				EnumMessage: "interval %q is not one of 1m, 5m, 1h, 1d"},
			{Name: "from", Kind: Int, Lenient: true, Default: int64(0), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "to", Kind: Int, Lenient: true, Default: int64(math.MaxInt64), Doc: "epoch ms, inclusive; a non-numeric value is ignored"},
			{Name: "limit", Kind: Int, Default: int64(500), Min: F(1), ClampHi: F(1000), Doc: "default 500; hard cap 1000"},
		},
		Response: []query.CandleBar{},
		MCP:      &MCPTool{Name: "predmkt_ohlcv", Description: "Candles (open, high, low, close as probabilities; volume in shares) of one prediction-market outcome token."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PredmktOHLCV(ctx, query.PredmktOHLCVParams{
				TokenID: v.Str("token_id"), Interval: v.Str("interval"),
				From: v.Int("from"), To: v.Int("to"), Limit: int(v.Int("limit")),
			})
		},
	}, predmktLeaderboardRoute(), predmktSmartMoneyRoute(), predmktOrderbookRoute(), predmktEventsRoute()}
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
		MCP:      &MCPTool{Name: "predmkt_leaderboard", Description: "Prediction-market wallets ranked by realized PnL, hit rate, volume or activity, overall or in one category, with bot/whale/hot/cold tags."},
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
		MCP:      &MCPTool{Name: "predmkt_smart_money", Description: "Prediction-market smart-money signals: net flows of the profitable-wallet cohort per market, or markets whose mid has moved past the cohort's entry."},
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
			{Name: "token_id", Kind: String, Required: true, Doc: "outcome-token id"},
			{Name: "ts", Kind: Int, Doc: "epoch ms; default now"},
			{Name: "depth", Kind: Int, Default: int64(25), Min: F(1), ClampHi: F(25), Doc: "levels per side; default 25, hard cap 25"},
		},
		Response: []query.BookRow{},
		MCP:      &MCPTool{Name: "predmkt_orderbook", Description: "Order-book levels of one prediction-market outcome token at a point in time."},
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
			{Name: "token_id", Kind: String, Doc: "one token; same as a one-element token_ids"},
			{Name: "token_ids", Kind: List, MaxItems: query.EventsMaxTokens,
				ItemsMessage: "token_ids holds %d tokens; the maximum is 100", Doc: "comma-separated, at most 100; wins over token_id"},
			{Name: "from_ms", Kind: Int, Required: true, Doc: "epoch ms, inclusive, on local_ts"},
			{Name: "to_ms", Kind: Int, Required: true, Doc: "epoch ms, exclusive; greater than from_ms, at most 86,400,000 ms after it"},
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
			if to-from > query.EventsMaxWindowMs {
				return nil, BadInput("window of %d ms exceeds the maximum of %d ms (24 hours)", to-from, query.EventsMaxWindowMs)
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
