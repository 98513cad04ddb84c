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
	perpdexBoardSQL        = sqlfiles.MustRead("perpdex/board.sql")
	perpdexBoardBatchesSQL = sqlfiles.MustRead("perpdex/board_batches.sql")
)

// PerpdexWindows maps each window name to its length; "all" is unbounded (0).
var PerpdexWindows = map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "all": 0}

// PerpdexWindowStart returns the start of a rolling window ending at end; "all" starts
// at the Unix epoch, before any history.
func PerpdexWindowStart(window string, end time.Time) time.Time {
	d := PerpdexWindows[window]
	if d == 0 {
		return time.Unix(0, 0).UTC()
	}
	return end.Add(-d)
}

// PerpdexBoardTime is the instant a board is computed at: the start of the store
// clock's current hour (boards are rebuilt hourly).
func PerpdexBoardTime(now time.Time) time.Time { return now.UTC().Truncate(time.Hour) }

// TraderRow is one row of /v1/perpdex/leaderboard.
type TraderRow struct {
	Wallet             string   `json:"wallet"`
	Rank               int      `json:"rank" doc:"position in the requested order; continues across pages"`
	AccountValue       float64  `json:"account_value" doc:"perp equity at the board hour (latest hourly snapshot)"`
	TotalRealizedPnl   float64  `json:"total_realized_pnl" doc:"window: sum of fills' closed PnL minus fees (sort=pnl)"`
	CumRealizedPnl     float64  `json:"cum_realized_pnl" doc:"lifetime to the board hour: closed PnL minus fees (sort=realized_pnl)"`
	Roi                float64  `json:"roi" doc:"total_realized_pnl / capital, capital = equity at window start + deposits + sends received in the window, floored at 1 USD"`
	PnlPct             *float64 `json:"pnl_pct" doc:"total_realized_pnl / capital * 100; null when capital is below 1 USD"`
	TotalVolume        float64  `json:"total_volume" doc:"window notional of the wallet's fills"`
	TotalFee           float64  `json:"total_fee" doc:"window fees paid"`
	TradeCount         int64    `json:"trade_count" doc:"closed trades (flat to flat) that closed in the window"`
	WinCount           int64    `json:"win_count" doc:"closed trades with realized PnL above 0"`
	LossCount          int64    `json:"loss_count" doc:"closed trades with realized PnL below 0"`
	WinRate            float64  `json:"win_rate" doc:"win_count / trade_count, fraction 0 to 1; 0 without trades"`
	LongWinRate        float64  `json:"long_win_rate" doc:"fraction of closed long trades won"`
	ShortWinRate       float64  `json:"short_win_rate" doc:"fraction of closed short trades won"`
	LongPnl            float64  `json:"long_pnl" doc:"realized PnL of closed long trades"`
	ShortPnl           float64  `json:"short_pnl" doc:"realized PnL of closed short trades"`
	ProfitFactor       *float64 `json:"profit_factor" doc:"gross won / gross lost over closed trades; null with no losing trade"`
	Expectancy         *float64 `json:"expectancy" doc:"mean realized PnL per closed trade; null without trades"`
	MaxDrawdownPct     float64  `json:"max_drawdown_pct" doc:"largest fall from a running peak of the hourly account-value series in the window, percent"`
	CurrentDrawdownPct float64  `json:"current_drawdown_pct" doc:"fall of the last account value from the running peak, percent"`
	CalmarRatio        *float64 `json:"calmar_ratio" doc:"pnl_pct / max_drawdown_pct; null when either is null or zero"`
	RecoveryFactor     *float64 `json:"recovery_factor" doc:"total_realized_pnl / largest drawdown in USD; null without drawdown"`
	MaxWinStreak       int64    `json:"max_win_streak"`
	MaxLossStreak      int64    `json:"max_loss_streak"`
	AvgLeverage        *float64 `json:"avg_leverage" doc:"mean leverage over the wallet's position snapshots in the window; null without one"`
	AvgDurationSeconds *int64   `json:"avg_duration_seconds" doc:"mean duration of closed trades; null without trades"`
	SizeCohort         *string  `json:"size_cohort"`
	PnlCohort          *string  `json:"pnl_cohort"`
	PnlCohortTag       *string  `json:"pnl_cohort_tag"`
	StyleCohortTag     *string  `json:"style_cohort_tag"`

	pnlAbs string // the wallet's pnl_abs band (axis=pnl_abs)
}

