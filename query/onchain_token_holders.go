package query

import (
	"context"
	"database/sql"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var onchainTokenHoldersSQL = sqlfiles.MustRead("onchain/token_holders.sql")

// TokenHolderRow is one row of /v1/onchain/tokens/{token_address}/holders.
type TokenHolderRow struct {
	Rank         int      `json:"rank"`
	Address      string   `json:"address"`
	Label        *string  `json:"label" doc:"cascade label entity; null when unlabelled"`
	NetInflowUSD float64  `json:"net_inflow_usd" doc:"cumulative USD received minus sent (USD at transfer time), the ranking key"`
	InflowUSD    float64  `json:"inflow_usd"`
	OutflowUSD   float64  `json:"outflow_usd"`
	NetTokens    float64  `json:"net_tokens" doc:"whole tokens received minus sent over the lake's history"`
	Balance      *float64 `json:"balance" doc:"current balance in whole tokens; null when no balance is recorded"`
	TxCount      int64    `json:"tx_count"`
	FirstSeen    string   `json:"first_seen" doc:"first transfer of the token, YYYY-MM-DD"`
	LastActive   string   `json:"last_active" doc:"last transfer of the token, YYYY-MM-DD"`
}

// OnchainTokenHoldersCap is the most rows a holders board keeps per token: the
// route's applied limit cap.
const OnchainTokenHoldersCap = 50

type holdersBoardKey struct{}

// OnchainTokenHolders ranks a token's wallets by cumulative net inflow USD, from the
// hourly holders board of the chain (as of the start of the store clock's hour).
func (q *Queries) OnchainTokenHolders(ctx context.Context, chain, token string, limit int) ([]TokenHolderRow, error) {
	if err := q.onchainSide(ctx); err != nil {
		return nil, err
	}
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	v, _ := q.ext.LoadOrStore(holdersBoardKey{}, newOcHourly[map[string][]TokenHolderRow]("onchain holders board"))
	board, err := v.(*hourly[map[string][]TokenHolderRow]).value(ctx, q, chain, ocBoardHour(q.Now()),
		func(ctx context.Context, at time.Time) (map[string][]TokenHolderRow, error) {
			return q.buildHoldersBoard(ctx, chain, at)
		})
	if err != nil {
		return nil, err
	}
	rows := board[token]
	return append([]TokenHolderRow{}, rows[:min(len(rows), limit)]...), nil
}

func (q *Queries) buildHoldersBoard(ctx context.Context, chain string, at time.Time) (map[string][]TokenHolderRow, error) {
	var rows *sql.Rows
	err := q.withOcBands(chain, at, false, func(b ocBands) error {
		var err error
		rows, err = q.sourcedBoardRows(ctx, lake.OnchainHoldersBoard, chain, at, holdersBoardSources, nil, onchainTokenHoldersSQL,
			append([]any{chain, micros(at), OnchainTokenHoldersCap}, b.holdersArgs()...)...)
		return err
	})
	if err != nil {
		return nil, wrap(ctx, "onchain token holders", err)
	}
	defer rows.Close()
	board := map[string][]TokenHolderRow{}
	for rows.Next() {
		var r TokenHolderRow
		var tok string
		var label sql.NullString
		var bal sql.NullFloat64
		var first, last time.Time
		if err := rows.Scan(&tok, &r.Address, &label, &r.InflowUSD, &r.OutflowUSD, &r.NetTokens, &bal, &r.TxCount, &first, &last); err != nil {
			return nil, wrap(ctx, "onchain token holders", err)
		}
		r.Rank = len(board[tok]) + 1
		r.Label = nullStr(label)
		r.NetInflowUSD = usd(r.InflowUSD - r.OutflowUSD)
		r.InflowUSD, r.OutflowUSD, r.NetTokens = usd(r.InflowUSD), usd(r.OutflowUSD), tokens(r.NetTokens)
		if bal.Valid {
			b := bal.Float64
			r.Balance = &b
		}
		r.FirstSeen, r.LastActive = Date(first), Date(last)
		board[tok] = append(board[tok], r)
	}
	return board, wrap(ctx, "onchain token holders", rows.Err())
}
