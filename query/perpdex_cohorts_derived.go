package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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
// hours complete), and today's labels from the newest snapshot. DuckDB computes each
// partition and writes it to Parquet itself (lake.CopyQuery): moving millions of label
// rows through Go into an appender cost about a second per date partition. Requests
// never wait for a publication once the lake holds labels (perpdexCohortsEnsure).

var (
	perpdexCohortFlowsSQL = sqlfiles.MustRead("perpdex/cohort_flows.sql")
	perpdexCohortThirdSQL = sqlfiles.MustRead("perpdex/cohort_third_fill.sql")
	perpdexCohortStateSQL = sqlfiles.MustRead("perpdex/cohort_state.sql")

	// The hourly partition and today's labels: $1 and $2 (the snapshot range; for
	// today's labels both the snapshot), then the band parameters.
	perpdexCohortHourlySQL, perpdexCohortHourlyArgs   = perpdexCohortSQL("perpdex/cohort_hourly.sql")
	perpdexCohortCurrentSQL, perpdexCohortCurrentArgs = perpdexCohortSQL("perpdex/cohort_current.sql")
)

// perpdexCohortSQL builds one publication statement: the labels SQL is put in place of
// the file's labels marker and every band marker becomes a CASE of placeholders from
// $3 on (perpdex_cohort_bands.go); it returns the statement and the values bound to
// $3 onwards. A marker is replaced where it stands alone in the statement, never in a
// comment line; one missing or repeated fails at start.
func perpdexCohortSQL(name string) (string, []any) {
	b := &sqlBinder{first: 3}
	text := sqlMarker(sqlfiles.MustRead(name), "__LABELS__", sqlfiles.MustRead("perpdex/cohort_labels.sql"))
	// Replaced in the order they appear, so placeholders are numbered in text order.
	for _, m := range []struct {
		marker string
		expr   func() string
	}{
		{"__SIZE_BAND__", func() string { return perpdexSizeSQL(b) }},
		{"__PNL_BAND__", func() string { return perpdexPnlSQL(b, false) }},
		{"__PNL_TAG__", func() string { return perpdexPnlSQL(b, true) }},
		{"__STYLE__", func() string { return perpdexStyleSQL(b) }},
	} {
		if strings.Contains(text, m.marker) {
			text = sqlMarker(text, m.marker, m.expr())
		}
	}
	return text, b.args
}

// sqlMarker replaces the one occurrence of marker outside comment lines by repl.
func sqlMarker(text, marker, repl string) string {
	lines := strings.Split(text, "\n")
	n := 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "--") || !strings.Contains(l, marker) {
			continue
		}
		n += strings.Count(l, marker)
		lines[i] = strings.ReplaceAll(l, marker, repl)
	}
	if n != 1 {
		panic(fmt.Sprintf("perpdex cohort SQL: marker %s found %d times", marker, n))
	}
	return strings.Join(lines, "\n")
}

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

