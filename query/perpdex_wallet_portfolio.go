package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexWalletPortfolioSQL = sqlfiles.MustRead("perpdex/wallet_portfolio.sql")

// PortfolioPoint is one bucket of a wallet's portfolio series.
type PortfolioPoint struct {
	TS           string   `json:"ts" doc:"bucket start, ISO-8601 UTC"`
	AccountValue *float64 `json:"account_value" doc:"the bucket's last hourly account snapshot inside the window; null without one"`
	Pnl          float64  `json:"pnl" doc:"closed PnL minus fees of the bucket's fills plus its funding payments"`
	CumPnl       float64  `json:"cum_pnl" doc:"pnl summed from the window's first bucket through this one"`
}

// PerpdexWindowSpan is a resolved window: start is null for all.
type PerpdexWindowSpan struct {
	Window string  `json:"window"`
	Start  *string `json:"start" doc:"ISO-8601 UTC; null for all"`
	End    string  `json:"end" doc:"the store clock"`
}

// PortfolioPage is the body of /v1/perpdex/wallets/{address}/portfolio.
type PortfolioPage struct {
	Wallet     string            `json:"wallet"`
	Window     PerpdexWindowSpan `json:"window"`
	Resolution string            `json:"resolution" doc:"hourly or daily"`
	Pnl        float64           `json:"pnl" doc:"the window's PnL: the last point's cum_pnl"`
	Points     []PortfolioPoint  `json:"points" doc:"one per bucket from the window start's bucket to now's, oldest first (for all: from the wallet's first bucket with data)"`
}

// pdSpan resolves a window name against the store clock.
func pdSpan(window string, now time.Time) (PerpdexWindowSpan, time.Time) {
	start := PerpdexWindowStart(window, now)
	span := PerpdexWindowSpan{Window: window, End: ISOSeconds(now)}
	if window != "all" {
		s := ISOSeconds(start)
		span.Start = &s
	}
	return span, start
}

// PerpdexWalletPortfolio returns one wallet's account value and PnL per hour or day over
// a rolling window ending now, every bucket present (zero PnL, null account value).
func (q *Queries) PerpdexWalletPortfolio(ctx context.Context, wallet, window, resolution string) (PortfolioPage, error) {
	now := q.Now()
	span, start := pdSpan(window, now)
	page := PortfolioPage{Wallet: wallet, Window: span, Resolution: resolution, Points: []PortfolioPoint{}}
	width := time.Hour
	if resolution == "daily" {
		width = 24 * time.Hour
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexWalletPortfolioSQL, wallet, start, now, width.Milliseconds())
	if err != nil {
		return page, wrap(ctx, "perpdex wallet portfolio", err)
	}
	defer rows.Close()
	type bucket struct {
		av  sql.NullFloat64
		pnl float64
	}
	got := map[int64]bucket{}
	var first int64 = -1
	for rows.Next() {
		var b int64
		var x bucket
		if err := rows.Scan(&b, &x.av, &x.pnl); err != nil {
			return page, wrap(ctx, "perpdex wallet portfolio", err)
		}
		got[b] = x
		if first < 0 || b < first {
			first = b
		}
	}
	if err := rows.Err(); err != nil {
		return page, wrap(ctx, "perpdex wallet portfolio", err)
	}
	w := width.Milliseconds()
	lo := start.UnixMilli() / w * w
	if window == "all" {
		if first < 0 {
			return page, nil
		}
		lo = first
	}
	var cum float64
	for b := lo; b <= now.UnixMilli(); b += w {
		x := got[b]
		cum += x.pnl
		page.Points = append(page.Points, PortfolioPoint{TS: ISOSeconds(time.UnixMilli(b)), AccountValue: pdNF(x.av, 2),
			Pnl: Round(x.pnl, 2), CumPnl: Round(cum, 2)})
	}
	page.Pnl = Round(cum, 2)
	return page, nil
}
