package query

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// The market list's hourly board (lake.PredmktMarketBoard): per outcome token, the
// taker fills before the hour summed, and those of the 23 hours before it. A request in
// that hour adds the fills from the 24-hour window's start to the board's window and
// from the hour's start to its clock, read in time order from predmkt_market_fills, so
// it groups one row per token and a few thousand fills instead of every day's and
// hour's sums (74,291 rows at 11:30 on the large lake) and binds three files instead of
// eight. Without a board for its hour and the lake's current trades files (not yet
// published, or any trades date whose fills are not published from the file now in
// the lake, or a clock in another hour), a request reads the per-day tables as before
// (marketDaysPlan): the board only makes an answer cheaper, never different.

var (
	predmktMarketBoardSQL       = sqlfiles.MustRead("predmkt/market_board.sql")
	predmktMarketsBoardSQL      = sqlfiles.MustRead("predmkt/markets_board.sql") + marketsListing(predmktMarketsSQL)
	predmktMarketTokensBoardSQL = sqlfiles.MustRead("predmkt/market_tokens_board.sql")
)

// marketsListing is markets.sql from the end of its figures (the CTE t) on: the listing
// markets_board.sql shares, appended to its own figures.
func marketsListing(markets string) string {
	i := strings.Index(markets, "\n), v AS (")
	if i < 0 {
		panic(`sql/predmkt/markets.sql: no "), v AS (" after its figures`)
	}
	return markets[i+1:]
}

const (
	hourMs       = 3_600_000
	boardWindow  = 23 * hourMs // vol_w: the fills of the 23 hours before the board's hour
	marketWindow = 24 * hourMs // volume_24h
)

// marketBoard is what one request reads: the board file of the hour starting at hour
// (epoch ms) and the fills files holding its two ranges.
type marketBoard struct {
	path  string
	hour  int64
	fills string
}

// marketBoardBuilt returns the built partition and file of the board of hour for the trades
// files now in the lake and the predmkt_market_fills publication of every trades date;
// ok is false when a date's fills are not published from the file now in the lake
// (their spans are then unknown).
func (q *Queries) marketBoardBuilt(hour int64) (built, path string, fills map[string]daySource, ok bool, err error) {
	src, err := q.cachedDatePartitions(lake.PredmktTrades)
	if err != nil {
		return "", "", nil, false, err
	}
	fills, stale, err := q.dayEntries(predmktMarketFills)
	if err != nil || len(stale) > 0 {
		return "", "", nil, false, err
	}
	var sig strings.Builder
	for _, d := range slices.Sorted(maps.Keys(src)) {
		fmt.Fprintf(&sig, "%s=%s;", d, src[d].sig)
	}
	built = boardBuilt(time.UnixMilli(hour), sig.String())
	rel, err := lake.PredmktMarketBoard.Path(built)
	if err != nil {
		return "", "", nil, false, err
	}
	return built, filepath.Join(q.dir, filepath.FromSlash(rel)), fills, true, nil
}

// fillsMeeting lists the predmkt_market_fills files of the dates whose fills span meets
// any of the closed ranges [from, to] (epoch ms), as a file list (file_lists.go).
func (q *Queries) fillsMeeting(fills map[string]daySource, ranges ...[2]int64) (string, error) {
	var dates []string
	for d, e := range fills {
		if e.Rows == 0 {
			continue
		}
		for _, r := range ranges {
			if r[0] <= r[1] && e.First <= r[1] && e.Last >= r[0] {
				dates = append(dates, d)
				break
			}
		}
	}
	sort.Strings(dates)
	files, err := q.partitionFiles(lake.PredmktMarketFills, dates)
	if err != nil {
		return "", err
	}
	return q.fileList(lake.PredmktMarketFills, files)
}

