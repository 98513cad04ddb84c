package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// exportLines serves one export request (validated against the OpenAPI document) and
// decodes its NDJSON lines.
func exportLines(t *testing.T, h http.Handler, target string) []query.CandleBar {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	validateExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("%s: %d %s %s", target, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	bars := []query.CandleBar{}
	sc := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
	for sc.Scan() {
		var b query.CandleBar
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			t.Fatalf("%s: line %q: %v", target, sc.Text(), err)
		}
		bars = append(bars, b)
	}
	return bars
}

// TestPredmktOHLCVExportAgainstOracle: the export is every bar of the plain-Go oracle,
// one JSON object per line, for each interval and window.
func TestPredmktOHLCVExportAgainstOracle(t *testing.T) {
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
	mid := raw[len(raw)/2].ts
	for iv, width := range query.OHLCVIntervals {
		for _, w := range []struct {
			q        string
			from, to int64
		}{{"", 0, math.MaxInt64}, {fmt.Sprintf("&from=%d", mid), mid, math.MaxInt64}, {fmt.Sprintf("&to=%d", mid), 0, mid}} {
			got := exportLines(t, h, "/v1/predmkt/ohlcv/export?interval="+iv+"&token_id="+tok+w.q)
			want := ohlcvOracle(append([]rawTrade(nil), raw...), width, w.from, w.to, math.MaxInt)
			if len(got) != len(want) {
				t.Fatalf("%s%s: %d lines, oracle %d", iv, w.q, len(got), len(want))
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

// TestPredmktOHLCVExportHasNo1000BarCap: a token with 1,500 one-minute bars exports all
// 1,500, where /ohlcv serves its cap of 1,000, and the first 1,000 agree.
func TestPredmktOHLCVExportHasNo1000BarCap(t *testing.T) {
	f := &pmFixture{profiles: map[string][2]string{}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m := f.addMarket("Tech", start.Add(-time.Hour), nil)
	for i := range 1500 {
		f.trade(start.Add(time.Duration(i)*time.Minute).UnixMilli(), m, 0, pmWallet(1), pmWallet(2), "BUY", 0.5+float64(i%40)/100, 10)
	}
	q := openQueries(t, f.write(t))
	h := (&handlers.API{Q: q}).Handler()
	tok := pmToken(m, 0)
	all := exportLines(t, h, "/v1/predmkt/ohlcv/export?interval=1m&token_id="+tok)
	var capped []query.CandleBar
	getJSON(t, h, "/v1/predmkt/ohlcv?interval=1m&limit=5000&token_id="+tok, &capped)
	if len(all) != 1500 || len(capped) != 1000 {
		t.Fatalf("export %d bars, /ohlcv %d", len(all), len(capped))
	}
	if jsonOf(all[:1000]) != jsonOf(capped) {
		t.Errorf("the first 1000 exported bars differ from /ohlcv")
	}
}

// TestPredmktOHLCVExportRules: a bad interval or a missing token is a JSON 400 before
// any line; an unknown token is an empty body; the route is not an MCP tool.
func TestPredmktOHLCVExportRules(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	h := (&handlers.API{Q: q}).Handler()
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"interval not one of four is 400 naming the four", "/v1/predmkt/ohlcv/export?token_id=1&interval=2h", 400, `{"error":"interval \"2h\" is not one of 1m, 5m, 1h, 1d"}`},
		{"token_id is required", "/v1/predmkt/ohlcv/export?interval=1h", 400, `{"error":"token_id is required"}`},
		{"unknown query parameter is 400", "/v1/predmkt/ohlcv/export?interval=1h&token_id=1&limit=5", 400, `{"error":"unknown query parameter \"limit\""}`},
		{"an unknown token is an empty body", "/v1/predmkt/ohlcv/export?interval=1h&token_id=1", 200, ``},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
	for _, rt := range handlers.MCPTools() {
		if rt.Path == "/v1/predmkt/ohlcv/export" {
			t.Errorf("the export is an MCP tool")
		}
	}
}
