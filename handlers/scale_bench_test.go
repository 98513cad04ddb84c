package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// BenchmarkScaleConcurrent16 is the concurrency target of the scale work: 16
// connections over real loopback HTTP against the cheap routes (boards served from the
// hour's cache, health), beside a bare net/http handler measured the same way in the
// same run. It reports requests per second of both, their ratio (target: at least
// 0.25) and the errors (target: none). Each round is bounded in time and stops by
// itself; MDQ_BENCH_LAKE picks the lake (tiny by default).
func BenchmarkScaleConcurrent16(b *testing.B) {
	now := testlake.BenchNow(b)
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return now }, ServeStale: true})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	for _, warm := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
		if err := warm(ctx); err != nil {
			b.Fatal(err)
		}
	}
	routes := []string{
		"/v1/predmkt/leaderboard?limit=20",
		"/v1/perpdex/leaderboard?limit=25",
		"/v1/perpdex/builders",
		"/v1/onchain/tokens/screener?chain=ethereum",
		"/v1/onchain/wallets/discover",
		"/healthz",
	}
	api := httptest.NewServer(benchAPI(q).Handler())
	defer api.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`) //nolint:errcheck
	}))
	defer bare.Close()
	for _, u := range routes { // each board built once before timing, as serve's warm-up does
		resp, err := http.Get(api.URL + u)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %v %v", u, err, resp)
		}
		resp.Body.Close()
	}
	const conns = 16
	const round = 3 * time.Second
	load := func(base string, paths []string) (rps float64, errs int64) {
		tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		var n, bad atomic.Int64
		deadline := time.Now().Add(round)
		var wg sync.WaitGroup
		for w := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; time.Now().Before(deadline); i++ {
					resp, err := c.Get(base + paths[i%len(paths)])
					if err != nil {
						bad.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body) //nolint:errcheck
					resp.Body.Close()
					if resp.StatusCode != 200 {
						bad.Add(1)
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / round.Seconds(), bad.Load()
	}
	var routeRPS, bareRPS float64
	var errs int64
	for b.Loop() {
		r, e := load(api.URL, routes)
		br, _ := load(bare.URL, []string{"/"})
		routeRPS, bareRPS, errs = r, br, errs+e
	}
	b.ReportMetric(routeRPS, "routes_rps")
	b.ReportMetric(bareRPS, "bare_rps")
	b.ReportMetric(routeRPS/bareRPS, "ratio")
	b.ReportMetric(float64(errs), "errors")
	if errs > 0 {
		b.Errorf("%d errors under %d connections", errs, conns)
	}
}
