package handlers_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestPredmktSettlementsAgainstOracle: every resolution at or before now, newest first
// (ties on condition_id), paged with nextCursor, with its winner (null when invalid),
// traded volume, trades, traders and payout (positive net winning shares at 1 USD; 0
// when invalid) recomputed in plain Go; status and category filters keep exactly theirs.
func TestPredmktSettlementsAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	type acc struct {
		vol, n  int64
		traders map[string]bool
		net     map[string]int64
	}
	per := map[string]*acc{}
	for _, f := range r.fills {
		a := per[f.cond]
		if a == nil {
			a = &acc{traders: map[string]bool{}, net: map[string]int64{}}
			per[f.cond] = a
		}
		a.traders[f.wallet] = true
		if f.role == "taker" {
			a.vol += dMicro(f.usd)
			a.n++
		}
		if x, ok := r.res[f.cond]; ok && !x.invalid && f.outcome == x.winner {
			if f.side == "BUY" {
				a.net[f.wallet] += dMicro(f.size)
			} else {
				a.net[f.wallet] -= dMicro(f.size)
			}
		}
	}
	for _, qs := range []string{"", "status=invalid", "status=resolved", "category=Politics"} {
		pages := pageAll(t, h, "/v1/predmkt/settlements?limit=7&"+qs, func(p *query.PredmktSettlementsPage) *string { return p.NextCursor })
		var got []query.PredmktSettlement
		for _, p := range pages {
			got = append(got, p.Settlements...)
		}
		var want []string
		for c, x := range r.res {
			if x.ts <= now && (qs == "" || qs == "status=invalid" && x.invalid || qs == "status=resolved" && !x.invalid ||
				qs == "category=Politics" && r.markets[c].category == "Politics") {
				want = append(want, c)
			}
		}
		slices.SortFunc(want, func(a, b string) int { return cmp.Or(cmp.Compare(r.res[b].ts, r.res[a].ts), cmp.Compare(a, b)) })
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d settlements, oracle %d", qs, len(got), len(want))
		}
		for i, g := range got {
			c, x := want[i], r.res[want[i]]
			a := per[c]
			if a == nil {
				a = &acc{}
			}
			var pay, winners int64
			for _, v := range a.net {
				if v > 0 {
					pay += v
					winners++
				}
			}
			if g.ConditionID != c || g.Invalid != x.invalid || g.ResolvedTS != isoMs(x.ts) || g.VolumeUSD != cents(a.vol) ||
				g.Trades != a.n || g.Traders != int64(len(a.traders)) || g.PayoutUSD != cents(pay) || g.WinningHolders != winners {
				t.Fatalf("%s row %d: %+v, oracle %s vol %d pay %d", qs, i, g, c, a.vol, pay)
			}
			if x.invalid != (g.WinningIndex == nil) || x.invalid != (g.WinningOutcome == nil) ||
				!x.invalid && (*g.WinningIndex != x.winner || *g.WinningTokenID != r.markets[c].tokens[x.winner]) {
				t.Fatalf("%s: winner %s", c, jsonOf(g))
			}
		}
	}
	code, body := get(t, h, "/v1/predmkt/settlements?status=open")
	if code != 400 || strings.TrimSpace(string(body)) != `{"error":"status must be one of all, resolved, invalid"}` {
		t.Errorf("status other than all, resolved, invalid is 400: %d %s", code, body)
	}
}
