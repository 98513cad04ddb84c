package lake

// Hourly boards: the published result of each board query for one board hour, so a
// process that starts (or a `mdq query` that runs) in an hour whose boards are
// published reads them instead of recomputing them from the whole window.
//
// Every board table has the same two partition keys: board, the board's key within its
// kind (chain, window, smart-money flag, or wallet bucket, joined by dots), and built,
// the board hour and a short hash of the source files the board was computed from
// (YYYYMMDDTHH_hash): a file of the same hour built from other sources (a new day
// ingested, a corrected file) is not read. The columns are the board query's, in its
// order; the rows are in the query's order. Old hours are removed when a newer hour of
// the same board is written.

// BoardPartitions are the partition keys of every board table.
var BoardPartitions = []string{"board", "built"}

func boardTable(name, area, prefix, doc string, routes []string, cols ...Column) *Table {
	return Register(&Table{
		Name: name, Area: area, Prefix: prefix, Partitions: BoardPartitions, File: "board.parquet", Derived: true,
		Doc: "Derived, hourly (a board hour's result, see tables_boards.go): " + doc, Columns: cols, Routes: routes,
	})
}

// PerpdexBoard is sql/perpdex/board.sql's result: per wallet, the window's figures the
// leaderboards derive their rows from. board = window.group: a range of four wallet
// buckets (first hex digits of the wallet), e.g. 30d.0-3 (query.perpdexBoardGroups).
var PerpdexBoard = boardTable("perpdex_board", "perpdex", "perpdex/boards/leaderboard",
	"per wallet, the raw figures of the perpetuals leaderboards for one window (sql/perpdex/board.sql), one file per window and group of four wallet buckets (board = window.group, e.g. 30d.0-3).",
	[]string{"/v1/perpdex/leaderboard", "/v1/perpdex/leaderboard/flow-adjusted", "/v1/perpdex/traders"},
	Column{"wallet", "VARCHAR", "0x hex", "trader with a fill in the window"},
	Column{"account_value", "DOUBLE", "USD", "equity at the board hour"},
	Column{"account_value_start", "DOUBLE", "USD", "equity at the window start"},
	Column{"realized_gross", "DOUBLE", "USD", "window closed PnL before fees"},
	Column{"fees", "DOUBLE", "USD", "window fees"},
	Column{"volume", "DOUBLE", "USD", "window notional"},
	Column{"cum", "DOUBLE", "USD", "lifetime closed PnL minus fees to the board hour"},
	Column{"trades", "BIGINT", "", "closed trades closed in the window"},
	Column{"wins", "BIGINT", "", ""},
	Column{"losses", "BIGINT", "", ""},
	Column{"longs", "BIGINT", "", ""},
	Column{"long_wins", "BIGINT", "", ""},
	Column{"shorts", "BIGINT", "", ""},
	Column{"short_wins", "BIGINT", "", ""},
	Column{"long_pnl", "DOUBLE", "USD", ""},
	Column{"short_pnl", "DOUBLE", "USD", ""},
	Column{"gross_win", "DOUBLE", "USD", ""},
	Column{"gross_loss", "DOUBLE", "USD", ""},
	Column{"expectancy", "DOUBLE", "USD", "NULL without trades"},
	Column{"avg_dur", "DOUBLE", "seconds", "NULL without trades"},
	Column{"win_streak", "BIGINT", "", ""},
	Column{"loss_streak", "BIGINT", "", ""},
	Column{"max_dd_pct", "DOUBLE", "percent", ""},
	Column{"cur_dd_pct", "DOUBLE", "percent", ""},
	Column{"max_dd_usd", "DOUBLE", "USD", ""},
	Column{"avg_lev", "DOUBLE", "", "NULL without a position snapshot"},
	Column{"funding_paid", "DOUBLE", "USD", ""},
	Column{"deposits", "DOUBLE", "USD", ""},
	Column{"withdrawals", "DOUBLE", "USD", ""},
	Column{"sends_in", "DOUBLE", "USD", ""},
	Column{"sends_out", "DOUBLE", "USD", ""},
	Column{"sends", "BIGINT", "", "sends made or received"},
	Column{"delta_upnl", "DOUBLE", "USD", ""},
	Column{"active_days", "BIGINT", "", ""},
	Column{"last_day", "DATE", "", ""},
	Column{"size_cohort", "VARCHAR", "", "today's label"},
	Column{"pnl_cohort", "VARCHAR", "", ""},
	Column{"pnl_cohort_tag", "VARCHAR", "", ""},
	Column{"style_cohort_tag", "VARCHAR", "", ""},
)

