package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var (
	perpdexMarketsSQL      = sqlfiles.MustRead("perpdex/markets.sql")
	perpdexWalletFillsSQL  = sqlfiles.MustRead("perpdex/wallet_fills.sql")
	perpdexWalletLedgerSQL = sqlfiles.MustRead("perpdex/wallet_ledger.sql")
)

// MarketRow is one coin of /v1/perpdex/markets.
type MarketRow struct {
	Coin              string   `json:"coin"`
	MarkPrice         float64  `json:"mark_price" doc:"latest hourly mark"`
	MarkTS            string   `json:"mark_ts"`
	OpenInterestUsd   float64  `json:"open_interest_usd" doc:"long notional in the newest position batch (equals short notional)"`
	OpenInterestLong  float64  `json:"open_interest_long_usd"`
	OpenInterestShort float64  `json:"open_interest_short_usd"`
	OpenPositions     int64    `json:"open_positions" doc:"positions in the newest batch"`
	FundingRate       *float64 `json:"funding_rate" doc:"latest hourly funding rate (fraction per hour); null without funding in the last two days"`
	Volume24hUsd      float64  `json:"volume_24h_usd" doc:"notional of trades in the last 24 hours, each trade once"`
	Trades24h         int64    `json:"trades_24h"`
}

// MarketsPage is the envelope of /v1/perpdex/markets.
type MarketsPage struct {
	Markets []MarketRow `json:"markets"`
}

