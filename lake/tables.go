package lake

// The tables of the lake. Timestamps in the prediction-market tape are epoch
// milliseconds (as SPEC returns them); perpetuals and on-chain rows use TIMESTAMP
// (microseconds, UTC). Addresses are stored lower-case.

var tapeColumns = []Column{
	{"event_type", "VARCHAR", "", "book, price_change, trade, tick_size_change or status"},
	{"token_id", "VARCHAR", "", "outcome-token id (decimal digits) or perp coin"},
	{"ts", "BIGINT", "epoch ms", "venue time"},
	{"local_ts", "BIGINT", "epoch ms", "recorder receive time, a few ms after ts"},
	{"seq", "BIGINT", "", "recorder sequence, increasing per token"},
	{"side", "VARCHAR", "", "BUY/SELL on price_change and trade; empty otherwise"},
	{"price", "DOUBLE", "probability or USD", "0 when not populated"},
	{"size", "DOUBLE", "shares or tokens", "0 when not populated"},
	{"best_bid", "DOUBLE", "", "best bid after the event; 0 when not populated"},
	{"best_ask", "DOUBLE", "", "best ask after the event; 0 when not populated"},
	{"bids", "VARCHAR", "JSON text", `book only: [{"price":"0.48","size":"120"},...] best first; empty otherwise`},
	{"asks", "VARCHAR", "JSON text", "book only: as bids; empty otherwise"},
	{"is_snapshot", "INTEGER", "0 or 1", "1 on book events"},
	{"status", "VARCHAR", "", "status events: stream-health marker (connected, gap_start, live_resume; lakes written before 2026-11 may hold gap and resync); empty otherwise"},
}

