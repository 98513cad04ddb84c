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

// TestPredmktTradesAgainstOracle: the tape by market, token or wallet (taker or maker),
// paged with nextCursor in both orders, is each tape trade once (taker fill with its
// maker), as a plain-Go join of the raw fills orders and filters it; windows are
// half-open on ts.
func TestPredmktTradesAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	makers := map[string]string{}
	for _, f := range r.fills {
		if f.role == "maker" {
			makers[fmt.Sprintf("%s/%d", f.token, f.seq)] = f.wallet
		}
	}
	cond := pickMarkets(r, testlake.Now().UnixMilli())[0]
	tok := r.markets[cond].tokens[1]
	w := pickWallets(r)[1]
	var mid int64
	for _, f := range r.fills {
		if f.cond == cond {
			mid = f.ts
			break
		}
	}
	for _, tc := range []struct {
		qs   string
		keep func(f dFill, maker string) bool
	}{
		{"condition_id=" + cond, func(f dFill, _ string) bool { return f.cond == cond }},
		{"token_id=" + tok, func(f dFill, _ string) bool { return f.token == tok }},
		{"wallet=" + w, func(f dFill, m string) bool { return f.wallet == w || m == w }},
		{fmt.Sprintf("condition_id=%s&from_ms=%d", cond, mid), func(f dFill, _ string) bool { return f.cond == cond && f.ts >= mid }},
		{fmt.Sprintf("condition_id=%s&to_ms=%d", cond, mid), func(f dFill, _ string) bool { return f.cond == cond && f.ts < mid }},
	} {
		for _, order := range []string{"desc", "asc"} {
			pages := pageAll(t, h, "/v1/predmkt/trades?limit=37&order="+order+"&"+tc.qs, func(p *query.PredmktTradesPage) *string { return p.NextCursor })
			var got []query.PredmktTapeTrade
			for _, p := range pages {
				got = append(got, p.Trades...)
			}
			var want []dFill
			for _, f := range r.fills {
				if f.role == "taker" && tc.keep(f, makers[fmt.Sprintf("%s/%d", f.token, f.seq)]) {
					want = append(want, f)
				}
			}
			slices.SortFunc(want, func(a, b dFill) int {
				c := cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.seq, b.seq), cmp.Compare(a.token, b.token))
				if order == "desc" {
					return -c
				}
				return c
			})
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s order=%s: %d trades, oracle %d", tc.qs, order, len(got), len(want))
			}
			for i, g := range got {
				f := want[i]
				if g.TradeID != f.id || g.Taker != f.wallet || g.Maker != makers[fmt.Sprintf("%s/%d", f.token, f.seq)] || g.Side != f.side ||
					g.Price != f.price || g.Size != f.size || g.USD != query.Round(f.usd, 6) || g.TS != f.ts || g.TxHash != f.tx {
					t.Fatalf("%s order=%s row %d: %+v, oracle %+v", tc.qs, order, i, g, f)
				}
			}
		}
	}
}

// TestPredmktTradesRules: one of condition_id, token_id or wallet is required; to_ms
// must exceed from_ms; a cursor resent with other filters is 400.
func TestPredmktTradesRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	cond := pickMarkets(readDRaw(t, q), testlake.Now().UnixMilli())[0]
	var first query.PredmktTradesPage
	getJSON(t, h, "/v1/predmkt/trades?limit=2&condition_id="+cond, &first)
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"one of condition_id, token_id or wallet is required", "/v1/predmkt/trades", 400, `{"error":"one of condition_id, token_id or wallet is required"}`},
		{"to_ms must exceed from_ms", "/v1/predmkt/trades?condition_id=" + cond + "&from_ms=5&to_ms=5", 400, `{"error":"to_ms (5) must be greater than from_ms (5)"}`},
		{"a cursor resent with other filters is 400", "/v1/predmkt/trades?limit=2&order=asc&condition_id=" + cond + "&cursor=" + *first.NextCursor, 400,
			`{"error":"cursor was issued for different filter parameters: resend the same filters with it, or drop the cursor"}`},
		{"a malformed wallet is 400", "/v1/predmkt/trades?wallet=0xzz", 400, `{"error":"wallet must be a 0x-prefixed 40-hex-digit address"}`},
		{"an unknown token answers an empty page", "/v1/predmkt/trades?token_id=1", 200, `{"trades":[],"nextCursor":null}`},
		{"unknown query parameter is 400", "/v1/predmkt/trades?token_id=1&market=2", 400, `{"error":"unknown query parameter \"market\""}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}
