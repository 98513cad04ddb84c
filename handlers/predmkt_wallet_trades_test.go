package handlers_test

import (
	"cmp"
	"slices"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestPredmktWalletTradesAgainstOracle: a wallet's fills from its own side, newest first
// by (ts, seq, token_id), paged with nextCursor, equal its raw fills; condition_id keeps
// one market.
func TestPredmktWalletTradesAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	for _, w := range pickWallets(r)[:4] {
		var cond string
		for _, qs := range []string{"", "condition_id="} {
			target := "/v1/predmkt/wallets/" + w + "/trades?limit=50"
			if qs != "" {
				target += "&" + qs + cond
			}
			pages := pageAll(t, h, target, func(p *query.PredmktWalletTradesPage) *string { return p.NextCursor })
			var got []query.PredmktWalletFill
			for _, p := range pages {
				got = append(got, p.Trades...)
			}
			var want []dFill
			for _, f := range r.fills {
				if f.wallet == w && (qs == "" || f.cond == cond) {
					want = append(want, f)
				}
			}
			slices.SortFunc(want, func(a, b dFill) int {
				return -cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.seq, b.seq), cmp.Compare(a.token, b.token))
			})
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d fills, oracle %d", w, qs, len(got), len(want))
			}
			for i, g := range got {
				f := want[i]
				if g.TradeID != f.id || g.Role != f.role || g.Side != f.side || g.Price != f.price || g.Size != f.size ||
					g.ConditionID != f.cond || g.Title != r.markets[f.cond].title || g.Outcome != r.markets[f.cond].outcomes[f.outcome] {
					t.Fatalf("%s row %d: %+v, oracle %+v", w, i, g, f)
				}
			}
			cond = want[len(want)/2].cond
		}
	}
}
