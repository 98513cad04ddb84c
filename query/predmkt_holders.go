package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var predmktHoldersSQL = sqlfiles.MustRead("predmkt/holders.sql")

// PredmktHolderRow is one holder of an outcome token.
type PredmktHolderRow struct {
	Rank        int      `json:"rank" doc:"1 for the largest position; ties break on wallet address"`
	Wallet      string   `json:"wallet"`
	Pseudonym   string   `json:"pseudonym"`
	DisplayName string   `json:"display_name"`
	Shares      float64  `json:"shares" doc:"net shares held: buys minus sells over all the wallet's fills (taker and maker)"`
	ShareOfHeld float64  `json:"share_of_held" doc:"shares / the token's shares_held, a fraction 0 to 1"`
	AvgBuyPrice *float64 `json:"avg_buy_price" doc:"USD paid / shares bought on this token; null when the position came from no buy"`
	Fills       int64    `json:"fills" doc:"the wallet's fills on this token"`
	LastTradeTS string   `json:"last_trade_ts" doc:"the wallet's last fill on this token (ISO-8601 UTC, ms)"`
}

// PredmktOutcomeHolders are the top holders of one outcome token.
type PredmktOutcomeHolders struct {
	TokenID      string             `json:"token_id"`
	OutcomeIndex int                `json:"outcome_index"`
	Outcome      string             `json:"outcome"`
	HoldersTotal int64              `json:"holders_total" doc:"every wallet with a positive net position"`
	SharesHeld   float64            `json:"shares_held" doc:"sum of every positive net position"`
	Holders      []PredmktHolderRow `json:"holders" doc:"the largest positions, at most limit"`
}

// PredmktMarketHolders is the body of /v1/predmkt/markets/{condition_id}/holders.
type PredmktMarketHolders struct {
	ConditionID string                  `json:"condition_id"`
	Title       string                  `json:"title"`
	Status      string                  `json:"status" doc:"open, resolved or invalid"`
	Outcomes    []PredmktOutcomeHolders `json:"outcomes" doc:"one entry per outcome token, by outcome_index"`
}

// PredmktMarketHolders answers /v1/predmkt/markets/{condition_id}/holders: the limit
// largest net positions of each outcome token; ErrNotFound for an unknown market.
func (q *Queries) PredmktMarketHolders(ctx context.Context, conditionID string, limit int) (PredmktMarketHolders, error) {
	src, err := q.marketSource("predmkt market holders")
	if err != nil {
		return PredmktMarketHolders{}, err
	}
	info, err := q.marketInfo(ctx, src, conditionID)
	if err != nil {
		return PredmktMarketHolders{}, err
	}
	out := PredmktMarketHolders{ConditionID: info.ConditionID, Title: info.Title, Status: info.Status, Outcomes: []PredmktOutcomeHolders{}}
	toks, err := q.marketTokens(ctx, src, []PredmktMarketInfo{info})
	if err != nil {
		return out, err
	}
	byTok := map[string]int{}
	for _, t := range toks[conditionID] {
		byTok[t.TokenID] = len(out.Outcomes)
		out.Outcomes = append(out.Outcomes, PredmktOutcomeHolders{TokenID: t.TokenID, OutcomeIndex: t.OutcomeIndex, Outcome: t.Outcome,
			Holders: []PredmktHolderRow{}})
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt market holders"
	rows, err := q.db.QueryContext(ctx, predmktHoldersSQL, conditionID, q.Now().UnixMilli(), limit)
	if err != nil {
		return out, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var tok string
		var h PredmktHolderRow
		var net, buyUSD, buySh, lastTS, total int64
		var count int64
		if err := rows.Scan(&tok, &h.Rank, &h.Wallet, &h.Pseudonym, &h.DisplayName, &net, &buyUSD, &buySh, &h.Fills, &lastTS,
			&count, &total); err != nil {
			return out, wrap(ctx, op, err)
		}
		i, ok := byTok[tok]
		if !ok {
			continue
		}
		o := &out.Outcomes[i]
		o.HoldersTotal, o.SharesHeld = count, Round(float64(total)/1e6, 6)
		h.Shares = Round(float64(net)/1e6, 6)
		h.ShareOfHeld = Round(float64(net)/float64(total), 6)
		if buySh > 0 {
			p := Round(float64(buyUSD)/float64(buySh), 6)
			h.AvgBuyPrice = &p
		}
		h.LastTradeTS = isoMs(lastTS)
		o.Holders = append(o.Holders, h)
	}
	return out, wrap(ctx, op, rows.Err())
}
