package lake

// OnchainWalletLegs is onchain_legs clustered by wallet, for the per-wallet routes: the
// per-date legs files hold a wallet's legs in one small slice of every day (a hub wallet
// touches every file of every chain), so a request would open every day file; here one
// wallet's legs of many days sit together in one file of its bucket (the first hex digit
// of the address). Two segments per (chain, bucket): history, the dates up to a split
// date H, rewritten only every few days (or when one of its days changes), and recent,
// the dates after H up to R (the day before the newest), rewritten at each publication
// that brings a new day. The legs of the dates after R are read from onchain_legs
// itself (usually only today's file). H and R are kept in the sidecar
// onchain/wallet_legs/_sources.json (query/onchain_wallet_legs.go).
var OnchainWalletLegs = Register(&Table{
	Name: "onchain_wallet_legs", Area: "onchain", Prefix: "onchain/wallet_legs", Partitions: []string{"chain", "bucket", "segment"}, File: "legs.parquet", Derived: true,
	Doc: "Derived from onchain_legs (sql/onchain/wallet_legs_segment.sql): the same legs clustered by wallet, one file per (chain, bucket = first hex digit of the wallet, segment = history or recent), sorted by wallet then time in small row groups, so that one wallet's legs of many days are read from one file per chain.",
	Columns: append(append([]Column{}, legColumns...),
		Column{"date", "DATE", "UTC", "the leg's onchain_legs partition date"}),
	SortBy: []string{"wallet", "block_time", "tx_hash", "log_index", "dir"},
	// 16,384-row groups rather than 2,048: a per-wallet query opens each segment file
	// once per read (up to five reads for the summary) and parses its footer each time,
	// and the footer grows with the row groups (one bucket's ethereum history: 170 KB
	// for 97 groups on the medium lake, 1.3 MB for 752 on the large one). On the medium lake
	// a hub's one-day read of a history file took 4.5 ms at 2,048 rows a group, 1.6 at
	// 8,192 and 1.7 at 16,384; a read finding nothing 2.6, 1.0 and 0.8 ms.
	RowGroup: 16384,
	Routes: []string{"/v1/onchain/wallets/{address}", "/v1/onchain/wallets/{address}/counterparties", "/v1/onchain/wallets/{address}/transactions",
		"/v1/onchain/wallets/{address}/pnl", "/v1/onchain/wallets/compare"},
})

// OnchainWalletDays is the daily sums of onchain_wallet_legs, per wallet, token and day
// of block time, in the same files layout and segments (written with them, from the
// same legs): the summary windows and the daily series read these for whole days and
// the legs only for the days a window edge or the clock falls in.
var OnchainWalletDays = Register(&Table{
	Name: "onchain_wallet_days", Area: "onchain", Prefix: "onchain/wallet_days", Partitions: []string{"chain", "bucket", "segment"}, File: "days.parquet", Derived: true,
	Doc: "Derived with onchain_wallet_legs (sql/onchain/wallet_days_segment.sql): per (wallet, token, day of block time, legs partition date), the exact USD and token amounts received and sent (the amounts also over the priced legs alone), the transfers (a self-transfer once), whether every leg was priced, and the first and last block time; same segments and split dates as onchain_wallet_legs.",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "the wallet"},
		{"token", "VARCHAR", "0x hex", "token contract; 0x000...0 for the native coin"},
		{"day", "DATE", "UTC", "the legs' block_time date"},
		{"date", "DATE", "UTC", "the legs' onchain_legs partition date"},
		{"inflow", "DECIMAL(38, 6)", "USD", "sum of the received legs' usd; NULL without one"},
		{"outflow", "DECIMAL(38, 6)", "USD", "sum of the sent legs' usd; NULL without one"},
		{"tx_count", "BIGINT", "", "transfers (a self-transfer once)"},
		{"first_time", "TIMESTAMP", "UTC", "first block_time"},
		{"last_time", "TIMESTAMP", "UTC", "last block_time"},
		{"amount_in", "DECIMAL(38, 10)", "whole tokens", "sum of the received legs' amount; NULL without one"},
		{"amount_out", "DECIMAL(38, 10)", "whole tokens", "sum of the sent legs' amount; NULL without one"},
		{"amount_in_p", "DECIMAL(38, 10)", "whole tokens", "amount_in over the priced legs only; NULL without one"},
		{"amount_out_p", "DECIMAL(38, 10)", "whole tokens", "amount_out over the priced legs only; NULL without one"},
		{"priced", "BOOLEAN", "", "every leg had a price"},
	},
	SortBy:   []string{"wallet", "day", "token", "date"},
	RowGroup: 16384, // as onchain_wallet_legs: fewer groups, a smaller footer to parse per read
	Routes:   []string{"/v1/onchain/wallets/{address}", "/v1/onchain/wallets/{address}/pnl"},
})

