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
	SortBy:   []string{"wallet", "day"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of each file: groups small enough to skip the rest
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
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
	SortBy:   []string{"wallet", "day"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of each file: groups small enough to skip the rest
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexPositionsSnaps is the position snapshots summed per wallet and snapshot: the
// leverage sum and count and the unrealized PnL. A board reads its window's two partial
// edge days (the leverage) and its two position batches (the uPnL delta) from here, one
// wallet bucket's row groups, where the raw positions files (not sorted by wallet) were
// read whole by every bucket.
var PerpdexPositionsSnaps = Register(&Table{
	Name: "perpdex_positions_snaps", Area: "perpdex", Prefix: "perpdex/positions_snaps", Partitions: []string{"date"}, File: "snaps.parquet", Derived: true,
	Doc: "Derived from perpdex_positions, one partition per positions date: per wallet and snapshot, the leverage sum and count and the unrealized PnL behind the perpetuals leaderboards' edge days (sql/perpdex/positions_snaps.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a position in the snapshot"},
		{"snapshot_ts", "TIMESTAMP", "UTC", "the snapshot"},
		{"leverage_x", "DECIMAL(38,10)", "", "sum of leverage; NULL when none"},
		{"leverage_n", "BIGINT", "", "positions with a leverage"},
		{"unrealized_pnl", "DOUBLE", "USD", "sum of unrealized_pnl; NULL when none"},
	},
	SortBy:   []string{"wallet", "snapshot_ts"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of each file: groups small enough to skip the rest
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
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
	SortBy:   []string{"wallet", "day"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of each file: groups small enough to skip the rest
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexBuildersDaily is the builders board's per-day partial aggregates of the
// builder-code fills: per builder and day, exact decimal sums and counts, and what is
// not a sum kept as values (the day's distinct wallets, coins and dexes, and every
// fee rate, for the window's distinct counts and median). The builders board
// (sql/perpdex/builders_board.sql) adds a window's complete days from here and reads
// raw fills only for its two partial edge days.
var PerpdexBuildersDaily = Register(&Table{
	Name: "perpdex_builders_daily", Area: "perpdex", Prefix: "perpdex/builders_daily", Partitions: []string{"date"}, File: "daily.parquet", Derived: true,
	Doc: "Derived from perpdex_fills, one partition per fills date: per builder, the day's aggregates behind the builders board (sql/perpdex/builders_daily.sql). Sorted by builder.",
	Columns: []Column{
		{"builder", "VARCHAR", "0x hex", "builder code with a fill that day"},
		{"day", "DATE", "UTC", "CAST(time AS DATE)"},
		{"fee_x", "DECIMAL(38,10)", "USD", "sum of builder_fee"},
		{"volume_x", "DECIMAL(38,10)", "USD", "sum of px * sz"},
		{"share_x", "DECIMAL(38,10)", "USD", "sum of px * sz over one side per (builder, tid), the lower wallet"},
		{"fills", "BIGINT", "", "builder fills that day"},
		{"node_fee_x", "DECIMAL(38,10)", "USD", "sum of fee - builder_fee - deployer_fee"},
		{"trader_fee_x", "DECIMAL(38,10)", "USD", "sum of fee"},
		{"deployer_fee_x", "DECIMAL(38,10)", "USD", "sum of deployer_fee; NULL when none"},
		{"closed_pnl_x", "DECIMAL(38,10)", "USD", "sum of closed_pnl"},
		{"crossed_fills", "BIGINT", "", "taker fills"},
		{"first_seen", "TIMESTAMP", "UTC", "first fill of the day"},
		{"last_seen", "TIMESTAMP", "UTC", "last fill of the day"},
		{"fee_rates_bps", "DOUBLE[]", "bps", "builder_fee / (px * sz) * 10000 of every fill with a builder fee, ascending; NULL when none"},
		{"buy_x", "DECIMAL(38,10)", "USD", "sum of px * sz of buys; NULL when none"},
		{"sell_x", "DECIMAL(38,10)", "USD", "sum of px * sz of sells; NULL when none"},
		{"non_usd_fee_fills", "BIGINT", "", "fills whose fee token is not USDC"},
		{"non_usd_fee_x", "DECIMAL(38,10)", "USD", "their px * sz; NULL when none"},
		{"wallets", "VARCHAR[]", "0x hex", "distinct wallets, ascending"},
		{"coins", "VARCHAR[]", "", "distinct coins, ascending"},
		{"dexes", "VARCHAR[]", "", "distinct dexes ('' for the main venue), ascending"},
	},
	SortBy: []string{"builder", "day"},
	Routes: []string{"/v1/perpdex/builders"},
})

// PerpdexAccountsDaily is the perpetuals boards' drawdown series in per-day segments:
// per wallet and day, the day's snapshots split where the day's running peak rises,
// each segment's peak and lowest value, and the day's last snapshot. A board folds the
// complete days of its window from here (the peak carried from earlier days) and reads
// raw snapshots only for its two partial edge days; the drawdowns are the same bits
// as a window function over every snapshot (sql/perpdex/accounts_daily.sql).
var PerpdexAccountsDaily = Register(&Table{
	Name: "perpdex_accounts_daily", Area: "perpdex", Prefix: "perpdex/accounts_daily", Partitions: []string{"date"}, File: "daily.parquet", Derived: true,
	Doc: "Derived from perpdex_accounts, one partition per accounts date: per wallet, the day's equity segments behind the perpetuals leaderboards' drawdowns (sql/perpdex/accounts_daily.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a snapshot that day"},
		{"day", "DATE", "UTC", "CAST(snapshot_ts AS DATE)"},
		{"peak", "DOUBLE", "USD", "the day's running peak of account_value over the segment"},
		{"low", "DOUBLE", "USD", "the segment's lowest account_value"},
		{"last_ts", "TIMESTAMP", "UTC", "the day's last snapshot"},
		{"last_av", "DOUBLE", "USD", "its account_value"},
	},
	SortBy:   []string{"wallet", "day", "peak"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of each file: groups small enough to skip the rest
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexWalletCarry is what the perpetuals boards carry across days per wallet, as of
// the end of each date: the last equity snapshot, the first day's first value, the
// lifetime fill sums and days, funding, leverage, peak and largest drawdown. Each date
// is the previous date's carry with that date's rows of the per-day tables folded in (a
// chain of their signatures decides what is current, as predmkt_market_totals), so one
// more day costs one small fold. A board reads two dates of it (the day before its
// window start and the day before its hour) where it read every day's units of the
// history for the equity at the window's ends and the lifetime PnL, and the window
// "all" takes every complete day from it (sql/perpdex/board.sql).
var PerpdexWalletCarry = Register(&Table{
	Name: "perpdex_wallet_carry", Area: "perpdex", Prefix: "perpdex/wallet_carry", Partitions: []string{"date"}, File: "carry.parquet", Derived: true,
	Doc: "Derived from perpdex_accounts_daily, perpdex_fills_daily, perpdex_funding_daily and perpdex_positions_daily, one partition per date of any: per wallet seen up to that date, its carry to the next day (sql/perpdex/wallet_carry.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a snapshot, a fill, a funding payment or a position on or before the date"},
		{"last_ts", "TIMESTAMP", "UTC", "the last snapshot on or before the date; NULL without one"},
		{"last_av", "DOUBLE", "USD", "its account_value"},
		{"first_ts", "TIMESTAMP", "UTC", "midnight of the first day with a snapshot; NULL without one"},
		{"first_av", "DOUBLE", "USD", "that day's first account_value (its smallest running peak)"},
		{"realized_x", "DECIMAL(38,10)", "USD", "sum of closed_pnl of every fill on or before the date; NULL without one"},
		{"fee_x", "DECIMAL(38,10)", "USD", "sum of their fee"},
		{"volume_x", "DECIMAL(38,10)", "USD", "sum of their px * sz"},
		{"fill_days", "BIGINT", "", "days with a fill; NULL without one"},
		{"last_fill_day", "DATE", "UTC", "the last of them"},
		{"funding_x", "DECIMAL(38,10)", "USD", "sum of funding usdc on or before the date; NULL without a payment"},
		{"lev_x", "DECIMAL(38,10)", "", "sum of the position snapshots' leverage; NULL without one"},
		{"lev_n", "BIGINT", "", "position snapshots with a leverage; NULL without a snapshot"},
		{"peak", "DOUBLE", "USD", "the highest account_value on or before the date; NULL without a snapshot"},
		{"dd_pct", "DOUBLE", "%", "the largest drawdown from the running peak, (peak - value) / peak * 100 (0 while the peak is not positive)"},
		{"dd_usd", "DOUBLE", "USD", "the largest peak - value"},
	},
	SortBy:   []string{"wallet"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of a file
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})

// PerpdexTradesCarry is what the perpetuals leaderboards carry across days from the
// closed trades per wallet, as of the end of each fills date: the counts and exact sums
// of its complete trades and its win and loss streaks, the longest and the one running
// at the end of the date. Each date is the previous date's carry with the trades closed
// that date folded in (query/perpdex_trades_carry.go: a chain of the fills files'
// signatures decides what is current, since a complete trade closed on a date depends
// on the fills up to it only), so the window "all" reads one date of it and the trades
// of the board's own day, where it ran a window over every closed trade of the history
// (sql/perpdex/board.sql).
var PerpdexTradesCarry = Register(&Table{
	Name: "perpdex_trades_carry", Area: "perpdex", Prefix: "perpdex/trades_carry", Partitions: []string{"date"}, File: "carry.parquet", Derived: true,
	Doc: "Derived from perpdex_closed_trades (complete trades), one partition per perpdex_fills date: per wallet with a complete trade closed on or before that date, its trade figures to the end of the date (sql/perpdex/trades_days.sql, sql/perpdex/trades_carry.sql). Sorted by wallet.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "user with a complete trade closed on or before the date"},
		{"n", "BIGINT", "", "complete trades"},
		{"wins", "BIGINT", "", "of them with realized_pnl > 0"},
		{"losses", "BIGINT", "", "with realized_pnl < 0"},
		{"longs", "BIGINT", "", "long trades"},
		{"long_wins", "BIGINT", "", "long trades won"},
		{"shorts", "BIGINT", "", "short trades"},
		{"short_wins", "BIGINT", "", "short trades won"},
		{"pnl_x", "DECIMAL(38,10)", "USD", "sum of realized_pnl (each rounded to 10 places)"},
		{"long_pnl_x", "DECIMAL(38,10)", "USD", "the same over long trades"},
		{"short_pnl_x", "DECIMAL(38,10)", "USD", "over short trades"},
		{"gross_win_x", "DECIMAL(38,10)", "USD", "over winning trades"},
		{"gross_loss_x", "DECIMAL(38,10)", "USD", "over losing trades"},
		{"dur_s", "BIGINT", "s", "sum of the trades' durations in whole seconds, (close_ts - open_ts) truncated"},
		{"max_w", "BIGINT", "", "the longest run of winning trades in the order (close_ts, asset, trade_no); a flat trade ends a run"},
		{"max_l", "BIGINT", "", "the longest run of losing trades"},
		{"run_w", "BIGINT", "", "the run of winning trades at the end of the date (0 when its last trade is not a win)"},
		{"run_l", "BIGINT", "", "the run of losing trades at the end of the date"},
	},
	SortBy:   []string{"wallet"},
	RowGroup: 2048, // a board pass reads a quarter of the wallets (perpdexBoardGroups) of a file
	Routes:   []string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
})
