//go:build duckdb_arrow

package query

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// scanHotLegs runs wallet_hot_legs.sql with args through DuckDB's Arrow interface and
// hands its rows to b a record batch at a time: database/sql's row-by-row scan was most
// of the cache's load (1.5 us a leg; the query itself about 0.25).
func (q *Queries) scanHotLegs(ctx context.Context, args []any, b *hotBuilder) error {
	return arrowBatches(ctx, q.walletDB, onchainHotLegsSQL, args, func(rec arrow.RecordBatch) (bool, error) {
		cp, ok1 := rec.Column(0).(*array.String)
		tok, ok2 := rec.Column(1).(*array.String)
		t, ok3 := rec.Column(2).(*array.Int64)
		u, ok4 := rec.Column(3).(*array.Int64)
		send, ok5 := rec.Column(4).(*array.Boolean)
		self, ok6 := rec.Column(5).(*array.Boolean)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
			return false, fmt.Errorf("wallet_hot_legs.sql: unexpected Arrow columns %v", rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			if !b.add(cp.Value(i), tok.Value(i), t.Value(i), u.Value(i), u.IsValid(i), send.Value(i), self.Value(i)) {
				return false, nil
			}
		}
		return true, nil
	})
}