// OnchainWalletEdges is the legs of the window-edge days of the lake's serving date, per
// wallet bucket: the summary's five windows end now, and a day a window starts in (or
// now falls in) cannot be summed whole, so the summary reads those days as legs. Read
// from onchain_wallet_legs, each of the four edge days is a separate read walking the
// wallet's bucket file (about 90 row groups at large) on every chain; here the edge
// days of every segment sit together in a file a twentieth of the size, read once. The
// serving date D is the clock's date (or the lake's newest date when the clock is
// before it): the edge days are D, D-1, D-7, D-30 and D-90, of the legs dated up to R,
// two days before D or the wallet segments' recent split when older; the legs dated
// after R are read from onchain_legs itself. A publication writes a new version when D
// or the transfers files up to R changed (built = D and a tag of those files'
// signatures), then the sidecar onchain/wallet_edges/_edges.json naming it, then
// removes the older versions; a request whose clock is not on D, or whose sources up to
// R are not the version's, reads the segments as before (query/onchain_wallet_edges.go).
var OnchainWalletEdges = Register(&Table{
	Name: "onchain_wallet_edges", Area: "onchain", Prefix: "onchain/wallet_edges", Partitions: []string{"built", "chain", "bucket"}, File: "edges.parquet", Derived: true,
	Doc:      "Derived with onchain_wallet_legs (sql/onchain/wallet_edges_publish.sql): the legs dated up to R (through in the sidecar: D - 2, or the recent split when older) whose block_time falls on one of the window-edge days of the serving date D (D, D-1, D-7, D-30, D-90; D is the clock's date, or the lake's newest date when the clock is before it), one file per (version, chain, bucket = first hex digit of the wallet), sorted by wallet then time; built names the version (D and the signatures of the transfers files up to R), kept in onchain/wallet_edges/_edges.json. A version is published at D's midnight, before D's legs land, and stays current when they do: reads take the legs dated after R from onchain_legs.",
	Columns:  legColumns,
	SortBy:   []string{"wallet", "block_time", "tx_hash", "log_index", "dir"},
	RowGroup: 16384, // as onchain_wallet_legs
	Routes:   []string{"/v1/onchain/wallets/{address}"},
})

