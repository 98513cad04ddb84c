package handlers_test

import (
	"context"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// pdBusiestWallet is the wallet with the most fills.
func pdBusiestWallet(t *testing.T, q *query.Queries) string {
	t.Helper()
	var w string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT wallet FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestPerpdexWalletPortfolioAgainstOracle: each point's account value is the bucket's
// last snapshot and its PnL the bucket's closed PnL minus fees plus funding, summed in
// Go from raw rows; cum_pnl runs from the window start; every bucket is present.
func TestPerpdexWalletPortfolioAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	fills, funds := pdReadFills(t, q), pdReadFunding(t, q)
	now := testlake.Now()
	type acct struct {
		ts time.Time
		av float64
	}
	for _, w := range []string{pdBusiestWallet(t, q), pdW(1)} {
		var accts []acct
		rows, err := q.DB().QueryContext(context.Background(), "SELECT snapshot_ts, account_value FROM perpdex_accounts WHERE wallet = $1", w)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a acct
			rows.Scan(&a.ts, &a.av) //nolint:errcheck
			accts = append(accts, a)
		}
		rows.Close()
		for _, c := range []struct {
			window, res string
			days        int
			width       time.Duration
		}{{"1d", "hourly", 1, time.Hour}, {"7d", "hourly", 7, time.Hour}, {"30d", "daily", 30, 24 * time.Hour}, {"7d", "daily", 7, 24 * time.Hour}} {
			start := now.Add(-time.Duration(c.days) * 24 * time.Hour)
			var got query.PortfolioPage
			pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/portfolio?window="+c.window+"&resolution="+c.res, &got)
			first := start.Truncate(c.width)
			n := int(now.Sub(first)/c.width) + 1
			if len(got.Points) != n {
				t.Fatalf("%s %s %s: %d points, want %d", w, c.window, c.res, len(got.Points), n)
			}
			var cum float64
			for i, p := range got.Points {
				b := first.Add(time.Duration(i) * c.width)
				in := func(ts time.Time) bool {
					return !ts.Before(b) && ts.Before(b.Add(c.width)) && !ts.Before(start) && !ts.After(now)
				}
				var pnl float64
				for _, f := range fills {
					if f.wallet == w && in(f.time) {
						pnl += f.closedPnl - f.fee
					}
				}
				for _, f := range funds {
					if f.wallet == w && in(f.ts) {
						pnl += f.usdc
					}
				}
				cum += pnl
				var av *float64
				var last time.Time
				for _, a := range accts {
					if in(a.ts) && !a.ts.Before(last) {
						v := a.av
						av, last = &v, a.ts
					}
				}
				if p.TS != b.Format("2006-01-02T15:04:05+00:00") || !pdNear(p.Pnl, pnl, 0.006) || !pdNear(p.CumPnl, cum, 0.011) ||
					(av == nil) != (p.AccountValue == nil) || av != nil && !pdNear(*p.AccountValue, *av, 0.006) {
					t.Fatalf("%s %s %s point %d: %+v, oracle pnl %v cum %v av %v", w, c.window, c.res, i, p, pnl, cum, av)
				}
			}
			if math.Abs(got.Pnl-got.Points[len(got.Points)-1].CumPnl) > 1e-9 {
				t.Fatal("pnl is not the last cum_pnl")
			}
		}
	}
}

func TestPerpdexWalletPortfolioRules(t *testing.T) {
	q, h := pdTiny(t)
	w := pdBusiestWallet(t, q)
	t.Run("defaults: 7d hourly, 169 points", func(t *testing.T) {
		var p query.PortfolioPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/portfolio", &p)
		if p.Window.Window != "7d" || p.Resolution != "hourly" || len(p.Points) != 169 {
			t.Fatalf("%s %s %d", p.Window.Window, p.Resolution, len(p.Points))
		}
	})
	t.Run("all starts at the wallet's first bucket with data; start is null", func(t *testing.T) {
		var p query.PortfolioPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/portfolio?window=all&resolution=daily", &p)
		var first time.Time
		q.DB().QueryRowContext(context.Background(), "SELECT min(time) FROM perpdex_fills WHERE wallet = $1", w).Scan(&first) //nolint:errcheck
		if p.Window.Start != nil || len(p.Points) == 0 || p.Points[0].TS != first.UTC().Truncate(24*time.Hour).Format("2006-01-02T15:04:05+00:00") {
			t.Fatalf("start %v first point %+v, first fill %v", p.Window.Start, p.Points[0], first)
		}
	})
	t.Run("malformed address, unknown window or resolution is 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/wallets/0x12/portfolio", 400, "address")
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/portfolio?window=2w", 400, "window")
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/portfolio?resolution=weekly", 400, "resolution")
	})
}