// Prediction market.
var (
	PredmktMarkets = Register(&Table{
		Name: "predmkt_markets", Area: "predmkt", Prefix: "predmkt/markets", File: "markets.parquet",
		Doc: "One row per market (condition).",
		Columns: []Column{
			{"condition_id", "VARCHAR", "0x hex", "market id"},
			{"question", "VARCHAR", "", "market title"},
			{"slug", "VARCHAR", "", "URL slug"},
			{"category", "VARCHAR", "", "Crypto, Sports, Politics, Pop-Culture or Tech"},
			{"family_asset", "VARCHAR", "", "crypto up/down family asset (btc, eth, sol); empty for other markets"},
			{"family_tenor", "VARCHAR", "", "crypto up/down family tenor (15m, 1h, 1d); empty for other markets"},
			{"created_ts", "TIMESTAMP", "UTC", "listing time"},
			{"end_ts", "TIMESTAMP", "UTC", "scheduled end"},
			{"closed", "BOOLEAN", "", "true once trading stopped"},
		},
		SortBy: []string{"condition_id"},
		Routes: []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/markets"},
	})
	PredmktTokens = Register(&Table{
		Name: "predmkt_tokens", Area: "predmkt", Prefix: "predmkt/tokens", File: "tokens.parquet",
		Doc: "Outcome tokens: two per market, index 0 is YES (first outcome), 1 is NO.",
		Columns: []Column{
			{"token_id", "VARCHAR", "decimal digits", "outcome-token id"},
			{"condition_id", "VARCHAR", "0x hex", "market"},
			{"outcome_index", "INTEGER", "", "0 first outcome, 1 second"},
			{"outcome", "VARCHAR", "", "outcome name (Yes/No, Up/Down, team names)"},
		},
		SortBy: []string{"token_id"},
		Routes: []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/markets"},
	})
	PredmktResolutions = Register(&Table{
		Name: "predmkt_resolutions", Area: "predmkt", Prefix: "predmkt/resolutions", File: "resolutions.parquet",
		Doc: "One row per resolved market. An invalid resolution has invalid=true and winning_index NULL.",
		Columns: []Column{
			{"condition_id", "VARCHAR", "0x hex", "market"},
			{"resolved_ts", "TIMESTAMP", "UTC", "resolution time (can be corrected later)"},
			{"winning_index", "INTEGER", "", "outcome_index that pays 1 per share; NULL when invalid"},
			{"invalid", "BOOLEAN", "", "true for an invalid (void) resolution"},
		},
		SortBy: []string{"condition_id"},
		Routes: []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/settlements"},
	})
	PredmktProfiles = Register(&Table{
		Name: "predmkt_profiles", Area: "predmkt", Prefix: "predmkt/profiles", File: "profiles.parquet",
		Doc: "Platform profile fields per proxy wallet; often empty.",
		Columns: []Column{
			{"wallet", "VARCHAR", "0x hex", "proxy wallet"},
			{"pseudonym", "VARCHAR", "", "generated pseudonym, may be empty"},
			{"display_name", "VARCHAR", "", "user-chosen name, may be empty"},
		},
		SortBy: []string{"wallet"},
		Routes: []string{"/v1/predmkt/leaderboard"},
	})
	PredmktTrades = Register(&Table{
		Name: "predmkt_trades", Area: "predmkt", Prefix: "archive/venue=predmkt", Partitions: []string{"date"}, File: "trades.parquet",
		Doc: "Archive: one row per wallet fill (the taker side of each tape trade, and its maker). Sorted by token then time.",
		Columns: []Column{
			{"trade_id", "VARCHAR", "", "unique fill id"},
			{"ts", "BIGINT", "epoch ms", "venue time; equals the tape trade event's ts"},
			{"local_ts", "BIGINT", "epoch ms", "recorder time of the matching tape event"},
			{"seq", "BIGINT", "", "seq of the matching tape trade event"},
			{"token_id", "VARCHAR", "decimal digits", "outcome token"},
			{"condition_id", "VARCHAR", "0x hex", "market"},
			{"outcome_index", "INTEGER", "", "0 or 1"},
			{"wallet", "VARCHAR", "0x hex", "proxy wallet of this fill"},
			{"role", "VARCHAR", "", "taker or maker"},
			{"side", "VARCHAR", "", "BUY or SELL, from this wallet's point of view"},
			{"price", "DOUBLE", "probability", "0 to 1"},
			{"size", "DOUBLE", "shares", "outcome-token shares"},
			{"usd", "DOUBLE", "USD", "price times size"},
			{"tx_hash", "VARCHAR", "0x hex", "settlement transaction"},
		},
		SortBy: []string{"token_id", "ts", "trade_id"},
		Routes: []string{"/v1/predmkt/leaderboard", "/v1/predmkt/smart_money", "/v1/predmkt/ohlcv", "/v1/predmkt/trades"},
	})
	PredmktBookEvents = Register(&Table{
		Name: "predmkt_book_events", Area: "predmkt", Prefix: "archive/venue=predmkt", Partitions: []string{"date"}, File: "book_events.parquet",
		Doc:     "Archive: the raw market-channel tape (book snapshots, price_change deltas, trades, tick_size_change, status). Sorted by token then local_ts, seq.",
		Columns: tapeColumns, SortBy: []string{"token_id", "local_ts", "seq"},
		Routes: []string{"/v1/predmkt/events", "/v1/predmkt/orderbook", "/v1/predmkt/smart_money"},
	})
	PredmktFamilyBookEvents = Register(&Table{
		Name: "predmkt_family_book_events", Area: "predmkt", Prefix: "archive/venue=predmkt", Partitions: []string{"asset", "tenor", "date"}, File: "book_events.parquet",
		Doc:     "Archive, additive layout: the tape of crypto up/down families only, split by asset and tenor (same schema, same rows as the full-day file).",
		Columns: tapeColumns, SortBy: []string{"token_id", "local_ts", "seq"},
		Routes: []string{"/archive"},
	})
)

