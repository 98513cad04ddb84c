package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// Benchmarks of the perpetuals routes on testlake.Bench (the medium demo lake under
// make bench): each route through HTTP beside its SQL run directly on q.DB(),
// reporting p99 in ms. Targets (issue 5): leaderboard and builders ≤ 25 ms,
// trades/summary of the most active wallet ≤ 100 ms, positions/match ≤ 10 ms.

func pdBenchStore(b *testing.B) (*query.Queries, http.Handler) {
	b.Helper()
	now := testlake.BenchNow(b)
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	// The derived trades table is built hourly, not per request.
	if err := q.PerpdexRefreshDerived(context.Background()); err != nil {
		b.Fatal(err)
	}
	return q, (&handlers.API{Q: q}).Handler()
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

func BenchmarkPerpdexLeaderboard(b *testing.B) {
	q, h := pdBenchStore(b)
	end := query.PerpdexBoardTime(q.Now())
	httpGet(b, h, "/v1/perpdex/leaderboard") // the hourly board build
	b.Run("http", func(b *testing.B) {
		p99(b, func() { httpGet(b, h, "/v1/perpdex/leaderboard?window=30d&sort=roi&limit=100") })
	})
	b.Run("sql_board_build", func(b *testing.B) {
		p99(b, func() { pdDrain(b, q, sqlfiles.MustRead("perpdex/board.sql"), end.Add(-30*24*time.Hour), end) })
	})
}

func BenchmarkPerpdexBuilders(b *testing.B) {
	q, h := pdBenchStore(b)
	now := q.Now()
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/perpdex/builders?window=30d") }) })
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			pdDrain(b, q, sqlfiles.MustRead("perpdex/builder_metrics.sql"), nil, now.Add(-30*24*time.Hour), now, "builder")
		})
	})
}

func BenchmarkPerpdexTradesSummary(b *testing.B) {
	q, h := pdBenchStore(b)
	var w string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT wallet FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").Scan(&w); err != nil {
		b.Fatal(err)
	}
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, "/v1/perpdex/wallets/"+w+"/trades/summary") }) })
	b.Run("sql", func(b *testing.B) {
		p99(b, func() { pdDrain(b, q, sqlfiles.MustRead("perpdex/trades_summary.sql"), w, time.Unix(0, 0), q.Now()) })
	})
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
	b.Run("http", func(b *testing.B) { p99(b, func() { httpGet(b, h, target) }) })
	b.Run("sql", func(b *testing.B) {
		p99(b, func() {
			pdDrain(b, q, sqlfiles.MustRead("perpdex/positions_match.sql"), coin, 1, lev, entry, entry, 50, q.Now())
		})
	})
}
