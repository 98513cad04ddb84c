package handlers_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

type rawQuote struct {
	localTS, seq int64
	mid          float64
}

// readMids returns each token's latest recorded mid at or before now (local_ts).
func readMids(t *testing.T, q *query.Queries, now int64) map[string]float64 {
	rows, err := q.DB().QueryContext(context.Background(),
		"SELECT token_id, local_ts, seq, best_bid, best_ask FROM predmkt_book_events WHERE best_bid > 0 AND best_ask > 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	last := map[string]rawQuote{}
	for rows.Next() {
		var tok string
		var r rawQuote
		var bid, ask float64
		if err := rows.Scan(&tok, &r.localTS, &r.seq, &bid, &ask); err != nil {
			t.Fatal(err)
		}
		if r.localTS > now {
			continue
		}
		r.mid = (bid + ask) / 2
		if l, ok := last[tok]; !ok || r.localTS > l.localTS || (r.localTS == l.localTS && r.seq > l.seq) {
			last[tok] = r
		}
	}
	out := map[string]float64{}
	for k, v := range last {
		out[k] = v.mid
	}
	return out
}

func smartTS(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") }

func micro(x float64) int64 { return int64(math.Round(x * 1e6)) }

// oracleFlows computes mode=flows in plain Go.
func oracleFlows(r *pmRaw, board map[string]map[string]*oracleEntry, mids map[string]float64, cat string, hours int64, limit int, now int64) []query.SmartMoneyFlowRow {
	cohort := oracleCohort(board, cat)
	type agg struct {
		wallets   map[string]bool
		buy, sell int64
		n, last   int64
	}
	per := map[string]*agg{}
	for _, f := range r.fills {
		if !cohort[f.wallet] || f.ts < now-hours*3_600_000 || f.ts > now {
			continue
		}
		if c, ok := r.category[f.cond]; !ok || (cat != "all" && c != cat) {
			continue
		}
		a := per[f.cond]
		if a == nil {
			a = &agg{wallets: map[string]bool{}}
			per[f.cond] = a
		}
		a.wallets[f.wallet] = true
		if f.side == "BUY" {
			a.buy += micro(f.usd)
		} else {
			a.sell += micro(f.usd)
		}
		a.n++
		a.last = max(a.last, f.ts)
	}
	out := []query.SmartMoneyFlowRow{}
	for c, a := range per {
		b, s := query.Round(float64(a.buy)/1e6, 2), query.Round(float64(a.sell)/1e6, 2)
		row := query.SmartMoneyFlowRow{ConditionID: c, Title: r.title[c][0], Slug: r.title[c][1], SmartWallets: int64(len(a.wallets)),
			BuyInflow: b, SellOutflow: s, NetInflow: query.Round(b-s, 2), Trades: a.n, LastTS: smartTS(a.last)}
		if m, ok := mids[r.yesToken[c]]; ok {
			m = query.Round(m, 6)
			row.YesMid = &m
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b query.SmartMoneyFlowRow) int {
		if c := cmp.Compare(b.NetInflow, a.NetInflow); c != 0 {
			return c
		}
		return cmp.Compare(a.ConditionID, b.ConditionID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// oracleMispricings computes mode=mispricings in plain Go.
func oracleMispricings(r *pmRaw, board map[string]map[string]*oracleEntry, mids map[string]float64, cat string, hours int64, limit int, now int64) []query.SmartMoneyMispricingRow {
	cohort := oracleCohort(board, cat)
	type side struct {
		wallets   map[string]bool
		usd, size int64
		last      int64
		token     string
	}
	per := map[string]*[2]side{}
	for _, f := range r.fills {
		if !cohort[f.wallet] || f.side != "BUY" || f.ts < now-hours*3_600_000 || f.ts > now {
			continue
		}
		if c, ok := r.category[f.cond]; !ok || (cat != "all" && c != cat) {
			continue
		}
		m := per[f.cond]
		if m == nil {
			m = &[2]side{{wallets: map[string]bool{}}, {wallets: map[string]bool{}}}
			per[f.cond] = m
		}
		s := &m[f.outcome]
		s.wallets[f.wallet] = true
		s.usd += micro(f.usd)
		s.size += micro(f.size)
		s.last = max(s.last, f.ts)
		s.token = f.token
	}
	out := []query.SmartMoneyMispricingRow{}
	for c, m := range per {
		total := query.Round(float64(m[0].usd+m[1].usd)/1e6, 2)
		i := 0
		if m[1].usd > m[0].usd {
			i = 1
		}
		s := m[i]
		mid, ok := mids[s.token]
		if total < 500 || !ok {
			continue
		}
		avg, cur := query.Round(float64(s.usd)/float64(s.size), 6), query.Round(mid, 6)
		delta := query.Round(cur-avg, 6)
		if delta < 0.03 {
			continue
		}
		out = append(out, query.SmartMoneyMispricingRow{ConditionID: c, Title: r.title[c][0], Slug: r.title[c][1],
			SmartWallets: int64(len(s.wallets)), LastBuyTS: smartTS(s.last), TotalBuyValue: total, Side: []string{"YES", "NO"}[i],
			AvgBuyPrice: avg, CurrentMid: cur, Delta: delta, BuyValue: query.Round(float64(s.usd)/1e6, 2)})
	}
	slices.SortFunc(out, func(a, b query.SmartMoneyMispricingRow) int {
		if c := cmp.Compare(b.Delta, a.Delta); c != 0 {
			return c
		}
		if c := cmp.Compare(b.TotalBuyValue, a.TotalBuyValue); c != 0 {
			return c
		}
		return cmp.Compare(a.ConditionID, b.ConditionID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// TestPredmktSmartMoneyAgainstOracle: the per-category cohort, flows and mispricings
// equal the plain-Go oracle row by row for every category and several windows.
func TestPredmktSmartMoneyAgainstOracle(t *testing.T) {
	for name, dir := range pmLakes(t) {
		t.Run(name, func(t *testing.T) {
			q := openQueries(t, dir)
			h := (&handlers.API{Q: q}).Handler()
			now := testlake.Now().UnixMilli()
			raw := readPmRaw(t, q)
			board := oracleBoard(raw, now)
			mids := readMids(t, q, now)
			if len(oracleCohort(board, "all")) == 0 {
				t.Fatal("no cohort wallet: the rule is not exercised")
			}
			flows, misp := 0, 0
			for _, cat := range append([]string{"all"}, query.PredmktCategories...) {
				for _, hours := range []int64{1, 24, 168, 720} {
					target := fmt.Sprintf("/v1/predmkt/smart_money?category=%s&hours=%d&limit=20", cat, hours)
					var gotF []query.SmartMoneyFlowRow
					getJSON(t, h, target, &gotF)
					if g, w := jsonOf(gotF), jsonOf(oracleFlows(raw, board, mids, cat, hours, 20, now)); g != w {
						t.Fatalf("%s:\n got  %s\n want %s", target, g, w)
					}
					flows += len(gotF)
					var gotM []query.SmartMoneyMispricingRow
					getJSON(t, h, target+"&mode=mispricings", &gotM)
					if g, w := jsonOf(gotM), jsonOf(oracleMispricings(raw, board, mids, cat, hours, 20, now)); g != w {
						t.Fatalf("%s&mode=mispricings:\n got  %s\n want %s", target, g, w)
					}
					misp += len(gotM)
				}
			}
			if flows == 0 || misp == 0 {
				t.Fatalf("flows %d, mispricings %d rows: the comparison proves little", flows, misp)
			}
		})
	}
}

// TestPredmktSmartMoneyRules: SPEC §4.2 and §7 rules of /v1/predmkt/smart_money.
func TestPredmktSmartMoneyRules(t *testing.T) {
	f := randomPmFixture(3)
	// A market the cohort trades now but where no mid was ever recorded.
	now := testlake.Now()
	quiet := f.addMarket("Tech", now.Add(-24*time.Hour), nil)
	f.trade(now.Add(-time.Hour).UnixMilli(), quiet, 0, pmWallet(0), pmWallet(11), "BUY", 0.5, 4000)
	q := openQueries(t, f.write(t))
	h := (&handlers.API{Q: q}).Handler()
	t.Run("yes_mid is null when no mid is recorded", func(t *testing.T) {
		var rows []query.SmartMoneyFlowRow
		getJSON(t, h, "/v1/predmkt/smart_money?category=Tech&limit=20", &rows)
		found := false
		for _, r := range rows {
			if r.ConditionID == f.markets[quiet].cond {
				found = r.YesMid == nil
			} else if r.YesMid == nil {
				t.Fatalf("quoted market without mid: %+v", r)
			}
		}
		if !found {
			t.Fatalf("quiet market missing or with a mid: %+v", rows)
		}
	})
	t.Run("flows ordered by net_inflow descending", func(t *testing.T) {
		var rows []query.SmartMoneyFlowRow
		getJSON(t, h, "/v1/predmkt/smart_money?hours=720&limit=20", &rows)
		if len(rows) < 2 {
			t.Fatalf("%d rows", len(rows))
		}
		for i := 1; i < len(rows); i++ {
			if rows[i].NetInflow > rows[i-1].NetInflow {
				t.Fatalf("row %d: %v after %v", i, rows[i].NetInflow, rows[i-1].NetInflow)
			}
		}
	})
	t.Run("mispricings need 500 USD and a 0.03 move in the cohort's favour, ordered by delta", func(t *testing.T) {
		var rows []query.SmartMoneyMispricingRow
		getJSON(t, h, "/v1/predmkt/smart_money?mode=mispricings&hours=720&limit=20", &rows)
		if len(rows) == 0 {
			t.Fatal("no mispricing")
		}
		for i, r := range rows {
			if r.TotalBuyValue < 500 || r.Delta < 0.03 || math.Abs(r.CurrentMid-r.AvgBuyPrice-r.Delta) > 1e-6 || (r.Side != "YES" && r.Side != "NO") {
				t.Fatalf("%+v", r)
			}
			if i > 0 && (r.Delta > rows[i-1].Delta || (r.Delta == rows[i-1].Delta && r.TotalBuyValue > rows[i-1].TotalBuyValue)) {
				t.Fatalf("order at %d: %+v after %+v", i, r, rows[i-1])
			}
		}
	})
	t.Run("limit above 20 is capped at 20; default 10", func(t *testing.T) {
		// Widen the population: a window of 720 hours over every category.
		var all, def []query.SmartMoneyFlowRow
		getJSON(t, h, "/v1/predmkt/smart_money?hours=720&limit=500", &all)
		getJSON(t, h, "/v1/predmkt/smart_money?hours=720", &def)
		if len(all) > 20 || len(def) != min(10, len(all)) {
			t.Fatalf("limit=500: %d rows; default: %d rows", len(all), len(def))
		}
	})
	for _, tc := range []struct{ rule, query string }{
		{"unknown category returns [] not an error", "category=Weather"},
		{"category names are exact", "category=crypto"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			for _, mode := range []string{"flows", "mispricings"} {
				code, body := get(t, h, "/v1/predmkt/smart_money?mode="+mode+"&"+tc.query)
				if code != 200 || strings.TrimSpace(string(body)) != "[]" {
					t.Fatalf("%d %s", code, body)
				}
			}
		})
	}
	for _, tc := range []struct{ rule, query, body string }{
		{"hours below 1 is 400", "hours=0", `{"error":"hours must be between 1 and 720"}`},
		{"hours above 720 is 400", "hours=721", `{"error":"hours must be between 1 and 720"}`},
		{"category longer than 64 characters is 400", "category=" + strings.Repeat("x", 65), `{"error":"category is longer than 64 characters"}`},
		{"unknown mode is 400", "mode=whales", `{"error":"mode must be one of flows, mispricings"}`},
		{"unknown query parameter is 400", "window=24h", `{"error":"unknown query parameter \"window\""}`},
		{"limit must be positive", "limit=-3", `{"error":"limit must be at least 1"}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, body := get(t, h, "/v1/predmkt/smart_money?"+tc.query)
			if code != 400 || strings.TrimSpace(string(body)) != tc.body {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}