// FlowAttribution splits a wallet's window result into trading, funding and account
// movements.
type FlowAttribution struct {
	TradingPnlTotal    float64 `json:"trading_pnl_total" doc:"realized_trading_pnl - fees - funding_paid_usd + delta_unrealized_pnl"`
	RealizedTradingPnl float64 `json:"realized_trading_pnl" doc:"sum of closed PnL of fills in the window, before fees"`
	DeltaUnrealizedPnl float64 `json:"delta_unrealized_pnl" doc:"unrealized PnL in the last position batch of the window minus the one before it"`
	FundingPaidUsd     float64 `json:"funding_paid_usd" doc:"funding paid (positive) or received (negative)"`
	DeltaAccountValue  float64 `json:"delta_account_value" doc:"account value at window end minus at window start"`
	AccountValueEod    float64 `json:"account_value_eod" doc:"account value at window end"`
	ActiveDays         int64   `json:"active_days" doc:"UTC dates with a fill in the window"`
	LastDay            string  `json:"last_day" doc:"date of the last fill in the window"`
	PerpsTradingPnl    float64 `json:"perps_trading_pnl" doc:"realized_trading_pnl + delta_unrealized_pnl"`
}

// FlowTotals are the wallet's external and internal money movements in the window.
type FlowTotals struct {
	DepositUsd         float64 `json:"deposit_usd"`
	WithdrawUsd        float64 `json:"withdraw_usd"`
	NetExternalFlowUsd float64 `json:"net_external_flow_usd" doc:"deposits minus withdrawals"`
	NetTotalFlowUsd    float64 `json:"net_total_flow_usd" doc:"net external flow plus sends received minus sends made"`
}

// FlowAdjustedRow is one row of /v1/perpdex/leaderboard/flow-adjusted.
type FlowAdjustedRow struct {
	TraderRow
	Attributed     FlowAttribution `json:"attributed"`
	Flow           FlowTotals      `json:"flow"`
	FlowUnbalanced bool            `json:"flow_unbalanced" doc:"true when the wallet sent or received a send in the window: attributed is then unreliable"`
}

// pdBoardEntry is one wallet of a cached board.
type pdBoardEntry struct {
	row  TraderRow
	flow FlowAdjustedRow
}

// pdBoard is one window's board at one board hour, with its sort orders.
type pdBoard struct {
	at      time.Time
	entries []pdBoardEntry
	// orders maps "sort|desc" to the indices of entries in that order (every entry,
	// before filters), computed once with the board so a request only filters and pages.
	orders map[string][]int32

	// filtered memoises the rows passing one request's filters in one order (filters
	// and order are all a request's page depends on besides its cursor), so repeated
	// requests page a list instead of filtering every wallet of the board each time. At
	// most pdFilteredKept lists (4 bytes a wallet each); beyond that the memo restarts.
	mu       sync.Mutex
	filtered map[pdFilterKey][]int32
}

// pdFilterKey is what selects a filtered order of a board.
type pdFilterKey struct {
	sort, axis, cohort string
	desc               bool
	minTrades          int64
	minWinRate         float64
	minVolume          float64
}

const pdFilteredKept = 32

// rows returns the indices of the entries passing p's filters, in p's order.
func (b *pdBoard) rows(p *PerpdexLeaderboardParams) []int32 {
	k := pdFilterKey{p.Sort, p.Axis, p.Cohort, p.Desc, p.MinTrades, p.MinWinRate, p.MinVolume}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.filtered[k]; ok {
		return r
	}
	order := b.orders[pdOrderKey(p.Sort, p.Desc)]
	rows := make([]int32, 0, len(order))
	for _, i := range order {
		if p.keep(&b.entries[i].row) {
			rows = append(rows, i)
		}
	}
	if b.filtered == nil || len(b.filtered) >= pdFilteredKept {
		b.filtered = map[pdFilterKey][]int32{}
	}
	b.filtered[k] = rows
	return rows
}

type pdBoardStateKey struct{}

func (q *Queries) pdBoards() *hourly[*pdBoard] {
	v, _ := q.ext.LoadOrStore(pdBoardStateKey{}, newHourly[*pdBoard]("perpdex board", nil, 0))
	return v.(*hourly[*pdBoard])
}

