package query

import (
	"context"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestOnchainBalanceIndexAnswersAsTheSQL: on the tiny lake, the Go balances path gives
// the same wallets/{address}/balances answer as wallet_balances.sql (the fallback and
// the benchmark's baseline) and as the former in-memory index (its oracle here), identical field by field (price, rounded value, order, the
// unpriced rows and the min_usd cut), for every other holder of every chain at the
// fixture clock with min_usd 1 (the default) and for a sample of holders with min_usd 0 and a
// high floor, at clocks mid-hour, on an hour and before any price.
func TestOnchainBalanceIndexAnswersAsTheSQL(t *testing.T) {
	ctx := context.Background()
	now := testlake.Now()
	clock := now
	q, err := Open(ctx, testlake.Tiny(t), Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.onchainSide(ctx); err != nil {
		t.Fatal(err)
	}
	x := q.balanceIndex()
	if x == nil {
		t.Fatal("no balances index built")
	}
	mem, err := q.buildMemBalanceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := q.db.QueryContext(ctx, `SELECT DISTINCT chain, address FROM onchain_balances ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var picks [][2]string
	for rows.Next() {
		var c, a string
		if err := rows.Scan(&c, &a); err != nil {
			t.Fatal(err)
		}
		picks = append(picks, [2]string{c, a})
	}
	rows.Close()
	picks = append(picks, [2]string{"ethereum", "0x00000000000000000000000000000000000000ff"}, // holds nothing
		[2]string{"solana", picks[0][1]}) // a chain without balances
	check := func(chain, addr string, minUSD float64) int {
		t.Helper()
		got, ok, err := q.balances(ctx, x, chain, addr, micros(clock), minUSD)
		if err != nil || !ok {
			t.Fatalf("%s %s: ok %v, %v", chain, addr, ok, err)
		}
		want, err := q.onchainWalletBalancesSQL(ctx, chain, addr, minUSD)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s min_usd %v at %s:\nindex %+v\nsql   %+v (%v)", chain, addr, minUSD, clock, got, want, err)
		}
		if old := mem.balances(chain, addr, micros(clock), minUSD); !reflect.DeepEqual(got, old) {
			t.Fatalf("%s %s min_usd %v at %s:\nbounded   %+v\nin-memory %+v", chain, addr, minUSD, clock, got, old)
		}
		return len(got)
	}
	// Each SQL answer costs a few ms on the tiny lake (the price scan the index
	// avoids), so every other holder at the fixture clock and every 25th at the others.
	var nonEmpty int
	for i, p := range picks {
		if i%2 == 0 || i >= len(picks)-2 {
			if check(p[0], p[1], 1) > 0 {
				nonEmpty++
			}
		}
	}
	if nonEmpty < 10 {
		t.Fatalf("only %d holders with balances worth 1 USD: the check proves little", nonEmpty)
	}
	for _, c := range []time.Time{now, now.Add(-36*time.Hour - 30*time.Minute), now.Add(-72 * time.Hour), now.AddDate(-10, 0, 0)} {
		clock = c
		for i, p := range picks {
			if i%25 != 0 && i < len(picks)-2 {
				continue
			}
			for _, m := range []float64{0, 1, 1000} {
				check(p[0], p[1], m)
			}
		}
	}
}

// TestBalanceTokenCacheBoundedByBudget: the token cache's limit is its share of the Go
// part of --memory-limit, and a cache far smaller than the tokens a wallet walk touches
// evicts (never holding more bytes than its limit) while every answer stays the SQL's.
func TestBalanceTokenCacheBoundedByBudget(t *testing.T) {
	ctx := context.Background()
	now := testlake.Now()
	q, err := Open(ctx, testlake.Tiny(t), Options{Now: func() time.Time { return now }, Memory: 256 << 20, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.onchainSide(ctx); err != nil {
		t.Fatal(err)
	}
	x := q.balanceIndex()
	if x == nil {
		t.Fatal("no balances path built")
	}
	if got, want := q.cacheLimit("onchain_balance_tokens"), int64(float64(q.budget.Go)*CacheShare*cacheShares["onchain_balance_tokens"]); got != want || want <= 0 || want > q.budget.Go {
		t.Fatalf("token cache limit %d, want %d of a Go budget of %d", got, want, q.budget.Go)
	}
	var found bool
	for _, c := range q.CacheReport() {
		found = found || c.Name == "onchain_balance_tokens"
	}
	if !found {
		t.Fatalf("token cache not registered: %+v", q.CacheReport())
	}
	const small = 8 << 10 // a few tokens' prices
	x.toks = newByteLRU[[2]string, *ocBalToken]("onchain_balance_tokens", small)
	q.registerCache("onchain_balance_tokens", x.toks)
	rows, err := q.db.QueryContext(ctx, `SELECT chain, address FROM onchain_balances GROUP BY 1, 2 ORDER BY hash(chain, address) LIMIT 60`)
	if err != nil {
		t.Fatal(err)
	}
	var picks [][2]string
	for rows.Next() {
		var c, a string
		if err := rows.Scan(&c, &a); err != nil {
			t.Fatal(err)
		}
		picks = append(picks, [2]string{c, a})
	}
	rows.Close()
	for round := range 2 { // the second round hits the cache where it kept a token
		for _, p := range picks {
			got, ok, err := q.balances(ctx, x, p[0], p[1], micros(now), 0)
			if err != nil || !ok {
				t.Fatalf("%v: ok %v, %v", p, ok, err)
			}
			want, err := q.onchainWalletBalancesSQL(ctx, p[0], p[1], 0)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d %v:\nbounded %+v\nsql     %+v (%v)", round, p, got, want, err)
			}
			if u := x.toks.use(); u.Bytes > small {
				t.Fatalf("cache holds %d bytes, limit %d", u.Bytes, small)
			}
		}
	}
	if u := x.toks.use(); u.Evictions == 0 || u.Entries == 0 {
		t.Fatalf("a %d-byte cache over %d wallets: %+v (no eviction: the bound is not exercised)", small, len(picks), u)
	}
}
