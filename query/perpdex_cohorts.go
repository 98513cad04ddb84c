package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexCohortsSQL = sqlfiles.MustRead("perpdex/cohorts.sql")

// CohortPositioning is one coin's open interest held by one cohort on one hour.
type CohortPositioning struct {
	TS             string   `json:"ts" doc:"hour of the position batch, ISO-8601 UTC"`
	Coin           string   `json:"coin"`
	Cohort         string   `json:"cohort" doc:"band slug on the requested axis; unknown for an unlabelled holder"`
	LongUsd        float64  `json:"long_usd" doc:"sum of position_value of the cohort's long positions"`
	ShortUsd       float64  `json:"short_usd"`
	NetUsd         float64  `json:"net_usd" doc:"long_usd - short_usd"`
	LongPositions  int64    `json:"long_positions"`
	ShortPositions int64    `json:"short_positions"`
	LongSharePct   *float64 `json:"long_share_pct" doc:"long_usd / (long_usd + short_usd) * 100; null when both are 0"`
	LabelBasis     string   `json:"label_basis" doc:"point_in_time (every holder labelled as published for this hour), current (every holder on today's label) or mixed"`
}

// CohortKey is the keyset position of a cohort row.
type CohortKey struct {
	TS     time.Time `json:"t"`
	Coin   string    `json:"c"`
	Cohort string    `json:"k"`
}

// CohortsPage is the envelope of /v1/perpdex/cohorts.
type CohortsPage struct {
	Axis          string              `json:"axis"`
	Rows          []CohortPositioning `json:"rows"`
	LabelComputed LabelComputed       `json:"label_computed"`
	NextCursor    *string             `json:"nextCursor"`
	Next          *CohortKey          `json:"-"`
}

// PerpdexCohortsParams are the inputs of PerpdexCohorts.
type PerpdexCohortsParams struct {
	Coin       string // "" for every coin
	Axis       string // size or pnl
	Start, End time.Time
	Limit      int
	After      *CohortKey
}

// PerpdexCohorts pages hourly long/short positioning per coin and cohort, newest hour
// first, then coin and cohort slug.
func (q *Queries) PerpdexCohorts(ctx context.Context, p PerpdexCohortsParams) (CohortsPage, error) {
	page := CohortsPage{Axis: p.Axis, Rows: []CohortPositioning{}, LabelComputed: LabelComputed{
		Grading:    "hourly cohort labels",
		When:       "each position: its holder's label published for the batch's hour (point_in_time); hourly labels exist from 2026-04-07",
		Resolution: "1h",
		Source:     "perpdex_positions (batches taken on the hour) with perpdex_cohorts_hourly, falling back to perpdex_cohorts_current",
		Detail:     "size bands account value; pnl bands all-time PnL as a multiple of capital (slugs use underscores, e.g. 3x_smart)",
		Caveat:     "holders without a published label for the hour (the newest unpublished hours, hours before 2026-04-07, wallets missing from the hour) carry today's label, which knows the future; unlabelled holders are unknown",
	}}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return page, err
	}
	lab, err := q.perpdexLabelsAt(ctx, q.Now())
	if err != nil {
		return page, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aC, aK any
	if p.After != nil {
		aT, aC, aK = p.After.TS, p.After.Coin, p.After.Cohort
	}
	// The page is the newest limit+1 groups, and a group (hour, coin, cohort) holds the
	// positions of one hour: the groups of hours at or after s are the same whether the
	// window starts at s or earlier, so the newest day before the page's anchor (the
	// window's end or the cursor's hour) is read first and the window widened only while
	// it gives too few groups. The default window is the whole history, which read every
	// hourly snapshot and label of the lake per page (past a request's 30 s at large).
	anchor := p.End
	if p.After != nil && p.After.TS.Before(anchor) {
		anchor = p.After.TS
	}
	var got []cohortRow
	for span := 24 * time.Hour; ; span *= 4 {
		from := anchor.Add(-span)
		whole := !from.After(p.Start)
		if whole {
			from = p.Start
		}
		got, err = q.perpdexCohortRows(ctx, p, from, aT, aC, aK, lab)
		if err != nil {
			return page, err
		}
		if whole || len(got) > p.Limit {
			break
		}
	}
	var last CohortKey
	for _, g := range got {
		if len(page.Rows) == p.Limit {
			page.Next = &last
			break
		}
		r := g.row
		r.TS = ISOSeconds(g.ts)
		r.LongUsd, r.ShortUsd, r.NetUsd = Round(g.long, 2), Round(g.short, 2), Round(g.long-g.short, 2)
		if g.long+g.short > 0 {
			r.LongSharePct = pdPtr(g.long/(g.long+g.short)*100, 4)
		}
		switch g.pit {
		case g.n:
			r.LabelBasis = "point_in_time"
		case 0:
			r.LabelBasis = "current"
		default:
			r.LabelBasis = "mixed"
		}
		if g.pit < g.n {
			page.LabelComputed.Lookahead = true
		}
		page.Rows = append(page.Rows, r)
		last = CohortKey{g.ts, r.Coin, r.Cohort}
	}
	return page, nil
}

// cohortRow is one group of cohorts.sql as read.
type cohortRow struct {
	row         CohortPositioning
	ts          time.Time
	long, short float64
	pit, n      int64
}

// perpdexCohortRows runs cohorts.sql for the window [from, p.End] (at most limit+1
// groups).
func (q *Queries) perpdexCohortRows(ctx context.Context, p PerpdexCohortsParams, from time.Time, aT, aC, aK any, lab pdLabelsAt) ([]cohortRow, error) {
	rows, err := q.db.QueryContext(ctx, perpdexCohortsSQL, pdNullStr(p.Coin), p.Axis, from, p.End, aT, aC, aK, p.Limit+1, lab.current, lab.hourlyUntil)
	if err != nil {
		return nil, wrap(ctx, "perpdex cohorts", err)
	}
	defer rows.Close()
	var out []cohortRow
	for rows.Next() {
		var g cohortRow
		if err := rows.Scan(&g.ts, &g.row.Coin, &g.row.Cohort, &g.long, &g.short, &g.row.LongPositions, &g.row.ShortPositions, &g.pit, &g.n); err != nil {
			return nil, wrap(ctx, "perpdex cohorts", err)
		}
		out = append(out, g)
	}
	return out, wrap(ctx, "perpdex cohorts", rows.Err())
}
