package query

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// A board family is the set of hourly on-chain boards of one chain that differ only
// by their window (and, for the screener, smart_money_only): the windows are nested
// and end at the board hour, so one pass over the widest window computes them all
// (sql/onchain/*_all.sql, exact: see there) where one query per board read the
// overlapping windows again and again. The pass runs when the first board of the
// family is not published for the hour (sourcedBoardRows' prepare) and publishes every
// board of the family; the board's own query (screener.sql, discover.sql,
// token_transfers_board.sql) is left as the fallback that computes a board the pass
// did not publish (a lake that cannot be written), so a board is always one of the
// two exact computations and the published layout is unchanged.
type ocFamily struct {
	name    string
	table   *lake.Table
	sources []*lake.Table
	all     string // the one pass: a board key column, then the board's columns
	cut     string // one board from the pass ($1 board key)
	// keys lists the family's board keys of chain; args are the pass's arguments for
	// chain at board hour at.
	keys func(chain string) []string
	args func(chain string, at time.Time) []any
	// Every pass reads history through the wallet bands (ocBands), whose three
	// arguments follow args; epoch: it tells the legs at or before the epoch apart
	// (ocBandsFor's byEpoch).
	epoch bool
}

var (
	screenerFamily = &ocFamily{
		name: "onchain screener boards", table: lake.OnchainScreenerBoard, sources: screenerBoardSources,
		all: sqlfiles.MustRead("onchain/screener_all.sql"), cut: sqlfiles.MustRead("onchain/screener_cut.sql"),
		keys: func(chain string) []string {
			var ks []string
			for _, w := range []string{"24h", "7d", "30d", "90d"} {
				for _, smart := range []bool{false, true} {
					ks = append(ks, fmt.Sprintf("%s.%s.%t", chain, w, smart))
				}
			}
			return ks
		},
		args: func(chain string, at time.Time) []any {
			first := func(w string) string { return Date(at.AddDate(0, 0, -OnchainScreenerWindows[w])) }
			return []any{chain, first("24h"), first("7d"), first("30d"), first("90d"), micros(at), OnchainSmartMoneyPnL}
		},
	}
	discoverFamily = &ocFamily{
		name: "onchain discover boards", table: lake.OnchainDiscoverBoard, sources: legsBoardSources,
		all: sqlfiles.MustRead("onchain/discover_all.sql"), cut: sqlfiles.MustRead("onchain/discover_cut.sql"), epoch: true,
		keys: func(chain string) []string {
			return []string{chain + ".24h", chain + ".7d", chain + ".30d", chain + ".90d", chain + ".all"}
		},
		args: func(chain string, at time.Time) []any {
			since := func(w string) int64 { s, _ := windowBounds(at, w); return s }
			return []any{chain, since("24h"), since("7d"), since("30d"), since("90d"), micros(at)}
		},
	}
	transfersFamily = &ocFamily{
		name: "onchain transfers boards", table: lake.OnchainTransfersBoard, sources: transfersBoardSrcs,
		all: sqlfiles.MustRead("onchain/token_transfers_board_all.sql"),
		cut: sqlfiles.MustRead("onchain/token_transfers_board_cut.sql"),
		keys: func(chain string) []string {
			return []string{chain + ".1h", chain + ".24h", chain + ".7d", chain + ".30d"}
		},
		args: func(chain string, at time.Time) []any {
			since := func(w string) int64 { s, _ := windowBounds(at, w); return s }
			return []any{chain, since("1h"), since("24h"), since("7d"), since("30d"), micros(at), OnchainTransferRows}
		},
	}
)

// familyPass computes family f's pass for chain at board hour at into the temporary
// table oc_board_family of conn.
func (q *Queries) familyPass(ctx context.Context, conn *sql.Conn, f *ocFamily, chain string, at time.Time) error {
	run := func(extra ...any) error {
		_, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE oc_board_family AS\n"+f.all, append(f.args(chain, at), extra...)...)
		return err
	}
	return q.withOcBands(chain, at, f.epoch, func(b ocBands) error { return run(b.args()...) })
}

type ocFamilyKey struct{}

