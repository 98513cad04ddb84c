package query

import (
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var perpdexWalletCarrySQL = sqlfiles.MustRead("perpdex/wallet_carry.sql")

// carrySource is the sidecar entry of one perpdex_wallet_carry date: the chain of the
// per-day tables' signatures of every date up to it (chainSig) it was folded from, its
// rows (0: no file) and the fold it was written by (carryLayout).
type carrySource struct {
	Chain  string `json:"chain"`
	Rows   int64  `json:"rows"`
	Layout string `json:"layout"`
	// Trades is, in perpdex_trades_carry's sidecar, the closed trades files the date was
	// last checked against (closedTradesVersion).
	Trades string `json:"trades,omitempty"`
}

// carryLayout names the fold: a date written by another (other columns) is not current.
var carryLayout = chainSig("", "sql", perpdexWalletCarrySQL)

func carrySidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(lake.PerpdexWalletCarry.Prefix), "_sources.json")
}

// carrySources are the per-day tables the carry folds (their sidecars name the source
// file each date was computed from).
var carrySources = []*perpdexDaily{perpdexAccountsDaily, perpdexFillsDaily, perpdexFundingDaily, perpdexPositionsDaily}

// publishPerpdexCarry brings perpdex_wallet_carry up to date with the per-day tables
// it folds, just published: walking the dates in order, a date whose chain of signatures is
// unchanged is kept; from the first changed one (a new, late, corrected or removed day)
// each date is recomputed as the previous carry plus its day, one small file each. A
// date gone from every source is removed. Each file is written atomically and the
// sidecar after it, so a cancelled publication leaves a prefix of the chain current and
// the rest recomputed next time.
func (q *Queries) publishPerpdexCarry(ctx context.Context) (DailyPublication, error) {
	const op = "perpdex_wallet_carry publication"
	start := time.Now()
	pub := DailyPublication{Table: lake.PerpdexWalletCarry.Name}
	srcs := make([]map[string]string, len(carrySources))
	has := map[string]bool{}
	for i, t := range carrySources {
		m, err := readSidecar[string](filepath.Join(q.dir, filepath.FromSlash(t.sidecar)))
		if err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		srcs[i] = m
		for d := range m {
			has[d] = true
		}
	}
	done, err := readSidecar[carrySource](carrySidecar(q.dir))
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	for _, e := range done {
		if e.Layout != carryLayout {
			// Written by another fold: every date is rewritten, and the files go first, as
			// the fold reads the previous date through the table's view, which a file of
			// other columns would give the wrong ones.
			for d := range done {
				if err := removeDatePartition(q.dir, lake.PerpdexWalletCarry, d); err != nil {
					return pub, &StoreError{Op: op, Err: err}
				}
			}
			done = map[string]carrySource{}
			if err := writeSidecar(carrySidecar(q.dir), done); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
			if err := q.Reload(ctx); err != nil {
				return pub, wrap(ctx, op, err)
			}
			break
		}
	}
	dates := make([]string, 0, len(has))
	for d := range has {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	pub.Partitions = len(dates)
	for d := range done {
		if !has[d] {
			if err := removeDatePartition(q.dir, lake.PerpdexWalletCarry, d); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
			delete(done, d)
			if err := writeSidecar(carrySidecar(q.dir), done); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
			pub.Removed = append(pub.Removed, d)
		}
	}
	sort.Strings(pub.Removed)
	chain, prev := "", ""
	for _, d := range dates {
		sig := ""
		for i, t := range carrySources {
			sig += t.dst.Name + " " + srcs[i][d] + "; "
		}
		chain = chainSig(chain, d, sig)
		if t, ok := done[d]; ok && t.Chain == chain && t.Layout == carryLayout {
			if t.Rows > 0 {
				prev = d
			}
			continue
		}
		if err := q.ensureView(ctx, lake.PerpdexWalletCarry); err != nil { // its first file
			return pub, wrap(ctx, op, err)
		}
		n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexWalletCarry, []string{d}, perpdexWalletCarrySQL, prev, d)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		if n == 0 {
			if err := removeDatePartition(q.dir, lake.PerpdexWalletCarry, d); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
		} else {
			prev = d
		}
		done[d] = carrySource{Chain: chain, Rows: n, Layout: carryLayout}
		if err := writeSidecar(carrySidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, d)
	}
	if len(pub.Removed) > 0 {
		// The view of a table whose dates were removed (perhaps its last file).
		if err := q.Reload(ctx); err != nil {
			return pub, wrap(ctx, op, err)
		}
	} else if err := q.ensureView(ctx, lake.PerpdexWalletCarry); err != nil {
		return pub, wrap(ctx, op, err)
	}
	pub.Took = time.Since(start)
	return pub, nil
}

// perpdexCarryDates returns the perpdex_wallet_carry dates a board of the window
// [start, end] reads when its complete days end at hi (sql/perpdex/board.sql $10, $11
// and $13): the newest carry before the window start's day, the newest before hi's day,
// and the latter again when the window starts at the epoch (window "all": every
// complete day is that carry). All are NULL unless partials (the per-day tables and the
// carry were published just now, in one PublishPerpdexDaily): the board then reads every
// day's units.
func (q *Queries) perpdexCarryDates(start, hi time.Time, partials bool) (cs, ce, whole sql.NullTime, err error) {
	if !partials {
		return cs, ce, whole, nil
	}
	done, err := cachedSidecarOf[carrySource](q, carrySidecar(q.dir))
	if err != nil {
		return cs, ce, whole, &StoreError{Op: "perpdex board", Err: err}
	}
	newestBefore := func(t time.Time) sql.NullTime {
		limit := Date(t)
		best := ""
		for d, s := range done {
			if s.Rows > 0 && d < limit && d > best {
				best = d
			}
		}
		if best == "" {
			return sql.NullTime{}
		}
		day, _ := time.Parse(time.DateOnly, best)
		return sql.NullTime{Time: day, Valid: true}
	}
	cs, ce = newestBefore(start), newestBefore(hi)
	if !start.After(time.Unix(0, 0)) {
		whole = ce
	}
	return cs, ce, whole, nil
}
