package query

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"

	sqlfiles "mdq/sql"
)

var (
	predmktCategoriesSQL = sqlfiles.MustRead("predmkt/categories.sql")
	predmktFamiliesSQL   = sqlfiles.MustRead("predmkt/families.sql")
)

// The smart-money cohort of SPEC §2.2, computed per category on the hourly board.
const (
	cohortMinPnL      = 1_000.0
	cohortMinResolved = 5
	cohortMinVolume   = 5_000.0
)

// InSmartMoneyCohort reports whether a board entry (of one category) is in that
// category's smart-money cohort: at least 1,000 USD realized PnL, five resolved markets
// and 5,000 USD volume, compared on the published (rounded) figures.
func InSmartMoneyCohort(e *BoardEntry) bool {
	return e.PnL >= cohortMinPnL && e.Resolved >= cohortMinResolved && e.Volume >= cohortMinVolume
}

// CategoryRow is one row of /v1/predmkt/categories.
type CategoryRow struct {
	Category          string  `json:"category"`
	Markets           int64   `json:"markets" doc:"markets listed in the category"`
	OpenMarkets       int64   `json:"open_markets" doc:"markets still trading (not closed)"`
	ResolvedMarkets   int64   `json:"resolved_markets" doc:"markets with a valid resolution (a winning outcome)"`
	InvalidMarkets    int64   `json:"invalid_markets" doc:"markets resolved invalid (void: settled nothing)"`
	Volume24hUSD      float64 `json:"volume_24h_usd" doc:"USD traded in the 24 hours to now, each trade once (taker fills)"`
	Volume7dUSD       float64 `json:"volume_7d_usd" doc:"USD traded in the 7 days to now, each trade once"`
	VolumeAllUSD      float64 `json:"volume_all_usd" doc:"USD traded up to now, each trade once"`
	Trades24h         int64   `json:"trades_24h" doc:"trades in the 24 hours to now"`
	Traders24h        int64   `json:"traders_24h" doc:"distinct wallets with a fill (taker or maker) in the 24 hours to now"`
	TradersAll        int64   `json:"traders_all" doc:"distinct wallets with a fill up to now"`
	SmartMoneyWallets int64   `json:"smart_money_wallets" doc:"size of the category's smart-money cohort (at least 1,000 USD realized PnL, five resolved markets and 5,000 USD volume on the category), from this hour's board"`
	LastTradeTS       *string `json:"last_trade_ts" doc:"last trade at or before now, ISO-8601 UTC with milliseconds; null when the category never traded"`
}

