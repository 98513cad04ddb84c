package query

import (
	"context"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var onchainLabelsBatchSQL = sqlfiles.MustRead("onchain/labels_batch.sql")

// LabelRow is one row of POST /v1/onchain/labels/batch.
type LabelRow struct {
	Entity         *string `json:"entity" doc:"label entity; null when found is false"`
	WalletType     *string `json:"wallet_type" doc:"dex, defi, cex, market_maker, bridge, fund or individual; null when found is false"`
	Confidence     *string `json:"confidence" doc:"high, medium or low; null when found is false"`
	RiskFlag       *string `json:"risk_flag" doc:"empty string on a clean row; sanctioned, exploit or mixer; null when found is false"`
	Net30dUSD      float64 `json:"net_30d_usd" doc:"Ethereum USD received minus sent over the 30 days ending now; 0 when found is false"`
	Volume30dUSD   float64 `json:"volume_30d_usd" doc:"Ethereum USD received plus sent over 30 days; 0 when found is false"`
	Tx30d          int64   `json:"tx_30d" doc:"Ethereum transfers over 30 days; 0 when found is false"`
	Tokens30dCount int64   `json:"tokens_30d_count" doc:"distinct Ethereum tokens moved over 30 days; 0 when found is false"`
	Wallet         string  `json:"wallet" doc:"lower-cased echo of the input address"`
	Found          bool    `json:"found" doc:"false: no label row (labels null, numbers zero)"`
}

// OnchainLabelsBatch labels addrs (valid, any case) in input order, one row per input.
func (q *Queries) OnchainLabelsBatch(ctx context.Context, addrs []string) ([]LabelRow, error) {
	out := make([]LabelRow, 0, len(addrs))
	if len(addrs) == 0 {
		return out, nil
	}
	lower := make([]string, len(addrs))
	for i, a := range addrs {
		lower[i] = strings.ToLower(a)
	}
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	v, _ := q.ext.LoadOrStore(labelsBoardKey{}, newOcHourly[map[string]LabelRow]("onchain labels board"))
	found, err := v.(*hourly[map[string]LabelRow]).value(ctx, q, "30d", ocBoardHour(q.Now()), q.buildLabelsBoard)
	if err != nil {
		return nil, err
	}
	for _, a := range lower {
		r, ok := found[a]
		if !ok {
			r = LabelRow{}
		}
		r.Wallet = a
		out = append(out, r)
	}
	return out, nil
}

type labelsBoardKey struct{}

// buildLabelsBoard reads every labelled address with its Ethereum activity over the 30
// days ending at hour at.
func (q *Queries) buildLabelsBoard(ctx context.Context, at time.Time) (map[string]LabelRow, error) {
	since, until := windowBounds(at, "30d")
	rows, err := q.sourcedBoardRows(ctx, lake.OnchainLabelsBoard, "ethereum", at, labelsBoardSources, nil, onchainLabelsBatchSQL, since, until)
	if err != nil {
		return nil, wrap(ctx, "onchain labels batch", err)
	}
	defer rows.Close()
	found := map[string]LabelRow{}
	for rows.Next() {
		var a string
		var r LabelRow
		var e, wt, c, rf string
		var in, outUSD float64
		if err := rows.Scan(&a, &e, &wt, &c, &rf, &in, &outUSD, &r.Tx30d, &r.Tokens30dCount); err != nil {
			return nil, wrap(ctx, "onchain labels batch", err)
		}
		r.Entity, r.WalletType, r.Confidence, r.RiskFlag = &e, &wt, &c, &rf
		r.Net30dUSD, r.Volume30dUSD = usd(in-outUSD), usd(in+outUSD)
		r.Found = true
		found[a] = r
	}
	return found, wrap(ctx, "onchain labels batch", rows.Err())
}
