package handlers_test

import (
	"context"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// BenchmarkPerpdexVaults: the vault list and one vault's detail through HTTP beside
// the list's SQL run directly, on testlake.Bench (the medium lake under make bench),
// reporting p99 in ms.
func BenchmarkPerpdexVaults(b *testing.B) {
	now := testlake.BenchNow(b)
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	h := benchAPI(q).Handler()
	var vault string
	if err := q.DB().QueryRowContext(context.Background(), "SELECT min(vault) FROM perpdex_vaults").Scan(&vault); err != nil {
		b.Fatal(err)
	}
	day := 24 * time.Hour
	b.Run("http_list", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/perpdex/vaults?window=30d") }) })
	b.Run("http_detail", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/perpdex/vaults/"+vault+"?window=30d") }) })
	b.Run("sql_list", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, sqlfiles.MustRead("perpdex/vaults.sql"), nil, now, now.Add(-day), now.Add(-7*day), now.Add(-30*day), now.Add(-30*day))
		})
	})
}
