package query

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	perpdexBuilderMetricsSQL = sqlfiles.MustRead("perpdex/builder_metrics.sql")
	perpdexBuildersBoardSQL  = sqlfiles.MustRead("perpdex/builders_board.sql")
	perpdexVenueVolumeSQL    = sqlfiles.MustRead("perpdex/venue_volume.sql")
)

// BuilderMetrics is SPEC's shared builder metric set.
type BuilderMetrics struct {
	FeeUsd                      float64 `json:"fee_usd" doc:"the builder's own fee (builder_fee)"`
	VolumeUsd                   float64 `json:"volume_usd" doc:"notional of builder-code fills (each routed side counts)"`
	ShareVolumeUsd              float64 `json:"share_volume_usd" doc:"builder volume counting each trade once, comparable with venue_volume_usd"`
	Fills                       int64   `json:"fills"`
	Users                       int64   `json:"users"`
	RevenuePerUser              float64 `json:"revenue_per_user" doc:"fee_usd / users"`
	FeeRateBps                  float64 `json:"fee_rate_bps" doc:"fee_usd / volume_usd in basis points"`
	FeeUsdNode                  float64 `json:"fee_usd_node" doc:"the venue's own fee on these fills: trader fee minus builder and deployer fees"`
	TraderFeeUsd                float64 `json:"trader_fee_usd" doc:"total fee the traders paid (builder fee included)"`
	BuilderRoutedDeployerFeeUsd float64 `json:"builder_routed_deployer_fee_usd" doc:"fees to builder-deployed dexes on these fills"`
	ClosedPnlUsd                float64 `json:"closed_pnl_usd" doc:"traders' realized PnL on these fills"`
	ActiveDays                  int64   `json:"active_days" doc:"UTC dates with a fill"`
	CrossedFills                int64   `json:"crossed_fills" doc:"fills that took liquidity"`
	TakerPct                    float64 `json:"taker_pct" doc:"crossed_fills / fills, percentage points"`
	FirstSeen                   *string `json:"first_seen" doc:"first fill in the window"`
	LastSeen                    *string `json:"last_seen" doc:"last fill in the window"`
	MarketSharePct              float64 `json:"market_share_pct" doc:"share_volume_usd / venue_volume_usd * 100 over the overlap of window and fill history"`
}

// bmRow is one group of builder_metrics.sql.
type bmRow struct {
	key                         string
	fee, vol, share             float64
	fills, users                int64
	node, trader, deployer, pnl float64
	days, crossed               int64
	first, last                 time.Time
	p50                         sql.NullFloat64
	buy, sell                   float64
	nonUsdFills                 int64
	nonUsdVol                   float64
	assets, dexes, builders     int64
}

func (r *bmRow) metrics(venue float64) BuilderMetrics {
	m := BuilderMetrics{
		FeeUsd: Round(r.fee, 2), VolumeUsd: Round(r.vol, 2), ShareVolumeUsd: Round(r.share, 2),
		Fills: r.fills, Users: r.users, FeeUsdNode: Round(r.node, 2), TraderFeeUsd: Round(r.trader, 2),
		BuilderRoutedDeployerFeeUsd: Round(r.deployer, 2), ClosedPnlUsd: Round(r.pnl, 2),
		ActiveDays: r.days, CrossedFills: r.crossed,
	}
	if r.users > 0 {
		m.RevenuePerUser = Round(r.fee/float64(r.users), 2)
	}
	if r.vol > 0 {
		m.FeeRateBps = Round(r.fee/r.vol*1e4, 6)
	}
	if r.fills > 0 {
		m.TakerPct = Round(float64(r.crossed)/float64(r.fills)*100, 6)
		f, l := ISOMicros(r.first), ISOMicros(r.last)
		m.FirstSeen, m.LastSeen = &f, &l
	}
	if venue > 0 {
		m.MarketSharePct = Round(r.share/venue*100, 6)
	}
	return m
}

// pdMemo caches builder aggregates per store for the current board hour: builder
// figures are computed as of the hour (like the leaderboard) and rebuilt when it turns.
type pdMemo struct {
	hour time.Time
	m    map[string]any
}