// PerpdexMarkets lists every coin with its mark, open interest, funding and volume.
func (q *Queries) PerpdexMarkets(ctx context.Context) (MarketsPage, error) {
	out := MarketsPage{Markets: []MarketRow{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, perpdexMarketsSQL, q.Now())
	if err != nil {
		return out, wrap(ctx, "perpdex markets", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r MarketRow
		var ts time.Time
		var rate sql.NullFloat64
		if err := rows.Scan(&r.Coin, &r.MarkPrice, &ts, &r.OpenInterestLong, &r.OpenInterestShort, &r.OpenPositions, &rate,
			&r.Volume24hUsd, &r.Trades24h); err != nil {
			return out, wrap(ctx, "perpdex markets", err)
		}
		r.MarkTS = ISOSeconds(ts)
		r.OpenInterestLong, r.OpenInterestShort = Round(r.OpenInterestLong, 2), Round(r.OpenInterestShort, 2)
		r.OpenInterestUsd = r.OpenInterestLong
		r.FundingRate = nullF(rate)
		r.Volume24hUsd = Round(r.Volume24hUsd, 2)
		out.Markets = append(out.Markets, r)
	}
	return out, wrap(ctx, "perpdex markets", rows.Err())
}

// WalletFill is one fill of /v1/perpdex/wallets/{address}/fills.
type WalletFill struct {
	Time          string   `json:"time" doc:"ISO-8601 UTC with microseconds"`
	Coin          string   `json:"coin"`
	Side          string   `json:"side" doc:"B (buy) or A (sell)"`
	Dir           string   `json:"dir" doc:"Open Long, Close Long, Open Short, Close Short, Long > Short, Short > Long"`
	Price         float64  `json:"price"`
	SizeToken     float64  `json:"size_token"`
	SizeUsd       float64  `json:"size_usd"`
	StartPosition float64  `json:"start_position" doc:"signed position before the fill"`
	ClosedPnl     float64  `json:"closed_pnl" doc:"before fees"`
	Fee           float64  `json:"fee"`
	FeeToken      string   `json:"fee_token"`
	Builder       *string  `json:"builder"`
	BuilderFee    *float64 `json:"builder_fee"`
	Crossed       bool     `json:"crossed" doc:"took liquidity"`
	Liquidation   bool     `json:"liquidation"`
	Hash          string   `json:"hash"`
	Tid           int64    `json:"tid"`
}

// FillKey is the keyset position of a fill.
type FillKey struct {
	Time time.Time `json:"t"`
	Tid  int64     `json:"i"`
}

// WalletFillsPage is the envelope of /v1/perpdex/wallets/{address}/fills.
type WalletFillsPage struct {
	Wallet     string       `json:"wallet"`
	Fills      []WalletFill `json:"fills"`
	NextCursor *string      `json:"nextCursor"`
	Next       *FillKey     `json:"-"`
}

// PerpdexWalletFills pages one wallet's fills newest first.
func (q *Queries) PerpdexWalletFills(ctx context.Context, wallet, coin string, start, end time.Time, limit int, after *FillKey) (WalletFillsPage, error) {
	page := WalletFillsPage{Wallet: wallet, Fills: []WalletFill{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aI any
	if after != nil {
		aT, aI = after.Time, after.Tid
	}
	var err error
	page.Fills, page.Next, err = keysetPage(ctx, q.db, "perpdex wallet fills", perpdexWalletFillsSQL, limit,
		[]any{wallet, pdNullStr(coin), start, end, aT, aI}, func(rows *sql.Rows) (WalletFill, FillKey, error) {
			var f WalletFill
			var ts time.Time
			var b sql.NullString
			var bf sql.NullFloat64
			err := rows.Scan(&ts, &f.Coin, &f.Side, &f.Dir, &f.Price, &f.SizeToken, &f.SizeUsd, &f.StartPosition, &f.ClosedPnl,
				&f.Fee, &f.FeeToken, &b, &bf, &f.Crossed, &f.Liquidation, &f.Hash, &f.Tid)
			f.Time = ISOMicros(ts)
			f.SizeUsd = Round(f.SizeUsd, 2)
			f.Builder, f.BuilderFee = nullable(b), nullF(bf)
			return f, FillKey{ts, f.Tid}, err
		})
	return page, err
}

// LedgerRow is one non-trading account event.
type LedgerRow struct {
	Time         string  `json:"time"`
	Kind         string  `json:"kind" doc:"deposit, withdraw, send_out or send_in"`
	Usd          float64 `json:"usd" doc:"amount, positive; direction is in kind"`
	Counterparty *string `json:"counterparty" doc:"other wallet of a send; null otherwise"`
	Hash         string  `json:"hash"`
}

// LedgerKey is the keyset position of a ledger row.
type LedgerKey struct {
	Time time.Time `json:"t"`
	Hash string    `json:"h"`
}

// WalletLedgerPage is the envelope of /v1/perpdex/wallets/{address}/ledger.
type WalletLedgerPage struct {
	Wallet     string      `json:"wallet"`
	Events     []LedgerRow `json:"events"`
	NextCursor *string     `json:"nextCursor"`
	Next       *LedgerKey  `json:"-"`
}

// PerpdexWalletLedger pages one wallet's deposits, withdrawals and sends newest first.
func (q *Queries) PerpdexWalletLedger(ctx context.Context, wallet string, start, end time.Time, limit int, after *LedgerKey) (WalletLedgerPage, error) {
	page := WalletLedgerPage{Wallet: wallet, Events: []LedgerRow{}}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var aT, aH any
	if after != nil {
		aT, aH = after.Time, after.Hash
	}
	var err error
	page.Events, page.Next, err = keysetPage(ctx, q.db, "perpdex wallet ledger", perpdexWalletLedgerSQL, limit,
		[]any{wallet, start, end, aT, aH}, func(rows *sql.Rows) (LedgerRow, LedgerKey, error) {
			var r LedgerRow
			var ts time.Time
			var cp sql.NullString
			err := rows.Scan(&ts, &r.Kind, &r.Usd, &cp, &r.Hash)
			r.Time, r.Counterparty, r.Usd = ISOMicros(ts), nullable(cp), Round(r.Usd, 2)
			return r, LedgerKey{ts, r.Hash}, err
		})
	return page, err
}
