package query

import (
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexPositionsBatchSQL  = sqlfiles.MustRead("perpdex/positions_batch.sql")
	perpdexPositionsWindowSQL = sqlfiles.MustRead("perpdex/positions_window.sql")
)

// pdMatchSet is what positions/match searches, held in memory: each wallet's latest
// row per coin among the snapshots within 15 minutes of the newest batch at or before
// the store clock. It answers for every clock reading in [newest, next) as long as the
// position files are the ones it was read from (files: path, size and modification
// time of each), which is exactly when the SQL would find the same batch and rows.
type pdMatchSet struct {
	newest, next time.Time // next is zero when no batch follows the clock it was read at
	files        []pdFileStamp
	byCoin       map[string][]pdPosRow
}

type pdFileStamp struct {
	path string
	size int64
	mod  time.Time
}

type pdPosRow struct {
	wallet                                     string
	ts                                         time.Time
	szi, entry, mark, lev, liq, upnl, posValue float64
}

type pdMatchState struct {
	mu  sync.Mutex
	set *pdMatchSet
}

type pdMatchKey struct{}

func (q *Queries) pdMatch() *pdMatchState {
	v, _ := q.ext.LoadOrStore(pdMatchKey{}, &pdMatchState{})
	return v.(*pdMatchState)
}

// pdStamp returns the stamp of a file or directory (zero when it is absent).
func pdStamp(path string) pdFileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return pdFileStamp{path: path, size: -1}
	}
	return pdFileStamp{path, fi.Size(), fi.ModTime()}
}

// pdMatchFiles stamps the table's directory (a new or removed date partition changes
// its modification time) and every file (lake files are replaced by rename, which
// changes their stamp). matchSet keeps the files a batch's answers can depend on.
func (q *Queries) pdMatchFiles() ([]pdFileStamp, error) {
	paths, err := lake.PerpdexPositions.Files(q.dir)
	if err != nil {
		return nil, err
	}
	out := []pdFileStamp{pdStamp(filepath.Join(q.dir, filepath.FromSlash(lake.PerpdexPositions.Prefix)))}
	for _, p := range paths {
		out = append(out, pdStamp(p))
	}
	return out, nil
}

// pdPartitionDate is the date=YYYY-MM-DD value of a partition file's path.
func pdPartitionDate(path string) string {
	_, d, ok := strings.Cut(filepath.ToSlash(path), "/date=")
	if !ok {
		return ""
	}
	d, _, _ = strings.Cut(d, "/")
	return d
}

// unchanged re-stamps the files s was read from.
func (s *pdMatchSet) unchanged() bool {
	for _, f := range s.files {
		if g := pdStamp(f.path); g.size != f.size || !g.mod.Equal(f.mod) {
			return false
		}
	}
	return true
}

