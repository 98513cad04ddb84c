package handlers_test

import (
	"context"
	"os"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// BenchmarkPredmktCategories: /categories and /families through HTTP beside their SQL
// run directly, on testlake.Bench, reporting p99 in ms. The hourly board (the cohort)
// is built once before timing, as the server does.
func BenchmarkPredmktCategories(b *testing.B) {
	now := testlake.BenchNow(b)
	dir := testlake.Bench(b)
	if os.Getenv("MDQ_BENCH_LAKE") == "" {
		dir = testlake.Copy(b) // the board is written into the lake; the shared tiny lake stays untouched
	}
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	if _, err := q.PredmktBoard(context.Background()); err != nil {
		b.Fatal(err)
	}
	h := benchAPI(q).Handler()
	ms := now.UnixMilli()
	b.Run("http_categories", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/predmkt/categories") }) })
	b.Run("sql_categories", func(b *testing.B) {
		p99(b, func() { sqlRun(b, q, sqlfiles.MustRead("predmkt/categories.sql"), ms) })
	})
	b.Run("http_families", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/predmkt/families") }) })
	b.Run("sql_families", func(b *testing.B) {
		p99(b, func() { sqlRun(b, q, sqlfiles.MustRead("predmkt/families.sql"), "", "", ms) })
	})
}
