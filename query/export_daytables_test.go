package query

import (
	"context"
	"fmt"
	"strings"
)

// Test hooks: the date plans the market list and the liquidations page pass their SQL.

// MarketDaysPlanForTest returns the plan's totals date, its arguments of markets.sql
// ($12 on) and of market_tokens.sql ($3 on), and a description for failure messages.
func (q *Queries) MarketDaysPlanForTest(now int64) (totals string, markets, tokens []any, desc string, err error) {
	p, err := q.marketDaysPlan(now)
	return p.totals, p.markets(), p.tokens(), fmt.Sprintf("%+v", p), err
}

// MarketHoursRawForTest reports whether the plan at now reads any raw fills.
func (q *Queries) MarketPlanReadsRawForTest(now int64) (bool, error) {
	p, err := q.marketDaysPlan(now)
	return p.raw != "" || p.hourRaw != "", err
}

// LiquidationDaysPlanForTest returns the files liquidations.sql reads ($12, $13) when
// it reads every date, with the dates for failure messages.
func (q *Queries) LiquidationDaysPlanForTest() (days, raw, desc string, err error) {
	d, r, err := q.dayPlan(perpdexLiquidationDays, nil, nil)
	if err != nil {
		return "", "", "", err
	}
	split := func(s string) []string {
		if s == "" {
			return []string{}
		}
		return strings.Split(s, ",")
	}
	if days, err = q.liquidationFiles(split(d), nil); err != nil {
		return "", "", "", err
	}
	raw, err = q.liquidationFiles(nil, split(r))
	return days, raw, "days " + d + " raw " + r, err
}

func (q *Queries) LiquidationDatesForTest(ctx context.Context, args []any) ([]any, error) {
	d, err := q.liquidationDates(ctx, args)
	if err != nil {
		return nil, err
	}
	files, err := q.labelFiles(d.dates)
	return []any{files, d.from, d.to}, err
}

// DayFilesFresh is how long a store keeps its listing of the source partitions.
const DayFilesFresh = dayFilesFresh
