package handlers

import (
	"context"

	"mdq/query"
)

// perpdexVaultRoutes are the vault routes of the perpetuals venue. Errors answer
// {"error": ...}; a malformed address is 400 and an address that is not a vault 404.
func perpdexVaultRoutes() []*Route {
	window := Param{Name: "window", Kind: Enum, Enum: []string{"1d", "7d", "30d", "all"}, Default: "30d",
		Doc: "window of volume_usd, fills, maker_share_pct, apr_pct (and the daily series): rolling N times 24 hours ending now; all is unbounded. pnl_1d to pnl_all are always returned", Example: "7d"}
	return []*Route{{
		Method: "GET", Path: "/v1/perpdex/vaults", Area: "perpdex",
		Summary:     "The venue's vaults: equity, PnL, volume, maker share and an APR estimate",
		Description: "Every vault (the market-making vault and the liquidator vault), ordered by address. account_value is the latest hourly account snapshot at or before now; pnl_* are fills' closed_pnl minus fee plus funding payments over 1d, 7d, 30d and the whole history; volume_usd, fills, maker_share_pct (volume on non-crossing fills) and apr_pct cover the requested window. apr_pct = window PnL / mean hourly account value in the window * 365 / window days * 100 (for all, days from the first fill or funding).",
		Params:      []Param{window},
		Response:    query.VaultsPage{},
		MCP:         &MCPTool{Credits: 1, Name: "perpdex_vaults", Description: "The perpetuals venue's vaults (market making, liquidation): account value in USD, PnL over 1d, 7d, 30d and all time (closed PnL minus fees plus funding), window volume, fill count, maker share and an estimated APR."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexVaults(ctx, v.Str("window"))
		},
	}, {
		Method: "GET", Path: "/v1/perpdex/vaults/{address}", Area: "perpdex", CLI: "vault",
		Summary:     "One vault: its figures, a daily account-value and PnL series, and open positions",
		Description: "The vault's row of /v1/perpdex/vaults, plus daily (one bucket per UTC date of the window: the day's last account snapshot, PnL, cumulative PnL, volume, fills) and its open positions in the newest venue-wide position snapshot batch. 404 for an address that is not a vault.",
		Params: []Param{
			{Name: "address", In: "path", Kind: Address, Required: true, Doc: "vault address, 0x-prefixed 40 hex digits",
				Example: "0x5dfbca31c8f48d7962349a733bf695573fd6c7e4",
				Message: "address %q is not a 0x-prefixed 40-hex-digit vault address"},
			window,
		},
		Response: query.VaultDetail{},
		MCP:      &MCPTool{Credits: 1, Name: "perpdex_vault", Description: "One perpetuals-venue vault: account value, PnL (1d, 7d, 30d, all), window volume, maker share and APR estimate, a daily series of account value and PnL over the window, and its open positions from the newest snapshot batch."},
		Run: func(ctx context.Context, q *query.Queries, v Values) (any, error) {
			return q.PerpdexVault(ctx, v.Str("address"), v.Str("window"))
		},
	}}
}