// perpdexBoard returns the board of window at the current board hour (or the previous
// hour's while it rebuilds) and the hour it is as of.
func (q *Queries) perpdexBoard(ctx context.Context, window string) ([]pdBoardEntry, time.Time, error) {
	b, err := q.perpdexBoardOf(ctx, window)
	if err != nil {
		return nil, PerpdexBoardTime(q.Now()), err
	}
	return b.entries, b.at, nil
}

// perpdexBoardOf returns the board of window for the current board hour, built in the
// background when the hour turns (see hourly).
func (q *Queries) perpdexBoardOf(ctx context.Context, window string) (*pdBoard, error) {
	b, _, err := q.pdBoards().get(ctx, q, window, PerpdexBoardTime(q.Now()), func(ctx context.Context, at time.Time) (*pdBoard, error) {
		if err := q.perpdexEnsure(ctx); err != nil {
			return nil, err
		}
		if err := q.perpdexCohortsEnsure(ctx); err != nil {
			return nil, err
		}
		// Today's labels as they stood at the board hour (perpdex_cohorts_at.go).
		lab, err := q.perpdexLabelsAt(ctx, at)
		if err != nil {
			return nil, err
		}
		entries, err := q.perpdexComputeBoard(ctx, window, PerpdexWindowStart(window, at), at, lab.current)
		if err != nil {
			return nil, err
		}
		return &pdBoard{at: at, entries: entries, orders: pdBoardOrders(entries)}, nil
	})
	return b, err
}

// pdBoardOrders sorts the board once per sort key and direction.
func pdBoardOrders(entries []pdBoardEntry) map[string][]int32 {
	out := make(map[string][]int32, 2*len(PerpdexSortKeys))
	keys := make([]BoardKey, len(entries))
	for name, get := range PerpdexSortKeys {
		for i := range entries {
			keys[i] = BoardKey{get(&entries[i].row), entries[i].row.Wallet}
		}
		for _, desc := range []bool{false, true} {
			idx := make([]int32, len(entries))
			for i := range idx {
				idx[i] = int32(i)
			}
			sort.Slice(idx, func(a, b int) bool { return pdBoardLess(keys[idx[a]], keys[idx[b]], desc) })
			out[pdOrderKey(name, desc)] = idx
		}
	}
	return out
}

func pdOrderKey(sortKey string, desc bool) string {
	if desc {
		return sortKey + "|desc"
	}
	return sortKey + "|asc"
}

// PerpdexWarm builds every window's leaderboard and the builders route's figures for
// the current board hour, waiting for them: a server calls it at start (and may call
// it every minute: after the hour turns it returns at once, serving the previous
// hour's figures while the new ones build in the background).
func (q *Queries) PerpdexWarm(ctx context.Context) error {
	// The closed trades first: republished only when a fills file changed.
	step := q.warmSteps("perpdex")
	if _, err := q.PublishPerpdexClosedTrades(ctx); err != nil {
		return err
	}
	step("closed trades publication check")
	for _, w := range PerpdexWindowNames {
		if _, err := q.perpdexBoardOf(ctx, w); warmed(err) != nil {
			return err
		}
		step("leaderboard " + w)
	}
	err := q.perpdexWarmBuilders(ctx)
	step("builders")
	return err
}

// PerpdexWindowNames lists the windows in a fixed order.
var PerpdexWindowNames = []string{"1d", "7d", "30d", "all"}

func pdRatio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return Round(float64(n)/float64(d), 6)
}

func pdPtr(x float64, places int) *float64 { r := Round(x, places); return &r }

// perpdexBoardGroups are the wallet ranges a leaderboard is computed in, one pass each:
// four buckets of perpdex_closed_trades apiece ("0-3" is buckets 0 to 3), in order. A
// pass has a fixed cost (planning, and opening every date file of the window's tables:
// about 0.2 cpu-s at large whatever its range), which sixteen passes paid sixteen times:
// four passes of four buckets took a third less CPU for the four windows at large, for
// a peak of about 1 GB instead of 0.55 (docs/PERFORMANCE.md).
var perpdexBoardGroups = []string{"0-3", "4-7", "8-b", "c-f"}

// boardGroupRange is the wallet range [lo, hi) of a group of buckets "f-l".
func boardGroupRange(g string) (lo, hi string) {
	lo, _ = bucketRange(g[:1])
	_, hi = bucketRange(g[2:])
	return lo, hi
}

