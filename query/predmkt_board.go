package query

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	predmktBoardSQL     = sqlfiles.MustRead("predmkt/board.sql")
	predmktBoardLoadSQL = sqlfiles.MustRead("predmkt/board_load.sql")
	predmktBoardRowsSQL = sqlfiles.MustRead("predmkt/board_load_rows.sql")
)

// PredmktCategories are the market categories; "all" is every market.
var PredmktCategories = []string{"Crypto", "Sports", "Politics", "Pop-Culture", "Tech"}

// Board windows, in the order of the per-window arrays of BoardEntry.
var boardWindows = []struct {
	Name string
	Ms   int64
}{{"24h", 86_400_000}, {"7d", 604_800_000}, {"30d", 2_592_000_000}}

// windowIndex maps a window name to its slot; -1 is "all".
func windowIndex(w string) int {
	for i, bw := range boardWindows {
		if bw.Name == w {
			return i
		}
	}
	return -1
}

// Tag thresholds of SPEC §2.2.
const (
	botMaxAvgUSD   = 20.0
	botMinTrades   = 100
	whaleMinVolume = 100_000.0
	hotColdPnL     = 1_000.0
	hotColdMinRes  = 5
	wilsonZ        = 1.959963984540054 // two-sided 95%
)

// BoardEntry is one wallet's figures in one category of the hourly board, already
// rounded as the routes return them.
type BoardEntry struct {
	Wallet, Pseudonym, DisplayName string
	PnL                            float64
	PnLWin                         [3]float64 // 24h, 7d, 30d by resolution time
	Resolved                       int64
	HitRate, HitRateCI             *float64
	Volume                         float64
	VolumeWin                      [3]float64
	Trades                         int64
	TradesWin                      [3]int64
	AvgTradeUSD                    float64
	Markets                        int64
	FirstTS, LastTS                int64
	Tags                           []string
}

// Board is the hourly wallet board: entries per category ("all" and each category).
type Board struct {
	Hour time.Time
	Cats map[string][]BoardEntry

	orders sync.Map // "cat|window|sort" -> []int32, lazily sorted, cached with the board
	index  map[string]map[string]int
}

// boardState is the per-store cache of the board.
type boardState struct {
	cur atomic.Pointer[Board]
	mu  sync.Mutex
	// computes counts the boards this store computed (rather than read back), so tests
	// can tell a publication from a read.
	computes atomic.Int64
}

// predmktBoardSources are the tables sql/predmkt/board.sql reads: the board published
// for an hour is read back only while their files are the ones it was computed from.
var predmktBoardSources = []*lake.Table{lake.PredmktTrades, lake.PredmktMarkets, lake.PredmktResolutions, lake.PredmktProfiles}

// predmktBoardFile is the built partition and the file of the board of hour computed
// from the lake's current sources (a stat of each source file).
func (q *Queries) predmktBoardFile(hour time.Time) (built, path string, err error) {
	sig, err := filesSignature(q.dir, predmktBoardSources...)
	if err != nil {
		return "", "", &StoreError{Op: "predmkt board", Err: err}
	}
	built = boardBuilt(hour, sig)
	rel, err := lake.PredmktBoard.Path(built)
	if err != nil {
		return "", "", err
	}
	return built, filepath.Join(q.dir, filepath.FromSlash(rel)), nil
}

type boardKey struct{}

func (q *Queries) boardState() *boardState {
	v, _ := q.ext.LoadOrStore(boardKey{}, &boardState{})
	return v.(*boardState)
}

// MicroUSD converts an exact micro-USD sum to dollars rounded to the cent.
func MicroUSD(u int64) float64 { return Round(float64(u)/1e6, 2) }

// WilsonHalfWidth is the half-width of the 95% Wilson score interval of a proportion p
// observed over n trials.
func WilsonHalfWidth(p float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	z2 := wilsonZ * wilsonZ
	nf := float64(n)
	return wilsonZ / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
}

