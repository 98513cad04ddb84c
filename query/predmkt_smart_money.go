package query

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	sqlfiles "mdq/sql"
)

var (
	predmktSmartFlowsSQL = sqlfiles.MustRead("predmkt/smart_money_flows.sql")
	predmktSmartBuysSQL  = sqlfiles.MustRead("predmkt/smart_money_buys.sql")
	predmktMidsSQL       = sqlfiles.MustRead("predmkt/mids.sql")
)

// Smart-money rules of SPEC §4.2.
const (
	MispricingMinBuyUSD = 500.0
	MispricingMinDelta  = 0.03
)

// PredmktSmartMoneyParams are the inputs of PredmktSmartMoney.
type PredmktSmartMoneyParams struct {
	Mode     string // flows or mispricings
	Hours    int64  // 1 to 720
	Category string // all or a category; anything else answers []
	Limit    int
}

// SmartMoneyFlowRow is one row of /v1/predmkt/smart_money?mode=flows.
type SmartMoneyFlowRow struct {
	ConditionID  string   `json:"condition_id"`
	Title        string   `json:"title"`
	Slug         string   `json:"slug"`
	SmartWallets int64    `json:"smart_wallets" doc:"cohort wallets that traded the market in the window"`
	BuyInflow    float64  `json:"buy_inflow" doc:"cohort buys in USD, both outcomes"`
	SellOutflow  float64  `json:"sell_outflow" doc:"cohort sells in USD, both outcomes"`
	NetInflow    float64  `json:"net_inflow" doc:"buy_inflow minus sell_outflow"`
	Trades       int64    `json:"trades"`
	LastTS       string   `json:"last_ts" doc:"last cohort fill, YYYY-MM-DD HH:MM:SS UTC without zone"`
	YesMid       *float64 `json:"yes_mid" doc:"latest recorded mid of the first outcome; null when none is recorded"`
}

// SmartMoneyMispricingRow is one row of /v1/predmkt/smart_money?mode=mispricings.
type SmartMoneyMispricingRow struct {
	ConditionID   string  `json:"condition_id"`
	Title         string  `json:"title"`
	Slug          string  `json:"slug"`
	SmartWallets  int64   `json:"smart_wallets" doc:"cohort wallets that bought the side in the window"`
	LastBuyTS     string  `json:"last_buy_ts" doc:"last cohort buy of the side, YYYY-MM-DD HH:MM:SS UTC"`
	TotalBuyValue float64 `json:"total_buy_value" doc:"cohort buys of both outcomes in USD"`
	Side          string  `json:"side" doc:"YES = first outcome, NO = second; the outcome the cohort bought most"`
	AvgBuyPrice   float64 `json:"avg_buy_price" doc:"volume-weighted cohort entry price of the side"`
	CurrentMid    float64 `json:"current_mid" doc:"latest recorded mid of the side's token"`
	Delta         float64 `json:"delta" doc:"current_mid minus avg_buy_price"`
	BuyValue      float64 `json:"buy_value" doc:"cohort buys of the side in USD"`
}

// IsPredmktCategory reports whether c names the whole market or one category.
func IsPredmktCategory(c string) bool {
	return c == "all" || slices.Contains(PredmktCategories, c)
}

func smartTS(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") }

// PredmktSmartMoney answers /v1/predmkt/smart_money: []SmartMoneyFlowRow or
// []SmartMoneyMispricingRow.
func (q *Queries) PredmktSmartMoney(ctx context.Context, p PredmktSmartMoneyParams) (any, error) {
	if !IsPredmktCategory(p.Category) {
		if p.Mode == "mispricings" {
			return []SmartMoneyMispricingRow{}, nil
		}
		return []SmartMoneyFlowRow{}, nil
	}
	board, err := q.PredmktBoard(ctx) // the cohort comes from this hour's board
	if err != nil {
		return nil, err
	}
	now := q.Now().UnixMilli()
	from := now - p.Hours*3_600_000
	cohort := smartCohort(board, p.Category)
	if p.Mode == "mispricings" {
		return q.smartMispricings(ctx, p, from, now, func() ([]smartSide, error) {
			days, ix, ok, err := q.smartDaysFor(ctx, cohort, from, now)
			if err != nil || !ok {
				return q.smartBuysFromSQL(ctx, p.Category, cohort, from, now)
			}
			return smartBuysFromDays(days, ix, p.Category, strings.Split(cohort, ","), from, now), nil
		})
	}
	return q.smartFlows(ctx, p, from, now, func() ([]smartFlowAgg, error) {
		days, ix, ok, err := q.smartDaysFor(ctx, cohort, from, now)
		if err != nil || !ok {
			return q.smartFlowsFromSQL(ctx, p.Category, cohort, from, now)
		}
		return smartFlowsFromDays(days, ix, p.Category, strings.Split(cohort, ","), from, now), nil
	})
}

// smartDaysFor is the window's compact days (predmkt_smart_days.go) and the tape index
// holding the market fields; ok is false when the SQL answers instead: an empty cohort
// or window (the SQL returns at once), a window over more than smartDaysMax dates, a
// market table that repeats a market, data the Go path does not reproduce. An error
// reading the days also leaves the request to the SQL.
func (q *Queries) smartDaysFor(ctx context.Context, cohort string, from, now int64) ([]*smartDay, *tapeIndex, bool, error) {
	if cohort == "" {
		return nil, nil, false, nil
	}
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return nil, nil, false, wrap(ctx, "predmkt smart_money", err)
	}
	lo, hi, ok := ix.tradeDates(from, now)
	if !ok || ix.metaRepeats {
		return nil, nil, false, nil
	}
	days, ok, err := q.smartInputs(ctx, lo, hi)
	return days, ix, ok, err
}

