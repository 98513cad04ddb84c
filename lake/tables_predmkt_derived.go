package lake

// Derived prediction-market tables: written by the service itself, not by ingest.

// PredmktBoard is the hourly wallet board behind /v1/predmkt/leaderboard and the
// smart-money cohort. One row per (category, wallet): category "all" holds lifetime
// figures over every market, the other rows the same figures recomputed on one
// category's markets only. Figures are stored already rounded (USD to the cent,
// ratios to six places), exactly as the routes return them. Partition built is the
// board hour and a short hash of the source files (trades, markets, resolutions,
// profiles) it was computed from, as the other hourly boards' (tables_boards.go): a
// process in the same hour with the same sources reads it back instead of recomputing
// it; a new or corrected source file gives another built.
var PredmktBoard = Register(&Table{
	Name: "predmkt_board", Area: "predmkt", Prefix: "predmkt/board", Partitions: []string{"built"}, File: "board.parquet", Derived: true,
	Doc: "Derived, hourly (built = the board hour and a hash of its source files; computed once per hour and sources, read back by later processes): realized PnL, hit rate, volume and trade figures per (category, wallet).",
	Columns: []Column{
		{"category", "VARCHAR", "", "all, or one category (Crypto, Sports, Politics, Pop-Culture, Tech)"},
		{"wallet", "VARCHAR", "0x hex", "proxy wallet"},
		{"pseudonym", "VARCHAR", "", "profile pseudonym; empty when none"},
		{"display_name", "VARCHAR", "", "profile display name; empty when none"},
		{"realized_pnl", "DOUBLE", "USD, cents", "lifetime realized PnL over validly resolved markets"},
		{"pnl_24h", "DOUBLE", "USD, cents", "realized PnL of markets resolved in the 24 hours to built_ts"},
		{"pnl_7d", "DOUBLE", "USD, cents", "the same over 7 days"},
		{"pnl_30d", "DOUBLE", "USD, cents", "the same over 30 days"},
		{"resolved_markets", "BIGINT", "", "validly resolved markets traded (invalid resolutions excluded)"},
		{"hit_rate", "DOUBLE", "fraction, 6 places", "share of resolved volume in markets with positive PnL; NULL with no resolved volume"},
		{"hit_rate_ci", "DOUBLE", "fraction, 6 places", "half-width of the 95% Wilson interval, n = resolved_markets; NULL with hit_rate"},
		{"volume_all", "DOUBLE", "USD, cents", "lifetime buys plus sells"},
		{"volume_24h", "DOUBLE", "USD, cents", "buys plus sells in the 24 hours to built_ts"},
		{"volume_7d", "DOUBLE", "USD, cents", "the same over 7 days"},
		{"volume_30d", "DOUBLE", "USD, cents", "the same over 30 days"},
		{"trades_all", "BIGINT", "", "lifetime fills"},
		{"trades_24h", "BIGINT", "", "fills in the 24 hours to built_ts"},
		{"trades_7d", "BIGINT", "", "fills in 7 days"},
		{"trades_30d", "BIGINT", "", "fills in 30 days"},
		{"avg_trade_usd", "DOUBLE", "USD, cents", "volume_all / trades_all"},
		{"markets", "BIGINT", "", "lifetime markets traded"},
		{"first_ts", "BIGINT", "epoch ms", "first fill"},
		{"last_ts", "BIGINT", "epoch ms", "last fill"},
		{"built_ts", "TIMESTAMP", "UTC", "the hour the board was built for (store clock truncated to the hour)"},
	},
	SortBy: []string{"category", "wallet"},
	Routes: []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/wallets/{address}"},
})
