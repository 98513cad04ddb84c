//go:build !duckdb_arrow

package query

import (
	"context"
	"database/sql"
)

// scanHotLegs runs wallet_hot_legs.sql with args and hands its rows to b, row by row
// (a build without the duckdb_arrow tag; onchain_hot_legs_arrow.go otherwise).
func (q *Queries) scanHotLegs(ctx context.Context, args []any, b *hotBuilder) error {
	rows, err := q.walletDB.QueryContext(ctx, onchainHotLegsSQL, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cp, tok string
	var t int64
	var u sql.NullInt64
	var send, self bool
	for rows.Next() {
		if err := rows.Scan(&cp, &tok, &t, &u, &send, &self); err != nil {
			return err
		}
		if !b.add(cp, tok, t, u.Int64, u.Valid, send, self) {
			return nil
		}
	}
	return rows.Err()
}