// BoardTags derives SPEC's four tags from an entry's published (rounded) figures, so a
// tag always agrees with the numbers shown beside it.
func BoardTags(e *BoardEntry) []string {
	tags := []string{}
	if e.Trades >= botMinTrades && e.AvgTradeUSD < botMaxAvgUSD {
		tags = append(tags, "bot")
	}
	if e.Volume >= whaleMinVolume {
		tags = append(tags, "whale")
	}
	if e.Resolved >= hotColdMinRes && e.PnL >= hotColdPnL {
		tags = append(tags, "hot")
	}
	if e.Resolved >= hotColdMinRes && e.PnL <= -hotColdPnL {
		tags = append(tags, "cold")
	}
	return tags
}

// PredmktBoard returns the board of the current hour of the store clock: the one in
// memory when it was built for this hour, else the one in the lake when an earlier
// process (or `mdq rebuild`) wrote it for this hour, else a fresh build, which is
// written to the lake. While another request rebuilds, the previous hour's board is
// served rather than waited for.
func (q *Queries) PredmktBoard(ctx context.Context) (*Board, error) {
	if q.publishOnly {
		return nil, ErrPublishOnly // it publishes the board (PublishPredmktBoard), never reads it back
	}
	b, err := q.predmktBoard(ctx)
	if err == nil {
		recordAsOf(ctx, b.Hour)
	}
	return b, err
}

func (q *Queries) predmktBoard(ctx context.Context) (*Board, error) {
	st := q.boardState()
	hour := q.Now().Truncate(time.Hour)
	if b := st.cur.Load(); b != nil && b.Hour.Equal(hour) {
		return b, nil
	}
	if q.asOf {
		// A request's as_of in another hour: the lake's board when it was built for that
		// hour, else computed now; neither replaces the board served at the store clock.
		b, err := q.loadBoard(ctx, hour)
		if err != nil || b != nil {
			return b, err
		}
		return q.computeBoard(ctx, hour)
	}
	if b := st.cur.Load(); b != nil && !st.mu.TryLock() {
		return b, nil
	} else if b == nil {
		st.mu.Lock()
	}
	defer st.mu.Unlock()
	if b := st.cur.Load(); b != nil && b.Hour.Equal(hour) {
		return b, nil
	}
	b, _, err := q.publishPredmktBoard(ctx)
	return b, err
}

// PublishPredmktBoard makes the board of the current hour the cached one: read back
// from the lake when it was published for this hour from the lake's current source
// files, else computed and published. computed says which. A publish-only store does
// not read a published board back: b is then nil.
func (q *Queries) PublishPredmktBoard(ctx context.Context) (b *Board, computed bool, err error) {
	return q.publishPredmktBoard(ctx)
}

func (q *Queries) publishPredmktBoard(ctx context.Context) (*Board, bool, error) {
	if q.publishOnly {
		// Published for this hour and these sources: nothing to do (see Options.PublishOnly).
		_, path, err := q.predmktBoardFile(q.Now().Truncate(time.Hour))
		if err != nil || fileExists(path) {
			return nil, false, err
		}
		b, err := q.RebuildPredmktBoard(ctx)
		return b, err == nil, err
	}
	b, err := q.loadBoard(ctx, q.Now().Truncate(time.Hour))
	if err != nil {
		return nil, false, err
	}
	if b != nil {
		q.boardState().cur.Store(b)
		return b, false, nil
	}
	b, err = q.RebuildPredmktBoard(ctx)
	return b, err == nil, err
}

// RebuildPredmktBoard computes the board for the current hour, writes it to the lake
// as Parquet (atomically) and makes it the cached board.
func (q *Queries) RebuildPredmktBoard(ctx context.Context) (*Board, error) {
	hour := q.Now().Truncate(time.Hour)
	// The sources' signature is taken before the computation: a file that changes while
	// it runs gives the next check another built, so a board is never labelled with
	// sources newer than the ones it read.
	built, _, err := q.predmktBoardFile(hour)
	if err != nil {
		return nil, err
	}
	b, err := q.computeBoard(ctx, hour)
	if err != nil {
		return nil, err
	}
	if err := q.writeBoard(ctx, b, built); err != nil {
		return nil, fmt.Errorf("predmkt board: write: %w", err)
	}
	q.boardState().cur.Store(b)
	return b, nil
}

