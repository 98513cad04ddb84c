package query

import (
	"context"
	"database/sql"

	sqlfiles "mdq/sql"
)

var docsExamplesSQL = sqlfiles.MustRead("docs/examples.sql")

// DocsExamples are ids picked from the lake for the /docs examples, so that each
// example is a real, non-empty answer of the lake being served (a lake ingested from
// real data shares no id with the demo's). Empty strings where a table is empty.
type DocsExamples struct {
	PredmktToken, PredmktCondition, PredmktWallet string
	PerpdexWallet, PerpdexCoin                    string
	PositionCoin, PositionSide                    string
	PositionLeverage, PositionEntry               string
	OnchainWallet, OnchainPeer, OnchainToken      string
	OnchainLabelled, OnchainENS                   string
}

// PickDocsExamples runs docs/examples.sql.
func (q *Queries) PickDocsExamples(ctx context.Context) (DocsExamples, error) {
	var v [14]sql.NullString
	ptrs := make([]any, len(v))
	for i := range v {
		ptrs[i] = &v[i]
	}
	if err := q.DB().QueryRowContext(ctx, docsExamplesSQL).Scan(ptrs...); err != nil {
		return DocsExamples{}, &StoreError{Op: "docs examples", Err: err}
	}
	return DocsExamples{
		PredmktToken: v[0].String, PredmktCondition: v[1].String, PredmktWallet: v[2].String,
		PerpdexWallet: v[3].String, PerpdexCoin: v[4].String,
		PositionCoin: v[5].String, PositionSide: v[6].String, PositionLeverage: v[7].String, PositionEntry: v[8].String,
		OnchainWallet: v[9].String, OnchainPeer: v[10].String, OnchainToken: v[11].String,
		OnchainLabelled: v[12].String, OnchainENS: v[13].String,
	}, nil
}
