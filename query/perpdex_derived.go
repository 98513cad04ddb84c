package query

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
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
	perpdexBucketTradesSQL = sqlfiles.MustRead("perpdex/closed_trades_bucket.sql")
	// perpdexWalletTradesAtSQL reconstructs one wallet's trades from its fills up to a
	// clock (the publication's SQL, bounded); see perpdexWalletTrades.
	perpdexWalletTradesAtSQL = strings.Replace(sqlfiles.MustRead("perpdex/closed_trades_wallet_at.sql"), "__TRADES__",
		strings.TrimRight(strings.TrimSpace(perpdexClosedTradesSQL), ";"), 1)
)

// closedTradesEnd bounds the publication's fills: every fill the lake holds (the
// published table is the same for every clock; reads bound it, perpdexWalletTrades).
var closedTradesEnd = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// The closed trades are a derived table of the lake (perpdex_closed_trades). A trade
// can span any number of days, so a new, late or corrected day of fills can change
// trades that opened before it; rather than recompute everything, a publication
// restarts from the checkpoint (perpdex_closed_trades_checkpoint) at the newest date C
// at or before the earliest changed date: the trades that were over before C are kept
// from the previous file, the others recomputed from the checkpoint's state and the
// fills from C on. Without a usable checkpoint it rebuilds from all the fills. The
// sidecar records each fills date's file signature the published files were computed
// from, and "from", a date the files must be recomputed from (set while a publication
// runs, so a cancelled one is redone from there).
const closedTradesSourcesFile = "perpdex/closed_trades/_sources.json"

var (
	perpdexClosedTradesPartsSQL = sqlfiles.MustRead("perpdex/closed_trades_parts.sql")
	perpdexClosedTradesMergeSQL = sqlfiles.MustRead("perpdex/closed_trades_merge.sql")
	perpdexClosedTradesCpSQL    = sqlfiles.MustRead("perpdex/closed_trades_checkpoint.sql")
	perpdexClosedTradesKeptSQL  = sqlfiles.MustRead("perpdex/closed_trades_old_kept.sql")
	perpdexClosedTradesSplitSQL = sqlfiles.MustRead("perpdex/closed_trades_split.sql")
)

// ctSources is the sidecar of the closed trades.
type ctSources struct {
	Dates map[string]string `json:"dates"`          // fills date -> file signature
	From  string            `json:"from,omitempty"` // recompute from this date on
	// History is the date the history segment was split at: it holds exactly the
	// trades over before it, the recent segment the others. "" while unknown (a
	// publication renaming its files), so the next one rewrites both.
	History string `json:"history,omitempty"`
}

// closedTradesCompactDays bounds the recent segment: a publication restarting more
// than this many days after the history split (or before it) rewrites both segments
// and splits at the newest date; otherwise it rewrites only the recent one.
// closedTradesKeepCheckpoints is how many dates' checkpoints a publication keeps (the
// newest): a day arriving up to that many days late restarts from one.
const closedTradesKeepCheckpoints = 8

var closedTradesCompactDays = 7 // tests set 0 (compact whenever possible)

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

// ClosedTradesPublication reports one publication of the closed trades.
type ClosedTradesPublication struct {
	Wrote   bool          // the files were rewritten
	From    string        // the restart date; "" for a full rebuild
	Compact bool          // both segments were rewritten (else only the recent one)
	Took    time.Duration // wall time of the writing
}

// PublishPerpdexClosedTrades writes perpdex_closed_trades from the fills when they
// changed since the last publication (or it has none) and reports whether it wrote.
func (q *Queries) PublishPerpdexClosedTrades(ctx context.Context) (bool, error) {
	p, err := q.PublishPerpdexClosedTradesFrom(ctx)
	return p.Wrote, err
}

