package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletPnLSQL = sqlfiles.MustRead("onchain/wallet_pnl.sql")

// PnLDay is one date of /v1/onchain/wallets/{address}/pnl.
type PnLDay struct {
	Date              string  `json:"date" doc:"YYYY-MM-DD (UTC)"`
	InflowUSD         float64 `json:"inflow_usd" doc:"USD at transfer time received that date"`
	OutflowUSD        float64 `json:"outflow_usd" doc:"USD at transfer time sent that date"`
	NetFlowUSD        float64 `json:"net_flow_usd" doc:"inflow minus outflow"`
	CumulativeNetFlow float64 `json:"cumulative_net_flow_usd" doc:"running sum of net_flow_usd from the first date of the series"`
	TxCount           int64   `json:"tx_count" doc:"transfers that date"`
}

// OnchainWalletPnL returns one row per date for the last `days` calendar dates
// (today included), oldest first, zero-filled.
func (q *Queries) OnchainWalletPnL(ctx context.Context, chain, address string, days int) ([]PnLDay, error) {
	if _, err := q.onchainLegsOnly(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	now := q.Now()
	first := Date(now.AddDate(0, 0, -(days - 1)))
	rows, err := q.queryWallet(ctx, onchainWalletPnLSQL, func() (walletArgs, error) { return q.walletArgs(ctx, address, chain) },
		walletArgs.daysTail, chain, address, first, micros(now))
	if err != nil {
		return nil, wrap(ctx, "onchain wallet pnl", err)
	}
	defer rows.Close()
	items := []PnLDay{}
	cum := 0.0
	for rows.Next() {
		var r PnLDay
		var d time.Time
		if err := rows.Scan(&d, &r.InflowUSD, &r.OutflowUSD, &r.TxCount); err != nil {
			return nil, wrap(ctx, "onchain wallet pnl", err)
		}
		r.Date = Date(d)
		net := r.InflowUSD - r.OutflowUSD
		cum += net
		r.NetFlowUSD, r.CumulativeNetFlow = usd(net), usd(cum)
		r.InflowUSD, r.OutflowUSD = usd(r.InflowUSD), usd(r.OutflowUSD)
		items = append(items, r)
	}
	return items, wrap(ctx, "onchain wallet pnl", rows.Err())
}
