package handlers_test

import (
	"net/url"
	"strings"
	"testing"

	"mdq/query"
)

// TestPerpdexTradersRules: /traders is the leaderboard's board with a percent win-rate
// filter, a wallet search and both cohort axes.
func TestPerpdexTradersRules(t *testing.T) {
	_, h := pdTiny(t)
	t.Run("min_win_rate is a percent: 60 keeps what the leaderboard's 0.6 keeps", func(t *testing.T) {
		var tr query.TraderPage
		var lb query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?min_win_rate=60&limit=500", &tr)
		pdGetJSON(t, h, "/v1/perpdex/leaderboard?min_win_rate=0.6&limit=500", &lb)
		if tr.TotalCount != lb.TotalCount || len(tr.Traders) != len(lb.Traders) || tr.TotalCount == 0 {
			t.Fatalf("traders %d, leaderboard %d", tr.TotalCount, lb.TotalCount)
		}
		for i := range tr.Traders {
			if tr.Traders[i].Wallet != lb.Traders[i].Wallet || tr.Traders[i].WinRate < 0.6 {
				t.Fatalf("row %d: %s vs %s", i, tr.Traders[i].Wallet, lb.Traders[i].Wallet)
			}
		}
		var all query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?limit=500", &all)
		if all.TotalCount <= tr.TotalCount {
			t.Fatal("a 60% floor removed nobody: the filter is not exercised")
		}
	})
	t.Run("min_win_rate above 100 or below 0 is 400", func(t *testing.T) {
		pdStatus(t, h, "/v1/perpdex/traders?min_win_rate=101", 400, "min_win_rate")
		pdStatus(t, h, "/v1/perpdex/traders?min_win_rate=-1", 400, "min_win_rate")
	})
	var all query.TraderPage
	pdGetJSON(t, h, "/v1/perpdex/traders?limit=500&window=all", &all)
	t.Run("search matches a wallet fragment, any case; 0x anchors it at the start", func(t *testing.T) {
		w := all.Traders[len(all.Traders)/2].Wallet
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all&search="+strings.ToUpper(w[10:18]), &p)
		found := false
		for _, r := range p.Traders {
			found = found || r.Wallet == w
			if !strings.Contains(r.Wallet, w[10:18]) {
				t.Fatalf("%s lacks %s", r.Wallet, w[10:18])
			}
		}
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all&search="+w[:8], &p)
		for _, r := range p.Traders {
			if !strings.HasPrefix(r.Wallet, w[:8]) {
				t.Fatalf("%s does not start with %s", r.Wallet, w[:8])
			}
		}
		if !found || p.TotalCount == 0 {
			t.Fatal("wallet not found by its fragment")
		}
		pdStatus(t, h, "/v1/perpdex/traders?search=zz", 400, "search")
	})
	t.Run("size and pnl cohorts filter at once; unknown slug is 400", func(t *testing.T) {
		r := all.Traders[0]
		if r.SizeCohort == nil || r.PnlCohort == nil {
			t.Skip("top trader unlabelled")
		}
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all&limit=500&size_cohort="+*r.SizeCohort+"&pnl_cohort="+*r.PnlCohort, &p)
		want := 0
		for _, x := range all.Traders {
			if x.SizeCohort != nil && *x.SizeCohort == *r.SizeCohort && x.PnlCohort != nil && *x.PnlCohort == *r.PnlCohort {
				want++
			}
		}
		if p.TotalCount != want || want == 0 {
			t.Fatalf("%d, oracle %d", p.TotalCount, want)
		}
		pdStatus(t, h, "/v1/perpdex/traders?size_cohort=minnow", 400, "size_cohort")
		pdStatus(t, h, "/v1/perpdex/traders?sort=luck", 400, "sort")
	})
	t.Run("min_account_value keeps only wallets at or above it", func(t *testing.T) {
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all&limit=500&min_account_value=100000", &p)
		want := 0
		for _, x := range all.Traders {
			if x.AccountValue >= 100000 {
				want++
			}
		}
		if p.TotalCount != want || want == 0 || want == all.TotalCount {
			t.Fatalf("%d, oracle %d of %d", p.TotalCount, want, all.TotalCount)
		}
	})
	t.Run("cursor pages cover totalCount once, rank continuing; resent with other filters is 400", func(t *testing.T) {
		seen := map[string]bool{}
		rank := 0
		got := pdPages(t, h, "/v1/perpdex/traders?window=all&sort=win_rate&order=asc&limit=7", func(p query.TraderPage) (int, *string) {
			for _, r := range p.Traders {
				rank++
				if seen[r.Wallet] || r.Rank != rank {
					t.Fatalf("%s twice or rank %d != %d", r.Wallet, r.Rank, rank)
				}
				seen[r.Wallet] = true
			}
			return len(p.Traders), p.NextCursor
		})
		if got != all.TotalCount {
			t.Fatalf("%d over pages, %d total", got, all.TotalCount)
		}
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?limit=2", &p)
		pdStatus(t, h, "/v1/perpdex/traders?limit=2&min_win_rate=10&cursor="+url.QueryEscape(*p.NextCursor), 400, "different filter")
	})
	t.Run("default limit 50, above 500 served at 500", func(t *testing.T) {
		var p query.TraderPage
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all", &p)
		if len(p.Traders) != min(50, all.TotalCount) {
			t.Fatal(len(p.Traders))
		}
		pdGetJSON(t, h, "/v1/perpdex/traders?window=all&limit=800", &p)
		if len(p.Traders) != min(500, all.TotalCount) {
			t.Fatal(len(p.Traders))
		}
	})
}