// OnchainScreenerBoard is sql/onchain/screener.sql's result. board = chain.window.smart.
var OnchainScreenerBoard = boardTable("onchain_screener_board", "onchain", "onchain/boards/screener",
	"every token of one chain over one window (sql/onchain/screener.sql); board = chain.window.smart_money_only.",
	[]string{"/v1/onchain/tokens/screener"},
	Column{"token_address", "VARCHAR", "0x hex", ""},
	Column{"symbol", "VARCHAR", "", ""},
	Column{"name", "VARCHAR", "", "NULL when unknown"},
	Column{"volume_usd", "DOUBLE", "USD", ""},
	Column{"in_usd", "DOUBLE", "USD", ""},
	Column{"out_usd", "DOUBLE", "USD", ""},
	Column{"unique_holders", "BIGINT", "", ""},
	Column{"tx_count", "BIGINT", "", ""},
	Column{"volume_key", "DOUBLE", "USD", "sort key: exact volume rounded to the cent"},
	Column{"net_key", "DOUBLE", "USD", "sort key"},
	Column{"smart_key", "DOUBLE", "USD", "sort key"},
)

// OnchainDiscoverBoard is sql/onchain/discover.sql's result. board = chain.window.
var OnchainDiscoverBoard = boardTable("onchain_discover_board", "onchain", "onchain/boards/discover",
	"every wallet of one chain with a realized PnL over one window (sql/onchain/discover.sql); board = chain.window.",
	[]string{"/v1/onchain/wallets/discover"},
	Column{"address", "VARCHAR", "0x hex", ""},
	Column{"inflow", "DOUBLE", "USD", ""},
	Column{"outflow", "DOUBLE", "USD", ""},
	Column{"tx_count", "BIGINT", "", ""},
	Column{"tokens_traded", "BIGINT", "", ""},
	Column{"tokens_profitable", "BIGINT", "", ""},
	Column{"first_seen", "TIMESTAMP", "UTC", ""},
	Column{"last_active", "TIMESTAMP", "UTC", ""},
	Column{"realized_pnl", "DOUBLE", "USD", ""},
	Column{"in_key", "DOUBLE", "USD", "sort key"},
	Column{"out_key", "DOUBLE", "USD", "sort key"},
	Column{"net_key", "DOUBLE", "USD", "sort key"},
	Column{"pnl_key", "DOUBLE", "USD", "sort key"},
	Column{"volume_key", "DOUBLE", "USD", "sort key"},
)

// OnchainTracePairsBoard is sql/onchain/trace_pairs.sql's result. board = chain.window.
var OnchainTracePairsBoard = boardTable("onchain_trace_pairs_board", "onchain", "onchain/boards/trace_pairs",
	"the (wallet, counterparty) pairs of one chain over one window, each wallet's ranked by pair volume and cut to its first 10 (the widest hop; sql/onchain/trace_pairs.sql); board = chain.window.",
	[]string{"/v1/onchain/wallets/{address}/trace"},
	Column{"wallet", "VARCHAR", "0x hex", ""},
	Column{"counterparty", "VARCHAR", "0x hex", ""},
	Column{"out_usd", "DOUBLE", "USD", ""},
	Column{"in_usd", "DOUBLE", "USD", ""},
	Column{"tx_count", "BIGINT", "", ""},
	Column{"volume", "DOUBLE", "USD", ""},
)

