package query

import (
	"context"
	"sort"

	"mdq/lake"
)

// A chained fold is a derived table whose date d is the previous date's file plus d's
// own source: lifetime sums and state carried across days (predmkt_market_totals,
// perpdex_wallet_carry, perpdex_trades_carry). Each date's sidecar entry records the
// chain of its sources' signatures of every date up to it (chainSig), so a date is
// current exactly when nothing it was folded from changed; a new, late, corrected or
// removed day recomputes its date and every later one, and nothing before it.
type chainedFold[E any] struct {
	op      string
	table   *lake.Table
	sidecar string
	// current says whether a listed entry is date's fold of the sources whose chain is
	// chain, by this code.
	current func(e E, chain string) bool
	// foreign says whether an entry was written by another fold (other columns): every
	// date is then rewritten, and the files go first, as a fold reads the previous date
	// through the table's view, which a file of other columns would give the wrong ones.
	// nil: the table has no other fold.
	foreign func(e E) bool
	// rows is the number of rows an entry's file holds (0: no file).
	rows func(e E) int64
	// entry is the sidecar entry of date, just folded into rows rows.
	entry func(date, chain string, rows int64) E
	// kept, when not nil, updates the entry of a date found current (and the sidecar
	// is written with them), e.g. with what it was last checked against.
	kept func(date string, e E) E
	// reload reloads the views before the first fold: the sources were published just
	// now, and the table's own view must match the files (some perhaps removed).
	reload bool
	// start prepares the folds from first on and returns the fold of one date from the
	// newest earlier date with rows (prev, "" for none) and what ends them.
	start func(ctx context.Context, first string) (fold func(ctx context.Context, prev, date string) (int64, error), end func(), err error)
}

// publish brings the table up to date with dates (sorted) and their chains, done
// being the sidecar's entries as read: a date gone from dates is removed (listed in
// pub.Removed); walking the dates in order, the first whose entry is missing or not
// current and every later one are folded, one small file each. Each file is written
// atomically and the sidecar after it, so a cancelled publication leaves a prefix of
// the chain current and the rest is folded next time; a fold of no row leaves no file.
func (f chainedFold[E]) publish(ctx context.Context, q *Queries, dates []string, chains map[string]string, done map[string]E, pub *DayPublication) error {
	other := false
	if f.foreign != nil {
		for _, e := range done {
			other = other || f.foreign(e)
		}
	}
	removed := false
	for d := range done {
		if _, ok := chains[d]; ok && !other {
			continue
		}
		// The file goes before its entry: a crash between the two leaves an entry of a
		// date gone from its source (or of a foreign fold), which the next publication
		// removes again, never one it would take as current.
		if err := removeDatePartition(q.dir, f.table, d); err != nil {
			return &StoreError{Op: f.op, Err: err}
		}
		delete(done, d)
		if err := writeSidecar(f.sidecar, done); err != nil {
			return &StoreError{Op: f.op, Err: err}
		}
		if _, ok := chains[d]; !ok {
			pub.Removed = append(pub.Removed, d)
		}
		removed = true
	}
	sort.Strings(pub.Removed)
	first, prev := len(dates), ""
	for i, d := range dates {
		e, ok := done[d]
		if !ok || !f.current(e, chains[d]) {
			first = i
			break
		}
		if f.rows(e) > 0 {
			prev = d
		}
	}
	if f.kept != nil {
		for _, d := range dates[:first] {
			done[d] = f.kept(d, done[d])
		}
		if err := writeSidecar(f.sidecar, done); err != nil {
			return &StoreError{Op: f.op, Err: err}
		}
	}
	if first == len(dates) {
		if removed {
			// The view of a table whose dates were removed (perhaps its last file).
			return wrap(ctx, f.op, q.Reload(ctx))
		}
		return nil
	}
	if removed || f.reload {
		if err := q.Reload(ctx); err != nil {
			return wrap(ctx, f.op, err)
		}
	}
	fold, end, err := f.start(ctx, dates[first])
	if err != nil {
		return wrap(ctx, f.op, err)
	}
	defer end()
	for _, d := range dates[first:] {
		// The fold reads the previous date through the table's view, which must see the
		// file just written (or the table's first).
		if err := q.ensureView(ctx, f.table); err != nil {
			return wrap(ctx, f.op, err)
		}
		n, err := fold(ctx, prev, d)
		if err != nil {
			return wrap(ctx, f.op, err)
		}
		if n == 0 {
			// No row: the copy kept any old file, which no longer holds.
			if err := removeDatePartition(q.dir, f.table, d); err != nil {
				return &StoreError{Op: f.op, Err: err}
			}
		} else {
			prev = d
		}
		done[d] = f.entry(d, chains[d], n)
		if err := writeSidecar(f.sidecar, done); err != nil {
			return &StoreError{Op: f.op, Err: err}
		}
		pub.Written = append(pub.Written, d)
	}
	return wrap(ctx, f.op, q.ensureView(ctx, f.table))
}

// foldQuery is a chainedFold's start for a fold that is one query of ($1 prev, $2
// date) on the store's pool.
func foldQuery(q *Queries, t *lake.Table, query string) func(context.Context, string) (func(context.Context, string, string) (int64, error), func(), error) {
	return func(context.Context, string) (func(context.Context, string, string) (int64, error), func(), error) {
		return func(ctx context.Context, prev, date string) (int64, error) {
			return lake.CopyQuery(ctx, q.db, q.dir, t, []string{date}, query, prev, date)
		}, func() {}, nil
	}
}
