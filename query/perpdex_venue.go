package query

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexLiquidationsSQL = sqlfiles.MustRead("perpdex/liquidations.sql")
	perpdexStatsSQL        = sqlfiles.MustRead("perpdex/stats.sql")
	perpdexStatsMoreSQL    = sqlfiles.MustRead("perpdex/stats_more.sql")
	// perpdexMatchSQL is the single-statement answer of positions/match over the raw
	// files; the in-memory batch (perpdex_positions_match.go) must equal it, which its
	// freshness test and benchmark check.
	perpdexMatchSQL     = sqlfiles.MustRead("perpdex/positions_match.sql")
	perpdexHoldersSQL   = sqlfiles.MustRead("perpdex/hype_holders.sql")
	perpdexHypePriceSQL = sqlfiles.MustRead("perpdex/hype_price.sql")
)

// ISOMicrosOffset formats t as ISO-8601 UTC with microseconds and an explicit offset.
func ISOMicrosOffset(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

// PerpdexLabelStart is the first hour with a published point-in-time cohort label.
var PerpdexLabelStart = time.Date(2026, 4, 7, 0, 0, 0, 0, time.UTC)

// LiquidationRow is one liquidated user's fill.
type LiquidationRow struct {
	LiqTS          string  `json:"liq_ts" doc:"ISO-8601 UTC with microseconds and offset"`
	Wallet         string  `json:"wallet"`
	Asset          string  `json:"asset"`
	Side           string  `json:"side" doc:"the side that was closed: long or short"`
	SizeToken      float64 `json:"size_token"`
	SizeUsd        float64 `json:"size_usd" doc:"size times fill price"`
	MarkPrice      float64 `json:"mark_price" doc:"mark price at liquidation"`
	SizeCohort     *string `json:"size_cohort"`
	PnlCohort      *string `json:"pnl_cohort"`
	PnlCohortBasis *string `json:"pnl_cohort_basis" doc:"point_in_time (the label published for the liquidation's hour) or current (today's label, lookahead); null when the wallet has no label"`
}

// LabelComputed describes how the cohort labels of a page were graded.
type LabelComputed struct {
	Grading    string `json:"grading"`
	LabelBasis string `json:"label_basis,omitempty"`
	When       string `json:"when"`
	Lookahead  bool   `json:"lookahead" doc:"true when a row of the page carries today's label (current basis)"`
	Resolution string `json:"resolution,omitempty"`
	Source     string `json:"source"`
	Detail     string `json:"detail"`
	Caveat     string `json:"caveat"`
}

// LiquidationsPage is the envelope of /v1/perpdex/liquidations.
type LiquidationsPage struct {
	Liquidations  []LiquidationRow `json:"liquidations"`
	LabelComputed LabelComputed    `json:"label_computed"`
	NextCursor    *string          `json:"nextCursor"`
	Next          *LiquidationKey  `json:"-"`
}

// LiquidationKey is the keyset position of a liquidation row.
type LiquidationKey struct {
	Time   time.Time `json:"t"`
	Tid    int64     `json:"i"`
	Wallet string    `json:"w"`
}

// PerpdexLiquidationsParams are the inputs of PerpdexLiquidations.
type PerpdexLiquidationsParams struct {
	Coin, Wallet, Direction string // "" for any
	Start, End              time.Time
	Limit                   int
	After                   *LiquidationKey
}

// PerpdexLiquidations pages liquidations newest first.
func (q *Queries) PerpdexLiquidations(ctx context.Context, p PerpdexLiquidationsParams) (LiquidationsPage, error) {
	page := LiquidationsPage{Liquidations: []LiquidationRow{}, LabelComputed: LabelComputed{
		Grading:    "hourly cohort labels",
		When:       "each row: the label published for the wallet at the start of the liquidation's UTC hour (point_in_time); hourly labels exist from 2026-04-07",
		Resolution: "1h",
		Source:     "perpdex_cohorts_hourly, falling back to perpdex_cohorts_current",
		Detail:     "size_cohort bands account value; pnl_cohort bands all-time PnL as a multiple of capital (slugs use underscores, e.g. 3x_smart)",
		Caveat:     "rows before 2026-04-07, in the newest not-yet-published hours, or of wallets missing from that hour's labels carry today's label (basis current), which knows the future",
	}}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return page, err
	}
	lab, err := q.perpdexLabelsAt(ctx, q.Now())
	if err != nil {
		return page, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aTid, aW any
	if p.After != nil {
		aT, aTid, aW = p.After.Time, p.After.Tid, p.After.Wallet
	}
	pub, rawDates, err := q.dayEntries(perpdexLiquidationDays)
	if err != nil {
		return page, &StoreError{Op: "perpdex liquidations", Err: err}
	}
	sort.Strings(rawDates)
	// A published date without rows has no file (nothing to name to read_parquet).
	all := make([]string, 0, len(pub))
	for d, e := range pub {
		if e.Rows > 0 {
			all = append(all, d)
		}
	}
	sort.Strings(all)
	upper := p.End
	if p.After != nil && p.After.Time.Before(upper) {
		upper = p.After.Time
	}
	rawFiles, err := q.liquidationFiles(nil, rawDates)
	if err != nil {
		return page, &StoreError{Op: "perpdex liquidations", Err: err}
	}
	args := []any{pdNullStr(p.Coin), pdNullStr(p.Wallet), p.Start, p.End,
		pdNullStr(p.Direction), aT, aTid, aW, p.Limit + 1, lab.current, lab.hourlyUntil, "", rawFiles}
	// The newest published days that can hold the page first: when they give a full page
	// whose oldest row is newer than every day left out, the page is the one all days
	// give; otherwise (filters leave too few rows, or days overlap) every day is read.
	newest, rest := newestLiquidationDays(pub, len(rawDates) == 0, p.Start.UnixMicro(), upper.UnixMicro(), p.Limit+1)
	var labelDates liqSpan
	exact := false
	if newest != nil {
		if args[11], err = q.liquidationFiles(newest, nil); err != nil {
			return page, &StoreError{Op: "perpdex liquidations", Err: err}
		}
		labelDates, err = q.liquidationDates(ctx, args)
		if err != nil {
			return page, err
		}
		exact = labelDates.n == p.Limit+1
		for _, d := range rest {
			if pub[d].Last >= labelDates.oldest.UnixMicro() {
				exact = false
			}
		}
	}
	if !exact {
		if args[11], err = q.liquidationFiles(all, nil); err != nil {
			return page, &StoreError{Op: "perpdex liquidations", Err: err}
		}
		if labelDates, err = q.liquidationDates(ctx, args); err != nil {
			return page, err
		}
	}
	labelFiles, err := q.labelFiles(labelDates.dates)
	if err != nil {
		return page, &StoreError{Op: "perpdex liquidations", Err: err}
	}
	rows, err := q.db.QueryContext(ctx, perpdexLiquidationsSQL, append(args, labelFiles, labelDates.from, labelDates.to)...)
	if err != nil {
		return page, wrap(ctx, "perpdex liquidations", err)
	}
	defer rows.Close()
	var last LiquidationKey
	for rows.Next() {
		var (
			r      LiquidationRow
			t      time.Time
			tid    int64
			mark   sql.NullFloat64
			hs, hp sql.NullString
			pit    bool
			cs, cp sql.NullString
		)
		if err := rows.Scan(&t, &r.Wallet, &r.Asset, &r.Side, &r.SizeToken, &r.SizeUsd, &mark, &tid, &hs, &hp, &pit, &cs, &cp); err != nil {
			return page, wrap(ctx, "perpdex liquidations", err)
		}
		if len(page.Liquidations) == p.Limit {
			page.Next = &last
			break
		}
		r.LiqTS = ISOMicrosOffset(t)
		r.SizeUsd, r.MarkPrice = Round(r.SizeUsd, 2), mark.Float64
		basis := ""
		switch {
		case pit:
			basis = "point_in_time"
			r.SizeCohort, r.PnlCohort = nullable(hs), nullable(hp)
		case cs.Valid || cp.Valid:
			basis = "current"
			r.SizeCohort, r.PnlCohort = nullable(cs), nullable(cp)
			page.LabelComputed.Lookahead = true
		}
		if basis != "" {
			r.PnlCohortBasis = &basis
		}
		page.Liquidations = append(page.Liquidations, r)
		last = LiquidationKey{t, tid, r.Wallet}
	}
	return page, wrap(ctx, "perpdex liquidations", rows.Err())
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

// VenueStatsRow is one hour of venue-wide statistics.
type VenueStatsRow struct {
	TS                     string  `json:"ts" doc:"hour, ISO-8601 UTC"`
	TotalPerpEquity        float64 `json:"total_perp_equity"`
	CountWallets           int64   `json:"count_wallets"`
	CountOpenPositions     int64   `json:"count_open_positions"`
	CountLong              int64   `json:"count_long"`
	CountShort             int64   `json:"count_short"`
	OpenInterest           float64 `json:"open_interest"`
	OpenInterestLong       float64 `json:"open_interest_long"`
	OpenInterestShort      float64 `json:"open_interest_short"`
	CountPositionsInProfit int64   `json:"count_positions_in_profit"`
}

// StatsPage is the envelope of /v1/perpdex/stats.
type StatsPage struct {
	Metrics    []VenueStatsRow `json:"metrics"`
	NextCursor *string         `json:"nextCursor"`
	Next       *time.Time      `json:"-"`
}

// PerpdexStatsParams are the inputs of PerpdexStats.
type PerpdexStatsParams struct {
	Start, End time.Time  // both inclusive
	Limit      int        // rows per page
	Before     *time.Time // cursor: resume strictly before this hour
}

// PerpdexStats pages hourly statistics newest first. Without a cursor the page covers
// the limit hours ending at End (Start only narrows it); with a cursor it continues
// from the cursor down to Start.
func (q *Queries) PerpdexStats(ctx context.Context, p PerpdexStatsParams) (StatsPage, error) {
	page := StatsPage{Metrics: []VenueStatsRow{}}
	lo, hi := p.Start, p.End
	if p.Before != nil {
		hi = p.Before.Add(-time.Microsecond)
	} else if w := p.End.Add(-time.Duration(p.Limit)*time.Hour + time.Microsecond); w.After(lo) {
		lo = w
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexStatsSQL, lo, hi, p.Limit)
	if err != nil {
		return page, wrap(ctx, "perpdex stats", err)
	}
	defer rows.Close()
	var last time.Time
	for rows.Next() {
		var r VenueStatsRow
		var ts time.Time
		if err := rows.Scan(&ts, &r.TotalPerpEquity, &r.CountWallets, &r.CountOpenPositions, &r.CountLong, &r.CountShort,
			&r.OpenInterest, &r.OpenInterestLong, &r.OpenInterestShort, &r.CountPositionsInProfit); err != nil {
			return page, wrap(ctx, "perpdex stats", err)
		}
		r.TS = ts.UTC().Format(time.RFC3339)
		page.Metrics = append(page.Metrics, r)
		last = ts
	}
	if err := rows.Err(); err != nil {
		return page, wrap(ctx, "perpdex stats", err)
	}
	// A next page exists when an older hour down to Start remains.
	if len(page.Metrics) > 0 {
		var n int64
		if err := q.db.QueryRowContext(ctx, perpdexStatsMoreSQL,
			last, p.Start).Scan(&n); err != nil {
			return page, wrap(ctx, "perpdex stats", err)
		}
		if n > 0 {
			page.Next = &last
		}
	}
	return page, nil
}

// PositionMatch is one open position like the queried one.
type PositionMatch struct {
	Address          string  `json:"address"`
	Coin             string  `json:"coin"`
	Side             string  `json:"side"`
	SnapshotTS       int64   `json:"snapshot_ts" doc:"epoch seconds of the snapshot the position was seen in"`
	SizeToken        float64 `json:"size_token"`
	SizeUsd          float64 `json:"size_usd"`
	EntryPrice       float64 `json:"entry_price"`
	MarkPrice        float64 `json:"mark_price"`
	Leverage         float64 `json:"leverage"`
	LiquidationPrice float64 `json:"liquidation_price" doc:"0.0 when the venue reports none"`
	UnrealizedPnl    float64 `json:"unrealized_pnl"`
	EntryDistPct     float64 `json:"entry_dist_pct" doc:"distance of entry_price from the queried entry, percent"`
}

// MatchQuery echoes the resolved request.
type MatchQuery struct {
	Coin          string  `json:"coin"`
	Side          string  `json:"side"`
	Leverage      float64 `json:"leverage"`
	EntryPrice    float64 `json:"entry_price"`
	MarkPriceHint float64 `json:"mark_price_hint" doc:"the mark used for ranking (entry_price when not sent)"`
}

// MatchPage is the envelope of /v1/perpdex/positions/match.
type MatchPage struct {
	Matches       []PositionMatch `json:"matches"`
	MatchCount    int             `json:"match_count"`
	ToleranceUsed *string         `json:"tolerance_used" doc:"tight (0.05%), medium (0.5%) or wide (1.0%); null without a match"`
	Query         MatchQuery      `json:"query"`
}

// PerpdexToleranceBands names the entry-price bands in the order they are tried.
var PerpdexToleranceBands = []struct {
	Name string
	Frac float64
}{{"tight", 0.0005}, {"medium", 0.005}, {"wide", 0.01}}

// HolderRow is one HYPE holder.
type HolderRow struct {
	Wallet          string   `json:"wallet"`
	Rank            int64    `json:"rank" doc:"position in the requested order"`
	SpotAmount      float64  `json:"spot_amount"`
	SpotAmountUsd   float64  `json:"spot_amount_usd"`
	StakedAmount    float64  `json:"staked_amount" doc:"delegated amount only"`
	StakedAmountUsd float64  `json:"staked_amount_usd"`
	TotalAmount     float64  `json:"total_amount"`
	TotalAmountUsd  float64  `json:"total_amount_usd"`
	AccountValue    *float64 `json:"account_value" doc:"perp equity at the latest snapshot; null when the wallet has no perp account"`
	SizeCohort      *string  `json:"size_cohort"`
	PnlCohort       string   `json:"pnl_cohort" doc:"today's PnL band; unknown when the wallet has none"`
}

// HoldersPage is the envelope of /v1/perpdex/hype/holders.
type HoldersPage struct {
	Holders       []HolderRow   `json:"holders"`
	HypePriceUsd  *float64      `json:"hype_price_usd" doc:"the one price every row's USD figures use: the latest HYPE mark"`
	LabelBasis    string        `json:"label_basis"`
	LabelComputed LabelComputed `json:"label_computed"`
	NextCursor    *string       `json:"nextCursor"`
	Next          *int64        `json:"-"`
}

// PerpdexHypeHolders pages HYPE holders by total balance; rank counts in the
// requested direction and the cursor is the last rank served.
func (q *Queries) PerpdexHypeHolders(ctx context.Context, desc bool, afterRank int64, limit int) (HoldersPage, error) {
	page := HoldersPage{Holders: []HolderRow{}, LabelBasis: "current", LabelComputed: LabelComputed{
		Grading: "current cohort labels", LabelBasis: "current",
		When:   "today's labels (perpdex_cohorts_current.computed_at)",
		Source: "perpdex_cohorts_current", Lookahead: true,
		Detail: "size_cohort bands account value; pnl_cohort bands all-time PnL as a multiple of capital",
		Caveat: "labels are today's, not as of when the balances were read",
	}}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return page, err
	}
	lab, err := q.perpdexLabelsAt(ctx, q.Now())
	if err != nil {
		return page, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var price sql.NullFloat64
	if err := q.db.QueryRowContext(ctx, perpdexHypePriceSQL, q.Now()).Scan(&price); err != nil {
		return page, wrap(ctx, "perpdex hype holders", err)
	}
	if price.Valid {
		page.HypePriceUsd = &price.Float64
	}
	rows, err := q.db.QueryContext(ctx, perpdexHoldersSQL, desc, afterRank, limit, q.Now(), lab.current)
	if err != nil {
		return page, wrap(ctx, "perpdex hype holders", err)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var (
			r  HolderRow
			av sql.NullFloat64
			sc sql.NullString
			pc sql.NullString
		)
		if err := rows.Scan(&r.Wallet, &r.Rank, &r.SpotAmount, &r.StakedAmount, &r.TotalAmount, &av, &sc, &pc, &total); err != nil {
			return page, wrap(ctx, "perpdex hype holders", err)
		}
		p := price.Float64
		r.SpotAmountUsd, r.StakedAmountUsd, r.TotalAmountUsd = Round(r.SpotAmount*p, 2), Round(r.StakedAmount*p, 2), Round(r.TotalAmount*p, 2)
		if av.Valid {
			r.AccountValue = pdPtr(av.Float64, 2)
		}
		r.SizeCohort = nullable(sc)
		r.PnlCohort = "unknown"
		if pc.Valid {
			r.PnlCohort = pc.String
		}
		page.Holders = append(page.Holders, r)
	}
	if n := len(page.Holders); n > 0 && page.Holders[n-1].Rank < total {
		last := page.Holders[n-1].Rank
		page.Next = &last
	}
	return page, wrap(ctx, "perpdex hype holders", rows.Err())
}

// newestLiquidationDays picks, when every fills date is published (ok), the newest
// published days holding rows in [start, upper] (epoch µs) until they hold need rows,
// and the other candidate days; nil when there is no such choice to make.
func newestLiquidationDays(pub map[string]daySource, ok bool, start, upper int64, need int) (newest, rest []string) {
	if !ok {
		return nil, nil
	}
	var cand []string
	for d, e := range pub {
		if e.Rows > 0 && e.First <= upper && e.Last >= start {
			cand = append(cand, d)
		}
	}
	sort.Slice(cand, func(i, j int) bool { return pub[cand[i]].Last > pub[cand[j]].Last })
	n := int64(0)
	for i, d := range cand {
		n += pub[d].Rows
		if n >= int64(need) {
			return cand[:i+1], cand[i+1:]
		}
	}
	return nil, nil
}

// liqArgCurrent is the index in liquidations.sql's arguments of the snapshot of
// today's labels ($10).
const liqArgCurrent = 9

// liqSpan is what the unlabelled run of a page tells the labelled one: the UTC dates
// of its rows (comma-separated) and the first and last hour (NULL without rows), with
// the oldest row's time and the rows' count.
type liqSpan struct {
	dates    string
	from, to any
	oldest   time.Time
	n        int
}

// liquidationDates runs liquidations.sql with no labels (no hourly-label file and no
// snapshot of today's labels: a LEFT JOIN keeps the page's rows and their order
// whatever it finds, so the rows are the labelled run's) and returns the page's span:
// the label partitions and hours the labelled run reads. Joining today's labels here
// read every wallet's label once more per page for nothing.
func (q *Queries) liquidationDates(ctx context.Context, args []any) (liqSpan, error) {
	const op = "perpdex liquidations"
	var sp liqSpan
	none, err := q.fileList(lake.PerpdexCohortsHourly, nil)
	if err != nil {
		return sp, &StoreError{Op: op, Err: err}
	}
	args = slices.Clone(args)
	args[liqArgCurrent] = nil
	rows, err := q.db.QueryContext(ctx, perpdexLiquidationsSQL, append(args, none, nil, nil)...)
	if err != nil {
		return sp, wrap(ctx, op, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return sp, wrap(ctx, op, err)
	}
	vals := make([]any, len(cols))
	for i := range vals {
		vals[i] = new(any)
	}
	var t time.Time
	vals[0] = &t
	var dates []string
	var first, last time.Time
	for rows.Next() {
		if err := rows.Scan(vals...); err != nil {
			return sp, wrap(ctx, op, err)
		}
		if sp.n == 0 {
			last = t
		}
		sp.n++
		first, sp.oldest = t, t
		if d := t.UTC().Format("2006-01-02"); !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	if sp.n > 0 {
		sp.from, sp.to = first.UTC().Truncate(time.Hour), last.UTC().Truncate(time.Hour)
	}
	sp.dates = strings.Join(dates, ",")
	return sp, wrap(ctx, op, rows.Err())
}

// liquidationFiles is the file list liquidations.sql reads for the given dates of
// perpdex_liquidations (published) or, with published nil, of perpdex_fills (raw).
func (q *Queries) liquidationFiles(published, raw []string) (string, error) {
	if published != nil {
		files, err := q.partitionFiles(lake.PerpdexLiquidations, published)
		if err != nil {
			return "", err
		}
		return q.fileList(lake.PerpdexLiquidations, files)
	}
	src, err := q.cachedDatePartitions(lake.PerpdexFills)
	if err != nil {
		return "", err
	}
	var files []string
	for _, d := range raw {
		if f, ok := src[d]; ok {
			files = append(files, f.path)
		}
	}
	return q.fileList(lake.PerpdexFills, files)
}

// labelFiles is the file list of the perpdex_cohorts_hourly partitions of the given
// dates (comma-separated) that exist: a date with no hourly labels has none.
func (q *Queries) labelFiles(dates string) (string, error) {
	var files []string
	for _, d := range strings.Split(dates, ",") {
		if d == "" {
			continue
		}
		rel, err := lake.PerpdexCohortsHourly.Path(d)
		if err != nil {
			return "", err
		}
		f := filepath.Join(q.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	return q.fileList(lake.PerpdexCohortsHourly, files)
}