func (q *Queries) computeBoard(ctx context.Context, hour time.Time) (*Board, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt board"
	q.boardState().computes.Add(1)
	// The board is as of the start of its hour (built_ts), whenever in the hour it is
	// computed, so every process and `mdq rebuild` build the same rows for one hour.
	for try := 0; ; try++ {
		days, raw, err := q.predmktBoardPlan(hour.UnixMilli())
		if err != nil {
			return nil, &StoreError{Op: op, Err: err}
		}
		b := newBoard(hour)
		for _, p := range predmktBoardPasses {
			if err = q.scanBoardRows(ctx, b, predmktBoardSQL, hour.UnixMilli(), days, raw, p[0], p[1]); err != nil {
				break
			}
		}
		if err == nil {
			b.finish()
			return b, nil
		}
		// A publication of another process may have pruned the totals this plan listed
		// (predmkt_wallet_totals.go keeps two dates): plan once more.
		if try > 0 || ctx.Err() != nil || !anyGone(strings.Split(days, fileSep)) {
			return nil, err
		}
	}
}

// predmktBoardPasses are the wallet ranges [lo, hi) board.sql is run over, one pass
// each ("" leaves a side open, so every wallet falls in one range). Every figure of
// the board is per wallet, so the passes' rows together are the one pass's. One pass
// grouped every (wallet, market) pair of the history at once: at large 4.4 million
// groups, past DuckDB's memory limit, spilled to disk (3.7 GB of peak RSS and 26
// cpu-s); four passes of a quarter of the wallets each took 1.0 GB and 20 cpu-s in the
// same lake (docs/PERFORMANCE.md).
var predmktBoardPasses = [][2]string{{"", "0x4"}, {"0x4", "0x8"}, {"0x8", "0xc"}, {"0xc", ""}}

// scanBoard makes the board of hour from the rows of a board query (board.sql's
// columns), rounding as the routes return the figures.
func (q *Queries) scanBoard(ctx context.Context, hour time.Time, query string, args ...any) (*Board, error) {
	b := newBoard(hour)
	if err := q.scanBoardRows(ctx, b, query, args...); err != nil {
		return nil, err
	}
	b.finish()
	return b, nil
}

// scanBoardRows adds the rows of a board query to b's categories (b.finish is the
// caller's, once every query's rows are in).
func (q *Queries) scanBoardRows(ctx context.Context, b *Board, query string, args ...any) error {
	const op = "predmkt board"
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var cat string
		var e BoardEntry
		var pnl, resVol, winVol, vol int64 // micro-USD
		var pnlW, volW [3]int64
		if err := rows.Scan(&cat, &e.Wallet, &e.Pseudonym, &e.DisplayName, &pnl, &pnlW[0], &pnlW[1], &pnlW[2],
			&e.Resolved, &resVol, &winVol, &vol, &volW[0], &volW[1], &volW[2],
			&e.Trades, &e.TradesWin[0], &e.TradesWin[1], &e.TradesWin[2], &e.Markets, &e.FirstTS, &e.LastTS); err != nil {
			return wrap(ctx, op, err)
		}
		e.PnL, e.Volume = MicroUSD(pnl), MicroUSD(vol)
		for i := range 3 {
			e.PnLWin[i], e.VolumeWin[i] = MicroUSD(pnlW[i]), MicroUSD(volW[i])
		}
		if resVol > 0 {
			hr := float64(winVol) / float64(resVol)
			h, ci := Round(hr, 6), Round(WilsonHalfWidth(hr, e.Resolved), 6)
			e.HitRate, e.HitRateCI = &h, &ci
		}
		if e.Trades > 0 {
			e.AvgTradeUSD = Round(float64(vol)/1e6/float64(e.Trades), 2)
		}
		e.Tags = BoardTags(&e)
		b.Cats[cat] = append(b.Cats[cat], e)
	}
	return wrap(ctx, op, rows.Err())
}

