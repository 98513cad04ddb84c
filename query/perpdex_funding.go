package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexFundingSQL = sqlfiles.MustRead("perpdex/funding.sql")

// FundingRateRow is one coin's funding on one hour.
type FundingRateRow struct {
	Time          string  `json:"time" doc:"funding hour, ISO-8601 UTC"`
	Coin          string  `json:"coin"`
	FundingRate   float64 `json:"funding_rate" doc:"fraction per hour; positive: longs pay shorts"`
	AnnualizedPct float64 `json:"annualized_pct" doc:"funding_rate * 24 * 365 * 100"`
	Positions     int64   `json:"positions" doc:"positions that paid or received it"`
}

// FundingPage is the envelope of /v1/perpdex/funding.
type FundingPage struct {
	Funding    []FundingRateRow `json:"funding"`
	NextCursor *string          `json:"nextCursor"`
	Next       *FundingKey      `json:"-"`
}

// PerpdexFunding pages hourly funding rates newest first (then by coin).
func (q *Queries) PerpdexFunding(ctx context.Context, coin string, start, end time.Time, limit int, after *FundingKey) (FundingPage, error) {
	page := FundingPage{Funding: []FundingRateRow{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aC any
	if after != nil {
		aT, aC = after.Time, after.Coin
	}
	var err error
	page.Funding, page.Next, err = keysetPage(ctx, q.db, "perpdex funding", perpdexFundingSQL, limit,
		[]any{pdNullStr(coin), start, end, aT, aC}, func(rows *sql.Rows) (FundingRateRow, FundingKey, error) {
			var r FundingRateRow
			var ts time.Time
			err := rows.Scan(&ts, &r.Coin, &r.FundingRate, &r.Positions)
			r.Time, r.AnnualizedPct = ISOSeconds(ts), Round(r.FundingRate*24*365*100, 4)
			return r, FundingKey{ts, r.Coin}, err
		})
	return page, err
}
