package query

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	predmktMarketsSQL      = sqlfiles.MustRead("predmkt/markets.sql")
	predmktMarketTokensSQL = sqlfiles.MustRead("predmkt/market_tokens.sql")
	predmktTokenMidsSQL    = sqlfiles.MustRead("predmkt/token_mids.sql")
)

// PredmktMarketSorts are the sort keys of /v1/predmkt/markets.
var PredmktMarketSorts = []string{"volume", "volume_24h", "trades", "created", "end"}

// PredmktMarketStatuses are the states a market is listed in: open (no resolution yet),
// resolved (a winning outcome) or invalid (resolved void).
var PredmktMarketStatuses = []string{"open", "resolved", "invalid"}

// PredmktMarketKey is the keyset of the market list: the row's sort key (ascending in the
// list's order) and its condition id.
type PredmktMarketKey struct {
	K  int64  `json:"k"`
	ID string `json:"id"`
}

// PredmktMarketsParams are the inputs of PredmktMarkets.
type PredmktMarketsParams struct {
	Category, Status, Asset, Tenor string // "" for any
	Search                         string // case-insensitive substring of title or slug
	Sort                           string // one of PredmktMarketSorts
	Limit                          int
	After                          *PredmktMarketKey
}

// PredmktMarketInfo is a market's listing: identity, family, schedule, status and trading
// figures as of the store clock.
type PredmktMarketInfo struct {
	ConditionID    string  `json:"condition_id"`
	Title          string  `json:"title" doc:"the market's question"`
	Slug           string  `json:"slug"`
	Category       string  `json:"category" doc:"Crypto, Sports, Politics, Pop-Culture or Tech"`
	FamilyAsset    string  `json:"family_asset" doc:"crypto up/down family asset (btc, eth, sol); empty for other markets"`
	FamilyTenor    string  `json:"family_tenor" doc:"crypto up/down family tenor (15m, 1h, 1d); empty for other markets"`
	CreatedTS      string  `json:"created_ts" doc:"listing time, ISO-8601 UTC with milliseconds"`
	EndTS          string  `json:"end_ts" doc:"scheduled end, ISO-8601 UTC with milliseconds"`
	Closed         bool    `json:"closed" doc:"true once trading stopped"`
	Status         string  `json:"status" doc:"open (no resolution yet), resolved (a winning outcome) or invalid (resolved void: settles nothing)"`
	ResolvedTS     *string `json:"resolved_ts" doc:"resolution time (ISO-8601 UTC, ms); null while open"`
	WinningIndex   *int    `json:"winning_index" doc:"outcome_index that pays 1 per share; null unless resolved"`
	WinningOutcome *string `json:"winning_outcome" doc:"name of the winning outcome; null unless resolved"`
	VolumeUSD      float64 `json:"volume_usd" doc:"USD traded up to now, each trade once"`
	Volume24hUSD   float64 `json:"volume_24h_usd" doc:"USD traded in the 24 hours to now"`
	Trades         int64   `json:"trades" doc:"trades up to now"`
	LastTradeTS    *string `json:"last_trade_ts" doc:"last trade (ISO-8601 UTC, ms); null when the market never traded"`
}

// PredmktMarketToken is one outcome token of a market.
type PredmktMarketToken struct {
	TokenID      string   `json:"token_id"`
	OutcomeIndex int      `json:"outcome_index" doc:"0 is the first outcome (YES), 1 the second"`
	Outcome      string   `json:"outcome"`
	LastPrice    *float64 `json:"last_price" doc:"price of the last trade at or before now; null when it never traded"`
}

// PredmktMarketRow is one row of /v1/predmkt/markets.
type PredmktMarketRow struct {
	PredmktMarketInfo
	Tokens []PredmktMarketToken `json:"tokens"`
}

// PredmktMarketsPage is the body of /v1/predmkt/markets.
type PredmktMarketsPage struct {
	Markets    []PredmktMarketRow `json:"markets"`
	NextCursor *string            `json:"nextCursor" doc:"pass back as cursor with the same filters; null on the last page"`
	Next       *PredmktMarketKey  `json:"-"`
}

// PredmktMarketTokenDetail is an outcome token of /v1/predmkt/markets/{condition_id}.
type PredmktMarketTokenDetail struct {
	TokenID      string   `json:"token_id"`
	OutcomeIndex int      `json:"outcome_index" doc:"0 is the first outcome (YES), 1 the second"`
	Outcome      string   `json:"outcome"`
	LastPrice    *float64 `json:"last_price" doc:"price of the last trade at or before now; null when it never traded"`
	Mid          *float64 `json:"mid" doc:"latest recorded mid (best bid plus best ask, halved) at or before now; null when none"`
}

