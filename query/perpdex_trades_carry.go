package query

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexTradesDaysSQL   = sqlfiles.MustRead("perpdex/trades_days.sql")
	perpdexTradesCarrySQL  = sqlfiles.MustRead("perpdex/trades_carry.sql")
	perpdexTradesDigestSQL = sqlfiles.MustRead("perpdex/trades_digest.sql")
)

// tradesCarryLayout names the fold: a date written by another is not current.
var tradesCarryLayout = chainSig("", "sql", perpdexTradesDaysSQL+perpdexTradesCarrySQL+perpdexTradesDigestSQL)

// tradesCarrySource is the sidecar entry of one perpdex_trades_carry date: the chain
// of the closed trades' digests of every close date up to it (tradesCarryChains) it was
// folded from, its rows, the fold it was written by (tradesCarryLayout) and the closed
// trades files it was last checked against (closedTradesVersion): a board reads the
// carry only when every date was checked against the files it reads itself.
type tradesCarrySource struct {
	Chain  string `json:"chain"`
	Rows   int64  `json:"rows"`
	Layout string `json:"layout"`
	Trades string `json:"trades,omitempty"`
}

func tradesCarrySidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(lake.PerpdexTradesCarry.Prefix), "_sources.json")
}

// closedTradesVersion names the published perpdex_closed_trades files (paths, sizes and
// modification times): a trades carry entry recorded with it was checked against them.
func (q *Queries) closedTradesVersion() (string, error) {
	sig, err := filesSignature(q.dir, lake.PerpdexClosedTrades)
	if err != nil || sig == "" {
		return "", err
	}
	return chainSig("", "closed trades", sig), nil
}

// tradesCarryChains returns the close dates of the complete closed trades in order
// and, for each, the chain of the trades' digests of every close date up to it
// (sql/perpdex/trades_digest.sql): what a perpdex_trades_carry date was folded from.
func (q *Queries) tradesCarryChains(ctx context.Context) (dates []string, chains map[string]string, err error) {
	rows, err := q.db.QueryContext(ctx, perpdexTradesDigestSQL)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	digests := map[string]string{}
	for rows.Next() {
		var day, digest string
		var n int64
		if err := rows.Scan(&day, &n, &digest); err != nil {
			return nil, nil, err
		}
		digests[day] = fmt.Sprintf("%d|%s", n, digest) // one row per close date
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	dates, chains = chainsOf(digests, func(_, digest string) string { return digest })
	return dates, chains, nil
}

// publishPerpdexTradesCarry brings perpdex_trades_carry up to date with the published
// closed trades, when they are current for the lake's fills (otherwise it leaves the
// carry as it is, and a board reads none of it: see perpdexTradesCarryDate; the closed
// trades' own publication comes first in every publishing path). When the closed
// trades files changed since the carry was last checked, their digest per close date
// decides (a chainedFold over the close dates): from the first date whose chain of
// digests changed, each date is the previous carry plus its day's trades, one small
// file each, the days' pieces computed once for all of them
// (sql/perpdex/trades_days.sql).
func (q *Queries) publishPerpdexTradesCarry(ctx context.Context) (DayPublication, error) {
	const op = "perpdex_trades_carry publication"
	start := time.Now()
	pub := DayPublication{Table: lake.PerpdexTradesCarry.Name}
	_, _, _, cur, err := q.closedTradesCurrent()
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	if !cur {
		pub.Took = time.Since(start)
		return pub, nil
	}
	version, err := q.closedTradesVersion()
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[tradesCarrySource](tradesCarrySidecar(q.dir))
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	checked := len(done) > 0
	for _, e := range done {
		checked = checked && e.Trades == version && e.Layout == tradesCarryLayout
	}
	if checked {
		pub.Partitions = len(done)
		pub.Took = time.Since(start)
		return pub, nil
	}
	if err := q.ensureView(ctx, lake.PerpdexClosedTrades); err != nil {
		return pub, wrap(ctx, op, err)
	}
	dates, chains, err := q.tradesCarryChains(ctx)
	if err != nil {
		return pub, wrap(ctx, op, err)
	}
	pub.Partitions = len(dates)
	fold := chainedFold[tradesCarrySource]{
		op: op, table: lake.PerpdexTradesCarry, sidecar: tradesCarrySidecar(q.dir),
		current: func(e tradesCarrySource, chain string) bool {
			return e.Chain == chain && e.Layout == tradesCarryLayout
		},
		foreign: func(e tradesCarrySource) bool { return e.Layout != tradesCarryLayout },
		rows:    func(e tradesCarrySource) int64 { return e.Rows },
		entry: func(_, chain string, n int64) tradesCarrySource {
			return tradesCarrySource{Chain: chain, Rows: n, Layout: tradesCarryLayout, Trades: version}
		},
		// The dates kept were checked against these closed trades files.
		kept: func(_ string, e tradesCarrySource) tradesCarrySource {
			e.Trades = version
			return e
		},
		start: func(ctx context.Context, first string) (func(context.Context, string, string) (int64, error), func(), error) {
			conn, err := q.db.Conn(ctx)
			if err != nil {
				return nil, nil, err
			}
			// The days' pieces from the first date folded on, once for all of them.
			if _, err := conn.ExecContext(ctx, perpdexTradesDaysSQL, first); err != nil {
				conn.Close()
				return nil, nil, err
			}
			fold := func(ctx context.Context, prev, date string) (int64, error) {
				return lake.CopyQuery(ctx, conn, q.dir, lake.PerpdexTradesCarry, []string{date}, perpdexTradesCarrySQL, prev, date)
			}
			end := func() {
				// The temporary table goes with the connection's session, which the pool
				// keeps: dropped here.
				conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS pd_trades_days") //nolint:errcheck // a failure leaves a session table the next fold replaces
				conn.Close()
			}
			return fold, end, nil
		},
	}
	err = fold.publish(ctx, q, dates, chains, done, &pub)
	pub.Took = time.Since(start)
	return pub, err
}

// perpdexTradesCarryDate returns the perpdex_trades_carry date the window "all" of a
// board whose complete days end at hi reads (sql/perpdex/board.sql $14): the newest
// before hi's day, when the carry was checked against the closed trades files the
// board reads, and the instant the board's raw trades start from ($15: the next
// midnight; start when there is none, or for any other window).
func (q *Queries) perpdexTradesCarryDate(start, hi time.Time) (sql.NullTime, time.Time, error) {
	if start.After(time.Unix(0, 0)) {
		return sql.NullTime{}, start, nil
	}
	done, err := cachedSidecarOf[tradesCarrySource](q, tradesCarrySidecar(q.dir))
	if err != nil {
		return sql.NullTime{}, start, &StoreError{Op: "perpdex board", Err: err}
	}
	version, err := q.closedTradesVersion()
	if err != nil {
		return sql.NullTime{}, start, &StoreError{Op: "perpdex board", Err: err}
	}
	limit, best := Date(hi), ""
	for d, e := range done {
		if e.Trades != version || e.Layout != tradesCarryLayout {
			// Not checked against these trades: none of it is read.
			return sql.NullTime{}, start, nil
		}
		if d < limit && d > best {
			best = d
		}
	}
	if best == "" || version == "" {
		return sql.NullTime{}, start, nil
	}
	day, _ := time.Parse(time.DateOnly, best)
	return sql.NullTime{Time: day, Valid: true}, day.Add(24 * time.Hour), nil
}
