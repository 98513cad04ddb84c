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
	rows, err := q.db.QueryContext(ctx, perpdexCohortsSQL, pdNullStr(p.Coin), p.Axis, p.Start, p.End, aT, aC, aK, p.Limit+1, lab.current, lab.hourlyUntil)
	if err != nil {
		return page, wrap(ctx, "perpdex cohorts", err)
	}
	defer rows.Close()
	var last CohortKey
	for rows.Next() {
		var (
			r         CohortPositioning
			ts        time.Time
			pit, n    int64
			long, shr float64
		)
		if err := rows.Scan(&ts, &r.Coin, &r.Cohort, &long, &shr, &r.LongPositions, &r.ShortPositions, &pit, &n); err != nil {
			return page, wrap(ctx, "perpdex cohorts", err)
		}
		if len(page.Rows) == p.Limit {
			page.Next = &last
			break
		}
		r.TS = ISOSeconds(ts)
		r.LongUsd, r.ShortUsd, r.NetUsd = Round(long, 2), Round(shr, 2), Round(long-shr, 2)
		if long+shr > 0 {
			r.LongSharePct = pdPtr(long/(long+shr)*100, 4)
		}
		switch pit {
		case n:
			r.LabelBasis = "point_in_time"
		case 0:
			r.LabelBasis = "current"
		default:
			r.LabelBasis = "mixed"
		}
		if pit < n {
			page.LabelComputed.Lookahead = true
		}
		page.Rows = append(page.Rows, r)
		last = CohortKey{ts, r.Coin, r.Cohort}
	}
	return page, wrap(ctx, "perpdex cohorts", rows.Err())
}