// ocOnce runs one function per key at a time: callers of a key that is running wait
// for it, and a key that succeeded is not run again (an error lets the next caller
// run it). Keys carry their board hour; done keys of hours a day older than the one
// being run are forgotten, so the set stays small.
type ocOnce struct {
	mu sync.Mutex
	m  map[string]*ocOnceRun
}

type ocOnceRun struct {
	at   time.Time
	done chan struct{}
	err  error
}

func (o *ocOnce) do(ctx context.Context, key string, at time.Time, f func(context.Context) error) error {
	for {
		o.mu.Lock()
		if o.m == nil {
			o.m = map[string]*ocOnceRun{}
		}
		r := o.m[key]
		if r == nil {
			for k, old := range o.m {
				if old.at.Before(at.Add(-24 * time.Hour)) {
					select {
					case <-old.done:
						delete(o.m, k)
					default:
					}
				}
			}
			r = &ocOnceRun{at: at, done: make(chan struct{})}
			o.m[key] = r
			o.mu.Unlock()
			r.err = f(ctx)
			if r.err != nil {
				o.mu.Lock()
				delete(o.m, key)
				o.mu.Unlock()
			}
			close(r.done)
			return r.err
		}
		o.mu.Unlock()
		select {
		case <-r.done:
			if r.err == nil {
				return nil
			}
			// The run failed (perhaps its caller's context ended): run it here.
		case <-ctx.Done():
			return wrap(ctx, key, ctx.Err())
		}
	}
}

// forget drops the done keys starting with prefix whose hour is before t (their state
// was removed, so the next caller runs them again).
func (o *ocOnce) forget(prefix string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, r := range o.m {
		if strings.HasPrefix(k, prefix) && r.at.Before(t) {
			select {
			case <-r.done:
				delete(o.m, k)
			default:
			}
		}
	}
}

// boardFamily publishes every board of family f for chain at board hour at that is not
// published yet, from one pass: once per (family, chain, hour, sources), concurrent
// callers waiting for the one pass. A lake that cannot be written publishes nothing
// here (each board is then computed by its own query, as before the families).
// board is the key of the board being asked for: one outside the family (a window the
// pass does not compute), or asked for by a request's as_of, is left to its own query.
func (q *Queries) boardFamily(ctx context.Context, f *ocFamily, chain, board string, at time.Time) error {
	if !slices.Contains(f.keys(chain), board) || q.asOf {
		// A request's as_of (a past hour) asks for one board within the request's
		// budget: computing its family would cost more than the board alone.
		return nil
	}
	sig, err := filesSignature(q.dir, f.sources...)
	if err != nil {
		return &StoreError{Op: f.name, Err: err}
	}
	built := boardBuilt(at, sig)
	v, _ := q.ext.LoadOrStore(ocFamilyKey{}, &ocOnce{})
	return v.(*ocOnce).do(ctx, f.name+"|"+chain+"|"+built, at, func(ctx context.Context) error {
		var todo []string
		for _, k := range f.keys(chain) {
			rel, err := f.table.Path(k, built)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(q.dir, filepath.FromSlash(rel))); err != nil {
				todo = append(todo, k)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		// A connection of its own: the pass is a temporary table of it, which no other
		// build sees and which goes with the connection.
		conn, err := q.db.Conn(ctx)
		if err != nil {
			return wrap(ctx, f.name, err)
		}
		defer conn.Close()
		if err := q.familyPass(ctx, conn, f, chain, at); err != nil {
			return wrap(ctx, f.name, err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS oc_board_family") //nolint:errcheck // the connection's temp schema goes with it
		for _, k := range todo {
			if _, err := lake.CopyResult(ctx, conn, q.dir, f.table, []string{k, built}, f.cut, k); err != nil {
				if ctx.Err() != nil || !isWriteError(err) {
					return wrap(ctx, f.name, err)
				}
				q.log.Warn("board family not published (lake not writable); each board computes its own", "table", f.table.Name, "board", k, "err", err)
				return nil
			}
			q.pruneBoards(f.table, k, built, BoardHoursKept)
		}
		return nil
	})
}
