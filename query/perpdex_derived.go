package query

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sqlfiles "mdq/sql"
)

var (
	perpdexBuildTradesSQL = sqlfiles.MustRead("perpdex/closed_trades.sql")
	perpdexTradeIndexSQL  = sqlfiles.MustRead("perpdex/closed_trades_index.sql")
)

// PerpdexDerivedTTL is how long the derived trade table is served before it is rebuilt
// from the fills (the lake's fills change at most hourly).
const PerpdexDerivedTTL = time.Hour

// perpdexDerived tracks a store's derived perpdex trades: the table lives in the store's
// in-memory DuckDB (shared by every connection, read by the board and wallet SQL), and
// the same rows are held in Go by wallet (pdTradeIndex) so that the per-wallet routes
// read only that wallet's trades instead of scanning every wallet's.
type perpdexDerived struct {
	mu       sync.Mutex                   // one build at a time
	cur      atomic.Pointer[pdTradeIndex] // the latest build; read without the lock
	building atomic.Bool                  // a background rebuild is running
}

type pdDerivedKey struct{}

// PerpdexRefreshDerived rebuilds the derived trade table and its per-wallet index now.
func (q *Queries) PerpdexRefreshDerived(ctx context.Context) error {
	d := q.perpdexDerived()
	d.mu.Lock()
	defer d.mu.Unlock()
	return q.perpdexBuild(ctx, d)
}

func (q *Queries) perpdexDerived() *perpdexDerived {
	v, _ := q.ext.LoadOrStore(pdDerivedKey{}, &perpdexDerived{})
	return v.(*perpdexDerived)
}

func (q *Queries) perpdexBuild(ctx context.Context, d *perpdexDerived) error {
	// The rebuild is not a request's query: it gets its own, longer budget.
	ctx, cancel := context.WithTimeout(q.detach(ctx), 10*q.timeout)
	defer cancel()
	if _, err := q.db.ExecContext(ctx, perpdexBuildTradesSQL); err != nil {
		return wrap(ctx, "perpdex derived trades", err)
	}
	x, err := q.perpdexLoadTradeIndex(ctx)
	if err != nil {
		return wrap(ctx, "perpdex trade index", err)
	}
	// The TTL is a cache age, not window arithmetic: it runs on the wall clock.
	x.built = time.Now()
	d.cur.Store(x)
	return nil
}

// fresh returns the current build when it is younger than PerpdexDerivedTTL.
func (d *perpdexDerived) fresh() *pdTradeIndex {
	if x := d.cur.Load(); x != nil && time.Since(x.built) < PerpdexDerivedTTL {
		return x
	}
	return nil
}

// perpdexEnsure builds the derived tables on first use and again once they are older
// than PerpdexDerivedTTL. Concurrent callers wait for one build. The hourly board build
// uses it (its SQL reads the table); a fresh table costs no lock.
func (q *Queries) perpdexEnsure(ctx context.Context) error {
	_, err := q.perpdexEnsureIndex(ctx)
	return err
}

