package query

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestPerpdexClosedTradesPublishedOnceAndOnChange: the closed trades are published to
// the lake on first use, not again while the fills are unchanged, again when a fills
// file changes (with the same trades for the same fills), and a stale-serving store
// answers from the published file at once while the new publication runs.
func TestPerpdexClosedTradesPublishedOnceAndOnChange(t *testing.T) {
	dir := testlake.Copy(t)
	q, err := Open(context.Background(), dir, Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	wallets := map[string][]pdTradeRow{}
	rows, err := q.db.QueryContext(ctx, "SELECT DISTINCT wallet FROM perpdex_fills ORDER BY 1 LIMIT 25")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		rows.Scan(&w)
		wallets[w] = nil
	}
	rows.Close()
	for w := range wallets { // the first use publishes
		ts, err := q.perpdexWalletTrades(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		wallets[w] = ts
	}
	if wrote, err := q.PublishPerpdexClosedTrades(ctx); err != nil || wrote {
		t.Fatalf("unchanged fills republished: %v %v", wrote, err)
	}
	files, _ := lake.PerpdexFills.Files(dir)
	later := time.Now().Add(time.Minute)
	os.Chtimes(files[len(files)-1], later, later) // a replaced fills file
	if wrote, err := q.PublishPerpdexClosedTrades(ctx); err != nil || !wrote {
		t.Fatalf("changed fills not republished: %v %v", wrote, err)
	}
	q.perpdexDerived().checked.Store(0)
	for w, old := range wallets {
		ts, err := q.perpdexWalletTrades(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != len(old) {
			t.Fatalf("%s: %d trades, before %d", w, len(ts), len(old))
		}
		for i := range ts {
			if !pdSameTrade(ts[i], old[i]) {
				t.Fatalf("%s trade %d: %+v, before %+v", w, i, ts[i], old[i])
			}
		}
	}
	// Serving stale: a changed fills file starts a background publication; the request
	// does not wait for it.
	s, err := Open(ctx, dir, Options{Now: testlake.Now, NoGoLimit: true, ServeStale: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := holdClosedTrades(dir)
	os.Chtimes(files[0], later.Add(time.Minute), later.Add(time.Minute))
	start := time.Now()
	for w := range wallets {
		if _, err := s.perpdexWalletTrades(ctx, w); err != nil {
			t.Fatal(err)
		}
		break
	}
	if d := time.Since(start); d > 5*time.Second || !s.perpdexDerived().publishing.Load() {
		t.Fatalf("stale-serving request waited %s or started no publication", d)
	}
	release()
}

// holdClosedTrades blocks closed-trade publications on dir until release.
func holdClosedTrades(dir string) (release func()) {
	mu, _ := closedTradesLocks.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// pdSameTrade compares two builds' rows: keys and counts exactly, sums to 1e-9 relative
// (DuckDB's parallel aggregation adds a trade's legs in no fixed order).
func pdSameTrade(a, b pdTradeRow) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)) }
	return a.asset == b.asset && a.openUS == b.openUS && a.closeUS == b.closeUS && a.tradeNo == b.tradeNo &&
		a.fills == b.fills && a.long == b.long && a.complete == b.complete && a.hasEntry == b.hasEntry && a.hasExit == b.hasExit &&
		near(a.entry, b.entry) && near(a.exit, b.exit) && near(a.maxTok, b.maxTok) && near(a.maxUsd, b.maxUsd) &&
		near(a.vol, b.vol) && near(a.pnl, b.pnl) && near(a.fee, b.fee)
}