// OnchainHoldersBoard is sql/onchain/token_holders.sql's result. board = chain.
var OnchainHoldersBoard = boardTable("onchain_holders_board", "onchain", "onchain/boards/holders",
	"every token's first 50 wallets of one chain by cumulative net inflow (sql/onchain/token_holders.sql); board = chain.",
	[]string{"/v1/onchain/tokens/{token_address}/holders"},
	Column{"token", "VARCHAR", "0x hex", ""},
	Column{"address", "VARCHAR", "0x hex", ""},
	Column{"label", "VARCHAR", "", "cascade entity; NULL when unlabelled"},
	Column{"inflow", "DOUBLE", "USD", ""},
	Column{"outflow", "DOUBLE", "USD", ""},
	Column{"net_tokens", "DOUBLE", "tokens", ""},
	Column{"balance", "DOUBLE", "tokens", "NULL when no balance is recorded"},
	Column{"tx_count", "BIGINT", "", ""},
	Column{"first_ts", "TIMESTAMP", "UTC", ""},
	Column{"last_ts", "TIMESTAMP", "UTC", ""},
)

// OnchainTransfersBoard is sql/onchain/token_transfers_board.sql's result. board =
// chain.period.
var OnchainTransfersBoard = boardTable("onchain_transfers_board", "onchain", "onchain/boards/transfers",
	"every token's top wallets of one chain on each side over one period (sql/onchain/token_transfers_board.sql); board = chain.period.",
	[]string{"/v1/onchain/tokens/{token_address}/transfers"},
	Column{"token", "VARCHAR", "0x hex", ""},
	Column{"tab", "VARCHAR", "bought or sold", ""},
	Column{"address", "VARCHAR", "0x hex", ""},
	Column{"bought", "DOUBLE", "tokens", ""},
	Column{"sold", "DOUBLE", "tokens", ""},
	Column{"usd_spent", "DOUBLE", "USD", ""},
	Column{"usd_received", "DOUBLE", "USD", ""},
	Column{"chains", "VARCHAR", "", ""},
	Column{"label", "VARCHAR", "", "cascade entity; NULL when unlabelled"},
)

// OnchainLabelsBoard is sql/onchain/labels_batch.sql's result. board = ethereum.
var OnchainLabelsBoard = boardTable("onchain_labels_board", "onchain", "onchain/boards/labels",
	"every labelled address with its Ethereum activity over 30 days (sql/onchain/labels_batch.sql); board = ethereum.",
	[]string{"/v1/onchain/labels/batch"},
	Column{"address", "VARCHAR", "0x hex", ""},
	Column{"entity", "VARCHAR", "", ""},
	Column{"wallet_type", "VARCHAR", "", ""},
	Column{"confidence", "VARCHAR", "", ""},
	Column{"risk_flag", "VARCHAR", "", ""},
	Column{"inflow", "DOUBLE", "USD", ""},
	Column{"outflow", "DOUBLE", "USD", ""},
	Column{"tx_count", "BIGINT", "", ""},
	Column{"tokens", "BIGINT", "", ""},
)

// The prediction-market tape index's per-file digests (query/predmkt_board_tape.go):
// what the index keeps of each archive trades or book_events file, published once per
// file version so a process starting on a large lake reads the digests instead of
// scanning the tape. board = the source file's path in the lake ('/' as '~', '=' as
// '-'), built = src_ and a hash of its path, size and modification time.
func tapeDigest(name, prefix, doc string, cols ...Column) *Table {
	return Register(&Table{
		Name: name, Area: "predmkt", Prefix: prefix, Partitions: BoardPartitions, File: "digest.parquet", Derived: true,
		Doc: "Derived, one file per archive file version (see tables_boards.go): " + doc, Columns: cols,
		Routes: []string{"/v1/predmkt/ohlcv", "/v1/predmkt/orderbook", "/v1/predmkt/events", "/v1/predmkt/smart_money"},
	})
}

// PredmktTapeSpans is sql/predmkt/board_tape_span.sql's result per archive file.
var PredmktTapeSpans = tapeDigest("predmkt_tape_spans", "predmkt/tape_index/spans",
	"the ts and local_ts span and row count of one archive trades or book_events file (sql/predmkt/board_tape_span.sql).",
	Column{"min_ts", "BIGINT", "epoch ms", "NULL for an empty file"},
	Column{"max_ts", "BIGINT", "epoch ms", ""},
	Column{"min_local_ts", "BIGINT", "epoch ms", ""},
	Column{"max_local_ts", "BIGINT", "epoch ms", ""},
	Column{"rows", "BIGINT", "", ""},
)

