package query

import (
	"context"
	"math"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestPerpdexStaleTradeIndexIsServedWhileItRebuilds: once the per-wallet trade index is
// older than PerpdexDerivedTTL, requests get the previous build at once (they never wait
// for the rebuild) while a rebuild runs in the background, and its build replaces the
// old one with the same trades.
func TestPerpdexStaleTradeIndexIsServedWhileItRebuilds(t *testing.T) {
	q, err := Open(context.Background(), testlake.Tiny(t), Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	old, err := q.perpdexTradeIndex(ctx) // the first request waits for the first build
	if err != nil {
		t.Fatal(err)
	}
	if len(old.trades) == 0 || len(old.spans) == 0 {
		t.Fatal("tiny lake: empty trade index")
	}
	old.built = time.Now().Add(-2 * PerpdexDerivedTTL)
	d := q.perpdexDerived()
	for range 5 {
		x, err := q.perpdexTradeIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if x != old && x != d.cur.Load() {
			t.Fatal("a request got neither the previous build nor the current one")
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for d.cur.Load() == old || d.building.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the background rebuild did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	x := d.cur.Load()
	if time.Since(x.built) >= PerpdexDerivedTTL {
		t.Fatalf("rebuilt index is stale: built %v", x.built)
	}
	if len(x.trades) != len(old.trades) || len(x.spans) != len(old.spans) {
		t.Fatalf("rebuild: %d trades of %d wallets, before %d of %d", len(x.trades), len(x.spans), len(old.trades), len(old.spans))
	}
	for w, s := range old.spans {
		a, b := old.trades[s[0]:s[1]], x.wallet(w)
		if len(a) != len(b) {
			t.Fatalf("%s: %d trades, before %d", w, len(b), len(a))
		}
		for i := range a {
			if !pdSameTrade(a[i], b[i]) {
				t.Fatalf("%s trade %d: %+v, before %+v", w, i, b[i], a[i])
			}
		}
	}
	// Fresh again: no further rebuild starts.
	if _, err := q.perpdexTradeIndex(ctx); err != nil || d.building.Load() {
		t.Fatalf("fresh index: err %v, building %v", err, d.building.Load())
	}
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
