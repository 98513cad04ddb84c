package query

import (
	"context"
	"sync"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexBuildTradesSQL = sqlfiles.MustRead("perpdex/closed_trades.sql")

// PerpdexDerivedTTL is how long the derived trade table is served before it is rebuilt
// from the fills (the lake's fills change at most hourly).
const PerpdexDerivedTTL = time.Hour

// perpdexDerived tracks when a store last rebuilt its derived perpdex tables. The
// table itself lives in the store's in-memory DuckDB, shared by every connection.
type perpdexDerived struct {
	mu    sync.Mutex
	built time.Time
}

var perpdexDerivedByStore sync.Map // *Queries -> *perpdexDerived

// PerpdexRefreshDerived rebuilds the derived trade table now.
func (q *Queries) PerpdexRefreshDerived(ctx context.Context) error {
	d := q.perpdexDerived()
	d.mu.Lock()
	defer d.mu.Unlock()
	return q.perpdexBuild(ctx, d)
}

func (q *Queries) perpdexDerived() *perpdexDerived {
	v, _ := perpdexDerivedByStore.LoadOrStore(q, &perpdexDerived{})
	return v.(*perpdexDerived)
}

func (q *Queries) perpdexBuild(ctx context.Context, d *perpdexDerived) error {
	// The rebuild is not a request's query: it gets its own, longer budget.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*q.timeout)
	defer cancel()
	if _, err := q.db.ExecContext(ctx, perpdexBuildTradesSQL); err != nil {
		return wrap(ctx, "perpdex derived trades", err)
	}
	// The TTL is a cache age, not window arithmetic: it runs on the wall clock.
	d.built = time.Now()
	return nil
}

// perpdexEnsure builds the derived tables on first use and again once they are older
// than PerpdexDerivedTTL. Concurrent callers wait for one build.
func (q *Queries) perpdexEnsure(ctx context.Context) error {
	d := q.perpdexDerived()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.built.IsZero() && time.Since(d.built) < PerpdexDerivedTTL {
		return nil
	}
	return q.perpdexBuild(ctx, d)
}
