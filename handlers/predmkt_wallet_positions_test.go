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

// TestPredmktWalletPositionsAgainstOracle: every position (paged with nextCursor,
// most recently traded first) equals a plain-Go netting of the wallet's raw fills:
// shares, USD in and out, cost basis, average entry, status (open, settled, void),
// realized PnL only at a valid resolution (sells minus buys plus 1 per winning share),
// and unrealized PnL of open positions at the latest recorded mid.
func TestPredmktWalletPositionsAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	sawVoid, sawSettled, sawOpen, sawShort := false, false, false, false
	for _, w := range pickWallets(r) {
		pages := pageAll(t, h, "/v1/predmkt/wallets/"+w+"/positions?limit=7", func(p *query.PredmktPositionsPage) *string { return p.NextCursor })
		var got []query.PredmktPosition
		for _, p := range pages {
			got = append(got, p.Positions...)
		}
		type pos struct {
			tok, cond                      string
			outcome                        int
			buySh, sellSh, buyUSD, sellUSD int64
			n, first, last                 int64
		}
		m := map[string]*pos{}
		for _, f := range r.fills {
			if f.wallet != w || f.ts > now {
				continue
			}
			p := m[f.token]
			if p == nil {
				p = &pos{tok: f.token, cond: f.cond, outcome: f.outcome, first: f.ts}
				m[f.token] = p
			}
			p.n++
			p.first, p.last = min(p.first, f.ts), max(p.last, f.ts)
			if f.side == "BUY" {
				p.buySh += dMicro(f.size)
				p.buyUSD += dMicro(f.usd)
			} else {
				p.sellSh += dMicro(f.size)
				p.sellUSD += dMicro(f.usd)
			}
		}
		want := make([]*pos, 0, len(m))
		var toks []string
		for _, p := range m {
			want = append(want, p)
			toks = append(toks, p.tok)
		}
		slices.SortFunc(want, func(a, b *pos) int { return cmp.Or(cmp.Compare(b.last, a.last), cmp.Compare(a.tok, b.tok)) })
		mids := oracleMids(t, q, now, toks...)
		if len(got) != len(want) {
			t.Fatalf("%s: %d positions, oracle %d", w, len(got), len(want))
		}
		for i, g := range got {
			p := want[i]
			net, cash := p.buySh-p.sellSh, p.sellUSD-p.buyUSD
			st := map[string]string{"open": "open", "resolved": "settled", "invalid": "void"}[r.status(p.cond, now)]
			var realized float64
			var value, unreal, mid *float64
			switch st {
			case "settled":
				pay := int64(0)
				if r.res[p.cond].winner == p.outcome {
					pay = net
				}
				realized = cents(cash + pay)
				v := cents(pay)
				value = &v
				sawSettled = true
			case "open":
				sawOpen = true
				if x, ok := mids[p.tok]; ok {
					md, v, u := query.Round(x, 6), query.Round(float64(net)/1e6*x, 2), query.Round(float64(cash)/1e6+float64(net)/1e6*x, 2)
					mid, value, unreal = &md, &v, &u
				}
			case "void":
				sawVoid = true
			}
			if net < 0 {
				sawShort = true
			}
			if g.TokenID != p.tok || g.ConditionID != p.cond || g.OutcomeIndex != p.outcome || g.Status != st ||
				g.Shares != query.Round(float64(net)/1e6, 6) || g.BuyUSD != cents(p.buyUSD) || g.SellUSD != cents(p.sellUSD) ||
				g.CostBasisUSD != cents(-cash) || g.RealizedPnLUSD != realized || jsonOf(g.ValueUSD) != jsonOf(value) ||
				jsonOf(g.UnrealizedPnLUSD) != jsonOf(unreal) || jsonOf(g.Mid) != jsonOf(mid) || g.Fills != p.n ||
				g.FirstTradeTS != isoMs(p.first) || g.LastTradeTS != isoMs(p.last) {
				t.Fatalf("%s position %d: %s, oracle %+v (status %s, realized %v, value %v, unrealized %v)", w, i, jsonOf(g), *p, st, realized, jsonOf(value), jsonOf(unreal))
			}
			if st == "void" && (g.Won != nil || g.RealizedPnLUSD != 0) {
				t.Fatalf("%s: a void position settles nothing: %s", w, jsonOf(g))
			}
		}
		// The status filter keeps exactly the positions of that status.
		for _, st := range query.PositionStatuses {
			var page query.PredmktPositionsPage
			getJSON(t, h, "/v1/predmkt/wallets/"+w+"/positions?limit=500&status="+st, &page)
			n := 0
			for _, g := range got {
				if g.Status == st {
					n++
				}
			}
			if len(page.Positions) != n {
				t.Fatalf("%s status=%s: %d positions, oracle %d", w, st, len(page.Positions), n)
			}
		}
	}
	if !sawVoid || !sawSettled || !sawOpen || !sawShort {
		t.Errorf("the wallets checked lack a case: void %v, settled %v, open %v, short %v", sawVoid, sawSettled, sawOpen, sawShort)
	}
}

// TestPredmktWalletPositionsRules: an unknown wallet has no positions (200, []); a
// cursor resent for another wallet or status is 400.
func TestPredmktWalletPositionsRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	w := pickWallets(readDRaw(t, q))[0]
	var first query.PredmktPositionsPage
	getJSON(t, h, "/v1/predmkt/wallets/"+w+"/positions?limit=1", &first)
	if first.NextCursor == nil {
		t.Fatal("no second page")
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"an unknown wallet has no positions", "/v1/predmkt/wallets/0x" + strings.Repeat("0", 40) + "/positions", 200,
			`{"wallet":"0x0000000000000000000000000000000000000000","positions":[],"nextCursor":null}`},
		{"a cursor resent with another status is 400", "/v1/predmkt/wallets/" + w + "/positions?limit=1&status=open&cursor=" + *first.NextCursor, 400,
			`{"error":"cursor was issued for different filter parameters: resend the same filters with it, or drop the cursor"}`},
		{"unknown status is 400", "/v1/predmkt/wallets/" + w + "/positions?status=closed", 400, `{"error":"status must be one of all, open, settled, void"}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