// OnchainWalletBands is, beside onchain_wallet_edges and in the same versions, the
// summary's whole days already summed per window: a day that no window starts in and
// that is not the serving date lies in the same window band for every clock of the
// serving date, so its sums can be added up per (wallet, token, band) once. A busy
// wallet's daily sums are tens of thousands of rows (tokens times days); its bands are
// at most four rows per token. The hourly boards that sum every wallet's history on a
// board hour of the serving date (discover, the screener's smart-money cohort, holders)
// read the bands, the edges and the legs after R instead of every leg of the history.
// Both are a function of the clock's date and the legs up to two days before it, so a
// day's landing republishes neither (edgesPlan in the query package).
var OnchainWalletBands = Register(&Table{
	Name: "onchain_wallet_bands", Area: "onchain", Prefix: "onchain/wallet_bands", Partitions: []string{"built", "chain", "bucket"}, File: "bands.parquet", Derived: true,
	Doc: "Derived with onchain_wallet_edges (sql/onchain/wallet_bands_publish.sql), same versions: onchain_wallet_days summed per (wallet, token, band) over the legs dated up to the version's R whose day is before the serving date D and not a window-edge day, band being the narrowest summary window holding the day on D (2 = 7d, 3 = 30d, 4 = 90d, 5 = older).",
	Columns: []Column{
		{"wallet", "VARCHAR", "0x hex", "the wallet"},
		{"token", "VARCHAR", "0x hex", "token contract; 0x000...0 for the native coin"},
		{"band", "INTEGER", "2 to 5", "2: the day is in the 7d window on D; 3: 30d; 4: 90d; 5: older"},
		{"inflow", "DECIMAL(38, 6)", "USD", "sum of the days' inflow; NULL without one"},
		{"outflow", "DECIMAL(38, 6)", "USD", "sum of the days' outflow; NULL without one"},
		{"tx_count", "BIGINT", "", "the days' transfers (a self-transfer once)"},
		{"first_time", "TIMESTAMP", "UTC", "first block_time of those days"},
		{"last_time", "TIMESTAMP", "UTC", "last block_time of those days"},
		{"amount_in", "DECIMAL(38, 10)", "whole tokens", "sum of the days' amount_in; NULL without one"},
		{"amount_out", "DECIMAL(38, 10)", "whole tokens", "sum of the days' amount_out; NULL without one"},
		{"amount_in_p", "DECIMAL(38, 10)", "whole tokens", "sum of the days' amount_in_p; NULL without one"},
		{"amount_out_p", "DECIMAL(38, 10)", "whole tokens", "sum of the days' amount_out_p; NULL without one"},
		{"priced", "BOOLEAN", "", "every leg of those days had a price"},
	},
	SortBy:   []string{"wallet", "token", "band"},
	RowGroup: 16384,
	Routes:   []string{"/v1/onchain/wallets/{address}", "/v1/onchain/wallets/discover", "/v1/onchain/tokens/screener", "/v1/onchain/tokens/{token_address}/holders"},
})

// OnchainHoldersBase is, beside onchain_wallet_bands and in the same versions, each
// chain's bands summed over every band per (token, wallet) and ranked per token in the
// holders board's order (cumulative net inflow, rounded to the cent, then the wallet).
// The hourly holders board adds the edges and the legs after R of the pairs they touch
// and needs, of the pairs they do not touch, only each token's first rows in this order
// (the cap plus the number of touched pairs): it reads this file instead of grouping
// every band row of the history again (sql/onchain/token_holders.sql).
var OnchainHoldersBase = Register(&Table{
	Name: "onchain_holders_base", Area: "onchain", Prefix: "onchain/holders_base", Partitions: []string{"built", "chain"}, File: "base.parquet", Derived: true,
	Doc: "Derived with onchain_wallet_bands (sql/onchain/holders_base_publish.sql), same versions: the chain's bands summed per (token, wallet) over every band, the zero address left out, with each pair's rank in its token by net inflow (round(inflow, 2) - round(outflow, 2), NULL as 0) descending, then wallet.",
	Columns: []Column{
		{"token", "VARCHAR", "0x hex", "token contract; 0x000...0 for the native coin"},
		{"wallet", "VARCHAR", "0x hex", "the wallet"},
		{"inflow", "DECIMAL(38, 6)", "USD", "sum of the bands' inflow; NULL without one"},
		{"outflow", "DECIMAL(38, 6)", "USD", "sum of the bands' outflow; NULL without one"},
		{"amount_in", "DECIMAL(38, 10)", "whole tokens", "sum of the bands' amount_in; NULL without one"},
		{"amount_out", "DECIMAL(38, 10)", "whole tokens", "sum of the bands' amount_out; NULL without one"},
		{"tx_count", "BIGINT", "", "the bands' transfers"},
		{"first_time", "TIMESTAMP", "UTC", "first block_time of the bands"},
		{"last_time", "TIMESTAMP", "UTC", "last block_time of the bands"},
		{"rank", "BIGINT", "1..", "the pair's place in its token by net inflow, then wallet"},
	},
	SortBy:   []string{"token", "rank"},
	RowGroup: 16384,
	Routes:   []string{"/v1/onchain/tokens/{token_address}/holders"},
})
