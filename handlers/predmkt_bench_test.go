package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// Benchmarks of the prediction-market routes on testlake.Bench (the medium demo lake
// under make bench): each route end to end through HTTP beside the route's own SQL
// (the embedded sql/predmkt files) run directly on q.DB() over the raw files, reporting
// p99 in ms, so both the HTTP and encoding overhead and the gain of the tape index
// (docs/PREDMKT.md, Speed) show as ratios. The hourly board and the tape index are
// built before timing, and one untimed request warms each route.

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
	// The hourly board and the tape index are built once by the service, not per request.
	if err := q.WarmPredmkt(context.Background()); err != nil {
		b.Fatal(err)
	}
	return q, benchAPI(q).Handler()
}

// benchAPI is the API as a server runs it, its access log formatted as in production
// but discarded: a terminal in the loop would time the terminal.
func benchAPI(q *query.Queries) *handlers.API {
	return &handlers.API{Q: q, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
}

// p99 runs f b.N times and reports the median and 99th-percentile latencies in ms and
// the process CPU per run.
func p99(b *testing.B, f func()) {
	b.ReportAllocs()
	var lat []time.Duration
	cpu0 := processCPU()
	for b.Loop() {
		t := time.Now()
		f()
		lat = append(lat, time.Since(t))
	}
	if len(lat) > 0 {
		// CPU of the whole process (DuckDB's threads and the collector included) per
		// request: unlike latency, barely moved by other load on the machine.
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu_ms/op")
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
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

// discardWriter is a ResponseWriter that counts the body instead of keeping it: a
// server writes a large page to the socket as it goes, while httptest.ResponseRecorder
// grows one buffer to the body's size (for a 16 MB page, 32 MB of allocation and
// copying the route never does in service).
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}
func (d *discardWriter) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(p)
	return len(p), nil
}

// httpGetLarge is httpGet for pages of megabytes: the body is counted, not kept.
func httpGetLarge(b *testing.B, h http.Handler, target string) {
	w := &discardWriter{h: http.Header{}}
	h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	if w.status != 200 || w.n == 0 {
		b.Fatalf("%s: %d, %d bytes", target, w.status, w.n)
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

// BenchmarkPredmktEvents50k: a 50,000-event page end to end (the last 24 hours of the
// tape, every token). The SQL is events.sql with the same arguments.
func BenchmarkPredmktEvents50k(b *testing.B) {
	q, h := pmBenchStore(b)
	var last int64
	var lo, hi string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT max(local_ts), CAST(min(\"date\") AS VARCHAR), CAST(max(\"date\") AS VARCHAR) FROM predmkt_book_events").Scan(&last, &lo, &hi); err != nil {
		b.Fatal(err)
	}
	from, to := last-86_400_000+1, last+1
	target := fmt.Sprintf("/v1/predmkt/events?from_ms=%d&to_ms=%d&limit=50000", from, to)
	httpGet(b, h, target)
	text := sqlfiles.MustRead("predmkt/events.sql")
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGetLarge(b, h, target) })
	})
	b.Run("sql", func(b *testing.B) {
		// Every date partition: what the SQL opens without the index's file spans.
		p99(b, func() { sqlRun(b, q, text, "", from, to, "", int64(-1), int64(0), "", 50001, lo, hi) })
	})
}

// BenchmarkPredmktOHLCV: 1h bars of the busiest token. The SQL is ohlcv.sql over
// every trades file.
func BenchmarkPredmktOHLCV(b *testing.B) {
	q, h := pmBenchStore(b)
	tok, _ := pmBusyToken(b, q)
	target := "/v1/predmkt/ohlcv?interval=1h&limit=1000&token_id=" + tok
	httpGet(b, h, target)
	text := sqlfiles.MustRead("predmkt/ohlcv.sql")
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, target) })
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, text, tok, int64(3_600_000), int64(0), int64(math.MaxInt64), 1000, "0001-01-01", "9999-12-31")
		})
	})
}

// BenchmarkPredmktOrderbook: the snapshot of the busiest token at its last event, and
// at ten earlier instants spread over its tape. The SQL is orderbook.sql.
func BenchmarkPredmktOrderbook(b *testing.B) {
	q, h := pmBenchStore(b)
	tok, last := pmBusyToken(b, q)
	var first int64
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT min(ts) FROM predmkt_book_events WHERE token_id = $1", tok).Scan(&first); err != nil {
		b.Fatal(err)
	}
	at := func(i int) int64 { return last - int64(i%11)*(last-first)/10 }
	httpGet(b, h, fmt.Sprintf("/v1/predmkt/orderbook?token_id=%s&ts=%d", tok, last))
	text := sqlfiles.MustRead("predmkt/orderbook.sql")
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, fmt.Sprintf("/v1/predmkt/orderbook?token_id=%s&ts=%d", tok, at(i))); i++ })
	})
	b.Run("sql", func(b *testing.B) {
		p99(b, func() { sqlRun(b, q, text, tok, at(i)); i++ })
	})
}