// SmartMoneyCohort is the cohort list smart_money_flows.sql and smart_money_buys.sql
// take ($6) for category at the serving hour's board, so a benchmark can run the SQL
// directly as its baseline.
func (q *Queries) SmartMoneyCohort(ctx context.Context, category string) (string, error) {
	board, err := q.PredmktBoard(ctx)
	if err != nil {
		return "", err
	}
	return smartCohort(board, category), nil
}

// smartCohort is the cohort of one category of the board, as SPEC §4.2 selects it:
// the stored (rounded) figures against the thresholds, comma-joined and sorted for
// the SQL's cohort list ("" when empty).
func smartCohort(b *Board, cat string) string {
	var out []string
	for _, e := range b.Cats[cat] {
		if e.PnL >= 1000 && e.Resolved >= 5 && e.Volume >= 5000 {
			out = append(out, e.Wallet)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// smartFlowAgg is one market's cohort aggregate (smart_money_flows.sql's row).
type smartFlowAgg struct {
	cond, title, slug string
	wallets, trades   int64
	buy, sell         int64 // micro-USD
	last              int64
	yes               *string
}

// smartSide is one market outcome's cohort buys (smart_money_buys.sql's row).
type smartSide struct {
	cond, title, slug, token string
	idx                      int
	wallets                  int64
	usd, size                int64 // micro-units
	last                     int64
}

// smartDates bounds the date partitions of the trades files that can hold fills in
// [from, now], so DuckDB opens only those; ok is false when none can.
func (q *Queries) smartDates(ctx context.Context, from, now int64) (lo, hi string, ok bool, err error) {
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return "", "", false, wrap(ctx, "predmkt smart_money", err)
	}
	lo, hi, ok = ix.tradeDates(from, now)
	return lo, hi, ok, nil
}

// smartFlowsFromSQL is smart_money_flows.sql over the window's trades files (sorted
// by token, read only for the dates the window touches) for the cohort's wallets.
func (q *Queries) smartFlowsFromSQL(ctx context.Context, cat, cohort string, from, now int64) ([]smartFlowAgg, error) {
	const op = "predmkt smart_money flows"
	if cohort == "" {
		return nil, nil
	}
	lo, hi, ok, err := q.smartDates(ctx, from, now)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := q.db.QueryContext(ctx, predmktSmartFlowsSQL, cat, from, now, lo, hi, cohort)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var out []smartFlowAgg
	for rows.Next() {
		var a smartFlowAgg
		if err := rows.Scan(&a.cond, &a.title, &a.slug, &a.wallets, &a.buy, &a.sell, &a.trades, &a.last, &a.yes); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out = append(out, a)
	}
	return out, wrap(ctx, op, rows.Err())
}

func (q *Queries) smartFlows(ctx context.Context, p PredmktSmartMoneyParams, from, now int64, src func() ([]smartFlowAgg, error)) ([]SmartMoneyFlowRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	aggs, err := src()
	if err != nil {
		return nil, err
	}
	type cand struct {
		r    SmartMoneyFlowRow
		last int64
		yes  *string
	}
	var cs []cand
	for _, a := range aggs {
		c := cand{last: a.last, yes: a.yes}
		c.r.ConditionID, c.r.Title, c.r.Slug, c.r.SmartWallets, c.r.Trades = a.cond, a.title, a.slug, a.wallets, a.trades
		c.r.BuyInflow, c.r.SellOutflow = MicroUSD(a.buy), MicroUSD(a.sell)
		c.r.NetInflow = Round(c.r.BuyInflow-c.r.SellOutflow, 2)
		c.r.LastTS = smartTS(c.last)
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.r.NetInflow, a.r.NetInflow); c != 0 {
			return c
		}
		return cmp.Compare(a.r.ConditionID, b.r.ConditionID)
	})
	if len(cs) > p.Limit {
		cs = cs[:p.Limit]
	}
	var toks []string
	for _, c := range cs {
		if c.yes != nil {
			toks = append(toks, *c.yes)
		}
	}
	mids, err := q.mids(ctx, toks, now)
	if err != nil {
		return nil, err
	}
	out := make([]SmartMoneyFlowRow, 0, len(cs))
	for _, c := range cs {
		if c.yes != nil {
			if m, ok := mids[*c.yes]; ok {
				m = Round(m, 6)
				c.r.YesMid = &m
			}
		}
		out = append(out, c.r)
	}
	return out, nil
}

