package query

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// The tape index: a derived, in-memory digest of the archive's predmkt trades and
// book_events files that lets /ohlcv, /orderbook, /smart_money and /events avoid
// scanning the whole tape. It is a pure function of the files, kept per file: every
// use lists the files and compares (path, size, mtime, identity) with what the
// index was built from, and re-reads only the files that appeared or changed (and
// drops the ones that went away) before answering. Nothing in it depends on the
// store clock: the clock is applied when it is read, so an answer never differs
// from the same SQL over the raw files at the store clock.

var (
	predmktTapeSpanSQL   = sqlfiles.MustRead("predmkt/board_tape_span.sql")
	predmktTapeBooksSQL  = sqlfiles.MustRead("predmkt/board_tape_books.sql")
	predmktTapeMidsSQL   = sqlfiles.MustRead("predmkt/board_tape_mids.sql")
	predmktTapeMktSQL    = sqlfiles.MustRead("predmkt/board_tape_markets.sql")
	predmktTapeTokSQL    = sqlfiles.MustRead("predmkt/board_tape_tokens.sql")
	predmktTapeMinSQL    = sqlfiles.MustRead("predmkt/board_tape_minutes.sql")
	predmktTapeSnapAtSQL = sqlfiles.MustRead("predmkt/board_tape_snap_at.sql")
)

// tapeFile identifies one file version.
type tapeFile struct {
	path string
	date string // the hive date=YYYY-MM-DD value of its directory; "" when none
	info os.FileInfo
}

func (f tapeFile) same(o tapeFile) bool {
	return f.path == o.path && f.info.Size() == o.info.Size() && f.info.ModTime().Equal(o.info.ModTime()) &&
		os.SameFile(f.info, o.info)
}

// tapeSpan is the ts and local_ts range of a file's rows; ok is false for an empty file.
type tapeSpan struct {
	ok                           bool
	minTS, maxTS, minLoc, maxLoc int64
	rows                         int64
}

// tapeTradeFile is what the index keeps of a trades file: its ts span, so a request
// opens only the date partitions its window can touch. The rows themselves stay in
// the file (sorted by token then time, so one token's trades are a few row groups):
// an index holding every fill grew with the lake (gigabytes on the large demo lake).
type tapeTradeFile struct {
	tapeFile
	span tapeSpan
}

// tapeSnap is the key of one book snapshot and its row in the file.
type tapeSnap struct{ ts, local, seq, row int64 }

// tapeMid is the last mid of a token in one file.
type tapeMid struct {
	local, seq int64
	mid        float64
}

type tapeBookFile struct {
	tapeFile
	span tapeSpan
	// The file's published snapshot digest (predmkt_tape_snaps, sorted by token then
	// (ts, local, seq)): /orderbook reads the row group of its token from it per
	// request. The keys are not held in memory: on the large demo lake they were
	// 325 MB of Go heap, a whole-table copy (issue 11's bounded memory).
	snapsPath string
	mids      map[string]tapeMid
	minutes   tapeMinutes
	// The mids of the file at the last clock it had to be re-read for (the file holds
	// mids recorded after that clock): a pinned clock reads the file once.
	atClock atomic.Pointer[clockMids]
}

type clockMids struct {
	now  int64
	mids map[string]tapeMid
}

// tapeMinutes counts a file's events per minute of local_ts: all[i] (and byType[t][i]
// for one event type) is the count of minute base+i.
type tapeMinutes struct {
	base   int64
	all    []int64
	byType map[string][]int64
}

// count is the number of events (of type typ when not "") in minute m.
func (h *tapeMinutes) count(m int64, typ string) int64 {
	c := h.all
	if typ != "" {
		c = h.byType[typ]
	}
	if i := m - h.base; i >= 0 && i < int64(len(c)) {
		return c[i]
	}
	return 0
}

