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
// It reads the Go per-wallet index (the wallet's legs, no SQL); wallet.sql answers a
// wallet the index cannot sum exactly in int64 (over 10^12 USD on a chain) and is the
// index's reference in the tests and benchmarks.
func (q *Queries) OnchainWallet(ctx context.Context, address string) (WalletSummary, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return WalletSummary{}, err
	}
	return q.onchainWalletSQL(ctx, address)
}

// onchainWalletSQL is OnchainWallet by wallet.sql.
func (q *Queries) onchainWalletSQL(ctx context.Context, address string) (WalletSummary, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var out WalletSummary
	rows, err := q.queryWallet(ctx, onchainWalletSQL, func() (walletArgs, error) { return q.walletArgs(ctx, address, "") },
		walletArgs.daysTail, address, micros(q.Now()))
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
