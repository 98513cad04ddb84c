package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mdq/lake"
)

// Hourly boards in the lake (lake/tables_boards.go): each board query's result for one
// board hour is published as a Parquet file, so the boards of an hour are computed once
// per lake, not once per process: a server restarted within the hour, or `mdq query`
// run as a fresh process, reads them back (milliseconds) instead of recomputing them
// from the whole window (minutes on a large lake). `mdq demo` and `mdq rebuild` publish
// them with the other derived tables; serve's refresher at each hour turn.

// boardBuilt is the built partition value of a board published for hour at from the
// sources whose signature is sig: the hour first, so that names sort by hour.
func boardBuilt(at time.Time, sig string) string {
	h := sha256.Sum256([]byte(sig))
	return at.UTC().Format("20060102T15") + "_" + hex.EncodeToString(h[:4])
}

// BoardHoursKept is how far back, before the newest hour a board was published for,
// its earlier hours are kept: a request's as_of in one of those hours reads the board
// of its hour instead of computing it (while the sources are the ones it was computed
// from).
const BoardHoursKept = 24

// boardRows returns the rows of a board query (query with args) for board of t at board
// hour at, computed from sources with signature sig: from the lake when that board was
// published for the same hour and sources, else computed (after prepare, which sets up
// what only the computation needs) and published first. A request's as_of publishes
// the board of its own hour too: a board is a function of its hour and its sources, so
// the board of a past hour never displaces the serving hour's (another file), and the
// next as_of in that hour reads it. When the lake cannot be written the board is
// computed and served unpublished.
func (q *Queries) boardRows(ctx context.Context, t *lake.Table, board string, at time.Time, sig string,
	prepare func(context.Context) error, query string, args ...any) (*sql.Rows, error) {
	return q.derivedRows(ctx, t, board, boardBuilt(at, sig), BoardHoursKept, !q.publishOnly, prepare, query, args...)
}

