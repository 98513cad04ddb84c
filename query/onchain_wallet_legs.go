package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	walletLegsSegmentSQL = sqlfiles.MustRead("onchain/wallet_legs_segment.sql")
	walletLegsMacroSQL   = sqlfiles.MustRead("onchain/wallet_legs_macro.sql")
	walletDaysSegmentSQL = sqlfiles.MustRead("onchain/wallet_days_segment.sql")
	walletDaysMacroSQL   = sqlfiles.MustRead("onchain/wallet_days_macro.sql")
)

// walletLegsSourcesFile is the sidecar of onchain_wallet_legs: the split dates and,
// for every transfers partition dated up to the recent split, the signature of the
// transfers file its legs were computed from when the segments were written.
const walletLegsSourcesFile = "onchain/wallet_legs/_sources.json"

// walletRecentDays bounds the recent segment: a publication that would leave more days
// than this after the history split compacts (rewrites the history segment up to the
// newest complete day). Between compactions, one more day rewrites only the recent
// segments (at most this many days of legs).
const walletRecentDays = 7

// noSplit is the split of a lake without wallet segments: every leg from onchain_legs.
const noSplit = "0001-01-01"

type walletLegsSide struct {
	History string            `json:"history"` // dates <= History are in the history segments
	Recent  string            `json:"recent"`  // dates in (History, Recent] in the recent ones
	Sources map[string]string `json:"sources"` // "chain=X/date=D" -> transfers signature, dates <= Recent
	// Layout is walletLayout when the segments (and the edges and bands) were written:
	// segments of another layout (other columns) are removed and written again whole.
	Layout string `json:"layout,omitempty"`
}

// walletLayout names the queries that write the wallet segments, edges, bands and
// holders base: a change to one of them changes the files' columns or contents.
var walletLayout = func() string {
	h := sha256.Sum256([]byte(walletLegsSegmentSQL + walletDaysSegmentSQL + walletEdgesPublishSQL + walletBandsPublishSQL + holdersBasePublishSQL))
	return hex.EncodeToString(h[:6])
}()

// WalletSegmentsPublication is what a publication of onchain_wallet_legs did.
type WalletSegmentsPublication struct {
	History, Recent string   // the split dates now published
	Compacted       bool     // the history segments moved to the new split
	Written         []string // segment files rewritten ("chain=X/segment=S", all buckets)
	Edges           string   // the serving date onchain_wallet_edges was written for ("": not written)
	Took            time.Duration
}

func readWalletLegsSide(dir string) (walletLegsSide, error) {
	var side walletLegsSide
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(walletLegsSourcesFile)))
	if errors.Is(err, os.ErrNotExist) {
		return side, nil
	}
	if err != nil {
		return side, err
	}
	if json.Unmarshal(b, &side) != nil {
		return walletLegsSide{}, nil // a damaged sidecar only costs a full republication
	}
	return side, nil
}

func writeWalletLegsSide(dir string, side walletLegsSide) error {
	b, err := json.MarshalIndent(side, "", " ")
	if err != nil {
		return err
	}
	return lake.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(walletLegsSourcesFile)), append(b, '\n'))
}