// marketBoardAt returns the published board a request at clock now reads, ok false
// when there is none for its hour and the lake's current trades files.
func (q *Queries) marketBoardAt(now int64) (b marketBoard, ok bool, err error) {
	if now < 0 {
		return b, false, nil
	}
	hour := now - now%hourMs
	_, path, fills, ok, err := q.marketBoardBuilt(hour)
	if err != nil || !ok || !fileExists(path) {
		return b, false, err
	}
	// The window's start to the board's window, and the hour's start to the clock.
	list, err := q.fillsMeeting(fills, [2]int64{now - marketWindow, hour - boardWindow - 1}, [2]int64{hour, now})
	if err != nil {
		return b, false, err
	}
	return marketBoard{path: path, hour: hour, fills: list}, true, nil
}

// marketSource is what one request's market-list statements read, resolved once for
// all of them at one clock: the board of the clock's hour (marketBoardAt), else the
// per-day tables' plan (marketDaysPlan, made when first needed).
type marketSource struct {
	now   int64
	board *marketBoard
	plan  *marketsPlan
}

// marketSource resolves the source of a request at the store clock.
func (q *Queries) marketSource(op string) (*marketSource, error) {
	src := &marketSource{now: q.Now().UnixMilli()}
	b, ok, err := q.marketBoardAt(src.now)
	if err != nil {
		return nil, &StoreError{Op: op, Err: err}
	}
	if ok {
		src.board = &b
	}
	return src, nil
}

// marketRows runs one of the market list's statements with its leading arguments args:
// boardSQL with src's board, else planSQL with the per-day tables' plan (planArgs of
// it). A board removed between the check and the read (a board of newer trades files
// replaced it) is answered from the per-day tables, and so is the rest of the request.
// Errors are wrapped with op.
func (q *Queries) marketRows(ctx context.Context, op string, src *marketSource, boardSQL, planSQL string,
	planArgs func(marketsPlan) []any, args ...any) (*sql.Rows, error) {
	if b := src.board; b != nil {
		if marketBoardReadHook != nil {
			marketBoardReadHook(b.path)
		}
		rows, err := q.db.QueryContext(ctx, boardSQL, slices.Concat(args, []any{b.path, b.hour, b.fills})...)
		if err == nil {
			return rows, nil
		}
		if ctx.Err() != nil || fileExists(b.path) {
			return nil, wrap(ctx, op, err)
		}
		src.board = nil
	}
	if src.plan == nil {
		plan, err := q.marketDaysPlan(src.now)
		if err != nil {
			return nil, &StoreError{Op: op, Err: err}
		}
		src.plan = &plan
	}
	rows, err := q.db.QueryContext(ctx, planSQL, slices.Concat(args, planArgs(*src.plan))...)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	return rows, nil
}

// marketBoardReadHook, when set (tests), is called with the board file between the
// check that it exists and its read.
var marketBoardReadHook func(path string)

// PublishMarketBoard publishes the market list's board for the hour of the store clock
// when it is not published for the lake's current trades files, after the per-day
// tables it is summed from (it waits for them: no board while a trades date's fills
// are not published). It returns whether it wrote one.
func (q *Queries) PublishMarketBoard(ctx context.Context) (bool, error) {
	const op = "predmkt market board publication"
	now := q.Now().UnixMilli()
	if now < 0 {
		return false, nil
	}
	hour := now - now%hourMs
	built, path, fills, ok, err := q.marketBoardBuilt(hour)
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	if !ok || fileExists(path) {
		return false, nil
	}
	plan, err := q.marketDaysPlan(hour - 1)
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	window, err := q.fillsMeeting(fills, [2]int64{hour - boardWindow, hour - 1})
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	args := append(append([]any{hour - 1}, plan.markets()...), window, hour-boardWindow, hour)
	if _, err := lake.CopyResult(ctx, q.db, q.dir, lake.PredmktMarketBoard, []string{built}, predmktMarketBoardSQL, args...); err != nil {
		return false, wrap(ctx, op, err)
	}
	q.pruneBoards(lake.PredmktMarketBoard, "", built, BoardHoursKept)
	return true, nil
}