// perpdexComputeBoard computes the board one group of wallet buckets at a time
// (perpdexBoardGroups), so DuckDB holds a quarter of the window's rows at once; every
// figure is per wallet, so the rows are those of one pass over all wallets. Each
// group's rows are published as perpdex_board (board = window.group) for the board
// hour end, and read back from there while the sources stay the same.
func (q *Queries) perpdexComputeBoard(ctx context.Context, window string, start, end time.Time, labels sql.NullTime) ([]pdBoardEntry, error) {
	sig, err := q.perpdexBoardSig(labels)
	if err != nil {
		return nil, err
	}
	// The fills' per-day partial sums brought up to date and the position batches of
	// the uPnL delta, once for every group, and only when a group is to be computed (a
	// published board is read back without them).
	lo, hi := perpdexBoardDays(start, end, false)
	partials := false
	batches := []any{sql.NullTime{}, sql.NullTime{}}
	for _, g := range perpdexBoardGroups {
		rel, err := lake.PerpdexBoard.Path(window+"."+g, boardBuilt(end, sig))
		if err != nil {
			return nil, &StoreError{Op: "perpdex board", Err: err}
		}
		if _, err := os.Stat(filepath.Join(q.dir, filepath.FromSlash(rel))); err != nil {
			bs, be, err := q.PerpdexBoardBatches(ctx, start, end)
			if err != nil {
				return nil, err
			}
			batches = []any{bs, be}
			if _, err := q.PublishPerpdexDaily(ctx); err == nil {
				partials = true
				lo, hi = perpdexBoardDays(start, end, true)
			} else if ctx.Err() != nil || !isWriteError(err) {
				return nil, err
			} else {
				// A read-only lake: every row read raw (the same figures, more slowly).
				q.log.Warn("perpdex daily partial sums not published (lake not writable); board from raw rows", "err", err)
			}
			break
		}
	}
	cs, ce, whole, err := q.perpdexCarryDates(start, hi, partials)
	if err != nil {
		return nil, err
	}
	// The window "all"'s trades up to the day before the board's from their carry.
	tc, tFrom, err := q.perpdexTradesCarryDate(start, end.UTC().Truncate(24*time.Hour))
	if err != nil {
		return nil, err
	}
	batches = append(batches, lo, hi, cs, ce, partials, whole, tc, tFrom)
	out := []pdBoardEntry{}
	for _, g := range perpdexBoardGroups {
		lo, hi := boardGroupRange(g)
		var err error
		if out, err = q.perpdexBoardGroup(ctx, out, window+"."+g, sig, start, end, lo, hi, labels, batches); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// perpdexBoardSig is the source signature the leaderboard groups are published under
// (and PublishedCurrent looks them up by): the source files, the sums' kind, and the
// labels' snapshot, which is part of what a board was computed from.
func (q *Queries) perpdexBoardSig(labels sql.NullTime) (string, error) {
	sig, err := filesSignature(q.dir, perpdexBoardSources...)
	if err != nil {
		return "", &StoreError{Op: "perpdex board", Err: err}
	}
	// Boards published before the window's sums (and its trades' sums) were exact decimals
	// are recomputed.
	sig += "|exact sums|exact trade sums"
	if labels.Valid {
		sig += "|labels " + labels.Time.UTC().Format(time.RFC3339Nano)
	}
	return sig, nil
}

// PerpdexBoardBatches returns the position batches a board's uPnL delta compares
// (sql/perpdex/board_batches.sql): the newest at or before start and at or before end.
func (q *Queries) PerpdexBoardBatches(ctx context.Context, start, end time.Time) (bStart, bEnd sql.NullTime, err error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	err = q.db.QueryRowContext(ctx, perpdexBoardBatchesSQL, start, end).Scan(&bStart, &bEnd)
	return bStart, bEnd, wrap(ctx, "perpdex board", err)
}

// perpdexBoardGroup appends the board rows of one group of wallet buckets; batches are the
// position batches, the complete days, the carry dates, whether the per-day tables
// were published, the window "all"'s carry date, its trades carry date and the instant
// its raw trades start from (sql/perpdex/board.sql $6 to $15).
func (q *Queries) perpdexBoardGroup(ctx context.Context, out []pdBoardEntry, board, sig string, start, end time.Time, lo, hi string,
	labels sql.NullTime, batches []any) ([]pdBoardEntry, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.boardRows(ctx, lake.PerpdexBoard, board, end, sig, nil, perpdexBoardSQL, append([]any{start, end, lo, hi, labels}, batches...)...)
	if err != nil {
		return nil, wrap(ctx, "perpdex board", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r                                           TraderRow
			avStart, realized, fees, vol, cum           float64
			n, wins, losses, longs, lwins, shorts, swin int64
			longPnl, shortPnl, gw, gl                   float64
			expectancy, avgDur, avgLev                  *float64
			ws, ls                                      int64
			maxDD, curDD, maxDDUsd, paid                float64
			dep, wd, sin, sout, dUpnl                   float64
			sends, activeDays                           int64
			lastDay                                     time.Time
		)
		if err := rows.Scan(&r.Wallet, &r.AccountValue, &avStart, &realized, &fees, &vol, &cum,
			&n, &wins, &losses, &longs, &lwins, &shorts, &swin, &longPnl, &shortPnl, &gw, &gl,
			&expectancy, &avgDur, &ws, &ls, &maxDD, &curDD, &maxDDUsd, &avgLev, &paid,
			&dep, &wd, &sin, &sout, &sends, &dUpnl, &activeDays, &lastDay,
			&r.SizeCohort, &r.PnlCohort, &r.PnlCohortTag, &r.StyleCohortTag); err != nil {
			return nil, wrap(ctx, "perpdex board", err)
		}
		net := realized - fees
		capital := avStart + dep + sin
		r.TotalRealizedPnl = Round(net, 2)
		r.CumRealizedPnl = Round(cum, 2)
		r.Roi = Round(net/math.Max(capital, 1), 6)
		if capital >= 1 {
			r.PnlPct = pdPtr(net/capital*100, 6)
		}
		r.AccountValue = Round(r.AccountValue, 2)
		r.TotalVolume, r.TotalFee = Round(vol, 2), Round(fees, 2)
		r.TradeCount, r.WinCount, r.LossCount = n, wins, losses
		r.WinRate, r.LongWinRate, r.ShortWinRate = pdRatio(wins, n), pdRatio(lwins, longs), pdRatio(swin, shorts)
		r.LongPnl, r.ShortPnl = Round(longPnl, 2), Round(shortPnl, 2)
		if gl < 0 {
			r.ProfitFactor = pdPtr(gw/-gl, 6)
		}
		if expectancy != nil {
			r.Expectancy = pdPtr(*expectancy, 2)
		}
		r.MaxDrawdownPct, r.CurrentDrawdownPct = Round(maxDD, 6), Round(curDD, 6)
		if r.PnlPct != nil && maxDD > 0 {
			r.CalmarRatio = pdPtr(*r.PnlPct/maxDD, 6)
		}
		if maxDDUsd > 0 {
			r.RecoveryFactor = pdPtr(net/maxDDUsd, 6)
		}
		r.MaxWinStreak, r.MaxLossStreak = ws, ls
		if avgLev != nil {
			r.AvgLeverage = pdPtr(*avgLev, 6)
		}
		if avgDur != nil {
			d := int64(math.Round(*avgDur))
			r.AvgDurationSeconds = &d
		}
		r.pnlAbs = PerpdexPnlAbsBand(cum)
		fa := FlowAdjustedRow{
			Attributed: FlowAttribution{
				TradingPnlTotal:    Round(realized-fees-paid+dUpnl, 2),
				RealizedTradingPnl: Round(realized, 2),
				DeltaUnrealizedPnl: Round(dUpnl, 2),
				FundingPaidUsd:     Round(paid, 2),
				DeltaAccountValue:  Round(r.AccountValue-avStart, 2),
				AccountValueEod:    r.AccountValue,
				ActiveDays:         activeDays,
				LastDay:            Date(lastDay),
				PerpsTradingPnl:    Round(realized+dUpnl, 2),
			},
			Flow: FlowTotals{
				DepositUsd: Round(dep, 2), WithdrawUsd: Round(wd, 2),
				NetExternalFlowUsd: Round(dep-wd, 2), NetTotalFlowUsd: Round(dep-wd+sin-sout, 2),
			},
			FlowUnbalanced: sends > 0,
		}
		out = append(out, pdBoardEntry{row: r, flow: fa})
	}
	return out, wrap(ctx, "perpdex board", rows.Err())
}

// PerpdexPnlAbsBands are the pnl_abs cohort slugs: lifetime realized PnL net of fees
// (cum_realized_pnl) in USD.
var PerpdexPnlAbsBands = []PerpdexBand{
	{"mega_winner", 1_000_000}, {"big_winner", 100_000}, {"winner", 10_000}, {"small_winner", 1e-9},
	{"flat", -1e-9}, {"small_loser", -10_000}, {"loser", -100_000}, {"big_loser", -1_000_000}, {"mega_loser", math.Inf(-1)},
}

// PerpdexBand is one cohort band: Min is the band's inclusive floor.
type PerpdexBand struct {
	Slug string
	Min  float64
}

// PerpdexBandOf returns the slug of the first band whose floor v reaches.
func PerpdexBandOf(bands []PerpdexBand, v float64) string {
	for _, b := range bands {
		if v >= b.Min {
			return b.Slug
		}
	}
	return bands[len(bands)-1].Slug
}

// PerpdexPnlAbsBand labels lifetime PnL in USD.
func PerpdexPnlAbsBand(cum float64) string { return PerpdexBandOf(PerpdexPnlAbsBands, cum) }

// PerpdexSortKeys maps each leaderboard sort key to the value it orders by.
var PerpdexSortKeys = map[string]func(r *TraderRow) *float64{
	"pnl":             func(r *TraderRow) *float64 { return &r.TotalRealizedPnl },
	"realized_pnl":    func(r *TraderRow) *float64 { return &r.CumRealizedPnl },
	"roi":             func(r *TraderRow) *float64 { return &r.Roi },
	"volume":          func(r *TraderRow) *float64 { return &r.TotalVolume },
	"trades":          func(r *TraderRow) *float64 { f := float64(r.TradeCount); return &f },
	"win_rate":        func(r *TraderRow) *float64 { return &r.WinRate },
	"long_win_rate":   func(r *TraderRow) *float64 { return &r.LongWinRate },
	"short_win_rate":  func(r *TraderRow) *float64 { return &r.ShortWinRate },
	"account_value":   func(r *TraderRow) *float64 { return &r.AccountValue },
	"profit_factor":   func(r *TraderRow) *float64 { return r.ProfitFactor },
	"expectancy":      func(r *TraderRow) *float64 { return r.Expectancy },
	"calmar":          func(r *TraderRow) *float64 { return r.CalmarRatio },
	"recovery_factor": func(r *TraderRow) *float64 { return r.RecoveryFactor },
	"max_drawdown":    func(r *TraderRow) *float64 { return &r.MaxDrawdownPct },
	"current_drawdown": func(r *TraderRow) *float64 {
		return &r.CurrentDrawdownPct
	},
	"avg_leverage": func(r *TraderRow) *float64 { return r.AvgLeverage },
	"avg_duration": func(r *TraderRow) *float64 {
		if r.AvgDurationSeconds == nil {
			return nil
		}
		f := float64(*r.AvgDurationSeconds)
		return &f
	},
	"fees":        func(r *TraderRow) *float64 { return &r.TotalFee },
	"win_streak":  func(r *TraderRow) *float64 { f := float64(r.MaxWinStreak); return &f },
	"loss_streak": func(r *TraderRow) *float64 { f := float64(r.MaxLossStreak); return &f },
}

// PerpdexSortKeyNames lists the sort keys in SPEC order.
var PerpdexSortKeyNames = []string{"pnl", "realized_pnl", "roi", "volume", "trades", "win_rate", "long_win_rate",
	"short_win_rate", "account_value", "profit_factor", "expectancy", "calmar", "recovery_factor", "max_drawdown",
	"current_drawdown", "avg_leverage", "avg_duration", "fees", "win_streak", "loss_streak"}

// BoardKey is the keyset position of a board row: its sort value and wallet.
type BoardKey struct {
	Value  *float64 `json:"v"`
	Wallet string   `json:"w"`
}

// pdBoardLess orders rows by value in the requested direction, nulls last in both
// directions, then by wallet ascending.
func pdBoardLess(a, b BoardKey, desc bool) bool {
	switch {
	case a.Value == nil && b.Value == nil:
	case a.Value == nil:
		return false
	case b.Value == nil:
		return true
	case *a.Value != *b.Value:
		if desc {
			return *a.Value > *b.Value
		}
		return *a.Value < *b.Value
	}
	return a.Wallet < b.Wallet
}

// PerpdexLeaderboardParams are the inputs of PerpdexLeaderboard.
type PerpdexLeaderboardParams struct {
	Window     string
	Sort       string
	Desc       bool
	Axis       string // size, pnl, pnl_abs
	Cohort     string // "" for every wallet
	MinTrades  int64
	MinWinRate float64
	MinVolume  float64
	Limit      int
	After      *BoardKey // resume strictly after this row
}

// TraderPage is the envelope of /v1/perpdex/leaderboard.
type TraderPage struct {
	Traders    []TraderRow `json:"traders"`
	TotalCount int         `json:"totalCount" doc:"wallets passing the filters"`
	NextCursor *string     `json:"nextCursor"`
	Next       *BoardKey   `json:"-"`
}

func (p *PerpdexLeaderboardParams) keep(r *TraderRow) bool {
	if r.TradeCount < p.MinTrades || r.WinRate < p.MinWinRate || r.TotalVolume < p.MinVolume {
		return false
	}
	if p.Cohort == "" {
		return true
	}
	var label *string
	switch p.Axis {
	case "pnl":
		label = r.PnlCohort
	case "pnl_abs":
		label = &r.pnlAbs
	default:
		label = r.SizeCohort
	}
	return label != nil && strings.EqualFold(*label, p.Cohort)
}

// PerpdexLeaderboard filters, orders and pages the window's board: the order is the
// board's precomputed one, so a request only filters and copies a page.
func (q *Queries) PerpdexLeaderboard(ctx context.Context, p PerpdexLeaderboardParams) (TraderPage, error) {
	board, err := q.perpdexBoardOf(ctx, p.Window)
	if err != nil {
		return TraderPage{}, err
	}
	get := PerpdexSortKeys[p.Sort]
	key := func(i int32) BoardKey { r := &board.entries[i].row; return BoardKey{get(r), r.Wallet} }
	rows := board.rows(&p)
	i := 0
	if p.After != nil {
		i = sort.Search(len(rows), func(i int) bool { return pdBoardLess(*p.After, key(rows[i]), p.Desc) })
	}
	page := TraderPage{Traders: []TraderRow{}, TotalCount: len(rows)}
	for ; i < len(rows) && len(page.Traders) < p.Limit; i++ {
		r := board.entries[rows[i]].row
		r.Rank = i + 1
		page.Traders = append(page.Traders, r)
	}
	if i < len(rows) && len(page.Traders) > 0 {
		k := key(rows[i-1])
		page.Next = &k
	}
	return page, nil
}

// FlowAdjustedPage is the envelope of /v1/perpdex/leaderboard/flow-adjusted.
type FlowAdjustedPage struct {
	Traders    []FlowAdjustedRow `json:"traders"`
	TotalCount int               `json:"totalCount"`
	NextCursor *string           `json:"nextCursor"`
	RankedBy   string            `json:"ranked_by"`
	Next       *BoardKey         `json:"-"`
}

// PerpdexFlowRankedBy describes the flow-adjusted ranking.
const PerpdexFlowRankedBy = "total_realized_pnl: fills-derived realized PnL net of fees in the window, descending (deposits, withdrawals and sends excluded); ties by wallet"

// PerpdexFlowAdjusted ranks the window's board on fills-derived realized PnL (the
// board's precomputed pnl order: total_realized_pnl descending, then wallet).
func (q *Queries) PerpdexFlowAdjusted(ctx context.Context, window string, limit int, after *BoardKey) (FlowAdjustedPage, error) {
	board, err := q.perpdexBoardOf(ctx, window)
	if err != nil {
		return FlowAdjustedPage{}, err
	}
	rows := board.orders[pdOrderKey("pnl", true)]
	key := func(i int32) BoardKey {
		r := &board.entries[i].row
		v := r.TotalRealizedPnl
		return BoardKey{&v, r.Wallet}
	}
	i := 0
	if after != nil {
		i = sort.Search(len(rows), func(i int) bool { return pdBoardLess(*after, key(rows[i]), true) })
	}
	page := FlowAdjustedPage{Traders: []FlowAdjustedRow{}, TotalCount: len(rows), RankedBy: PerpdexFlowRankedBy}
	for ; i < len(rows) && len(page.Traders) < limit; i++ {
		e := &board.entries[rows[i]]
		f := e.flow
		f.TraderRow = e.row
		f.Rank = i + 1
		page.Traders = append(page.Traders, f)
	}
	if i < len(rows) && len(page.Traders) > 0 {
		k := key(rows[i-1])
		page.Next = &k
	}
	return page, nil
}
