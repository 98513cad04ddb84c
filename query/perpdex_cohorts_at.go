package query

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// Cohort labels at a clock. The lake publishes the hourly labels and today's labels
// forward only (RebuildPerpdexCohorts): a store whose clock is behind the lake's
// publication (mdq serve --clock in the past, a request's as_of) finds labels computed
// from snapshots after its clock. The readers therefore never take the published tables
// as they are: they read
//   - the hourly labels of the hours published by their clock only: complete hours,
//     H + 1h <= clock (the publication's own rule), so an hour labelled by a later
//     publication reads as not yet labelled, as it stood then;
//   - today's labels computed from the newest snapshot at or before their clock: the
//     published ones when they were computed from a snapshot at or before it (while a
//     newer snapshot's labels are being published, the previous ones are served), else
//     computed on demand from that snapshot with the publication's own SQL and kept in
//     memory for the next request (perpdex_cohorts_past_mem, a few snapshots).

var (
	perpdexCohortPastTableSQL   = sqlfiles.MustRead("perpdex/cohort_past_table.sql")
	perpdexCohortAtMacroSQL     = sqlfiles.MustRead("perpdex/cohort_at_macro.sql")
	perpdexCohortSnapshotAtSQL  = sqlfiles.MustRead("perpdex/cohort_snapshot_at.sql")
	perpdexCohortPublishedAtSQL = sqlfiles.MustRead("perpdex/cohort_published_at.sql")
	perpdexCohortPastPruneSQL   = sqlfiles.MustRead("perpdex/cohort_past_prune.sql")
)

// pdPastKeep is how many snapshots' on-demand labels a store keeps in memory.
const pdPastKeep = 4

// pdLabelsAt says which labels a reader at one clock may show.
type pdLabelsAt struct {
	// current is the snapshot whose today's labels to read through perpdex_cohorts_at
	// (NULL: none, before the first snapshot).
	current sql.NullTime
	// hourlyUntil is the newest hour whose hourly labels were published by the clock.
	hourlyUntil time.Time
}

type pdPastKey struct{}

// pdPastState is a store's on-demand today's labels.
type pdPastState struct {
	setup sync.Once
	err   error

	mu   sync.Mutex  // one on-demand computation at a time
	have []time.Time // snapshots held in perpdex_cohorts_past_mem, most recently used last

	pubMu  sync.Mutex
	pubSig string       // files signature of perpdex_cohorts_current when pub was read
	pub    sql.NullTime // its computed_at
}

func (q *Queries) pdPast() *pdPastState {
	v, _ := q.ext.LoadOrStore(pdPastKey{}, &pdPastState{})
	return v.(*pdPastState)
}

// perpdexLabelsAt returns the labels a reader at clock t may show (see the top of the
// file), computing today's labels for t's snapshot when the lake's are later than t.
// Call it after perpdexCohortsEnsure.
func (q *Queries) perpdexLabelsAt(ctx context.Context, t time.Time) (pdLabelsAt, error) {
	const op = "perpdex cohort labels"
	out := pdLabelsAt{hourlyUntil: t.Add(-time.Hour).Truncate(time.Hour)}
	st := q.pdPast()
	st.setup.Do(func() {
		for _, s := range []string{perpdexCohortPastTableSQL, perpdexCohortAtMacroSQL} {
			if _, err := q.db.ExecContext(q.detach(ctx), s); err != nil {
				st.err = wrap(ctx, op, err)
				return
			}
		}
	})
	if st.err != nil {
		return out, st.err
	}
	pub, err := q.perpdexCohortsPublishedAt(ctx, st)
	if err != nil {
		return out, err
	}
	if pub.Valid && !pub.Time.After(t) {
		out.current = pub
		return out, nil
	}
	qctx, cancel := q.ctx(ctx)
	defer cancel()
	var snap sql.NullTime
	if err := q.db.QueryRowContext(qctx, perpdexCohortSnapshotAtSQL, t).Scan(&snap); err != nil {
		return out, wrap(qctx, op, err)
	}
	if !snap.Valid {
		return out, nil // before the first snapshot: no labels
	}
	snap.Time = snap.Time.UTC()
	out.current = snap
	st.mu.Lock()
	defer st.mu.Unlock()
	if i := slices.IndexFunc(st.have, snap.Time.Equal); i >= 0 {
		st.have = append(slices.Delete(st.have, i, i+1), snap.Time)
		return out, nil
	}
	if err := q.perpdexEnsure(ctx); err != nil { // the style tag reads the closed trades
		return out, err
	}
	// The label inputs are tables of the publication (cohort_flows.sql,
	// cohort_third_fill.sql): rebuilt here from the lake, under the publication's lock
	// so that neither replaces them under the other.
	mu := cohortLock(q.dir)
	mu.Lock()
	defer mu.Unlock()
	for _, s := range []string{perpdexCohortFlowsSQL, perpdexCohortThirdSQL} {
		if _, err := q.db.ExecContext(qctx, s); err != nil {
			return out, wrap(qctx, op, err)
		}
	}
	if _, err := q.db.ExecContext(qctx, "INSERT INTO perpdex_cohorts_past_mem "+perpdexCohortCurrentSQL,
		append([]any{snap.Time, snap.Time}, perpdexCohortCurrentArgs...)...); err != nil {
		return out, wrap(qctx, op, err)
	}
	st.have = append(st.have, snap.Time)
	for len(st.have) > pdPastKeep {
		if _, err := q.db.ExecContext(qctx, perpdexCohortPastPruneSQL, st.have[0]); err != nil {
			return out, wrap(qctx, op, err)
		}
		st.have = st.have[1:]
	}
	return out, nil
}

// perpdexCohortsPublishedAt returns the snapshot the lake's today's labels were computed
// from, read again only when their file changed.
func (q *Queries) perpdexCohortsPublishedAt(ctx context.Context, st *pdPastState) (sql.NullTime, error) {
	const op = "perpdex cohort labels"
	sig, err := filesSignature(q.dir, lake.PerpdexCohortsCurrent)
	if err != nil {
		return sql.NullTime{}, &StoreError{Op: op, Err: err}
	}
	st.pubMu.Lock()
	defer st.pubMu.Unlock()
	if sig == st.pubSig && sig != "" {
		return st.pub, nil
	}
	if err := q.reloadCohortViews(ctx); err != nil { // a first file published since
		return sql.NullTime{}, wrap(ctx, op, err)
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var pub sql.NullTime
	if err := q.db.QueryRowContext(ctx, perpdexCohortPublishedAtSQL).Scan(&pub); err != nil {
		return pub, wrap(ctx, op, err)
	}
	pub.Time = pub.Time.UTC()
	st.pubSig, st.pub = sig, pub
	return pub, nil
}
