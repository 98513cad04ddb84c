package handlers_test

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// Raw rows of the designed prediction-market routes, read with simple SELECTs; every
// figure the tests compare is computed from them in plain Go.

type dFill struct {
	id, wallet, cond, token, role, side, tx string
	outcome                                 int
	ts, seq                                 int64
	price, size, usd                        float64
}

type dMarket struct {
	cond, title, slug, category, asset, tenor string
	created, end                              int64
	closed                                    bool
	tokens                                    [2]string
	outcomes                                  [2]string
}

type dRes struct {
	ts      int64
	winner  int // -1 when invalid
	invalid bool
}

type dRaw struct {
	fills   []dFill
	markets map[string]*dMarket
	tokCond map[string]string
	res     map[string]dRes
	profile map[string][2]string
}

func readDRaw(t *testing.T, q *query.Queries) *dRaw {
	t.Helper()
	ctx := context.Background()
	r := &dRaw{markets: map[string]*dMarket{}, tokCond: map[string]string{}, res: map[string]dRes{}, profile: map[string][2]string{}}
	scan := func(query string, each func(*sql.Rows) error) {
		rows, err := q.DB().QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scan("SELECT trade_id, wallet, condition_id, token_id, role, side, tx_hash, outcome_index, ts, seq, price, size, usd FROM predmkt_trades", func(rs *sql.Rows) error {
		var f dFill
		err := rs.Scan(&f.id, &f.wallet, &f.cond, &f.token, &f.role, &f.side, &f.tx, &f.outcome, &f.ts, &f.seq, &f.price, &f.size, &f.usd)
		r.fills = append(r.fills, f)
		return err
	})
	scan("SELECT condition_id, question, slug, category, coalesce(family_asset, ''), coalesce(family_tenor, ''), created_ts, end_ts, closed FROM predmkt_markets", func(rs *sql.Rows) error {
		m := &dMarket{}
		var c, e time.Time
		err := rs.Scan(&m.cond, &m.title, &m.slug, &m.category, &m.asset, &m.tenor, &c, &e, &m.closed)
		m.created, m.end = c.UnixMilli(), e.UnixMilli()
		r.markets[m.cond] = m
		return err
	})
	scan("SELECT condition_id, token_id, outcome_index, outcome FROM predmkt_tokens", func(rs *sql.Rows) error {
		var c, tok, name string
		var i int
		err := rs.Scan(&c, &tok, &i, &name)
		if m := r.markets[c]; m != nil {
			m.tokens[i], m.outcomes[i] = tok, name
		}
		r.tokCond[tok] = c
		return err
	})
	scan("SELECT condition_id, resolved_ts, winning_index, invalid FROM predmkt_resolutions", func(rs *sql.Rows) error {
		var c string
		var ts time.Time
		var w sql.NullInt64
		var x dRes
		err := rs.Scan(&c, &ts, &w, &x.invalid)
		x.ts, x.winner = ts.UnixMilli(), -1
		if w.Valid && !x.invalid {
			x.winner = int(w.Int64)
		} else {
			x.invalid = true
		}
		r.res[c] = x
		return err
	})
	scan("SELECT wallet, pseudonym, display_name FROM predmkt_profiles", func(rs *sql.Rows) error {
		var w, p, d string
		err := rs.Scan(&w, &p, &d)
		r.profile[w] = [2]string{p, d}
		return err
	})
	return r
}

// micro is a USD or share amount as exact integer micro-units, as the routes sum them.
func dMicro(x float64) int64 { return int64(math.Round(x * 1e6)) }

func cents(u int64) float64 { return query.Round(float64(u)/1e6, 2) }

func isoMs(ms int64) string { return query.ISOMillis(time.UnixMilli(ms)) }

// status is a market's state as of now: open, resolved or invalid.
func (r *dRaw) status(cond string, now int64) string {
	x, ok := r.res[cond]
	switch {
	case !ok || x.ts > now:
		return "open"
	case x.invalid:
		return "invalid"
	}
	return "resolved"
}

// marketOracle is a market's listing computed from raw rows.
type marketOracle struct {
	cond             string
	vol, vol24, n    int64
	last             int64
	lastPrice        [2]*float64
	lastKey          [2][2]int64
	status           string
	created, end     int64
	category, search string
}

func oracleMarkets(r *dRaw, now int64) map[string]*marketOracle {
	out := map[string]*marketOracle{}
	for c, m := range r.markets {
		out[c] = &marketOracle{cond: c, status: r.status(c, now), created: m.created, end: m.end, category: m.category,
			search: strings.ToLower(m.title + "\x00" + m.slug)}
	}
	for _, f := range r.fills {
		if f.role != "taker" || f.ts > now {
			continue
		}
		o := out[f.cond]
		o.vol += dMicro(f.usd)
		if f.ts >= now-86_400_000 {
			o.vol24 += dMicro(f.usd)
		}
		o.n++
		o.last = max(o.last, f.ts)
		k := [2]int64{f.ts, f.seq}
		if o.lastPrice[f.outcome] == nil || k[0] > o.lastKey[f.outcome][0] || k[0] == o.lastKey[f.outcome][0] && k[1] > o.lastKey[f.outcome][1] {
			p := f.price
			o.lastPrice[f.outcome], o.lastKey[f.outcome] = &p, k
		}
	}
	return out
}

func (o *marketOracle) key(sort string) int64 {
	switch sort {
	case "volume":
		return -o.vol
	case "volume_24h":
		return -o.vol24
	case "trades":
		return -o.n
	case "created":
		return -o.created
	}
	return o.end
}

// pageAll follows nextCursor from first until the last page and returns every page.
func pageAll[P any](t *testing.T, h http.Handler, first string, next func(*P) *string) []P {
	t.Helper()
	var pages []P
	target := first
	for range 10000 {
		var p P
		getJSON(t, h, target, &p)
		pages = append(pages, p)
		c := next(&p)
		if c == nil {
			return pages
		}
		sep := "?"
		if strings.Contains(first, "?") {
			sep = "&"
		}
		target = first + sep + "cursor=" + *c
	}
	t.Fatalf("%s: no last page", first)
	return nil
}

// TestPredmktMarketsAgainstOracle: for every sort key, paging with nextCursor visits
// every market once, in the sort order with ties on condition_id, and each row's
// figures equal a plain-Go recomputation from the raw rows.
func TestPredmktMarketsAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	or := oracleMarkets(r, now)
	for _, sort := range query.PredmktMarketSorts {
		pages := pageAll(t, h, "/v1/predmkt/markets?limit=7&sort="+sort, func(p *query.PredmktMarketsPage) *string { return p.NextCursor })
		var got []query.PredmktMarketRow
		for _, p := range pages {
			got = append(got, p.Markets...)
		}
		want := make([]*marketOracle, 0, len(or))
		for _, o := range or {
			want = append(want, o)
		}
		slices.SortFunc(want, func(a, b *marketOracle) int {
			return cmp.Or(cmp.Compare(a.key(sort), b.key(sort)), cmp.Compare(a.cond, b.cond))
		})
		if len(got) != len(want) {
			t.Fatalf("sort=%s: %d markets over %d pages, oracle %d", sort, len(got), len(pages), len(want))
		}
		for i, g := range got {
			o, m := want[i], r.markets[want[i].cond]
			if g.ConditionID != o.cond {
				t.Fatalf("sort=%s row %d: %s, oracle %s", sort, i, g.ConditionID, o.cond)
			}
			if g.VolumeUSD != cents(o.vol) || g.Volume24hUSD != cents(o.vol24) || g.Trades != o.n || g.Status != o.status ||
				g.Title != m.title || g.Category != m.category || g.FamilyAsset != m.asset || g.CreatedTS != isoMs(m.created) {
				t.Fatalf("sort=%s %s: %+v, oracle %+v", sort, o.cond, g.PredmktMarketInfo, *o)
			}
			if (o.n == 0) != (g.LastTradeTS == nil) || o.n > 0 && *g.LastTradeTS != isoMs(o.last) {
				t.Fatalf("%s: last_trade_ts %v, oracle %d", o.cond, g.LastTradeTS, o.last)
			}
			if len(g.Tokens) != 2 {
				t.Fatalf("%s: %d tokens", o.cond, len(g.Tokens))
			}
			for k, tok := range g.Tokens {
				if tok.OutcomeIndex != k || tok.TokenID != m.tokens[k] || tok.Outcome != m.outcomes[k] ||
					(tok.LastPrice == nil) != (o.lastPrice[k] == nil) || tok.LastPrice != nil && *tok.LastPrice != *o.lastPrice[k] {
					t.Fatalf("%s token %d: %+v", o.cond, k, tok)
				}
			}
			x := r.res[o.cond]
			if o.status == "resolved" {
				if g.WinningIndex == nil || *g.WinningIndex != x.winner || g.WinningOutcome == nil || *g.WinningOutcome != m.outcomes[x.winner] ||
					g.ResolvedTS == nil || *g.ResolvedTS != isoMs(x.ts) {
					t.Fatalf("%s: resolved market without its winner: %+v", o.cond, g.PredmktMarketInfo)
				}
			} else if g.WinningIndex != nil || g.WinningOutcome != nil {
				t.Fatalf("%s (%s): winner %v", o.cond, o.status, *g.WinningIndex)
			}
		}
	}
}

