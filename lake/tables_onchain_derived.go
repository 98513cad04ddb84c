package lake

// Derived on-chain tables: the transfer legs the per-wallet and per-token routes read,
// published by mdq itself (query/onchain_legs_lake.go) one (chain, date) partition per
// onchain_transfers partition, so a new or corrected day recomputes that day only.

var legColumns = []Column{
	{"wallet", "VARCHAR", "0x hex", "the wallet this leg belongs to"},
	{"cp", "VARCHAR", "0x hex", "the other side of the transfer"},
	{"token", "VARCHAR", "0x hex", "token contract; 0x000...0 for the native coin"},
	{"block_time", "TIMESTAMP", "UTC", "block timestamp"},
	{"dir", "INTEGER", "1 or -1", "1: the wallet received; -1: it sent"},
	{"amount", "DECIMAL(38, 10)", "whole tokens", "transfer amount"},
	{"usd", "DECIMAL(38, 6)", "USD", "USD at transfer time; 0 when unpriced (see priced)"},
	{"priced", "BOOLEAN", "", "false when the token had no price at block_time"},
	{"self", "BOOLEAN", "", "a transfer to itself (both legs carry it)"},
	{"tx_hash", "VARCHAR", "0x hex", "transaction"},
	{"log_index", "INTEGER", "", "log position in the block"},
	{"block_number", "BIGINT", "", "block"},
}

var (
	// OnchainLegs holds every transfer twice, once per side, sorted by wallet and time
	// inside each day: a per-wallet request reads one or two small row groups of each
	// day file (zone maps on the sorted wallet column), never a whole day.
	OnchainLegs = Register(&Table{
		Name: "onchain_legs", Area: "onchain", Prefix: "onchain/legs", Partitions: []string{"chain", "date"}, File: "legs.parquet", Derived: true,
		Doc:      "Derived from onchain_transfers, one partition per transfers partition: each transfer as two legs (receiver dir 1, sender dir -1), USD as exact DECIMAL. Sorted by wallet then time, in small row groups, for per-wallet reads.",
		Columns:  legColumns,
		SortBy:   []string{"wallet", "block_time", "tx_hash", "log_index", "dir"},
		RowGroup: 8192,
		Routes: []string{"/v1/onchain/wallets/{address}", "/v1/onchain/wallets/{address}/counterparties", "/v1/onchain/wallets/{address}/transactions",
			"/v1/onchain/wallets/{address}/pnl", "/v1/onchain/wallets/compare", "/v1/onchain/wallets/discover", "/v1/onchain/wallets/{address}/trace",
			"/v1/onchain/tokens/screener", "/v1/onchain/labels/batch"},
	})
	// OnchainLegsByToken is the same legs' columns the per-token routes need, sorted by
	// token then time.
	OnchainLegsByToken = Register(&Table{
		Name: "onchain_legs_by_token", Area: "onchain", Prefix: "onchain/legs_by_token", Partitions: []string{"chain", "date"}, File: "legs.parquet", Derived: true,
		Doc: "Derived with onchain_legs: the legs sorted by token then time, for per-token reads (top buyers and sellers, holders).",
		Columns: []Column{
			{"token", "VARCHAR", "0x hex", "token contract"},
			{"wallet", "VARCHAR", "0x hex", "the wallet this leg belongs to"},
			{"dir", "INTEGER", "1 or -1", "1: received; -1: sent"},
			{"amount", "DECIMAL(38, 10)", "whole tokens", "transfer amount"},
			{"usd", "DECIMAL(38, 6)", "USD", "USD at transfer time; 0 when unpriced"},
			{"self", "BOOLEAN", "", "a transfer to itself"},
			{"block_time", "TIMESTAMP", "UTC", "block timestamp"},
		},
		SortBy:   []string{"token", "block_time", "wallet", "dir"},
		RowGroup: 16384,
		Routes:   []string{"/v1/onchain/tokens/{token_address}/transfers", "/v1/onchain/tokens/{token_address}/holders"},
	})
)

// OnchainLabelSpans is the label cascade as it stood at every time, published so that
// no process builds it from the label rows itself (a window over every row, 0.3 to
// 0.6 s at large in each fresh process).
var OnchainLabelSpans = Register(&Table{
	Name: "onchain_label_spans", Area: "onchain", Prefix: "onchain/label_spans", File: "spans.parquet", Derived: true,
	Doc: "Derived from onchain_labels and onchain_label_sources (sql/onchain/label_spans_publish.sql), written again whole when either file changes: the label cascade as it stood at every time. Per address, the spans [valid_from, valid_until) during which one source's row was the cascade's pick, the row of the lowest priority number (then source) among the rows observed by then; a row observed later that outranks the pick starts a new span, one that does not never shows. Every route that shows a label reads the span holding its own clock (onchain_labels_at), so no label observed after the clock shows.",
	Columns: []Column{
		{"address", "VARCHAR", "0x hex", "labelled address"},
		{"entity", "VARCHAR", "", "entity name of the picked row"},
		{"wallet_type", "VARCHAR", "", "its wallet type"},
		{"confidence", "VARCHAR", "", "its confidence"},
		{"risk_flag", "VARCHAR", "", "its risk flag; empty when clean"},
		{"source", "VARCHAR", "", "its source"},
		{"venue", "BOOLEAN", "", "its wallet type is a venue (cex, dex, defi, market_maker, bridge)"},
		{"valid_from", "TIMESTAMP", "UTC", "the picked row's observed_at; NULL for a row without one (known always)"},
		{"valid_until", "TIMESTAMP", "UTC", "when a better row was observed; NULL while the pick is current"},
	},
	SortBy: []string{"address", "valid_from"},
	Routes: []string{"/v1/onchain/labels/batch", "/v1/onchain/wallets/{address}/counterparties", "/v1/onchain/wallets/compare",
		"/v1/onchain/wallets/{address}/trace", "/v1/onchain/tokens/screener", "/v1/onchain/tokens/{token_address}/holders",
		"/v1/onchain/tokens/{token_address}/transfers"},
})
