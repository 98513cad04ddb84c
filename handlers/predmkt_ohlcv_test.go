package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

type rawTrade struct {
	ts, seq     int64
	price, size float64
}

// ohlcvOracle computes bars in plain Go from the raw taker rows.
func ohlcvOracle(trades []rawTrade, width, from, to int64, limit int) []query.CandleBar {
	sort.Slice(trades, func(i, j int) bool {
		if trades[i].ts != trades[j].ts {
			return trades[i].ts < trades[j].ts
		}
		return trades[i].seq < trades[j].seq
	})
	var bars []query.CandleBar
	for _, tr := range trades {
		if tr.ts < from || tr.ts > to {
			continue
		}
		b := tr.ts - tr.ts%width
		if len(bars) == 0 || bars[len(bars)-1].TS != b {
			bars = append(bars, query.CandleBar{TS: b, Open: tr.price, High: tr.price, Low: tr.price})
		}
		c := &bars[len(bars)-1]
		c.High, c.Low, c.Close = math.Max(c.High, tr.price), math.Min(c.Low, tr.price), tr.price
		c.Volume += tr.size
		c.Trades++
	}
	if len(bars) > limit {
		bars = bars[:limit]
	}
	if bars == nil {
		bars = []query.CandleBar{}
	}
	return bars
}

// TestOHLCVAgainstOracle: bars equal a plain-Go recomputation from the raw rows, for
// every interval, on the busiest token.
func TestOHLCVAgainstOracle(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	tok := busiestToken(t, q)
	rows, err := q.DB().QueryContext(context.Background(),
		"SELECT ts, seq, price, size FROM predmkt_trades WHERE token_id = $1 AND role = 'taker'", tok)
	if err != nil {
		t.Fatal(err)
	}
	var raw []rawTrade
	for rows.Next() {
		var r rawTrade
		if err := rows.Scan(&r.ts, &r.seq, &r.price, &r.size); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, r)
	}
	rows.Close()
	if len(raw) < 20 {
		t.Fatalf("busiest token has %d trades", len(raw))
	}
	mid := raw[len(raw)/2].ts
	for iv, width := range query.OHLCVIntervals {
		for _, w := range []struct {
			q        string
			from, to int64
			limit    int
		}{
			{"", 0, math.MaxInt64, 500},
			{fmt.Sprintf("&from=%d", mid), mid, math.MaxInt64, 500},
			{fmt.Sprintf("&to=%d&limit=3", mid), 0, mid, 3},
		} {
			code, body := get(t, h, "/v1/predmkt/ohlcv?interval="+iv+"&token_id="+tok+w.q)
			if code != 200 {
				t.Fatalf("%s%s: %d %s", iv, w.q, code, body)
			}
			var got []query.CandleBar
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			want := ohlcvOracle(append([]rawTrade(nil), raw...), width, w.from, w.to, w.limit)
			if len(got) != len(want) {
				t.Fatalf("%s%s: %d bars, oracle %d", iv, w.q, len(got), len(want))
			}
			for i := range got {
				g, o := got[i], want[i]
				if g.TS != o.TS || g.Open != o.Open || g.Close != o.Close || g.High != o.High || g.Low != o.Low ||
					g.Trades != o.Trades || math.Abs(g.Volume-o.Volume) > 1e-6 {
					t.Fatalf("%s%s bar %d: %+v, oracle %+v", iv, w.q, i, g, o)
				}
			}
		}
	}
}

// TestOHLCVRules: SPEC §4.2 rules of /v1/predmkt/ohlcv.
func TestOHLCVRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	tok := busiestToken(t, q)
	base := "/v1/predmkt/ohlcv?token_id=" + tok
	count := func(target string) int {
		code, body := get(t, h, target)
		if code != 200 {
			t.Fatalf("%s: %d %s", target, code, body)
		}
		var bars []query.CandleBar
		json.Unmarshal(body, &bars) //nolint:errcheck
		return len(bars)
	}
	all := count(base + "&interval=1m&limit=1000")
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"interval not one of four is 400 naming the four", base + "&interval=2h", 400, `{"error":"interval \"2h\" is not one of 1m, 5m, 1h, 1d"}`},
		{"interval is required", "/v1/predmkt/ohlcv?token_id=" + tok, 400, `{"error":"interval is required"}`},
		{"token_id is required", "/v1/predmkt/ohlcv?interval=1h", 400, `{"error":"token_id is required"}`},
		{"unknown query parameter is 400", base + "&interval=1h&foo=1", 400, `{"error":"unknown query parameter \"foo\""}`},
		{"from later than to returns []", base + "&interval=1h&from=2000&to=1000", 200, `[]`},
		{"unknown token returns []", "/v1/predmkt/ohlcv?interval=1h&token_id=123", 200, `[]`},
		{"limit must be positive", base + "&interval=1h&limit=0", 400, `{"error":"limit must be at least 1"}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
	// A non-numeric from/to is ignored: the whole series.
	if n := count(base + "&interval=1m&limit=1000&from=2026-01-01&to=yesterday"); n != all {
		t.Errorf("non-numeric from/to: %d bars, whole series %d", n, all)
	}
	// Default limit 500, hard cap 1000 (silent).
	if all > 500 {
		if n := count(base + "&interval=1m"); n != 500 {
			t.Errorf("default limit: %d bars", n)
		}
	}
	if n := count(base + "&interval=1m&limit=5000"); n != min(all, 1000) {
		t.Errorf("limit 5000 capped at 1000: %d bars (series %d)", n, all)
	}
	// Bars exist only where something traded: ts strictly increasing, never empty bars.
	_, body := get(t, h, base+"&interval=1m&limit=1000")
	var bars []query.CandleBar
	json.Unmarshal(body, &bars) //nolint:errcheck
	for i, b := range bars {
		if b.Trades == 0 || b.Volume <= 0 || (i > 0 && b.TS <= bars[i-1].TS) || b.TS%60000 != 0 {
			t.Fatalf("bar %d: %+v", i, b)
		}
	}
}
