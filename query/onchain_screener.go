package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var onchainScreenerSQL = sqlfiles.MustRead("onchain/screener.sql")

// OnchainSmartMoneyPnL is the realized-PnL floor (USD, all history on the chain) of
// the on-chain smart-money cohort; venue-labelled addresses are never in it.
const OnchainSmartMoneyPnL = 10_000.0

// OnchainScreenerWindows maps each screener window to the calendar dates it spans
// before today: 24h spans yesterday and today.
var OnchainScreenerWindows = map[string]int{"24h": 1, "7d": 7, "30d": 30, "90d": 90}

// OnchainScreenerParams are the inputs of OnchainScreener.
type OnchainScreenerParams struct {
	Chain          string
	Window         string // 24h, 7d, 30d or 90d
	Sort           string // volume, net_inflow, holders or smart_inflow
	MinVolumeUSD   float64
	MinHolders     int64
	SmartMoneyOnly bool
	Limit          int
}

// ScreenerRow is one row of /v1/onchain/tokens/screener.
type ScreenerRow struct {
	TokenAddress  string  `json:"token_address" doc:"token contract; the native coin is the zero address"`
	Symbol        string  `json:"symbol" doc:"ticker from token metadata; empty when the metadata does not know the token"`
	Name          *string `json:"name" doc:"full name from token metadata; null when unknown"`
	VolumeUSD     float64 `json:"volume_usd" doc:"USD at transfer time of every transfer in the window (each transfer once)"`
	NetFlowUSD    float64 `json:"net_flow_usd" doc:"in_usd minus out_usd"`
	InUSD         float64 `json:"in_usd" doc:"USD moved into wallets (non-venue addresses, or the smart-money cohort with smart_money_only) from outside them"`
	OutUSD        float64 `json:"out_usd" doc:"USD moved out of those wallets to outside them"`
	UniqueHolders int64   `json:"unique_holders" doc:"distinct wallets that sent or received the token in the window"`
	TxCount       int64   `json:"tx_count" doc:"transfers in the window"`
}

// OnchainScreener ranks tokens of one chain over the window's calendar dates.
func (q *Queries) OnchainScreener(ctx context.Context, p OnchainScreenerParams) ([]ScreenerRow, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	now := q.Now()
	first := Date(now.AddDate(0, 0, -OnchainScreenerWindows[p.Window]))
	rows, err := q.db.QueryContext(ctx, onchainScreenerSQL, p.Chain, first, micros(now), p.SmartMoneyOnly, p.Sort,
		p.MinVolumeUSD, p.MinHolders, p.Limit, OnchainSmartMoneyPnL)
	if err != nil {
		return nil, wrap(ctx, "onchain screener", err)
	}
	defer rows.Close()
	items := []ScreenerRow{}
	for rows.Next() {
		var r ScreenerRow
		var name sql.NullString
		if err := rows.Scan(&r.TokenAddress, &r.Symbol, &name, &r.VolumeUSD, &r.InUSD, &r.OutUSD, &r.UniqueHolders, &r.TxCount); err != nil {
			return nil, wrap(ctx, "onchain screener", err)
		}
		r.Name = nullStr(name)
		r.VolumeUSD, r.InUSD, r.OutUSD = usd(r.VolumeUSD), usd(r.InUSD), usd(r.OutUSD)
		r.NetFlowUSD = usd(r.InUSD - r.OutUSD)
		items = append(items, r)
	}
	return items, wrap(ctx, "onchain screener", rows.Err())
}
