package query

import (
	"context"
	"database/sql"
	"slices"
	"sort"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexLiquidationsSQL = sqlfiles.MustRead("perpdex/liquidations.sql")
	perpdexCohortsOfSQL    = sqlfiles.MustRead("perpdex/cohorts_of.sql")
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
		pdNullStr(p.Direction), aT, aTid, aW, p.Limit + 1, "", rawFiles}
	// The newest published days that can hold the page first: when they give a full page
	// whose oldest row is newer than every day left out, the page is the one all days
	// give. Otherwise (a cursor's page lies below many of those days' rows, filters
	// leave too few) twice as many rows' worth of days, then four times, then every day
	// (each pass opens one small file per day: every day of the large lake costs 25 ms).
	var rows []liqRow
	exact := false
	for need := p.Limit + 1; !exact && need <= 4*(p.Limit+1); need *= 2 {
		newest, rest := newestLiquidationDays(pub, len(rawDates) == 0, p.Start.UnixMicro(), upper.UnixMicro(), need)
		if newest == nil {
			break
		}
		if args[liqArgFiles], err = q.liquidationFiles(newest, nil); err != nil {
			return page, &StoreError{Op: "perpdex liquidations", Err: err}
		}
		if rows, err = q.liquidationRows(ctx, args); err != nil {
			return page, err
		}
		exact = len(rows) == p.Limit+1
		for _, d := range rest {
			if exact && pub[d].Last >= rows[len(rows)-1].t.UnixMicro() {
				exact = false
			}
		}
		if len(rest) == 0 {
			// Every day that can hold the page was read: the page is what it gave.
			exact = true
		}
	}
	if !exact {
		if args[liqArgFiles], err = q.liquidationFiles(all, nil); err != nil {
			return page, &StoreError{Op: "perpdex liquidations", Err: err}
		}
		if rows, err = q.liquidationRows(ctx, args); err != nil {
			return page, err
		}
	}
	if len(rows) > p.Limit {
		last := rows[p.Limit-1]
		page.Next = &LiquidationKey{last.t, last.tid, last.wallet}
		rows = rows[:p.Limit]
	}
	if err := q.liquidationLabels(ctx, rows, lab.current, lab.hourlyUntil); err != nil {
		return page, err
	}
	for _, x := range rows {
		r := LiquidationRow{LiqTS: ISOMicrosOffset(x.t), Wallet: x.wallet, Asset: x.coin, Side: x.side,
			SizeToken: x.sz, SizeUsd: Round(x.usd, 2), MarkPrice: x.mark.Float64}
		basis := ""
		switch {
		case x.pit:
			basis = "point_in_time"
			r.SizeCohort, r.PnlCohort = nullable(x.hs), nullable(x.hp)
		case x.cs.Valid || x.cp.Valid:
			basis = "current"
			r.SizeCohort, r.PnlCohort = nullable(x.cs), nullable(x.cp)
			page.LabelComputed.Lookahead = true
		}
		if basis != "" {
			r.PnlCohortBasis = &basis
		}
		page.Liquidations = append(page.Liquidations, r)
	}
	return page, nil
}

// liqRow is one row of liquidations.sql and, once liquidationLabels has run, today's
// labels of its wallet (cs, cp) and the label of its hour (pit when the hour has a row
// for the wallet).
type liqRow struct {
	t                  time.Time
	wallet, coin, side string
	sz, usd            float64
	mark               sql.NullFloat64
	tid                int64
	cs, cp             sql.NullString
	hs, hp             sql.NullString
	pit                bool
}

// liquidationRows runs liquidations.sql (at most limit+1 rows, newest first, unlabelled).
func (q *Queries) liquidationRows(ctx context.Context, args []any) ([]liqRow, error) {
	const op = "perpdex liquidations"
	rows, err := q.db.QueryContext(ctx, perpdexLiquidationsSQL, args...)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var out []liqRow
	for rows.Next() {
		var x liqRow
		if err := rows.Scan(&x.t, &x.wallet, &x.coin, &x.side, &x.sz, &x.usd, &x.mark, &x.tid); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out = append(out, x)
	}
	return out, wrap(ctx, op, rows.Err())
}

// liquidationLabels gives each row today's labels of its wallet from the snapshot
// current (nil: none) and the label published for its wallet at the start of its UTC
// hour, for the hours labelled by the clock (until, the newest hour labelled): what
// liquidations.sql joined before (query/testdata/liquidations_scan.sql still does, as
// the test oracle).
func (q *Queries) liquidationLabels(ctx context.Context, rows []liqRow, current any, until time.Time) error {
	const op = "perpdex liquidations"
	var pairs []hourWallet
	var wallets []string
	for _, r := range rows {
		if h := r.t.UTC().Truncate(time.Hour); !h.After(until) {
			pairs = append(pairs, hourWallet{h, r.wallet})
		}
		if !slices.Contains(wallets, r.wallet) {
			wallets = append(wallets, r.wallet)
		}
	}
	type label struct{ size, pnl sql.NullString }
	cur := map[string]label{}
	if current != nil && len(wallets) > 0 {
		res, err := q.db.QueryContext(ctx, perpdexCohortsOfSQL, current, strings.Join(wallets, ","))
		if err != nil {
			return wrap(ctx, op, err)
		}
		defer res.Close()
		for res.Next() {
			var w string
			var l label
			if err := res.Scan(&w, &l.size, &l.pnl); err != nil {
				return wrap(ctx, op, err)
			}
			cur[w] = l
		}
		if err := res.Err(); err != nil {
			return wrap(ctx, op, err)
		}
	}
	labels, err := q.perpdexHourLabels(ctx, pairs)
	if err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		l := cur[r.wallet]
		r.cs, r.cp = l.size, l.pnl
		h := labels[hourWallet{r.t.UTC().Truncate(time.Hour), r.wallet}]
		r.hs, r.hp, r.pit = h.size, h.pnl, h.ok
	}
	return nil
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

// liqArgFiles is the index in liquidations.sql's arguments of the perpdex_liquidations
// files read ($10).
const liqArgFiles = 9

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