// tapeIndex is one immutable version of the index.
type tapeIndex struct {
	trades []*tapeTradeFile
	books  []*tapeBookFile
	// The markets and tokens files (at most one each) and what the smart-money rows
	// take from them. A condition listed twice keeps its last row.
	meta    []tapeFile
	lastMid map[string]tapeMid // per token, the latest mid over every file
	markets map[string]tapeMarket
	yes     map[string]string // condition -> token of outcome 0
	// metaRepeats: a condition listed twice (or with two first-outcome tokens), which
	// a join would count twice: smart_money's Go path then gives way to its SQL.
	metaRepeats bool
}

type tapeMarket struct{ question, slug, category string }

type tapeState struct {
	cur      atomic.Pointer[tapeIndex]
	mu       sync.Mutex
	building *tapeBuild // the build in flight, if any; guarded by mu
}

// tapeBuild is one (re)build of the index, run detached from the request that
// started it so a cold build is never cut short by a request's deadline.
type tapeBuild struct {
	done chan struct{}
	ix   *tapeIndex
	err  error
}

type tapeKey struct{}

func (q *Queries) tapeState() *tapeState {
	v, _ := q.ext.LoadOrStore(tapeKey{}, &tapeState{})
	return v.(*tapeState)
}

// listTape lists the current files of a table with their identity: the files
// t.Files globs, found with one directory read and one stat per file, since this
// runs on every request that uses the index.
func (q *Queries) listTape(t *lake.Table, dirs map[string][]os.DirEntry) ([]tapeFile, error) {
	prefix := filepath.Join(q.dir, filepath.FromSlash(t.Prefix))
	var paths []string
	switch {
	case len(t.Partitions) == 0:
		paths = []string{filepath.Join(prefix, t.File)}
	case len(t.Partitions) == 1:
		ents, seen := dirs[prefix]
		if !seen {
			var err error
			if ents, err = os.ReadDir(prefix); err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			dirs[prefix] = ents
		}
		for _, d := range ents {
			if ok, _ := filepath.Match(t.Partitions[0]+"=*", d.Name()); ok {
				paths = append(paths, filepath.Join(prefix, d.Name(), t.File))
			}
		}
	default:
		var err error
		if paths, err = t.Files(q.dir); err != nil {
			return nil, err
		}
	}
	out := make([]tapeFile, 0, len(paths))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			return nil, err
		}
		if fi.IsDir() {
			continue
		}
		date := ""
		if _, v, ok := strings.Cut(filepath.Base(filepath.Dir(p)), "date="); ok {
			date = v
		}
		out = append(out, tapeFile{path: p, date: date, info: fi})
	}
	return out, nil
}

