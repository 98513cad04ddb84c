package query

import (
	"cmp"
	"context"
	"database/sql"
	"slices"

	sqlfiles "mdq/sql"
)

var predmktWalletPositionsSQL = sqlfiles.MustRead("predmkt/wallet_positions.sql")

// PositionStatuses are the states of a position: open (market not resolved), settled
// (resolved with a winner) or void (resolved invalid: settles nothing).
var PositionStatuses = []string{"open", "settled", "void"}

// PredmktPositionKey is the keyset of positions: the last row's last fill and token.
type PredmktPositionKey struct {
	LastTS  int64  `json:"ts"`
	TokenID string `json:"tok"`
}

// PredmktWalletPositionsParams are the inputs of PredmktWalletPositions.
type PredmktWalletPositionsParams struct {
	Wallet string
	Status string // "" for every position, else one of PositionStatuses
	Limit  int
	After  *PredmktPositionKey
}

// PredmktPosition is one row of /v1/predmkt/wallets/{address}/positions: the wallet's
// fills on one outcome token, netted.
type PredmktPosition struct {
	TokenID          string   `json:"token_id"`
	ConditionID      string   `json:"condition_id"`
	Title            string   `json:"title"`
	Category         string   `json:"category"`
	OutcomeIndex     int      `json:"outcome_index"`
	Outcome          string   `json:"outcome"`
	Status           string   `json:"status" doc:"open (market not resolved), settled (resolved with a winner) or void (resolved invalid: settles nothing)"`
	Won              *bool    `json:"won" doc:"settled: whether this outcome won; null otherwise"`
	Shares           float64  `json:"shares" doc:"net shares: bought minus sold; negative for a maker that sold shares it did not hold"`
	SharesBought     float64  `json:"shares_bought"`
	SharesSold       float64  `json:"shares_sold"`
	BuyUSD           float64  `json:"buy_usd"`
	SellUSD          float64  `json:"sell_usd"`
	CostBasisUSD     float64  `json:"cost_basis_usd" doc:"net USD put in: buy_usd minus sell_usd (negative when sales returned more than was paid)"`
	AvgEntryPrice    *float64 `json:"avg_entry_price" doc:"buy_usd / shares_bought; null without buys"`
	Mid              *float64 `json:"mid" doc:"open: latest recorded mid at or before now; null when none, and for settled or void positions"`
	ValueUSD         *float64 `json:"value_usd" doc:"open: shares times mid; settled: the payout (shares times 1 if won, else 0); null for void or without a mid"`
	RealizedPnLUSD   float64  `json:"realized_pnl_usd" doc:"settled: sell_usd - buy_usd + payout; 0 while open (realized only at resolution) and for void"`
	UnrealizedPnLUSD *float64 `json:"unrealized_pnl_usd" doc:"open: sell_usd - buy_usd + shares times mid; null without a mid and once settled or void"`
	Fills            int64    `json:"fills"`
	FirstTradeTS     string   `json:"first_trade_ts" doc:"ISO-8601 UTC, ms"`
	LastTradeTS      string   `json:"last_trade_ts"`
	ResolvedTS       *string  `json:"resolved_ts" doc:"null while open"`
}

// PredmktPositionsPage is the body of /v1/predmkt/wallets/{address}/positions.
type PredmktPositionsPage struct {
	Wallet     string              `json:"wallet"`
	Positions  []PredmktPosition   `json:"positions" doc:"most recently traded first, ties on token_id"`
	NextCursor *string             `json:"nextCursor" doc:"pass back as cursor with the same filters; null on the last page"`
	Next       *PredmktPositionKey `json:"-"`
}

type pmPosRaw struct {
	p                              PredmktPosition
	buySh, sellSh, buyUSD, sellUSD int64 // micro-units
	lastTS                         int64
	winning                        sql.NullInt32
}