// PublishPerpdexClosedTradesFrom is PublishPerpdexClosedTrades reporting where it
// restarted. DuckDB writes each file itself through the atomic lake writer; the
// sidecar is narrowed to the unchanged dates (with "from") before the first file is
// replaced and completed after the last, so a cancelled publication leaves every file
// whole, keeps the trades it must, and is redone from its restart date.
func (q *Queries) PublishPerpdexClosedTradesFrom(ctx context.Context) (ClosedTradesPublication, error) {
	const op = "perpdex closed trades"
	var p ClosedTradesPublication
	mu, _ := closedTradesLocks.LoadOrStore(q.dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	dates, side, ok, cur, err := q.closedTradesCurrent()
	if err != nil {
		return p, &StoreError{Op: op, Err: err}
	}
	if cur {
		return p, nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, max(10*q.timeout, 30*time.Minute))
	defer cancel()
	if err := q.Reload(ctx); err != nil { // fills partitions that appeared since Open
		return p, wrap(ctx, op, err)
	}
	// The restart date: the newest usable checkpoint at or before the earliest change.
	from := ""
	if ok {
		if dmin := ctRestart(dates, side); dmin != "" {
			if from, err = q.closedTradesCheckpointAt(ctx, dates, dmin); err != nil {
				return p, wrap(ctx, op, err)
			}
		}
	}
	sidecar := filepath.Join(q.dir, filepath.FromSlash(closedTradesSourcesFile))
	if from == "" {
		if err := os.Remove(sidecar); err != nil && !os.IsNotExist(err) {
			return p, &StoreError{Op: op, Err: err}
		}
	} else {
		kept := ctSources{Dates: map[string]string{}, From: from, History: side.History}
		for d, s := range dates {
			if d < from {
				kept.Dates[d] = s
			}
		}
		if err := writeCTSources(sidecar, kept); err != nil {
			return p, &StoreError{Op: op, Err: err}
		}
	}
	compact := from == "" || side.History == "" || from < side.History
	if !compact {
		h, _ := time.Parse(time.DateOnly, side.History)
		c, _ := time.Parse(time.DateOnly, from)
		compact = c.Sub(h) > time.Duration(closedTradesCompactDays)*24*time.Hour
	}
	history, err := q.publishClosedTrades(ctx, sidecar, dates, from, compact)
	if err != nil {
		return p, err
	}
	if !compact {
		history = side.History
	}
	if err := writeCTSources(sidecar, ctSources{Dates: dates, History: history}); err != nil {
		return p, &StoreError{Op: op, Err: err}
	}
	// Only the newest checkpoints are kept (each holds every traded pair, so they add
	// up): a change older than all of them rebuilds from scratch.
	if cps, err := lake.PerpdexClosedTradesCheckpoint.Files(q.dir); err == nil && len(cps) > closedTradesKeepCheckpoints {
		for _, f := range cps[:len(cps)-closedTradesKeepCheckpoints] {
			os.RemoveAll(filepath.Dir(f))
		}
	}
	p = ClosedTradesPublication{Wrote: true, From: from, Compact: compact, Took: time.Since(start)}
	if err := q.Reload(ctx); err != nil { // the view of the first published file
		return p, wrap(ctx, op, err)
	}
	return p, nil
}

// publishClosedTrades rewrites the bucket files from the date from ("" for every fill)
// and writes the checkpoint of the newest fills date. Each bucket has two segments:
// history (the trades over before the split date) and recent (the others). Without
// compact only the recent segment is rewritten (its trades over before from kept, the
// rest recomputed), so a new day costs the open trades, not the whole table; with
// compact both are, split at the newest date, which it returns. It runs on one
// connection, whose temporary tables hold the checkpoint read, each bucket's parts,
// the trades kept and the checkpoint being built.
func (q *Queries) publishClosedTrades(ctx context.Context, sidecar string, dates map[string]string, from string, compact bool) (string, error) {
	const op = "perpdex closed trades"
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return "", wrap(ctx, op, err)
	}
	defer conn.Close()
	fromTS := time.Unix(0, 0).UTC()
	if from != "" {
		fromTS, _ = time.Parse(time.DateOnly, from)
	}
	newest := ""
	for d := range dates {
		newest = max(newest, d)
	}
	newestTS := closedTradesEnd
	if newest != "" {
		newestTS, _ = time.Parse(time.DateOnly, newest)
	}
	cpCols := tempColumns(lake.PerpdexClosedTradesCheckpoint, "sources")
	stmts := []string{
		"CREATE OR REPLACE TEMP TABLE ct_cp_in (" + cpCols + ")",
		"CREATE OR REPLACE TEMP TABLE ct_cp_out (" + cpCols + ")",
		"CREATE OR REPLACE TEMP TABLE ct_old_kept (" + tempColumns(lake.PerpdexClosedTrades) + ")",
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return "", wrap(ctx, op, err)
		}
	}
	if from != "" {
		rel, _ := lake.PerpdexClosedTradesCheckpoint.Path(from)
		if _, err := conn.ExecContext(ctx, "INSERT INTO ct_cp_in BY NAME SELECT * EXCLUDE (sources) FROM read_parquet($1, hive_partitioning = false)",
			filepath.Join(q.dir, filepath.FromSlash(rel))); err != nil {
			return "", wrap(ctx, op, err)
		}
	}
	// The new bucket files are staged outside the table's directory and renamed into
	// place together once all are written, so that a cancelled publication leaves every
	// previous file, not a mix of old and new buckets.
	// The directory is this publication's own (another process may publish the same
	// lake) and hidden (no table glob matches it).
	if err := os.MkdirAll(filepath.Join(q.dir, "perpdex"), 0o755); err != nil {
		return "", &StoreError{Op: op, Err: err}
	}
	stageDir, err := os.MkdirTemp(filepath.Join(q.dir, "perpdex"), closedTradesStaging)
	if err != nil {
		return "", &StoreError{Op: op, Err: err}
	}
	defer os.RemoveAll(stageDir)
	stage := *lake.PerpdexClosedTrades
	stage.Prefix = "perpdex/" + filepath.Base(stageDir)
	segments := []string{ctRecent}
	if compact {
		segments = []string{ctHistory, ctRecent}
	}
	staged := map[[2]string]bool{} // (bucket, segment) rewritten -> a file was written
	for i, b := range closedTradeBuckets {
		if closedTradesTestHook != nil {
			closedTradesTestHook(i)
		}
		lo, hi := bucketRange(b)
		if _, err := conn.ExecContext(ctx, "DELETE FROM ct_old_kept"); err != nil {
			return "", wrap(ctx, op, err)
		}
		for _, seg := range segments { // the segments rewritten: their trades that stay
			rel, _ := lake.PerpdexClosedTrades.Path(b, seg)
			path := filepath.Join(q.dir, filepath.FromSlash(rel))
			if _, err := os.Stat(path); from != "" && err == nil {
				if _, err := conn.ExecContext(ctx, "INSERT INTO ct_old_kept BY NAME\n"+perpdexClosedTradesKeptSQL, path); err != nil {
					return "", wrap(ctx, op, err)
				}
			}
		}
		if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE ct_parts AS\n"+perpdexClosedTradesPartsSQL,
			lo, hi, fromTS, closedTradesEnd, newestTS, fromTS.Format(time.DateOnly)); err != nil {
			return "", wrap(ctx, op, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO ct_cp_out BY NAME\n"+perpdexClosedTradesCpSQL); err != nil {
			return "", wrap(ctx, op, err)
		}
		if !compact {
			n, err := lake.CopyQuery(ctx, conn, q.dir, &stage, []string{b, ctRecent}, perpdexClosedTradesMergeSQL, lo, hi)
			if err != nil {
				return "", wrap(ctx, op, err)
			}
			staged[[2]string{b, ctRecent}] = n > 0
		} else {
			if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE ct_merged AS\n"+perpdexClosedTradesMergeSQL, lo, hi); err != nil {
				return "", wrap(ctx, op, err)
			}
			for _, seg := range segments {
				n, err := lake.CopyQuery(ctx, conn, q.dir, &stage, []string{b, seg}, perpdexClosedTradesSplitSQL, seg == ctHistory)
				if err != nil {
					return "", wrap(ctx, op, err)
				}
				staged[[2]string{b, seg}] = n > 0 // no trade: no file
			}
		}
	}
	if closedTradesTestHook != nil {
		closedTradesTestHook(len(closedTradeBuckets))
	}
	// The checkpoint of the newest date (unless it is the one read): valid on its own
	// (its rows carry the signature of the fills they were computed from), it may be
	// written before the files it goes with.
	if newest != "" && newest != from {
		if err := q.writeClosedTradesCheckpoint(ctx, conn, dates, newest); err != nil {
			return "", err
		}
	}
	if closedTradesTestHook != nil {
		closedTradesTestHook(len(closedTradeBuckets) + 1)
	}
	if err := ctx.Err(); err != nil {
		return "", wrap(ctx, op, err)
	}
	// From here the files change: until the sidecar is complete, the next publication
	// must not trust the split (a crash may leave some files renamed).
	if compact {
		b, err := os.ReadFile(sidecar)
		var side ctSources
		if err == nil && json.Unmarshal(b, &side) == nil && side.Dates != nil {
			side.History = ""
			err = writeCTSources(sidecar, side)
		}
		if err != nil && !os.IsNotExist(err) {
			return "", &StoreError{Op: op, Err: err}
		}
	}
	// No cancellation from here: renames.
	if from == "" { // files of the one-file-per-bucket layout of an older mdq
		old, _ := filepath.Glob(filepath.Join(q.dir, "perpdex", "closed_trades", "bucket=*", lake.PerpdexClosedTrades.File))
		for _, f := range old {
			os.Remove(f)
		}
	}
	for key, wrote := range staged {
		rel, _ := lake.PerpdexClosedTrades.Path(key[0], key[1])
		path := filepath.Join(q.dir, filepath.FromSlash(rel))
		if !wrote {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return "", &StoreError{Op: op, Err: err}
			}
			continue
		}
		srel, _ := stage.Path(key[0], key[1])
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", &StoreError{Op: op, Err: err}
		}
		if err := os.Rename(filepath.Join(q.dir, filepath.FromSlash(srel)), path); err != nil {
			return "", &StoreError{Op: op, Err: err}
		}
		if err := lake.SyncDir(filepath.Dir(path)); err != nil {
			return "", &StoreError{Op: op, Err: err}
		}
	}
	return newest, nil
}

