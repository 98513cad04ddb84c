package query

import (
	"context"
	"time"
)

// PerpdexLabelsArgs returns the two cohort-label arguments liquidations.sql takes for
// clock t (the snapshot of today's labels, the newest hour labelled): for benchmarks
// and equality tests that run the SQL beside the route.
func (q *Queries) PerpdexLabelsArgs(ctx context.Context, t time.Time) (current any, hourlyUntil time.Time, err error) {
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return nil, time.Time{}, err
	}
	lab, err := q.perpdexLabelsAt(ctx, t)
	if err != nil {
		return nil, time.Time{}, err
	}
	return lab.current, lab.hourlyUntil, nil
}
