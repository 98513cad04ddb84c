package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var predmktTradesSQL = sqlfiles.MustRead("predmkt/trades.sql")

// PredmktTradeKey is the keyset of the trade tapes: the (ts, seq, token_id) of the last
// row served.
type PredmktTradeKey struct {
	TS      int64  `json:"ts"`
	Seq     int64  `json:"seq"`
	TokenID string `json:"tok"`
}

// PredmktTradesParams are the inputs of PredmktTrades.
type PredmktTradesParams struct {
	ConditionID, TokenID, Wallet string // "" for any; at least one is set by the route
	From, To                     int64  // epoch ms, [From, To)
	Desc                         bool   // newest first
	Limit                        int
	After                        *PredmktTradeKey
}

// PredmktTapeTrade is one trade of /v1/predmkt/trades: each tape trade once.
type PredmktTapeTrade struct {
	TradeID      string  `json:"trade_id" doc:"the taker fill's id"`
	TS           int64   `json:"ts" doc:"venue time, epoch ms"`
	Seq          int64   `json:"seq" doc:"seq of the tape trade event"`
	TokenID      string  `json:"token_id"`
	ConditionID  string  `json:"condition_id"`
	OutcomeIndex int     `json:"outcome_index"`
	Outcome      string  `json:"outcome"`
	Side         string  `json:"side" doc:"BUY or SELL, from the taker's side"`
	Price        float64 `json:"price" doc:"probability 0 to 1"`
	Size         float64 `json:"size" doc:"outcome-token shares"`
	USD          float64 `json:"usd" doc:"price times size"`
	Taker        string  `json:"taker"`
	Maker        string  `json:"maker"`
	TxHash       string  `json:"tx_hash"`
}

// PredmktTradesPage is the body of /v1/predmkt/trades.
type PredmktTradesPage struct {
	Trades     []PredmktTapeTrade `json:"trades"`
	NextCursor *string            `json:"nextCursor" doc:"pass back as cursor with the same filters; null on the last page"`
	Next       *PredmktTradeKey   `json:"-"`
}

// PredmktTrades pages the trade tape.
func (q *Queries) PredmktTrades(ctx context.Context, p PredmktTradesParams) (PredmktTradesPage, error) {
	page := PredmktTradesPage{Trades: []PredmktTapeTrade{}}
	var k PredmktTradeKey
	if p.After != nil {
		k = *p.After
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt trades"
	p.To = min(p.To, q.Now().UnixMilli()+1) // no trade after the clock ([From, To) of ts)
	rows, err := q.db.QueryContext(ctx, predmktTradesSQL, p.ConditionID, p.TokenID, p.Wallet, p.From, p.To, p.Desc,
		p.After != nil, k.TS, k.Seq, k.TokenID, p.Limit+1)
	if err != nil {
		return page, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t PredmktTapeTrade
		if err := rows.Scan(&t.TradeID, &t.TS, &t.Seq, &t.TokenID, &t.ConditionID, &t.OutcomeIndex, &t.Outcome, &t.Side,
			&t.Price, &t.Size, &t.USD, &t.Taker, &t.Maker, &t.TxHash); err != nil {
			return page, wrap(ctx, op, err)
		}
		t.USD = Round(t.USD, 6)
		page.Trades = append(page.Trades, t)
	}
	if err := rows.Err(); err != nil {
		return page, wrap(ctx, op, err)
	}
	var last *PredmktTapeTrade
	if page.Trades, last = trimPage(page.Trades, p.Limit); last != nil {
		page.Next = &PredmktTradeKey{TS: last.TS, Seq: last.Seq, TokenID: last.TokenID}
	}
	return page, nil
}
