package query

import (
	"context"
	"strings"
)

// PerpdexTradersParams are the inputs of PerpdexTraders. Unlike the leaderboard's
// fraction, MinWinRatePct is a percent (60 means 60%).
type PerpdexTradersParams struct {
	Window          string
	Sort            string
	Desc            bool
	Search          string // lower-case hex fragment of the wallet address ("0x..." anchors it at the start); "" for any
	SizeCohort      string // "" for any
	PnlCohort       string // "" for any
	MinTrades       int64
	MinWinRatePct   float64
	MinVolume       float64
	MinAccountValue float64
	Limit           int
	After           *BoardKey
}

// PerpdexTraders searches the window's trader board (the leaderboard's rows) by wallet
// fragment, both cohort axes at once and minimums, then orders and pages it. rank is
// the position in the filtered order.
func (q *Queries) PerpdexTraders(ctx context.Context, p PerpdexTradersParams) (TraderPage, error) {
	// The whole board in the requested order, unfiltered but for minimum trades and volume.
	all, err := q.PerpdexLeaderboard(ctx, PerpdexLeaderboardParams{Window: p.Window, Sort: p.Sort, Desc: p.Desc,
		Axis: "size", MinTrades: p.MinTrades, MinVolume: p.MinVolume, Limit: 1 << 30})
	if err != nil {
		return TraderPage{}, err
	}
	get := PerpdexSortKeys[p.Sort]
	var rows []TraderRow
	for _, r := range all.Traders {
		// A win rate compares at the percent's precision: 60 keeps a rate of 0.6.
		if r.WinRate*100 < p.MinWinRatePct-1e-9 || r.AccountValue < p.MinAccountValue {
			continue
		}
		// A 0x prefix anchors the fragment at the start of the address.
		if strings.HasPrefix(p.Search, "0x") && !strings.HasPrefix(r.Wallet, p.Search) || !strings.Contains(r.Wallet, p.Search) {
			continue
		}
		if p.SizeCohort != "" && (r.SizeCohort == nil || !strings.EqualFold(*r.SizeCohort, p.SizeCohort)) {
			continue
		}
		if p.PnlCohort != "" && (r.PnlCohort == nil || !strings.EqualFold(*r.PnlCohort, p.PnlCohort)) {
			continue
		}
		rows = append(rows, r)
	}
	page := TraderPage{Traders: []TraderRow{}, TotalCount: len(rows)}
	i := 0
	if p.After != nil {
		for i < len(rows) && !pdTradersAfter(BoardKey{get(&rows[i]), rows[i].Wallet}, *p.After, p.Desc) {
			i++
		}
	}
	for ; i < len(rows) && len(page.Traders) < p.Limit; i++ {
		r := rows[i]
		r.Rank = i + 1
		page.Traders = append(page.Traders, r)
	}
	if i < len(rows) && len(page.Traders) > 0 {
		last := rows[i-1]
		page.Next = &BoardKey{get(&last), last.Wallet}
	}
	return page, nil
}

// pdTradersAfter reports whether row k comes strictly after the cursor key c in the
// board order: the sort value in the requested direction with nulls last, then wallet.
func pdTradersAfter(k, c BoardKey, desc bool) bool {
	switch {
	case k.Value == nil && c.Value == nil:
		return k.Wallet > c.Wallet
	case k.Value == nil:
		return true
	case c.Value == nil:
		return false
	case *k.Value != *c.Value:
		if desc {
			return *k.Value < *c.Value
		}
		return *k.Value > *c.Value
	}
	return k.Wallet > c.Wallet
}
