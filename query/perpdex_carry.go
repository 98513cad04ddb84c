package query

import (
	"context"
	"database/sql"
	"path/filepath"
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
// it folds, just published (a chainedFold over the dates of any of them): each date is
// the previous carry plus its day, one small file each, from the first date whose chain
// of the tables' signatures changed (a new, late, corrected or removed day). A date
// gone from every source is removed.
func (q *Queries) publishPerpdexCarry(ctx context.Context) (DayPublication, error) {
	const op = "perpdex_wallet_carry publication"
	start := time.Now()
	pub := DayPublication{Table: lake.PerpdexWalletCarry.Name}
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
	dates, chains := chainsOf(has, func(d string, _ bool) string {
		sig := ""
		for i, t := range carrySources {
			sig += t.dst.Name + " " + srcs[i][d] + "; "
		}
		return sig
	})
	pub.Partitions = len(dates)
	fold := chainedFold[carrySource]{
		op: op, table: lake.PerpdexWalletCarry, sidecar: carrySidecar(q.dir),
		current: func(e carrySource, chain string) bool { return e.Chain == chain && e.Layout == carryLayout },
		foreign: func(e carrySource) bool { return e.Layout != carryLayout },
		rows:    func(e carrySource) int64 { return e.Rows },
		entry: func(_, chain string, n int64) carrySource {
			return carrySource{Chain: chain, Rows: n, Layout: carryLayout}
		},
		start: foldQuery(q, lake.PerpdexWalletCarry, perpdexWalletCarrySQL),
	}
	err = fold.publish(ctx, q, dates, chains, done, &pub)
	pub.Took = time.Since(start)
	return pub, err
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