// The segments of a bucket of perpdex_closed_trades.
const (
	ctHistory = "history"
	ctRecent  = "recent"
)

// closedTradesStaging starts the name of the directory (under perpdex/) where a
// publication writes the new bucket files before it renames them into
// perpdex/closed_trades.
const closedTradesStaging = ".closed_trades_staging-"

// closedTradesTestHook, when set (tests), is called before each bucket (0..15), after
// the last (16) and after the checkpoint is written (17).
var closedTradesTestHook func(step int)

// writeClosedTradesCheckpoint writes the checkpoint built in ct_cp_out as the newest
// date's.
func (q *Queries) writeClosedTradesCheckpoint(ctx context.Context, conn *sql.Conn, dates map[string]string, newest string) error {
	const op = "perpdex closed trades"
	n, err := lake.CopyQuery(ctx, conn, q.dir, lake.PerpdexClosedTradesCheckpoint, []string{newest},
		"SELECT *, $1 AS sources FROM ct_cp_out", ctPrefix(dates, newest))
	if err != nil {
		return wrap(ctx, op, err)
	}
	if n == 0 { // no fill before the newest date: no checkpoint (an old one would be stale)
		rel, _ := lake.PerpdexClosedTradesCheckpoint.Path(newest)
		if err := os.Remove(filepath.Join(q.dir, filepath.FromSlash(rel))); err != nil && !os.IsNotExist(err) {
			return &StoreError{Op: op, Err: err}
		}
	}
	return nil
}

