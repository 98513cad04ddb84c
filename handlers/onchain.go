package handlers

import (
	"context"

	"mdq/query"
)

// On-chain parameter building blocks. The exact SPEC messages live here, once.
const (
	chainMessage   = "chain '%s' not supported (use ethereum, bsc, or base)"
	addressMessage = "Bad EVM address '%s' (requires 0x prefix and exactly 42 characters)"
)

var onchainWindows = []string{"24h", "7d", "30d", "90d", "all"}

// chainParam is the chain filter: ethereum, bsc or base, default ethereum; anything
// else is 400 with SPEC's message.
func chainParam() Param {
	return Param{Name: "chain", Kind: Enum, Enum: []string{"ethereum", "bsc", "base"}, Default: "ethereum",
		EnumMessage: chainMessage, ZeroIsDefault: true, Doc: "ethereum, bsc or base; default ethereum; anything else is 400"}
}

// addrParam is a 0x address in the path (lower-cased), 400 "Bad EVM address ..." when malformed.
func addrParam(name, doc string) Param {
	return Param{Name: name, In: "path", Kind: Address, Required: true, Message: addressMessage, Doc: doc,
		Example: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"}
}

// onchainRoutes are the on-chain routes. Every one logs 1 credit per REST call, answers
// errors as {"detail": ...} and is also an MCP tool.
func onchainRoutes() []*Route {
	return []*Route{{
		Method: "GET", Path: "/v1/onchain/tokens/{token_address}/transfers", Area: "onchain", Credits: 1,
		Summary: "Top buyers or top sellers of a token",
		Description: "One side per call (tab), ranked by whole tokens bought or sold in the period; ten rows when at least ten wallets moved the token on that side. " +
			"bought counts every inbound transfer and sold every outbound one, so round trips (flash loans) count in both; net_tokens is the net. " +
			"usd_spent and usd_received are USD at transfer time. The zero address (the native coin) is not a contract: no rows.",
		Params: []Param{
			addrParam("token_address", "token contract"),
			{Name: "period", Kind: Enum, Enum: []string{"1h", "24h", "7d", "30d"}, Default: "24h", ZeroIsDefault: true, Doc: "rolling period ending now; default 24h"},
			{Name: "tab", Kind: Enum, Enum: []string{"bought", "sold"}, Default: "sold", ZeroIsDefault: true, Doc: "side ranked; default sold"},
			{Name: "chain", Kind: Enum, Enum: []string{"ethereum", "bsc", "base", "all"}, Default: "ethereum", EnumFallback: "ethereum", ZeroIsDefault: true,
				Doc: "ethereum, bsc, base or all (the token's contract on each chain, linked by asset); an unknown chain reads ethereum"},
		},
		Response: []query.TokenTransferRow{},
		MCP: &MCPTool{Name: "onchain_token_transfers", Credits: 1, Ignore: []string{"limit"},
			Description: "Top 10 buyers or sellers of a token over 1h, 24h, 7d or 30d; any limit is ignored."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainTokenTransfers(ctx, query.OnchainTokenTransfersParams{
				Token: v.Str("token_address"), Chain: v.Str("chain"), Period: v.Str("period"), Tab: v.Str("tab"),
			})
		},
	}, {
		Method: "GET", Path: "/v1/onchain/tokens/screener", Area: "onchain", Credits: 1,
		Summary: "Tokens ranked by activity over calendar dates",
		Description: "Windows count calendar dates: 24h spans yesterday and today, 7d the seven dates before today and today. " +
			"in_usd and out_usd are USD moved into and out of wallets (addresses not labelled as a venue: cex, dex, defi, market_maker, bridge), " +
			"so wallet-to-wallet and venue-to-venue transfers move neither and net_flow_usd is the wallets' accumulation. " +
			"smart_money_only restricts every figure to transfers touching the smart-money cohort (non-venue wallets with at least 10,000 USD realized PnL on the chain over all history), " +
			"with flows measured at the cohort's edge; sort=smart_inflow ranks by that cohort's net inflow. The native coin is the zero address.",
		Params: []Param{
			chainParam(),
			{Name: "window", Kind: Enum, Enum: []string{"24h", "7d", "30d", "90d"}, Default: "24h", ZeroIsDefault: true, Doc: "24h, 7d, 30d or 90d in calendar dates; default 24h"},
			{Name: "sort", Kind: Enum, Enum: []string{"volume", "net_inflow", "holders", "smart_inflow"}, Default: "volume", ZeroIsDefault: true,
				Doc: "volume, net_inflow, holders or smart_inflow, largest first (ties on token address); default volume"},
			{Name: "min_volume_usd", Kind: Number, Default: 0.0, Min: F(0), ZeroIsDefault: true, Doc: "floor on volume_usd"},
			{Name: "min_holders", Kind: Int, Default: int64(0), Min: F(0), ZeroIsDefault: true, Doc: "floor on unique_holders"},
			{Name: "smart_money_only", Kind: Bool, Default: false, ZeroIsDefault: true, Doc: "restrict to the smart-money cohort"},
			{Name: "limit", Kind: Int, Default: int64(50), Min: F(1), Max: F(500), ClampHi: F(100), ZeroIsDefault: true,
				Doc: "default 50; accepted up to 500; applied at most 100 (silent cap)"},
		},
		Response: []query.ScreenerRow{},
		MCP:      &MCPTool{Name: "onchain_token_screener", Credits: 1, Description: "Tokens of one chain ranked by volume, net inflow, holders or smart-money inflow."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainScreener(ctx, query.OnchainScreenerParams{
				Chain: v.Str("chain"), Window: v.Str("window"), Sort: v.Str("sort"),
				MinVolumeUSD: v.Float("min_volume_usd"), MinHolders: v.Int("min_holders"),
				SmartMoneyOnly: v.Bool("smart_money_only"), Limit: int(v.Int("limit")),
			})
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/discover", Area: "onchain", Credits: 1,
		Summary: "Leaderboard of wallets with realized PnL",
		Description: "Wallets of one chain over a rolling window, listed only when their realized PnL could be computed (pnl_available 1): " +
			"at least one priced token both bought and sold in the window. realized_pnl sums, per token, min(bought, sold) times the average sell price minus the average buy price. " +
			"total is the size of that population. first_seen and last_active are the wallet's first and last transfer on this chain.",
		Params: []Param{
			{Name: "window", Kind: Enum, Enum: onchainWindows, Default: "30d", ZeroIsDefault: true, Doc: "24h, 7d, 30d, 90d or all; default 30d"},
			{Name: "sort", Kind: Enum, Enum: []string{"volume", "inflow", "outflow", "net_flow", "tx_count", "pnl"}, Default: "volume", ZeroIsDefault: true,
				Doc: "volume, inflow, outflow, net_flow, tx_count or pnl (realized_pnl); ties on address"},
			{Name: "order", Kind: Enum, Enum: []string{"asc", "desc"}, Default: "desc", ZeroIsDefault: true, Doc: "asc or desc; default desc"},
			{Name: "chain", Kind: Enum, Enum: []string{"ethereum", "bsc"}, Default: "ethereum", ZeroIsDefault: true,
				EnumMessage: "chain '%s' not supported (use ethereum or bsc)", Doc: "ethereum or bsc only; default ethereum"},
			{Name: "size", Kind: Int, Default: int64(10), Min: F(1), Max: F(20), ZeroIsDefault: true, Doc: "rows; default 10, at most 20 (above is 400)"},
		},
		Response: query.Discover{},
		MCP:      &MCPTool{Name: "onchain_discover_wallets", Credits: 1, Description: "Leaderboard of wallets by volume, flows, transfers or realized PnL."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainDiscover(ctx, query.OnchainDiscoverParams{
				Chain: v.Str("chain"), Window: v.Str("window"), Sort: v.Str("sort"), Order: v.Str("order"), Size: int(v.Int("size")),
			})
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}", Area: "onchain", Credits: 1,
		Summary: "Wallet summary over five windows",
		Description: "Exactly five keys (24h, 7d, 30d, 90d, all), rolling windows ending now, across every chain. An idle 24h window is present and zeroed. " +
			"first_seen, last_active and tokens_traded are all-time and repeat in every window.",
		Params:   []Param{addrParam("address", "wallet")},
		Response: query.WalletSummary{},
		MCP:      &MCPTool{Name: "onchain_wallet_summary", Credits: 1, Description: "A wallet's volume, flows and transfers over 24h, 7d, 30d, 90d and all time."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWallet(ctx, v.Str("address"))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/trace", Area: "onchain", Credits: 1,
		Summary: "Follow money outward from a wallet",
		Description: "Breadth-first: each hop expands every wallet of the level to its top `width` counterparties by USD volume (both ways) in the window that clear min_usd, up to `depth` hops. " +
			"A wallet is expanded once however many neighbours name it. One edge per unordered pair; `from` is the wallet expanded first, not the sender. " +
			"Node count cannot be predicted from depth and width. Heaviest route.",
		Params: []Param{
			addrParam("address", "root wallet"),
			chainParam(),
			{Name: "depth", Kind: Int, Default: int64(2), ZeroIsDefault: true, ClampLo: F(1), ClampHi: F(5), Doc: "hops; any integer accepted, applied 1 to 5; 0 or omitted gives 2"},
			{Name: "width", Kind: Int, Default: int64(5), ZeroIsDefault: true, ClampLo: F(1), ClampHi: F(10), Doc: "counterparties per wallet; any integer accepted, applied 1 to 10; 0 or omitted gives 5"},
			{Name: "window", Kind: Enum, Enum: onchainWindows, Default: "30d", EnumFallback: "30d", ZeroIsDefault: true,
				Doc: "24h, 7d, 30d, 90d or all; default 30d; an unrecognised value reads 30d"},
			{Name: "min_usd", Kind: Number, Default: 10_000.0, Min: F(0), ZeroIsDefault: true,
				Doc: "pair volume floor in USD; 0 or omitted gives 10,000 (use a small positive value for a low floor)"},
		},
		Response: query.TraceGraph{},
		MCP:      &MCPTool{Name: "onchain_wallet_trace", Credits: 4, Description: "Counterparty graph around a wallet: breadth-first over the top counterparties by USD."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainTrace(ctx, query.OnchainTraceParams{
				Root: v.Str("address"), Chain: v.Str("chain"), Depth: int(v.Int("depth")), Width: int(v.Int("width")),
				Window: v.Str("window"), MinUSD: v.Float("min_usd"),
			})
		},
	}, {
		Method: "POST", Path: "/v1/onchain/labels/batch", Area: "onchain", Credits: 1,
		Summary: "Labels of up to 100 addresses",
		Description: "Addresses travel in the query string (a body is ignored). One row per input address in input order; a non-hex address is skipped, " +
			"so a batch made only of malformed addresses is []. found false: no label row, labels null and numbers zero. " +
			"Labels and the 30-day figures always come from Ethereum: chain is validated, never applied. Rejected batches log no credit.",
		Params: []Param{
			{Name: "addresses", Kind: List, Required: true, MaxItems: 100, MissingMessage: "addresses (list) is required",
				ItemsMessage: "batch capped at 100 addresses", Doc: "comma-separated addresses; 1 to 100",
				Example: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"},
			chainParam(),
		},
		Response: []query.LabelRow{},
		MCP:      &MCPTool{Name: "onchain_labels_batch", Credits: 1, Description: "Labels and 30-day activity of up to 100 addresses, in input order."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			var valid []string
			for _, a := range v.List("addresses") {
				if IsAddress(a) {
					valid = append(valid, a)
				}
			}
			return q.OnchainLabelsBatch(ctx, valid)
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/transactions", Area: "onchain", Credits: 1,
		Summary:     "A wallet's raw transfers, newest first",
		Description: "Transfers sent or received on one chain over the days ending now, newest first, paged by an opaque keyset cursor (resend the same filters with it).",
		Params: []Param{
			addrParam("address", "wallet"),
			chainParam(),
			{Name: "days", Kind: Int, Default: int64(30), ZeroIsDefault: true, ClampLo: F(1), ClampHi: F(365), Doc: "rolling days ending now; default 30; applied 1 to 365"},
			{Name: "limit", Kind: Int, Default: int64(100), Min: F(1), Max: F(1000), ClampHi: F(500), ZeroIsDefault: true, Doc: "default 100; accepted up to 1000; applied at most 500"},
			{Name: "min_usd", Kind: Number, Default: 0.0, Min: F(0), ZeroIsDefault: true, Doc: "floor on the transfer's USD; default 0 (unpriced transfers count as 0)"},
			{Name: "token", Kind: Address, Message: addressMessage, Doc: "only this token"},
			{Name: "cursor", Kind: String, MaxLen: 512, Doc: "next_cursor of the previous page"},
		},
		Response: query.WalletTransactions{},
		MCP:      &MCPTool{Name: "onchain_wallet_transactions", Credits: 1, Description: "A wallet's transfers on one chain, newest first, with USD at transfer time."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			fp := Fingerprint(v, "address", "chain", "days", "min_usd", "token")
			p := query.OnchainWalletTransactionsParams{Chain: v.Str("chain"), Address: v.Str("address"), Days: int(v.Int("days")),
				Token: v.Str("token"), MinUSD: v.Float("min_usd"), Limit: int(v.Int("limit"))}
			if c := v.Str("cursor"); c != "" {
				p.After = &query.TxCursor{}
				if err := DecodeCursor(c, fp, p.After); err != nil {
					return nil, err
				}
			}
			rows, last, err := q.OnchainWalletTransactions(ctx, p)
			if err != nil {
				return nil, err
			}
			out := query.WalletTransactions{Wallet: p.Address, Transactions: rows}
			if last != nil {
				c := EncodeCursor(fp, last)
				out.NextCursor = &c
			}
			return out, nil
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/counterparties", Area: "onchain", Credits: 1,
		Summary:     "A wallet's top counterparties",
		Description: "Counterparties on one chain over a rolling window ranked by USD volume both ways (ties on address), with their cascade labels.",
		Params: []Param{
			addrParam("address", "wallet"),
			chainParam(),
			{Name: "window", Kind: Enum, Enum: onchainWindows, Default: "30d", ZeroIsDefault: true, Doc: "24h, 7d, 30d, 90d or all; default 30d"},
			{Name: "limit", Kind: Int, Default: int64(100), Min: F(1), Max: F(1000), ClampHi: F(50), ZeroIsDefault: true, Doc: "default 100 (MCP: 10); accepted up to 1000; applied at most 50"},
		},
		Response: []query.Counterparty{},
		MCP: &MCPTool{Name: "onchain_wallet_counterparties", Credits: 1, Defaults: map[string]any{"limit": int64(10)},
			Description: "A wallet's top counterparties by USD volume, with labels."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWalletCounterparties(ctx, v.Str("chain"), v.Str("address"), v.Str("window"), int(v.Int("limit")))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/pnl", Area: "onchain", Credits: 1,
		Summary:     "A wallet's daily net-flow series",
		Description: "One row per calendar date (UTC) for the last `days` dates, today included, oldest first and zero-filled: USD received, sent, their net and its running sum.",
		Params: []Param{
			addrParam("address", "wallet"),
			chainParam(),
			{Name: "days", Kind: Int, Default: int64(30), ZeroIsDefault: true, ClampLo: F(1), ClampHi: F(365), Doc: "dates in the series; any integer accepted, applied 1 to 365; default 30"},
		},
		Response: []query.PnLDay{},
		MCP:      &MCPTool{Name: "onchain_wallet_pnl", Credits: 1, Description: "A wallet's daily net flow in USD over the last N days."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWalletPnL(ctx, v.Str("chain"), v.Str("address"), int(v.Int("days")))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/balances", Area: "onchain", Credits: 1,
		Summary:     "A wallet's current balances with price and USD value",
		Description: "Balances on one chain with the latest hourly price at or before now; a balance worth less than min_usd is left out (an unpriced balance counts as 0 USD, so it shows only with min_usd=0). Largest value first.",
		Params: []Param{
			addrParam("address", "wallet"),
			chainParam(),
			{Name: "min_usd", Kind: Number, Default: 1.0, Min: F(0), Doc: "floor on value_usd; omitted gives 1.0; an explicit 0 is honoured"},
		},
		Response: []query.Balance{},
		MCP:      &MCPTool{Name: "onchain_wallet_balances", Credits: 1, Description: "A wallet's current token balances with USD price and value."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWalletBalances(ctx, v.Str("chain"), v.Str("address"), v.Float("min_usd"))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/{address}/ens", Area: "onchain", Credits: 1,
		Summary:     "Reverse ENS lookup",
		Description: "The address's primary (reverse) ENS name, null when none, and every name it holds.",
		Params:      []Param{addrParam("address", "wallet")},
		Response:    query.ENS{},
		MCP:         &MCPTool{Name: "onchain_wallet_ens", Credits: 1, Description: "The ENS names of an address."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWalletENS(ctx, v.Str("address"))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/wallets/compare", Area: "onchain", Credits: 1,
		Summary:     "Shared counterparties and tokens of two wallets",
		Description: "Counterparties both wallets dealt with and tokens both moved on one chain over a rolling window, each list ranked by the two wallets' USD volume together, plus what they sent each other.",
		Params: []Param{
			{Name: "wallet_a", Kind: Address, Required: true, Message: addressMessage, Doc: "first wallet", Example: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"},
			{Name: "wallet_b", Kind: Address, Required: true, Message: addressMessage, Doc: "second wallet", Example: "0xdac17f958d2ee523a2206206994597c13d831ec7"},
			chainParam(),
			{Name: "window", Kind: Enum, Enum: onchainWindows, Default: "30d", ZeroIsDefault: true, Doc: "24h, 7d, 30d, 90d or all; default 30d"},
			{Name: "limit", Kind: Int, Default: int64(100), Min: F(1), Max: F(1000), ClampHi: F(50), ZeroIsDefault: true, Doc: "rows per list; default 100; accepted up to 1000; applied at most 50"},
		},
		Response: query.WalletCompare{},
		MCP:      &MCPTool{Name: "onchain_wallet_compare", Credits: 1, Description: "What two wallets share: counterparties, tokens and direct transfers."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainWalletCompare(ctx, v.Str("chain"), v.Str("wallet_a"), v.Str("wallet_b"), v.Str("window"), int(v.Int("limit")))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/tokens/search", Area: "onchain", Credits: 1,
		Summary:     "Resolve a symbol or name to tokens",
		Description: "Exact symbol matches first (case-insensitive), then symbols starting with the text, then names containing it; within a tier by chain and symbol. Searches every chain unless chain is given.",
		Params: []Param{
			{Name: "q", Kind: String, Required: true, MaxLen: 64, Doc: "symbol or name text", Example: "usdc"},
			{Name: "chain", Kind: Enum, Enum: []string{"ethereum", "bsc", "base", "all"}, Default: "all", ZeroIsDefault: true, EnumMessage: chainMessage,
				Doc: "ethereum, bsc, base or all; default all"},
			{Name: "size", Kind: Int, Default: int64(10), Min: F(1), Max: F(20), ZeroIsDefault: true, Doc: "rows; default 10, at most 20 (as discover)"},
		},
		Response: []query.TokenMatch{},
		MCP:      &MCPTool{Name: "onchain_token_search", Credits: 0, Description: "Find tokens by symbol or name, with address, decimals and logo."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainTokenSearch(ctx, v.Str("q"), v.Str("chain"), int(v.Int("size")))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/tokens/{token_address}/holders", Area: "onchain", Credits: 1,
		Summary:     "Holder leaderboard by cumulative net inflow",
		Description: "Wallets of one token on one chain ranked by cumulative net inflow in USD at transfer time (received minus sent over the lake's history up to now), with the current balance.",
		Params: []Param{
			addrParam("token_address", "token contract"),
			chainParam(),
			{Name: "limit", Kind: Int, Default: int64(50), Min: F(1), Max: F(500), ClampHi: F(50), ZeroIsDefault: true, Doc: "default 50; accepted up to 500; applied at most 50"},
		},
		Response: []query.TokenHolderRow{},
		MCP:      &MCPTool{Name: "onchain_token_holders", Credits: 1, Description: "Top wallets of a token by cumulative net inflow in USD."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainTokenHolders(ctx, v.Str("chain"), v.Str("token_address"), int(v.Int("limit")))
		},
	}, {
		Method: "GET", Path: "/v1/onchain/labels/{address}/provenance", Area: "onchain", Credits: 1,
		Summary:     "Label cascade with per-source attribution",
		Description: "Every source's label row for the address in cascade order (priority 1 first) with the source's name, kind and link; resolved is the row the cascade picks.",
		Params:      []Param{addrParam("address", "labelled address")},
		Response:    query.LabelProvenance{},
		MCP:         &MCPTool{Name: "onchain_label_provenance", Credits: 1, Description: "Where an address's label comes from: every source's assertion in cascade order."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.OnchainLabelProvenance(ctx, v.Str("address"))
		},
	}}
}