// predmktBoardPlan picks what board.sql reads for the clock now (epoch ms), as its $2
// and $3: the predmkt_wallet_days partitions of the trades dates whose fills all lie at
// or before now and, for each window, all inside or all outside it (their sums stand in
// for the fills; the dates up to the newest current predmkt_wallet_totals wholly
// before every window come as that one file, of the same columns), and the trades
// partitions of the other dates holding a fill at or before now (the days the clock
// and the windows' starts cut, and any date whose partition was not published from the
// trades file now in the lake). The listing and the sidecar are read afresh, not the
// request path's cached ones: the board is published under the signature of the files
// it read, taken just before.
func (q *Queries) predmktBoardPlan(now int64) (days, raw string, err error) {
	src, err := datePartitions(q.dir, lake.PredmktTrades)
	if err != nil {
		return "", "", err
	}
	done, err := readSidecar[daySource](predmktWalletDays.sidecar(q.dir))
	if err != nil {
		return "", "", err
	}
	// The days up to the newest current totals wholly before the widest window come
	// from those totals, one file (predmkt_wallet_totals.go).
	upTo, totals, err := q.walletTotalsFor(src, now)
	if err != nil {
		return "", "", err
	}
	var ds, rs []string
	for date, f := range src {
		if date <= upTo {
			continue
		}
		e, ok := done[date]
		ok = ok && e.Sig == f.sig && (e.Rows == 0 || e.Span)
		switch {
		case ok && (e.Rows == 0 || e.First > now): // no fill at or before now
		case ok && e.Last <= now && wholeInWindows(e, now):
			ds = append(ds, date)
		default:
			rs = append(rs, date)
		}
	}
	sort.Strings(ds)
	sort.Strings(rs)
	dayFiles, err := q.partitionFiles(lake.PredmktWalletDays, ds)
	if err != nil {
		return "", "", err
	}
	if totals != "" {
		dayFiles = append([]string{totals}, dayFiles...)
	}
	rawFiles := make([]string, len(rs))
	for i, d := range rs {
		rawFiles[i] = src[d].path
	}
	if days, err = q.fileList(lake.PredmktWalletDays, dayFiles); err != nil {
		return "", "", err
	}
	raw, err = q.fileList(lake.PredmktTrades, rawFiles)
	return days, raw, err
}

// wholeInWindows says a date's fills lie all inside or all outside each board window
// ending at now ([now - width, now], bounds included).
func wholeInWindows(e daySource, now int64) bool {
	for _, w := range boardWindows {
		if start := now - w.Ms; e.Last >= start && e.First < start {
			return false
		}
	}
	return true
}

func newBoard(hour time.Time) *Board {
	b := &Board{Hour: hour, Cats: map[string][]BoardEntry{"all": {}}}
	for _, c := range PredmktCategories {
		b.Cats[c] = []BoardEntry{}
	}
	return b
}

// setCategories makes b's categories from rows in read order, flat[i] of category
// cats[i]: each category's run of rows as a part of flat when its rows are together,
// else copied out.
func (b *Board) setCategories(cats []string, flat []BoardEntry) {
	start := map[string]int{}
	runs := map[string]int{}
	for i, c := range cats {
		if i == 0 || cats[i-1] != c {
			if _, seen := start[c]; !seen {
				start[c] = i
			}
			runs[c]++
		}
	}
	for c, from := range start {
		if runs[c] == 1 {
			to := from
			for to < len(cats) && cats[to] == c {
				to++
			}
			b.Cats[c] = flat[from:to:to]
			continue
		}
		var es []BoardEntry
		for i := from; i < len(cats); i++ {
			if cats[i] == c {
				es = append(es, flat[i])
			}
		}
		b.Cats[c] = es
	}
}

// finish sorts each category by wallet and indexes it.
func (b *Board) finish() {
	b.index = map[string]map[string]int{}
	for cat, es := range b.Cats {
		// A board read back is in wallet order already (it was written so).
		byWallet := func(i, j int) bool { return es[i].Wallet < es[j].Wallet }
		if !sort.SliceIsSorted(es, byWallet) {
			sort.Slice(es, byWallet)
		}
		idx := make(map[string]int, len(es))
		for i := range es {
			idx[es[i].Wallet] = i
		}
		b.index[cat] = idx
	}
	// Sort every (category, window, sort) once with the board, so no request pays
	// for a first sort (the hourly build absorbs it).
	for cat := range b.Cats {
		for _, key := range LeaderboardSorts {
			for w := -1; w < len(boardWindows); w++ {
				b.order(cat, w, key)
			}
		}
	}
}

// Entry returns a wallet's entry in one category.
func (b *Board) Entry(cat, wallet string) (*BoardEntry, bool) {
	i, ok := b.index[cat][wallet]
	if !ok {
		return nil, false
	}
	return &b.Cats[cat][i], true
}

