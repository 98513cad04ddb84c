package handlers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestPredmktWalletPnLAgainstOracle: the daily series equals a plain-Go recomputation
// (per-market PnL summed by UTC resolution day, invalid resolutions excluded, one entry
// per day ending today), and its last cumulative figure equals the profile's lifetime
// realized PnL, overall and per category.
func TestPredmktWalletPnLAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Copy(t)) // the profile builds the board into the lake
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now()
	for _, w := range pickWallets(r) {
		type mk struct {
			cash int64
			net  [2]int64
		}
		per := map[string]*mk{}
		for _, f := range r.fills {
			if f.wallet != w || f.ts > now.UnixMilli() {
				continue
			}
			m := per[f.cond]
			if m == nil {
				m = &mk{}
				per[f.cond] = m
			}
			if f.side == "BUY" {
				m.cash -= dMicro(f.usd)
				m.net[f.outcome] += dMicro(f.size)
			} else {
				m.cash += dMicro(f.usd)
				m.net[f.outcome] -= dMicro(f.size)
			}
		}
		var prof query.PredmktWalletProfile
		getJSON(t, h, "/v1/predmkt/wallets/"+w, &prof)
		lifetime := map[string]float64{"all": prof.Overall.RealizedPnLUSD}
		for _, c := range prof.Categories {
			lifetime[c.Category] = c.RealizedPnLUSD
		}
		for _, cat := range append([]string{"all"}, query.PredmktCategories...) {
			for _, days := range []int{1, 7, 30} {
				var got query.PredmktWalletPnL
				getJSON(t, h, fmt.Sprintf("/v1/predmkt/wallets/%s/pnl?days=%d&category=%s", w, days, cat), &got)
				today := now.Truncate(24 * time.Hour)
				start := today.AddDate(0, 0, 1-days)
				day, n := map[string]int64{}, map[string]int64{}
				var cum int64
				for c, m := range per {
					x, ok := r.res[c]
					if !ok || x.invalid || x.ts > now.UnixMilli() || cat != "all" && r.markets[c].category != cat {
						continue
					}
					pnl := m.cash + m.net[x.winner]
					if time.UnixMilli(x.ts).Before(start) {
						cum += pnl
						continue
					}
					d := query.Date(time.UnixMilli(x.ts))
					day[d] += pnl
					n[d]++
				}
				if len(got.Series) != days {
					t.Fatalf("%s %s days=%d: %d entries", w, cat, days, len(got.Series))
				}
				for i, e := range got.Series {
					d := query.Date(start.AddDate(0, 0, i))
					cum += day[d]
					if e.Date != d || e.RealizedPnLUSD != cents(day[d]) || e.CumulativePnLUSD != cents(cum) || e.ResolvedMarkets != n[d] {
						t.Fatalf("%s %s days=%d %s: %+v, oracle %v %v %d", w, cat, days, d, e, cents(day[d]), cents(cum), n[d])
					}
				}
				if last := got.Series[days-1].CumulativePnLUSD; last != lifetime[cat] {
					t.Fatalf("%s %s: cumulative %v, profile lifetime realized %v", w, cat, last, lifetime[cat])
				}
			}
		}
	}
}

// TestPredmktWalletPnLRules: days above 365 is served at 365; days 0 is 400.
func TestPredmktWalletPnLRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	w := "0x" + strings.Repeat("0", 40)
	var got query.PredmktWalletPnL
	getJSON(t, h, "/v1/predmkt/wallets/"+w+"/pnl?days=5000", &got)
	if len(got.Series) != 365 || got.Days != 365 || got.Series[364].Date != query.Date(testlake.Now()) {
		t.Errorf("days above 365: %d entries, days %d", len(got.Series), got.Days)
	}
	for _, e := range got.Series {
		if e.RealizedPnLUSD != 0 || e.CumulativePnLUSD != 0 {
			t.Fatalf("a wallet with no fill has PnL: %+v", e)
		}
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"days below 1 is 400", "/v1/predmkt/wallets/" + w + "/pnl?days=0", 400, `{"error":"days must be at least 1"}`},
		{"unknown category is 400", "/v1/predmkt/wallets/" + w + "/pnl?category=Weather", 400, `{"error":"category must be one of all, Crypto, Sports, Politics, Pop-Culture, Tech"}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