// PredmktCategoriesList answers /v1/predmkt/categories: one row per category, in the
// order of PredmktCategories, zeros for a category without markets.
func (q *Queries) PredmktCategoriesList(ctx context.Context) ([]CategoryRow, error) {
	board, err := q.PredmktBoard(ctx) // the cohort comes from this hour's board
	if err != nil {
		return nil, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt categories"
	rows, err := q.db.QueryContext(ctx, predmktCategoriesSQL, q.Now().UnixMilli())
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	byCat := map[string]CategoryRow{}
	for rows.Next() {
		var r CategoryRow
		var v24, v7, vAll int64 // micro-USD
		var last sql.NullInt64
		if err := rows.Scan(&r.Category, &r.Markets, &r.OpenMarkets, &r.ResolvedMarkets, &r.InvalidMarkets,
			&v24, &v7, &vAll, &r.Trades24h, &r.Traders24h, &r.TradersAll, &last); err != nil {
			return nil, wrap(ctx, op, err)
		}
		r.Volume24hUSD, r.Volume7dUSD, r.VolumeAllUSD = MicroUSD(v24), MicroUSD(v7), MicroUSD(vAll)
		if last.Valid {
			s := ISOMillis(time.UnixMilli(last.Int64))
			r.LastTradeTS = &s
		}
		byCat[r.Category] = r
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	out := make([]CategoryRow, 0, len(PredmktCategories))
	for _, c := range PredmktCategories {
		r := byCat[c]
		r.Category = c
		for i := range board.Cats[c] {
			if InSmartMoneyCohort(&board.Cats[c][i]) {
				r.SmartMoneyWallets++
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Family enumerations of the crypto up/down markets, tenors shortest first.
var (
	PredmktFamilyAssets = []string{"btc", "eth", "sol"}
	PredmktFamilyTenors = []string{"15m", "1h", "1d"}
)

// PredmktFamiliesParams are the inputs of PredmktFamilies; empty means every value.
type PredmktFamiliesParams struct {
	Asset string
	Tenor string
}

// FamilyMarket is the current open market of a family.
type FamilyMarket struct {
	ConditionID string   `json:"condition_id"`
	Question    string   `json:"question"`
	EndTS       string   `json:"end_ts" doc:"scheduled end, ISO-8601 UTC with milliseconds"`
	YesMid      *float64 `json:"yes_mid" doc:"latest recorded mid ((best bid + best ask) / 2) of the Up token at or before now; null when none is recorded"`
}

// FamilyRow is one row of /v1/predmkt/families.
type FamilyRow struct {
	Asset         string        `json:"asset" doc:"btc, eth or sol"`
	Tenor         string        `json:"tenor" doc:"15m, 1h or 1d"`
	Markets       int64         `json:"markets" doc:"markets listed in the family"`
	Resolved      int64         `json:"resolved" doc:"markets with a valid resolution"`
	UpWins        int64         `json:"up_wins" doc:"valid resolutions won by Up (outcome index 0)"`
	DownWins      int64         `json:"down_wins" doc:"valid resolutions won by Down (outcome index 1)"`
	CurrentMarket *FamilyMarket `json:"current_market" doc:"the open market trading now (listed at or before now, ending after it; the earliest-ending when several); null when none"`
	Volume24hUSD  float64       `json:"volume_24h_usd" doc:"USD traded on the family's markets in the 24 hours to now, each trade once"`
}

// PredmktFamilies answers /v1/predmkt/families: one row per (asset, tenor) with
// markets, assets in alphabetical order and tenors shortest first.
func (q *Queries) PredmktFamilies(ctx context.Context, p PredmktFamiliesParams) ([]FamilyRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt families"
	now := q.Now().UnixMilli()
	rows, err := q.db.QueryContext(ctx, predmktFamiliesSQL, p.Asset, p.Tenor, now)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	out := []FamilyRow{}
	yes := map[int]string{} // row index -> Up token of its current market
	for rows.Next() {
		var r FamilyRow
		var cond, question, tok sql.NullString
		var end sql.NullTime
		var vol int64
		if err := rows.Scan(&r.Asset, &r.Tenor, &r.Markets, &r.Resolved, &r.UpWins, &r.DownWins,
			&cond, &question, &end, &tok, &vol); err != nil {
			return nil, wrap(ctx, op, err)
		}
		r.Volume24hUSD = MicroUSD(vol)
		if cond.Valid {
			r.CurrentMarket = &FamilyMarket{ConditionID: cond.String, Question: question.String, EndTS: ISOMillis(end.Time)}
			if tok.Valid {
				yes[len(out)] = tok.String
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	rows.Close()
	toks := make([]string, 0, len(yes))
	for _, t := range yes {
		toks = append(toks, t)
	}
	mids, err := q.mids(ctx, toks, now)
	if err != nil {
		return nil, err
	}
	for i, t := range yes {
		if m, ok := mids[t]; ok {
			m = Round(m, 6)
			out[i].CurrentMarket.YesMid = &m
		}
	}
	slices.SortFunc(out, func(a, b FamilyRow) int {
		if c := cmp.Compare(a.Asset, b.Asset); c != 0 {
			return c
		}
		if c := cmp.Compare(tenorRank(a.Tenor), tenorRank(b.Tenor)); c != 0 {
			return c
		}
		return cmp.Compare(a.Tenor, b.Tenor)
	})
	return out, nil
}

// tenorRank orders tenors shortest first; unknown tenors last, by name.
func tenorRank(t string) int {
	if i := slices.Index(PredmktFamilyTenors, t); i >= 0 {
		return i
	}
	return len(PredmktFamilyTenors)
}
