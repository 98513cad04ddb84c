package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var onchainWalletSQL = sqlfiles.MustRead("onchain/wallet.sql")

// WalletWindow is one window of a WalletSummary.
type WalletWindow struct {
	TotalVolume  float64 `json:"total_volume" doc:"total_inflow plus total_outflow (USD)"`
	TotalInflow  float64 `json:"total_inflow" doc:"USD at transfer time received in the window, every chain"`
	TotalOutflow float64 `json:"total_outflow" doc:"USD at transfer time sent in the window, every chain"`
	NetFlow      float64 `json:"net_flow" doc:"inflow minus outflow"`
	TxCount      int64   `json:"tx_count" doc:"transfers sent or received in the window"`
	TokensTraded int64   `json:"tokens_traded" doc:"all-time distinct tokens (per chain), repeated in every window"`
	FirstSeen    *string `json:"first_seen" doc:"all-time first transfer date (YYYY-MM-DD), repeated; null for a wallet never seen"`
	LastActive   *string `json:"last_active" doc:"all-time last transfer date, repeated; null for a wallet never seen"`
}

// WalletSummary is /v1/onchain/wallets/{address}: exactly the five windows.
type WalletSummary struct {
	W24h WalletWindow `json:"24h"`
	W7d  WalletWindow `json:"7d"`
	W30d WalletWindow `json:"30d"`
	W90d WalletWindow `json:"90d"`
	All  WalletWindow `json:"all"`
}

// OnchainWallet returns a wallet's summary across every chain; idle windows are zeroed.
// wallet.sql defines it over the wallet segments (onchain_wallet_days for whole days,
// the legs for the days a window edge falls in); on the serving date of the published
// onchain_wallet_edges, wallet_edges.sql reads those edge days' legs from them, and the
// whole days already summed per window from onchain_wallet_bands.
func (q *Queries) OnchainWallet(ctx context.Context, address string) (WalletSummary, error) {
	if _, err := q.onchainLegsOnly(ctx); err != nil {
		return WalletSummary{}, err
	}
	return q.onchainWalletSQL(ctx, address)
}

// onchainWalletSQL is OnchainWallet by wallet.sql.
func (q *Queries) onchainWalletSQL(ctx context.Context, address string) (WalletSummary, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var out WalletSummary
	now := q.Now()
	// With the edges of the split and of now's date published, the edge days are read
	// from them (wallet_edges.sql), else from the segments (wallet.sql).
	list := func() (walletArgs, error) {
		a, err := q.walletArgs(ctx, address, "")
		if err != nil {
			return a, err
		}
		if side, ok := q.walletEdgesSideFor(now); ok {
			err = q.walletEdgeFiles(ctx, side, address, &a)
		}
		return a, err
	}
	pick := func(a walletArgs) string {
		if a.edges != nil {
			return walletEdgesSQL
		}
		return onchainWalletSQL
	}
	tail := func(a walletArgs) []any {
		if a.edges != nil {
			return a.edgesTail()
		}
		return a.daysTail()
	}
	rows, err := q.queryWalletPick(ctx, pick, list, tail, address, micros(now))
	if err != nil {
		return out, wrap(ctx, "onchain wallet", err)
	}
	defer rows.Close()
	slots := map[string]*WalletWindow{"24h": &out.W24h, "7d": &out.W7d, "30d": &out.W30d, "90d": &out.W90d, "all": &out.All}
	for rows.Next() {
		var name string
		var w WalletWindow
		var first, last sql.NullTime
		if err := rows.Scan(&name, &w.TotalInflow, &w.TotalOutflow, &w.TxCount, &w.TokensTraded, &first, &last); err != nil {
			return out, wrap(ctx, "onchain wallet", err)
		}
		w.TotalVolume = usd(w.TotalInflow + w.TotalOutflow)
		w.NetFlow = usd(w.TotalInflow - w.TotalOutflow)
		w.TotalInflow, w.TotalOutflow = usd(w.TotalInflow), usd(w.TotalOutflow)
		w.FirstSeen, w.LastActive = dateOf(first), dateOf(last)
		if s := slots[name]; s != nil {
			*s = w
		}
	}
	return out, wrap(ctx, "onchain wallet", rows.Err())
}
