package query

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexClosedTradesSQL = sqlfiles.MustRead("perpdex/closed_trades.sql")
	perpdexWalletTradesSQL = sqlfiles.MustRead("perpdex/closed_trades_index.sql")
	// perpdexWalletTradesAtSQL reconstructs one wallet's trades from its fills up to a
	// clock (the publication's SQL, bounded); see perpdexWalletTrades.
	perpdexWalletTradesAtSQL = strings.Replace(sqlfiles.MustRead("perpdex/closed_trades_wallet_at.sql"), "__TRADES__",
		strings.TrimRight(strings.TrimSpace(perpdexClosedTradesSQL), ";"), 1)
)

// closedTradesEnd bounds the publication's fills: every fill the lake holds (the
// published table is the same for every clock; reads bound it, perpdexWalletTrades).
var closedTradesEnd = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// The closed trades are a derived table of the lake (perpdex_closed_trades), published
// whole when a fills file changes: a trade can span any number of days, so a new day of
// fills can change trades that opened before it. The sidecar records the fills files'
// signature the published file was computed from.
const closedTradesSourcesFile = "perpdex/closed_trades/_sources.json"

var closedTradesLocks sync.Map // lake dir -> *sync.Mutex

// closedTradeBuckets are the partitions of perpdex_closed_trades: the first hex digit of
// the wallet (addresses are stored lower-case). A wallet outside 0x0..0xf (none in
// practice) would not be reconstructed; the fills' addresses are validated on ingest.
var closedTradeBuckets = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"}

// perpdexDerived tracks a store's view of the published closed trades.
type perpdexDerived struct {
	checked    atomic.Int64 // unix ns of the last check that the publication was current
	publishing atomic.Bool  // a background publication runs
}

type pdDerivedKey struct{}

func (q *Queries) perpdexDerived() *perpdexDerived {
	v, _ := q.ext.LoadOrStore(pdDerivedKey{}, &perpdexDerived{})
	return v.(*perpdexDerived)
}

// PerpdexRefreshDerived publishes the closed trades now if the fills changed since the
// last publication (benchmarks and tests call it before timing).
func (q *Queries) PerpdexRefreshDerived(ctx context.Context) error {
	_, err := q.PublishPerpdexClosedTrades(ctx)
	return err
}

// PublishPerpdexClosedTrades writes perpdex_closed_trades from the fills when they
// changed since the last publication (or it has none) and reports whether it wrote.
// DuckDB writes the file itself (spilling its sorts to the temporary directory), through
// the atomic lake writer; the sidecar is updated after the file, so a cancelled
// publication leaves the previous file and is redone.
func (q *Queries) PublishPerpdexClosedTrades(ctx context.Context) (bool, error) {
	const op = "perpdex closed trades"
	mu, _ := closedTradesLocks.LoadOrStore(q.dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	sig, cur, err := q.closedTradesCurrent()
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	if cur {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, max(10*q.timeout, 30*time.Minute))
	defer cancel()
	if err := q.Reload(ctx); err != nil { // fills partitions that appeared since Open
		return false, wrap(ctx, op, err)
	}
	for _, b := range closedTradeBuckets {
		lo, hi := bucketRange(b)
		n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PerpdexClosedTrades, []string{b}, perpdexClosedTradesSQL, lo, hi, closedTradesEnd)
		if err != nil {
			return false, wrap(ctx, op, err)
		}
		if n == 0 { // no wallet of the bucket traded: no file (CopyQuery keeps an old one)
			rel, _ := lake.PerpdexClosedTrades.Path(b)
			if err := os.Remove(filepath.Join(q.dir, filepath.FromSlash(rel))); err != nil && !os.IsNotExist(err) {
				return false, &StoreError{Op: op, Err: err}
			}
		}
	}
	b, _ := json.Marshal(map[string]string{"fills": sig})
	if err := lake.WriteFileAtomic(filepath.Join(q.dir, filepath.FromSlash(closedTradesSourcesFile)), append(b, '\n')); err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	if err := q.Reload(ctx); err != nil { // the view of the first published file
		return false, wrap(ctx, op, err)
	}
	return true, nil
}

// closedTradesCurrent returns the fills' signature and whether the published closed
// trades were computed from exactly those files.
func (q *Queries) closedTradesCurrent() (string, bool, error) {
	raw, err := filesSignature(q.dir, lake.PerpdexFills)
	if err != nil {
		return "", false, err
	}
	h := sha256.Sum256([]byte(raw))
	sig := hex.EncodeToString(h[:])
	b, err := os.ReadFile(filepath.Join(q.dir, filepath.FromSlash(closedTradesSourcesFile)))
	if err != nil {
		return sig, false, nil
	}
	var m map[string]string
	if json.Unmarshal(b, &m) != nil {
		return sig, false, nil
	}
	files, err := lake.PerpdexClosedTrades.Files(q.dir)
	if err != nil {
		return sig, false, err
	}
	return sig, m["fills"] == sig && len(files) > 0, nil
}

