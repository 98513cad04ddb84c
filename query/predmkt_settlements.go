package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var predmktSettlementsSQL = sqlfiles.MustRead("predmkt/settlements.sql")

// PredmktSettlementKey is the keyset of /v1/predmkt/settlements.
type PredmktSettlementKey struct {
	ResolvedMs int64  `json:"r"`
	ID         string `json:"id"`
}

// PredmktSettlementsParams are the inputs of PredmktSettlements.
type PredmktSettlementsParams struct {
	Category string // "" for any
	Status   string // "", resolved or invalid
	From, To int64  // epoch ms on resolved_ts, [From, To)
	Limit    int
	After    *PredmktSettlementKey
}

// PredmktSettlement is one row of /v1/predmkt/settlements.
type PredmktSettlement struct {
	ConditionID    string  `json:"condition_id"`
	Title          string  `json:"title"`
	Slug           string  `json:"slug"`
	Category       string  `json:"category"`
	ResolvedTS     string  `json:"resolved_ts" doc:"ISO-8601 UTC with milliseconds; can be corrected later"`
	Invalid        bool    `json:"invalid" doc:"true for a void resolution: no winner, nothing paid"`
	WinningIndex   *int    `json:"winning_index" doc:"outcome_index that paid 1 per share; null when invalid"`
	WinningOutcome *string `json:"winning_outcome" doc:"null when invalid"`
	WinningTokenID *string `json:"winning_token_id" doc:"null when invalid"`
	VolumeUSD      float64 `json:"volume_usd" doc:"USD traded in the market, each trade once"`
	Trades         int64   `json:"trades"`
	Traders        int64   `json:"traders" doc:"distinct wallets with a fill, taker or maker"`
	PayoutUSD      float64 `json:"payout_usd" doc:"settled value: positive net shares of the winning outcome at 1 USD each; 0 when invalid"`
	WinningHolders int64   `json:"winning_holders" doc:"wallets paid at settlement (a positive net winning position)"`
}

// PredmktSettlementsPage is the body of /v1/predmkt/settlements.
type PredmktSettlementsPage struct {
	Settlements []PredmktSettlement   `json:"settlements"`
	NextCursor  *string               `json:"nextCursor" doc:"pass back as cursor with the same filters; null on the last page"`
	Next        *PredmktSettlementKey `json:"-"`
}

// PredmktSettlements pages resolutions, newest first.
func (q *Queries) PredmktSettlements(ctx context.Context, p PredmktSettlementsParams) (PredmktSettlementsPage, error) {
	page := PredmktSettlementsPage{Settlements: []PredmktSettlement{}}
	var k PredmktSettlementKey
	if p.After != nil {
		k = *p.After
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt settlements"
	rows, err := q.db.QueryContext(ctx, predmktSettlementsSQL, q.Now().UnixMilli(), p.Category, p.Status, p.From, p.To,
		p.After != nil, k.ResolvedMs, k.ID, p.Limit+1)
	if err != nil {
		return page, wrap(ctx, op, err)
	}
	defer rows.Close()
	var keys []PredmktSettlementKey
	for rows.Next() {
		var s PredmktSettlement
		var res, vol, payout int64
		var win sql.NullInt32
		var outcome, tok sql.NullString
		if err := rows.Scan(&s.ConditionID, &s.Title, &s.Slug, &s.Category, &res, &s.Invalid, &win, &outcome, &tok,
			&vol, &s.Trades, &s.Traders, &payout, &s.WinningHolders); err != nil {
			return page, wrap(ctx, op, err)
		}
		s.ResolvedTS = isoMs(res)
		if win.Valid {
			w := int(win.Int32)
			s.WinningIndex = &w
		}
		if outcome.Valid {
			s.WinningOutcome = &outcome.String
		}
		if tok.Valid {
			s.WinningTokenID = &tok.String
		}
		s.VolumeUSD, s.PayoutUSD = MicroUSD(vol), MicroUSD(payout)
		page.Settlements = append(page.Settlements, s)
		keys = append(keys, PredmktSettlementKey{ResolvedMs: res, ID: s.ConditionID})
	}
	if err := rows.Err(); err != nil {
		return page, wrap(ctx, op, err)
	}
	if _, last := trimPage(keys, p.Limit); last != nil {
		page.Settlements = page.Settlements[:p.Limit]
		page.Next = last
	}
	return page, nil
}
