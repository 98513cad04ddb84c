package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// Benchmarks of the prediction-market routes on testlake.Bench (the medium demo lake
// under make bench): each route end to end through HTTP beside its SQL run directly on
// q.DB(), reporting p99 in ms so the HTTP and encoding overhead shows as a ratio.

func pmBenchStore(b *testing.B) (*query.Queries, http.Handler) {
	b.Helper()
	// The board is written into the lake: benchmark a copy when on the shared tiny lake.
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
	if _, err := q.PredmktBoard(context.Background()); err != nil { // the hourly build is not per request
		b.Fatal(err)
	}
	return q, (&handlers.API{Q: q}).Handler()
}

// p99 runs f b.N times and reports the 99th-percentile latency in ms.
func p99(b *testing.B, f func()) {
	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		t := time.Now()
		f()
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
	}
}

func httpGet(b *testing.B, h http.Handler, target string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	if rec.Code != 200 {
		b.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
	}
}

func sqlRun(b *testing.B, q *query.Queries, text string, args ...any) {
	rows, err := q.DB().QueryContext(context.Background(), text, args...)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
}

func pmBusyToken(b *testing.B, q *query.Queries) (string, int64) {
	var tok string
	var last int64
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT token_id, max(local_ts) FROM predmkt_book_events GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&tok, &last); err != nil {
		b.Fatal(err)
	}
	return tok, last
}

// BenchmarkPredmktLeaderboard: any sort and filter, from the hourly board in memory.
// Its SQL counterpart is a page over the board table the hour wrote to the lake.
func BenchmarkPredmktLeaderboard(b *testing.B) {
	q, h := pmBenchStore(b)
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() {
			s := query.LeaderboardSorts[i%len(query.LeaderboardSorts)]
			cat := []string{"all", "Crypto", "Sports", "Politics"}[i%4]
			i++
			httpGet(b, h, fmt.Sprintf("/v1/predmkt/leaderboard?sort=%s&category=%s&window=7d&min_resolved=5&offset=%d&limit=50", s, cat, (i%20)*50))
		})
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, "SELECT * FROM predmkt_board WHERE category = $1 AND resolved_markets >= 5 ORDER BY realized_pnl DESC, wallet LIMIT 50 OFFSET $2", "all", (i%20)*50)
			i++
		})
	})
}

// BenchmarkPredmktEvents50k: a 50,000-event page end to end.
func BenchmarkPredmktEvents50k(b *testing.B) {
	q, h := pmBenchStore(b)
	var last int64
	if err := q.DB().QueryRowContext(context.Background(), "SELECT max(local_ts) FROM predmkt_book_events").Scan(&last); err != nil {
		b.Fatal(err)
	}
	from, to := last-86_400_000+1, last+1
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, fmt.Sprintf("/v1/predmkt/events?from_ms=%d&to_ms=%d&limit=50000", from, to)) })
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, "SELECT * FROM predmkt_book_events WHERE local_ts >= $1 AND local_ts < $2 ORDER BY local_ts, seq, token_id LIMIT 50001", from, to)
		})
	})
}

// BenchmarkPredmktOHLCV: 1h bars of the busiest token.
func BenchmarkPredmktOHLCV(b *testing.B) {
	q, h := pmBenchStore(b)
	tok, _ := pmBusyToken(b, q)
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, "/v1/predmkt/ohlcv?interval=1h&limit=1000&token_id="+tok) })
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, "SELECT (ts - ts % 3600000) AS b, min(price), max(price), sum(size), count(*) FROM predmkt_trades WHERE token_id = $1 AND role = 'taker' GROUP BY b ORDER BY b LIMIT 1000", tok)
		})
	})
}

// BenchmarkPredmktOrderbook: the latest snapshot of the busiest token.
func BenchmarkPredmktOrderbook(b *testing.B) {
	q, h := pmBenchStore(b)
	tok, last := pmBusyToken(b, q)
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, fmt.Sprintf("/v1/predmkt/orderbook?token_id=%s&ts=%d", tok, last)) })
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, "SELECT ts, bids, asks FROM predmkt_book_events WHERE token_id = $1 AND event_type = 'book' AND ts <= $2 ORDER BY ts DESC, local_ts DESC, seq DESC LIMIT 1", tok, last)
		})
	})
}

// BenchmarkPredmktSmartMoney: flows and mispricings over 24 hours.
func BenchmarkPredmktSmartMoney(b *testing.B) {
	q, h := pmBenchStore(b)
	now := testlake.BenchNow(b).UnixMilli()
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() {
			mode := []string{"flows", "mispricings"}[i%2]
			i++
			httpGet(b, h, "/v1/predmkt/smart_money?hours=24&limit=20&mode="+mode)
		})
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, `WITH cohort AS (SELECT wallet FROM predmkt_board WHERE category = 'all' AND realized_pnl >= 1000 AND resolved_markets >= 5 AND volume_all >= 5000)
SELECT t.condition_id, sum(t.usd) FROM predmkt_trades t JOIN cohort c ON c.wallet = t.wallet WHERE t.ts BETWEEN $1 AND $2 GROUP BY 1`, now-86_400_000, now)
		})
	})
}
