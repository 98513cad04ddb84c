package lake

// PerpdexVaults is the venue's vault registry: the metadata the fills and snapshots do
// not carry (a vault trades under its own address like any user).
var PerpdexVaults = Register(&Table{
	Name: "perpdex_vaults", Area: "perpdex", Prefix: "perpdex/vaults", File: "vaults.parquet",
	Doc: "One row per vault of the venue: name, strategy kind and leader. Its trading is in perpdex_fills, perpdex_funding, perpdex_accounts and perpdex_positions under the vault address.",
	Columns: []Column{
		{"vault", "VARCHAR", "0x hex", "vault address (the wallet it trades as)"},
		{"name", "VARCHAR", "", "display name"},
		{"kind", "VARCHAR", "", "market_making or liquidation"},
		{"leader", "VARCHAR", "0x hex", "leader (operator) address"},
		{"created_ts", "TIMESTAMP", "UTC", "vault creation time"},
		{"description", "VARCHAR", "", "the leader's description of the strategy"},
	},
	SortBy: []string{"vault"},
	Routes: []string{"/v1/perpdex/vaults", "/v1/perpdex/vaults/{address}"},
})
