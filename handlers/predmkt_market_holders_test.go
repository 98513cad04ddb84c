package handlers_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestPredmktMarketHoldersAgainstOracle: each outcome's holders are the wallets with a
// positive net position (buys minus sells over every fill), largest first with ties on
// address, with share of held, average buy price and fills as recomputed in plain Go.
func TestPredmktMarketHoldersAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	for _, c := range pickMarkets(r, now) {
		for _, limit := range []int{5, 100} {
			var got query.PredmktMarketHolders
			getJSON(t, h, fmt.Sprintf("/v1/predmkt/markets/%s/holders?limit=%d", c, limit), &got)
			type pos struct {
				wallet                string
				net, buyUSD, buySh, n int64
				last                  int64
			}
			per := [2]map[string]*pos{{}, {}}
			for _, f := range r.fills {
				if f.cond != c || f.ts > now {
					continue
				}
				p := per[f.outcome][f.wallet]
				if p == nil {
					p = &pos{wallet: f.wallet}
					per[f.outcome][f.wallet] = p
				}
				p.n++
				p.last = max(p.last, f.ts)
				if f.side == "BUY" {
					p.net += dMicro(f.size)
					p.buyUSD += dMicro(f.usd)
					p.buySh += dMicro(f.size)
				} else {
					p.net -= dMicro(f.size)
				}
			}
			if len(got.Outcomes) != 2 {
				t.Fatalf("%s: %d outcomes", c, len(got.Outcomes))
			}
			for k, o := range got.Outcomes {
				var held []*pos
				total := int64(0)
				for _, p := range per[k] {
					if p.net > 0 {
						held = append(held, p)
						total += p.net
					}
				}
				slices.SortFunc(held, func(a, b *pos) int { return cmp.Or(cmp.Compare(b.net, a.net), cmp.Compare(a.wallet, b.wallet)) })
				if o.HoldersTotal != int64(len(held)) || (len(held) > 0 && o.SharesHeld != query.Round(float64(total)/1e6, 6)) {
					t.Fatalf("%s outcome %d: %d holders (%v), oracle %d (%d)", c, k, o.HoldersTotal, o.SharesHeld, len(held), total)
				}
				if len(held) > limit {
					held = held[:limit]
				}
				if len(o.Holders) != len(held) {
					t.Fatalf("%s outcome %d: %d rows, oracle %d", c, k, len(o.Holders), len(held))
				}
				for i, g := range o.Holders {
					p := held[i]
					var avg *float64
					if p.buySh > 0 {
						a := query.Round(float64(p.buyUSD)/float64(p.buySh), 6)
						avg = &a
					}
					if g.Rank != i+1 || g.Wallet != p.wallet || g.Shares != query.Round(float64(p.net)/1e6, 6) ||
						g.ShareOfHeld != query.Round(float64(p.net)/float64(total), 6) || jsonOf(g.AvgBuyPrice) != jsonOf(avg) ||
						g.Fills != p.n || g.LastTradeTS != isoMs(p.last) || g.Pseudonym != r.profile[p.wallet][0] {
						t.Fatalf("%s outcome %d row %d: %+v, oracle %+v", c, k, i, g, *p)
					}
				}
			}
		}
	}
}

// TestPredmktMarketHoldersRules: limit above 100 is served at 100; limit 0 and an
// unknown market are refused.
func TestPredmktMarketHoldersRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	c := pickMarkets(readDRaw(t, q), testlake.Now().UnixMilli())[0]
	var capped, hundred query.PredmktMarketHolders
	getJSON(t, h, "/v1/predmkt/markets/"+c+"/holders?limit=5000", &capped)
	getJSON(t, h, "/v1/predmkt/markets/"+c+"/holders?limit=100", &hundred)
	if jsonOf(capped) != jsonOf(hundred) {
		t.Errorf("limit above 100 differs from limit=100")
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"limit must be positive", "/v1/predmkt/markets/" + c + "/holders?limit=0", 400, `{"error":"limit must be at least 1"}`},
		{"an unknown market is 404", "/v1/predmkt/markets/0x" + strings.Repeat("cd", 32) + "/holders", 404, `{"error":"not found"}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
