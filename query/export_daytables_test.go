package query

import "context"

// Test hooks: the date plans the market list and the liquidations page pass their SQL.

func (q *Queries) MarketDaysPlanForTest(now int64) (string, string, string, error) {
	return q.marketDaysPlan(now)
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