// predmktTape returns the index of the files as they are now, re-reading the files
// that changed since the last use. A request waits for a build in flight until its
// own deadline; the build goes on without it.
func (q *Queries) predmktTape(ctx context.Context) (*tapeIndex, error) {
	for range 3 {
		tf, bf, mf, kf, err := q.listTapeAll()
		if err != nil {
			return nil, err
		}
		meta := append(append([]tapeFile{}, mf...), kf...)
		st := q.tapeState()
		if ix := st.cur.Load(); ix != nil && ix.matches(tf, bf, meta) {
			return ix, nil
		}
		st.mu.Lock()
		b := st.building
		if b == nil {
			b = &tapeBuild{done: make(chan struct{})}
			st.building = b
			old := st.cur.Load()
			q.background(func(life context.Context) {
				bctx, cancel := context.WithTimeout(life, max(q.timeout, 10*time.Minute))
				defer cancel()
				b.ix, b.err = q.buildTape(bctx, old, tf, bf, mf, kf)
				st.mu.Lock()
				if b.err == nil {
					st.cur.Store(b.ix)
				}
				st.building = nil
				st.mu.Unlock()
				close(b.done)
			})
		}
		st.mu.Unlock()
		select {
		case <-b.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if b.err != nil {
			return nil, b.err
		}
		if b.ix.matches(tf, bf, meta) {
			return b.ix, nil
		}
		// That build started from an older listing: look again.
	}
	return nil, errors.New("predmkt tape index: the archive keeps changing")
}

// WarmPredmkt builds the hourly board and the tape index ahead of the first request
// (startup, benchmarks), without a request's deadline.
func (q *Queries) WarmPredmkt(ctx context.Context) error {
	step := q.warmSteps("predmkt")
	if q.publishOnly {
		// Published (or computed) by PublishPredmktBoard, not read back here.
		if _, _, err := q.PublishPredmktBoard(ctx); err != nil {
			return err
		}
	} else if _, err := q.PredmktBoard(ctx); err != nil {
		return err
	}
	step("board")
	_, err := q.predmktTape(ctx)
	step("tape index")
	return err
}

// listTapeAll lists the four tables the index covers.
func (q *Queries) listTapeAll() (tf, bf, mf, kf []tapeFile, err error) {
	dirs := map[string][]os.DirEntry{} // trades and book_events share their directories
	if tf, err = q.listTape(lake.PredmktTrades, dirs); err != nil {
		return
	}
	if bf, err = q.listTape(lake.PredmktBookEvents, dirs); err != nil {
		return
	}
	if mf, err = q.listTape(lake.PredmktMarkets, dirs); err != nil {
		return
	}
	kf, err = q.listTape(lake.PredmktTokens, dirs)
	return
}

func (ix *tapeIndex) matches(tf, bf, meta []tapeFile) bool {
	if len(tf) != len(ix.trades) || len(bf) != len(ix.books) || len(meta) != len(ix.meta) {
		return false
	}
	for i := range meta {
		if !meta[i].same(ix.meta[i]) {
			return false
		}
	}
	for i := range tf {
		if !tf[i].same(ix.trades[i].tapeFile) {
			return false
		}
	}
	for i := range bf {
		if !bf[i].same(ix.books[i].tapeFile) {
			return false
		}
	}
	return true
}

// buildTape makes the index of the listed files, reusing old's entries of unchanged
// files and reading the others a few at a time.
func (q *Queries) buildTape(ctx context.Context, old *tapeIndex, tf, bf, mf, kf []tapeFile) (*tapeIndex, error) {
	oldT, oldB := map[string]*tapeTradeFile{}, map[string]*tapeBookFile{}
	if old != nil {
		for _, f := range old.trades {
			oldT[f.path] = f
		}
		for _, f := range old.books {
			oldB[f.path] = f
		}
	}
	ix := &tapeIndex{trades: make([]*tapeTradeFile, len(tf)), books: make([]*tapeBookFile, len(bf))}
	var jobs []func() error
	for i, f := range tf {
		if o := oldT[f.path]; o != nil && o.same(f) {
			ix.trades[i] = o
			continue
		}
		jobs = append(jobs, func() (err error) { ix.trades[i], err = q.readTradeFile(ctx, f); return err })
	}
	for i, f := range bf {
		if o := oldB[f.path]; o != nil && o.same(f) {
			ix.books[i] = o
			continue
		}
		jobs = append(jobs, func() (err error) { ix.books[i], err = q.readBookFile(ctx, f); return err })
	}
	if err := runJobs(jobs, max(2, runtime.NumCPU())); err != nil {
		return nil, err
	}
	ix.lastMid = map[string]tapeMid{}
	for _, f := range ix.books {
		for tok, m := range f.mids {
			if b, ok := ix.lastMid[tok]; !ok || m.later(b) {
				ix.lastMid[tok] = m
			}
		}
	}
	if err := q.readTapeMeta(ctx, ix, mf, kf); err != nil {
		return nil, err
	}
	if len(jobs) > 0 || old == nil || len(old.trades)+len(old.books) != len(tf)+len(bf) {
		q.pruneTapeDigests(append(append([]tapeFile{}, tf...), bf...))
	}
	return ix, nil
}

// pruneTapeDigests removes the published digests of archive files that are no longer
// in the lake (a partition removed or renamed); those of a replaced file are replaced
// when it is read again.
func (q *Queries) pruneTapeDigests(files []tapeFile) {
	keep := map[string]bool{}
	for _, f := range files {
		if rel, err := filepath.Rel(q.dir, f.path); err == nil {
			keep["board="+tapeDigestBoard(rel)] = true
		}
	}
	for _, t := range []*lake.Table{lake.PredmktTapeSpans, lake.PredmktTapeSnaps, lake.PredmktTapeMids, lake.PredmktTapeMinutes} {
		dir := filepath.Join(q.dir, filepath.FromSlash(t.Prefix))
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "board=") && !keep[e.Name()] {
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					q.log.Warn("remove tape digest", "table", t.Name, "dir", e.Name(), "err", err)
				}
			}
		}
	}
}

