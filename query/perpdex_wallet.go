package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var perpdexWalletSQL = sqlfiles.MustRead("perpdex/wallet.sql")

// WalletCohorts are a wallet's labels of today.
type WalletCohorts struct {
	SizeCohort     *string `json:"size_cohort" doc:"account-value band slug; null for an unlabelled wallet"`
	PnlCohort      *string `json:"pnl_cohort" doc:"PnL band slug (e.g. 3x_smart); null for an unlabelled wallet"`
	PnlCohortTag   *string `json:"pnl_cohort_tag" doc:"display tag of the PnL band (3x smart)"`
	StyleCohortTag *string `json:"style_cohort_tag" doc:"scalper, swing or position"`
	ComputedAt     *string `json:"computed_at" doc:"when today's labels were computed"`
}

// WalletLifetime are a wallet's figures over its whole history up to now.
type WalletLifetime struct {
	FirstFillTS    *string `json:"first_fill_ts" doc:"null without a fill"`
	LastFillTS     *string `json:"last_fill_ts"`
	Fills          int64   `json:"fills"`
	Coins          int64   `json:"coins" doc:"distinct assets traded"`
	VolumeUsd      float64 `json:"volume_usd" doc:"sum of price times size of the wallet's fills"`
	Fees           float64 `json:"fees"`
	ClosedPnl      float64 `json:"closed_pnl" doc:"sum of fills' closed PnL, before fees"`
	RealizedPnl    float64 `json:"realized_pnl" doc:"closed_pnl minus fees (the leaderboard's cum_realized_pnl)"`
	FundingUsd     float64 `json:"funding_usd" doc:"funding received (positive) or paid (negative)"`
	Liquidations   int64   `json:"liquidations" doc:"fills on which the wallet was liquidated"`
	ClosedTrades   int64   `json:"closed_trades" doc:"trades (flat to flat) completed by now"`
	WinningTrades  int64   `json:"winning_trades" doc:"closed trades with realized PnL above 0"`
	DepositUsd     float64 `json:"deposit_usd"`
	WithdrawUsd    float64 `json:"withdraw_usd"`
	SendInUsd      float64 `json:"send_in_usd"`
	SendOutUsd     float64 `json:"send_out_usd"`
	NetFlowUsd     float64 `json:"net_flow_usd" doc:"deposits - withdrawals + sends received - sends made"`
	LedgerEvents   int64   `json:"ledger_events"`
	FundingPayment int64   `json:"funding_payments"`
}

// WalletOverview is the body of /v1/perpdex/wallets/{address}.
type WalletOverview struct {
	Wallet            string         `json:"wallet"`
	AccountValue      *float64       `json:"account_value" doc:"perp equity at the latest hourly account snapshot at or before now; null without one"`
	AccountValueTS    *string        `json:"account_value_ts"`
	TotalNotionalUsd  *float64       `json:"total_notional_usd" doc:"total_ntl_pos of that snapshot"`
	MarginUsed        *float64       `json:"margin_used"`
	PositionsSnapshot *string        `json:"positions_snapshot_ts" doc:"the newest venue-wide position batch at or before now"`
	OpenPositions     int64          `json:"open_positions" doc:"the wallet's positions in that batch"`
	PositionsNotional float64        `json:"positions_notional_usd" doc:"sum of their position_value"`
	UnrealizedPnl     float64        `json:"unrealized_pnl" doc:"sum of their unrealized PnL"`
	Cohorts           WalletCohorts  `json:"cohorts"`
	Lifetime          WalletLifetime `json:"lifetime"`
}

// PerpdexWallet returns one wallet's overview; ErrNotFound when the lake holds no fill,
// snapshot, funding or ledger row of it.
func (q *Queries) PerpdexWallet(ctx context.Context, wallet string) (WalletOverview, error) {
	out := WalletOverview{Wallet: wallet}
	if err := q.perpdexEnsure(ctx); err != nil {
		return out, err
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		return out, err
	}
	lab, err := q.perpdexLabelsAt(ctx, q.Now())
	if err != nil {
		return out, err
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var (
		acctTS, batch, first, last, computed sql.NullTime
		av, ntl, mu                          sql.NullFloat64
		sc, pc, pt, st                       sql.NullString
		l                                    = &out.Lifetime
	)
	err = q.db.QueryRowContext(ctx, perpdexWalletSQL, wallet, q.Now(), lab.current).Scan(&acctTS, &av, &ntl, &mu, &batch,
		&out.OpenPositions, &out.UnrealizedPnl, &out.PositionsNotional,
		&l.Fills, &first, &last, &l.VolumeUsd, &l.Fees, &l.ClosedPnl, &l.Liquidations, &l.Coins,
		&l.FundingPayment, &l.FundingUsd, &l.LedgerEvents, &l.DepositUsd, &l.WithdrawUsd, &l.SendInUsd, &l.SendOutUsd,
		&l.ClosedTrades, &l.WinningTrades, &sc, &pc, &pt, &st, &computed)
	if err != nil {
		return out, wrap(ctx, "perpdex wallet", err)
	}
	if !acctTS.Valid && l.Fills == 0 && out.OpenPositions == 0 && l.LedgerEvents == 0 && l.FundingPayment == 0 {
		return out, ErrNotFound
	}
	out.AccountValue, out.AccountValueTS = pdNF(av, 2), pdNT(acctTS)
	out.TotalNotionalUsd, out.MarginUsed = pdNF(ntl, 2), pdNF(mu, 2)
	out.PositionsSnapshot = pdNT(batch)
	out.UnrealizedPnl, out.PositionsNotional = Round(out.UnrealizedPnl, 2), Round(out.PositionsNotional, 2)
	out.Cohorts = WalletCohorts{SizeCohort: nullable(sc), PnlCohort: nullable(pc), PnlCohortTag: nullable(pt),
		StyleCohortTag: nullable(st), ComputedAt: pdNT(computed)}
	if first.Valid {
		f, t := ISOMicros(first.Time), ISOMicros(last.Time)
		l.FirstFillTS, l.LastFillTS = &f, &t
	}
	l.RealizedPnl = Round(l.ClosedPnl-l.Fees, 2)
	l.NetFlowUsd = Round(l.DepositUsd-l.WithdrawUsd+l.SendInUsd-l.SendOutUsd, 2)
	for _, p := range []*float64{&l.VolumeUsd, &l.Fees, &l.ClosedPnl, &l.FundingUsd, &l.DepositUsd, &l.WithdrawUsd, &l.SendInUsd, &l.SendOutUsd} {
		*p = Round(*p, 2)
	}
	return out, nil
}
