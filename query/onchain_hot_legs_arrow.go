//go:build duckdb_arrow

package query

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// scanHotLegs runs wallet_hot_legs.sql with args through DuckDB's Arrow interface and
// hands its rows to b a record batch at a time: database/sql's row-by-row scan was most
// of the cache's load (1.5 us a leg; the query itself about 0.25).
func (q *Queries) scanHotLegs(ctx context.Context, args []any, b *hotBuilder) error {
	conn, err := q.walletDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rdr, err := ar.QueryContext(ctx, onchainHotLegsSQL, args...)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			cp, ok1 := rec.Column(0).(*array.String)
			tok, ok2 := rec.Column(1).(*array.String)
			t, ok3 := rec.Column(2).(*array.Int64)
			u, ok4 := rec.Column(3).(*array.Int64)
			send, ok5 := rec.Column(4).(*array.Boolean)
			self, ok6 := rec.Column(5).(*array.Boolean)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
				return fmt.Errorf("wallet_hot_legs.sql: unexpected Arrow columns %v", rec.Schema())
			}
			for i := range int(rec.NumRows()) {
				if !b.add(cp.Value(i), tok.Value(i), t.Value(i), u.Value(i), u.IsValid(i), send.Value(i), self.Value(i)) {
					return nil
				}
			}
		}
		return rdr.Err()
	})
}
