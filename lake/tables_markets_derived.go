package lake

// Per-day derived tables that let a route read one or two days of raw rows instead of
// the whole history: published by mdq itself (query/day_derived.go) one date partition
// per source date partition, with a sidecar of the source files' signatures, so a new,
// late or corrected day recomputes that day only and a removed day removes its own.

var marketDayColumns = []Column{
	{"condition_id", "VARCHAR", "0x hex", "market"},
	{"token_id", "VARCHAR", "decimal digits", "outcome token"},
	{"vol", "BIGINT", "micro-USD", "sum of the taker fills' usd, each rounded to the micro-dollar"},
	{"n", "BIGINT", "", "taker fills"},
	{"first_ts", "BIGINT", "epoch ms", "first taker fill of the partition"},
	{"last_ts", "BIGINT", "epoch ms", "last taker fill of the partition"},
	{"last_seq", "BIGINT", "", "seq of the last taker fill (the latest by ts, then seq)"},
	{"last_price", "DOUBLE", "probability", "price of that fill"},
}

var walletDayColumns = []Column{
	{"wallet", "VARCHAR", "0x hex", "proxy wallet"},
	{"condition_id", "VARCHAR", "0x hex", "market"},
	{"vol", "BIGINT", "micro-USD", "sum of the fills' usd, each rounded to the micro-dollar"},
	{"n", "BIGINT", "", "fills"},
	{"cash", "BIGINT", "micro-USD", "sells minus buys, each fill rounded"},
	{"net0", "BIGINT", "micro-shares", "shares of outcome 0 bought minus sold, each fill rounded"},
	{"net1", "BIGINT", "micro-shares", "shares of outcome 1 bought minus sold, each fill rounded"},
	{"first_ts", "BIGINT", "epoch ms", "first fill of the partition"},
	{"last_ts", "BIGINT", "epoch ms", "last fill of the partition"},
}

