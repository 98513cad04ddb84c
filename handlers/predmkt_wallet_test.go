package handlers_test

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// pickWallets returns the three busiest wallets (market makers among them) and every
// 25th wallet by address.
func pickWallets(r *dRaw) []string {
	n := map[string]int{}
	for _, f := range r.fills {
		n[f.wallet]++
	}
	ws := make([]string, 0, len(n))
	for w := range n {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	var out []string
	for i := 0; i < len(ws); i += 25 {
		out = append(out, ws[i])
	}
	slices.SortFunc(ws, func(a, b string) int { return cmp.Or(cmp.Compare(n[b], n[a]), cmp.Compare(a, b)) })
	return append(out, ws[:3]...)
}

// TestPredmktWalletProfileMatchesLeaderboard: the profile's overall and per-category
// figures, tags and rank are the leaderboard's row of the wallet (min_resolved=0, sort
// realized_pnl) in that category; a wallet with no fill is 404.
func TestPredmktWalletProfileMatchesLeaderboard(t *testing.T) {
	q := openQueries(t, testlake.Copy(t)) // the board is written into the lake
	h := (&handlers.API{Q: q}).Handler()
	r := readDRaw(t, q)
	boards := map[string][]query.WalletBoardRow{}
	for _, cat := range append([]string{"all"}, query.PredmktCategories...) {
		boards[cat] = lbRowsAll(t, h, cat, "all")
	}
	win24 := lbRowsAll(t, h, "all", "24h")
	same := func(f query.PredmktWalletFigures, row *query.WalletBoardRow, n int) bool {
		return f.Rank == row.Rank && f.Wallets == n && f.RealizedPnLUSD == row.RealizedPnLUSD && f.ResolvedMarkets == row.ResolvedMarkets &&
			jsonOf(f.HitRate) == jsonOf(row.HitRate) && jsonOf(f.HitRateCI) == jsonOf(row.HitRateCI) && f.VolumeAllUSD == row.VolumeAllUSD &&
			f.TradesAll == row.TradesAll && f.AvgTradeUSD == row.AvgTradeUSD && f.Markets == row.Markets &&
			f.FirstSeen == row.FirstSeen && f.LastSeen == row.LastSeen && jsonOf(f.Tags) == jsonOf(row.Tags)
	}
	for _, w := range pickWallets(r) {
		var p query.PredmktWalletProfile
		getJSON(t, h, "/v1/predmkt/wallets/0x"+strings.ToUpper(w[2:]), &p)
		row := findRow(boards["all"], w)
		if row == nil || p.Wallet != w || !same(p.Overall, row, len(boards["all"])) || p.Rank != row.Rank || jsonOf(p.Tags) != jsonOf(row.Tags) ||
			p.Pseudonym != r.profile[w][0] {
			t.Fatalf("%s: profile %s, leaderboard %s", w, jsonOf(p.Overall), jsonOf(row))
		}
		// Window figures: the leaderboard's window=24h row.
		win := findRow(win24, w)
		if p.Overall.RealizedPnL24hUSD != win.RealizedPnLWindowUSD || p.Overall.Volume24hUSD != win.VolumeWindowUSD || p.Overall.Trades24h != win.TradesWindow {
			t.Fatalf("%s: 24h figures %+v, leaderboard %+v", w, p.Overall, win)
		}
		cats := 0
		for _, cat := range query.PredmktCategories {
			row := findRow(boards[cat], w)
			if row == nil {
				continue
			}
			if cats >= len(p.Categories) || p.Categories[cats].Category != cat || !same(p.Categories[cats], row, len(boards[cat])) {
				t.Fatalf("%s %s: profile %s, leaderboard %s", w, cat, jsonOf(p.Categories), jsonOf(row))
			}
			cats++
		}
		if cats != len(p.Categories) {
			t.Fatalf("%s: %d categories, leaderboard %d", w, len(p.Categories), cats)
		}
	}
	for _, tc := range []struct {
		rule, target string
		code         int
		body         string
	}{
		{"a wallet with no fill is 404", "/v1/predmkt/wallets/0x" + strings.Repeat("0", 40), 404, `{"error":"not found"}`},
		{"a malformed address is 400", "/v1/predmkt/wallets/0x123", 400, `{"error":"address \"0x123\" is not a 0x-prefixed 40-hex-digit wallet address"}`},
		{"unknown query parameter is 400", "/v1/predmkt/wallets/0x" + strings.Repeat("0", 40) + "?window=7d", 400, `{"error":"unknown query parameter \"window\""}`},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code || strings.TrimSpace(string(body)) != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}

// lbRowsAll pages the whole leaderboard of one category and window (min_resolved=0).
func lbRowsAll(t *testing.T, h http.Handler, cat, window string) []query.WalletBoardRow {
	t.Helper()
	var out []query.WalletBoardRow
	for off := 0; off <= 1000; off += 50 {
		rows := lbRows(t, h, fmt.Sprintf("category=%s&window=%s&min_resolved=0&limit=50&offset=%d", cat, window, off))
		out = append(out, rows...)
		if len(rows) < 50 {
			break
		}
	}
	return out
}
