package query

import (
	"context"

	sqlfiles "mdq/sql"
)

var predmktWalletTradesSQL = sqlfiles.MustRead("predmkt/wallet_trades.sql")

// PredmktWalletTradesParams are the inputs of PredmktWalletTrades.
type PredmktWalletTradesParams struct {
	Wallet               string
	ConditionID, TokenID string // "" for any
	From, To             int64  // epoch ms, [From, To)
	Limit                int
	After                *PredmktTradeKey
}

// PredmktWalletFill is one fill of /v1/predmkt/wallets/{address}/trades, from the
// wallet's own side.
type PredmktWalletFill struct {
	TradeID      string  `json:"trade_id" doc:"this fill's id"`
	TS           int64   `json:"ts" doc:"venue time, epoch ms"`
	Seq          int64   `json:"seq" doc:"seq of the tape trade event"`
	TokenID      string  `json:"token_id"`
	ConditionID  string  `json:"condition_id"`
	OutcomeIndex int     `json:"outcome_index"`
	Outcome      string  `json:"outcome"`
	Title        string  `json:"title" doc:"the market's question"`
	Role         string  `json:"role" doc:"taker or maker"`
	Side         string  `json:"side" doc:"BUY or SELL, from this wallet's side"`
	Price        float64 `json:"price"`
	Size         float64 `json:"size" doc:"outcome-token shares"`
	USD          float64 `json:"usd" doc:"price times size"`
	TxHash       string  `json:"tx_hash"`
}

// PredmktWalletTradesPage is the body of /v1/predmkt/wallets/{address}/trades.
type PredmktWalletTradesPage struct {
	Wallet     string              `json:"wallet"`
	Trades     []PredmktWalletFill `json:"trades"`
	NextCursor *string             `json:"nextCursor" doc:"pass back as cursor with the same filters; null on the last page"`
	Next       *PredmktTradeKey    `json:"-"`
}

// PredmktWalletTrades pages one wallet's fills, newest first.
func (q *Queries) PredmktWalletTrades(ctx context.Context, p PredmktWalletTradesParams) (PredmktWalletTradesPage, error) {
	page := PredmktWalletTradesPage{Wallet: p.Wallet, Trades: []PredmktWalletFill{}}
	var k PredmktTradeKey
	if p.After != nil {
		k = *p.After
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt wallet trades"
	p.To = min(p.To, q.Now().UnixMilli()+1) // no fill after the clock ([From, To) of ts)
	rows, err := q.db.QueryContext(ctx, predmktWalletTradesSQL, p.Wallet, p.ConditionID, p.TokenID, p.From, p.To,
		p.After != nil, k.TS, k.Seq, k.TokenID, p.Limit+1)
	if err != nil {
		return page, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t PredmktWalletFill
		if err := rows.Scan(&t.TradeID, &t.TS, &t.Seq, &t.TokenID, &t.ConditionID, &t.OutcomeIndex, &t.Outcome, &t.Title,
			&t.Role, &t.Side, &t.Price, &t.Size, &t.USD, &t.TxHash); err != nil {
			return page, wrap(ctx, op, err)
		}
		t.USD = Round(t.USD, 6)
		page.Trades = append(page.Trades, t)
	}
	if err := rows.Err(); err != nil {
		return page, wrap(ctx, op, err)
	}
	var last *PredmktWalletFill
	if page.Trades, last = trimPage(page.Trades, p.Limit); last != nil {
		page.Next = &PredmktTradeKey{TS: last.TS, Seq: last.Seq, TokenID: last.TokenID}
	}
	return page, nil
}