var (
	// PredmktMarketDays is the taker tape summed per outcome token and day: the market
	// list sums the complete days from it (and takes each token's last price from the
	// last complete day) and reads raw trades only for the days its clock and 24-hour
	// window cut.
	PredmktMarketDays = Register(&Table{
		Name: "predmkt_market_days", Area: "predmkt", Prefix: "predmkt/market_days", Partitions: []string{"date"}, File: "market_days.parquet", Derived: true,
		Doc:     "Derived from predmkt_trades, one partition per trades partition: the taker fills (each tape trade once) summed per market and outcome token, with the token's last price. Sorted by condition_id, token_id.",
		Columns: marketDayColumns,
		SortBy:  []string{"condition_id", "token_id"},
		Routes:  []string{"/v1/predmkt/markets", "/v1/predmkt/markets/{condition_id}"},
	})
	// PredmktMarketTotals is the per-day table summed from the first day through each
	// date: a checkpoint, so the market list reads one file for all the days before
	// the two its clock and window cut, however long the history.
	PredmktMarketTotals = Register(&Table{
		Name: "predmkt_market_totals", Area: "predmkt", Prefix: "predmkt/market_totals", Partitions: []string{"date"}, File: "market_totals.parquet", Derived: true,
		Doc:     "Derived from predmkt_market_days: per market and outcome token, the taker fills of every trades partition up to and including date, summed (the previous date's totals plus the date's day). Sorted by condition_id, token_id.",
		Columns: marketDayColumns,
		SortBy:  []string{"condition_id", "token_id"},
		Routes:  []string{"/v1/predmkt/markets", "/v1/predmkt/markets/{condition_id}"},
	})
	// PredmktMarketHours is the same sums per hour of each trades date: the market
	// list reads the hours of the days its clock and 24-hour window cut instead of their
	// raw fills (which are sorted by token, so a day is read whole for any of its hours),
	// and raw fills only for an hour the clock or the window's start falls inside.
	PredmktMarketHours = Register(&Table{
		Name: "predmkt_market_hours", Area: "predmkt", Prefix: "predmkt/market_hours", Partitions: []string{"date"}, File: "market_hours.parquet", Derived: true,
		Doc:      "Derived from predmkt_trades, one partition per trades partition: the taker fills (each tape trade once) summed per UTC hour of ts, market and outcome token, with the token's last price in the hour. Sorted by hour_ts, condition_id, token_id.",
		Columns:  append([]Column{{"hour_ts", "BIGINT", "epoch ms", "start of the UTC hour the fills' ts fall in"}}, marketDayColumns...),
		SortBy:   []string{"hour_ts", "condition_id", "token_id"},
		RowGroup: 16384,
		Routes:   []string{"/v1/predmkt/markets", "/v1/predmkt/markets/{condition_id}"},
	})
	// PredmktMarketFills is the taker fills of each trades date in time order, with only
	// what the market list sums: the hours the clock and the 24-hour window's start fall
	// inside are read from it (a few row groups by their ts statistics) instead of from
	// the raw trades, which are sorted by token, so any hour of them reads the whole day.
	PredmktMarketFills = Register(&Table{
		Name: "predmkt_market_fills", Area: "predmkt", Prefix: "predmkt/market_fills", Partitions: []string{"date"}, File: "market_fills.parquet", Derived: true,
		Doc: "Derived from predmkt_trades, one partition per trades partition: its taker fills (each tape trade once) with the columns the market list sums, in time order. Sorted by ts, seq.",
		Columns: []Column{
			{"ts", "BIGINT", "epoch ms", "venue time of the fill"},
			{"seq", "BIGINT", "", "seq of the tape trade"},
			{"condition_id", "VARCHAR", "0x hex", "market"},
			{"token_id", "VARCHAR", "decimal digits", "outcome token"},
			{"vol", "BIGINT", "micro-USD", "the fill's usd rounded to the micro-dollar"},
			{"price", "DOUBLE", "probability", "price of the fill"},
		},
		SortBy:   []string{"ts", "seq"},
		RowGroup: 4096,
		Routes:   []string{"/v1/predmkt/markets", "/v1/predmkt/markets/{condition_id}"},
	})
	// PredmktWalletDays is every fill of a trades date summed per wallet and market: the
	// prediction-market board sums the days wholly on one side of its clock and of each
	// window's start from it, and reads raw fills only for the few days those cut.
	PredmktWalletDays = Register(&Table{
		Name: "predmkt_wallet_days", Area: "predmkt", Prefix: "predmkt/wallet_days", Partitions: []string{"date"}, File: "wallet_days.parquet", Derived: true,
		Doc:     "Derived from predmkt_trades, one partition per trades partition: every fill with a ts (taker and maker) summed per wallet and market, money and shares as integer micro-units. Sorted by wallet, condition_id.",
		Columns: walletDayColumns,
		SortBy:  []string{"wallet", "condition_id"},
		Routes:  []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/wallets/{address}"},
	})
	// PredmktWalletTotals is predmkt_wallet_days summed from the first day through a
	// date: a checkpoint of every (wallet, market)'s lifetime sums, so the hourly board
	// reads one file for the days before its 30-day window instead of every one of them
	// (query/predmkt_wallet_totals.go). Only the dates a board hour needs are kept.
	PredmktWalletTotals = Register(&Table{
		Name: "predmkt_wallet_totals", Area: "predmkt", Prefix: "predmkt/wallet_totals", Partitions: []string{"date"}, File: "wallet_totals.parquet", Derived: true,
		Doc:     "Derived from predmkt_wallet_days: per wallet and market, the fills of every trades partition up to and including date, summed (an earlier date's totals plus the days after it). Written for the newest date wholly before the 30-day window of the board hour it is published at; the newest two are kept. Sorted by wallet, condition_id.",
		Columns: walletDayColumns,
		SortBy:  []string{"wallet", "condition_id"},
		Routes:  []string{"/v1/predmkt/leaderboard"},
	})
	// PerpdexLiquidations is the liquidation fills of perpdex_fills only, sorted by time
	// so that the newest-first page reads the newest row groups.
	PerpdexLiquidations = Register(&Table{
		Name: "perpdex_liquidations", Area: "perpdex", Prefix: "perpdex/liquidations", Partitions: []string{"date"}, File: "liquidations.parquet", Derived: true,
		Doc: "Derived from perpdex_fills, one partition per fills partition: the fills of liquidated users (liquidation true), with the side that was closed. Sorted by time.",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC, microseconds", "fill time"},
			{"wallet", "VARCHAR", "0x hex", "liquidated user"},
			{"coin", "VARCHAR", "", "asset"},
			{"side", "VARCHAR", "", "long (start_position > 0) or short: the side that was closed"},
			{"sz", "DOUBLE", "tokens", "fill size"},
			{"px", "DOUBLE", "USD", "fill price"},
			{"liq_mark_px", "DOUBLE", "USD", "mark price at liquidation"},
			{"tid", "BIGINT", "", "trade id"},
		},
		SortBy:   []string{"time", "tid", "wallet"},
		RowGroup: 8192,
		Routes:   []string{"/v1/perpdex/liquidations"},
	})
)

// PredmktMarketBoard is the market list's figures at the start of an hour: a request
// in that hour adds only the fills from the hour's start to its clock and those of the
// 24-hour window's first hour from its start on (both from predmkt_market_fills), so
// it groups one row per token and a few thousand fills instead of every day's and
// hour's sums it would read otherwise.
var PredmktMarketBoard = Register(&Table{
	Name: "predmkt_market_board", Area: "predmkt", Prefix: "predmkt/market_board", Partitions: []string{"built"}, File: "market_board.parquet", Derived: true,
	Doc: "Derived, hourly (built = the hour and a hash of the trades files; computed once per hour and sources from the per-day market tables): per market and outcome token, the taker fills before the hour summed, with the last one, and the sum of those of the 23 hours before it. Sorted by condition_id, token_id.",
	Columns: []Column{
		{"condition_id", "VARCHAR", "0x hex", "market"},
		{"token_id", "VARCHAR", "decimal digits", "outcome token"},
		{"vol", "BIGINT", "micro-USD", "sum of the taker fills' usd before the hour, each rounded to the micro-dollar"},
		{"vol_w", "BIGINT", "micro-USD", "the same over the fills of the 23 hours before the hour"},
		{"n", "BIGINT", "", "taker fills before the hour"},
		{"last_ts", "BIGINT", "epoch ms", "last taker fill before the hour (the latest by ts, then seq); NULL when none"},
		{"last_seq", "BIGINT", "", "seq of that fill"},
		{"last_price", "DOUBLE", "probability", "price of that fill"},
	},
	SortBy: []string{"condition_id", "token_id"},
	Routes: []string{"/v1/predmkt/markets", "/v1/predmkt/markets/{condition_id}"},
})
