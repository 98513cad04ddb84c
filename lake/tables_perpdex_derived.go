package lake

// Derived perpetuals tables: cohort labels computed by mdq itself (query/perpdex_cohort*.go)
// from perpdex_accounts, perpdex_ledger and perpdex_fills, never written by ingest or demo.

// PerpdexCohortsHourly holds the point-in-time labels: for every complete hour H from
// 2026-04-07 with an account snapshot taken exactly at H, each snapshotted wallet's
// labels as they stood at H. The hour in progress is not yet published. Each date's
// partition is written once its hours are; the newest (partial) date is rewritten as
// hours complete.
var PerpdexCohortsHourly = Register(&Table{
	Name: "perpdex_cohorts_hourly", Area: "perpdex", Prefix: "perpdex/cohorts_hourly", Partitions: []string{"date"}, File: "cohorts.parquet", Derived: true,
	Doc: "Derived: point-in-time cohort labels for each complete hour from 2026-04-07 with an account snapshot, computed from accounts, ledger and fills known at that hour; the hour in progress is not yet published.",
	Columns: []Column{
		{"hour_ts", "TIMESTAMP", "UTC", "label hour: the account snapshot the labels were computed from"},
		{"wallet", "VARCHAR", "0x hex", "user"},
		{"size_cohort", "VARCHAR", "", "account-value band slug (leviathan, whale, dolphin, fish, shrimp)"},
		{"pnl_cohort", "VARCHAR", "", "PnL band slug (10x_smart, 3x_smart, profitable, unprofitable, rekt, unknown)"},
	},
	SortBy: []string{"hour_ts", "wallet"},
	Routes: []string{"/v1/perpdex/liquidations", "/v1/perpdex/cohorts"},
})

// PerpdexCohortsCurrent holds today's labels: every wallet of the newest account
// snapshot at or before the store clock.
var PerpdexCohortsCurrent = Register(&Table{
	Name: "perpdex_cohorts_current", Area: "perpdex", Prefix: "perpdex/cohorts_current", File: "cohorts.parquet", Derived: true,
	Doc: "Derived: today's cohort labels, one row per wallet of the newest account snapshot at or before the store clock.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user"},
		{"size_cohort", "VARCHAR", "", "account-value band slug"},
		{"pnl_cohort", "VARCHAR", "", "PnL band slug"},
		{"pnl_cohort_tag", "VARCHAR", "", "display tag of the PnL band (spaces, e.g. 3x smart)"},
		{"style_cohort_tag", "VARCHAR", "", "scalper, swing or position from the mean holding time of completed trades; NULL without one"},
		{"computed_at", "TIMESTAMP", "UTC", "the account snapshot the labels were computed from"},
	},
	SortBy: []string{"wallet"},
	Routes: []string{"/v1/perpdex/liquidations", "/v1/perpdex/leaderboard", "/v1/perpdex/hype/holders", "/v1/perpdex/wallets/{address}", "/v1/perpdex/cohorts"},
})

// PerpdexClosedTrades is the closed-trade reconstruction behind the perpetuals
// leaderboards, wallet trades and trade summaries: one row per position cycle of a
// wallet on one asset, sorted by wallet so that a per-wallet request reads one small
// row group. Sixteen files, one per first hex digit of the wallet (bucket), each the
// trades of its wallets (so the reconstruction runs on a sixteenth of the fills at a
// time), republished when a fills file changes (a trade can span any number of days,
// so a new day can change trades that opened before it).
var PerpdexClosedTrades = Register(&Table{
	Name: "perpdex_closed_trades", Area: "perpdex", Prefix: "perpdex/closed_trades", Partitions: []string{"bucket"}, File: "closed_trades.parquet", Derived: true,
	Doc: "Derived from perpdex_fills (sql/perpdex/closed_trades.sql): trades reconstructed from fills, flips split, open trades included (is_complete false, close_ts their latest fill).",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "trader"},
		{"asset", "VARCHAR", "", "coin, <dex>:<symbol> for builder-deployed markets"},
		{"trade_no", "BIGINT", "", "the trade's number among the wallet's trades on the asset, from 1"},
		{"direction", "VARCHAR", "long or short", ""},
		{"open_ts", "TIMESTAMP", "UTC", "first fill"},
		{"close_ts", "TIMESTAMP", "UTC", "last fill (the closing one when complete)"},
		{"entry_price", "DOUBLE", "USD", "size-weighted price of the opening legs; NULL without one"},
		{"exit_price", "DOUBLE", "USD", "size-weighted price of the closing legs; NULL without one"},
		{"max_size_token", "DOUBLE", "tokens", "largest position size"},
		{"max_size_usd", "DOUBLE", "USD", "largest position size times price"},
		{"volume_usd", "DOUBLE", "USD", "traded notional"},
		{"realized_pnl", "DOUBLE", "USD", "closed PnL of the trade's fills (partial closes included)"},
		{"total_fee", "DOUBLE", "USD", "fees, a flip's split by size"},
		{"fill_count", "BIGINT", "", "legs of the trade"},
		{"is_complete", "BOOLEAN", "", "the position went flat"},
	},
	SortBy:   []string{"wallet", "close_ts", "asset", "trade_no"},
	RowGroup: 16384,
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/wallets/{address}/trades", "/v1/perpdex/wallets/{address}/trades/summary"},
})