// writeBoard publishes b under built, then removes the versions it supersedes (other
// sources of its hour, earlier hours) and the single file of the layout before built.
func (q *Queries) writeBoard(ctx context.Context, b *Board, built string) error {
	w, err := lake.NewWriter(q.dir)
	if err != nil {
		return err
	}
	defer w.Close()
	_, err = w.Write(ctx, lake.PredmktBoard, []string{built}, func(add lake.AppendFunc) error {
		for cat, es := range b.Cats {
			for _, e := range es {
				var hr, ci any
				if e.HitRate != nil {
					hr, ci = *e.HitRate, *e.HitRateCI
				}
				if err := add(cat, e.Wallet, e.Pseudonym, e.DisplayName, e.PnL, e.PnLWin[0], e.PnLWin[1], e.PnLWin[2],
					e.Resolved, hr, ci, e.Volume, e.VolumeWin[0], e.VolumeWin[1], e.VolumeWin[2],
					e.Trades, e.TradesWin[0], e.TradesWin[1], e.TradesWin[2], e.AvgTradeUSD, e.Markets,
					e.FirstTS, e.LastTS, b.Hour); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	q.pruneBoards(lake.PredmktBoard, "", built, 0)
	if err := os.Remove(filepath.Join(q.dir, filepath.FromSlash(lake.PredmktBoard.Prefix), lake.PredmktBoard.File)); err != nil && !os.IsNotExist(err) {
		q.log.Warn("remove the predmkt board of the earlier layout", "err", err)
	}
	// The view was an empty placeholder if this is the lake's first board.
	return q.Reload(ctx)
}

// loadBoard reads the lake's board when it was built for hour from the lake's current
// sources; nil when it was not (or its file cannot be read: it is then recomputed and
// replaced).
func (q *Queries) loadBoard(ctx context.Context, hour time.Time) (*Board, error) {
	_, path, err := q.predmktBoardFile(hour)
	if err != nil {
		return nil, err
	}
	if !fileExists(path) {
		return nil, nil
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt board load"
	q.boardReads.Add(1)
	var n int64
	err = q.db.QueryRowContext(ctx, predmktBoardRowsSQL, path).Scan(&n)
	var rows *sql.Rows
	if err == nil {
		rows, err = q.db.QueryContext(ctx, predmktBoardLoadSQL, path, hour)
	}
	if err != nil {
		if ctx.Err() == nil {
			q.log.Warn("published predmkt board unreadable; recomputing", "path", path, "err", err)
			return nil, nil
		}
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	b := newBoard(hour)
	// One slice for every row, then cut per category (the file holds each category's
	// rows together): growing one slice per category copied the entries as often again.
	// Sized from the footer (bounded: the footer is only a hint): appends growing it
	// took most of the load's time.
	n = max(0, min(n, 1<<24))
	flat := make([]BoardEntry, 0, n)
	cats := make([]string, 0, n)
	for rows.Next() {
		var cat string
		var e BoardEntry
		var hr, ci sql.NullFloat64
		if err := rows.Scan(&cat, &e.Wallet, &e.Pseudonym, &e.DisplayName, &e.PnL, &e.PnLWin[0], &e.PnLWin[1], &e.PnLWin[2],
			&e.Resolved, &hr, &ci, &e.Volume, &e.VolumeWin[0], &e.VolumeWin[1], &e.VolumeWin[2],
			&e.Trades, &e.TradesWin[0], &e.TradesWin[1], &e.TradesWin[2], &e.AvgTradeUSD, &e.Markets, &e.FirstTS, &e.LastTS); err != nil {
			return nil, wrap(ctx, op, err)
		}
		if hr.Valid {
			h, c := hr.Float64, ci.Float64
			e.HitRate, e.HitRateCI = &h, &c
		}
		e.Tags = BoardTags(&e)
		flat = append(flat, e)
		cats = append(cats, cat)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	if len(flat) == 0 {
		return nil, nil
	}
	b.setCategories(cats, flat)
	b.finish()
	return b, nil
}

// Rows counts the board's rows over every category.
func (b *Board) Rows() int {
	n := 0
	for _, es := range b.Cats {
		n += len(es)
	}
	return n
}