// bucketRange is the wallet range [lo, hi) of a bucket: the addresses starting 0x<b>.
func bucketRange(b string) (lo, hi string) {
	lo, hi = "0x"+b, "0x"+string(rune(b[0]+1))
	if b == "9" {
		hi = "0xa"
	}
	return lo, hi
}

// perpdexEnsure makes sure the closed trades are published for the lake's fills before
// a query reads them: a store that serves stale data (mdq serve) answers from the last
// publication while a newer one runs in the background; otherwise (the offline CLI, or
// no publication yet) it publishes first. The check is throttled to once a second.
func (q *Queries) perpdexEnsure(ctx context.Context) error {
	d := q.perpdexDerived()
	if time.Now().UnixNano()-d.checked.Load() < int64(time.Second) {
		return nil
	}
	_, cur, err := q.closedTradesCurrent()
	if err != nil {
		return &StoreError{Op: "perpdex closed trades", Err: err}
	}
	if cur {
		if err := q.ensureView(ctx, lake.PerpdexClosedTrades); err != nil {
			return wrap(ctx, "perpdex closed trades", err)
		}
		d.checked.Store(time.Now().UnixNano())
		return nil
	}
	have, err := lake.PerpdexClosedTrades.Files(q.dir)
	if err != nil {
		return &StoreError{Op: "perpdex closed trades", Err: err}
	}
	if len(have) > 0 && q.serveStale {
		if d.publishing.CompareAndSwap(false, true) {
			q.background(func(life context.Context) {
				defer d.publishing.Store(false)
				if _, err := q.PublishPerpdexClosedTrades(life); err != nil && life.Err() == nil {
					q.log.Error("perpdex closed trades publication", "err", err)
				}
			})
		}
		return nil
	}
	if _, err := q.PublishPerpdexClosedTrades(q.detach(ctx)); err != nil {
		return err
	}
	d.checked.Store(time.Now().UnixNano())
	return nil
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

// perpdexWalletTrades reads one wallet's trades as they stood at the store clock, in
// pdTradeCmp order (sorted here so the routes' binary searches follow Go's string order
// whatever the database's collation); nil when it has none. The published table is
// built from every fill the lake holds: when the wallet has a fill after the clock (a
// trade of the table closes after it), its trades are reconstructed from its fills up
// to the clock instead, so a trade still open then reads open, as it stood, and no
// later fill is counted. A trade that closed by the clock is the same either way (it
// depends only on fills up to its close), so the table answers whenever it can.
func (q *Queries) perpdexWalletTrades(ctx context.Context, wallet string) ([]pdTradeRow, error) {
	if err := q.perpdexEnsure(ctx); err != nil {
		return nil, err
	}
	now := q.Now()
	out, err := q.perpdexWalletTradesRead(ctx, perpdexWalletTradesSQL, wallet)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 && out[len(out)-1].closeUS > now.UnixMicro() {
		return q.perpdexWalletTradesRead(ctx, perpdexWalletTradesAtSQL, wallet, wallet+"~", now)
	}
	return out, nil
}

// perpdexWalletTradesRead runs one of the wallet trade reads and sorts its rows.
func (q *Queries) perpdexWalletTradesRead(ctx context.Context, query string, args ...any) ([]pdTradeRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap(ctx, "perpdex wallet trades", err)
	}
	defer rows.Close()
	var out []pdTradeRow
	for rows.Next() {
		var (
			t           pdTradeRow
			entry, exit sql.NullFloat64
		)
		if err := rows.Scan(&t.asset, &t.tradeNo, &t.long, &t.openUS, &t.closeUS, &entry, &exit,
			&t.maxTok, &t.maxUsd, &t.vol, &t.pnl, &t.fee, &t.fills, &t.complete); err != nil {
			return nil, wrap(ctx, "perpdex wallet trades", err)
		}
		t.entry, t.hasEntry = entry.Float64, entry.Valid
		t.exit, t.hasExit = exit.Float64, exit.Valid
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "perpdex wallet trades", err)
	}
	slices.SortFunc(out, func(a, b pdTradeRow) int { return pdTradeCmp(&a, &b) })
	return out, nil
}
