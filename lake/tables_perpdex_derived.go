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
// time). A trade can span any number of days, so a new or changed day of fills can
// change trades that opened before it: the publication restarts from the checkpoint
// (PerpdexClosedTradesCheckpoint) at or before the earliest changed day, keeps the
// trades that were over before it and recomputes the rest from the fills from there.
// Each bucket has two segments (files): history, the trades over before a split date,
// rewritten only every few days, and recent, the others, rewritten at each
// publication, so a new day costs the open trades rather than the whole table.
var PerpdexClosedTrades = Register(&Table{
	Name: "perpdex_closed_trades", Area: "perpdex", Prefix: "perpdex/closed_trades", Partitions: []string{"bucket", "segment"}, File: "closed_trades.parquet", Derived: true,
	Doc: "Derived from perpdex_fills (sql/perpdex/closed_trades.sql; published incrementally by closed_trades_parts.sql and closed_trades_merge.sql from perpdex_closed_trades_checkpoint): trades reconstructed from fills, flips split, open trades included (is_complete false, close_ts their latest fill).",
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

// PerpdexClosedTradesCheckpoint is the state the closed-trade reconstruction carries
// across days, so that publishing a new day reads that day's fills and not the whole
// history: for each date, one row per (wallet, asset) with a fill before the date, the
// partial aggregates of its latest trade (the one a fill on or after the date can
// still extend) over its legs before the date. A publication writes the checkpoint of
// the newest fills date; older ones stay, each valid while the fills files before its
// date are those it was computed from (sources), so a day that arrives late or is
// replaced restarts from the newest valid checkpoint at or before it.
var PerpdexClosedTradesCheckpoint = Register(&Table{
	Name: "perpdex_closed_trades_checkpoint", Area: "perpdex", Prefix: "perpdex/closed_trades_checkpoint", Partitions: []string{"date"}, File: "checkpoint.parquet", Derived: true,
	Doc: "Derived with perpdex_closed_trades (sql/perpdex/closed_trades_checkpoint.sql): the state of each (wallet, asset)'s latest trade at the start of the date, from its legs before it; sums rather than averages, so that later legs add to them.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "trader"},
		{"asset", "VARCHAR", "", "coin"},
		{"trade_no", "BIGINT", "", "the trade's number (trades before it are over)"},
		{"first_time", "TIMESTAMP", "UTC", "the trade's first leg (open_ts)"},
		{"first_tid", "BIGINT", "", "its fill's trade id"},
		{"first_ord", "INTEGER", "", "0 for a close leg, 1 for an open leg"},
		{"first_dir", "INTEGER", "", "its direction: 1 long, -1 short"},
		{"last_time", "TIMESTAMP", "UTC", "the trade's latest leg before the date"},
		{"last_tid", "BIGINT", "", "its fill's trade id"},
		{"last_ord", "INTEGER", "", "0 close, 1 open"},
		{"last_pos", "DOUBLE", "tokens", "position size after it"},
		{"open_notional", "DOUBLE", "USD", "sum of size times price of the opening legs; NULL without one"},
		{"open_size", "DOUBLE", "tokens", "sum of the opening legs' sizes; NULL without one"},
		{"close_notional", "DOUBLE", "USD", "the same for the closing legs"},
		{"close_size", "DOUBLE", "tokens", "the same for the closing legs"},
		{"max_size_token", "DOUBLE", "tokens", "largest position size"},
		{"max_size_usd", "DOUBLE", "USD", "largest position size times price"},
		{"volume_usd", "DOUBLE", "USD", "traded notional"},
		{"realized_pnl", "DOUBLE", "USD", "closed PnL"},
		{"total_fee", "DOUBLE", "USD", "fees"},
		{"fill_count", "BIGINT", "", "legs"},
		{"sources", "VARCHAR", "sha256 hex", "signature of the fills files before the date the row was computed from; a checkpoint whose signature is not the lake's is not used"},
	},
	SortBy: []string{"wallet", "asset"},
	Routes: []string{"/v1/perpdex/leaderboard", "/v1/perpdex/wallets/{address}/trades"},
})
