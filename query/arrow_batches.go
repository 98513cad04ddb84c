//go:build duckdb_arrow

package query

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// arrowBatches runs stmt with args on a connection of db through DuckDB's Arrow
// interface and hands each record batch to f, until f says no more or fails. A batch's
// memory goes with it when f returns: what f keeps it copies.
func arrowBatches(ctx context.Context, db *sql.DB, stmt string, args []any, f func(rec arrow.RecordBatch) (more bool, err error)) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rdr, err := ar.QueryContext(ctx, stmt, args...)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
			more, err := f(rdr.RecordBatch())
			if err != nil || !more {
				return err
			}
		}
		return rdr.Err()
	})
}