// matchSet returns the in-memory batch for the store clock now, reloading it when the
// clock left [newest, next) or the files it depends on changed.
func (q *Queries) matchSet(ctx context.Context, now time.Time) (*pdMatchSet, error) {
	st := q.pdMatch()
	st.mu.Lock()
	defer st.mu.Unlock()
	if s := st.set; s != nil && (s.newest.IsZero() || !now.Before(s.newest)) &&
		(s.next.IsZero() || now.Before(s.next)) && s.unchanged() {
		return s, nil
	}
	// Stamped before reading: a file replaced during the read fails the next check.
	files, ferr := q.pdMatchFiles()
	s, err := q.loadMatchSet(ctx, now)
	if err != nil {
		return nil, err
	}
	if ferr != nil {
		st.set = nil
		return s, nil // serve the fresh read, cache nothing
	}
	if !s.newest.IsZero() { // earlier dates cannot matter: keep the directory and later files
		lo := s.newest.Add(-15 * time.Minute).Format(time.DateOnly)
		kept := files[:1]
		for _, f := range files[1:] {
			if d := pdPartitionDate(f.path); d == "" || d >= lo {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	s.files = files
	st.set = s
	return s, nil
}

func (q *Queries) loadMatchSet(ctx context.Context, now time.Time) (*pdMatchSet, error) {
	const op = "perpdex positions match"
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	day := now.UTC().Truncate(24 * time.Hour)
	var newest, next sql.NullTime
	// The newest batch is nearly always in the clock's date or the one before; only
	// when neither holds a batch at or before the clock is every earlier date read.
	if err := q.db.QueryRowContext(ctx, perpdexPositionsBatchSQL, day.AddDate(0, 0, -1), day, now).Scan(&newest, &next); err != nil {
		return nil, wrap(ctx, op, err)
	}
	if !newest.Valid {
		if err := q.db.QueryRowContext(ctx, perpdexPositionsBatchSQL, time.Unix(0, 0).UTC(), day, now).Scan(&newest, &next); err != nil {
			return nil, wrap(ctx, op, err)
		}
	}
	s := &pdMatchSet{byCoin: map[string][]pdPosRow{}}
	if next.Valid {
		s.next = next.Time
	}
	if !newest.Valid {
		return s, nil // no batch at or before the clock: every search is empty
	}
	s.newest = newest.Time
	rows, err := q.db.QueryContext(ctx, perpdexPositionsWindowSQL, newest.Time)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r pdPosRow
		var coin string
		if err := rows.Scan(&r.wallet, &coin, &r.ts, &r.szi, &r.entry, &r.mark, &r.lev, &r.liq, &r.upnl, &r.posValue); err != nil {
			return nil, wrap(ctx, op, err)
		}
		s.byCoin[coin] = append(s.byCoin[coin], r)
	}
	return s, wrap(ctx, op, rows.Err())
}

// PerpdexMatchPositions finds positions matching coin, side, leverage and entry
// (positions/match) in the newest batch held in memory. It answers exactly what
// sql/perpdex/positions_match.sql answers: same side, |leverage − L| ≤ 0.5, the first
// tolerance band holding any match, ordered by |entry − mark hint|, then distance,
// then wallet, cut at limit.
func (q *Queries) PerpdexMatchPositions(ctx context.Context, m MatchQuery, limit int) (MatchPage, error) {
	page := MatchPage{Matches: []PositionMatch{}, Query: m}
	s, err := q.matchSet(ctx, q.Now())
	if err != nil {
		return page, err
	}
	type cand struct {
		r    *pdPosRow
		dist float64
		band int
	}
	var cands []cand
	best := len(PerpdexToleranceBands)
	for i := range s.byCoin[m.Coin] {
		r := &s.byCoin[m.Coin][i]
		if (m.Side == "short") != (r.szi < 0) || r.szi == 0 || math.Abs(r.lev-m.Leverage) > 0.5 {
			continue
		}
		dist := math.Abs(r.entry-m.EntryPrice) / m.EntryPrice
		for b, t := range PerpdexToleranceBands {
			if dist <= t.Frac {
				cands = append(cands, cand{r, dist, b})
				best = min(best, b)
				break
			}
		}
	}
	kept := cands[:0]
	for _, c := range cands {
		if c.band == best {
			kept = append(kept, c)
		}
	}
	sort.Slice(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		da, db := math.Abs(a.r.entry-m.MarkPriceHint), math.Abs(b.r.entry-m.MarkPriceHint)
		if da != db {
			return da < db
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.r.wallet < b.r.wallet
	})
	if len(kept) > limit {
		kept = kept[:limit]
	}
	for _, c := range kept {
		r := c.r
		page.Matches = append(page.Matches, PositionMatch{
			Address: r.wallet, Coin: m.Coin, Side: m.Side, SnapshotTS: r.ts.Unix(),
			SizeToken: math.Abs(r.szi), SizeUsd: Round(r.posValue, 2), EntryPrice: r.entry, MarkPrice: r.mark,
			Leverage: r.lev, LiquidationPrice: r.liq, UnrealizedPnl: Round(r.upnl, 2),
			EntryDistPct: Round(c.dist*100, 6),
		})
	}
	if len(page.Matches) > 0 {
		name := PerpdexToleranceBands[best].Name
		page.ToleranceUsed = &name
	}
	page.MatchCount = len(page.Matches)
	return page, nil
}
