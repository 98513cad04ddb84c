package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// Raw rows of the prediction-market tables, read with plain SELECTs; every figure of
// the oracles below is computed from them in Go.
type catRawMarket struct {
	cond, question, category, asset, tenor string
	created, end                           time.Time
	closed                                 bool
}

type catRawResolution struct {
	win     sql.NullInt64
	invalid bool
	ts      int64 // resolved_ts, epoch ms
}

type catRawFill struct {
	wallet, cond, role, side string
	outcome                  int
	ts                       int64
	usd, size                float64
}

type catRaw struct {
	markets []catRawMarket
	res     map[string]catRawResolution
	fills   []catRawFill
	yes     map[string]string // condition -> outcome-0 token
}

func readCatRaw(t *testing.T, q *query.Queries) catRaw {
	t.Helper()
	ctx := context.Background()
	db := q.DB()
	r := catRaw{res: map[string]catRawResolution{}, yes: map[string]string{}}
	rows, err := db.QueryContext(ctx, "SELECT condition_id, question, category, family_asset, family_tenor, created_ts, end_ts, closed FROM predmkt_markets")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m catRawMarket
		if err := rows.Scan(&m.cond, &m.question, &m.category, &m.asset, &m.tenor, &m.created, &m.end, &m.closed); err != nil {
			t.Fatal(err)
		}
		r.markets = append(r.markets, m)
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT condition_id, winning_index, invalid, epoch_ms(resolved_ts) FROM predmkt_resolutions")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		var x catRawResolution
		if err := rows.Scan(&c, &x.win, &x.invalid, &x.ts); err != nil {
			t.Fatal(err)
		}
		r.res[c] = x
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT wallet, condition_id, role, side, outcome_index, ts, usd, size FROM predmkt_trades")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f catRawFill
		if err := rows.Scan(&f.wallet, &f.cond, &f.role, &f.side, &f.outcome, &f.ts, &f.usd, &f.size); err != nil {
			t.Fatal(err)
		}
		r.fills = append(r.fills, f)
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT condition_id, token_id FROM predmkt_tokens WHERE outcome_index = 0")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, tok string
		if err := rows.Scan(&c, &tok); err != nil {
			t.Fatal(err)
		}
		r.yes[c] = tok
	}
	rows.Close()
	if len(r.markets) == 0 || len(r.fills) == 0 {
		t.Fatalf("tiny lake: %d markets, %d fills", len(r.markets), len(r.fills))
	}
	return r
}

func catMicro(x float64) int64 { return int64(math.Round(x * 1e6)) }

func catCents(u int64) float64 { return query.Round(float64(u)/1e6, 2) }

// validWinner is the winning outcome of a market validly resolved at or before now
// (epoch ms): a later resolution is not yet known (point in time).
func (r catRaw) validWinner(cond string, now int64) (int, bool) {
	x, ok := r.res[cond]
	if !ok || x.ts > now || x.invalid || !x.win.Valid {
		return 0, false
	}
	return int(x.win.Int64), true
}

