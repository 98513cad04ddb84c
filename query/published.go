package query

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mdq/lake"
)

// Readiness is about the lake, not the Go heap: an area is ready when its derived
// tables are current for the serving clock (the legs and closed trades for the raw
// files as they are, the cohort labels through the hour, and every hourly board and
// tape digest a route reads published for the serving hour and the sources as they
// are). Reading those boards back into memory is not part of it: a request that
// arrives first reads the published file (the hourly caches wait for that read, which
// takes what reading a file takes, never a computation).

// PublishedCurrent reports, per area of ReadyAreas, whether its derived tables are
// current for the serving clock, bringing the cheap incremental ones (legs, closed
// trades, cohort labels) up to date on the way as a warm would. An area whose
// hourly boards are not all published for the hour is not current (its warm computes
// them). It reads no board rows: a start whose boards are published is ready in the
// time it takes to stat their files.
func (q *Queries) PublishedCurrent(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	var err error
	if out["predmkt"], err = q.predmktPublished(ctx); err != nil {
		return out, err
	}
	if err := q.PerpdexCohortsWarm(ctx); err != nil {
		return out, err
	}
	out["perpdex_cohorts"] = true
	if out["perpdex"], err = q.perpdexPublished(ctx); err != nil {
		return out, err
	}
	if out["onchain"], err = q.onchainPublished(ctx); err != nil {
		return out, err
	}
	return out, nil
}

// published reports whether the board of (t, board) for hour at from sources with
// signature sig is in the lake.
func (q *Queries) published(t *lake.Table, board string, at time.Time, sig string) (bool, error) {
	rel, err := t.Path(board, boardBuilt(at, sig))
	if err != nil {
		return false, err
	}
	return fileExists(filepath.Join(q.dir, filepath.FromSlash(rel))), nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// predmktPublished: the board of the hour, and every digest of every archive file
// version of the tape index.
func (q *Queries) predmktPublished(ctx context.Context) (bool, error) {
	_, path, err := q.predmktBoardFile(q.Now().Truncate(time.Hour))
	if err != nil {
		return false, err
	}
	if !fileExists(path) {
		return false, nil // none for the hour and the current sources: the warm computes it
	}
	tf, bf, _, _, err := q.listTapeAll()
	if err != nil {
		return false, err
	}
	digest := func(t *lake.Table, f tapeFile) (bool, error) {
		rel, err := filepath.Rel(q.dir, f.path)
		if err != nil {
			return false, err
		}
		board := tapeDigestBoard(rel)
		h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", filepath.ToSlash(rel), f.info.Size(), f.info.ModTime().UnixNano()))
		p, err := t.Path(board, "src_"+hex.EncodeToString(h[:6]))
		if err != nil {
			return false, err
		}
		return fileExists(filepath.Join(q.dir, filepath.FromSlash(p))), nil
	}
	check := func(files []tapeFile, tables ...*lake.Table) (bool, error) {
		for _, f := range files {
			for _, t := range tables {
				if ok, err := digest(t, f); err != nil || !ok {
					return false, err
				}
			}
		}
		return true, nil
	}
	if ok, err := check(tf, lake.PredmktTapeSpans); err != nil || !ok {
		return false, err
	}
	// An empty book_events file has no minutes digest (nothing to count): such a lake is
	// reported not current, and its warm reads the index as before.
	return check(bf, lake.PredmktTapeSpans, lake.PredmktTapeSnaps, lake.PredmktTapeMids, lake.PredmktTapeMinutes)
}

// perpdexPublished: the closed trades current for the fills, and every window's
// leaderboard buckets and builders board published for the board hour.
func (q *Queries) perpdexPublished(ctx context.Context) (bool, error) {
	if _, err := q.PublishPerpdexClosedTrades(ctx); err != nil {
		return false, err
	}
	if err := q.perpdexEnsure(ctx); err != nil {
		return false, err
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return false, err
	}
	at := PerpdexBoardTime(q.Now())
	lab, err := q.perpdexLabelsAt(ctx, at)
	if err != nil {
		return false, err
	}
	sig, err := q.perpdexBoardSig(lab.current)
	if err != nil {
		return false, err
	}
	fills, err := filesSignature(q.dir, lake.PerpdexFills)
	if err != nil {
		return false, &StoreError{Op: "perpdex builders", Err: err}
	}
	for _, w := range PerpdexWindowNames {
		for _, g := range perpdexBoardGroups {
			if ok, err := q.published(lake.PerpdexBoard, w+"."+g, at, sig); err != nil || !ok {
				return false, err
			}
		}
		// As builderBoard names the window's board (and the lifetime one, "all").
		start, board := PerpdexWindowStart(w, at), "all"
		if start.After(time.Unix(0, 0)) {
			board = fmt.Sprintf("%dh", int64(at.Sub(start)/time.Hour))
		}
		for _, name := range []string{board, "all"} {
			if ok, err := q.published(lake.PerpdexBuildersBoard, name, at, fills); err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// onchainPublished: the legs current for the transfers, and every board OnchainWarm
// reads published for the board hour.
func (q *Queries) onchainPublished(ctx context.Context) (bool, error) {
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		return false, err
	}
	at := ocBoardHour(q.Now())
	type want struct {
		t       *lake.Table
		sources []*lake.Table
		boards  []string
	}
	var ws []want
	// The board families' tables, sources and keys are theirs (onchain_board_family.go):
	// a second list here would drift from what the passes publish.
	fam := func(f *ocFamily, chain string) want { return want{f.table, f.sources, f.keys(chain)} }
	for _, chain := range OnchainChains {
		ws = append(ws, fam(screenerFamily, chain),
			want{lake.OnchainTracePairsBoard, traceBoardSources, []string{chain + ".30d"}},
			want{lake.OnchainHoldersBoard, holdersBoardSources, []string{chain}},
			fam(transfersFamily, chain))
	}
	for _, chain := range []string{"ethereum", "bsc"} {
		ws = append(ws, fam(discoverFamily, chain))
	}
	ws = append(ws, want{lake.OnchainLabelsBoard, labelsBoardSources, []string{"ethereum"}})
	for _, w := range ws {
		sig, err := filesSignature(q.dir, w.sources...)
		if err != nil {
			return false, &StoreError{Op: "onchain boards", Err: err}
		}
		for _, b := range w.boards {
			if ok, err := q.published(w.t, b, at, sig); err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}
