package query

import (
	"context"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestOnchainBalanceIndexAnswersAsTheSQL: on the tiny lake, the Go balances index gives
// the same wallets/{address}/balances answer as wallet_balances.sql (the fallback and
// the benchmark's baseline), identical field by field (price, rounded value, order, the
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
	rows, err := q.db.QueryContext(ctx, `SELECT DISTINCT chain, address FROM onchain_balances_mem ORDER BY 1, 2`)
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
		got := x.balances(chain, addr, micros(clock), minUSD)
		want, err := q.onchainWalletBalancesSQL(ctx, chain, addr, minUSD)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s min_usd %v at %s:\nindex %+v\nsql   %+v (%v)", chain, addr, minUSD, clock, got, want, err)
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