var (
	pdMemoMu sync.Mutex
	pdMemos  = map[*Queries]*pdMemo{}
)

func (q *Queries) memo(key string, end time.Time, compute func() (any, error)) (any, error) {
	hour := PerpdexBoardTime(end)
	pdMemoMu.Lock()
	m := pdMemos[q]
	if m == nil || !m.hour.Equal(hour) {
		m = &pdMemo{hour: hour, m: map[string]any{}}
		pdMemos[q] = m
	}
	v, ok := m.m[key]
	pdMemoMu.Unlock()
	if ok {
		return v, nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	pdMemoMu.Lock()
	m.m[key] = v
	pdMemoMu.Unlock()
	return v, nil
}

func (q *Queries) builderMetrics(ctx context.Context, builder string, start, end time.Time, key string) ([]bmRow, error) {
	return q.memoRows(fmt.Sprint("bm", builder, start.UnixNano(), end.UnixNano(), key), end, func() ([]bmRow, error) {
		return q.builderMetricsSQL(ctx, "", builder, start, end, key)
	})
}

// builderBoard is every builder's figures over the window [start, end] ending at a
// board hour: the builders board, published like the leaderboards (board = the
// window's length in hours, or all).
func (q *Queries) builderBoard(ctx context.Context, start, end time.Time) ([]bmRow, error) {
	board := "all"
	if start.After(time.Unix(0, 0)) {
		board = fmt.Sprintf("%dh", int64(end.Sub(start)/time.Hour))
	}
	return q.memoRows(fmt.Sprint("bb", start.UnixNano(), end.UnixNano()), end, func() ([]bmRow, error) {
		return q.builderMetricsSQL(ctx, board, "", start, end, "builder")
	})
}

// memoRows memoizes builder rows for end's board hour and hands out a copy (callers
// sort the slice).
func (q *Queries) memoRows(key string, end time.Time, compute func() ([]bmRow, error)) ([]bmRow, error) {
	v, err := q.memo(key, end, func() (any, error) { return compute() })
	if err != nil {
		return nil, err
	}
	return append([]bmRow(nil), v.([]bmRow)...), nil
}

// builderMetricsSQL runs builder_metrics.sql; with board set, through the published
// builders board of end's hour (lake.PerpdexBuildersBoard).
func (q *Queries) builderMetricsSQL(ctx context.Context, board, builder string, start, end time.Time, key string) ([]bmRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var rows *sql.Rows
	var err error
	if board != "" {
		// The builders board (every builder, by builder): the window's complete days from
		// the per-day partial aggregates (perpdex_builders_daily), brought up to date
		// only when the board is to be computed; the same rows and bits as
		// builder_metrics.sql (TestPerpdexBuildersBoardSame). prepare sets the complete
		// days in args, which the computation reads after it; a lake where the partial
		// aggregates cannot be written reads every fill raw (the epoch for both).
		epoch := time.Unix(0, 0).UTC()
		args := []any{start, end, epoch, epoch}
		prepare := func(ctx context.Context) error {
			if _, err := q.PublishPerpdexDaily(ctx); err == nil {
				args[2], args[3] = perpdexBoardDays(start, end, true)
			} else if ctx.Err() != nil || !isWriteError(err) {
				return err
			} else {
				q.log.Warn("perpdex daily partial sums not published (lake not writable); builders board from raw fills", "err", err)
			}
			return nil
		}
		rows, err = q.sourcedBoardRows(ctx, lake.PerpdexBuildersBoard, board, end, []*lake.Table{lake.PerpdexFills}, prepare,
			perpdexBuildersBoardSQL, args...)
	} else {
		rows, err = q.db.QueryContext(ctx, perpdexBuilderMetricsSQL, pdNullStr(builder), start, end, key)
	}
	if err != nil {
		return nil, wrap(ctx, "perpdex builders", err)
	}
	defer rows.Close()
	var out []bmRow
	for rows.Next() {
		var r bmRow
		if err := rows.Scan(&r.key, &r.fee, &r.vol, &r.share, &r.fills, &r.users, &r.node, &r.trader, &r.deployer, &r.pnl,
			&r.days, &r.crossed, &r.first, &r.last, &r.p50, &r.buy, &r.sell, &r.nonUsdFills, &r.nonUsdVol,
			&r.assets, &r.dexes, &r.builders); err != nil {
			return nil, wrap(ctx, "perpdex builders", err)
		}
		out = append(out, r)
	}
	return out, wrap(ctx, "perpdex builders", rows.Err())
}

// venue returns the venue's one-sided volume and fill count in a window, and the
// first fill of the history (zero when there is none).
func (q *Queries) venue(ctx context.Context, start, end time.Time) (float64, int64, time.Time, error) {
	type venueRow struct {
		vol   float64
		n     int64
		first time.Time
	}
	v, err := q.memo(fmt.Sprint("venue", start.UnixNano(), end.UnixNano()), end, func() (any, error) {
		vol, n, first, err := q.venueSQL(ctx, start, end)
		return venueRow{vol, n, first}, err
	})
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	r := v.(venueRow)
	return r.vol, r.n, r.first, nil
}

func (q *Queries) venueSQL(ctx context.Context, start, end time.Time) (float64, int64, time.Time, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var vol float64
	var n int64
	var first sql.NullTime
	err := q.db.QueryRowContext(ctx, perpdexVenueVolumeSQL, start, end).Scan(&vol, &n, &first)
	return vol, n, first.Time, wrap(ctx, "perpdex venue volume", err)
}

// BuilderWindow echoes the window of a builder response.
type BuilderWindow struct {
	Window string  `json:"window"`
	Start  *string `json:"start" doc:"requested start; null for all"`
	End    string  `json:"end"`
}

func builderWindow(window string, now time.Time) (BuilderWindow, time.Time) {
	start := PerpdexWindowStart(window, now) // now is the board hour (PerpdexBoardTime)
	w := BuilderWindow{Window: window, End: ISOSeconds(now)}
	if window != "all" {
		s := ISOSeconds(start)
		w.Start = &s
	}
	return w, start
}

// overlapStart is where the window and the fill history overlap.
func overlapStart(start, first time.Time) *string {
	if first.IsZero() {
		return nil
	}
	if first.After(start) {
		start = first
	}
	s := ISOMicros(start)
	return &s
}

// BuilderRow is one row of /v1/perpdex/builders.
type BuilderRow struct {
	Builder string `json:"builder"`
	Rank    int    `json:"rank"`
	BuilderMetrics
	FirstSeenLifetime *string `json:"first_seen_lifetime" doc:"first fill ever, not window-scoped"`
}

// BuildersPage is the envelope of /v1/perpdex/builders.
type BuildersPage struct {
	Window                 BuilderWindow `json:"window"`
	Sort                   string        `json:"sort"`
	Order                  string        `json:"order"`
	VenueVolumeUsd         float64       `json:"venue_volume_usd"`
	MarketShareWindowStart *string       `json:"market_share_window_start"`
	Builders               []BuilderRow  `json:"builders"`
	NextCursor             *string       `json:"nextCursor"`
	Next                   *BoardKey     `json:"-"`
}

// pdBuildersData is what /v1/perpdex/builders serves for one window and board hour.
type pdBuildersData struct {
	venue     float64
	first     time.Time // the first fill of the history
	groups    []bmRow   // one per builder with a fill in the window
	firstSeen map[string]time.Time
}

type pdBuildersKey struct{}

func (q *Queries) pdBuildersCache() *hourly[*pdBuildersData] {
	v, _ := q.ext.LoadOrStore(pdBuildersKey{}, newHourly[*pdBuildersData]("perpdex builders", nil, 0))
	return v.(*hourly[*pdBuildersData])
}

// buildersData returns the builders route's figures of window for the current board
// hour (or the previous hour's while they rebuild, see hourly) and that hour.
func (q *Queries) buildersData(ctx context.Context, window string) (*pdBuildersData, time.Time, error) {
	return q.pdBuildersCache().get(ctx, q, window, PerpdexBoardTime(q.Now()), func(ctx context.Context, now time.Time) (*pdBuildersData, error) {
		start := PerpdexWindowStart(window, now)
		d := &pdBuildersData{firstSeen: map[string]time.Time{}}
		var err error
		// The venue's volume is the route's, not part of the published boards.
		if !q.publishOnly {
			if d.venue, _, d.first, err = q.venue(ctx, start, now); err != nil {
				return nil, err
			}
		}
		if d.groups, err = q.builderBoard(ctx, start, now); err != nil {
			return nil, err
		}
		life, err := q.builderBoard(ctx, time.Unix(0, 0).UTC(), now)
		if err != nil {
			return nil, err
		}
		for _, l := range life {
			d.firstSeen[l.key] = l.first
		}
		return d, nil
	})
}

// perpdexWarmBuilders builds the builders route's figures of every window.
func (q *Queries) perpdexWarmBuilders(ctx context.Context) error {
	for _, w := range PerpdexWindowNames {
		if _, _, err := q.buildersData(ctx, w); warmed(err) != nil {
			return err
		}
	}
	return nil
}

// PerpdexBuilders ranks builders in a window by fee (their own cut), volume, users or
// fills. Figures are as of the board hour, built once per hour in the background.
func (q *Queries) PerpdexBuilders(ctx context.Context, window, sortBy, order string, limit int, after *BoardKey) (BuildersPage, error) {
	d, now, err := q.buildersData(ctx, window)
	w, start := builderWindow(window, now)
	page := BuildersPage{Window: w, Sort: sortBy, Order: order, Builders: []BuilderRow{}}
	if err != nil {
		return page, err
	}
	venue, groups, firstSeen := d.venue, d.groups, d.firstSeen
	page.VenueVolumeUsd = Round(venue, 2)
	page.MarketShareWindowStart = overlapStart(start, d.first)
	type kr struct {
		k BoardKey
		r BuilderRow
	}
	rows := make([]kr, 0, len(groups))
	for i := range groups {
		g := &groups[i]
		r := BuilderRow{Builder: g.key, BuilderMetrics: g.metrics(venue)}
		if t, ok := firstSeen[g.key]; ok {
			s := ISOMicros(t)
			r.FirstSeenLifetime = &s
		}
		var v float64
		switch sortBy {
		case "volume":
			v = r.VolumeUsd
		case "users":
			v = float64(r.Users)
		case "fills":
			v = float64(r.Fills)
		default:
			v = r.FeeUsd
		}
		rows = append(rows, kr{BoardKey{&v, r.Builder}, r})
	}
	desc := order != "asc"
	sort.Slice(rows, func(i, j int) bool { return pdBoardLess(rows[i].k, rows[j].k, desc) })
	i := 0
	if after != nil {
		i = sort.Search(len(rows), func(i int) bool { return pdBoardLess(*after, rows[i].k, desc) })
	}
	for ; i < len(rows) && len(page.Builders) < limit; i++ {
		r := rows[i].r
		r.Rank = i + 1
		page.Builders = append(page.Builders, r)
	}
	if i < len(rows) && len(page.Builders) > 0 {
		k := rows[i-1].k
		page.Next = &k
	}
	return page, nil
}

// BiggestDay is the builder's day with the highest fee in the window.
type BiggestDay struct {
	Date      string  `json:"date"`
	FeeUsd    float64 `json:"fee_usd"`
	VolumeUsd float64 `json:"volume_usd"`
	Fills     int64   `json:"fills"`
	Users     int64   `json:"users"`
}

// BuilderTotals are the window totals of one builder.
type BuilderTotals struct {
	BuilderMetrics
	FeeRateBpsP50          *float64    `json:"fee_rate_bps_p50" doc:"median builder fee rate over fills that paid a builder fee"`
	TraderFeeRateBps       float64     `json:"trader_fee_rate_bps" doc:"trader_fee_usd / volume_usd in basis points"`
	RoutedClosedPnlUsd     float64     `json:"routed_closed_pnl_usd"`
	Assets                 int64       `json:"assets" doc:"distinct assets in the whole window, even when by_asset is truncated"`
	Dexes                  int64       `json:"dexes" doc:"distinct dexes (the main venue counts as one) in the whole window"`
	BuyVolumeUsd           float64     `json:"buy_volume_usd"`
	SellVolumeUsd          float64     `json:"sell_volume_usd"`
	NonUsdFeeFills         int64       `json:"non_usd_fee_fills" doc:"fills whose fee was paid in a token other than USDC"`
	NonUsdFeeVolumeUsd     float64     `json:"non_usd_fee_volume_usd"`
	ProfitableUsers        int64       `json:"profitable_users" doc:"users whose summed closed PnL on these fills is above 0"`
	ProfitableUsersPct     float64     `json:"profitable_users_pct"`
	VenueVolumeUsd         float64     `json:"venue_volume_usd"`
	MarketShareWindowStart *string     `json:"market_share_window_start"`
	BiggestDay             *BiggestDay `json:"biggest_day"`
}

// BuilderBreakdownRow is one row of by_asset or by_dex.
type BuilderBreakdownRow struct {
	Asset   *string `json:"asset,omitempty"`
	DexName *string `json:"dex_name,omitempty" doc:"deployer dex; empty string for the main venue"`
	BuilderMetrics
	FeeRateBpsP50 *float64 `json:"fee_rate_bps_p50"`
}

// BuilderDecile is one tenth of the builder's users by window volume; decile 1 holds
// the largest users.
type BuilderDecile struct {
	Decile             int      `json:"decile"`
	Users              int64    `json:"users"`
	VolumeUsd          float64  `json:"volume_usd"`
	VolumeSharePct     float64  `json:"volume_share_pct"`
	FeeUsd             float64  `json:"fee_usd"`
	MinVolumeUsd       *float64 `json:"min_volume_usd"`
	MaxVolumeUsd       *float64 `json:"max_volume_usd"`
	ProfitableUsers    int64    `json:"profitable_users"`
	ProfitableUsersPct float64  `json:"profitable_users_pct"`
	ClosedPnlUsd       float64  `json:"closed_pnl_usd"`
}

// BuilderLifetime are a builder's unwindowed figures.
type BuilderLifetime struct {
	FirstSeen      *string `json:"first_seen"`
	LastSeen       *string `json:"last_seen"`
	ActiveDays     int64   `json:"active_days"`
	Fills          int64   `json:"fills"`
	Users          int64   `json:"users"`
	FeeUsd         float64 `json:"fee_usd"`
	VolumeUsd      float64 `json:"volume_usd"`
	RevenuePerUser float64 `json:"revenue_per_user"`
}

// BuilderDetail is the envelope of /v1/perpdex/builders/{builder}.
type BuilderDetail struct {
	Builder                string                `json:"builder"`
	Window                 BuilderWindow         `json:"window"`
	Totals                 BuilderTotals         `json:"totals"`
	ByAsset                []BuilderBreakdownRow `json:"by_asset" doc:"largest volume first, at most breakdown_limit rows"`
	ByDex                  []BuilderBreakdownRow `json:"by_dex"`
	UserVolumeDistribution []BuilderDecile       `json:"user_volume_distribution"`
	Lifetime               BuilderLifetime       `json:"lifetime"`
}

// sortByVolume orders groups by volume rounded to the cent (DuckDB's parallel sums can
// differ in the last bits between runs; keyset cursors compare rounded values).
func sortByVolume(rs []bmRow) {
	sort.Slice(rs, func(i, j int) bool {
		if a, b := Round(rs[i].vol, 2), Round(rs[j].vol, 2); a != b {
			return a > b
		}
		return rs[i].key < rs[j].key
	})
}

// PerpdexBuilder returns one builder's window totals, breakdowns, user deciles and
// lifetime figures. ErrNotFound when the builder has no fill in the whole history.
func (q *Queries) PerpdexBuilder(ctx context.Context, builder, window string, breakdownLimit int) (BuilderDetail, error) {
	now := PerpdexBoardTime(q.Now()) // builder figures are as of the hour, cached for it
	w, start := builderWindow(window, now)
	d := BuilderDetail{Builder: builder, Window: w, ByAsset: []BuilderBreakdownRow{}, ByDex: []BuilderBreakdownRow{},
		UserVolumeDistribution: []BuilderDecile{}}
	life, err := q.builderMetrics(ctx, builder, time.Unix(0, 0).UTC(), now, "total")
	if err != nil {
		return d, err
	}
	if len(life) == 0 {
		return d, ErrNotFound
	}
	l := life[0]
	lf, ll := ISOMicros(l.first), ISOMicros(l.last)
	d.Lifetime = BuilderLifetime{FirstSeen: &lf, LastSeen: &ll, ActiveDays: l.days, Fills: l.fills, Users: l.users,
		FeeUsd: Round(l.fee, 2), VolumeUsd: Round(l.vol, 2)}
	if l.users > 0 {
		d.Lifetime.RevenuePerUser = Round(l.fee/float64(l.users), 2)
	}
	venue, _, first, err := q.venue(ctx, start, now)
	if err != nil {
		return d, err
	}
	d.Totals.VenueVolumeUsd = Round(venue, 2)
	d.Totals.MarketShareWindowStart = overlapStart(start, first)
	tot, err := q.builderMetrics(ctx, builder, start, now, "total")
	if err != nil {
		return d, err
	}
	if len(tot) == 1 {
		t := &tot[0]
		d.Totals.BuilderMetrics = t.metrics(venue)
		d.Totals.FeeRateBpsP50 = RoundPtr(nullF(t.p50), 6)
		if t.vol > 0 {
			d.Totals.TraderFeeRateBps = Round(t.trader/t.vol*1e4, 6)
		}
		d.Totals.RoutedClosedPnlUsd = Round(t.pnl, 2)
		d.Totals.Assets, d.Totals.Dexes = t.assets, t.dexes
		d.Totals.BuyVolumeUsd, d.Totals.SellVolumeUsd = Round(t.buy, 2), Round(t.sell, 2)
		d.Totals.NonUsdFeeFills, d.Totals.NonUsdFeeVolumeUsd = t.nonUsdFills, Round(t.nonUsdVol, 2)
	}
	for _, b := range []struct {
		key string
		out *[]BuilderBreakdownRow
	}{{"asset", &d.ByAsset}, {"dex", &d.ByDex}} {
		rs, err := q.builderMetrics(ctx, builder, start, now, b.key)
		if err != nil {
			return d, err
		}
		sortByVolume(rs)
		for i := range rs {
			if i == breakdownLimit {
				break
			}
			k := rs[i].key
			row := BuilderBreakdownRow{BuilderMetrics: rs[i].metrics(venue), FeeRateBpsP50: RoundPtr(nullF(rs[i].p50), 6)}
			if b.key == "asset" {
				row.Asset = &k
			} else {
				row.DexName = &k
			}
			*b.out = append(*b.out, row)
		}
	}
	days, err := q.builderMetrics(ctx, builder, start, now, "day")
	if err != nil {
		return d, err
	}
	for i := range days {
		x := &days[i]
		if b := d.Totals.BiggestDay; b == nil || x.fee > b.FeeUsd || x.fee == b.FeeUsd && x.vol > b.VolumeUsd {
			d.Totals.BiggestDay = &BiggestDay{Date: x.key, FeeUsd: x.fee, VolumeUsd: x.vol, Fills: x.fills, Users: x.users}
		}
	}
	if b := d.Totals.BiggestDay; b != nil {
		b.FeeUsd, b.VolumeUsd = Round(b.FeeUsd, 2), Round(b.VolumeUsd, 2)
	}
	users, err := q.builderMetrics(ctx, builder, start, now, "wallet")
	if err != nil {
		return d, err
	}
	sortByVolume(users)
	var total float64
	for _, u := range users {
		total += u.vol
		if u.pnl > 0 {
			d.Totals.ProfitableUsers++
		}
	}
	if len(users) > 0 {
		d.Totals.ProfitableUsersPct = Round(float64(d.Totals.ProfitableUsers)/float64(len(users))*100, 6)
	}
	d.UserVolumeDistribution = builderDeciles(users, total)
	return d, nil
}

func nullF(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	return &n.Float64
}

// builderDeciles splits users (sorted largest volume first) into ten groups the way
// SQL's ntile(10) does: sizes differ by at most one, the larger groups first.
func builderDeciles(users []bmRow, total float64) []BuilderDecile {
	out := make([]BuilderDecile, 10)
	n := len(users)
	i := 0
	for d := 0; d < 10; d++ {
		size := n / 10
		if d < n%10 {
			size++
		}
		dec := BuilderDecile{Decile: d + 1}
		var vol, fee, pnl float64
		for j := 0; j < size; j++ {
			u := users[i+j]
			vol += u.vol
			fee += u.fee
			pnl += u.pnl
			if u.pnl > 0 {
				dec.ProfitableUsers++
			}
		}
		if size > 0 {
			dec.MaxVolumeUsd = pdPtr(users[i].vol, 2)
			dec.MinVolumeUsd = pdPtr(users[i+size-1].vol, 2)
			dec.ProfitableUsersPct = Round(float64(dec.ProfitableUsers)/float64(size)*100, 6)
		}
		if total > 0 {
			dec.VolumeSharePct = Round(vol/total*100, 6)
		}
		dec.Users, dec.VolumeUsd, dec.FeeUsd, dec.ClosedPnlUsd = int64(size), Round(vol, 2), Round(fee, 2), Round(pnl, 2)
		out[d] = dec
		i += size
	}
	return out
}

// BuilderUser is one wallet behind a builder's totals.
type BuilderUser struct {
	Wallet       string  `json:"wallet"`
	Rank         int     `json:"rank" doc:"by window volume, largest first"`
	Fills        int64   `json:"fills"`
	VolumeUsd    float64 `json:"volume_usd"`
	FeeUsd       float64 `json:"fee_usd" doc:"builder fee paid by this user"`
	TraderFeeUsd float64 `json:"trader_fee_usd"`
	ClosedPnlUsd float64 `json:"closed_pnl_usd"`
	Profitable   bool    `json:"profitable" doc:"closed_pnl_usd above 0"`
	CrossedFills int64   `json:"crossed_fills"`
	FirstSeen    string  `json:"first_seen"`
	LastSeen     string  `json:"last_seen"`
}

// BuilderUsersPage is the envelope of /v1/perpdex/builders/{builder}/users.
type BuilderUsersPage struct {
	Builder    string        `json:"builder"`
	Window     BuilderWindow `json:"window"`
	TotalCount int           `json:"totalCount"`
	Users      []BuilderUser `json:"users"`
	NextCursor *string       `json:"nextCursor"`
	Next       *BoardKey     `json:"-"`
}

// PerpdexBuilderUsers pages the builder's users by window volume.
func (q *Queries) PerpdexBuilderUsers(ctx context.Context, builder, window string, limit int, after *BoardKey) (BuilderUsersPage, error) {
	now := PerpdexBoardTime(q.Now()) // builder figures are as of the hour, cached for it
	w, start := builderWindow(window, now)
	page := BuilderUsersPage{Builder: builder, Window: w, Users: []BuilderUser{}}
	users, err := q.builderMetrics(ctx, builder, start, now, "wallet")
	if err != nil {
		return page, err
	}
	sortByVolume(users)
	page.TotalCount = len(users)
	key := func(u *bmRow) BoardKey { v := Round(u.vol, 2); return BoardKey{&v, u.key} }
	i := 0
	if after != nil {
		i = sort.Search(len(users), func(i int) bool { return pdBoardLess(*after, key(&users[i]), true) })
	}
	for ; i < len(users) && len(page.Users) < limit; i++ {
		u := &users[i]
		page.Users = append(page.Users, BuilderUser{Wallet: u.key, Rank: i + 1, Fills: u.fills, VolumeUsd: Round(u.vol, 2),
			FeeUsd: Round(u.fee, 2), TraderFeeUsd: Round(u.trader, 2), ClosedPnlUsd: Round(u.pnl, 2), Profitable: u.pnl > 0,
			CrossedFills: u.crossed, FirstSeen: ISOMicros(u.first), LastSeen: ISOMicros(u.last)})
	}
	if i < len(users) && len(page.Users) > 0 {
		k := key(&users[i-1])
		page.Next = &k
	}
	return page, nil
}

// BuilderDay is one date of /v1/perpdex/builders/stats.
type BuilderDay struct {
	Date     string `json:"date"`
	Builders int64  `json:"builders"`
	Assets   int64  `json:"assets"`
	BuilderMetrics
	RoutedClosedPnlUsd float64 `json:"routed_closed_pnl_usd"`
}

// BuildersStatsTotals are the window totals over every builder.
type BuildersStatsTotals struct {
	BuilderMetrics
	Builders               int64   `json:"builders"`
	Assets                 int64   `json:"assets"`
	BuilderRoutedSharePct  float64 `json:"builder_routed_share_pct" doc:"share of the venue's fills that carried a builder code, percentage points"`
	VenueVolumeUsd         float64 `json:"venue_volume_usd"`
	MarketShareWindowStart *string `json:"market_share_window_start"`
	RoutedClosedPnlUsd     float64 `json:"routed_closed_pnl_usd"`
}

// BuildersStatsLifetime are the unwindowed figures over every builder.
type BuildersStatsLifetime struct {
	FeeUsd    float64 `json:"fee_usd"`
	FirstSeen *string `json:"first_seen" doc:"the actual start of builder coverage"`
	LastSeen  *string `json:"last_seen"`
}

// BuildersStats is the envelope of /v1/perpdex/builders/stats.
type BuildersStats struct {
	Window   BuilderWindow         `json:"window"`
	Totals   BuildersStatsTotals   `json:"totals"`
	Lifetime BuildersStatsLifetime `json:"lifetime"`
	Daily    []BuilderDay          `json:"daily" doc:"one bucket per UTC date of the window, oldest first, zero-filled"`
}

// PerpdexBuildersStats returns every builder's totals and one bucket per date.
func (q *Queries) PerpdexBuildersStats(ctx context.Context, window string) (BuildersStats, error) {
	now := PerpdexBoardTime(q.Now()) // builder figures are as of the hour, cached for it
	w, start := builderWindow(window, now)
	out := BuildersStats{Window: w, Daily: []BuilderDay{}}
	venue, venueFills, first, err := q.venue(ctx, start, now)
	if err != nil {
		return out, err
	}
	out.Totals.VenueVolumeUsd = Round(venue, 2)
	out.Totals.MarketShareWindowStart = overlapStart(start, first)
	tot, err := q.builderMetrics(ctx, "", start, now, "total")
	if err != nil {
		return out, err
	}
	if len(tot) == 1 {
		t := &tot[0]
		out.Totals.BuilderMetrics = t.metrics(venue)
		out.Totals.Builders, out.Totals.Assets = t.builders, t.assets
		out.Totals.RoutedClosedPnlUsd = Round(t.pnl, 2)
		if venueFills > 0 {
			out.Totals.BuilderRoutedSharePct = Round(float64(t.fills)/float64(venueFills)*100, 6)
		}
	}
	life, err := q.builderMetrics(ctx, "", time.Unix(0, 0).UTC(), now, "total")
	if err != nil {
		return out, err
	}
	if len(life) == 1 {
		f, l := ISOMicros(life[0].first), ISOMicros(life[0].last)
		out.Lifetime = BuildersStatsLifetime{FeeUsd: Round(life[0].fee, 2), FirstSeen: &f, LastSeen: &l}
	}
	days, err := q.builderMetrics(ctx, "", start, now, "day")
	if err != nil {
		return out, err
	}
	byDate := map[string]*bmRow{}
	for i := range days {
		byDate[days[i].key] = &days[i]
	}
	from := start
	if window == "all" {
		if first.IsZero() {
			return out, nil
		}
		from = first
	}
	for d := from.UTC().Truncate(24 * time.Hour); !d.After(now); d = d.Add(24 * time.Hour) {
		key := Date(d)
		day := BuilderDay{Date: key}
		if r, ok := byDate[key]; ok {
			day.BuilderMetrics = r.metrics(0)
			day.Builders, day.Assets, day.RoutedClosedPnlUsd = r.builders, r.assets, Round(r.pnl, 2)
		}
		out.Daily = append(out.Daily, day)
	}
	return out, nil
}
