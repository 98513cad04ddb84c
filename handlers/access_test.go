package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"mdq/query"
	"mdq/ratelimit"
)

// BenchmarkAuthBudget measures what wrap's credential check and budget spend add to a
// route whose result is cached in memory: the same route bare (no Auth, no Budget)
// and behind a SQLite-backed ratelimit.Store and Limiter, in one run.
func BenchmarkAuthBudget(b *testing.B) {
	cached := map[string]any{"status": "ok", "rows": []int{1, 2, 3}}
	rt := &Route{Method: "GET", Path: "/v1/bench", Area: "predmkt", Response: cached,
		Run: func(context.Context, *query.Queries, Values) (any, error) { return cached, nil }}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	store, err := ratelimit.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	_, key, err := store.CreateKey(context.Background(), "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	lim := ratelimit.NewLimiter(store.Counters(), store, 1<<30)

	for _, c := range []struct {
		name string
		api  *API
	}{
		{"bare", &API{Log: log}},
		{"auth+budget", &API{Log: log, Auth: store, Budget: lim}},
	} {
		h := c.api.wrap(rt)
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/v1/bench", nil)
			req.Header.Set("X-API-Key", key)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/v1/bench", nil)
				req.Header.Set("X-API-Key", key)
				for pb.Next() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
