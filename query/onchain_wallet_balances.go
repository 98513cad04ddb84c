package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletBalancesSQL = sqlfiles.MustRead("onchain/wallet_balances.sql")

// Balance is one row of /v1/onchain/wallets/{address}/balances.
type Balance struct {
	TokenAddress string   `json:"token_address" doc:"the zero address is the native coin"`
	Symbol       string   `json:"symbol"`
	Name         *string  `json:"name" doc:"null when the metadata does not know the token"`
	Decimals     *int64   `json:"decimals"`
	Balance      float64  `json:"balance" doc:"whole tokens (decimals applied)"`
	PriceUSD     *float64 `json:"price_usd" doc:"latest hourly price at or before now; null for an unpriced token"`
	ValueUSD     *float64 `json:"value_usd" doc:"balance times price_usd; null for an unpriced token"`
	AsOf         string   `json:"as_of" doc:"when the balance was read, ISO-8601 UTC"`
}

// OnchainWalletBalances lists a wallet's balances worth at least minUSD.
func (q *Queries) OnchainWalletBalances(ctx context.Context, chain, address string, minUSD float64) ([]Balance, error) {
	if err := q.onchainSide(ctx); err != nil {
		return nil, err
	}
	if x := q.balanceIndex(); x != nil {
		ctx, cancel := q.ctx(ctx)
		defer cancel()
		items, ok, err := q.balances(ctx, x, chain, address, micros(q.Now()), minUSD)
		if err != nil || ok {
			return items, err
		}
	}
	return q.onchainWalletBalancesSQL(ctx, chain, address, minUSD)
}

// onchainWalletBalancesSQL answers from wallet_balances.sql: the fallback when the Go
// index is not built, and the baseline it is tested and benchmarked against.
func (q *Queries) onchainWalletBalancesSQL(ctx context.Context, chain, address string, minUSD float64) ([]Balance, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, onchainWalletBalancesSQL, chain, address, micros(q.Now()), minUSD)
	if err != nil {
		return nil, wrap(ctx, "onchain wallet balances", err)
	}
	defer rows.Close()
	items := []Balance{}
	for rows.Next() {
		var r Balance
		var name sql.NullString
		var dec sql.NullInt64
		var price, value sql.NullFloat64
		var asOf time.Time
		if err := rows.Scan(&r.TokenAddress, &r.Symbol, &name, &dec, &r.Balance, &price, &value, &asOf); err != nil {
			return nil, wrap(ctx, "onchain wallet balances", err)
		}
		r.Name = nullStr(name)
		if dec.Valid {
			r.Decimals = &dec.Int64
		}
		if price.Valid {
			p, v := price.Float64, usd(value.Float64)
			r.PriceUSD, r.ValueUSD = &p, &v
		}
		r.AsOf = asOf.UTC().Format(time.RFC3339)
		items = append(items, r)
	}
	return items, wrap(ctx, "onchain wallet balances", rows.Err())
}