// categoriesOracle recomputes /v1/predmkt/categories at clock now.
func categoriesOracle(r catRaw, now int64) []query.CategoryRow {
	cat := map[string]string{}
	rows := map[string]*query.CategoryRow{}
	for _, c := range query.PredmktCategories {
		rows[c] = &query.CategoryRow{Category: c}
	}
	for _, m := range r.markets {
		cat[m.cond] = m.category
		row := rows[m.category]
		if row == nil || m.created.UnixMilli() > now {
			continue // not yet listed at the clock
		}
		row.Markets++
		if !(m.closed && m.end.UnixMilli() <= now) {
			row.OpenMarkets++
		}
		if _, ok := r.validWinner(m.cond, now); ok {
			row.ResolvedMarkets++
		}
		if x, ok := r.res[m.cond]; ok && x.invalid && x.ts <= now {
			row.InvalidMarkets++
		}
	}
	type acc struct {
		v24, v7, vAll int64
		last          int64
		t24, tAll     map[string]bool
	}
	accs := map[string]*acc{}
	// Smart-money cohort, per (category, wallet), over every fill of the wallet.
	type wm struct{ cash, net0, net1, vol int64 }
	perMarket := map[[3]string]*wm{} // category, wallet, condition
	for _, f := range r.fills {
		if f.ts > now {
			continue // not yet known at the clock (the board too counts fills up to its hour)
		}
		c := cat[f.cond]
		k := [3]string{c, f.wallet, f.cond}
		w := perMarket[k]
		if w == nil {
			w = &wm{}
			perMarket[k] = w
		}
		u, s := catMicro(f.usd), catMicro(f.size)
		w.vol += u
		if f.side == "SELL" {
			w.cash += u
			s = -s
		} else {
			w.cash -= u
		}
		if f.outcome == 0 {
			w.net0 += s
		} else {
			w.net1 += s
		}
		if f.ts > now {
			continue
		}
		a := accs[c]
		if a == nil {
			a = &acc{t24: map[string]bool{}, tAll: map[string]bool{}}
			accs[c] = a
		}
		a.tAll[f.wallet] = true
		if f.ts >= now-86_400_000 {
			a.t24[f.wallet] = true
		}
		if f.ts > a.last {
			a.last = f.ts
		}
		if f.role != "taker" {
			continue
		}
		a.vAll += u
		if f.ts >= now-604_800_000 {
			a.v7 += u
		}
		if f.ts >= now-86_400_000 {
			a.v24 += u
			rows[c].Trades24h++
		}
	}
	type ws struct {
		pnl, vol int64
		resolved int
	}
	wallets := map[[2]string]*ws{}
	for k, w := range perMarket {
		x := wallets[[2]string{k[0], k[1]}]
		if x == nil {
			x = &ws{}
			wallets[[2]string{k[0], k[1]}] = x
		}
		x.vol += w.vol
		if win, ok := r.validWinner(k[2], now); ok {
			x.resolved++
			x.pnl += w.cash + map[int]int64{0: w.net0, 1: w.net1}[win]
		}
	}
	for k, x := range wallets {
		if catCents(x.pnl) >= 1000 && x.resolved >= 5 && catCents(x.vol) >= 5000 && rows[k[0]] != nil {
			rows[k[0]].SmartMoneyWallets++
		}
	}
	out := []query.CategoryRow{}
	for _, c := range query.PredmktCategories {
		row := rows[c]
		if a := accs[c]; a != nil {
			row.Volume24hUSD, row.Volume7dUSD, row.VolumeAllUSD = catCents(a.v24), catCents(a.v7), catCents(a.vAll)
			row.Traders24h, row.TradersAll = int64(len(a.t24)), int64(len(a.tAll))
			s := query.ISOMillis(time.UnixMilli(a.last))
			row.LastTradeTS = &s
		}
		out = append(out, *row)
	}
	return out
}

func catDecode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// TestPredmktCategoriesAgainstOracle: every figure of every category equals a plain-Go
// recomputation from the raw markets, resolutions and fills (the smart-money cohort
// included: realized PnL with the winner paying 1 per share, invalid resolutions
// excluded), at the end of history and with the store clock pinned three days earlier
// (windows follow the store clock).
func TestPredmktCategoriesAgainstOracle(t *testing.T) {
	for _, back := range []time.Duration{0, 72 * time.Hour} {
		now := testlake.Now().Add(-back)
		q, err := query.Open(context.Background(), testlake.Copy(t), query.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		h := (&handlers.API{Q: q}).Handler()
		code, body := get(t, h, "/v1/predmkt/categories")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		got := catDecode[[]query.CategoryRow](t, body)
		want := categoriesOracle(readCatRaw(t, q), now.UnixMilli())
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("clock %s:\n got  %s\n want %s", now, gj, wj)
		}
		var cohort, v24 int64
		for _, r := range got {
			cohort += r.SmartMoneyWallets
			v24 += int64(r.Trades24h)
		}
		// Three days back the cohort can be empty: its figures count only fills and
		// resolutions known then (point in time); at the lake's end it is not.
		if (cohort == 0 && back == 0) || v24 == 0 {
			t.Fatalf("clock %s: the oracle compared nothing: cohort %d, trades_24h %d", now, cohort, v24)
		}
	}
}

