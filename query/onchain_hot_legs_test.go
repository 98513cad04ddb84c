package query

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestMicroToDoubleAsDuckDB: micro-dollars convert to the DOUBLE DuckDB gives for the
// same DECIMAL(38, 6), on both sides of 2^53 and of either sign.
func TestMicroToDoubleAsDuckDB(t *testing.T) {
	q, err := Open(context.Background(), testlake.Copy(t), Options{NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	vals := []int64{0, 1, -1, 999_999, 1_000_000, 1 << 53, 1<<53 + 1, 1<<53 - 1, -(1 << 53), -(1 << 53) - 1,
		math.MaxInt64, math.MinInt64 + 1, math.MinInt64, 123_456_789_012_345_678}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		v := int64(r.Uint64() >> r.IntN(64))
		if r.IntN(2) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		var got float64
		if err := q.db.QueryRow("SELECT CAST(CAST($1 AS DECIMAL(38, 6)) AS DOUBLE)", microString(v)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := microToDouble(v); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%d micro-dollars: DuckDB %v, microToDouble %v", v, got, want)
		}
	}
}

// microString writes v micro-dollars as an exact decimal.
func microString(v int64) string {
	sign, u := "", uint64(v)
	if v < 0 {
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%06d", sign, u/1_000_000, u%1_000_000)
}

// TestHotBuilderRefuses: a wallet whose legs the narrow columns cannot hold exactly is
// not cached (the SQL answers for it): a USD value beyond int64 micro-dollars, a block
// time that is not a whole second or is outside uint32 seconds, a counterparty that is
// not a lower-case address or out of order, a 65,537th token. The leg before a refusal
// is kept as it came, and a leg that fits is kept with its block time.
func TestHotBuilderRefuses(t *testing.T) {
	const sec = 1_000_000
	a, b := "0x"+strings.Repeat("0a", 20), "0x"+strings.Repeat("0b", 20)
	for _, tc := range []struct {
		name       string
		cp         string
		at         int64
		valid, add bool
	}{
		{"fits", b, 1_763_640_000 * sec, true, true},
		{"usd beyond int64", b, 1_763_640_000 * sec, false, false},
		{"part of a second", b, 1_763_640_000*sec + 1, true, false},
		{"before 1970", b, -sec, true, false},
		{"after 2106", b, (math.MaxUint32 + 1) * sec, true, false},
		{"last second of uint32", b, math.MaxUint32 * sec, true, true},
		{"upper-case address", "0x" + strings.Repeat("0B", 20), sec, true, false},
		{"counterparty out of order", "0x" + strings.Repeat("01", 20), sec, true, false},
		{"same counterparty again", a, sec, true, true},
	} {
		bl := &hotBuilder{h: &hotLegs{}, toks: map[string]uint16{}, ok: true}
		if !bl.add(a, "t", 5*sec, 7, true, true, false) {
			t.Fatal("first leg refused")
		}
		if got := bl.add(tc.cp, "t", tc.at, 1, tc.valid, false, false); got != tc.add || bl.ok != tc.add {
			t.Fatalf("%s: add %v ok %v, want %v", tc.name, got, bl.ok, tc.add)
		}
		h := bl.finish()
		if h.time(0) != 5*sec || h.usd[0] != 7 || h.flag[0] != hotSend || h.cps[0].String() != a {
			t.Fatalf("%s: first leg kept as %d %d %d %s", tc.name, h.time(0), h.usd[0], h.flag[0], h.cps[0])
		}
		if tc.add && h.time(1) != tc.at {
			t.Fatalf("%s: block time %d kept as %d", tc.name, tc.at, h.time(1))
		}
	}
	bl := &hotBuilder{h: &hotLegs{}, toks: map[string]uint16{}, ok: true}
	for i := range math.MaxUint16 + 1 {
		if !bl.add(a, fmt.Sprintf("t%05d", i), sec, 1, true, false, false) {
			t.Fatalf("token %d refused", i)
		}
	}
	if bl.add(a, "one more", sec, 1, true, false, false) || bl.ok {
		t.Fatal("a 65,537th token was kept")
	}
	if got := len(bl.finish().toks); got != math.MaxUint16+1 {
		t.Fatalf("%d tokens kept, want %d", got, math.MaxUint16+1)
	}
}

// TestHotLegsAnswerAsTheSQL: with every wallet of the tiny lake in the cache of the
// busiest wallets' legs, counterparties and compare answer from Go exactly as their SQL
// files do (every window, several limits, a wallet compared with itself, one never
// seen); a wallet whose files changed is answered by the SQL again, and a cache whose
// limit is far below the legs keeps within it.
func TestHotLegsAnswerAsTheSQL(t *testing.T) {
	ctx := context.Background()
	q, now := hotStore(t)
	if err := q.WarmHotWallets(ctx); err != nil {
		t.Fatal(err)
	}
	wallets := busiestWallets(t, q, 40)
	if len(wallets) < 10 {
		t.Fatalf("%d wallets", len(wallets))
	}
	hits, rowsSeen := 0, 0
	for _, w := range wallets {
		a, err := q.walletArgs(ctx, w.wallet, w.chain)
		if err != nil {
			t.Fatal(err)
		}
		if q.hotLegsFor(w.chain, w.wallet, a) != nil {
			hits++
		}
		for win := range OnchainWindows {
			since, until := windowBounds(now, win)
			for _, limit := range []int{1, 3, 50} {
				got, err := q.OnchainWalletCounterparties(ctx, w.chain, w.wallet, win, limit)
				if err != nil {
					t.Fatal(err)
				}
				want, err := q.onchainWalletCounterpartiesSQL(ctx, w.chain, w.wallet, since, until, limit, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("counterparties %s %s %s limit %d:\n go  %+v\n sql %+v", w.chain, w.wallet, win, limit, got, want)
				}
				rowsSeen += len(got)
			}
		}
	}
	if hits != len(wallets) || rowsSeen == 0 {
		t.Fatalf("%d of %d wallets cached, %d rows compared", hits, len(wallets), rowsSeen)
	}
	pairs := 0
	for i, x := range wallets {
		for _, y := range []hotWallet{wallets[(i+1)%len(wallets)], wallets[(i+7)%len(wallets)], x,
			{chain: x.chain, wallet: "0x0000000000000000000000000000000000000001"}} {
			if y.chain != x.chain {
				continue
			}
			for win := range OnchainWindows {
				since, until := windowBounds(now, win)
				out := WalletCompare{WalletA: x.wallet, WalletB: y.wallet, Chain: x.chain, Window: win,
					SharedCounterparties: []SharedCounterparty{}, SharedTokens: []SharedToken{}}
				for _, limit := range []int{2, 50} {
					got, err := q.OnchainWalletCompare(ctx, x.chain, x.wallet, y.wallet, win, limit)
					if err != nil {
						t.Fatal(err)
					}
					want, err := q.onchainWalletCompareSQL(ctx, out, since, until, limit, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("compare %s %s %s %s limit %d:\n go  %+v\n sql %+v", x.chain, x.wallet, y.wallet, win, limit, got, want)
					}
					if len(got.SharedCounterparties)+len(got.SharedTokens) > 0 {
						pairs++
					}
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no compared pair shared anything")
	}
	// A changed file: the entry no longer serves the wallet.
	w := wallets[0]
	a, err := q.walletArgs(ctx, w.wallet, w.chain)
	if err != nil {
		t.Fatal(err)
	}
	f := a.legs[0]
	if len(a.today) > 0 && a.today[0] != "" {
		f = a.today[len(a.today)-1]
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	if q.hotLegsFor(w.chain, w.wallet, a) != nil {
		t.Fatalf("the cached legs of %s still serve after %s changed", w.wallet, f)
	}
	// The warm reads it again.
	if err := q.WarmHotWallets(ctx); err != nil {
		t.Fatal(err)
	}
	if q.hotLegsFor(w.chain, w.wallet, a) == nil {
		t.Fatal("the warm did not read the changed wallet again")
	}
	for _, c := range q.CacheReport() {
		if c.Name == hotLegsCache && (c.Bytes > c.Limit || c.Entries < len(wallets)) {
			t.Fatalf("%+v", c)
		}
	}
}

// TestHotLegsCacheBounded: a cache limit of a quarter of the tiny lake's legs keeps
// the cache within it (the warm plans by the entries' bytes it measured, the LRU evicts
// by them), a later warm over the same files reads no entry again, and a wallet left out
// is answered by the SQL alike.
func TestHotLegsCacheBounded(t *testing.T) {
	ctx := context.Background()
	q, now := hotStore(t)
	use := func() (u CacheUse) {
		if err := q.WarmHotWallets(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range q.CacheReport() {
			if c.Name == hotLegsCache {
				u = c
			}
		}
		return u
	}
	whole := use()
	if whole.Limit != q.cacheLimit(hotLegsCache) || whole.Entries == 0 {
		t.Fatalf("cache %+v, limit %d", whole, q.cacheLimit(hotLegsCache))
	}
	small := newByteLRU[hotKey, *hotLegs](hotLegsCache, whole.Bytes/4)
	v, _ := q.ext.Load(lruKey{hotLegsCache})
	v.(*lruState[hotKey, *hotLegs]).lru = small
	q.registerCache(hotLegsCache, small)
	// The warms learn each entry's bytes and plan by them, not by the estimate (here far
	// short of them): the plan fits, loading it evicts nothing, and a later warm over the
	// same files reads nothing again. Planned by the estimate, the last loads evicted the
	// first, which the next warm read again.
	est := hotLegBytes
	hotLegBytes = 2
	defer func() { hotLegBytes = est }()
	part := use()
	if part.Bytes > part.Limit || part.Entries == 0 || part.Entries >= whole.Entries || part.Evictions != 0 {
		t.Fatalf("cache %+v after %+v", part, whole)
	}
	held := func() map[hotKey]*hotLegs {
		cands, err := q.hotCandidates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[hotKey]*hotLegs{}
		for _, c := range cands {
			if h, ok := small.get(c.key); ok {
				m[c.key] = h
			}
		}
		return m
	}
	before := held()
	if again := use(); again.Entries != part.Entries || again.Bytes != part.Bytes {
		t.Fatalf("cache %+v, then %+v over the same files", part, again)
	}
	after := held()
	if len(after) != len(before) || len(before) != part.Entries {
		t.Fatalf("%d entries held, then %d, of %d", len(before), len(after), part.Entries)
	}
	for k, h := range before {
		if after[k] != h {
			t.Fatalf("%v read again by a warm over the same files", k)
		}
	}
	ws := busiestWallets(t, q, 30)
	cached, left := 0, 0
	for i, x := range ws {
		chain, w := x.chain, x.wallet
		a, err := q.walletArgs(ctx, w, chain)
		if err != nil {
			t.Fatal(err)
		}
		if ws[i].cached = q.hotLegsFor(chain, w, a) != nil; ws[i].cached {
			cached++
		} else {
			left++
		}
		since, until := windowBounds(now, "all")
		got, err := q.OnchainWalletCounterparties(ctx, chain, w, "all", 50)
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.onchainWalletCounterpartiesSQL(ctx, chain, w, since, until, 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("counterparties %s %s:\n go  %+v\n sql %+v", chain, w, got, want)
		}
	}
	if cached == 0 || left == 0 {
		t.Fatalf("%d wallets cached, %d left to the SQL", cached, left)
	}
	// Compares with one side cached: answered by the SQL, as the cache does not hold both.
	mixed := 0
	for _, x := range ws {
		for _, y := range ws {
			if x.chain != y.chain || x.cached == y.cached {
				continue
			}
			mixed++
			for _, win := range []string{"30d", "all"} {
				since, until := windowBounds(now, win)
				out := WalletCompare{WalletA: x.wallet, WalletB: y.wallet, Chain: x.chain, Window: win,
					SharedCounterparties: []SharedCounterparty{}, SharedTokens: []SharedToken{}}
				got, err := q.OnchainWalletCompare(ctx, x.chain, x.wallet, y.wallet, win, 50)
				if err != nil {
					t.Fatal(err)
				}
				want, err := q.onchainWalletCompareSQL(ctx, out, since, until, 50, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("compare %s %s %s %s:\n go  %+v\n sql %+v", x.chain, x.wallet, y.wallet, win, got, want)
				}
			}
		}
	}
	if mixed == 0 {
		t.Fatal("no compare with one side cached")
	}
}

// hotStore opens a store on a copy of the tiny lake, its legs published, with every
// wallet eligible for the cache of the busiest wallets' legs (HotWalletMinLegs 1, put
// back when the test ends), and returns it with its clock.
func hotStore(t *testing.T) (*Queries, time.Time) {
	t.Helper()
	now := testlake.Now()
	q, err := Open(context.Background(), testlake.Copy(t), Options{Now: func() time.Time { return now }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	old := HotWalletMinLegs
	HotWalletMinLegs = 1
	t.Cleanup(func() { HotWalletMinLegs = old })
	if err := q.onchainLegs(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q, now
}

// hotWallet is a (chain, wallet) of the tiny lake, and whether its legs were cached.
type hotWallet struct {
	chain, wallet string
	cached        bool
}

// busiestWallets lists the n (chain, wallet)s with the most legs.
func busiestWallets(t *testing.T, q *Queries, n int) []hotWallet {
	t.Helper()
	rows, err := q.db.Query(`SELECT chain, wallet FROM onchain_legs GROUP BY ALL ORDER BY count(*) DESC, wallet LIMIT $1`, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []hotWallet
	for rows.Next() {
		var w hotWallet
		if err := rows.Scan(&w.chain, &w.wallet); err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