// BenchmarkPredmktSmartMoney: flows and mispricings over 24 hours. The SQL is the
// route's aggregate (smart_money_flows.sql or smart_money_buys.sql over every date
// partition) followed by mids.sql for the tokens it names.
func BenchmarkPredmktSmartMoney(b *testing.B) { benchSmartMoney(b, 24) }

// BenchmarkPredmktSmartMoney720h: the same over the longest window SPEC allows
// (hours=720), where the route walks every cohort fill of 30 days.
func BenchmarkPredmktSmartMoney720h(b *testing.B) { benchSmartMoney(b, 720) }

// benchSmartMoney alternates the two modes over the given window, beside the same SQL.
func benchSmartMoney(b *testing.B, hours int64) {
	q, h := pmBenchStore(b)
	now := testlake.BenchNow(b).UnixMilli()
	route := fmt.Sprintf("/v1/predmkt/smart_money?hours=%d&limit=20&mode=", hours)
	httpGet(b, h, route+"flows")
	flows, buys, mids := sqlfiles.MustRead("predmkt/smart_money_flows.sql"), sqlfiles.MustRead("predmkt/smart_money_buys.sql"),
		sqlfiles.MustRead("predmkt/mids.sql")
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() {
			mode := []string{"flows", "mispricings"}[i%2]
			i++
			httpGet(b, h, route+mode)
		})
	})
	cohort, err := q.SmartMoneyCohort(context.Background(), "all")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			text, col := flows, 8
			if i%2 == 1 {
				text, col = buys, 4
			}
			i++
			toks := sqlTokens(b, q, text, col, "all", now-hours*3_600_000, now, "0001-01-01", "9999-12-31", cohort)
			sqlRun(b, q, mids, strings.Join(toks, ","), now)
		})
	})
}

// sqlTokens runs text and collects its column col (a token id), at most 20.
func sqlTokens(b *testing.B, q *query.Queries, text string, col int, args ...any) []string {
	rows, err := q.DB().QueryContext(context.Background(), text, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var toks []string
	for rows.Next() {
		vals := make([]any, len(cols))
		for j := range vals {
			vals[j] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			b.Fatal(err)
		}
		if s, ok := (*vals[col].(*any)).(string); ok && len(toks) < 20 {
			toks = append(toks, s)
		}
	}
	return toks
}

// BenchmarkPredmktMarkets: the market list by volume and by 24-hour volume (first page,
// 50 rows), alternating. The SQL is the whole-tape aggregate the route ran before the
// per-day table (query/testdata/markets_scan.sql: every taker trade summed per request).
func BenchmarkPredmktMarkets(b *testing.B) {
	q, h := pmBenchStore(b)
	now := testlake.BenchNow(b).UnixMilli()
	sorts := []string{"volume", "volume_24h"}
	// The hour's market board, as serve's refresher and mdq rebuild publish it.
	if _, err := q.PublishMarketBoard(context.Background()); err != nil {
		b.Fatal(err)
	}
	httpGet(b, h, "/v1/predmkt/markets?sort=volume")
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() {
			httpGet(b, h, "/v1/predmkt/markets?sort="+sorts[i%2])
			i++
		})
	})
	scan := pmReadFile(b, "../query/testdata/markets_scan.sql")
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, q, scan, now, "", "", "", "", "", sorts[i%2], "", int64(math.MinInt64), "", 51)
			i++
		})
	})
	// A clock inside an hour, as a live clock nearly always is: the hours the clock and
	// the 24-hour window's start fall inside are summed from their fills, not their
	// hours (the lake's end, above, is on the hour).
	inside := testlake.BenchNow(b).Add(-29*time.Minute - 31*time.Second)
	dir := testlake.Bench(b)
	if dir == testlake.Tiny(b) {
		dir = testlake.Copy(b) // the board is written into the lake
	}
	qi, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return inside }})
	if err != nil {
		b.Fatal(err)
	}
	defer qi.Close()
	if _, err := qi.PublishMarketBoard(context.Background()); err != nil {
		b.Fatal(err)
	}
	hi := benchAPI(qi).Handler()
	httpGet(b, hi, "/v1/predmkt/markets?sort=volume")
	b.Run("http_inside_hour", func(b *testing.B) {
		p99(b, func() {
			httpGet(b, hi, "/v1/predmkt/markets?sort="+sorts[i%2])
			i++
		})
	})
	b.Run("sql_inside_hour", func(b *testing.B) {
		p99(b, func() {
			sqlRun(b, qi, scan, inside.UnixMilli(), "", "", "", "", "", sorts[i%2], "", int64(math.MinInt64), "", 51)
			i++
		})
	})
}

func pmReadFile(b *testing.B, path string) string {
	t, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(t)
}
