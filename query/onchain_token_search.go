package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var onchainTokenSearchSQL = sqlfiles.MustRead("onchain/token_search.sql")

// TokenMatch is one row of /v1/onchain/tokens/search.
type TokenMatch struct {
	Chain        string `json:"chain"`
	TokenAddress string `json:"token_address" doc:"the zero address is the chain's native coin"`
	Symbol       string `json:"symbol"`
	Name         string `json:"name"`
	Decimals     int64  `json:"decimals"`
	Logo         string `json:"logo" doc:"logo URL"`
}

// OnchainTokenSearch resolves a symbol or name to tokens.
func (q *Queries) OnchainTokenSearch(ctx context.Context, text, chain string, size int) ([]TokenMatch, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, onchainTokenSearchSQL, text, chain, size)
	if err != nil {
		return nil, wrap(ctx, "onchain token search", err)
	}
	defer rows.Close()
	items := []TokenMatch{}
	for rows.Next() {
		var r TokenMatch
		if err := rows.Scan(&r.Chain, &r.TokenAddress, &r.Symbol, &r.Name, &r.Decimals, &r.Logo); err != nil {
			return nil, wrap(ctx, "onchain token search", err)
		}
		items = append(items, r)
	}
	return items, wrap(ctx, "onchain token search", rows.Err())
}