// Perpetuals venue.
var (
	PerpdexFills = Register(&Table{
		Name: "perpdex_fills", Area: "perpdex", Prefix: "perpdex/fills", Partitions: []string{"date"}, File: "fills.parquet",
		Doc: "Every user fill (both sides of each trade), as the venue's node_fills. Sorted by wallet then time.",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC, microseconds", "fill time"},
			{"wallet", "VARCHAR", "0x hex", "user"},
			{"coin", "VARCHAR", "", "asset; builder-deployed markets are <dex>:<symbol>"},
			{"dex", "VARCHAR", "", "deployer dex name; empty for the main venue"},
			{"side", "VARCHAR", "", "B (buy) or A (sell)"},
			{"px", "DOUBLE", "USD", "fill price"},
			{"sz", "DOUBLE", "tokens", "fill size"},
			{"dir", "VARCHAR", "", "Open Long, Close Long, Open Short, Close Short, Long > Short, Short > Long"},
			{"start_position", "DOUBLE", "tokens", "signed position before the fill"},
			{"closed_pnl", "DOUBLE", "USD", "realized PnL of the closing part, before fees"},
			{"fee", "DOUBLE", "USD", "trader fee paid (includes builder fee)"},
			{"fee_token", "VARCHAR", "", "USDC, or another token for non-USD fee fills"},
			{"builder", "VARCHAR", "0x hex", "builder address; NULL when no builder code"},
			{"builder_fee", "DOUBLE", "USD", "builder's own cut; NULL when no builder code"},
			{"deployer_fee", "DOUBLE", "USD", "fee to a builder-deployed dex; NULL on the main venue"},
			{"crossed", "BOOLEAN", "", "true when the fill took liquidity (taker)"},
			{"hash", "VARCHAR", "0x hex", "transaction hash"},
			{"tid", "BIGINT", "", "trade id, shared by both sides"},
			{"oid", "BIGINT", "", "order id"},
			{"liquidation", "BOOLEAN", "", "true on the liquidated user's fill"},
			{"liq_mark_px", "DOUBLE", "USD", "mark price at liquidation; NULL otherwise"},
		},
		SortBy: []string{"wallet", "time", "tid"},
		Routes: []string{"/v1/perpdex/wallets/{address}/trades", "/v1/perpdex/leaderboard", "/v1/perpdex/builders", "/v1/perpdex/liquidations"},
	})
	PerpdexTrades = Register(&Table{
		Name: "perpdex_trades", Area: "perpdex", Prefix: "archive/venue=perpdex", Partitions: []string{"date"}, File: "trades.parquet",
		Doc: "Archive: public trade tape, one row per trade. Sorted by coin then time.",
		Columns: []Column{
			{"coin", "VARCHAR", "", "asset"},
			{"ts", "BIGINT", "epoch ms", "venue time"},
			{"local_ts", "BIGINT", "epoch ms", "recorder time"},
			{"seq", "BIGINT", "", "recorder sequence per coin"},
			{"side", "VARCHAR", "", "B or A: the taker side"},
			{"px", "DOUBLE", "USD", "price"},
			{"sz", "DOUBLE", "tokens", "size"},
			{"hash", "VARCHAR", "0x hex", "transaction hash"},
			{"tid", "BIGINT", "", "trade id"},
			{"buyer", "VARCHAR", "0x hex", "buying user"},
			{"seller", "VARCHAR", "0x hex", "selling user"},
		},
		SortBy: []string{"coin", "ts", "tid"},
		Routes: []string{"/archive"},
	})
	PerpdexBookEvents = Register(&Table{
		Name: "perpdex_book_events", Area: "perpdex", Prefix: "archive/venue=perpdex", Partitions: []string{"date"}, File: "book_events.parquet",
		Doc:     "Archive: L2 book snapshots and trades per coin, in the tape schema (token_id holds the coin).",
		Columns: tapeColumns, SortBy: []string{"token_id", "local_ts", "seq"},
		Routes: []string{"/archive"},
	})
	PerpdexFunding = Register(&Table{
		Name: "perpdex_funding", Area: "perpdex", Prefix: "perpdex/funding", Partitions: []string{"date"}, File: "funding.parquet",
		Doc: "Hourly funding payments per open position.",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC", "funding time (on the hour)"},
			{"wallet", "VARCHAR", "0x hex", "user"},
			{"coin", "VARCHAR", "", "asset"},
			{"usdc", "DOUBLE", "USD", "payment; negative when the user paid"},
			{"szi", "DOUBLE", "tokens", "signed position size"},
			{"funding_rate", "DOUBLE", "fraction per hour", "rate applied"},
		},
		SortBy: []string{"wallet", "time", "coin"},
		Routes: []string{"/v1/perpdex/leaderboard/flow-adjusted"},
	})
	PerpdexLedger = Register(&Table{
		Name: "perpdex_ledger", Area: "perpdex", Prefix: "perpdex/ledger", Partitions: []string{"date"}, File: "ledger.parquet",
		Doc: "Non-trading account events: deposits, withdrawals and sends between users.",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC", "event time"},
			{"wallet", "VARCHAR", "0x hex", "user whose balance changed"},
			{"kind", "VARCHAR", "", "deposit, withdraw, send_out or send_in"},
			{"usdc", "DOUBLE", "USD", "amount, positive; direction is in kind"},
			{"counterparty", "VARCHAR", "0x hex", "other user of a send; NULL otherwise"},
			{"hash", "VARCHAR", "0x hex", "transaction hash"},
		},
		SortBy: []string{"wallet", "time"},
		Routes: []string{"/v1/perpdex/leaderboard/flow-adjusted"},
	})
	PerpdexPositions = Register(&Table{
		Name: "perpdex_positions", Area: "perpdex", Prefix: "perpdex/positions", Partitions: []string{"date"}, File: "positions.parquet",
		Doc: "Position snapshots: every open position, taken in batches (hourly, and every 5 minutes in the final hour).",
		Columns: []Column{
			{"snapshot_ts", "TIMESTAMP", "UTC", "batch time"},
			{"wallet", "VARCHAR", "0x hex", "user"},
			{"coin", "VARCHAR", "", "asset"},
			{"szi", "DOUBLE", "tokens", "signed size: positive long, negative short"},
			{"entry_px", "DOUBLE", "USD", "average entry price"},
			{"mark_px", "DOUBLE", "USD", "mark price at the snapshot"},
			{"leverage", "DOUBLE", "x", "leverage setting"},
			{"liquidation_px", "DOUBLE", "USD", "0.0 when the venue reports none"},
			{"unrealized_pnl", "DOUBLE", "USD", "mark-to-market PnL"},
			{"position_value", "DOUBLE", "USD", "abs(szi) times mark"},
		},
		SortBy: []string{"snapshot_ts", "coin", "wallet"},
		Routes: []string{"/v1/perpdex/positions/match", "/v1/perpdex/stats"},
	})
	PerpdexAccounts = Register(&Table{
		Name: "perpdex_accounts", Area: "perpdex", Prefix: "perpdex/accounts", Partitions: []string{"date"}, File: "accounts.parquet",
		Doc: "Hourly account-value snapshots per user (the equity series behind drawdowns and ROI).",
		Columns: []Column{
			{"snapshot_ts", "TIMESTAMP", "UTC", "hour"},
			{"wallet", "VARCHAR", "0x hex", "user"},
			{"account_value", "DOUBLE", "USD", "perp equity"},
			{"total_ntl_pos", "DOUBLE", "USD", "total notional of open positions"},
			{"margin_used", "DOUBLE", "USD", "margin in use"},
		},
		SortBy: []string{"wallet", "snapshot_ts"},
		Routes: []string{"/v1/perpdex/leaderboard"},
	})
	PerpdexHypeBalances = Register(&Table{
		Name: "perpdex_hype_balances", Area: "perpdex", Prefix: "perpdex/hype_balances", File: "hype_balances.parquet",
		Doc: "Last-known HYPE balances per wallet and source: spot balance, or delegated (staked) amount.",
		Columns: []Column{
			{"wallet", "VARCHAR", "0x hex", "holder"},
			{"source", "VARCHAR", "", "spot or staked"},
			{"amount", "DOUBLE", "HYPE", "balance; staked is the delegated amount only"},
			{"as_of", "TIMESTAMP", "UTC", "when the balance was read"},
		},
		SortBy: []string{"wallet", "source"},
		Routes: []string{"/v1/perpdex/hype/holders"},
	})
	PerpdexMarks = Register(&Table{
		Name: "perpdex_marks", Area: "perpdex", Prefix: "perpdex/marks", Partitions: []string{"date"}, File: "marks.parquet",
		Doc: "Hourly mark prices per coin (HYPE's is the holders route's price).",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC", "hour"},
			{"coin", "VARCHAR", "", "asset"},
			{"mark_px", "DOUBLE", "USD", "mark price"},
		},
		SortBy: []string{"coin", "time"},
		Routes: []string{"/v1/perpdex/hype/holders"},
	})
	PerpdexCandles = Register(&Table{
		Name: "perpdex_candles", Area: "perpdex", Prefix: "perpdex/candles", Partitions: []string{"date"}, File: "candles.parquet",
		Doc: "The venue's own price candles (candleSnapshot answers), per coin and interval; a candle still open when its answer was fetched is not stored. Written by ingest only (a demo lake has none).",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC", "bucket start (the answer's t)"},
			{"coin", "VARCHAR", "", "asset"},
			{"interval", "VARCHAR", "", "the venue's interval name (1m, 5m, 15m, 1h, 4h, 1d, ...)"},
			{"close_time", "TIMESTAMP", "UTC", "last millisecond of the bucket (the answer's T)"},
			{"open", "DOUBLE", "USD", "first trade price"},
			{"high", "DOUBLE", "USD", "highest trade price"},
			{"low", "DOUBLE", "USD", "lowest trade price"},
			{"close", "DOUBLE", "USD", "last trade price"},
			{"volume", "DOUBLE", "tokens", "size traded"},
			{"trades", "BIGINT", "", "trades in the bucket"},
		},
		SortBy:     []string{"coin", "interval", "time"},
		Routes:     []string{"/v1/perpdex/ohlcv"},
		IngestOnly: true,
	})
	PerpdexFundingRates = Register(&Table{
		Name: "perpdex_funding_rates", Area: "perpdex", Prefix: "perpdex/funding_rates", Partitions: []string{"date"}, File: "funding_rates.parquet",
		Doc: "The venue's funding rates per coin, with or without a position: fundingHistory answers (the rate settled on each hour) and the asset contexts of metaAndAssetCtxs (the current rate when fetched). Written by ingest only (a demo lake has none).",
		Columns: []Column{
			{"time", "TIMESTAMP", "UTC", "the hour the rate settled (history) or when the contexts were fetched (asset_ctx)"},
			{"coin", "VARCHAR", "", "asset"},
			{"source", "VARCHAR", "", "history or asset_ctx"},
			{"funding_rate", "DOUBLE", "fraction per hour", "rate"},
			{"premium", "DOUBLE", "fraction", "premium the rate came from; NULL when the answer has none"},
		},
		SortBy:     []string{"coin", "time", "source"},
		Routes:     []string{"/v1/perpdex/markets/{coin}"},
		IngestOnly: true,
	})
	PerpdexVenueStats = Register(&Table{
		Name: "perpdex_venue_stats", Area: "perpdex", Prefix: "perpdex/venue_stats", File: "venue_stats.parquet",
		Doc: "Hourly venue-wide statistics.",
		Columns: []Column{
			{"ts", "TIMESTAMP", "UTC", "hour"},
			{"total_perp_equity", "DOUBLE", "USD", "sum of account values"},
			{"count_wallets", "BIGINT", "", "wallets with equity"},
			{"count_open_positions", "BIGINT", "", "open positions"},
			{"count_long", "BIGINT", "", "long positions"},
			{"count_short", "BIGINT", "", "short positions"},
			{"open_interest", "DOUBLE", "USD", "long plus short notional"},
			{"open_interest_long", "DOUBLE", "USD", "long notional"},
			{"open_interest_short", "DOUBLE", "USD", "short notional"},
			{"count_positions_in_profit", "BIGINT", "", "positions with unrealized PnL above 0"},
		},
		SortBy: []string{"ts"},
		Routes: []string{"/v1/perpdex/stats"},
	})
)

