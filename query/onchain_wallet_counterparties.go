package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletCounterpartiesSQL = sqlfiles.MustRead("onchain/wallet_counterparties.sql")

// Counterparty is one row of /v1/onchain/wallets/{address}/counterparties.
type Counterparty struct {
	Address    string  `json:"address"`
	Label      *string `json:"label" doc:"cascade label entity; null when unlabelled"`
	WalletType *string `json:"wallet_type" doc:"cascade label wallet type; null when unlabelled"`
	VolumeUSD  float64 `json:"volume_usd" doc:"out_usd plus in_usd"`
	OutUSD     float64 `json:"out_usd" doc:"USD the wallet sent to the counterparty"`
	InUSD      float64 `json:"in_usd" doc:"USD the wallet received from the counterparty"`
	NetUSD     float64 `json:"net_usd" doc:"in_usd minus out_usd"`
	TxCount    int64   `json:"tx_count" doc:"transfers between them, both ways"`
	Tokens     int64   `json:"tokens" doc:"distinct tokens moved between them"`
	FirstTS    string  `json:"first_ts" doc:"first transfer in the window, ISO-8601 UTC"`
	LastTS     string  `json:"last_ts" doc:"last transfer in the window, ISO-8601 UTC"`
}

// OnchainWalletCounterparties ranks a wallet's counterparties by USD volume, from the Go
// per-wallet index (wallet_counterparties.sql when the index cannot sum the wallet
// exactly in int64).
func (q *Queries) OnchainWalletCounterparties(ctx context.Context, chain, address, window string, limit int) ([]Counterparty, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	since, until := windowBounds(q.Now(), window)
	// A busy wallet's legs cached in Go answer alike (onchain_hot_legs.go); the SQL
	// reads the files listed for the check.
	a, err := q.walletArgs(ctx, address, chain)
	if err != nil {
		return nil, wrap(ctx, "onchain wallet counterparties", err)
	}
	if h := q.hotLegsFor(chain, address, a); h != nil {
		if items, ok := h.topCounterparties(since, until, limit); ok {
			return q.labelCounterparties(items, time.UnixMicro(until)), nil
		}
	}
	return q.onchainWalletCounterpartiesSQL(ctx, chain, address, since, until, limit, &a)
}

// onchainWalletCounterpartiesSQL is OnchainWalletCounterparties by
// wallet_counterparties.sql, over the files listed (nil: listed here).
func (q *Queries) onchainWalletCounterpartiesSQL(ctx context.Context, chain, address string, since, until int64, limit int, listed *walletArgs) ([]Counterparty, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.queryWallet(ctx, onchainWalletCounterpartiesSQL, listedFirst(listed, func() (walletArgs, error) { return q.walletArgs(ctx, address, chain) }),
		walletArgs.legsTail, chain, address, since, until, limit)
	if err != nil {
		return nil, wrap(ctx, "onchain wallet counterparties", err)
	}
	defer rows.Close()
	items := []Counterparty{}
	for rows.Next() {
		var addr string
		var vol, out, in float64
		var n, toks int64
		var first, last time.Time
		if err := rows.Scan(&addr, &vol, &out, &in, &n, &toks, &first, &last); err != nil {
			return nil, wrap(ctx, "onchain wallet counterparties", err)
		}
		items = append(items, counterpartyRow(addr, vol, out, in, n, toks, first, last))
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "onchain wallet counterparties", err)
	}
	return q.labelCounterparties(items, time.UnixMicro(until)), nil
}

// counterpartyRow is one ranked counterparty from its figures as the SQL gives them
// (DOUBLE volume, sent and received USD; first and last transfer times).
func counterpartyRow(addr string, vol, out, in float64, n, tokens int64, first, last time.Time) Counterparty {
	return Counterparty{Address: addr, VolumeUSD: usd(vol), OutUSD: usd(out), InUSD: usd(in), NetUSD: usd(in - out),
		TxCount: n, Tokens: tokens, FirstTS: first.UTC().Format(time.RFC3339), LastTS: last.UTC().Format(time.RFC3339)}
}

// labelCounterparties adds the cascade labels from the in-memory index, as the cascade
// stood at at (the window's end: the clock).
func (q *Queries) labelCounterparties(items []Counterparty, at time.Time) []Counterparty {
	labels := q.legsLabels()
	for i := range items {
		if l, ok := labels.at(items[i].Address, at); ok {
			e, wt := l.Entity, l.WalletType
			items[i].Label, items[i].WalletType = &e, &wt
		}
	}
	return items
}
