package handlers_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// Oracles of the per-wallet routes (wallets/{address}, counterparties, compare), computed in plain Go from the tiny lake's raw transfers, at
// store clocks that put the windows' edges on a day boundary, mid-day, and exactly on a
// transfer.

// ocMicro is a transfer's USD in integer micro-dollars, so oracle sums are exact.
func ocMicro(r ocRaw) int64 { return int64(math.Round(r.usd * 1e6)) }

func oracleCounterparties(w *ocWorld, chain, addr string, since, now time.Time, limit int) []query.Counterparty {
	type agg struct {
		out, in, n  int64
		toks        map[string]bool
		first, last time.Time
	}
	by := map[string]*agg{}
	for _, r := range w.raw {
		if r.chain != chain || r.from == r.to || (r.from != addr && r.to != addr) || !r.t.After(since) || r.t.After(now) {
			continue
		}
		cp := r.to
		if r.to == addr {
			cp = r.from
		}
		g := by[cp]
		if g == nil {
			g = &agg{toks: map[string]bool{}, first: r.t, last: r.t}
			by[cp] = g
		}
		if r.from == addr {
			g.out += ocMicro(r)
		} else {
			g.in += ocMicro(r)
		}
		g.n++
		g.toks[r.token] = true
		if r.t.Before(g.first) {
			g.first = r.t
		}
		if r.t.After(g.last) {
			g.last = r.t
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		vi, vj := by[keys[i]].out+by[keys[i]].in, by[keys[j]].out+by[keys[j]].in
		return vi > vj || vi == vj && keys[i] < keys[j]
	})
	var out []query.Counterparty
	for _, k := range keys[:min(limit, len(keys))] {
		g := by[k]
		c := query.Counterparty{Address: k, VolumeUSD: float64(g.out+g.in) / 1e6, OutUSD: float64(g.out) / 1e6,
			InUSD: float64(g.in) / 1e6, NetUSD: float64(g.in-g.out) / 1e6, TxCount: g.n, Tokens: int64(len(g.toks)),
			FirstTS: g.first.UTC().Format(time.RFC3339), LastTS: g.last.UTC().Format(time.RFC3339)}
		if l, ok := w.labels[k]; ok {
			e, wt := l.entity, l.walletType
			c.Label, c.WalletType = &e, &wt
		}
		out = append(out, c)
	}
	return out
}

func oracleCompare(w *ocWorld, chain, a, b string, since, now time.Time, limit int) query.WalletCompare {
	type side struct{ u, n int64 }
	cps := map[string]*[2]side{}
	toks := map[string]*[2]side{}
	out := query.WalletCompare{WalletA: a, WalletB: b}
	var ab, ba int64
	for _, r := range w.raw {
		if r.chain != chain || r.from == r.to || !r.t.After(since) || r.t.After(now) {
			continue
		}
		for i, x := range []string{a, b} {
			if r.from != x && r.to != x {
				continue
			}
			other := r.to
			if r.to == x {
				other = r.from
			}
			if toks[r.token] == nil {
				toks[r.token] = &[2]side{}
			}
			toks[r.token][i].u += ocMicro(r)
			toks[r.token][i].n++
			if other != a && other != b {
				if cps[other] == nil {
					cps[other] = &[2]side{}
				}
				cps[other][i].u += ocMicro(r)
				cps[other][i].n++
			}
		}
		if a != b && r.from == a && r.to == b {
			ab += ocMicro(r)
			out.Direct.TxCount++
		}
		if a != b && r.from == b && r.to == a {
			ba += ocMicro(r)
			out.Direct.TxCount++
		}
	}
	out.Direct.AToBUSD, out.Direct.BToAUSD = float64(ab)/1e6, float64(ba)/1e6
	rank := func(m map[string]*[2]side) []string {
		var keys []string
		for k, v := range m {
			if v[0].n > 0 && v[1].n > 0 {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			vi, vj := m[keys[i]][0].u+m[keys[i]][1].u, m[keys[j]][0].u+m[keys[j]][1].u
			return vi > vj || vi == vj && keys[i] < keys[j]
		})
		return keys[:min(limit, len(keys))]
	}
	for _, k := range rank(cps) {
		s := cps[k]
		c := query.SharedCounterparty{Address: k, AVolumeUSD: float64(s[0].u) / 1e6, BVolumeUSD: float64(s[1].u) / 1e6,
			ATxCount: s[0].n, BTxCount: s[1].n}
		if l, ok := w.labels[k]; ok {
			e := l.entity
			c.Label = &e
		}
		out.SharedCounterparties = append(out.SharedCounterparties, c)
	}
	for _, k := range rank(toks) {
		s := toks[k]
		out.SharedTokens = append(out.SharedTokens, query.SharedToken{TokenAddress: k, Symbol: w.tokens[[2]string{chain, k}].symbol,
			AVolumeUSD: float64(s[0].u) / 1e6, BVolumeUSD: float64(s[1].u) / 1e6, ATxCount: s[0].n, BTxCount: s[1].n})
	}
	return out
}

