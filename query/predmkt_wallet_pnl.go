package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var predmktWalletPnLSQL = sqlfiles.MustRead("predmkt/wallet_pnl.sql")

// PredmktPnLDay is one day of /v1/predmkt/wallets/{address}/pnl.
type PredmktPnLDay struct {
	Date             string  `json:"date" doc:"UTC day, YYYY-MM-DD"`
	RealizedPnLUSD   float64 `json:"realized_pnl_usd" doc:"realized PnL of the markets that resolved validly on this day"`
	CumulativePnLUSD float64 `json:"cumulative_pnl_usd" doc:"realized PnL of every market resolved validly up to the end of this day (since the tape began, not only inside the series)"`
	ResolvedMarkets  int64   `json:"resolved_markets" doc:"markets the wallet traded that resolved validly on this day"`
}

// PredmktWalletPnL is the body of /v1/predmkt/wallets/{address}/pnl.
type PredmktWalletPnL struct {
	Wallet   string          `json:"wallet"`
	Category string          `json:"category"`
	Days     int64           `json:"days"`
	Series   []PredmktPnLDay `json:"series" doc:"one entry per UTC day, oldest first, ending today (the store clock's date); days without a resolution carry 0"`
}

// PredmktWalletPnLParams are the inputs of PredmktWalletPnL.
type PredmktWalletPnLParams struct {
	Wallet   string
	Category string // all or one category
	Days     int64
}

// PredmktWalletPnL answers /v1/predmkt/wallets/{address}/pnl: a dense daily series of
// realized PnL by resolution day, with the running lifetime total.
func (q *Queries) PredmktWalletPnL(ctx context.Context, p PredmktWalletPnLParams) (PredmktWalletPnL, error) {
	out := PredmktWalletPnL{Wallet: p.Wallet, Category: p.Category, Days: p.Days, Series: []PredmktPnLDay{}}
	cat := p.Category
	if cat == "all" {
		cat = ""
	}
	now := q.Now()
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt wallet pnl"
	rows, err := q.db.QueryContext(ctx, predmktWalletPnLSQL, p.Wallet, now.UnixMilli(), cat)
	if err != nil {
		return out, wrap(ctx, op, err)
	}
	defer rows.Close()
	today := now.Truncate(24 * time.Hour)
	start := today.AddDate(0, 0, -int(p.Days-1))
	perDay := map[string]int64{}
	nDay := map[string]int64{}
	var before int64 // micro-USD resolved before the first day
	for rows.Next() {
		var cid string
		var res, pnl int64
		if err := rows.Scan(&cid, &res, &pnl); err != nil {
			return out, wrap(ctx, op, err)
		}
		t := time.UnixMilli(res).UTC()
		if t.Before(start) {
			before += pnl
			continue
		}
		d := Date(t)
		perDay[d] += pnl
		nDay[d]++
	}
	if err := rows.Err(); err != nil {
		return out, wrap(ctx, op, err)
	}
	cum := before
	for d := start; !d.After(today); d = d.AddDate(0, 0, 1) {
		k := Date(d)
		cum += perDay[k]
		out.Series = append(out.Series, PredmktPnLDay{Date: k, RealizedPnLUSD: MicroUSD(perDay[k]),
			CumulativePnLUSD: MicroUSD(cum), ResolvedMarkets: nDay[k]})
	}
	return out, nil
}