// derivedRows returns the rows of query (with args) published in t under (board,
// built), computing and publishing them first when they are not; without readBack,
// once published, none of them (their columns only: see readPublished). Publishing removes
// other versions of board: every other one when keepHours is negative (a file's
// digests), else those of the same hour from other sources and those of hours more
// than keepHours before this one (later hours, which a process at a later clock wrote,
// are kept).
func (q *Queries) derivedRows(ctx context.Context, t *lake.Table, board, built string, keepHours int, readBack bool,
	prepare func(context.Context) error, query string, args ...any) (*sql.Rows, error) {
	rel, err := t.Path(board, built)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(q.dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err == nil {
		rows, err := q.readPublished(ctx, path, readBack, keepHours >= 0)
		if err == nil {
			return rows, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		// A damaged file is recomputed and replaced below.
		q.log.Warn("published derived rows unreadable; recomputing", "table", t.Name, "board", board, "built", built, "err", err)
	}
	if prepare != nil {
		if err := prepare(ctx); err != nil {
			return nil, err
		}
		// prepare may have published the rows itself (a board family's one pass).
		if _, err := os.Stat(path); err == nil {
			return q.readPublished(ctx, path, readBack, keepHours >= 0)
		}
	}
	if _, err := lake.CopyResult(ctx, q.db, q.dir, t, []string{board, built}, query, args...); err != nil {
		if ctx.Err() != nil || !isWriteError(err) {
			return nil, err
		}
		q.log.Warn("derived rows not published (lake not writable); serving them computed", "table", t.Name, "board", board, "err", err)
		return q.db.QueryContext(ctx, query, args...)
	}
	q.pruneBoards(t, board, built, keepHours)
	rows, err := q.readPublished(ctx, path, readBack, keepHours >= 0)
	if err != nil && ctx.Err() == nil {
		if _, serr := os.Stat(path); serr != nil {
			// Another process published a newer version and removed this one between
			// the rename and the read: answer from the query itself.
			return q.db.QueryContext(ctx, query, args...)
		}
	}
	return rows, err
}

// readPublished returns the rows of the published derived file at path: every row, or
// without readBack none (the columns only, from the footer): a publish-only store's
// boards, which only a request would read. board: an hourly board (derivedRows'
// keepHours ≥ 0, where a tape digest passes -1), counted in boardReads.
func (q *Queries) readPublished(ctx context.Context, path string, readBack, board bool) (*sql.Rows, error) {
	if !readBack {
		return q.db.QueryContext(ctx, "SELECT * FROM read_parquet($1, hive_partitioning = false) LIMIT 0", path)
	}
	if board {
		q.boardReads.Add(1)
	}
	return q.db.QueryContext(ctx, "SELECT * FROM read_parquet($1, hive_partitioning = false)", path)
}

// derivedFile is derivedRows for callers that read the published file per request
// (a few row groups of it) instead of reading its rows once: it returns the path of
// the file of (board, built) in t, computing and publishing it first when it is not
// published. When the lake cannot be written the rows are written with the same writer
// under the store's spill directory instead, so the caller still reads a file.
func (q *Queries) derivedFile(ctx context.Context, t *lake.Table, board, built string, keepHours int,
	prepare func(context.Context) error, query string, args ...any) (string, error) {
	rel, err := t.Path(board, built)
	if err != nil {
		return "", err
	}
	path := filepath.Join(q.dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if prepare != nil {
		if err := prepare(ctx); err != nil {
			return "", err
		}
	}
	if _, err := lake.CopyResult(ctx, q.db, q.dir, t, []string{board, built}, query, args...); err != nil {
		if ctx.Err() != nil || !isWriteError(err) {
			return "", err
		}
		q.log.Warn("derived rows not published (lake not writable); kept in the spill directory", "table", t.Name, "board", board, "err", err)
		root := filepath.Join(q.budget.TempDir, "boards")
		if _, err := lake.CopyResult(ctx, q.db, root, t, []string{board, built}, query, args...); err != nil {
			return "", err
		}
		return filepath.Join(root, filepath.FromSlash(rel)), nil
	}
	q.pruneBoards(t, board, built, keepHours)
	return path, nil
}

// isWriteError reports a failure to create or replace a file (a read-only lake), as
// opposed to a failing query.
func isWriteError(err error) bool {
	var pe *os.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le) || strings.Contains(err.Error(), "ermission denied") ||
		strings.Contains(err.Error(), "read-only file system")
}

// pruneBoards removes the published versions of board other than built: every one
// when keepHours is negative, else those of built's hour from other sources and those of
// hours more than keepHours before it. A reader holding a removed file open keeps
// reading it (POSIX).
// A table partitioned by built alone (the prediction-market board) passes board "".
func (q *Queries) pruneBoards(t *lake.Table, board, built string, keepHours int) {
	dir := filepath.Join(q.dir, filepath.FromSlash(t.Prefix))
	if board != "" {
		dir = filepath.Join(dir, "board="+board)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	hour, _, _ := strings.Cut(built, "_")
	oldest := ""
	if h, err := time.Parse("20060102T15", hour); err == nil && keepHours >= 0 {
		oldest = h.Add(-time.Duration(keepHours) * time.Hour).Format("20060102T15")
	}
	for _, e := range ents {
		v, ok := strings.CutPrefix(e.Name(), "built=")
		if !ok || v == built {
			continue
		}
		if h, _, _ := strings.Cut(v, "_"); keepHours >= 0 && h != hour && h >= oldest {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			q.log.Warn("remove old derived rows", "table", t.Name, "board", board, "built", v, "err", err)
		}
	}
}

// The sources of each board (the tables its query reads).
var (
	perpdexBoardSources = []*lake.Table{lake.PerpdexFills, lake.PerpdexClosedTrades, lake.PerpdexAccounts,
		lake.PerpdexPositions, lake.PerpdexFunding, lake.PerpdexLedger, lake.PerpdexCohortsCurrent}
	onchainLabelSources  = []*lake.Table{lake.OnchainLabels, lake.OnchainLabelSources}
	screenerBoardSources = append([]*lake.Table{lake.OnchainLegs, lake.OnchainTransfers, lake.OnchainTokens}, onchainLabelSources...)
	legsBoardSources     = []*lake.Table{lake.OnchainLegs}
	traceBoardSources    = []*lake.Table{lake.OnchainTransfers} // trace_pairs.sql reads each transfer once
	labelsBoardSources   = append([]*lake.Table{lake.OnchainLegs}, onchainLabelSources...)
	holdersBoardSources  = append([]*lake.Table{lake.OnchainLegsByToken, lake.OnchainBalances}, onchainLabelSources...)
	transfersBoardSrcs   = append([]*lake.Table{lake.OnchainLegsByToken}, onchainLabelSources...)
)

// sourcedBoardRows is boardRows with the signature of sources.
func (q *Queries) sourcedBoardRows(ctx context.Context, t *lake.Table, board string, at time.Time, sources []*lake.Table,
	prepare func(context.Context) error, query string, args ...any) (*sql.Rows, error) {
	sig, err := filesSignature(q.dir, sources...)
	if err != nil {
		return nil, &StoreError{Op: t.Name, Err: err}
	}
	return q.boardRows(ctx, t, board, at, sig, prepare, query, args...)
}