// TestPerpdexWalletRules: the overview agrees with the raw rows and the positions route.
func TestPerpdexWalletRules(t *testing.T) {
	q, h := pdTiny(t)
	w := pdBusiestWallet(t, q)
	var o query.WalletOverview
	pdGetJSON(t, h, "/v1/perpdex/wallets/0x"+strings.ToUpper(w[2:]), &o)
	t.Run("address is case-insensitive and returned lower-case", func(t *testing.T) {
		if o.Wallet != w {
			t.Fatal(o.Wallet)
		}
	})
	t.Run("lifetime figures equal the raw fills, funding and ledger", func(t *testing.T) {
		var n int64
		var vol, fee, cpnl, fund float64
		for _, f := range pdReadFills(t, q) {
			if f.wallet == w {
				n++
				vol += f.px * f.sz
				fee += f.fee
				cpnl += f.closedPnl
			}
		}
		for _, f := range pdReadFunding(t, q) {
			if f.wallet == w {
				fund += f.usdc
			}
		}
		l := o.Lifetime
		if l.Fills != n || !pdNear(l.VolumeUsd, vol, 0.006) || !pdNear(l.Fees, fee, 0.006) || !pdNear(l.ClosedPnl, cpnl, 0.006) ||
			!pdNear(l.RealizedPnl, cpnl-fee, 0.011) || !pdNear(l.FundingUsd, fund, 0.006) {
			t.Fatalf("%+v, oracle fills %d vol %v fee %v closed %v funding %v", l, n, vol, fee, cpnl, fund)
		}
	})
	t.Run("open positions and account value match the newest batch and snapshot", func(t *testing.T) {
		var p query.WalletPositionsPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/positions", &p)
		if int(o.OpenPositions) != len(p.Positions) || o.PositionsSnapshot == nil || *o.PositionsSnapshot != *p.SnapshotTS {
			t.Fatalf("%d positions vs %d", o.OpenPositions, len(p.Positions))
		}
		var av float64
		q.DB().QueryRowContext(context.Background(), "SELECT arg_max(account_value, snapshot_ts) FROM perpdex_accounts WHERE wallet = $1 AND snapshot_ts <= $2", w, testlake.Now()).Scan(&av) //nolint:errcheck
		if o.AccountValue == nil || !pdNear(*o.AccountValue, av, 0.006) {
			t.Fatalf("account value %v, oracle %v", o.AccountValue, av)
		}
		if o.Cohorts.SizeCohort == nil {
			t.Fatal("busiest wallet has no size cohort")
		}
	})
	t.Run("malformed address is 400, unknown wallet 404", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/wallets/0xnothex", 400, "address")
		pdStatus(t, h, "/v1/perpdex/wallets/0x0000000000000000000000000000000000000001", 404, "not found")
	})
}

// TestPerpdexWalletPositionsRules: the wallet's rows of the newest batch, largest first.
func TestPerpdexWalletPositionsRules(t *testing.T) {
	q, h := pdTiny(t)
	ps := pdReadPositions(t, q)
	batch := pdNewestBatch(ps, testlake.Now())
	checked := 0
	for _, w := range []string{pdBusiestWallet(t, q), ps[0].wallet, ps[len(ps)/2].wallet} {
		var p query.WalletPositionsPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/positions", &p)
		want := map[string]pdPos{}
		for _, x := range ps {
			if x.wallet == w && x.ts.Equal(batch) {
				want[x.coin] = x
			}
		}
		if len(p.Positions) != len(want) {
			t.Fatalf("%s: %d positions, batch holds %d", w, len(p.Positions), len(want))
		}
		for i, r := range p.Positions {
			x := want[r.Coin]
			side := "long"
			if x.szi < 0 {
				side = "short"
			}
			if r.Side != side || r.SizeToken != math.Abs(x.szi) || r.EntryPrice != x.entry || r.MarkPrice != x.mark ||
				r.Leverage != x.lev || r.LiquidationPrice != x.liq || !pdNear(r.UnrealizedPnl, x.upnl, 0.006) ||
				!pdNear(r.SizeUsd, x.val, 0.006) || !pdNear(r.MarginUsd, x.val/x.lev, 0.006) {
				t.Fatalf("%s: %+v, raw %+v", w, r, x)
			}
			if i > 0 && r.SizeUsd > p.Positions[i-1].SizeUsd {
				t.Fatal("not largest first")
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no position checked")
	}
	t.Run("a flat or unknown wallet has [] and still the batch time", func(t *testing.T) {
		var p query.WalletPositionsPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/0x0000000000000000000000000000000000000001/positions", &p)
		if len(p.Positions) != 0 || p.SnapshotTS == nil {
			t.Fatalf("%+v", p)
		}
	})
}

// TestPerpdexWalletFundingRules: pages cover the wallet's payments once, newest first.
func TestPerpdexWalletFundingRules(t *testing.T) {
	q, h := pdTiny(t)
	w := pdBusiestWallet(t, q)
	start := testlake.Now().Add(-3 * 24 * time.Hour)
	n := 0
	var sum float64
	for _, f := range pdReadFunding(t, q) {
		if f.wallet == w && !f.ts.Before(start) && f.coin == "BTC" {
			n++
			sum += f.usdc
		}
	}
	var got []query.FundingPayment
	pdPages(t, h, "/v1/perpdex/wallets/"+w+"/funding?coin=BTC&limit=17&start="+start.Format(time.RFC3339), func(p query.WalletFundingPage) (int, *string) {
		got = append(got, p.Payments...)
		return len(p.Payments), p.NextCursor
	})
	var gotSum float64
	for i, r := range got {
		gotSum += r.Usd
		if r.Coin != "BTC" || i > 0 && r.Time > got[i-1].Time {
			t.Fatalf("%+v", r)
		}
	}
	if len(got) != n || n == 0 || !pdNear(gotSum, sum, 1e-4) {
		t.Fatalf("%d payments summing %v, oracle %d summing %v", len(got), gotSum, n, sum)
	}
	t.Run("cursor resent with another coin is a 400 that says so; limit above 2000 served at 2000", func(t *testing.T) {
		var p query.WalletFundingPage
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/funding?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/wallets/"+w+"/funding?limit=2&coin=ETH&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
		pdGetJSON(t, h, "/v1/perpdex/wallets/"+w+"/funding?limit=9000", &p)
		if len(p.Payments) != 2000 {
			t.Fatal(len(p.Payments))
		}
		pdStatus(t, h, "/v1/perpdex/wallets/0x12/funding", 400, "address")
	})
}