// TestPredmktCategoriesRules: one row per category in SPEC's order; an unknown query
// parameter is 400 with an {"error": ...} body; the cohort count equals the smart_money
// route's cohort (the same board).
func TestPredmktCategoriesRules(t *testing.T) {
	q := openQueries(t, testlake.Copy(t))
	h := (&handlers.API{Q: q}).Handler()
	t.Run("one row per category in SPEC order", func(t *testing.T) {
		code, body := get(t, h, "/v1/predmkt/categories")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		got := catDecode[[]query.CategoryRow](t, body)
		var names []string
		for _, r := range got {
			names = append(names, r.Category)
			if r.Markets != 0 && r.OpenMarkets+r.ResolvedMarkets+r.InvalidMarkets > r.Markets {
				t.Errorf("%s: open %d + resolved %d + invalid %d > markets %d", r.Category, r.OpenMarkets, r.ResolvedMarkets, r.InvalidMarkets, r.Markets)
			}
		}
		if strings.Join(names, ",") != "Crypto,Sports,Politics,Pop-Culture,Tech" {
			t.Fatalf("categories %v", names)
		}
	})
	t.Run("unknown query parameter is 400", func(t *testing.T) {
		code, body := get(t, h, "/v1/predmkt/categories?window=24h")
		if code != http.StatusBadRequest || !strings.Contains(string(body), `"error":"unknown query parameter \"window\""`) {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("cohort is the board's smart-money cohort", func(t *testing.T) {
		b, err := q.PredmktBoard(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, body := get(t, h, "/v1/predmkt/categories")
		for _, r := range catDecode[[]query.CategoryRow](t, body) {
			var n int64
			for _, e := range b.Cats[r.Category] {
				if e.PnL >= 1000 && e.Resolved >= 5 && e.Volume >= 5000 {
					n++
				}
			}
			if n != r.SmartMoneyWallets {
				t.Errorf("%s: smart_money_wallets %d, board cohort %d", r.Category, r.SmartMoneyWallets, n)
			}
		}
	})
}

// familiesOracle recomputes /v1/predmkt/families at clock now, from raw rows and the
// raw tape (mids).
func familiesOracle(t *testing.T, q *query.Queries, r catRaw, now time.Time, asset, tenor string) []query.FamilyRow {
	t.Helper()
	rank := map[string]int{"15m": 0, "1h": 1, "1d": 2}
	rows := map[[2]string]*query.FamilyRow{}
	var curEnd = map[[2]string]catRawMarket{}
	fam := map[string][2]string{}
	for _, m := range r.markets {
		if m.asset == "" || m.tenor == "" || (asset != "" && m.asset != asset) || (tenor != "" && m.tenor != tenor) || m.created.After(now) {
			continue
		}
		k := [2]string{m.asset, m.tenor}
		fam[m.cond] = k
		row := rows[k]
		if row == nil {
			row = &query.FamilyRow{Asset: m.asset, Tenor: m.tenor}
			rows[k] = row
		}
		row.Markets++
		if w, ok := r.validWinner(m.cond, now.UnixMilli()); ok {
			row.Resolved++
			if w == 0 {
				row.UpWins++
			} else {
				row.DownWins++
			}
		}
		if !m.created.After(now) && m.end.After(now) { // open then: its end has not passed
			c, ok := curEnd[k]
			if !ok || m.end.Before(c.end) || (m.end.Equal(c.end) && m.cond < c.cond) {
				curEnd[k] = m
			}
		}
	}
	vol := map[[2]string]int64{}
	nowMs := now.UnixMilli()
	for _, f := range r.fills {
		k, ok := fam[f.cond]
		if ok && f.role == "taker" && f.ts >= nowMs-86_400_000 && f.ts <= nowMs {
			vol[k] += catMicro(f.usd)
		}
	}
	var out []query.FamilyRow
	for k, row := range rows {
		row.Volume24hUSD = catCents(vol[k])
		if m, ok := curEnd[k]; ok {
			cm := &query.FamilyMarket{ConditionID: m.cond, Question: m.question, EndTS: query.ISOMillis(m.end)}
			cm.YesMid = catTapeMid(t, q, r.yes[m.cond], nowMs)
			row.CurrentMarket = cm
		}
		out = append(out, *row)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Asset != out[j].Asset {
			return out[i].Asset < out[j].Asset
		}
		return rank[out[i].Tenor] < rank[out[j].Tenor]
	})
	if out == nil {
		out = []query.FamilyRow{}
	}
	return out
}

// tapeMid is the mid of a token's latest tape event (by local_ts, seq) at or before
// now that carries both a best bid and a best ask; nil when none.
func catTapeMid(t *testing.T, q *query.Queries, tok string, now int64) *float64 {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(),
		"SELECT local_ts, seq, best_bid, best_ask FROM predmkt_book_events WHERE token_id = $1", tok)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var bestLT, bestSeq int64 = -1, -1
	var mid *float64
	for rows.Next() {
		var lt, seq int64
		var bid, ask float64
		if err := rows.Scan(&lt, &seq, &bid, &ask); err != nil {
			t.Fatal(err)
		}
		if lt > now || bid <= 0 || ask <= 0 {
			continue
		}
		if lt > bestLT || (lt == bestLT && seq > bestSeq) {
			bestLT, bestSeq = lt, seq
			m := query.Round((bid+ask)/2, 6)
			mid = &m
		}
	}
	return mid
}

// TestPredmktFamiliesAgainstOracle: every family row (counts, Up and Down wins, the
// current market and its mid, 24-hour volume) equals the plain-Go recomputation, with
// and without the asset and tenor filters, at three store clocks (at the end of
// history; a day earlier; two days later, when no family market is trading and
// current_market is null).
func TestPredmktFamiliesAgainstOracle(t *testing.T) {
	for _, shift := range []time.Duration{0, -24 * time.Hour, 48 * time.Hour} {
		now := testlake.Now().Add(shift)
		q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		h := (&handlers.API{Q: q}).Handler()
		raw := readCatRaw(t, q)
		current := 0
		for _, f := range []struct{ asset, tenor string }{{"", ""}, {"btc", ""}, {"", "1h"}, {"sol", "15m"}} {
			target := "/v1/predmkt/families?"
			if f.asset != "" {
				target += "asset=" + f.asset + "&"
			}
			if f.tenor != "" {
				target += "tenor=" + f.tenor
			}
			code, body := get(t, h, target)
			if code != 200 {
				t.Fatalf("%s: %d %s", target, code, body)
			}
			got := catDecode[[]query.FamilyRow](t, body)
			want := familiesOracle(t, q, raw, now, f.asset, f.tenor)
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Fatalf("clock %s %s:\n got  %s\n want %s", now, target, gj, wj)
			}
			if len(got) == 0 {
				t.Fatalf("clock %s %s: no family", now, target)
			}
			for _, r := range got {
				if r.CurrentMarket != nil {
					current++
				}
			}
		}
		switch {
		case shift == 0 && current == 0:
			t.Fatal("no family has a current market at the end of history")
		case shift > 0 && current != 0:
			t.Fatalf("two days after the last market ended, %d current markets", current)
		}
	}
}

// TestPredmktFamiliesRules: asset and tenor accept only the enumerations (400 with an
// {"error": ...} body naming them); an unknown query parameter is 400; tenors come
// shortest first within an asset.
func TestPredmktFamiliesRules(t *testing.T) {
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler()
	for _, tc := range []struct{ target, msg string }{
		{"/v1/predmkt/families?asset=doge", `"error":"asset must be one of btc, eth, sol"`},
		{"/v1/predmkt/families?tenor=5m", `"error":"tenor must be one of 15m, 1h, 1d"`},
		{"/v1/predmkt/families?coin=btc", `"error":"unknown query parameter \"coin\""`},
	} {
		t.Run("400 "+tc.target, func(t *testing.T) {
			code, body := get(t, h, tc.target)
			if code != http.StatusBadRequest || !strings.Contains(string(body), tc.msg) {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
	t.Run("tenors shortest first", func(t *testing.T) {
		_, body := get(t, h, "/v1/predmkt/families?asset=eth")
		var tenors []string
		for _, r := range catDecode[[]query.FamilyRow](t, body) {
			tenors = append(tenors, r.Tenor)
		}
		if strings.Join(tenors, ",") != "15m,1h,1d" {
			t.Fatalf("tenors %v", tenors)
		}
	})
}
