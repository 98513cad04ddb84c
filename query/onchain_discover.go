package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var onchainDiscoverSQL = sqlfiles.MustRead("onchain/discover.sql")

// OnchainDiscoverParams are the inputs of OnchainDiscover.
type OnchainDiscoverParams struct {
	Chain  string // ethereum or bsc
	Window string // 24h, 7d, 30d, 90d or all
	Sort   string // volume, inflow, outflow, net_flow, tx_count or pnl
	Order  string // asc or desc
	Size   int
}

// DiscoverRow is one wallet of /v1/onchain/wallets/discover.
type DiscoverRow struct {
	Address          string  `json:"address"`
	Volume           float64 `json:"volume" doc:"inflow plus outflow, USD in the window"`
	Inflow           float64 `json:"inflow" doc:"USD at transfer time received in the window"`
	Outflow          float64 `json:"outflow" doc:"USD at transfer time sent in the window"`
	NetFlow          float64 `json:"net_flow" doc:"inflow minus outflow"`
	TxCount          int64   `json:"tx_count" doc:"transfers sent or received in the window"`
	TokensTraded     int64   `json:"tokens_traded" doc:"distinct tokens moved in the window"`
	TokensProfitable int64   `json:"tokens_profitable" doc:"tokens whose realized PnL in the window is above zero"`
	FirstSeen        *string `json:"first_seen" doc:"first transfer on this chain (YYYY-MM-DD); /wallets/{address} spans every chain"`
	LastActive       *string `json:"last_active" doc:"last transfer on this chain"`
	RealizedPnL      float64 `json:"realized_pnl" doc:"sum over tokens bought and sold in the window of min(bought, sold) x (average sell price - average buy price), USD"`
	PnLAvailable     int64   `json:"pnl_available" doc:"1: realized_pnl was computed (always 1 on listed rows)"`
}

// Discover is the envelope of /v1/onchain/wallets/discover.
type Discover struct {
	Wallets []DiscoverRow `json:"wallets"`
	Total   int64         `json:"total" doc:"wallets in the matching population (pnl_available), not the row count"`
}

// OnchainDiscover ranks the wallets of one chain whose realized PnL is available.
func (q *Queries) OnchainDiscover(ctx context.Context, p OnchainDiscoverParams) (Discover, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return Discover{Wallets: []DiscoverRow{}}, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	out := Discover{Wallets: []DiscoverRow{}}
	since, until := windowBounds(q.Now(), p.Window)
	rows, err := q.db.QueryContext(ctx, onchainDiscoverSQL, p.Chain, since, until, p.Sort, p.Order, p.Size)
	if err != nil {
		return out, wrap(ctx, "onchain discover", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r DiscoverRow
		var first, last sql.NullTime
		if err := rows.Scan(&r.Address, &r.Inflow, &r.Outflow, &r.TxCount, &r.TokensTraded, &r.TokensProfitable,
			&first, &last, &r.RealizedPnL, &out.Total); err != nil {
			return out, wrap(ctx, "onchain discover", err)
		}
		r.Volume, r.NetFlow = usd(r.Inflow+r.Outflow), usd(r.Inflow-r.Outflow)
		r.Inflow, r.Outflow, r.RealizedPnL = usd(r.Inflow), usd(r.Outflow), usd(finite(r.RealizedPnL))
		r.FirstSeen, r.LastActive = dateOf(first), dateOf(last)
		r.PnLAvailable = 1
		out.Wallets = append(out.Wallets, r)
	}
	// total rides on every row; an empty page (size is never 0) means no population.
	return out, wrap(ctx, "onchain discover", rows.Err())
}
