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

// pickMarkets returns markets to check: the busiest, an invalid one and a resolved one.
func pickMarkets(r *dRaw, now int64) []string {
	n := map[string]int{}
	for _, f := range r.fills {
		n[f.cond]++
	}
	var out []string
	busiest := ""
	for c := range n {
		if busiest == "" || n[c] > n[busiest] || n[c] == n[busiest] && c < busiest {
			busiest = c
		}
	}
	out = append(out, busiest)
	for _, want := range []string{"invalid", "resolved"} {
		var cs []string
		for c := range n {
			if r.status(c, now) == want {
				cs = append(cs, c)
			}
		}
		slices.Sort(cs)
		if len(cs) > 0 {
			out = append(out, cs[0])
		}
	}
	return out
}

// TestPredmktMarketStatsAgainstOracle: per-outcome volume, shares, trades, taker buy
// and sell, VWAP, open/high/low/last, window figures, holders and shares held, and
// distinct traders equal a plain-Go recomputation from the raw fills.
func TestPredmktMarketStatsAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	for _, c := range pickMarkets(r, now) {
		for _, hours := range []int64{24, 720} {
			var got query.PredmktMarketStats
			getJSON(t, h, fmt.Sprintf("/v1/predmkt/markets/%s/stats?hours=%d", c, hours), &got)
			ws := now - hours*3_600_000
			type acc struct {
				vol, sh, buy, sell, volw, n, nw int64
				fills                           []dFill
				net                             map[string]int64
			}
			per := [2]*acc{{net: map[string]int64{}}, {net: map[string]int64{}}}
			traders, tradersW := map[string]bool{}, map[string]bool{}
			for _, f := range r.fills {
				if f.cond != c || f.ts > now {
					continue
				}
				a := per[f.outcome]
				traders[f.wallet] = true
				if f.ts >= ws {
					tradersW[f.wallet] = true
				}
				if f.side == "BUY" {
					a.net[f.wallet] += dMicro(f.size)
				} else {
					a.net[f.wallet] -= dMicro(f.size)
				}
				if f.role != "taker" {
					continue
				}
				a.vol += dMicro(f.usd)
				a.sh += dMicro(f.size)
				a.n++
				if f.side == "BUY" {
					a.buy += dMicro(f.usd)
				} else {
					a.sell += dMicro(f.usd)
				}
				if f.ts >= ws {
					a.volw += dMicro(f.usd)
					a.nw++
				}
				a.fills = append(a.fills, f)
			}
			if got.Traders != int64(len(traders)) || got.TradersWindow != int64(len(tradersW)) || len(got.Outcomes) != 2 ||
				got.Status != r.status(c, now) || got.WindowHours != hours {
				t.Fatalf("%s: traders %d/%d (oracle %d/%d), %d outcomes", c, got.Traders, got.TradersWindow, len(traders), len(tradersW), len(got.Outcomes))
			}
			for k, o := range got.Outcomes {
				a := per[k]
				holders, held := int64(0), int64(0)
				for _, v := range a.net {
					if v > 0 {
						holders++
						held += v
					}
				}
				if o.OutcomeIndex != k || o.VolumeUSD != cents(a.vol) || o.VolumeShares != query.Round(float64(a.sh)/1e6, 6) ||
					o.Trades != a.n || o.TakerBuyUSD != cents(a.buy) || o.TakerSellUSD != cents(a.sell) ||
					o.VolumeWindowUSD != cents(a.volw) || o.TradesWindow != a.nw || o.Holders != holders ||
					o.SharesHeld != query.Round(float64(held)/1e6, 6) {
					t.Fatalf("%s outcome %d (hours %d): %+v", c, k, hours, o)
				}
				if len(a.fills) == 0 {
					if o.VWAP != nil || o.Open != nil || o.LastPrice != nil {
						t.Fatalf("%s outcome %d: prices without trades", c, k)
					}
					continue
				}
				slices.SortFunc(a.fills, func(x, y dFill) int { return cmp.Or(cmp.Compare(x.ts, y.ts), cmp.Compare(x.seq, y.seq)) })
				hi, lo := a.fills[0].price, a.fills[0].price
				for _, f := range a.fills {
					hi, lo = max(hi, f.price), min(lo, f.price)
				}
				if *o.VWAP != query.Round(float64(a.vol)/float64(a.sh), 6) || *o.Open != a.fills[0].price ||
					*o.LastPrice != a.fills[len(a.fills)-1].price || *o.High != hi || *o.Low != lo ||
					*o.FirstTradeTS != isoMs(a.fills[0].ts) || *o.LastTradeTS != isoMs(a.fills[len(a.fills)-1].ts) {
					t.Fatalf("%s outcome %d prices: %+v", c, k, o)
				}
			}
			if got.VolumeUSD != cents(per[0].vol+per[1].vol) || got.Trades != per[0].n+per[1].n {
				t.Fatalf("%s totals: %+v", c, got)
			}
		}
	}
}

// TestPredmktMarketStatsRules: hours 1 to 720 (outside is 400), unknown market 404.
func TestPredmktMarketStatsRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	c := pickMarkets(readDRaw(t, q), testlake.Now().UnixMilli())[0]
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"hours above 720 is 400", "/v1/predmkt/markets/" + c + "/stats?hours=721", 400, `{"error":"hours must be between 1 and 720"}`},
		{"hours below 1 is 400", "/v1/predmkt/markets/" + c + "/stats?hours=0", 400, `{"error":"hours must be between 1 and 720"}`},
		{"an unknown market is 404", "/v1/predmkt/markets/0x" + strings.Repeat("ab", 32) + "/stats", 404, `{"error":"not found"}`},
		{"unknown query parameter is 400", "/v1/predmkt/markets/" + c + "/stats?window=1d", 400, `{"error":"unknown query parameter \"window\""}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
