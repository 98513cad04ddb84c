package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexWalletFundingSQL = sqlfiles.MustRead("perpdex/wallet_funding.sql")

// FundingPayment is one hourly funding payment of a wallet's position.
type FundingPayment struct {
	Time        string  `json:"time" doc:"funding hour, ISO-8601 UTC"`
	Coin        string  `json:"coin"`
	Side        string  `json:"side" doc:"long or short: the position's side"`
	SizeToken   float64 `json:"size_token" doc:"absolute position size"`
	FundingRate float64 `json:"funding_rate" doc:"fraction per hour; positive: longs pay shorts"`
	Usd         float64 `json:"usd" doc:"payment; negative when the wallet paid"`
}

// FundingKey is the keyset position of a funding payment.
type FundingKey struct {
	Time time.Time `json:"t"`
	Coin string    `json:"c"`
}

// WalletFundingPage is the envelope of /v1/perpdex/wallets/{address}/funding.
type WalletFundingPage struct {
	Wallet     string           `json:"wallet"`
	Payments   []FundingPayment `json:"payments"`
	NextCursor *string          `json:"nextCursor"`
	Next       *FundingKey      `json:"-"`
}

// PerpdexWalletFunding pages one wallet's funding payments newest first.
func (q *Queries) PerpdexWalletFunding(ctx context.Context, wallet, coin string, start, end time.Time, limit int, after *FundingKey) (WalletFundingPage, error) {
	page := WalletFundingPage{Wallet: wallet, Payments: []FundingPayment{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aC any
	if after != nil {
		aT, aC = after.Time, after.Coin
	}
	var err error
	page.Payments, page.Next, err = keysetPage(ctx, q.db, "perpdex wallet funding", perpdexWalletFundingSQL, limit,
		[]any{wallet, pdNullStr(coin), start, end, aT, aC}, func(rows *sql.Rows) (FundingPayment, FundingKey, error) {
			var (
				r   FundingPayment
				ts  time.Time
				szi float64
			)
			err := rows.Scan(&ts, &r.Coin, &r.Usd, &szi, &r.FundingRate)
			r.Time, r.Side, r.SizeToken, r.Usd = ISOSeconds(ts), pdSide(szi), pdAbs(szi), Round(r.Usd, 6)
			return r, FundingKey{ts, r.Coin}, err
		})
	return page, err
}