// walletSplitFor is the recent split R the transfers partitions src call for: the
// newest date before the newest date of any chain ("" with fewer than two dates). The
// newest date (today, still growing) stays in the per-date legs, whose file is
// rewritten each time its source grows.
func walletSplitFor(src map[string]string) string {
	dates := map[string]bool{}
	for part := range src {
		_, d := splitPart(part)
		dates[d] = true
	}
	ds := make([]string, 0, len(dates))
	for d := range dates {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	if len(ds) < 2 {
		return ""
	}
	return ds[len(ds)-2]
}

// upTo is the part of src dated at or before d.
func upTo(src map[string]string, d string) map[string]string {
	out := map[string]string{}
	for part, sig := range src {
		if _, pd := splitPart(part); d != "" && pd <= d {
			out[part] = sig
		}
	}
	return out
}

// walletLegsCurrent reports whether the wallet segments are those src calls for.
func walletLegsCurrent(src map[string]string, side walletLegsSide) bool {
	r := walletSplitFor(src)
	return side.Recent == r && maps.Equal(upTo(src, r), side.Sources) && (side.History == "" || side.Layout == walletLayout)
}

func daysBetween(a, b string) int {
	ta, err1 := time.Parse(time.DateOnly, a)
	tb, err2 := time.Parse(time.DateOnly, b)
	if err1 != nil || err2 != nil {
		return 1 << 30
	}
	return int(tb.Sub(ta) / (24 * time.Hour))
}

// publishWalletLegs brings onchain_wallet_legs up to date with the published per-date
// legs, whose sources are src (the caller holds the lake's legs lock and has just
// published them). Per chain, the history segments are rewritten when the split moves
// (compaction) or one of their days changed (a late, corrected or removed day); the
// recent segments when a day after the history split changed or a new day arrived.
// Every file is written atomically, and the sidecar last: a request reads each segment
// only over the dates the sidecar it read gives it, and a rewritten segment holds those
// dates too (the history only grows; a compaction leaves the recent files, whose dates
// the new split no longer reads, for the next publication to replace).
func (q *Queries) publishWalletLegs(ctx context.Context, conn *sql.Conn, src map[string]string) (WalletSegmentsPublication, error) {
	start := time.Now()
	side, err := readWalletLegsSide(q.dir)
	if err != nil {
		return WalletSegmentsPublication{}, err
	}
	r := walletSplitFor(src)
	if side.History != "" && side.Layout != walletLayout {
		// Segments of another layout: no request reads them once the sidecar names no
		// split (every leg from onchain_legs), then they are written again whole.
		if err := writeWalletLegsSide(q.dir, walletLegsSide{Sources: map[string]string{}}); err != nil {
			return WalletSegmentsPublication{}, err
		}
		if err := removeWalletLegs(q.dir); err != nil {
			return WalletSegmentsPublication{}, err
		}
		side = walletLegsSide{}
	}
	pub := WalletSegmentsPublication{History: side.History, Recent: side.Recent}
	if walletLegsCurrent(src, side) {
		// The edges, unless current (a lake published before they existed).
		day, err := q.publishWalletEdges(ctx, conn, side)
		if err == nil && day != "" {
			pub.Edges = day
			err = q.Reload(ctx) // the table's first files need its view
		}
		pub.Took = time.Since(start)
		return pub, err
	}
	if r == "" { // fewer than two days: everything from the per-date legs
		if err := removeWalletLegs(q.dir); err != nil {
			return pub, err
		}
		if err := writeWalletLegsSide(q.dir, walletLegsSide{Sources: map[string]string{}}); err != nil {
			return pub, err
		}
		pub.History, pub.Recent, pub.Took = "", "", time.Since(start)
		return pub, nil
	}
	h := side.History
	compact := h == "" || r < h || daysBetween(h, r) > walletRecentDays
	if compact {
		h = r
		pub.Compacted = true
	}
	chains := map[string]bool{}
	for _, m := range []map[string]string{src, side.Sources} {
		for part := range m {
			c, _ := splitPart(part)
			chains[c] = true
		}
	}
	names := make([]string, 0, len(chains))
	for c := range chains {
		names = append(names, c)
	}
	sort.Strings(names)
	// changed reports whether chain c's sources dated in (lo, hi] differ from the ones
	// the segments were written from.
	changed := func(c, lo, hi string) bool {
		pick := func(m map[string]string) map[string]string {
			out := map[string]string{}
			for part, sig := range m {
				pc, d := splitPart(part)
				if pc == c && d > lo && d <= hi {
					out[part] = sig
				}
			}
			return out
		}
		return !maps.Equal(pick(src), pick(side.Sources))
	}
	step := q.warmSteps("onchain wallet legs publication")
	for _, c := range names {
		if compact || changed(c, "", h) {
			if err := q.writeWalletSegment(ctx, conn, c, "history", noSplit, h); err != nil {
				return pub, err
			}
			pub.Written = append(pub.Written, "chain="+c+"/segment=history")
			step("chain=" + c + "/segment=history")
		}
		// After a compaction the recent segment has no dates (h = r); its files stay
		// until the next publication replaces them, for requests that still read the
		// previous split.
		if !compact && (side.Recent != r || changed(c, h, r)) {
			if err := q.writeWalletSegment(ctx, conn, c, "recent", h, r); err != nil {
				return pub, err
			}
			pub.Written = append(pub.Written, "chain="+c+"/segment=recent")
			step("chain=" + c + "/segment=recent")
		}
	}
	side = walletLegsSide{History: h, Recent: r, Sources: upTo(src, r), Layout: walletLayout}
	if err := writeWalletLegsSide(q.dir, side); err != nil {
		return pub, err
	}
	// The summary reads the segments until the edges of the new split are published.
	day, err := q.publishWalletEdges(ctx, conn, side)
	if err != nil {
		return pub, err
	}
	pub.Edges = day
	step("edges and bands")
	if err := q.Reload(ctx); err != nil { // the tables' first files need their views
		return pub, err
	}
	pub.History, pub.Recent, pub.Took = h, r, time.Since(start)
	return pub, nil
}

// writeWalletSegment rewrites the segment files of chain c, one per bucket, of both
// onchain_wallet_legs and onchain_wallet_days, with the legs dated in (lo, hi]; a
// bucket without legs there loses its files.
func (q *Queries) writeWalletSegment(ctx context.Context, conn *sql.Conn, c, segment, lo, hi string) error {
	for _, b := range walletBuckets {
		wlo, whi := bucketRange(b)
		for _, w := range []struct {
			t   *lake.Table
			sql string
		}{{lake.OnchainWalletLegs, walletLegsSegmentSQL}, {lake.OnchainWalletDays, walletDaysSegmentSQL}} {
			n, err := lake.CopyQuery(ctx, conn, q.dir, w.t, []string{c, b, segment}, w.sql, c, lo, hi, wlo, whi)
			if err != nil {
				return err
			}
			if n == 0 {
				rel, err := w.t.Path(c, b, segment)
				if err != nil {
					return err
				}
				f := filepath.Join(q.dir, filepath.FromSlash(rel))
				if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
		}
	}
	return nil
}

// walletBuckets are the first hex digits of a lower-case address: the routes take only
// 0x addresses of 40 hex digits, lower-cased.
var walletBuckets = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"}

func removeWalletLegs(dir string) error {
	if err := removeWalletEdges(dir, ""); err != nil {
		return err
	}
	for _, t := range []*lake.Table{lake.OnchainWalletLegs, lake.OnchainWalletDays} {
		files, err := t.Files(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// walletSplitCache keeps the parsed sidecar per lake, re-read when its file changes.
var walletSplitCache sidecarCache[walletSplitEntry]

type walletSplitEntry struct {
	h, r string
	tag  string         // walletSplitTag of the sidecar ("" without a split)
	side walletLegsSide // the sidecar (the edges' tag is of its sources up to their horizon)
}

// sidecarCache keeps, per lake, a value parsed from a sidecar file, parsed again only
// when the file's size or modification time changed (a stat is a few microseconds; a
// sidecar is rewritten as a new file renamed into place, with a new modification time).
type sidecarCache[T any] struct{ m sync.Map } // lake dir -> *sidecarEntry[T]

type sidecarEntry[T any] struct {
	size  int64
	mtime time.Time
	v     T
}

// get returns the value parsed from the sidecar at path of lake dir, and false when
// the file cannot be statted (parse is not called).
func (c *sidecarCache[T]) get(dir, path string, parse func() T) (T, bool) {
	st, err := os.Stat(path)
	if err != nil {
		var zero T
		return zero, false
	}
	if v, ok := c.m.Load(dir); ok {
		if e := v.(*sidecarEntry[T]); e.size == st.Size() && e.mtime.Equal(st.ModTime()) {
			return e.v, true
		}
	}
	e := &sidecarEntry[T]{size: st.Size(), mtime: st.ModTime(), v: parse()}
	c.m.Store(dir, e)
	return e.v, true
}

// walletSplit returns the split dates (h, r) a per-wallet query passes to wallet_legs:
// the last published ones, or noSplit (every leg from onchain_legs) without a
// publication. It stats the sidecar (a few microseconds) and parses it only when it
// changed.
func (q *Queries) walletSplit() (h, r string) {
	e, ok := q.walletSplitEntry()
	if !ok {
		return noSplit, noSplit
	}
	return e.h, e.r
}

func (q *Queries) walletSplitEntry() (walletSplitEntry, bool) {
	return walletSplitCache.get(q.dir, filepath.Join(q.dir, filepath.FromSlash(walletLegsSourcesFile)), func() walletSplitEntry {
		side, err := readWalletLegsSide(q.dir)
		if err != nil || side.History == "" || side.Recent == "" {
			return walletSplitEntry{h: noSplit, r: noSplit}
		}
		return walletSplitEntry{h: side.History, r: side.Recent, tag: walletSplitTag(side), side: side}
	})
}

// WalletLegsSplit is walletSplit for benchmarks and tests that run the per-wallet SQL
// files directly (with WalletSQLArgs).
func (q *Queries) WalletLegsSplit() (h, r string) { return q.walletSplit() }

// ensureWalletLegsMacro defines the wallet_legs table macro the per-wallet SQL reads
// (once per store; the macro binds the views when it is called, so a view recreated
// later is picked up).
func (q *Queries) ensureWalletLegsMacro(ctx context.Context, st *legsState) error {
	if st.macro.Load() {
		return nil
	}
	q.ddl.Lock()
	defer q.ddl.Unlock()
	if st.macro.Load() {
		return nil // another request defined them while this one waited
	}
	for _, m := range []string{walletLegsMacroSQL, walletDaysMacroSQL} {
		if err := q.execDDL(ctx, m); err != nil {
			return wrap(ctx, "onchain wallet legs", err)
		}
	}
	st.macro.Store(true)
	return nil
}