// PredmktMarketDetail is the body of /v1/predmkt/markets/{condition_id}.
type PredmktMarketDetail struct {
	PredmktMarketInfo
	Tokens []PredmktMarketTokenDetail `json:"tokens"`
}

// PredmktMarkets pages the market list.
func (q *Queries) PredmktMarkets(ctx context.Context, p PredmktMarketsParams) (PredmktMarketsPage, error) {
	page := PredmktMarketsPage{Markets: []PredmktMarketRow{}}
	after := PredmktMarketKey{K: math.MinInt64}
	if p.After != nil {
		after = *p.After
	}
	src, err := q.marketSource("predmkt markets")
	if err != nil {
		return page, err
	}
	infos, keys, err := q.marketInfos(ctx, src, p, "", after, p.Limit+1)
	if err != nil {
		return page, err
	}
	if len(infos) > p.Limit {
		infos, keys = infos[:p.Limit], keys[:p.Limit]
		page.Next = &keys[len(keys)-1]
	}
	toks, err := q.marketTokens(ctx, src, infos)
	if err != nil {
		return page, err
	}
	for i := range infos {
		row := PredmktMarketRow{PredmktMarketInfo: infos[i], Tokens: []PredmktMarketToken{}}
		for _, t := range toks[infos[i].ConditionID] {
			row.Tokens = append(row.Tokens, PredmktMarketToken{TokenID: t.TokenID, OutcomeIndex: t.OutcomeIndex, Outcome: t.Outcome, LastPrice: t.LastPrice})
		}
		page.Markets = append(page.Markets, row)
	}
	return page, nil
}

// PredmktMarket returns one market with its tokens' last prices and mids; ErrNotFound
// when the lake has no such market.
func (q *Queries) PredmktMarket(ctx context.Context, conditionID string) (PredmktMarketDetail, error) {
	src, err := q.marketSource("predmkt market")
	if err != nil {
		return PredmktMarketDetail{}, err
	}
	info, err := q.marketInfo(ctx, src, conditionID)
	if err != nil {
		return PredmktMarketDetail{}, err
	}
	infos := []PredmktMarketInfo{info}
	toks, err := q.marketTokens(ctx, src, infos)
	if err != nil {
		return PredmktMarketDetail{}, err
	}
	d := PredmktMarketDetail{PredmktMarketInfo: infos[0], Tokens: []PredmktMarketTokenDetail{}}
	ids := []string{}
	for _, t := range toks[conditionID] {
		ids = append(ids, t.TokenID)
	}
	mids, err := q.tokenMids(ctx, ids)
	if err != nil {
		return d, err
	}
	for _, t := range toks[conditionID] {
		if m, ok := mids[t.TokenID]; ok {
			m = Round(m, 6)
			t.Mid = &m
		}
		d.Tokens = append(d.Tokens, t)
	}
	return d, nil
}

// marketInfo returns one market's listing or ErrNotFound.
func (q *Queries) marketInfo(ctx context.Context, src *marketSource, conditionID string) (PredmktMarketInfo, error) {
	infos, _, err := q.marketInfos(ctx, src, PredmktMarketsParams{Sort: "volume"}, conditionID, PredmktMarketKey{K: math.MinInt64}, 1)
	if err != nil {
		return PredmktMarketInfo{}, err
	}
	if len(infos) == 0 {
		return PredmktMarketInfo{}, ErrNotFound
	}
	return infos[0], nil
}

