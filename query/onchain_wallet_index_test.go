package query

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestOnchainWalletIndexAnswersAsTheSQL: on the tiny lake, the Go per-wallet index gives
// the same wallets/{address}, counterparties and compare answers as the SQL it replaces
// (wallet.sql, wallet_counterparties.sql, wallet_compare.sql), which stays the fallback
// and the benchmarks' baseline: same rows in the same order, same counts and timestamps,
// money equal (both round exact sums to the cent). Checked at the fixture clock (12:00,
// windows opening mid-day); handlers' TestOnchainPerWalletWindowsExactAtAnyClock checks
// the index against plain-Go oracles at other clocks.
func TestOnchainWalletIndexAnswersAsTheSQL(t *testing.T) {
	ctx := context.Background()
	for _, now := range []time.Time{testlake.Now()} {
		q, err := Open(ctx, testlake.Tiny(t), Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		if err := q.onchainLegs(ctx); err != nil {
			t.Fatal(err)
		}
		x := q.walletIndex()
		if x == nil {
			t.Fatal("no wallet index built")
		}
		// The busiest wallets of each chain and a few quiet ones.
		rows, err := q.db.QueryContext(ctx, `SELECT chain, wallet FROM (SELECT chain, wallet,
			row_number() OVER (PARTITION BY chain ORDER BY n DESC, wallet) r
			FROM (SELECT chain, wallet, count(*) n FROM onchain_legs_mem GROUP BY chain, wallet))
			WHERE r <= 4 OR r % 211 = 0 ORDER BY chain, r`)
		if err != nil {
			t.Fatal(err)
		}
		var picks [][2]string
		for rows.Next() {
			var c, w string
			if err := rows.Scan(&c, &w); err != nil {
				t.Fatal(err)
			}
			picks = append(picks, [2]string{c, w})
		}
		rows.Close()
		picks = append(picks, [2]string{"ethereum", "0x00000000000000000000000000000000000000ff"}) // never seen
		for i, p := range picks {
			chain, w := p[0], p[1]
			got, ok := x.wallet(w, micros(now))
			want, err := q.onchainWalletSQL(ctx, w)
			if !ok || err != nil || !sameMoney(got, want) {
				t.Fatalf("%s wallet at %s: index %+v\nsql %+v (%v)", w, now, got, want, err)
			}
			for _, win := range []string{"24h", "30d", "all"} {
				since, until := windowBounds(now, win)
				gc, ok := x.counterparties(chain, w, since, until, 50)
				wc, err := q.onchainWalletCounterpartiesSQL(ctx, chain, w, since, until, 50)
				if err != nil || !ok || len(wc) > 0 && !sameMoney(q.labelCounterparties(gc), wc) {
					t.Fatalf("%s %s counterparties %s at %s:\nindex %+v\nsql %+v (%v)", chain, w, win, now, gc, wc, err)
				}
				other := picks[(i+1)%len(picks)][1]
				if len(wc) > 0 && i%2 == 0 {
					other = wc[0].Address // a pair with direct transfers
				}
				for _, b := range []string{other, w} {
					empty := WalletCompare{WalletA: w, WalletB: b, Chain: chain, Window: win,
						SharedCounterparties: []SharedCounterparty{}, SharedTokens: []SharedToken{}}
					g := empty
					if !x.compare(&g, chain, w, b, since, until, 50) {
						t.Fatalf("index declined %s %s", w, b)
					}
					g, err1 := q.finishCompare(ctx, g)
					s, err2 := q.onchainWalletCompareSQL(ctx, empty, since, until, 50)
					if err1 != nil || err2 != nil || !sameMoney(g, s) {
						t.Fatalf("%s compare %s %s %s at %s:\nindex %+v\nsql %+v (%v %v)", chain, w, b, win, now, g, s, err1, err2)
					}
				}
			}
		}
	}
}

// sameMoney compares two answers field by field: float fields (USD) within a cent
// (the index sums exactly in integers; the SQL sums exactly in DECIMAL and rounds the
// DOUBLE), everything else equal.
func sameMoney(a, b any) bool { return sameValue(reflect.ValueOf(a), reflect.ValueOf(b)) }

func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float64:
		return math.Abs(a.Float()-b.Float()) <= 0.0100001
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	default:
		return fmt.Sprint(a.Interface()) == fmt.Sprint(b.Interface())
	}
}
