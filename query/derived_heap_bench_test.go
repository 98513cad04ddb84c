package query

import (
	"context"
	"runtime"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// BenchmarkDerivedStateHeap reports the Go heap (runtime.MemStats.HeapInuse after a
// collection) that the prediction-market tape index and the on-chain side tables'
// balances path hold once built and after 300 orderbook and 300 balances requests, on
// MDQ_BENCH_LAKE (the tiny lake by default): what issue 11's bounded memory keeps out of
// the heap.
//
//	MDQ_BENCH_LAKE=<medium lake> go test ./query -run '^$' -bench DerivedStateHeap -benchtime 1x
func BenchmarkDerivedStateHeap(b *testing.B) {
	ctx := context.Background()
	now := testlake.BenchNow(b)
	heap := func() float64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse) / (1 << 20)
	}
	for b.Loop() {
		q, err := Open(ctx, testlake.Bench(b), Options{Now: func() time.Time { return now }, NoGoLimit: true})
		if err != nil {
			b.Fatal(err)
		}
		base := heap()
		if _, err := q.predmktTape(ctx); err != nil {
			b.Fatal(err)
		}
		if err := q.onchainSide(ctx); err != nil {
			b.Fatal(err)
		}
		built := heap()
		toks := tapeStringsB(b, q, "SELECT token_id FROM predmkt_book_events WHERE event_type = 'book' GROUP BY 1 ORDER BY hash(token_id) LIMIT 300")
		for i, tok := range toks {
			if _, err := q.PredmktOrderbook(ctx, PredmktOrderbookParams{TokenID: tok, TS: now.UnixMilli() - int64(i)*3_600_000, Depth: 10}); err != nil {
				b.Fatal(err)
			}
		}
		addrs := tapeStringsB(b, q, "SELECT address FROM onchain_balances WHERE chain = 'ethereum' GROUP BY 1 ORDER BY hash(address) LIMIT 300")
		for _, a := range addrs {
			if _, err := q.OnchainWalletBalances(ctx, "ethereum", a, 1); err != nil {
				b.Fatal(err)
			}
		}
		used := heap()
		b.ReportMetric(built-base, "built_heap_MB")
		b.ReportMetric(used-base, "after_requests_heap_MB")
		q.Close()
	}
}

func tapeStringsB(b *testing.B, q *Queries, text string) []string {
	b.Helper()
	rows, err := q.db.QueryContext(context.Background(), text)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			b.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
