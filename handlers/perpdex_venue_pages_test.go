package handlers_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// Raw rows of the position, funding, mark, account and label tables, read with plain
// SELECTs for the oracles below.

type pdPos struct {
	ts                                    time.Time
	wallet, coin                          string
	szi, entry, mark, lev, liq, upnl, val float64
}

func pdReadPositions(t *testing.T, q *query.Queries) []pdPos {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(), `SELECT snapshot_ts, wallet, coin, szi, entry_px, mark_px, leverage,
		liquidation_px, unrealized_pnl, position_value FROM perpdex_positions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pdPos
	for rows.Next() {
		var p pdPos
		if err := rows.Scan(&p.ts, &p.wallet, &p.coin, &p.szi, &p.entry, &p.mark, &p.lev, &p.liq, &p.upnl, &p.val); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

type pdFund struct {
	ts              time.Time
	wallet, coin    string
	usdc, szi, rate float64
}

func pdReadFunding(t *testing.T, q *query.Queries) []pdFund {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(), `SELECT time, wallet, coin, usdc, szi, funding_rate FROM perpdex_funding`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pdFund
	for rows.Next() {
		var f pdFund
		if err := rows.Scan(&f.ts, &f.wallet, &f.coin, &f.usdc, &f.szi, &f.rate); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// pdNewestBatch is the newest snapshot time at or before now.
func pdNewestBatch(ps []pdPos, now time.Time) time.Time {
	var b time.Time
	for _, p := range ps {
		if !p.ts.After(now) && p.ts.After(b) {
			b = p.ts
		}
	}
	return b
}

// TestPerpdexMarketHistoryAgainstOracle: each hour of /markets/{coin} carries the mark of
// that hour, the open interest summed in Go from the batch taken on it, the funding rate
// applied on it and the volume of the hour's buy-side fills.
func TestPerpdexMarketHistoryAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	ps, fills, funds := pdReadPositions(t, q), pdReadFills(t, q), pdReadFunding(t, q)
	now := testlake.Now()
	for _, coin := range []string{"BTC", "xyz:TSLA", "DOGE"} {
		var got query.MarketHistory
		pdGetJSON(t, h, "/v1/perpdex/markets/"+url.PathEscape(coin)+"?window=30d", &got)
		marks := map[time.Time]float64{}
		rows, err := q.DB().QueryContext(context.Background(), "SELECT time, mark_px FROM perpdex_marks WHERE coin = $1", coin)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var ts time.Time
			var m float64
			rows.Scan(&ts, &m) //nolint:errcheck
			if !ts.Before(now.Add(-30*24*time.Hour)) && !ts.After(now) {
				marks[ts.UTC()] = m
			}
		}
		rows.Close()
		if len(got.Hours) != len(marks) || len(marks) == 0 {
			t.Fatalf("%s: %d hours, %d marks in the window", coin, len(got.Hours), len(marks))
		}
		withOI := 0
		for i, hr := range got.Hours {
			ts, _ := time.Parse(time.RFC3339, hr.TS)
			if i > 0 && hr.TS <= got.Hours[i-1].TS {
				t.Fatal("not oldest first")
			}
			if hr.MarkPrice != marks[ts.UTC()] {
				t.Fatalf("%s %s mark %v want %v", coin, hr.TS, hr.MarkPrice, marks[ts])
			}
			var long, short float64
			var n int64
			for _, p := range ps {
				if p.coin == coin && p.ts.Equal(ts) {
					n++
					if p.szi > 0 {
						long += p.val
					} else {
						short += p.val
					}
				}
			}
			if n == 0 {
				if hr.OpenInterestUsd != nil || hr.OpenPositions != nil {
					t.Fatalf("%s %s: open interest without a batch", coin, hr.TS)
				}
			} else {
				withOI++
				if hr.OpenInterestUsd == nil || !pdNear(*hr.OpenInterestLong, long, 0.006) || !pdNear(*hr.OpenInterestShort, short, 0.006) ||
					*hr.OpenInterestUsd != *hr.OpenInterestLong || *hr.OpenPositions != n {
					t.Fatalf("%s %s: OI %+v, oracle long %v short %v n %d", coin, hr.TS, hr, long, short, n)
				}
			}
			var rate *float64
			for _, f := range funds {
				if f.coin == coin && f.ts.Equal(ts) {
					r := f.rate
					rate = &r
				}
			}
			if (rate == nil) != (hr.FundingRate == nil) || rate != nil && *rate != *hr.FundingRate {
				t.Fatalf("%s %s: funding %v, oracle %v", coin, hr.TS, hr.FundingRate, rate)
			}
			var vol float64
			var trades int64
			for _, f := range fills {
				if f.coin == coin && f.side == "B" && !f.time.Before(ts) && f.time.Before(ts.Add(time.Hour)) && !f.time.After(now) {
					vol += f.px * f.sz
					trades++
				}
			}
			if hr.Trades != trades || !pdNear(hr.VolumeUsd, vol, 0.006) {
				t.Fatalf("%s %s: volume %v/%d, oracle %v/%d", coin, hr.TS, hr.VolumeUsd, hr.Trades, vol, trades)
			}
		}
		if withOI < 200 {
			t.Fatalf("%s: only %d hours with a position batch", coin, withOI)
		}
	}
}

func TestPerpdexMarketHistoryRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("default window 7d holds 169 hourly rows", func(t *testing.T) {
		var p query.MarketHistory
		pdGetJSON(t, h, "/v1/perpdex/markets/ETH", &p)
		if p.Window.Window != "7d" || len(p.Hours) != 7*24+1 {
			t.Fatalf("%s %d", p.Window.Window, len(p.Hours))
		}
	})
	t.Run("unknown coin is 404, unknown window 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/markets/NOPE", 404, "not found")
		pdStatus(t, h, "/v1/perpdex/markets/ETH?window=2d", 400, "window")
	})
	t.Run("the literal /markets is still the list", func(t *testing.T) {
		var p query.MarketsPage
		pdGetJSON(t, h, "/v1/perpdex/markets", &p)
		if len(p.Markets) == 0 {
			t.Fatal("no markets")
		}
	})
}

// TestPerpdexLiquidationMapAgainstOracle: buckets equal a plain-Go bucketing of the
// newest batch's liquidation prices, for several ranges and widths.
func TestPerpdexLiquidationMapAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	ps := pdReadPositions(t, q)
	batch := pdNewestBatch(ps, testlake.Now())
	for _, c := range []struct {
		coin        string
		rng, bucket float64
	}{{"BTC", 20, 1}, {"HYPE", 50, 2.5}, {"ETH", 90, 0.5}, {"SOL", 7, 3}} {
		var got query.LiquidationMap
		pdGetJSON(t, h, fmt.Sprintf("/v1/perpdex/liquidations/map?coin=%s&range_pct=%v&bucket_pct=%v", c.coin, c.rng, c.bucket), &got)
		var mine []pdPos
		for _, p := range ps {
			if p.coin == c.coin && p.ts.Equal(batch) {
				mine = append(mine, p)
			}
		}
		mark := mine[0].mark
		n := int(math.Ceil(2*c.rng/c.bucket - 1e-9))
		lo, w, hi := mark*(1-c.rng/100), mark*c.bucket/100, mark*(1+c.rng/100)
		long, short := make([]float64, n), make([]float64, n)
		nl, ns := make([]int64, n), make([]int64, n)
		var noLiq, out int64
		for _, p := range mine {
			switch {
			case p.liq <= 0:
				noLiq++
			case p.liq < lo || p.liq > hi:
				out++
			default:
				i := min(int(math.Floor((p.liq-lo)/w)), n-1)
				if p.szi > 0 {
					long[i] += p.val
					nl[i]++
				} else {
					short[i] += p.val
					ns[i]++
				}
			}
		}
		if got.MarkPrice == nil || *got.MarkPrice != mark || got.Positions != int64(len(mine)) || got.WithoutLiquidation != noLiq || got.OutOfRange != out ||
			len(got.Buckets) != n || *got.SnapshotTS != batch.Format("2006-01-02T15:04:05+00:00") {
			t.Fatalf("%s: %+v (oracle mark %v, %d positions, %d without, %d out, %d buckets)", c.coin, got, mark, len(mine), noLiq, out, n)
		}
		var cumShort float64
		for i, b := range got.Buckets {
			cumShort += short[i]
			var cumLong float64
			for j := i; j < n; j++ {
				cumLong += long[j]
			}
			if !pdNear(b.PriceLo, lo+float64(i)*w, 1e-6) || !pdNear(b.LongUsd, long[i], 0.006) || !pdNear(b.ShortUsd, short[i], 0.006) ||
				b.LongPositions != nl[i] || b.ShortPositions != ns[i] || !pdNear(b.CumLongUsd, cumLong, 0.006) || !pdNear(b.CumShortUsd, cumShort, 0.006) {
				t.Fatalf("%s bucket %d: %+v, oracle long %v/%d short %v/%d cum %v %v", c.coin, i, b, long[i], nl[i], short[i], ns[i], cumLong, cumShort)
			}
		}
	}
}

func TestPerpdexLiquidationMapRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("defaults: range 20%, bucket 1%: 40 buckets", func(t *testing.T) {
		var p query.LiquidationMap
		pdGetJSON(t, h, "/v1/perpdex/liquidations/map?coin=BTC", &p)
		if p.RangePct != 20 || p.BucketPct != 1 || len(p.Buckets) != 40 {
			t.Fatalf("%v %v %d", p.RangePct, p.BucketPct, len(p.Buckets))
		}
	})
	t.Run("coin required; a coin without positions answers no buckets and a null mark", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/liquidations/map", 400, "coin")
		var p query.LiquidationMap
		pdGetJSON(t, h, "/v1/perpdex/liquidations/map?coin=NOPE", &p)
		if len(p.Buckets) != 0 || p.MarkPrice != nil || p.SnapshotTS != nil || p.Positions != 0 {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("range and bucket outside their ranges, or over 400 buckets, are 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/liquidations/map?coin=BTC&range_pct=95", 400, "range_pct")
		pdStatus(t, h, "/v1/perpdex/liquidations/map?coin=BTC&bucket_pct=0", 400, "bucket_pct")
		pdStatus(t, h, "/v1/perpdex/liquidations/map?coin=BTC&range_pct=50&bucket_pct=0.1", 400, "1000 buckets")
		pdStatus(t, h, "/v1/perpdex/liquidations/map?coin=BTC&range_pct=wide", 400, "range_pct")
	})
	t.Run("the literal /liquidations is still the tape", func(t *testing.T) {
		var p query.LiquidationsPage
		pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=1", &p)
	})
}

// pdLabel is one wallet's labels.
type pdLabel struct{ size, pnl sql.NullString }

// TestPerpdexCohortsAgainostOracle: every row of /cohorts over the last day equals a
// plain-Go grouping of the on-the-hour position batches by the holder's point-in-time
// label (else today's, else unknown), on both axes.
func TestPerpdexCohortsAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	ps := pdReadPositions(t, q)
	hourly := map[string]pdLabel{} // hour|wallet
	cur := map[string]pdLabel{}
	rows, err := q.DB().QueryContext(context.Background(), "SELECT hour_ts, wallet, size_cohort, pnl_cohort FROM perpdex_cohorts_hourly")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ts time.Time
		var w string
		var l pdLabel
		rows.Scan(&ts, &w, &l.size, &l.pnl) //nolint:errcheck
		hourly[ts.UTC().Format(time.RFC3339)+"|"+w] = l
	}
	rows.Close()
	rows, err = q.DB().QueryContext(context.Background(), "SELECT wallet, size_cohort, pnl_cohort FROM perpdex_cohorts_current")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		var l pdLabel
		rows.Scan(&w, &l.size, &l.pnl) //nolint:errcheck
		cur[w] = l
	}
	rows.Close()
	start := testlake.Now().Add(-24 * time.Hour)
	for _, axis := range []string{"size", "pnl"} {
		pick := func(l pdLabel, ok bool) (string, bool) {
			v := l.size
			if axis == "pnl" {
				v = l.pnl
			}
			return v.String, ok && v.Valid
		}
		type agg struct {
			long, short float64
			nl, ns, pit int64
		}
		want := map[string]*agg{}
		for _, p := range ps {
			if p.ts.Before(start) || p.ts.After(testlake.Now()) || !p.ts.Equal(p.ts.Truncate(time.Hour)) {
				continue
			}
			hk := p.ts.UTC().Format(time.RFC3339)
			l, okH := hourly[hk+"|"+p.wallet]
			label, ok := pick(l, okH)
			pit := ok
			if !ok {
				c, okC := cur[p.wallet]
				label, ok = pick(c, okC)
			}
			if !ok {
				label = "unknown"
			}
			k := hk + "|" + p.coin + "|" + label
			a := want[k]
			if a == nil {
				a = &agg{}
				want[k] = a
			}
			if p.szi > 0 {
				a.long += p.val
				a.nl++
			} else {
				a.short += p.val
				a.ns++
			}
			if pit {
				a.pit++
			}
		}
		var got []query.CohortPositioning
		base := "/v1/perpdex/cohorts?limit=97&axis=" + axis + "&start=" + start.Format(time.RFC3339)
		pdPages(t, h, base, func(p query.CohortsPage) (int, *string) {
			got = append(got, p.Rows...)
			return len(p.Rows), p.NextCursor
		})
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d rows, oracle %d", axis, len(got), len(want))
		}
		bases := map[string]int{}
		for i, r := range got {
			if i > 0 {
				prev := got[i-1]
				if r.TS > prev.TS || r.TS == prev.TS && (r.Coin < prev.Coin || r.Coin == prev.Coin && r.Cohort <= prev.Cohort) {
					t.Fatalf("%s: rows %d and %d out of order", axis, i-1, i)
				}
			}
			ts, _ := time.Parse(time.RFC3339, r.TS)
			a := want[ts.UTC().Format(time.RFC3339)+"|"+r.Coin+"|"+r.Cohort]
			if a == nil {
				t.Fatalf("%s: row %+v not in oracle", axis, r)
			}
			basis := "mixed"
			switch a.pit {
			case a.nl + a.ns:
				basis = "point_in_time"
			case 0:
				basis = "current"
			}
			bases[basis]++
			if !pdNear(r.LongUsd, a.long, 0.006) || !pdNear(r.ShortUsd, a.short, 0.006) || r.LongPositions != a.nl ||
				r.ShortPositions != a.ns || r.LabelBasis != basis || !pdNear(r.NetUsd, a.long-a.short, 0.011) {
				t.Fatalf("%s: %+v, oracle %+v basis %s", axis, r, a, basis)
			}
			if r.LongSharePct == nil || !pdNear(*r.LongSharePct, a.long/(a.long+a.short)*100, 1e-4) {
				t.Fatalf("%s: long share %v", axis, r.LongSharePct)
			}
		}
		if bases["point_in_time"] == 0 || bases["current"] == 0 {
			t.Fatalf("%s: the day should hold published and unpublished hours: %v", axis, bases)
		}
	}
}

func TestPerpdexCohortsRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("unknown axis is 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/cohorts?axis=pnl_abs", 400, "axis")
	})
	t.Run("cursor resent with another axis or coin is a 400 that says so", func(t *testing.T) {
		var p query.CohortsPage
		pdGetJSON(t, h, "/v1/perpdex/cohorts?limit=3", &p)
		pdStatus(t, h, "/v1/perpdex/cohorts?limit=3&axis=pnl&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
		pdStatus(t, h, "/v1/perpdex/cohorts?limit=3&coin=BTC&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
	})
	t.Run("coin filter and newest hour first; lookahead flagged on current-basis rows", func(t *testing.T) {
		var p query.CohortsPage
		pdGetJSON(t, h, "/v1/perpdex/cohorts?coin=BTC&limit=50", &p)
		if len(p.Rows) == 0 || p.Rows[0].TS != "2026-11-20T12:00:00+00:00" {
			t.Fatalf("%+v", p.Rows)
		}
		for _, r := range p.Rows {
			if r.Coin != "BTC" {
				t.Fatal(r.Coin)
			}
		}
		if !p.LabelComputed.Lookahead || p.Rows[0].LabelBasis == "point_in_time" {
			t.Fatal("the newest hour is unpublished: current basis and lookahead expected")
		}
	})
}

// TestPerpdexPositionsRules: /positions lists the newest batch, largest notional first,
// every position once over the pages, filtered by coin and side.
func TestPerpdexPositionsRules(t *testing.T) {
	q, h := pdTiny(t)
	ps := pdReadPositions(t, q)
	batch := pdNewestBatch(ps, testlake.Now())
	var inBatch []pdPos
	for _, p := range ps {
		if p.ts.Equal(batch) {
			inBatch = append(inBatch, p)
		}
	}
	sort.Slice(inBatch, func(i, j int) bool { return inBatch[i].val > inBatch[j].val })
	t.Run("pages cover the newest batch once, largest first, rank continuing", func(t *testing.T) {
		var got []query.VenuePosition
		pdPages(t, h, "/v1/perpdex/positions?limit=13", func(p query.VenuePositionsPage) (int, *string) {
			got = append(got, p.Positions...)
			if p.SnapshotTS == nil || *p.SnapshotTS != batch.Format("2006-01-02T15:04:05+00:00") {
				t.Fatalf("snapshot_ts %v", p.SnapshotTS)
			}
			return len(p.Positions), p.NextCursor
		})
		if len(got) != len(inBatch) {
			t.Fatalf("%d positions, batch holds %d", len(got), len(inBatch))
		}
		seen := map[string]bool{}
		for i, r := range got {
			if r.Rank != int64(i+1) || !pdNear(r.SizeUsd, inBatch[i].val, 0.006) {
				t.Fatalf("row %d: %+v, oracle value %v", i, r, inBatch[i].val)
			}
			k := r.Wallet + r.Coin
			if seen[k] {
				t.Fatalf("%s twice", k)
			}
			seen[k] = true
		}
	})
	t.Run("coin and side filter", func(t *testing.T) {
		var p query.VenuePositionsPage
		pdGetJSON(t, h, "/v1/perpdex/positions?coin=ETH&side=short&limit=500", &p)
		n := 0
		for _, x := range inBatch {
			if x.coin == "ETH" && x.szi < 0 {
				n++
			}
		}
		if len(p.Positions) != n || n == 0 {
			t.Fatalf("%d, oracle %d", len(p.Positions), n)
		}
		for _, r := range p.Positions {
			if r.Coin != "ETH" || r.Side != "short" {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("default limit 100, above 500 served at 500; bad side 400; cursor bound to filters", func(t *testing.T) {
		var p query.VenuePositionsPage
		pdGetJSON(t, h, "/v1/perpdex/positions", &p)
		if len(p.Positions) != min(100, len(inBatch)) {
			t.Fatal(len(p.Positions))
		}
		pdGetJSON(t, h, "/v1/perpdex/positions?limit=900", &p)
		if len(p.Positions) != min(500, len(inBatch)) {
			t.Fatal(len(p.Positions))
		}
		pdStatus(t, h, "/v1/perpdex/positions?side=flat", 400, "side")
		pdGetJSON(t, h, "/v1/perpdex/positions?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/positions?limit=2&side=long&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
	})
}

// TestPerpdexFundingRules: /funding holds one row per coin and funding hour, its rate
// the one applied, newest first, every row once over the pages.
func TestPerpdexFundingRules(t *testing.T) {
	q, h := pdTiny(t)
	funds := pdReadFunding(t, q)
	type key struct {
		ts   time.Time
		coin string
	}
	want := map[key]int64{}
	rate := map[key]float64{}
	start := testlake.Now().Add(-48 * time.Hour)
	for _, f := range funds {
		if f.ts.Before(start) || f.ts.After(testlake.Now()) {
			continue
		}
		k := key{f.ts.UTC(), f.coin}
		want[k]++
		rate[k] = f.rate
	}
	var got []query.FundingRateRow
	pdPages(t, h, "/v1/perpdex/funding?limit=37&start="+start.Format(time.RFC3339), func(p query.FundingPage) (int, *string) {
		got = append(got, p.Funding...)
		return len(p.Funding), p.NextCursor
	})
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d rows, oracle %d", len(got), len(want))
	}
	for i, r := range got {
		ts, _ := time.Parse(time.RFC3339, r.Time)
		k := key{ts.UTC(), r.Coin}
		if r.Positions != want[k] || r.FundingRate != rate[k] || !pdNear(r.AnnualizedPct, rate[k]*24*365*100, 1e-4) {
			t.Fatalf("%+v, oracle %d positions rate %v", r, want[k], rate[k])
		}
		if i > 0 && (r.Time > got[i-1].Time || r.Time == got[i-1].Time && r.Coin <= got[i-1].Coin) {
			t.Fatal("not newest first, then coin")
		}
	}
	t.Run("cursor resent with another coin is a 400 that says so", func(t *testing.T) {
		var p query.FundingPage
		pdGetJSON(t, h, "/v1/perpdex/funding?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/funding?limit=2&coin=BTC&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
		pdStatus(t, h, "/v1/perpdex/funding?start=last-week", 400, "start")
	})
}