// smartBuysFromSQL is smart_money_buys.sql over the window's trades files for the
// cohort's wallets.
func (q *Queries) smartBuysFromSQL(ctx context.Context, cat, cohort string, from, now int64) ([]smartSide, error) {
	const op = "predmkt smart_money mispricings"
	if cohort == "" {
		return nil, nil
	}
	lo, hi, ok, err := q.smartDates(ctx, from, now)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := q.db.QueryContext(ctx, predmktSmartBuysSQL, cat, from, now, lo, hi, cohort)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var out []smartSide
	for rows.Next() {
		var s smartSide
		if err := rows.Scan(&s.cond, &s.title, &s.slug, &s.idx, &s.token, &s.wallets, &s.usd, &s.size, &s.last); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out = append(out, s)
	}
	return out, wrap(ctx, op, rows.Err())
}

func (q *Queries) smartMispricings(ctx context.Context, p PredmktSmartMoneyParams, from, now int64, src func() ([]smartSide, error)) ([]SmartMoneyMispricingRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	sides, err := src()
	if err != nil {
		return nil, err
	}
	type side = smartSide
	byMkt := map[string][]side{}
	for _, s := range sides {
		byMkt[s.cond] = append(byMkt[s.cond], s)
	}
	// Pick the side the cohort bought most (ties: the first outcome) in each market
	// where the cohort put in at least 500 USD.
	type cand struct {
		s     side
		total float64
	}
	var cs []cand
	var toks []string
	for _, ss := range byMkt {
		var total int64
		best := -1
		for i, s := range ss {
			total += s.usd
			if best < 0 || s.usd > ss[best].usd || (s.usd == ss[best].usd && s.idx < ss[best].idx) {
				best = i
			}
		}
		if MicroUSD(total) < MispricingMinBuyUSD {
			continue
		}
		cs = append(cs, cand{ss[best], MicroUSD(total)})
		toks = append(toks, ss[best].token)
	}
	mids, err := q.mids(ctx, toks, now)
	if err != nil {
		return nil, err
	}
	out := []SmartMoneyMispricingRow{}
	for _, c := range cs {
		mid, ok := mids[c.s.token]
		if !ok || c.s.size <= 0 {
			continue // no mid recorded: no mispricing can be shown
		}
		avg, cur := Round(float64(c.s.usd)/float64(c.s.size), 6), Round(mid, 6)
		delta := Round(cur-avg, 6)
		if delta < MispricingMinDelta {
			continue
		}
		sideName := "YES"
		if c.s.idx == 1 {
			sideName = "NO"
		}
		out = append(out, SmartMoneyMispricingRow{
			ConditionID: c.s.cond, Title: c.s.title, Slug: c.s.slug, SmartWallets: c.s.wallets,
			LastBuyTS: smartTS(c.s.last), TotalBuyValue: c.total, Side: sideName,
			AvgBuyPrice: avg, CurrentMid: cur, Delta: delta, BuyValue: MicroUSD(c.s.usd),
		})
	}
	slices.SortFunc(out, func(a, b SmartMoneyMispricingRow) int {
		if c := cmp.Compare(b.Delta, a.Delta); c != 0 {
			return c
		}
		if c := cmp.Compare(b.TotalBuyValue, a.TotalBuyValue); c != 0 {
			return c
		}
		return cmp.Compare(a.ConditionID, b.ConditionID)
	})
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

// mids returns the latest recorded mid of each token at or before now (local_ts),
// from the tape index (see docs/PREDMKT.md, Speed).
func (q *Queries) mids(ctx context.Context, tokens []string, now int64) (map[string]float64, error) {
	if len(tokens) == 0 {
		return map[string]float64{}, nil
	}
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return nil, wrap(ctx, "predmkt mids", err)
	}
	return q.tapeMids(ctx, ix, tokens, now)
}

// midsFromSQL is mids.sql over the whole tape; the tests hold the index to it.
func (q *Queries) midsFromSQL(ctx context.Context, tokens []string, now int64) (map[string]float64, error) {
	out := map[string]float64{}
	if len(tokens) == 0 {
		return out, nil
	}
	const op = "predmkt mids"
	rows, err := q.db.QueryContext(ctx, predmktMidsSQL, strings.Join(tokens, ","), now)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var tok string
		var m float64
		if err := rows.Scan(&tok, &m); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out[tok] = m
	}
	return out, wrap(ctx, op, rows.Err())
}