// TestPredmktMarketsFilters: every filter keeps exactly the markets the oracle keeps.
func TestPredmktMarketsFilters(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	now := testlake.Now().UnixMilli()
	or := oracleMarkets(r, now)
	for _, tc := range []struct {
		rule, qs string
		keep     func(m *dMarket, o *marketOracle) bool
	}{
		{"status=open lists markets without a resolution", "status=open", func(_ *dMarket, o *marketOracle) bool { return o.status == "open" }},
		{"status=resolved lists markets with a winner", "status=resolved", func(_ *dMarket, o *marketOracle) bool { return o.status == "resolved" }},
		{"status=invalid lists void resolutions", "status=invalid", func(_ *dMarket, o *marketOracle) bool { return o.status == "invalid" }},
		{"category keeps that category", "category=Sports", func(m *dMarket, _ *marketOracle) bool { return m.category == "Sports" }},
		{"asset keeps that crypto family", "asset=btc", func(m *dMarket, _ *marketOracle) bool { return m.asset == "btc" }},
		{"asset and tenor combine", "asset=eth&tenor=1h", func(m *dMarket, _ *marketOracle) bool { return m.asset == "eth" && m.tenor == "1h" }},
		{"search is a case-insensitive substring of title or slug", "search=BiTcOiN", func(_ *dMarket, o *marketOracle) bool { return strings.Contains(o.search, "bitcoin") }},
		{"search matches the slug", "search=updown-15m", func(_ *dMarket, o *marketOracle) bool { return strings.Contains(o.search, "updown-15m") }},
		{"filters combine", "category=Crypto&status=resolved", func(m *dMarket, o *marketOracle) bool { return m.category == "Crypto" && o.status == "resolved" }},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var page query.PredmktMarketsPage
			getJSON(t, h, "/v1/predmkt/markets?limit=200&"+tc.qs, &page)
			want := map[string]bool{}
			for c, m := range r.markets {
				if tc.keep(m, or[c]) {
					want[c] = true
				}
			}
			if len(want) == 0 {
				t.Fatalf("the lake has no market for %s", tc.qs)
			}
			if len(page.Markets) != len(want) {
				t.Fatalf("%d markets, oracle %d", len(page.Markets), len(want))
			}
			for _, m := range page.Markets {
				if !want[m.ConditionID] {
					t.Fatalf("%s listed", m.ConditionID)
				}
			}
		})
	}
}