func (q *Queries) perpdexEnsureIndex(ctx context.Context) (*pdTradeIndex, error) {
	d := q.perpdexDerived()
	if x := d.fresh(); x != nil {
		return x, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if x := d.fresh(); x != nil {
		return x, nil
	}
	if err := q.perpdexBuild(ctx, d); err != nil {
		return nil, err
	}
	return d.cur.Load(), nil
}

// perpdexTradeIndex returns the per-wallet trades for a request. Only the first request
// of a store waits for a build; once the index is older than PerpdexDerivedTTL, one
// rebuild starts in the background and requests keep the previous build until it is
// swapped in, so a rebuild (seconds on a large lake) never lands on a request.
func (q *Queries) perpdexTradeIndex(ctx context.Context) (*pdTradeIndex, error) {
	d := q.perpdexDerived()
	x := d.cur.Load()
	if x == nil {
		return q.perpdexEnsureIndex(ctx)
	}
	if time.Since(x.built) >= PerpdexDerivedTTL && d.building.CompareAndSwap(false, true) {
		q.background(func(life context.Context) {
			defer d.building.Store(false)
			if _, err := q.perpdexEnsureIndex(life); err != nil {
				q.log.Error("perpdex derived trades rebuild", "err", err)
			}
		})
	}
	return x, nil
}

// pdTradeRow is one row of perpdex_closed_trades (timestamps in epoch microseconds,
// as DuckDB stores them).
type pdTradeRow struct {
	asset             string
	openUS, closeUS   int64
	tradeNo           int64
	entry, exit       float64 // meaningful only when hasEntry / hasExit
	maxTok, maxUsd    float64
	vol, pnl, fee     float64
	fills             int64
	long, complete    bool
	hasEntry, hasExit bool
}

// pdTradeCmp orders a wallet's trades as the routes page them: close time, asset,
// trade number.
func pdTradeCmp(a, b *pdTradeRow) int {
	if c := cmp.Compare(a.closeUS, b.closeUS); c != 0 {
		return c
	}
	if c := cmp.Compare(a.asset, b.asset); c != 0 {
		return c
	}
	return cmp.Compare(a.tradeNo, b.tradeNo)
}

// pdTradeIndex holds every wallet's trades, wallet by wallet, each wallet's in
// pdTradeCmp order: a request finds its wallet's span in the map and touches nothing
// else.
type pdTradeIndex struct {
	built  time.Time
	trades []pdTradeRow
	spans  map[string][2]int
}

// wallet returns the wallet's trades in pdTradeCmp order (nil when it has none).
func (x *pdTradeIndex) wallet(w string) []pdTradeRow {
	s, ok := x.spans[w]
	if !ok {
		return nil
	}
	return x.trades[s[0]:s[1]:s[1]]
}

// perpdexLoadTradeIndex reads the derived table once into memory.
func (q *Queries) perpdexLoadTradeIndex(ctx context.Context) (*pdTradeIndex, error) {
	var n int
	if err := q.db.QueryRowContext(ctx, "SELECT count(*) FROM perpdex_closed_trades").Scan(&n); err != nil {
		return nil, err
	}
	x := &pdTradeIndex{trades: make([]pdTradeRow, 0, n), spans: map[string][2]int{}}
	rows, err := q.db.QueryContext(ctx, perpdexTradeIndexSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	assets := map[string]string{} // one string per asset name, shared by its rows
	var wallet, asset string
	start := 0
	for rows.Next() {
		var (
			t           pdTradeRow
			w           string
			entry, exit sql.NullFloat64
		)
		if err := rows.Scan(&w, &asset, &t.tradeNo, &t.long, &t.openUS, &t.closeUS, &entry, &exit,
			&t.maxTok, &t.maxUsd, &t.vol, &t.pnl, &t.fee, &t.fills, &t.complete); err != nil {
			return nil, err
		}
		if w != wallet {
			x.closeSpan(wallet, start)
			wallet, start = w, len(x.trades)
		}
		if a, ok := assets[asset]; ok {
			t.asset = a
		} else {
			assets[asset], t.asset = asset, asset
		}
		t.entry, t.hasEntry = entry.Float64, entry.Valid
		t.exit, t.hasExit = exit.Float64, exit.Valid
		x.trades = append(x.trades, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	x.closeSpan(wallet, start)
	return x, nil
}

// closeSpan records the trades from start to the end as wallet's, in pdTradeCmp order
// (sorted here so the routes' binary searches follow Go's string order whatever the
// database's collation).
func (x *pdTradeIndex) closeSpan(wallet string, start int) {
	if len(x.trades) == start {
		return
	}
	s := x.trades[start:]
	slices.SortFunc(s, func(a, b pdTradeRow) int { return pdTradeCmp(&a, &b) })
	x.spans[wallet] = [2]int{start, len(x.trades)}
}
