package query

import (
	"context"
	"fmt"
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

func (q *Queries) LiquidationDaysPlanForTest() (string, string, error) {
	return q.dayPlan(perpdexLiquidationDays, nil, nil)
}

func (q *Queries) LiquidationDatesForTest(ctx context.Context, args []any) ([]any, error) {
	d, err := q.liquidationDates(ctx, args)
	return []any{d.dates, d.from, d.to}, err
}

// DayFilesFresh is how long a store keeps its listing of the source partitions.
const DayFilesFresh = dayFilesFresh
