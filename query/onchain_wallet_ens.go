package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletENSSQL = sqlfiles.MustRead("onchain/wallet_ens.sql")

// ENSName is one ENS name of an address.
type ENSName struct {
	Name         string `json:"name"`
	IsPrimary    bool   `json:"is_primary" doc:"the reverse (primary) record"`
	RegisteredAt string `json:"registered_at" doc:"ISO-8601 UTC"`
}

// ENS is /v1/onchain/wallets/{address}/ens.
type ENS struct {
	Address string    `json:"address"`
	Name    *string   `json:"name" doc:"the primary (reverse) name; null when the address has none"`
	Names   []ENSName `json:"names" doc:"every name held, the primary first"`
}

// OnchainWalletENS returns the reverse name and every name of an address.
func (q *Queries) OnchainWalletENS(ctx context.Context, address string) (ENS, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	out := ENS{Address: address, Names: []ENSName{}}
	rows, err := q.db.QueryContext(ctx, onchainWalletENSSQL, address)
	if err != nil {
		return out, wrap(ctx, "onchain wallet ens", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n ENSName
		var reg time.Time
		if err := rows.Scan(&n.Name, &n.IsPrimary, &reg); err != nil {
			return out, wrap(ctx, "onchain wallet ens", err)
		}
		n.RegisteredAt = reg.UTC().Format(time.RFC3339)
		if n.IsPrimary && out.Name == nil {
			name := n.Name
			out.Name = &name
		}
		out.Names = append(out.Names, n)
	}
	return out, wrap(ctx, "onchain wallet ens", rows.Err())
}
