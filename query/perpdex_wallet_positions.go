package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var perpdexWalletPositionsSQL = sqlfiles.MustRead("perpdex/wallet_positions.sql")

// WalletPosition is one open position of a wallet.
type WalletPosition struct {
	Coin             string   `json:"coin"`
	Side             string   `json:"side" doc:"long (positive size) or short"`
	SizeToken        float64  `json:"size_token" doc:"absolute size"`
	SizeUsd          float64  `json:"size_usd" doc:"position_value: size times the snapshot's mark"`
	EntryPrice       float64  `json:"entry_price"`
	MarkPrice        float64  `json:"mark_price"`
	Leverage         float64  `json:"leverage"`
	LiquidationPrice float64  `json:"liquidation_price" doc:"0.0 when the venue reports none"`
	UnrealizedPnl    float64  `json:"unrealized_pnl"`
	MarginUsd        float64  `json:"margin_usd" doc:"size_usd / leverage"`
	ReturnOnMargin   *float64 `json:"return_on_margin_pct" doc:"unrealized_pnl / margin_usd * 100; null without margin"`
}

// WalletPositionsPage is the body of /v1/perpdex/wallets/{address}/positions.
type WalletPositionsPage struct {
	Wallet     string           `json:"wallet"`
	SnapshotTS *string          `json:"snapshot_ts" doc:"the newest venue-wide position batch at or before now; null when none"`
	Positions  []WalletPosition `json:"positions" doc:"largest size_usd first; [] when the wallet is flat in the batch"`
}

// PerpdexWalletPositions returns one wallet's positions in the newest snapshot batch.
func (q *Queries) PerpdexWalletPositions(ctx context.Context, wallet string) (WalletPositionsPage, error) {
	page := WalletPositionsPage{Wallet: wallet, Positions: []WalletPosition{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexWalletPositionsSQL, wallet, q.Now())
	if err != nil {
		return page, wrap(ctx, "perpdex wallet positions", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			b                                  sql.NullTime
			coin                               sql.NullString
			szi, entry, mark, lev, liq, u, val sql.NullFloat64
		)
		if err := rows.Scan(&b, &coin, &szi, &entry, &mark, &lev, &liq, &u, &val); err != nil {
			return page, wrap(ctx, "perpdex wallet positions", err)
		}
		page.SnapshotTS = pdNT(b)
		if !coin.Valid {
			continue
		}
		p := WalletPosition{Coin: coin.String, Side: pdSide(szi.Float64), SizeToken: pdAbs(szi.Float64),
			SizeUsd: Round(val.Float64, 2), EntryPrice: entry.Float64, MarkPrice: mark.Float64, Leverage: lev.Float64,
			LiquidationPrice: liq.Float64, UnrealizedPnl: Round(u.Float64, 2)}
		if lev.Float64 > 0 {
			m := val.Float64 / lev.Float64
			p.MarginUsd = Round(m, 2)
			if m > 0 {
				p.ReturnOnMargin = pdPtr(u.Float64/m*100, 4)
			}
		}
		page.Positions = append(page.Positions, p)
	}
	return page, wrap(ctx, "perpdex wallet positions", rows.Err())
}
