package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// Benchmarks of the perpetuals routes on testlake.Bench (the medium demo lake under
// make bench): each route through HTTP beside its SQL run directly on q.DB(),
// reporting p99 in ms. Targets (issue 5): leaderboard and builders ≤ 25 ms,
// trades/summary of the most active wallet ≤ 100 ms, positions/match ≤ 10 ms.
// Hourly figures are built before measuring, as a server builds them at start
// (query.PerpdexWarm); the http_during_rebuild cases move the clock into the next hour
// and measure while that hour's figures build in the background.

func pdBenchStore(b *testing.B) (*query.Queries, http.Handler) {
	q, h, _ := pdBenchStoreClock(b)
	return q, h
}

// pdBenchStoreClock also returns a setter of the store clock.
func pdBenchStoreClock(b *testing.B) (*query.Queries, http.Handler, func(time.Time)) {
	b.Helper()
	var clock atomic.Int64
	clock.Store(testlake.BenchNow(b).UnixNano())
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	// The derived trades table is built hourly, not per request.
	if err := q.PerpdexRefreshDerived(context.Background()); err != nil {
		b.Fatal(err)
	}
	return q, benchAPI(q).Handler(), func(t time.Time) { clock.Store(t.UnixNano()) }
}

func pdDrain(b *testing.B, q *query.Queries, sqlText string, args ...any) {
	rows, err := q.DB().QueryContext(context.Background(), sqlText, args...)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
}

// pdDuringRebuild moves the clock one hour on, starts that hour's rebuild with one
// request (answered from the previous hour) and measures target while the build runs
// on the same cores. Run it last: closing the store waits for the build's query.
func pdDuringRebuild(b *testing.B, q *query.Queries, h http.Handler, setClock func(time.Time), target string) {
	setClock(query.PerpdexBoardTime(q.Now()).Add(time.Hour))
	httpGet(b, h, target)
	p99(b, func() { httpGet(b, h, target) })
}

func BenchmarkPerpdexLeaderboard(b *testing.B) {
	q, h, setClock := pdBenchStoreClock(b)
	end := query.PerpdexBoardTime(q.Now())
	const target = "/v1/perpdex/leaderboard?window=30d&sort=roi&limit=100"
	httpGet(b, h, target) // the hourly board build, as at server start
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, target) }) })
	b.Run("sql_board_build", func(b *testing.B) {
		start := end.Add(-30 * 24 * time.Hour)
		bs, be, err := q.PerpdexBoardBatches(context.Background(), start, end)
		if err != nil {
			b.Fatal(err)
		}
		p99(b, func() {
			// The epoch for the complete days: every fill read raw, as before the
			// per-day partial sums (query.BenchmarkPerpdexBoardBuild compares both).
			epoch := time.Unix(0, 0).UTC()
			pdDrain(b, q, sqlfiles.MustRead("perpdex/board.sql"), start, end, "0x", "0y", end, bs, be, epoch, epoch)
		})
	})
	b.Run("http_during_rebuild", func(b *testing.B) { pdDuringRebuild(b, q, h, setClock, target) })
}

func BenchmarkPerpdexBuilders(b *testing.B) {
	q, h, setClock := pdBenchStoreClock(b)
	now := query.PerpdexBoardTime(q.Now())
	const target = "/v1/perpdex/builders?window=30d"
	httpGet(b, h, target) // the hourly build, as at server start
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, target) }) })
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			pdDrain(b, q, sqlfiles.MustRead("perpdex/builder_metrics.sql"), nil, now.Add(-30*24*time.Hour), now, "builder")
		})
	})
	b.Run("http_during_rebuild", func(b *testing.B) { pdDuringRebuild(b, q, h, setClock, target) })
}