// tempColumns is the column list of a temporary table with t's columns (but skip).
func tempColumns(t *lake.Table, skip ...string) string {
	var cols []string
	for _, c := range t.Columns {
		if !slices.Contains(skip, c.Name) {
			cols = append(cols, lake.QuoteIdent(c.Name)+" "+c.Type)
		}
	}
	return strings.Join(cols, ", ")
}

// closedTradesCheckpointAt returns the newest date at or before dmin with a checkpoint
// computed from the fills files the lake holds before that date ("" if none).
func (q *Queries) closedTradesCheckpointAt(ctx context.Context, dates map[string]string, dmin string) (string, error) {
	files, err := lake.PerpdexClosedTradesCheckpoint.Files(q.dir)
	if err != nil {
		return "", err
	}
	for i := len(files) - 1; i >= 0; i-- {
		d := strings.TrimPrefix(filepath.Base(filepath.Dir(files[i])), "date=")
		if d > dmin {
			continue
		}
		var src sql.NullString
		if err := q.db.QueryRowContext(ctx, "SELECT any_value(sources) FROM read_parquet($1, hive_partitioning = false)", files[i]).Scan(&src); err != nil {
			return "", err
		}
		if src.Valid && src.String == ctPrefix(dates, d) {
			return d, nil
		}
	}
	return "", nil
}

