package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
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

// LiquidationPageForTest is the liquidations route's page before its JSON: args are
// liquidations_scan.sql's (filters, keyset, limit, today's snapshot, the newest hour
// labelled), days and raw the files liquidations.sql reads. Each row has the scan's
// columns: time, wallet, coin, side, size, usd, mark, tid, the hourly size and pnl
// labels, whether the hour had one, today's size and pnl labels.
func (q *Queries) LiquidationPageForTest(ctx context.Context, args []any, days, raw string) ([][]any, error) {
	rows, err := q.liquidationRows(ctx, append(slices.Clone(args[:9]), days, raw))
	if err != nil {
		return nil, err
	}
	if err := q.liquidationLabels(ctx, rows, args[9], args[10].(time.Time)); err != nil {
		return nil, err
	}
	val := func(s sql.NullString) any {
		if !s.Valid {
			return nil
		}
		return s.String
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		var mark any
		if r.mark.Valid {
			mark = r.mark.Float64
		}
		out[i] = []any{r.t, r.wallet, r.coin, r.side, r.sz, r.usd, mark, r.tid, val(r.hs), val(r.hp), r.pit, val(r.cs), val(r.cp)}
	}
	return out, nil
}

// DayFilesFresh is how long a store keeps its listing of the source partitions.
const DayFilesFresh = dayFilesFresh

// MarketBoardForTest returns, when a request at now reads the market list's board, the
// arguments after the leading ones of markets_board.sql ($12 on) and of
// market_tokens_board.sql ($3 on): the same three.
func (q *Queries) MarketBoardForTest(now int64) (args []any, ok bool, err error) {
	b, ok, err := q.marketBoardAt(now)
	if !ok || err != nil {
		return nil, ok, err
	}
	return []any{b.path, b.hour, b.fills}, true, nil
}

// PredmktMarketsBoardSQLForTest is markets_board.sql with markets.sql's listing appended.
var PredmktMarketsBoardSQLForTest = predmktMarketsBoardSQL