// tapeDigestBoard is the board value of the digests of the archive file at rel (its
// path in the lake).
func tapeDigestBoard(rel string) string {
	return strings.NewReplacer("/", "~", "=", "-").Replace(filepath.ToSlash(rel))
}

// runJobs runs jobs on n workers and returns the first error.
func runJobs(jobs []func() error, n int) error {
	var mu sync.Mutex
	var first error
	next := make(chan func() error)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := j(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return first
}

// readTapeMeta reads the (small) markets and tokens files.
func (q *Queries) readTapeMeta(ctx context.Context, ix *tapeIndex, mf, kf []tapeFile) error {
	const op = "predmkt tape index markets"
	ix.meta = append(append([]tapeFile{}, mf...), kf...)
	ix.markets, ix.yes = map[string]tapeMarket{}, map[string]string{}
	for _, f := range mf {
		rows, err := q.db.QueryContext(ctx, predmktTapeMktSQL, f.path)
		if err != nil {
			return wrap(ctx, op, err)
		}
		for rows.Next() {
			var c string
			var m tapeMarket
			if err := rows.Scan(&c, &m.question, &m.slug, &m.category); err != nil {
				rows.Close()
				return wrap(ctx, op, err)
			}
			if _, dup := ix.markets[c]; dup {
				ix.metaRepeats = true
			}
			ix.markets[c] = m
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return wrap(ctx, op, err)
		}
	}
	for _, f := range kf {
		rows, err := q.db.QueryContext(ctx, predmktTapeTokSQL, f.path)
		if err != nil {
			return wrap(ctx, op, err)
		}
		for rows.Next() {
			var c, tok string
			if err := rows.Scan(&c, &tok); err != nil {
				rows.Close()
				return wrap(ctx, op, err)
			}
			if _, dup := ix.yes[c]; dup {
				ix.metaRepeats = true
			}
			ix.yes[c] = tok
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return wrap(ctx, op, err)
		}
	}
	return nil
}

func (q *Queries) readSpan(ctx context.Context, f tapeFile) (tapeSpan, error) {
	const op = "predmkt tape index"
	rows, err := q.tapeDigestRows(ctx, lake.PredmktTapeSpans, f, predmktTapeSpanSQL)
	if err != nil {
		return tapeSpan{}, wrap(ctx, op, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return tapeSpan{}, wrap(ctx, op, err)
		}
		return tapeSpan{}, wrap(ctx, op, sql.ErrNoRows)
	}
	var a, b, c, d sql.NullInt64
	var n int64
	if err := rows.Scan(&a, &b, &c, &d, &n); err != nil {
		return tapeSpan{}, wrap(ctx, op, err)
	}
	return tapeSpan{ok: a.Valid && c.Valid, minTS: a.Int64, maxTS: b.Int64, minLoc: c.Int64, maxLoc: d.Int64, rows: n}, wrap(ctx, op, rows.Err())
}

// tapeDigestRows returns the rows of one of the index's per-file queries (the file's
// path bound as $1, then args) from the digest published for this version of f,
// computing and publishing it first when there is none (lake/tables_boards.go). A
// digest depends on the file alone, never on the clock, so every store publishes it.
func (q *Queries) tapeDigestRows(ctx context.Context, t *lake.Table, f tapeFile, query string, args ...any) (*sql.Rows, error) {
	rel, err := filepath.Rel(q.dir, f.path)
	if err != nil {
		return nil, err
	}
	board := tapeDigestBoard(rel)
	rel = filepath.ToSlash(rel)
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", rel, f.info.Size(), f.info.ModTime().UnixNano()))
	// Read back in every store: the tape index is built from these digests.
	return q.derivedRows(ctx, t, board, "src_"+hex.EncodeToString(h[:6]), -1, true, nil, query, append([]any{f.path}, args...)...)
}

// tapeDigestFile is tapeDigestRows for a digest read per request: the path of the
// published digest of this version of f, computed and published first when missing.
func (q *Queries) tapeDigestFile(ctx context.Context, t *lake.Table, f tapeFile, query string) (string, error) {
	rel, err := filepath.Rel(q.dir, f.path)
	if err != nil {
		return "", err
	}
	board := tapeDigestBoard(rel)
	rel = filepath.ToSlash(rel)
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", rel, f.info.Size(), f.info.ModTime().UnixNano()))
	return q.derivedFile(ctx, t, board, "src_"+hex.EncodeToString(h[:6]), -1, nil, query, f.path)
}

func (q *Queries) readTradeFile(ctx context.Context, f tapeFile) (*tapeTradeFile, error) {
	span, err := q.readSpan(ctx, f)
	if err != nil {
		return nil, err
	}
	return &tapeTradeFile{tapeFile: f, span: span}, nil
}

func (q *Queries) readBookFile(ctx context.Context, f tapeFile) (*tapeBookFile, error) {
	const op = "predmkt tape index"
	span, err := q.readSpan(ctx, f)
	if err != nil {
		return nil, err
	}
	e := &tapeBookFile{tapeFile: f, span: span}
	if e.snapsPath, err = q.tapeDigestFile(ctx, lake.PredmktTapeSnaps, f, predmktTapeBooksSQL); err != nil {
		return nil, wrap(ctx, op, err)
	}
	if e.mids, err = q.fileMids(ctx, f, maxInt64); err != nil {
		return nil, err
	}
	if e.minutes, err = q.fileMinutes(ctx, f, span); err != nil {
		return nil, err
	}
	return e, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func (q *Queries) fileMinutes(ctx context.Context, f tapeFile, span tapeSpan) (tapeMinutes, error) {
	const op = "predmkt tape index minutes"
	h := tapeMinutes{byType: map[string][]int64{}}
	if !span.ok {
		return h, nil
	}
	h.base = floorDiv(span.minLoc, 60_000)
	n := floorDiv(span.maxLoc, 60_000) - h.base + 1
	h.all = make([]int64, n)
	rows, err := q.tapeDigestRows(ctx, lake.PredmktTapeMinutes, f, predmktTapeMinSQL)
	if err != nil {
		return h, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m, c int64
		var typ string
		if err := rows.Scan(&m, &typ, &c); err != nil {
			return h, wrap(ctx, op, err)
		}
		i := m - h.base
		if i < 0 || i >= n {
			continue // outside the span read a moment ago: the file changed; the next use re-reads it
		}
		h.all[i] += c
		if h.byType[typ] == nil {
			h.byType[typ] = make([]int64, n)
		}
		h.byType[typ][i] += c
	}
	return h, wrap(ctx, op, rows.Err())
}

// eventsBound returns an end (exclusive, at most to) such that the events of type typ
// ("" for all) with local_ts in [start, end) number at least need, counting minute by
// minute over every file. The minute holding start may hold events before start or
// before a cursor, so its whole count is required on top.
func (ix *tapeIndex) eventsBound(start, to, need int64, typ string) int64 {
	first := floorDiv(start, 60_000)
	last := floorDiv(to-1, 60_000)
	var files []*tapeBookFile
	for _, f := range ix.books {
		if f.span.ok && f.span.maxLoc >= start && f.span.minLoc < to {
			files = append(files, f)
		}
	}
	var total, firstCount int64
	for _, f := range files {
		firstCount += f.minutes.count(first, typ)
	}
	need += firstCount
	for m := first; m <= last; m++ {
		for _, f := range files {
			total += f.minutes.count(m, typ)
		}
		if total >= need {
			return min((m+1)*60_000, to)
		}
	}
	return to
}

const maxInt64 = int64(^uint64(0) >> 1)

// fileMids reads the last mid per token of one file among events recorded at or
// before now (local_ts): from the file's published digest for every row (now the
// largest BIGINT), else from the file.
func (q *Queries) fileMids(ctx context.Context, f tapeFile, now int64) (map[string]tapeMid, error) {
	const op = "predmkt tape index mids"
	var rows *sql.Rows
	var err error
	if now == maxInt64 {
		rows, err = q.tapeDigestRows(ctx, lake.PredmktTapeMids, f, predmktTapeMidsSQL, now)
	} else {
		rows, err = q.db.QueryContext(ctx, predmktTapeMidsSQL, f.path, now)
	}
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	out := map[string]tapeMid{}
	for rows.Next() {
		var tok string
		var m tapeMid
		if err := rows.Scan(&tok, &m.mid, &m.local, &m.seq); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out[tok] = m
	}
	return out, wrap(ctx, op, rows.Err())
}

// later orders mids by (local_ts, seq).
func (m tapeMid) later(o tapeMid) bool {
	return m.local > o.local || (m.local == o.local && m.seq > o.seq)
}

// tapeMids is mids.sql from the index: the latest mid of each token recorded at or
// before now. A file holding mids recorded after now is read again with the clock.
func (q *Queries) tapeMids(ctx context.Context, ix *tapeIndex, tokens []string, now int64) (map[string]float64, error) {
	out := make(map[string]float64, len(tokens))
	var rest []string
	for _, tok := range tokens {
		m, ok := ix.lastMid[tok]
		switch {
		case !ok: // no mid recorded at all
		case m.local <= now: // the latest mid of the whole tape is not after the clock
			out[tok] = m.mid
		default:
			rest = append(rest, tok)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	tokens = rest
	best := map[string]tapeMid{}
	for _, f := range ix.books {
		mids := f.mids
		for _, tok := range tokens {
			if m, ok := mids[tok]; ok && m.local > now {
				if c := f.atClock.Load(); c != nil && c.now == now {
					mids = c.mids
					break
				}
				var err error
				if mids, err = q.fileMids(ctx, f.tapeFile, now); err != nil {
					return nil, err
				}
				f.atClock.Store(&clockMids{now, mids})
				break
			}
		}
		for _, tok := range tokens {
			if m, ok := mids[tok]; ok {
				if b, seen := best[tok]; !seen || m.later(b) {
					best[tok] = m
				}
			}
		}
	}
	for tok, m := range best {
		out[tok] = m.mid
	}
	return out, nil
}

// tapeSnapshot finds the snapshot /orderbook serves: the greatest (ts, local_ts, seq)
// of the token's book events with ts at or before ts. ok is false when there is none.
// Each file's candidate is the last of its digest rows (token, then key order) with ts
// at or before ts, read from the digest's row groups of the token
// (board_tape_snap_at.sql); between files the later key wins and, on equal keys, the
// first file listed, as the in-memory index did. The file whose rows reach latest is
// read first, and the others only when they can hold a later key.
func (q *Queries) tapeSnapshot(ctx context.Context, ix *tapeIndex, token string, ts int64) (f *tapeBookFile, s tapeSnap, ok bool, err error) {
	var cand []*tapeBookFile
	for _, bf := range ix.books {
		if bf.span.ok && bf.span.minTS <= ts {
			cand = append(cand, bf)
		}
	}
	if len(cand) == 0 {
		return nil, s, false, nil
	}
	latest := cand[0]
	for _, bf := range cand[1:] {
		if bf.span.maxTS > latest.span.maxTS {
			latest = bf
		}
	}
	best := map[string]tapeSnap{} // digest path -> that file's candidate
	if err := q.snapsAt(ctx, []string{latest.snapsPath}, token, ts, best); err != nil {
		return nil, s, false, err
	}
	first, found := best[latest.snapsPath]
	var rest []string
	for _, bf := range cand {
		if bf != latest && (!found || bf.span.maxTS >= first.ts) {
			rest = append(rest, bf.snapsPath)
		}
	}
	if len(rest) > 0 {
		if err := q.snapsAt(ctx, rest, token, ts, best); err != nil {
			return nil, s, false, err
		}
	}
	for _, bf := range ix.books {
		c, has := best[bf.snapsPath]
		if has && (!ok || snapAfter(c, s)) {
			f, s, ok = bf, c, true
		}
	}
	return f, s, ok, nil
}

// snapsAt adds to best each digest file's last snapshot of token with ts at or before ts.
func (q *Queries) snapsAt(ctx context.Context, paths []string, token string, ts int64, best map[string]tapeSnap) error {
	rows, err := q.db.QueryContext(ctx, predmktTapeSnapAtSQL, paths, token, ts)
	if err != nil {
		return wrap(ctx, "predmkt orderbook", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var s tapeSnap
		if err := rows.Scan(&p, &s.ts, &s.local, &s.seq, &s.row); err != nil {
			return wrap(ctx, "predmkt orderbook", err)
		}
		best[p] = s
	}
	return wrap(ctx, "predmkt orderbook", rows.Err())
}

func snapAfter(a, b tapeSnap) bool {
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(a.local, b.local); c != 0 {
		return c > 0
	}
	return a.seq > b.seq
}

// tapeDates returns the smallest and largest hive date of the files whose rows can
// fall in [lo, hi] (ts when byLocal is false, local_ts when true); ok is false when
// no file can. A file without a date directory makes the range unbounded.
func tapeDates(files []tapeFile, spans []tapeSpan, lo, hi int64, byLocal bool) (from, to string, ok bool) {
	for i, f := range files {
		sp := spans[i]
		if !sp.ok {
			continue
		}
		a, b := sp.minTS, sp.maxTS
		if byLocal {
			a, b = sp.minLoc, sp.maxLoc
		}
		if b < lo || a > hi {
			continue
		}
		if f.date == "" {
			return "0001-01-01", "9999-12-31", true
		}
		if !ok || f.date < from {
			from = f.date
		}
		if !ok || f.date > to {
			to = f.date
		}
		ok = true
	}
	return from, to, ok
}

// tradeDates is tapeDates over the trades files, on ts.
func (ix *tapeIndex) tradeDates(lo, hi int64) (string, string, bool) {
	files, spans := make([]tapeFile, len(ix.trades)), make([]tapeSpan, len(ix.trades))
	for i, f := range ix.trades {
		files[i], spans[i] = f.tapeFile, f.span
	}
	return tapeDates(files, spans, lo, hi, false)
}

// bookDates is tapeDates over the book_events files, on local_ts.
func (ix *tapeIndex) bookDates(lo, hi int64) (string, string, bool) {
	files, spans := make([]tapeFile, len(ix.books)), make([]tapeSpan, len(ix.books))
	for i, f := range ix.books {
		files[i], spans[i] = f.tapeFile, f.span
	}
	return tapeDates(files, spans, lo, hi, true)
}