// ctRestart is the earliest fills date whose file changed, appeared or disappeared
// since the sidecar was written, or the sidecar's own restart date if earlier; "" when
// nothing changed.
func ctRestart(dates map[string]string, side ctSources) string {
	out := side.From
	for d, s := range dates {
		if side.Dates[d] != s && (out == "" || d < out) {
			out = d
		}
	}
	for d := range side.Dates {
		if _, ok := dates[d]; !ok && (out == "" || d < out) {
			out = d
		}
	}
	return out
}

// ctPrefix is the signature of the fills files of the dates before d.
func ctPrefix(dates map[string]string, d string) string {
	keys := make([]string, 0, len(dates))
	for k := range dates {
		if k < d {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k + "=" + dates[k] + ";"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeCTSources(path string, s ctSources) error {
	b, _ := json.Marshal(s)
	return lake.WriteFileAtomic(path, append(b, '\n'))
}

// fillsDateSigs is each fills date's file signature (size and modification time).
func fillsDateSigs(dir string) (map[string]string, error) {
	files, infos, err := tableFiles(dir, lake.PerpdexFills)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(files))
	for i, f := range files {
		d := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date=")
		out[d] = fmt.Sprintf("%d|%d", infos[i].Size(), infos[i].ModTime().UnixNano())
	}
	return out, nil
}

// closedTradesCurrent returns the fills' per-date signatures, the sidecar (ok when
// readable) and whether the published closed trades were computed from exactly
// those files.
func (q *Queries) closedTradesCurrent() (dates map[string]string, side ctSources, ok, cur bool, err error) {
	dates, err = fillsDateSigs(q.dir)
	if err != nil {
		return nil, side, false, false, err
	}
	b, err := os.ReadFile(filepath.Join(q.dir, filepath.FromSlash(closedTradesSourcesFile)))
	if err != nil {
		return dates, side, false, false, nil
	}
	if json.Unmarshal(b, &side) != nil || side.Dates == nil {
		return dates, ctSources{}, false, false, nil
	}
	files, err := lake.PerpdexClosedTrades.Files(q.dir)
	if err != nil {
		return dates, side, true, false, err
	}
	return dates, side, true, side.From == "" && maps.Equal(side.Dates, dates) && len(files) > 0, nil
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
	_, _, _, cur, err := q.closedTradesCurrent()
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
	out, err := q.perpdexBucketTrades(ctx, wallet)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 && out[len(out)-1].closeUS > now.UnixMicro() {
		return q.perpdexWalletTradesRead(ctx, perpdexWalletTradesAtSQL, wallet, wallet+"~", now)
	}
	return out, nil
}

// perpdexBucketTrades reads a wallet's published trades from the files of its bucket
// only (a glob of the bucket's segments): the view's wallet filter checked the footers
// and row groups of all 16 buckets' files per request, the route's whole cost on the
// medium lake. A wallet outside every bucket, or a bucket without files (none of its
// wallets traded) or being replaced under the read, is read through the view.
func (q *Queries) perpdexBucketTrades(ctx context.Context, wallet string) ([]pdTradeRow, error) {
	for _, b := range closedTradeBuckets {
		if lo, hi := bucketRange(b); wallet < lo || wallet >= hi {
			continue
		}
		rel, err := lake.PerpdexClosedTrades.Path(b, "x")
		if err != nil {
			break
		}
		glob := filepath.Join(q.dir, filepath.FromSlash(path.Dir(path.Dir(rel))), "segment=*", lake.PerpdexClosedTrades.File)
		if m, _ := filepath.Glob(glob); len(m) == 0 {
			break
		}
		out, err := q.perpdexWalletTradesRead(ctx, perpdexBucketTradesSQL, wallet, glob)
		if err == nil || ctx.Err() != nil {
			return out, err
		}
		break
	}
	return q.perpdexWalletTradesRead(ctx, perpdexWalletTradesSQL, wallet)
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
