package query

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// The cohort labels are derived by mdq from the venue's raw tables: size from the
// account value of an hourly snapshot, pnl from the account value against the ledger's
// capital flows (and the fill count), style from the closed trades. They are published
// to the lake as two Derived tables (lake/tables_perpdex_derived.go): the hourly
// point-in-time labels, one date partition at a time and only forward (hours already
// published are not recomputed, except the newest date's partition, rewritten as its
// hours complete), and today's labels from the newest snapshot.

var (
	perpdexCohortFlowsSQL = sqlfiles.MustRead("perpdex/cohort_flows.sql")
	perpdexCohortThirdSQL = sqlfiles.MustRead("perpdex/cohort_third_fill.sql")
	perpdexCohortLabelSQL = sqlfiles.MustRead("perpdex/cohort_labels.sql")
	perpdexCohortStyleSQL = sqlfiles.MustRead("perpdex/cohort_style.sql")
	perpdexCohortStateSQL = sqlfiles.MustRead("perpdex/cohort_state.sql")
)

// CohortBuild reports what one publication did.
type CohortBuild struct {
	HourlyDates  []string  // date partitions of perpdex_cohorts_hourly (re)written
	HourlyRows   int64     // rows in them
	LastHour     time.Time // newest published label hour (zero when none)
	CurrentRows  int64     // rows of perpdex_cohorts_current when it was rewritten
	CurrentAt    time.Time // the snapshot today's labels are computed from
	CurrentBuilt bool
}

// cohortLocks serialises publications per lake directory in this process: two stores
// over one lake (tests, a rebuild beside serve) never write the same files at once,
// and the second sees what the first published.
var cohortLocks sync.Map // dir -> *sync.Mutex

type pdCohortStateKey struct{}

// pdCohortState remembers the store-clock hour whose publication this store checked.
type pdCohortState struct {
	mu      sync.Mutex
	checked time.Time
}

func (q *Queries) pdCohortState() *pdCohortState {
	v, _ := q.ext.LoadOrStore(pdCohortStateKey{}, &pdCohortState{})
	return v.(*pdCohortState)
}

// perpdexCohortsEnsure publishes the labels due at the store clock's current hour, once
// per hour and store: every route that reads the cohort tables calls it first, so a
// fresh lake (mdq demo, ingest) is labelled on first use. Concurrent callers wait for
// one publication.
func (q *Queries) perpdexCohortsEnsure(ctx context.Context) error {
	st := q.pdCohortState()
	hour := q.Now().Truncate(time.Hour)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.checked.Equal(hour) {
		return nil
	}
	// A failed publication (a read-only lake, a full disk) must not take the label
	// readers down: they serve what the lake holds (null labels at worst), the error
	// is logged, and the next hour (or serve's refresher) tries again.
	if _, err := q.RebuildPerpdexCohorts(ctx, false); err != nil {
		q.log.Error("perpdex cohort labels: publication failed", "err", err)
	}
	st.checked = hour
	return nil
}

// PerpdexCohortsWarm publishes whatever became due since the last publication: serve's
// minute refresher calls it, so snapshots that land late in an hour are labelled
// within a minute. Cheap when nothing is due (one small state query).
func (q *Queries) PerpdexCohortsWarm(ctx context.Context) error {
	hour := q.Now().Truncate(time.Hour)
	if _, err := q.RebuildPerpdexCohorts(ctx, false); err != nil {
		return err
	}
	// The hour's publication is done: the routes need not check it again.
	st := q.pdCohortState()
	st.mu.Lock()
	if st.checked.Before(hour) {
		st.checked = hour
	}
	st.mu.Unlock()
	return nil
}

