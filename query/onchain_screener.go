package query

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"mdq/lake"
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

// screenerBoardRow is one token of an hourly screener board, with its sort keys (the
// exact figures rounded to the cent).
type screenerBoardRow struct {
	ScreenerRow
	volKey, netKey, smartKey float64
}

type screenerBoardKey struct{}

// OnchainScreener ranks tokens of one chain over the window's calendar dates. It reads
// the hourly board of (chain, window, smart_money_only), as of the start of the store
// clock's hour, and filters, ranks and cuts it here.
func (q *Queries) OnchainScreener(ctx context.Context, p OnchainScreenerParams) ([]ScreenerRow, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	board, err := q.onchainScreenerBoard(ctx, p.Chain, p.Window, p.SmartMoneyOnly, ocBoardHour(q.Now()))
	if err != nil {
		return nil, err
	}
	var keep []*screenerBoardRow
	for i := range board {
		r := &board[i]
		if r.volKey >= p.MinVolumeUSD && r.UniqueHolders >= p.MinHolders {
			keep = append(keep, r)
		}
	}
	key := func(r *screenerBoardRow) float64 {
		switch p.Sort {
		case "net_inflow":
			return r.netKey
		case "holders":
			return float64(r.UniqueHolders)
		case "smart_inflow":
			return r.smartKey
		}
		return r.volKey
	}
	slices.SortFunc(keep, func(a, b *screenerBoardRow) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return strings.Compare(a.TokenAddress, b.TokenAddress)
	})
	items := []ScreenerRow{}
	for _, r := range keep {
		if len(items) >= p.Limit {
			break
		}
		items = append(items, r.ScreenerRow)
	}
	return items, nil
}

var onchainSmartCohortSQL = sqlfiles.MustRead("onchain/smart_cohort.sql")

type smartCohortKey struct{}

// smartCohort makes sure onchain_cohort_mem holds chain's smart-money cohort for board
// hour at: built once per (chain, hour, legs signature), concurrent board builds
// waiting for the one build, older hours' rows of the chain dropped first. It returns
// only once the cohort of at is in place: the hourly cache it went through before
// answered with the previous hour's value while the new hour's built, so at an hour
// turn in serve a screener board could read a cohort not inserted yet.
func (q *Queries) smartCohort(ctx context.Context, chain string, at time.Time) error {
	v, _ := q.ext.LoadOrStore(smartCohortKey{}, &ocOnce{})
	once := v.(*ocOnce)
	return once.do(ctx, chain+"|"+at.UTC().Format(time.RFC3339)+"|"+q.onchainSig(), at,
		func(ctx context.Context) error {
			conn, err := q.db.Conn(ctx)
			if err != nil {
				return wrap(ctx, "onchain smart cohort", err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS onchain_cohort_mem (chain VARCHAR, until_us BIGINT, address VARCHAR)"); err != nil {
				return wrap(ctx, "onchain smart cohort", err)
			}
			// Rows of earlier hours are kept one hour (a board of the previous hour may
			// still be building against them), then dropped.
			if _, err := conn.ExecContext(ctx, "DELETE FROM onchain_cohort_mem WHERE chain = $1 AND (until_us = $2 OR until_us < $3)",
				chain, micros(at), micros(at.Add(-time.Hour))); err != nil {
				return wrap(ctx, "onchain smart cohort", err)
			}
			once.forget(chain+"|", at.Add(-time.Hour))
			err = q.withOcBands(chain, at, false, func(b ocBands) error {
				_, err := conn.ExecContext(ctx, onchainSmartCohortSQL, append([]any{chain, micros(at), OnchainSmartMoneyPnL}, b.args()...)...)
				return err
			})
			if err != nil {
				return wrap(ctx, "onchain smart cohort", err)
			}
			return nil
		})
}

// PrepareScreenerSQL materialises what sql/onchain/screener.sql reads besides the
// lake (chain's smart-money cohort at board hour at), so a benchmark can run the SQL
// directly as its baseline: a store that read its boards from the lake never built it.
func (q *Queries) PrepareScreenerSQL(ctx context.Context, chain string, at time.Time) error {
	return q.smartCohort(ctx, chain, at)
}

// onchainScreenerBoard returns the board of (chain, window, smart) as of hour at.
func (q *Queries) onchainScreenerBoard(ctx context.Context, chain, window string, smart bool, at time.Time) ([]screenerBoardRow, error) {
	v, _ := q.ext.LoadOrStore(screenerBoardKey{}, newOcHourly[[]screenerBoardRow]("onchain screener board"))
	h := v.(*hourly[[]screenerBoardRow])
	return h.value(ctx, q, fmt.Sprintf("%s|%s|%t", chain, window, smart), at,
		func(ctx context.Context, at time.Time) ([]screenerBoardRow, error) {
			return q.buildScreenerBoard(ctx, chain, window, smart, at)
		})
}

func (q *Queries) buildScreenerBoard(ctx context.Context, chain, window string, smart bool, at time.Time) ([]screenerBoardRow, error) {
	first := Date(at.AddDate(0, 0, -OnchainScreenerWindows[window]))
	// The smart-money cohort is only needed to compute the board, not to read a
	// published one.
	// The chain's eight boards are computed in one pass (screener_all.sql), which
	// publishes them; screener.sql computes a board that pass could not publish.
	cohort := func(ctx context.Context) error {
		if err := q.smartCohort(ctx, chain, at); err != nil {
			return err
		}
		return q.boardFamily(ctx, screenerFamily, chain, fmt.Sprintf("%s.%s.%t", chain, window, smart), at)
	}
	rows, err := q.sourcedBoardRows(ctx, lake.OnchainScreenerBoard, fmt.Sprintf("%s.%s.%t", chain, window, smart), at, screenerBoardSources,
		cohort, onchainScreenerSQL, chain, first, micros(at), smart, OnchainSmartMoneyPnL)
	if err != nil {
		return nil, wrap(ctx, "onchain screener", err)
	}
	defer rows.Close()
	board := []screenerBoardRow{}
	for rows.Next() {
		var r screenerBoardRow
		var name sql.NullString
		if err := rows.Scan(&r.TokenAddress, &r.Symbol, &name, &r.VolumeUSD, &r.InUSD, &r.OutUSD, &r.UniqueHolders, &r.TxCount,
			&r.volKey, &r.netKey, &r.smartKey); err != nil {
			return nil, wrap(ctx, "onchain screener", err)
		}
		r.Name = nullStr(name)
		r.VolumeUSD, r.InUSD, r.OutUSD = usd(r.VolumeUSD), usd(r.InUSD), usd(r.OutUSD)
		r.NetFlowUSD = usd(r.InUSD - r.OutUSD)
		board = append(board, r)
	}
	return board, wrap(ctx, "onchain screener", rows.Err())
}
