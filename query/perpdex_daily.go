package query

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// perpdexDaily is one per-day partial-sum table of the perpetuals boards: its source
// table (date partitioned), the query of one date, and its sidecar: for each source
// date ("2006-01-02"), the signature (size and modification time) of the source file
// its partial sums were computed from. A date whose source signature differs (a new
// day, a late day, a corrected file) is recomputed, one whose source is gone is
// removed, the rest are left alone: publishing one more day costs that day.
type perpdexDaily struct {
	src, dst *lake.Table
	query    string
	sidecar  string
}

var (
	perpdexFillsDaily     = &perpdexDaily{lake.PerpdexFills, lake.PerpdexFillsDaily, sqlfiles.MustRead("perpdex/fills_daily.sql"), "perpdex/fills_daily/_sources.json"}
	perpdexAccountsDaily  = &perpdexDaily{lake.PerpdexAccounts, lake.PerpdexAccountsDaily, sqlfiles.MustRead("perpdex/accounts_daily.sql"), "perpdex/accounts_daily/_sources.json"}
	perpdexPositionsDaily = &perpdexDaily{lake.PerpdexPositions, lake.PerpdexPositionsDaily, sqlfiles.MustRead("perpdex/positions_daily.sql"), "perpdex/positions_daily/_sources.json"}
	perpdexFundingDaily   = &perpdexDaily{lake.PerpdexFunding, lake.PerpdexFundingDaily, sqlfiles.MustRead("perpdex/funding_daily.sql"), "perpdex/funding_daily/_sources.json"}
	perpdexDailies        = []*perpdexDaily{
		perpdexFillsDaily,
		perpdexPositionsDaily,
		perpdexFundingDaily,
		{lake.PerpdexFills, lake.PerpdexBuildersDaily, sqlfiles.MustRead("perpdex/builders_daily.sql"), "perpdex/builders_daily/_sources.json"},
		perpdexAccountsDaily,
		{lake.PerpdexPositions, lake.PerpdexPositionsSnaps, sqlfiles.MustRead("perpdex/positions_snaps.sql"), "perpdex/positions_snaps/_sources.json"},
	}
)

var perpdexDailyLocks sync.Map // lake dir -> *sync.Mutex

// PublishPerpdexDaily brings the perpetuals boards' per-day partial sums
// (perpdex_fills_daily, perpdex_positions_daily, perpdex_funding_daily and the rest of
// perpdexDailies) up to date with their source files, recomputing only the dates whose
// file changed, then the carry folded from them (perpdex_wallet_carry, the last entry of
// the result but one: from the first changed date on), and the trades' carry
// (perpdex_trades_carry, the last, when the closed trades are current). Each file is
// written atomically and the sidecar updated after each date, so a cancelled
// publication leaves every file as it was or complete, and the sidecar never names a
// file not written.
func (q *Queries) PublishPerpdexDaily(ctx context.Context) ([]DayPublication, error) {
	mu, _ := perpdexDailyLocks.LoadOrStore(q.dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	var out []DayPublication
	reloaded := false
	for _, d := range perpdexDailies {
		p, err := q.publishDaily(ctx, d, &reloaded)
		out = append(out, p)
		if err != nil {
			return out, err
		}
	}
	if reloaded {
		// The views of the partial sums (their first files, or a removed date): once
		// for the three tables, as the views' reload is a fixed cost per lake.
		if err := q.Reload(ctx); err != nil {
			return out, wrap(ctx, "perpdex daily publication", err)
		}
	}
	// The carry across days, folded from the per-day tables just published, then the
	// trades' carry, folded from the closed trades.
	p, err := q.publishPerpdexCarry(ctx)
	out = append(out, p)
	if err != nil {
		return out, err
	}
	p, err = q.publishPerpdexTradesCarry(ctx)
	out = append(out, p)
	return out, err
}

// publishDaily brings one partial-sum table up to date; reloaded says whether the
// views were reloaded for this publication already (once before the first write).
func (q *Queries) publishDaily(ctx context.Context, t *perpdexDaily, reloaded *bool) (DayPublication, error) {
	op := t.dst.Name + " publication"
	start := time.Now()
	src, err := datePartitions(q.dir, t.src)
	if err != nil {
		return DayPublication{Table: t.dst.Name}, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[string](filepath.Join(q.dir, filepath.FromSlash(t.sidecar)))
	if err != nil {
		return DayPublication{Table: t.dst.Name}, &StoreError{Op: op, Err: err}
	}
	pub := DayPublication{Table: t.dst.Name, Partitions: len(src)}
	// The file layout is part of what a date was written as: a change of the table's
	// row groups rewrites every date once, so no file keeps the old layout.
	layout := ""
	if t.dst.RowGroup != 0 {
		layout = fmt.Sprintf("|row groups %d", t.dst.RowGroup)
	}
	var todo, gone []string
	for d, f := range src {
		if done[d] != f.sig+layout {
			todo = append(todo, d)
		}
	}
	for d := range done {
		if _, ok := src[d]; !ok {
			gone = append(gone, d)
		}
	}
	sort.Strings(todo)
	sort.Strings(gone)
	if len(todo) == 0 && len(gone) == 0 {
		pub.Took = time.Since(start)
		return pub, nil
	}
	// The source views must see the dates that appeared since Open.
	if !*reloaded {
		if err := q.Reload(ctx); err != nil {
			return pub, wrap(ctx, op, err)
		}
		*reloaded = true
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return pub, wrap(ctx, op, err)
	}
	defer conn.Close()
	write := func() error { return writeSidecar(filepath.Join(q.dir, filepath.FromSlash(t.sidecar)), done) }
	for _, d := range gone {
		if err := removeDatePartition(q.dir, t.dst, d); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		delete(done, d)
		if err := write(); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Removed = append(pub.Removed, d)
	}
	for _, d := range todo {
		n, err := lake.CopyQuery(ctx, conn, q.dir, t.dst, []string{d}, t.query, d)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		if n == 0 { // an empty source file: no partial sums
			if err := removeDatePartition(q.dir, t.dst, d); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
		}
		done[d] = src[d].sig + layout
		if err := write(); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, d)
	}
	pub.Took = time.Since(start)
	return pub, nil
}

// perpdexBoardDays returns the complete days of the window [start, end) as the first
// day's midnight and the end's (sql/perpdex/board.sql $8, $9): days from the partial
// sums. partials false (they could not be published) gives the epoch for both: every
// fill is read raw.
func perpdexBoardDays(start, end time.Time, partials bool) (time.Time, time.Time) {
	if !partials {
		e := time.Unix(0, 0).UTC()
		return e, e
	}
	lo := start.UTC().Truncate(24 * time.Hour)
	if lo.Before(start) {
		lo = lo.Add(24 * time.Hour)
	}
	hi := end.UTC().Truncate(24 * time.Hour)
	if lo.After(hi) { // a window within one day: every fill raw
		lo = hi
	}
	return lo, hi
}