// PredmktTapeSnaps is sql/predmkt/board_tape_books.sql's result per book_events file.
var PredmktTapeSnaps = tapeDigest("predmkt_tape_snaps", "predmkt/tape_index/snaps",
	"the key and row number of every book snapshot of one archive book_events file (sql/predmkt/board_tape_books.sql).",
	Column{"token_id", "VARCHAR", "", ""},
	Column{"ts", "BIGINT", "epoch ms", ""},
	Column{"local_ts", "BIGINT", "epoch ms", ""},
	Column{"seq", "BIGINT", "", ""},
	Column{"row", "BIGINT", "", "row number in the source file"},
)

// PredmktTapeMids is sql/predmkt/board_tape_mids.sql's result per book_events file
// (every row, not clipped at a clock).
var PredmktTapeMids = tapeDigest("predmkt_tape_mids", "predmkt/tape_index/mids",
	"per token, the last recorded mid of one archive book_events file (sql/predmkt/board_tape_mids.sql, every row).",
	Column{"token_id", "VARCHAR", "", ""},
	Column{"mid", "DOUBLE", "probability", ""},
	Column{"local_ts", "BIGINT", "epoch ms", ""},
	Column{"seq", "BIGINT", "", ""},
)

// PredmktTapeMinutes is sql/predmkt/board_tape_minutes.sql's result per book_events
// file.
var PredmktTapeMinutes = tapeDigest("predmkt_tape_minutes", "predmkt/tape_index/minutes",
	"events per minute of local_ts and event type of one archive book_events file (sql/predmkt/board_tape_minutes.sql).",
	Column{"minute", "BIGINT", "epoch minutes", ""},
	Column{"event_type", "VARCHAR", "", ""},
	Column{"events", "BIGINT", "", ""},
)

// PerpdexBuildersBoard is sql/perpdex/builder_metrics.sql's result grouped by builder
// over a window ending at a board hour. board = the window's length in hours, or all.
var PerpdexBuildersBoard = boardTable("perpdex_builders_board", "perpdex", "perpdex/boards/builders",
	"every builder's figures over one window ending at the board hour (sql/perpdex/builder_metrics.sql by builder); board = window length in hours (24h, 168h, 720h) or all.",
	[]string{"/v1/perpdex/builders"},
	Column{"builder", "VARCHAR", "0x hex", ""},
	Column{"fee_usd", "DOUBLE", "USD", "builder fees"},
	Column{"volume_usd", "DOUBLE", "USD", "notional of the builder's fills"},
	Column{"share_volume_usd", "DOUBLE", "USD", "each trade once"},
	Column{"fills", "BIGINT", "", ""},
	Column{"users", "BIGINT", "", ""},
	Column{"fee_usd_node", "DOUBLE", "USD", ""},
	Column{"trader_fee_usd", "DOUBLE", "USD", ""},
	Column{"deployer_fee_usd", "DOUBLE", "USD", ""},
	Column{"closed_pnl_usd", "DOUBLE", "USD", ""},
	Column{"active_days", "BIGINT", "", ""},
	Column{"crossed_fills", "BIGINT", "", ""},
	Column{"first_seen", "TIMESTAMP", "UTC", ""},
	Column{"last_seen", "TIMESTAMP", "UTC", ""},
	Column{"fee_rate_bps_p50", "DOUBLE", "bps", ""},
	Column{"buy_volume_usd", "DOUBLE", "USD", ""},
	Column{"sell_volume_usd", "DOUBLE", "USD", ""},
	Column{"non_usd_fee_fills", "BIGINT", "", ""},
	Column{"non_usd_fee_volume_usd", "DOUBLE", "USD", ""},
	Column{"assets", "BIGINT", "", ""},
	Column{"dexes", "BIGINT", "", ""},
	Column{"builders", "BIGINT", "", ""},
)