// RebuildPerpdexCohorts publishes the cohort labels due at the store clock: hourly
// labels for every complete hour (H + 1h <= now) from 2026-04-07 with an account
// snapshot taken exactly at H, and today's labels from the newest snapshot at or
// before now. Incrementally (full false) it starts at the date of the newest published
// hour and rewrites today's labels only when a newer snapshot exists; publication
// never moves backwards (a store whose clock is behind the lake leaves it alone). full
// recomputes every date and today's labels.
func (q *Queries) RebuildPerpdexCohorts(ctx context.Context, full bool) (CohortBuild, error) {
	var out CohortBuild
	mu, _ := cohortLocks.LoadOrStore(q.dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	// A publication is not a request's query: it gets its own, longer budget.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*q.timeout)
	defer cancel()
	const op = "perpdex cohorts"
	// Another store (or process) may have published since these views were made.
	if err := q.reloadCohortViews(ctx); err != nil {
		return out, err
	}
	now := q.Now()
	var newest, published, current sql.NullTime
	if err := q.db.QueryRowContext(ctx, perpdexCohortStateSQL, now).Scan(&newest, &published, &current); err != nil {
		return out, wrap(ctx, op, err)
	}
	if published.Valid {
		out.LastHour = published.Time.UTC()
	}
	if !newest.Valid {
		return out, nil // no snapshot yet: nothing to label
	}
	snap := newest.Time.UTC()
	// Hourly: complete hours only, from 2026-04-07, up to the newest snapshot.
	last := now.Add(-time.Hour).Truncate(time.Hour)
	if snap.Before(last) {
		last = snap.Truncate(time.Hour)
	}
	from := PerpdexLabelStart
	if !full && published.Valid {
		from = published.Time.UTC().Truncate(24 * time.Hour)
	}
	hourlyDue := !last.Before(PerpdexLabelStart) && (full || !published.Valid || published.Time.Before(last))
	currentDue := full || !current.Valid || current.Time.Before(snap)
	if !hourlyDue && !currentDue {
		return out, nil
	}
	for _, s := range []string{perpdexCohortFlowsSQL, perpdexCohortThirdSQL} {
		if _, err := q.db.ExecContext(ctx, s); err != nil {
			return out, wrap(ctx, op, err)
		}
	}
	w, err := lake.NewWriter(q.dir)
	if err != nil {
		return out, err
	}
	defer w.Close()
	if hourlyDue {
		for d := from.Truncate(24 * time.Hour); !d.After(last); d = d.Add(24 * time.Hour) {
			lo, hi := d, d.Add(23*time.Hour)
			if lo.Before(from) {
				lo = from
			}
			if hi.After(last) {
				hi = last
			}
			n, err := q.writeCohortHours(ctx, w, d, lo, hi)
			if err != nil {
				return out, err
			}
			if n > 0 {
				out.HourlyDates = append(out.HourlyDates, Date(d))
				out.HourlyRows += n
				out.LastHour = hi
			}
		}
	}
	if currentDue {
		n, err := q.writeCohortCurrent(ctx, w, snap)
		if err != nil {
			return out, err
		}
		out.CurrentRows, out.CurrentAt, out.CurrentBuilt = n, snap, true
	}
	return out, q.reloadCohortViews(ctx)
}

// reloadCohortViews recreates the views of the two cohort tables (an empty placeholder
// becomes a real view once the first file exists).
func (q *Queries) reloadCohortViews(ctx context.Context) error {
	for _, t := range []*lake.Table{lake.PerpdexCohortsHourly, lake.PerpdexCohortsCurrent} {
		if _, err := q.db.ExecContext(ctx, viewDDL(q.dir, t)); err != nil {
			return fmt.Errorf("view %s: %w", t.Name, err)
		}
	}
	return nil
}

// cohortInput is one account snapshot with what its labels need.
type cohortInput struct {
	ts             time.Time
	wallet         string
	accountValue   float64
	capital, netIn int64
	threeFills     bool
}

// cohortInputs reads the label inputs of the snapshots in [lo, hi].
func (q *Queries) cohortInputs(ctx context.Context, lo, hi time.Time, each func(cohortInput) error) error {
	const op = "perpdex cohort labels"
	rows, err := q.db.QueryContext(ctx, perpdexCohortLabelSQL, lo, hi)
	if err != nil {
		return wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var in cohortInput
		if err := rows.Scan(&in.ts, &in.wallet, &in.accountValue, &in.capital, &in.netIn, &in.threeFills); err != nil {
			return wrap(ctx, op, err)
		}
		in.ts = in.ts.UTC()
		if err := each(in); err != nil {
			return err
		}
	}
	return wrap(ctx, op, rows.Err())
}

// writeCohortHours writes date d's partition with the labels of the snapshots taken
// exactly on an hour in [lo, hi]. A date with no such snapshot gets no partition.
func (q *Queries) writeCohortHours(ctx context.Context, w *lake.Writer, d, lo, hi time.Time) (int64, error) {
	var rows [][]any
	err := q.cohortInputs(ctx, lo, hi, func(in cohortInput) error {
		if !in.ts.Truncate(time.Hour).Equal(in.ts) {
			return nil // a snapshot between hours labels no hour
		}
		rows = append(rows, []any{in.ts, in.wallet, PerpdexSizeCohort(in.accountValue).Slug,
			PerpdexPnlCohort(in.threeFills, in.capital, in.netIn, in.accountValue).Slug})
		return nil
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return w.Write(ctx, lake.PerpdexCohortsHourly, []string{Date(d)}, func(add lake.AppendFunc) error {
		for _, r := range rows {
			if err := add(r...); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeCohortCurrent rewrites today's labels: every wallet of the snapshot at snap,
// with its style tag from the trades it completed before snap.
func (q *Queries) writeCohortCurrent(ctx context.Context, w *lake.Writer, snap time.Time) (int64, error) {
	if err := q.perpdexEnsure(ctx); err != nil { // the closed-trade reconstruction
		return 0, err
	}
	style := map[string]string{}
	rows, err := q.db.QueryContext(ctx, perpdexCohortStyleSQL, snap)
	if err != nil {
		return 0, wrap(ctx, "perpdex cohort style", err)
	}
	for rows.Next() {
		var wallet string
		var n, held int64
		if err := rows.Scan(&wallet, &n, &held); err != nil {
			rows.Close()
			return 0, wrap(ctx, "perpdex cohort style", err)
		}
		style[wallet] = PerpdexStyleCohort(n, held)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, wrap(ctx, "perpdex cohort style", err)
	}
	var cur [][]any
	err = q.cohortInputs(ctx, snap, snap, func(in cohortInput) error {
		pb := PerpdexPnlCohort(in.threeFills, in.capital, in.netIn, in.accountValue)
		var st any
		if s := style[in.wallet]; s != "" {
			st = s
		}
		cur = append(cur, []any{in.wallet, PerpdexSizeCohort(in.accountValue).Slug, pb.Slug, pb.Tag, st, snap})
		return nil
	})
	if err != nil {
		return 0, err
	}
	return w.Write(ctx, lake.PerpdexCohortsCurrent, nil, func(add lake.AppendFunc) error {
		for _, r := range cur {
			if err := add(r...); err != nil {
				return err
			}
		}
		return nil
	})
}