// BenchmarkPerpdexTradesSummary: the summary (and the trades page) of the most active
// wallet, answered from the per-wallet trade index built with the derived table, beside
// the same figures as one SQL statement over perpdex_closed_trades in DuckDB. The
// index's share of the hourly rebuild is reported as index_load_ms.
func BenchmarkPerpdexTradesSummary(b *testing.B) {
	q, h := pdBenchStore(b)
	var w string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT wallet FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").Scan(&w); err != nil {
		b.Fatal(err)
	}
	b.Run("http", func(b *testing.B) { pdP50P99(b, func() { httpGet(b, h, "/v1/perpdex/wallets/"+w+"/trades/summary") }) })
	b.Run("sql", func(b *testing.B) {
		pdP50P99(b, func() { pdDrain(b, q, sqlfiles.MustRead("perpdex/trades_summary.sql"), w, time.Unix(0, 0), q.Now()) })
	})
	b.Run("http_trades", func(b *testing.B) { pdP50P99(b, func() { httpGet(b, h, "/v1/perpdex/wallets/"+w+"/trades") }) })
	b.Run("sql_trades", func(b *testing.B) {
		pdP50P99(b, func() {
			pdDrain(b, q, sqlfiles.MustRead("perpdex/wallet_trades.sql"), w, nil, time.Unix(0, 0), q.Now(), nil, nil, nil, 101)
		})
	})
	// The per-wallet read of the derived table the routes start from (one wallet's
	// trades; there is no whole-table index any more).
	b.Run("sql_wallet_read", func(b *testing.B) {
		pdP50P99(b, func() { pdDrain(b, q, sqlfiles.MustRead("perpdex/closed_trades_index.sql"), w) })
	})
}

// pdP50P99 is p99 (predmkt_bench_test.go) with the median beside it.
func pdP50P99(b *testing.B, f func()) {
	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		t := time.Now()
		f()
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
	}
}

func BenchmarkPerpdexPositionsMatch(b *testing.B) {
	q, h := pdBenchStore(b)
	var coin string
	var entry, lev float64
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT coin, entry_px, leverage FROM perpdex_positions WHERE szi > 0 ORDER BY snapshot_ts DESC, wallet LIMIT 1").Scan(&coin, &entry, &lev); err != nil {
		b.Fatal(err)
	}
	target := "/v1/perpdex/positions/match?coin=" + coin + "&side=long&leverage=" + strconv.FormatFloat(lev, 'f', -1, 64) + "&entry_price=" + strconv.FormatFloat(entry, 'f', -1, 64)
	httpGet(b, h, target) // loads the newest batch into memory, as the first request after a new batch does
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, target) }) })
	// The whole search as one SQL statement, per request.
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			pdDrain(b, q, sqlfiles.MustRead("perpdex/positions_match.sql"), coin, 1, lev, entry, entry, 50, q.Now())
		})
	})
	// What the route runs when a newer batch appears: find it, load its 15 minutes.
	b.Run("sql_reload", func(b *testing.B) {
		now := q.Now()
		day := now.Truncate(24 * time.Hour)
		p99(b, func() {
			var newest, next sql.NullTime
			if err := q.DB().QueryRowContext(context.Background(), sqlfiles.MustRead("perpdex/positions_batch.sql"),
				day.AddDate(0, 0, -1), day, now).Scan(&newest, &next); err != nil {
				b.Fatal(err)
			}
			pdDrain(b, q, sqlfiles.MustRead("perpdex/positions_window.sql"), newest.Time)
		})
	})
}

// BenchmarkPerpdexLiquidations: the newest 100 liquidations (the route's default
// window), then the next page by cursor, alternating. The SQL is the scan the route ran
// before the liquidations table (query/testdata/liquidations_scan.sql: every fill
// read for its liquidation flag), with the same labels arguments.
func BenchmarkPerpdexLiquidations(b *testing.B) {
	q, h := pdBenchStore(b)
	first := pdGetBody(b, h, "/v1/perpdex/liquidations?limit=100")
	var pg struct {
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(first, &pg); err != nil || pg.NextCursor == nil {
		b.Fatalf("first page: %v %s", err, first[:min(len(first), 200)])
	}
	targets := []string{"/v1/perpdex/liquidations?limit=100", "/v1/perpdex/liquidations?limit=100&cursor=" + url.QueryEscape(*pg.NextCursor)}
	i := 0
	b.Run("http", func(b *testing.B) {
		p99(b, func() {
			httpGet(b, h, targets[i%2])
			i++
		})
	})
	scan := pmReadFile(b, "../query/testdata/liquidations_scan.sql")
	now := q.Now()
	cur, until, err := q.PerpdexLabelsArgs(context.Background(), now)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			pdDrain(b, q, scan, nil, nil, time.Unix(0, 0).UTC(), now, nil, nil, nil, nil, 101, cur, until)
		})
	})
}

func pdGetBody(b *testing.B, h http.Handler, target string) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	if rec.Code != 200 {
		b.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}