// TestPredmktMarketsRules: parameter and cursor rules of /v1/predmkt/markets.
func TestPredmktMarketsRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	var first query.PredmktMarketsPage
	getJSON(t, h, "/v1/predmkt/markets?limit=3", &first)
	if first.NextCursor == nil || len(first.Markets) != 3 {
		t.Fatalf("first page: %d rows, cursor %v", len(first.Markets), first.NextCursor)
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"unknown query parameter is 400", "/v1/predmkt/markets?foo=1", 400, `{"error":"unknown query parameter \"foo\""}`},
		{"unknown status is 400", "/v1/predmkt/markets?status=closed", 400, `{"error":"status must be one of all, open, resolved, invalid"}`},
		{"unknown sort is 400", "/v1/predmkt/markets?sort=hot", 400, `{"error":"sort must be one of volume, volume_24h, trades, created, end"}`},
		{"a cursor resent with other filters is 400", "/v1/predmkt/markets?limit=3&sort=created&cursor=" + *first.NextCursor, 400,
			`{"error":"cursor was issued for different filter parameters: resend the same filters with it, or drop the cursor"}`},
		{"a malformed cursor is 400", "/v1/predmkt/markets?cursor=nope", 400, `{"error":"cursor is malformed: pass nextCursor back unchanged"}`},
		{"limit must be positive", "/v1/predmkt/markets?limit=0", 400, `{"error":"limit must be at least 1"}`},
		{"search over 200 characters is 400", "/v1/predmkt/markets?search=" + strings.Repeat("x", 201), 400, `{"error":"search is longer than 200 characters"}`},
		{"no market matches answers an empty page with a null cursor", "/v1/predmkt/markets?search=no-such-market-anywhere", 200, `{"markets":[],"nextCursor":null}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
	// Above the cap is served at 200, not refused.
	var all query.PredmktMarketsPage
	getJSON(t, h, "/v1/predmkt/markets?limit=100000", &all)
	if len(all.Markets) == 0 || len(all.Markets) > 200 {
		t.Errorf("limit above 200: %d rows", len(all.Markets))
	}
	// The cursor resumes strictly after the last row: page 2 starts at row 4.
	var second, one query.PredmktMarketsPage
	getJSON(t, h, "/v1/predmkt/markets?limit=3&cursor="+*first.NextCursor, &second)
	getJSON(t, h, "/v1/predmkt/markets?limit=6", &one)
	if jsonOf(append(first.Markets, second.Markets...)) != jsonOf(one.Markets) {
		t.Errorf("two pages of 3 differ from one page of 6")
	}
}

// oracleMids is the latest recorded mid of each token at or before now, from the raw tape.
func oracleMids(t *testing.T, q *query.Queries, now int64, tokens ...string) map[string]float64 {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(),
		"SELECT token_id, local_ts, seq, best_bid, best_ask FROM predmkt_book_events WHERE token_id IN (SELECT unnest(string_split($1, ',')))",
		strings.Join(tokens, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type k struct{ lt, seq int64 }
	best := map[string]k{}
	out := map[string]float64{}
	for rows.Next() {
		var tok string
		var lt, seq int64
		var bb, ba float64
		if err := rows.Scan(&tok, &lt, &seq, &bb, &ba); err != nil {
			t.Fatal(err)
		}
		if lt > now || bb <= 0 || ba <= 0 {
			continue
		}
		if b, ok := best[tok]; !ok || lt > b.lt || lt == b.lt && seq > b.seq {
			best[tok], out[tok] = k{lt, seq}, (bb+ba)/2
		}
	}
	return out
}

// TestPredmktMarketDetail: one market equals its list row plus each token's latest
// recorded mid; an unknown market is 404 and a malformed id 400, both {"error": ...}.
func TestPredmktMarketDetail(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	now := testlake.Now().UnixMilli()
	var list query.PredmktMarketsPage
	getJSON(t, h, "/v1/predmkt/markets?limit=200", &list)
	checked := 0
	for _, row := range list.Markets {
		var d query.PredmktMarketDetail
		getJSON(t, h, "/v1/predmkt/markets/"+row.ConditionID, &d)
		if jsonOf(d.PredmktMarketInfo) != jsonOf(row.PredmktMarketInfo) {
			t.Fatalf("%s: detail %s, list row %s", row.ConditionID, jsonOf(d.PredmktMarketInfo), jsonOf(row.PredmktMarketInfo))
		}
		mids := oracleMids(t, q, now, row.Tokens[0].TokenID, row.Tokens[1].TokenID)
		for i, tok := range d.Tokens {
			m, ok := mids[tok.TokenID]
			if tok.TokenID != row.Tokens[i].TokenID || (tok.Mid == nil) == ok || ok && *tok.Mid != query.Round(m, 6) {
				t.Fatalf("%s token %s: mid %v, oracle %v (%v)", row.ConditionID, tok.TokenID, tok.Mid, m, ok)
			}
		}
		checked++
		if checked == 12 {
			break
		}
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"an unknown market is 404", "/v1/predmkt/markets/0x" + strings.Repeat("0", 64), 404, `{"error":"not found"}`},
		{"a malformed condition id is 400", "/v1/predmkt/markets/0x12", 400, `{"error":"condition_id \"0x12\" is not a market id (0x followed by 64 hex digits)"}`},
		{"unknown query parameter is 400", "/v1/predmkt/markets/" + list.Markets[0].ConditionID + "?x=1", 400, `{"error":"unknown query parameter \"x\""}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
