package query

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
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
		digests[day] = fmt.Sprintf("%d|%s", n, digest)
		dates = append(dates, day)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	sort.Strings(dates)
	chains = make(map[string]string, len(dates))
	chain := ""
	for _, d := range dates {
		chain = chainSig(chain, d, digests[d])
		chains[d] = chain
	}
	return dates, chains, nil
}

// publishPerpdexTradesCarry brings perpdex_trades_carry up to date with the published
// closed trades, when they are current for the lake's fills (otherwise it leaves the
// carry as it is, and a board reads none of it: see perpdexTradesCarryDate; the closed
// trades' own publication comes first in every publishing path). When the closed
// trades files changed since the carry was last checked, their digest per close date
// decides: walking the close dates in order, a date whose chain of digests is unchanged
// is kept; from the first changed one each date is the previous carry plus its day's
// trades, one small file each, the days' pieces computed once for all of them
// (sql/perpdex/trades_days.sql). Each file is written atomically and the sidecar after
// it, so a cancelled publication leaves a prefix of the chain current.
func (q *Queries) publishPerpdexTradesCarry(ctx context.Context) (DailyPublication, error) {
	const op = "perpdex_trades_carry publication"
	start := time.Now()
	pub := DailyPublication{Table: lake.PerpdexTradesCarry.Name}
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
	done, err := readSidecar[carrySource](tradesCarrySidecar(q.dir))
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
	other := false
	for _, e := range done {
		other = other || e.Layout != tradesCarryLayout
	}
	removed := false
	for d, e := range done {
		// Another fold's files go first, as the fold reads the previous date through the
		// table's view; and a date with no complete trade now.
		if _, ok := chains[d]; ok && !other && e.Layout == tradesCarryLayout {
			continue
		}
		if err := removeDatePartition(q.dir, lake.PerpdexTradesCarry, d); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		delete(done, d)
		if err := writeSidecar(tradesCarrySidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		if _, ok := chains[d]; !ok {
			pub.Removed = append(pub.Removed, d)
		}
		removed = true
	}
	sort.Strings(pub.Removed)
	if removed {
		if err := q.Reload(ctx); err != nil {
			return pub, wrap(ctx, op, err)
		}
	}
	first, prev := len(dates), ""
	for i, d := range dates {
		if e, ok := done[d]; !ok || e.Chain != chains[d] {
			first = i
			break
		}
		prev = d
	}
	// The dates kept were checked against these closed trades files.
	for _, d := range dates[:first] {
		e := done[d]
		e.Trades = version
		done[d] = e
	}
	if err := writeSidecar(tradesCarrySidecar(q.dir), done); err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	if first == len(dates) {
		pub.Took = time.Since(start)
		return pub, nil
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return pub, wrap(ctx, op, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, perpdexTradesDaysSQL, dates[first]); err != nil {
		return pub, wrap(ctx, op, err)
	}
	// The temporary table goes with the connection's session, which the pool keeps:
	// dropped here.
	defer conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS pd_trades_days")
	for _, d := range dates[first:] {
		// The fold reads the previous date through the table's view, which must see the
		// file just written.
		if err := q.ensureView(ctx, lake.PerpdexTradesCarry); err != nil {
			return pub, wrap(ctx, op, err)
		}
		n, err := lake.CopyQuery(ctx, conn, q.dir, lake.PerpdexTradesCarry, []string{d}, perpdexTradesCarrySQL, prev, d)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		prev = d
		done[d] = carrySource{Chain: chains[d], Rows: n, Layout: tradesCarryLayout, Trades: version}
		if err := writeSidecar(tradesCarrySidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, d)
	}
	if err := q.ensureView(ctx, lake.PerpdexTradesCarry); err != nil {
		return pub, wrap(ctx, op, err)
	}
	pub.Took = time.Since(start)
	return pub, nil
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
	done, err := cachedSidecarOf[carrySource](q, tradesCarrySidecar(q.dir))
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