// On-chain.
var (
	OnchainTransfers = Register(&Table{
		Name: "onchain_transfers", Area: "onchain", Prefix: "onchain/transfers", Partitions: []string{"chain", "date"}, File: "transfers.parquet",
		Doc: "ERC-20 Transfer events (and native-coin transfers as the zero token address), with decimals applied and USD at transfer time.",
		Columns: []Column{
			{"block_number", "BIGINT", "", "block"},
			{"block_time", "TIMESTAMP", "UTC", "block timestamp"},
			{"tx_hash", "VARCHAR", "0x hex", "transaction"},
			{"log_index", "INTEGER", "", "log position in the block"},
			{"token_address", "VARCHAR", "0x hex", "token contract; 0x000...0 for the native coin"},
			{"from_address", "VARCHAR", "0x hex", "sender"},
			{"to_address", "VARCHAR", "0x hex", "receiver"},
			{"value_raw", "VARCHAR", "integer string", "raw uint256 value"},
			{"amount", "DOUBLE", "whole tokens", "value_raw / 10^decimals"},
			{"usd", "DOUBLE", "USD", "amount times the token's hourly price at block_time; NULL without a price"},
		},
		SortBy: []string{"block_time", "log_index"},
		Routes: []string{"/v1/onchain/tokens/{token_address}/transfers", "/v1/onchain/wallets/{address}", "/v1/onchain/tokens/screener"},
	})
	OnchainTokens = Register(&Table{
		Name: "onchain_tokens", Area: "onchain", Prefix: "onchain/tokens", File: "tokens.parquet",
		Doc: "Token metadata per chain. asset_id links one asset's contracts across chains (for chain=all).",
		Columns: []Column{
			{"chain", "VARCHAR", "", "ethereum, bsc or base"},
			{"token_address", "VARCHAR", "0x hex", "contract (zero address for the native coin)"},
			{"symbol", "VARCHAR", "", "ticker"},
			{"name", "VARCHAR", "", "full name"},
			{"decimals", "INTEGER", "", "ERC-20 decimals"},
			{"logo_url", "VARCHAR", "URL", "logo"},
			{"asset_id", "VARCHAR", "", "cross-chain asset key"},
		},
		SortBy: []string{"chain", "token_address"},
		Routes: []string{"/v1/onchain/tokens/search", "/v1/onchain/tokens/screener"},
	})
	OnchainPrices = Register(&Table{
		Name: "onchain_prices", Area: "onchain", Prefix: "onchain/prices", Partitions: []string{"chain"}, File: "prices.parquet",
		Doc: "Hourly USD prices per token.",
		Columns: []Column{
			{"token_address", "VARCHAR", "0x hex", "token"},
			{"hour", "TIMESTAMP", "UTC", "start of hour"},
			{"price_usd", "DOUBLE", "USD", "price of one whole token"},
		},
		SortBy: []string{"token_address", "hour"},
		Routes: []string{"/v1/onchain/wallets/{address}/balances"},
	})
	OnchainLabels = Register(&Table{
		Name: "onchain_labels", Area: "onchain", Prefix: "onchain/labels", File: "labels.parquet",
		Doc: "Address labels, one row per (address, source); the cascade picks the lowest priority number.",
		Columns: []Column{
			{"address", "VARCHAR", "0x hex", "labelled address (Ethereum)"},
			{"entity", "VARCHAR", "", "entity name"},
			{"wallet_type", "VARCHAR", "", "cex, dex, defi, market_maker, bridge, fund, individual"},
			{"confidence", "VARCHAR", "", "high, medium or low"},
			{"risk_flag", "VARCHAR", "", "empty when clean; sanctioned, exploit, mixer"},
			{"source", "VARCHAR", "", "source id (see onchain_label_sources)"},
			{"observed_at", "TIMESTAMP", "UTC", "when the source asserted it"},
		},
		SortBy: []string{"address", "source"},
		Routes: []string{"/v1/onchain/labels/batch", "/v1/onchain/labels/{address}/provenance"},
	})
	OnchainLabelSources = Register(&Table{
		Name: "onchain_label_sources", Area: "onchain", Prefix: "onchain/label_sources", File: "label_sources.parquet",
		Doc: "Label sources and their cascade priority (1 wins).",
		Columns: []Column{
			{"source", "VARCHAR", "", "source id"},
			{"name", "VARCHAR", "", "display name"},
			{"kind", "VARCHAR", "", "manual, exchange_disclosure, heuristic, community"},
			{"priority", "INTEGER", "", "cascade order, 1 first"},
			{"url", "VARCHAR", "URL", "attribution link"},
		},
		SortBy: []string{"priority"},
		Routes: []string{"/v1/onchain/labels/{address}/provenance"},
	})
	OnchainENS = Register(&Table{
		Name: "onchain_ens", Area: "onchain", Prefix: "onchain/ens", File: "ens.parquet",
		Doc: "ENS names per address; is_primary marks the reverse record.",
		Columns: []Column{
			{"address", "VARCHAR", "0x hex", "address"},
			{"name", "VARCHAR", "", "ENS name"},
			{"is_primary", "BOOLEAN", "", "the reverse (primary) name"},
			{"registered_at", "TIMESTAMP", "UTC", "registration time"},
		},
		SortBy: []string{"address", "name"},
		Routes: []string{"/v1/onchain/wallets/{address}/ens"},
	})
	OnchainBalances = Register(&Table{
		Name: "onchain_balances", Area: "onchain", Prefix: "onchain/balances", Partitions: []string{"chain"}, File: "balances.parquet",
		Doc: "Current token balances per address.",
		Columns: []Column{
			{"address", "VARCHAR", "0x hex", "holder"},
			{"token_address", "VARCHAR", "0x hex", "token"},
			{"balance_raw", "VARCHAR", "integer string", "raw balance"},
			{"balance", "DOUBLE", "whole tokens", "balance_raw / 10^decimals"},
			{"as_of", "TIMESTAMP", "UTC", "read time"},
		},
		SortBy: []string{"address", "token_address"},
		Routes: []string{"/v1/onchain/wallets/{address}/balances"},
	})
)
