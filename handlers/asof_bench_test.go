package handlers_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// BenchmarkAsOf: the cost of a past as_of (issue 12) on the leaderboards and the
// per-wallet routes, beside the same request at the serving clock, on testlake.Bench
// (MDQ_BENCH_LAKE, the tiny lake by default). The store is warmed as a server warms
// it at start, so the serving-clock requests read the hourly boards from memory. The
// past as_of is one day and a quarter hour back, mid-hour: the perpetuals and on-chain
// boards of its hour are computed on the first request and published, and read back by
// the next ones (p99 over a few requests is the on-demand build, p50 the published
// read); the prediction-market board of a past hour is computed per request; per-wallet
// routes read raw and published tables up to the as_of, and the perpetuals cohort
// labels of its snapshot, computed on the first request and kept in memory.
// Target: within 2x of the serving clock where the state for the time is published.
//
//	MDQ_BENCH_LAKE=./data-medium go test ./handlers -run '^$' -bench AsOf -benchtime 5x
func BenchmarkAsOf(b *testing.B) {
	// A copy: warming writes the prediction-market board and other derived tables.
	dir := testlake.Bench(b)
	if dir == testlake.Tiny(b) {
		dir = testlake.Copy(b)
	}
	now := testlake.BenchNow(b)
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	ctx := query.AsBuild(context.Background())
	for _, w := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
		if err := w(ctx); err != nil {
			b.Fatal(err)
		}
	}
	<-q.PerpdexCohortsIdle()
	h := benchAPI(q).Handler()
	pick := func(sqlText string) string {
		var v string
		if err := q.DB().QueryRowContext(context.Background(), sqlText).Scan(&v); err != nil {
			b.Fatal(err)
		}
		return v
	}
	pw := pick(`SELECT wallet FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	mw := pick(`SELECT wallet FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	ow := pick(`SELECT from_address FROM onchain_transfers GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	past := now.Add(-24*time.Hour - 15*time.Minute)
	asOf := "as_of=" + url.QueryEscape(past.Format(time.RFC3339Nano))
	for _, r := range []struct{ name, target string }{
		{"perpdex_leaderboard", "/v1/perpdex/leaderboard?window=30d&sort=roi&limit=100"},
		{"perpdex_flow_adjusted", "/v1/perpdex/leaderboard/flow-adjusted?window=7d&limit=100"},
		{"predmkt_leaderboard", "/v1/predmkt/leaderboard?sort=realized_pnl&window=7d&limit=50"},
		{"perpdex_wallet", "/v1/perpdex/wallets/" + pw},
		{"perpdex_wallet_trades_summary", "/v1/perpdex/wallets/" + pw + "/trades/summary?window=7d"},
		{"predmkt_wallet", "/v1/predmkt/wallets/" + mw},
		{"onchain_wallet_counterparties", "/v1/onchain/wallets/" + ow + "/counterparties"},
	} {
		sep := "?"
		if u, _ := url.Parse(r.target); u.RawQuery != "" {
			sep = "&"
		}
		b.Run(r.name+"/serving", func(b *testing.B) { p99(b, func() { httpGet(b, h, r.target) }) })
		b.Run(r.name+"/as_of_1d", func(b *testing.B) { p99(b, func() { httpGet(b, h, r.target+sep+asOf) }) })
	}
}
