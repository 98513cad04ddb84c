package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var perpdexPositionsSQL = sqlfiles.MustRead("perpdex/positions.sql")

// VenuePosition is one open position of the venue-wide list.
type VenuePosition struct {
	Rank             int64   `json:"rank" doc:"position in the order; continues across pages"`
	Wallet           string  `json:"wallet"`
	Coin             string  `json:"coin"`
	Side             string  `json:"side"`
	SizeToken        float64 `json:"size_token"`
	SizeUsd          float64 `json:"size_usd" doc:"position_value: size times the snapshot's mark"`
	EntryPrice       float64 `json:"entry_price"`
	MarkPrice        float64 `json:"mark_price"`
	Leverage         float64 `json:"leverage"`
	LiquidationPrice float64 `json:"liquidation_price" doc:"0.0 when the venue reports none"`
	UnrealizedPnl    float64 `json:"unrealized_pnl"`
	SizeCohort       *string `json:"size_cohort" doc:"the holder's label of today; null when unlabelled"`
	PnlCohort        *string `json:"pnl_cohort"`
}

// PositionKey is the keyset position of a venue position.
type PositionKey struct {
	Value  float64 `json:"v"`
	Coin   string  `json:"c"`
	Wallet string  `json:"w"`
	Rank   int64   `json:"r"`
}

// VenuePositionsPage is the envelope of /v1/perpdex/positions.
type VenuePositionsPage struct {
	SnapshotTS *string         `json:"snapshot_ts" doc:"the newest position batch at or before now"`
	Positions  []VenuePosition `json:"positions"`
	NextCursor *string         `json:"nextCursor"`
	Next       *PositionKey    `json:"-"`
}

// PerpdexPositions pages the newest batch's positions by notional, largest first;
// side is "", long or short.
func (q *Queries) PerpdexPositions(ctx context.Context, coin, side string, limit int, after *PositionKey) (VenuePositionsPage, error) {
	page := VenuePositionsPage{Positions: []VenuePosition{}}
	var sign any
	switch side {
	case "long":
		sign = 1
	case "short":
		sign = -1
	}
	var aV, aC, aW any
	var rank int64
	if after != nil {
		aV, aC, aW, rank = after.Value, after.Coin, after.Wallet, after.Rank
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return page, err
	}
	lab, err := q.perpdexLabelsAt(ctx, q.Now())
	if err != nil {
		return page, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	page.Positions, page.Next, err = keysetPage(ctx, q.db, "perpdex positions", perpdexPositionsSQL, limit,
		[]any{pdNullStr(coin), sign, q.Now(), aV, aC, aW, lab.current}, func(rows *sql.Rows) (VenuePosition, PositionKey, error) {
			var (
				r      VenuePosition
				ts     time.Time
				szi    float64
				val    float64
				sc, pc sql.NullString
			)
			if err := rows.Scan(&ts, &r.Wallet, &r.Coin, &szi, &r.EntryPrice, &r.MarkPrice, &r.Leverage, &r.LiquidationPrice,
				&r.UnrealizedPnl, &val, &sc, &pc); err != nil {
				return r, PositionKey{}, err
			}
			s := ISOSeconds(ts) // every row is of the one newest batch
			page.SnapshotTS = &s
			rank++ // the extra row's rank is never served
			r.Rank, r.Side, r.SizeToken = rank, pdSide(szi), pdAbs(szi)
			r.SizeUsd, r.UnrealizedPnl = Round(val, 2), Round(r.UnrealizedPnl, 2)
			r.SizeCohort, r.PnlCohort = nullable(sc), nullable(pc)
			return r, PositionKey{val, r.Coin, r.Wallet, rank}, nil
		})
	return page, err
}
