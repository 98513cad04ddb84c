package handlers_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// pdOracleCandles builds candles of coin from raw fills in plain Go: each trade once
// (its buy-side fill), epoch-aligned buckets, first and last trade by (time, tid).
func pdOracleCandles(fills []pdFill, coin string, width time.Duration, now time.Time) []query.PerpdexCandle {
	var fs []pdFill
	for _, f := range fills {
		if f.coin == coin && f.side == "B" && !f.time.After(now) {
			fs = append(fs, f)
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		if !fs[i].time.Equal(fs[j].time) {
			return fs[i].time.Before(fs[j].time)
		}
		return fs[i].tid < fs[j].tid
	})
	w := width.Milliseconds()
	var out []query.PerpdexCandle
	for _, f := range fs {
		b := f.time.UnixMilli() / w * w
		if len(out) == 0 || out[len(out)-1].TS != b {
			out = append(out, query.PerpdexCandle{TS: b, Open: f.px, High: f.px, Low: f.px, VolumeUsd: new(float64)})
		}
		c := &out[len(out)-1]
		c.High, c.Low, c.Close = max(c.High, f.px), min(c.Low, f.px), f.px
		c.Volume += f.sz
		*c.VolumeUsd += f.px * f.sz
		c.Trades++
	}
	return out
}

// TestPerpdexOHLCVAgainstOracle: candles of every coin at every interval equal a plain-Go
// bucketing of the raw fills; the range is cut at its recent end by limit.
func TestPerpdexOHLCVAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills := pdReadFills(t, q)
	coins := map[string]bool{}
	for _, f := range fills {
		coins[f.coin] = true
	}
	for coin := range coins {
		for _, iv := range query.PerpdexIntervalNames {
			want := pdOracleCandles(fills, coin, query.PerpdexIntervals[iv], testlake.Now())
			from := int64(0)
			if len(want) > 1000 { // compare the newest 1000 by starting at their first bucket
				from = want[len(want)-1000].TS
				want = want[len(want)-1000:]
			}
			var got query.OHLCVPage
			pdGetJSON(t, h, fmt.Sprintf("/v1/perpdex/ohlcv?coin=%s&interval=%s&from=%d&limit=1000", coin, iv, from), &got)
			if len(got.Candles) != len(want) {
				t.Fatalf("%s %s: %d candles, oracle %d", coin, iv, len(got.Candles), len(want))
			}
			for i, w := range want {
				g := got.Candles[i]
				if g.TS != w.TS || g.Open != w.Open || g.High != w.High || g.Low != w.Low || g.Close != w.Close ||
					g.Trades != w.Trades || !pdNear(g.Volume, w.Volume, 1e-7) || g.VolumeUsd == nil || !pdNear(*g.VolumeUsd, *w.VolumeUsd, 0.006) {
					t.Fatalf("%s %s candle %d: got %+v, oracle %+v", coin, iv, i, g, w)
				}
				if g.Time != time.UnixMilli(w.TS).UTC().Format("2006-01-02T15:04:05+00:00") {
					t.Fatalf("time %s for ts %d", g.Time, w.TS)
				}
			}
		}
	}
}

func TestPerpdexOHLCVRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("interval outside the six is 400 naming them", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=2h", 400, "1m, 5m, 15m, 1h, 4h, 1d")
	})
	t.Run("coin and interval are required", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/ohlcv?interval=1h", 400, "coin")
		pdStatus(t, h, "/v1/perpdex/ohlcv?coin=BTC", 400, "interval")
	})
	t.Run("non-numeric from is 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=1h&from=2026-11-01", 400, "from")
	})
	t.Run("from later than to returns no candles", func(t *testing.T) {
		var p query.OHLCVPage
		pdGetJSON(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=1h&from=2000&to=1000", &p)
		if len(p.Candles) != 0 {
			t.Fatal(len(p.Candles))
		}
	})
	t.Run("unknown coin returns no candles", func(t *testing.T) {
		var p query.OHLCVPage
		pdGetJSON(t, h, "/v1/perpdex/ohlcv?coin=NOPE&interval=1h", &p)
		if len(p.Candles) != 0 || p.Coin != "NOPE" {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("default limit 500, above 1000 served at 1000, oldest first, cut at the recent end", func(t *testing.T) {
		var d, big query.OHLCVPage
		pdGetJSON(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=1m", &d)
		pdGetJSON(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=1m&limit=5000", &big)
		if len(d.Candles) != 500 || len(big.Candles) != 1000 {
			t.Fatalf("%d %d", len(d.Candles), len(big.Candles))
		}
		for i := 1; i < len(big.Candles); i++ {
			if big.Candles[i].TS <= big.Candles[i-1].TS {
				t.Fatal("not oldest first")
			}
		}
		if d.Candles[0].TS != big.Candles[0].TS {
			t.Fatal("a limit cut the oldest bars")
		}
		pdStatus(t, h, "/v1/perpdex/ohlcv?coin=BTC&interval=1m&limit=0", 400, "limit")
	})
	t.Run("from and to bound the bucket start inclusively", func(t *testing.T) {
		var all query.OHLCVPage
		pdGetJSON(t, h, "/v1/perpdex/ohlcv?coin=ETH&interval=1h&limit=1000&from=1794312000000", &all)
		if len(all.Candles) < 3 {
			t.Fatalf("%d candles", len(all.Candles))
		}
		a, b := all.Candles[1].TS, all.Candles[len(all.Candles)-2].TS
		var p query.OHLCVPage
		pdGetJSON(t, h, fmt.Sprintf("/v1/perpdex/ohlcv?coin=ETH&interval=1h&limit=1000&from=%d&to=%d", a, b), &p)
		if len(p.Candles) != len(all.Candles)-2 || p.Candles[0].TS != a || p.Candles[len(p.Candles)-1].TS != b {
			t.Fatalf("%d candles from %d to %d", len(p.Candles), a, b)
		}
	})
}