func cohortLock(dir string) *sync.Mutex {
	mu, _ := cohortLocks.LoadOrStore(dir, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// HoldPerpdexCohorts blocks every cohort publication on the lake at dir in this
// process until the returned function is called: for a tool that edits or removes the
// cohort files beside a running store, and for tests that need a publication to wait.
func HoldPerpdexCohorts(dir string) (release func()) {
	mu := cohortLock(dir)
	mu.Lock()
	return mu.Unlock
}

type pdCohortStateKey struct{}

// pdCohortState tracks a store's cohort publications.
type pdCohortState struct {
	first     sync.Mutex   // the synchronous first publication on a lake with none
	checked   atomic.Int64 // Unix time of the store-clock hour whose publication was checked
	published atomic.Bool  // the lake holds a cohort file (seen once, never unseen)
	running   atomic.Bool  // a background publication is under way

	mu   sync.Mutex
	idle chan struct{} // closed when no background publication runs

	viewMu sync.Mutex // one view DDL at a time: concurrent ones conflict in DuckDB's catalog
	views  [2]int8    // the views of hourly, current as last made: 0 unknown, 1 placeholder, 2 over files
}

func (q *Queries) pdCohortState() *pdCohortState {
	v, _ := q.ext.LoadOrStore(pdCohortStateKey{}, &pdCohortState{})
	return v.(*pdCohortState)
}

// cohortsPublished reports whether either cohort table has a file in the lake.
func (q *Queries) cohortsPublished(st *pdCohortState) bool {
	if st.published.Load() {
		return true
	}
	for _, t := range []*lake.Table{lake.PerpdexCohortsHourly, lake.PerpdexCohortsCurrent} {
		if files, _ := t.Files(q.dir); len(files) > 0 {
			st.published.Store(true)
			return true
		}
	}
	return false
}

// perpdexCohortsEnsure makes the labels due at the store clock's current hour get
// published, checked once per hour and store; every route that reads the cohort tables
// calls it first. It never makes a request wait once the lake holds labels: the
// request reads what the lake holds and one background publication (at most one per
// store at a time) writes what is due, each partition replaced atomically, so later
// requests see it. Only a lake with nothing published at all (an ingested lake before
// its first mdq rebuild; mdq demo publishes at its end) waits, once, for the first
// publication; concurrent requests of the store wait for that same one.
func (q *Queries) perpdexCohortsEnsure(ctx context.Context) error {
	st := q.pdCohortState()
	hour := q.Now().Truncate(time.Hour)
	if st.checked.Load() == hour.Unix() || q.asOf {
		return nil // an as_of view reads what is published; it never publishes
	}
	// Another store or process (mdq rebuild, mdq demo) may have published the first
	// files since this store made its views: an empty placeholder view would hide them.
	if err := q.reloadCohortViews(ctx); err != nil {
		q.log.Error("perpdex cohort labels: views", "err", err)
	}
	if !q.cohortsPublished(st) {
		st.first.Lock()
		defer st.first.Unlock()
		if st.checked.Load() != hour.Unix() {
			q.publishCohortsLogged(ctx, st, hour)
		}
		return nil
	}
	if st.running.CompareAndSwap(false, true) {
		done := make(chan struct{})
		st.mu.Lock()
		st.idle = done
		st.mu.Unlock()
		q.background(func(life context.Context) {
			defer close(done)
			defer st.running.Store(false)
			q.publishCohortsLogged(life, st, hour)
		})
	}
	return nil
}

// publishCohortsLogged publishes what is due and marks the hour checked. A failed
// publication (a read-only lake, a full disk) must not take the label readers down:
// they serve what the lake holds (null labels at worst), the error is logged, and the
// next hour (or serve's refresher) tries again.
func (q *Queries) publishCohortsLogged(ctx context.Context, st *pdCohortState, hour time.Time) {
	if _, err := q.RebuildPerpdexCohorts(ctx, false); err != nil {
		q.log.Error("perpdex cohort labels: publication failed", "err", err)
	}
	// Stored as is (a store whose clock was set back checks its hour once too).
	st.checked.Store(hour.Unix())
}

// markChecked records hour as checked unless a later one already is.
func (st *pdCohortState) markChecked(hour time.Time) {
	for {
		old := st.checked.Load()
		if old >= hour.Unix() || st.checked.CompareAndSwap(old, hour.Unix()) {
			return
		}
	}
}

// PerpdexCohortsIdle returns a channel that is closed once no background cohort
// publication of this store runs (already closed when none was started): a caller
// that must see what a request set off (tests, a clean shutdown) waits on it.
func (q *Queries) PerpdexCohortsIdle() <-chan struct{} {
	st := q.pdCohortState()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.idle == nil {
		st.idle = make(chan struct{})
		close(st.idle)
	}
	return st.idle
}

// PerpdexCohortsWarm publishes whatever became due since the last publication, and
// waits for it: serve's minute refresher calls it, so snapshots that land late in an
// hour are labelled within a minute. Cheap when nothing is due (one small state query
// over the newest date partitions).
func (q *Queries) PerpdexCohortsWarm(ctx context.Context) error {
	hour := q.Now().Truncate(time.Hour)
	if _, err := q.RebuildPerpdexCohorts(ctx, false); err != nil {
		return err
	}
	// The hour's publication is done: the routes need not check it again.
	q.pdCohortState().markChecked(hour)
	return nil
}

// RebuildPerpdexCohorts publishes the cohort labels due at the store clock: hourly
// labels for every complete hour (H + 1h <= now) from 2026-04-07 with an account
// snapshot taken exactly at H, and today's labels from the newest snapshot at or
// before now. Incrementally (full false) it starts at the date of the newest published
// hour and rewrites today's labels only when a newer snapshot exists; publication
// never moves backwards (a store whose clock is behind the lake leaves it alone). full
// recomputes every date and today's labels. Each partition is computed and written by
// DuckDB (lake.CopyQuery): no label row passes through Go.
func (q *Queries) RebuildPerpdexCohorts(ctx context.Context, full bool) (CohortBuild, error) {
	var out CohortBuild
	mu := cohortLock(q.dir)
	mu.Lock()
	defer mu.Unlock()
	// A publication is not a request's query: it gets its own, longer budget.
	ctx, cancel := context.WithTimeout(asBuild(q.detach(ctx)), max(10*q.timeout, BuildTimeout))
	defer cancel()
	const op = "perpdex cohorts"
	// Another store (or process) may have published since these views were made.
	if err := q.reloadCohortViews(ctx); err != nil {
		return out, err
	}
	now := q.Now()
	newest, published, current, err := q.cohortState(ctx, now)
	if err != nil {
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
	if hourlyDue {
		dates, err := q.cohortSnapshotDates(from.Truncate(24*time.Hour), last)
		if err != nil {
			return out, err
		}
		for _, d := range dates {
			lo, hi := d, d.Add(23*time.Hour)
			if lo.Before(from) {
				lo = from
			}
			if hi.After(last) {
				hi = last
			}
			// A date with no snapshot on an hour writes no partition.
			n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexCohortsHourly, []string{Date(d)},
				perpdexCohortHourlySQL, append([]any{lo, hi}, perpdexCohortHourlyArgs...)...)
			if err != nil {
				return out, wrap(ctx, op, err)
			}
			if n > 0 {
				out.HourlyDates = append(out.HourlyDates, Date(d))
				out.HourlyRows += n
				out.LastHour = hi
			}
		}
	}
	if currentDue {
		if err := q.perpdexEnsure(ctx); err != nil { // the closed-trade reconstruction
			return out, err
		}
		n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexCohortsCurrent, nil,
			perpdexCohortCurrentSQL, append([]any{snap, snap}, perpdexCohortCurrentArgs...)...)
		if err != nil {
			return out, wrap(ctx, op, err)
		}
		out.CurrentRows, out.CurrentAt, out.CurrentBuilt = n, snap, true
	}
	if len(out.HourlyDates) > 0 || out.CurrentBuilt {
		q.pdCohortState().published.Store(true)
	}
	return out, q.reloadCohortViews(ctx)
}

// cohortSnapshotDates lists the dates in [from, to] with a perpdex_accounts partition,
// from the partition directories: a date without one has no snapshot to label, and
// skipping it saves a query per date (the label history starts on 2026-04-07, long
// before a recent lake's first date).
func (q *Queries) cohortSnapshotDates(from, to time.Time) ([]time.Time, error) {
	files, err := lake.PerpdexAccounts.Files(q.dir)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, f := range files {
		d, err := time.Parse(time.DateOnly, pdPartitionDate(f))
		if err != nil || d.Before(from) || d.After(to) {
			continue
		}
		if len(out) == 0 || !out[len(out)-1].Equal(d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// cohortState reads the newest snapshot at or before now, the newest published hour
// and the snapshot of today's labels, reading only the date partitions from the newest
// published one on. When none of those holds a snapshot at or before now, the newest
// snapshot is older than that date: nothing is due when today's labels are at least as
// new as that date (publication never moves backwards), and otherwise (today's labels
// missing or older, after a manual edit) every partition is read.
func (q *Queries) cohortState(ctx context.Context, now time.Time) (newest, published, current sql.NullTime, err error) {
	var since time.Time // zero: every partition
	files, err := lake.PerpdexCohortsHourly.Files(q.dir)
	if err != nil {
		return
	}
	if len(files) > 0 {
		// Files are sorted and date=YYYY-MM-DD sorts by date.
		if d, perr := time.Parse(time.DateOnly, pdPartitionDate(files[len(files)-1])); perr == nil {
			since = d
		}
	}
	if err = q.db.QueryRowContext(ctx, perpdexCohortStateSQL, now, since).Scan(&newest, &published, &current); err != nil {
		return
	}
	if newest.Valid || since.IsZero() || (current.Valid && !current.Time.Before(since)) {
		return
	}
	err = q.db.QueryRowContext(ctx, perpdexCohortStateSQL, now, time.Time{}).Scan(&newest, &published, &current)
	return
}

// reloadCohortViews makes the view of each cohort table match the lake: over its files
// once the first exists, the empty placeholder when there is none (a glob view over no
// file fails). A view over files needs no reload for new partitions (its glob is
// expanded at query time), so the DDL runs only when a table gains its first file or
// loses its last, under a lock, never beside another DDL on the same view.
func (q *Queries) reloadCohortViews(ctx context.Context) error {
	st := q.pdCohortState()
	st.viewMu.Lock()
	defer st.viewMu.Unlock()
	for i, t := range []*lake.Table{lake.PerpdexCohortsHourly, lake.PerpdexCohortsCurrent} {
		files, err := t.Files(q.dir)
		if err != nil {
			return err
		}
		want := int8(1)
		if len(files) > 0 {
			want = 2
		}
		if st.views[i] == want {
			continue
		}
		ddl, has := viewDDL(q.dir, t)
		if err := q.execDDL(ctx, ddl); err != nil {
			return fmt.Errorf("view %s: %w", t.Name, err)
		}
		q.viewHas.Store(t.Name, has)
		st.views[i] = want
	}
	return nil
}

// PerpdexCohortStatement is one generated publication statement with its band
// parameters (bound from $3 on; $1 and $2 are the snapshot range).
type PerpdexCohortStatement struct {
	SQL  string
	Args []any
}

// PerpdexCohortStatements returns the statements that compute an hourly partition and
// today's labels, so that benchmarks can time the same SQL directly in DuckDB.
func PerpdexCohortStatements() (hourly, current PerpdexCohortStatement) {
	return PerpdexCohortStatement{perpdexCohortHourlySQL, perpdexCohortHourlyArgs},
		PerpdexCohortStatement{perpdexCohortCurrentSQL, perpdexCohortCurrentArgs}
}