// PredmktWalletPositions answers /v1/predmkt/wallets/{address}/positions.
func (q *Queries) PredmktWalletPositions(ctx context.Context, p PredmktWalletPositionsParams) (PredmktPositionsPage, error) {
	page := PredmktPositionsPage{Wallet: p.Wallet, Positions: []PredmktPosition{}}
	raws, err := q.walletPositionRows(ctx, p.Wallet)
	if err != nil {
		return page, err
	}
	slices.SortFunc(raws, func(a, b pmPosRaw) int {
		if c := cmp.Compare(b.lastTS, a.lastTS); c != 0 {
			return c
		}
		return cmp.Compare(a.p.TokenID, b.p.TokenID)
	})
	var sel []pmPosRaw
	for _, r := range raws {
		if p.Status != "" && r.p.Status != p.Status {
			continue
		}
		if a := p.After; a != nil && (r.lastTS > a.LastTS || r.lastTS == a.LastTS && r.p.TokenID <= a.TokenID) {
			continue
		}
		sel = append(sel, r)
		if len(sel) > p.Limit {
			break
		}
	}
	if len(sel) > p.Limit {
		sel = sel[:p.Limit]
		last := sel[p.Limit-1]
		page.Next = &PredmktPositionKey{LastTS: last.lastTS, TokenID: last.p.TokenID}
	}
	var open []string
	for _, r := range sel {
		if r.p.Status == "open" {
			open = append(open, r.p.TokenID)
		}
	}
	mids, err := q.tokenMids(ctx, open)
	if err != nil {
		return page, err
	}
	for _, r := range sel {
		page.Positions = append(page.Positions, r.figure(mids))
	}
	return page, nil
}

// figure derives the PnL figures of one position. Realized PnL follows the board: a
// market adds PnL only once it resolves validly, then sells minus buys plus 1 USD per
// net share of the winning outcome, summed exactly in micro-units.
func (r pmPosRaw) figure(mids map[string]float64) PredmktPosition {
	p := r.p
	net := r.buySh - r.sellSh
	cash := r.sellUSD - r.buyUSD
	p.Shares, p.SharesBought, p.SharesSold = Round(float64(net)/1e6, 6), Round(float64(r.buySh)/1e6, 6), Round(float64(r.sellSh)/1e6, 6)
	p.BuyUSD, p.SellUSD, p.CostBasisUSD = MicroUSD(r.buyUSD), MicroUSD(r.sellUSD), MicroUSD(-cash)
	if r.buySh > 0 {
		a := Round(float64(r.buyUSD)/float64(r.buySh), 6)
		p.AvgEntryPrice = &a
	}
	switch p.Status {
	case "settled":
		won := int(r.winning.Int32) == p.OutcomeIndex
		p.Won = &won
		payout := int64(0)
		if won {
			payout = net
		}
		v := MicroUSD(payout)
		p.ValueUSD = &v
		p.RealizedPnLUSD = MicroUSD(cash + payout)
	case "open":
		if m, ok := mids[p.TokenID]; ok {
			mid := Round(m, 6)
			v := Round(float64(net)/1e6*m, 2)
			u := Round(float64(cash)/1e6+float64(net)/1e6*m, 2)
			p.Mid, p.ValueUSD, p.UnrealizedPnLUSD = &mid, &v, &u
		}
	}
	return p
}

// walletPositionRows reads the wallet's fills netted per token, with status set.
func (q *Queries) walletPositionRows(ctx context.Context, wallet string) ([]pmPosRaw, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt wallet positions"
	rows, err := q.db.QueryContext(ctx, predmktWalletPositionsSQL, wallet, q.Now().UnixMilli())
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var out []pmPosRaw
	for rows.Next() {
		var r pmPosRaw
		var first int64
		var resolved, invalid bool
		var resMs sql.NullInt64
		if err := rows.Scan(&r.p.TokenID, &r.p.ConditionID, &r.p.OutcomeIndex, &r.p.Outcome, &r.p.Title, &r.p.Category,
			&r.buySh, &r.sellSh, &r.buyUSD, &r.sellUSD, &r.p.Fills, &first, &r.lastTS, &resolved, &invalid, &r.winning, &resMs); err != nil {
			return nil, wrap(ctx, op, err)
		}
		r.p.FirstTradeTS, r.p.LastTradeTS, r.p.ResolvedTS = isoMs(first), isoMs(r.lastTS), isoPtr(resMs)
		switch {
		case !resolved:
			r.p.Status = "open"
		case invalid:
			r.p.Status = "void"
		default:
			r.p.Status = "settled"
		}
		out = append(out, r)
	}
	return out, wrap(ctx, op, rows.Err())
}