// TestOnchainPerWalletWindowsExactAtAnyClock: wallets/{address}, counterparties and
// compare equal the plain-Go oracles with the store clock at the fixture's 12:00 (every
// window opens mid-day), at midnight (windows open on a day boundary), at one transfer's
// time plus 24 hours (it sits on the 24h window's open edge, so it is out of 24h and in
// 7d), and at a transfer's own time (on the closed edge, so in every window; later
// transfers are out).
func TestOnchainPerWalletWindowsExactAtAnyClock(t *testing.T) {
	q0 := openQueries(t, testlake.Tiny(t))
	w := ocLoad(t, q0)
	count := map[string]int{}
	for _, r := range w.raw {
		if r.chain == "ethereum" && r.from != r.to {
			count[r.from]++
			count[r.to]++
		}
	}
	var busy []string
	for a := range count {
		busy = append(busy, a)
	}
	sort.Slice(busy, func(i, j int) bool {
		return count[busy[i]] > count[busy[j]] || count[busy[i]] == count[busy[j]] && busy[i] < busy[j]
	})
	busy = busy[:3]
	// The edge transfer: the busiest wallet's latest ethereum transfer at least two days
	// before the lake's end, between two distinct wallets.
	var e ocRaw
	for _, r := range w.raw {
		if r.chain == "ethereum" && r.from != r.to && (r.from == busy[0] || r.to == busy[0]) &&
			!r.t.After(testlake.Now().Add(-48*time.Hour)) && r.t.After(e.t) {
			e = r
		}
	}
	if e.t.IsZero() {
		t.Fatal("no edge transfer")
	}
	clocks := map[string]time.Time{
		"12:00":        testlake.Now(),
		"midnight":     testlake.Now().Truncate(24 * time.Hour),
		"edge+24h":     e.t.Add(24 * time.Hour),
		"transfer end": e.t,
	}
	for name, now := range clocks {
		q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		h := (&handlers.API{Q: q}).Handler()
		for _, a := range []string{busy[0], e.from, e.to} {
			var got map[string]query.WalletWindow
			ocGet(t, h, "/v1/onchain/wallets/"+a, &got)
			want := oracleWallet(w, a, now)
			for _, win := range []string{"24h", "7d", "30d", "90d", "all"} {
				g, o := got[win], want[win]
				if !near(g.TotalInflow, o.TotalInflow) || !near(g.TotalOutflow, o.TotalOutflow) || g.TxCount != o.TxCount ||
					g.TokensTraded != o.TokensTraded || fmt.Sprint(deref(g.FirstSeen), deref(g.LastActive)) != fmt.Sprint(deref(o.FirstSeen), deref(o.LastActive)) {
					t.Fatalf("%s: wallet %s %s: %+v\noracle %+v", name, a, win, g, o)
				}
			}
			for _, win := range []string{"24h", "7d", "all"} {
				since := now.Add(-query.OnchainWindows[win])
				if win == "all" {
					since = time.Unix(0, 0)
				}
				var rows []query.Counterparty
				ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/%s/counterparties?window=%s", a, win), &rows)
				if want := oracleCounterparties(w, "ethereum", a, since, now, 50); !sameCounterparties(rows, want) {
					t.Fatalf("%s: counterparties %s %s:\n%s\noracle %s", name, a, win, jsonOf(rows), jsonOf(want))
				}
			}
		}
		for _, p := range [][2]string{{e.from, e.to}, {busy[0], busy[1]}, {busy[1], busy[1]}} {
			for _, win := range []string{"24h", "7d", "all"} {
				since := now.Add(-query.OnchainWindows[win])
				if win == "all" {
					since = time.Unix(0, 0)
				}
				var c query.WalletCompare
				ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&window=%s", p[0], p[1], win), &c)
				if want := oracleCompare(w, "ethereum", p[0], p[1], since, now, 50); !sameCompare(c, want) {
					t.Fatalf("%s: compare %s %s %s:\n%s\noracle %s", name, p[0], p[1], win, jsonOf(c), jsonOf(want))
				}
			}
		}
		// The edge transfer itself: out of the 24h window at edge+24h (still in 7d), in it
		// at its own time.
		var d24, d7 query.WalletCompare
		ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&window=24h", e.from, e.to), &d24)
		ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&window=7d", e.from, e.to), &d7)
		if name == "edge+24h" && d7.Direct.TxCount <= d24.Direct.TxCount || name == "transfer end" && d24.Direct.TxCount == 0 {
			t.Fatalf("%s: direct transfers 24h %d, 7d %d", name, d24.Direct.TxCount, d7.Direct.TxCount)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func sameCounterparties(a, b []query.Counterparty) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Address != y.Address || !near(x.VolumeUSD, y.VolumeUSD) || !near(x.OutUSD, y.OutUSD) || !near(x.InUSD, y.InUSD) ||
			!near(x.NetUSD, y.NetUSD) || x.TxCount != y.TxCount || x.Tokens != y.Tokens || x.FirstTS != y.FirstTS ||
			x.LastTS != y.LastTS || deref(x.Label) != deref(y.Label) || deref(x.WalletType) != deref(y.WalletType) {
			return false
		}
	}
	return true
}

func sameCompare(a, b query.WalletCompare) bool {
	if len(a.SharedCounterparties) != len(b.SharedCounterparties) || len(a.SharedTokens) != len(b.SharedTokens) ||
		!near(a.Direct.AToBUSD, b.Direct.AToBUSD) || !near(a.Direct.BToAUSD, b.Direct.BToAUSD) || a.Direct.TxCount != b.Direct.TxCount {
		return false
	}
	for i, x := range a.SharedCounterparties {
		y := b.SharedCounterparties[i]
		if x.Address != y.Address || !near(x.AVolumeUSD, y.AVolumeUSD) || !near(x.BVolumeUSD, y.BVolumeUSD) ||
			x.ATxCount != y.ATxCount || x.BTxCount != y.BTxCount || deref(x.Label) != deref(y.Label) {
			return false
		}
	}
	for i, x := range a.SharedTokens {
		y := b.SharedTokens[i]
		if x.TokenAddress != y.TokenAddress || x.Symbol != y.Symbol || !near(x.AVolumeUSD, y.AVolumeUSD) ||
			!near(x.BVolumeUSD, y.BVolumeUSD) || x.ATxCount != y.ATxCount || x.BTxCount != y.BTxCount {
			return false
		}
	}
	return true
}

// TestOnchainPerWalletSumsBeyondInt64MicroDollarsStayExact: a wallet whose USD would
// overflow the Go index's int64 micro-dollar sums (two 6 trillion USD transfers) is
// answered exactly (the routes fall back to their DECIMAL SQL for it), while a wallet of
// the same lake within range is answered by the index; both equal hand sums.
func TestOnchainPerWalletSumsBeyondInt64MicroDollarsStayExact(t *testing.T) {
	f := &ocFixture{}
	usdc := ocTok(1)
	f.token("ethereum", usdc, "USDC", "USD Coin", "usdc")
	W, A, B, C := ocAddr(1), ocAddr(2), ocAddr(3), ocAddr(4)
	f.xfer("ethereum", 2*time.Hour, usdc, A, W, 6e12, 6e12)
	f.xfer("ethereum", 3*time.Hour, usdc, B, W, 6e12, 6e12)
	f.xfer("ethereum", 4*time.Hour, usdc, W, C, 0.01, 0.01)
	f.xfer("ethereum", 5*time.Hour, usdc, A, C, 2.5, 2.5)
	h := f.serve(t)
	var ws map[string]query.WalletWindow
	ocGet(t, h, "/v1/onchain/wallets/"+W, &ws)
	if g := ws["24h"]; g.TotalInflow != 12e12 || g.TotalOutflow != 0.01 || g.TotalVolume != 12000000000000.01 || g.TxCount != 3 {
		t.Fatalf("beyond int64: %+v", g)
	}
	var rows []query.Counterparty
	ocGet(t, h, "/v1/onchain/wallets/"+W+"/counterparties?window=24h", &rows)
	if len(rows) != 3 || rows[0].Address != A || rows[1].Address != B || rows[0].InUSD != 6e12 || rows[2].OutUSD != 0.01 {
		t.Fatalf("beyond int64 counterparties: %s", jsonOf(rows))
	}
	var c query.WalletCompare
	ocGet(t, h, "/v1/onchain/wallets/compare?wallet_a="+W+"&wallet_b="+A, &c)
	if c.Direct.BToAUSD != 6e12 || c.Direct.TxCount != 1 || len(c.SharedCounterparties) != 1 || c.SharedCounterparties[0].Address != C ||
		len(c.SharedTokens) != 1 || c.SharedTokens[0].AVolumeUSD != 12000000000000.01 || c.SharedTokens[0].BVolumeUSD != 6000000000002.5 {
		t.Fatalf("beyond int64 compare: %s", jsonOf(c))
	}
	ocGet(t, h, "/v1/onchain/wallets/"+C+"/counterparties?window=24h", &rows)
	if len(rows) != 2 || rows[0].Address != A || rows[0].InUSD != 2.5 || rows[1].Address != W || rows[1].InUSD != 0.01 {
		t.Fatalf("in range: %s", jsonOf(rows))
	}
}
