package lake

// PerpdexFillsDaily is the perpetuals boards' per-day partial aggregates of the fills
// (query/perpdex_fills_daily.go): one partition per perpdex_fills date partition,
// republished only when that fills file changes (a sidecar of the fills files'
// signatures, as the on-chain legs). A board combines the complete days of its window
// from here with raw fills only for the two partial days at its edges, and the
// lifetime sum from every complete day before the board hour's day. The sums are exact
// decimals (each fill's value rounded to 1e-10 first), so a sum of days equals the sum
// of the fills whatever the grouping.
var PerpdexFillsDaily = Register(&Table{
	Name: "perpdex_fills_daily", Area: "perpdex", Prefix: "perpdex/fills_daily", Partitions: []string{"date"}, File: "daily.parquet", Derived: true,
	Doc: "Derived from perpdex_fills, one partition per fills date: per wallet, the day's sums behind the perpetuals leaderboards (sql/perpdex/fills_daily.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a fill that day"},
		{"day", "DATE", "UTC", "the fills' date (CAST(time AS DATE)), which a board's window compares, whatever the partition"},
		{"realized_x", "DECIMAL(38,10)", "USD", "sum of closed_pnl"},
		{"fee_x", "DECIMAL(38,10)", "USD", "sum of fee"},
		{"volume_x", "DECIMAL(38,10)", "USD", "sum of px * sz"},
		{"fills", "BIGINT", "", "fills that day"},
	},
	SortBy: []string{"wallet", "day"},
	Routes: []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexPositionsDaily is the same for the position snapshots: per wallet and day,
// the leverage sum and count behind the boards' average leverage.
var PerpdexPositionsDaily = Register(&Table{
	Name: "perpdex_positions_daily", Area: "perpdex", Prefix: "perpdex/positions_daily", Partitions: []string{"date"}, File: "daily.parquet", Derived: true,
	Doc: "Derived from perpdex_positions, one partition per positions date: per wallet, the day's leverage sum and count behind the perpetuals leaderboards' avg_leverage (sql/perpdex/positions_daily.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a position snapshot that day"},
		{"day", "DATE", "UTC", "CAST(snapshot_ts AS DATE)"},
		{"leverage_x", "DECIMAL(38,10)", "", "sum of leverage"},
		{"leverage_n", "BIGINT", "", "snapshots with a leverage"},
	},
	SortBy: []string{"wallet", "day"},
	Routes: []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexFundingDaily is the same for the funding payments: per wallet and day, the
// sum behind the boards' funding paid.
var PerpdexFundingDaily = Register(&Table{
	Name: "perpdex_funding_daily", Area: "perpdex", Prefix: "perpdex/funding_daily", Partitions: []string{"date"}, File: "daily.parquet", Derived: true,
	Doc: "Derived from perpdex_funding, one partition per funding date: per wallet, the day's funding sum behind the perpetuals leaderboards (sql/perpdex/funding_daily.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a funding payment that day"},
		{"day", "DATE", "UTC", "CAST(time AS DATE)"},
		{"usdc_x", "DECIMAL(38,10)", "USD", "sum of usdc (negative: paid)"},
	},
	SortBy: []string{"wallet", "day"},
	Routes: []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})