// marketInfos runs markets.sql (or its board's) from src; conditionID "" lists every
// market passing the filters. The winning outcome's name is filled in by marketTokens.
func (q *Queries) marketInfos(ctx context.Context, src *marketSource, p PredmktMarketsParams, conditionID string, after PredmktMarketKey, limit int) ([]PredmktMarketInfo, []PredmktMarketKey, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt markets"
	rows, err := q.marketRows(ctx, op, src, predmktMarketsBoardSQL, predmktMarketsSQL, marketsPlan.markets,
		src.now, p.Category, p.Status, p.Asset, p.Tenor, strings.ToLower(p.Search), p.Sort, conditionID, after.K, after.ID, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var infos []PredmktMarketInfo
	var keys []PredmktMarketKey
	for rows.Next() {
		var m PredmktMarketInfo
		var created, end, vol, vol24, sk int64
		var resolved, last sql.NullInt64
		var win sql.NullInt32
		if err := rows.Scan(&m.ConditionID, &m.Title, &m.Slug, &m.Category, &m.FamilyAsset, &m.FamilyTenor, &created, &end,
			&m.Closed, &m.Status, &resolved, &win, &vol, &vol24, &m.Trades, &last, &sk); err != nil {
			return nil, nil, wrap(ctx, op, err)
		}
		m.CreatedTS, m.EndTS = ISOMillis(time.UnixMilli(created)), ISOMillis(time.UnixMilli(end))
		m.ResolvedTS, m.LastTradeTS = isoPtr(resolved), isoPtr(last)
		if win.Valid {
			w := int(win.Int32)
			m.WinningIndex = &w
		}
		m.VolumeUSD, m.Volume24hUSD = MicroUSD(vol), MicroUSD(vol24)
		infos = append(infos, m)
		keys = append(keys, PredmktMarketKey{K: sk, ID: m.ConditionID})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, wrap(ctx, op, err)
	}
	return infos, keys, nil
}

// marketTokens returns the tokens of each market (by outcome_index) from src and fills
// each resolved market's winning_outcome.
func (q *Queries) marketTokens(ctx context.Context, src *marketSource, infos []PredmktMarketInfo) (map[string][]PredmktMarketTokenDetail, error) {
	out := map[string][]PredmktMarketTokenDetail{}
	if len(infos) == 0 {
		return out, nil
	}
	ids := make([]string, len(infos))
	for i := range infos {
		ids[i] = infos[i].ConditionID
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt market tokens"
	rows, err := q.marketRows(ctx, op, src, predmktMarketTokensBoardSQL, predmktMarketTokensSQL, marketsPlan.tokens,
		strings.Join(ids, ","), src.now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var cid string
		var t PredmktMarketTokenDetail
		var lp sql.NullFloat64
		if err := rows.Scan(&cid, &t.TokenID, &t.OutcomeIndex, &t.Outcome, &lp); err != nil {
			return nil, wrap(ctx, op, err)
		}
		if lp.Valid {
			t.LastPrice = &lp.Float64
		}
		out[cid] = append(out[cid], t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	for i := range infos {
		if w := infos[i].WinningIndex; w != nil {
			for _, t := range out[infos[i].ConditionID] {
				if t.OutcomeIndex == *w {
					name := t.Outcome
					infos[i].WinningOutcome = &name
				}
			}
		}
	}
	return out, nil
}

// tokenMids returns the latest recorded mid of each token at or before the store clock.
func (q *Queries) tokenMids(ctx context.Context, tokens []string) (map[string]float64, error) {
	out := map[string]float64{}
	if len(tokens) == 0 {
		return out, nil
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt token mids"
	rows, err := q.db.QueryContext(ctx, predmktTokenMidsSQL, strings.Join(tokens, ","), q.Now().UnixMilli())
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var tok string
		var m float64
		if err := rows.Scan(&tok, &m); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out[tok] = m
	}
	return out, wrap(ctx, op, rows.Err())
}

// isoPtr formats a nullable epoch-ms value as ISO-8601 UTC with milliseconds.
func isoPtr(ms sql.NullInt64) *string {
	if !ms.Valid {
		return nil
	}
	s := ISOMillis(time.UnixMilli(ms.Int64))
	return &s
}

// isoMs formats epoch ms as ISO-8601 UTC with milliseconds.
func isoMs(ms int64) string { return ISOMillis(time.UnixMilli(ms)) }

// marketsPlan is what markets.sql and market_tokens.sql read for one clock (each trades
// date in exactly one of totals-and-before, days, hours and raw, or none when it holds
// nothing at or before the clock): comma-separated dates, and the files read_parquet
// reads for them (file_lists.go: a list is never empty).
type marketsPlan struct {
	totals string // the predmkt_market_totals date standing in for every date up to it ("" none)
	days   string // dates summed from predmkt_market_days
	raw    string // dates read whole from predmkt_trades
	hours  string // dates summed from predmkt_market_hours, but for the raw hours
	// The hours (epoch ms of their start; -1 none) read from the raw fills of the hours
	// dates: the one the 24-hour window starts inside (unless it starts on the hour), and
	// the one the clock falls inside when a fill of the hours dates lies after the clock.
	cutHour, nowHour int64
	// The hours dates when a raw hour is read (else both ""): from their
	// predmkt_market_fills partition where it was published from the trades file now in
	// the lake (in time order, so only the hour's few row groups are read), else from the
	// trades file (sorted by token, so read whole).
	hourFills, hourRaw string

	totalsFiles, dayFiles, rawFiles, hourFiles, hourRawFiles, hourFillFiles string
}

// markets is the plan as markets.sql's $12 to $19.
func (p marketsPlan) markets() []any {
	return []any{p.dayFiles, p.rawFiles, p.totalsFiles, p.hourFiles, p.cutHour, p.nowHour, p.hourRawFiles, p.hourFillFiles}
}

// tokens is the plan as market_tokens.sql's $3 to $10.
func (p marketsPlan) tokens() []any { return p.markets() }

// files fills the plan's file lists from its dates; src is the trades listing.
func (q *Queries) planFiles(p *marketsPlan, src map[string]dateFile) error {
	split := func(list string) []string {
		if list == "" {
			return nil
		}
		return strings.Split(list, ",")
	}
	derived := func(t *lake.Table, list string) (string, error) {
		files, err := q.partitionFiles(t, split(list))
		if err != nil {
			return "", err
		}
		return q.fileList(t, files)
	}
	raw := func(list string) (string, error) {
		var files []string
		for _, d := range split(list) {
			files = append(files, src[d].path)
		}
		return q.fileList(lake.PredmktTrades, files)
	}
	var err error
	if p.totalsFiles, err = derived(lake.PredmktMarketTotals, p.totals); err != nil {
		return err
	}
	if p.dayFiles, err = derived(lake.PredmktMarketDays, p.days); err != nil {
		return err
	}
	if p.hourFiles, err = derived(lake.PredmktMarketHours, p.hours); err != nil {
		return err
	}
	if p.rawFiles, err = raw(p.raw); err != nil {
		return err
	}
	if p.hourFillFiles, err = derived(lake.PredmktMarketFills, p.hourFills); err != nil {
		return err
	}
	p.hourRawFiles, err = raw(p.hourRaw)
	return err
}

// marketDaysPlan picks, for the clock now (epoch ms), what markets.sql and
// market_tokens.sql read: the predmkt_market_totals date that stands in for every trades
// date up to it (all its fills before the 24-hour window; "" for none); then, for each
// later date, the predmkt_market_days partition when its fills all lie at or before now
// and all inside or all outside the 24 hours to now, nothing when they all lie after now
// or it has none, else (the one or two days the clock and the window cut) the
// predmkt_market_hours partition, whose hours are each wholly on one side of the clock
// and of the window's start but for the hour either falls inside, read from the date's
// predmkt_market_fills partition (or its raw trades file until that is published); the raw
// trades file for a date neither table has published from the file now in the lake.
func (q *Queries) marketDaysPlan(now int64) (marketsPlan, error) {
	const hour = hourMs
	cut := now - 86_400_000
	plan := marketsPlan{cutHour: -1, nowHour: -1}
	src, err := q.cachedDatePartitions(lake.PredmktTrades)
	if err != nil {
		return plan, err
	}
	if plan.totals, err = q.marketTotalsDate(src, cut); err != nil {
		return plan, err
	}
	days, raw, err := q.dayEntries(predmktMarketDays)
	if err != nil {
		return plan, err
	}
	hours, _, err := q.dayEntries(predmktMarketHours)
	if err != nil {
		return plan, err
	}
	isRaw := map[string]bool{}
	for _, d := range raw {
		isRaw[d] = true
	}
	skip := func(e daySource) bool { return e.Rows == 0 || e.First > now }
	var ds, hs, rs []string
	after := false // a fill of the hours dates lies after now
	for date := range src {
		if plan.totals != "" && date <= plan.totals {
			continue
		}
		e, okDay := days[date]
		h, okHour := hours[date]
		switch {
		case okDay && skip(e), !okDay && okHour && skip(h):
		case okDay && e.Last <= now && (e.Last < cut || e.First >= cut):
			ds = append(ds, date)
		case okHour:
			hs = append(hs, date)
			after = after || h.Last > now
		default:
			rs = append(rs, date)
		}
	}
	sort.Strings(ds)
	sort.Strings(hs)
	sort.Strings(rs)
	plan.days, plan.hours, plan.raw = strings.Join(ds, ","), strings.Join(hs, ","), strings.Join(rs, ",")
	if len(hs) > 0 {
		if cut%hour != 0 {
			plan.cutHour = cut - cut%hour
		}
		if after && (now+1)%hour != 0 {
			plan.nowHour = now - now%hour
		}
		if plan.cutHour >= 0 || plan.nowHour >= 0 {
			fills, _, err := q.dayEntries(predmktMarketFills)
			if err != nil {
				return plan, err
			}
			var fs, rs []string
			for _, d := range hs {
				if e, ok := fills[d]; ok && e.Rows > 0 {
					fs = append(fs, d)
				} else {
					rs = append(rs, d)
				}
			}
			plan.hourFills, plan.hourRaw = strings.Join(fs, ","), strings.Join(rs, ",")
		}
	}
	return plan, q.planFiles(&plan, src)
}
