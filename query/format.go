package query

import (
	"context"
	"database/sql"
	"math"
	"time"
)

// Round rounds x to places decimals, half away from zero (cents: 2, ratios: 6).
func Round(x float64, places int) float64 {
	p := math.Pow10(places)
	r := math.Round(x*p) / p
	if r == 0 {
		return 0 // no negative zero in JSON
	}
	return r
}

// RoundPtr rounds a nullable value.
func RoundPtr(x *float64, places int) *float64 {
	if x == nil {
		return nil
	}
	r := Round(*x, places)
	return &r
}

// ISOMillis formats t as ISO-8601 UTC with milliseconds: 2026-01-01T00:00:00.000Z.
func ISOMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ISOMicros formats t as ISO-8601 UTC with microseconds.
func ISOMicros(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// ISOSeconds formats t as ISO-8601 UTC with an explicit offset: 2026-01-01T00:00:00+00:00.
func ISOSeconds(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }

// Date formats t as YYYY-MM-DD (UTC).
func Date(t time.Time) string { return t.UTC().Format("2006-01-02") }

// trimPage cuts a keyset page read with limit+1 rows back to limit and returns the
// last row served when there is a next page (nil on the last page).
func trimPage[T any](items []T, limit int) ([]T, *T) {
	if len(items) <= limit {
		return items, nil
	}
	items = items[:limit]
	return items, &items[limit-1]
}

// keysetPage runs a keyset page query whose last bound argument is the row count
// (limit+1, appended here) and scans at most limit rows with scan, which returns a
// row and its keyset position. The extra row only says that a next page exists; the
// returned key is then the last served row's (nil on the last page). For pages whose
// key is not a field of the served row (a raw timestamp behind a formatted one).
func keysetPage[R, K any](ctx context.Context, db *sql.DB, op, query string, limit int, args []any,
	scan func(*sql.Rows) (R, K, error)) ([]R, *K, error) {
	items := []R{}
	rows, err := db.QueryContext(ctx, query, append(args, limit+1)...)
	if err != nil {
		return items, nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var next *K
	var last K
	for rows.Next() {
		r, k, err := scan(rows)
		if err != nil {
			return items, nil, wrap(ctx, op, err)
		}
		if len(items) == limit {
			next = &last
			break
		}
		items, last = append(items, r), k
	}
	return items, next, wrap(ctx, op, rows.Err())
}
