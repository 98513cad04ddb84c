package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/query"
)

// Tests of the nine on-chain routes SPEC names without specifying (our design, in
// docs/ONCHAIN.md), on one hand-built lake.

func ocNamedFixture() (*ocFixture, map[string]string) {
	f := &ocFixture{}
	usdc, pepe, junk := ocTok(1), ocTok(2), ocTok(3)
	W, V := ocAddr(1), ocAddr(2)
	f.token("ethereum", usdc, "USDC", "USD Coin", "usdc")
	f.token("base", ocTok(11), "USDC", "USD Coin", "usdc")
	f.token("ethereum", pepe, "PEPE", "Pepe", "pepe")
	f.token("ethereum", junk, "USDCX", "Not USD Coin", "usdcx")
	// W deals with 60 counterparties, one transfer each, 1,000 + i USD, over 60 hours;
	// V shares the first ten of them and sends W 500 USD.
	for i := 0; i < 60; i++ {
		c := ocAddr(100 + i)
		if i%2 == 0 {
			f.xfer("ethereum", time.Duration(i+1)*time.Hour, usdc, W, c, 1000+float64(i), 1000+float64(i))
		} else {
			f.xfer("ethereum", time.Duration(i+1)*time.Hour, usdc, c, W, 1000+float64(i), 1000+float64(i))
		}
		if i < 10 {
			f.xfer("ethereum", time.Duration(i+1)*time.Hour, pepe, V, c, 1e6, 10)
		}
	}
	f.xfer("ethereum", 30*time.Minute, usdc, V, W, 500, 500)
	f.xfer("ethereum", 40*24*time.Hour, usdc, V, W, 7, 7) // outside the 30-day default
	f.label(ocAddr(100), "Binance 1", "cex", "community")
	f.label(ocAddr(100), "Binance Hot", "cex", "manual")
	f.balance("ethereum", W, usdc, 2500)
	f.balance("ethereum", W, pepe, 50_000) // worth 0.5 USD at 0.00001
	f.balance("ethereum", W, junk, 9)      // unpriced
	f.price("ethereum", usdc, 2*time.Hour, 1.0)
	f.price("ethereum", usdc, 1*time.Hour, 1.01) // the latest at or before now
	f.price("ethereum", pepe, 1*time.Hour, 0.00001)
	f.name(W, "whale.eth", true)
	f.name(W, "alt.eth", false)
	return f, map[string]string{"W": W, "V": V, "usdc": usdc, "pepe": pepe}
}

// TestOnchainTransactionsRules: limit default 100, accepted to 1000, applied to 500;
// days 30 (0 resolves to it, applied 1 to 365); keyset pages cover every row once.
func TestOnchainTransactionsRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	base := "/v1/onchain/wallets/" + a["W"] + "/transactions"
	page := func(q string) query.WalletTransactions {
		var p query.WalletTransactions
		ocGet(t, h, base+"?"+q, &p)
		return p
	}
	if p := page(""); len(p.Transactions) != 61 || p.NextCursor != nil || p.Transactions[0].Direction != "in" || p.Transactions[0].Counterparty != a["V"] {
		t.Fatalf("default days 30 holds 61 transfers, newest first: %d %+v", len(p.Transactions), p.Transactions[0])
	}
	if p := page("days=0&limit=0"); len(p.Transactions) != 61 {
		t.Fatalf("days=0&limit=0 resolve to the defaults: %d", len(p.Transactions))
	}
	if p := page("days=1000"); len(p.Transactions) != 62 {
		t.Fatalf("days=1000 applied as 365: %d", len(p.Transactions))
	}
	if p := page("days=-4"); len(p.Transactions) != 24 {
		t.Fatalf("days=-4 applied as 1: %d", len(p.Transactions))
	}
	if p := page("min_usd=1050"); len(p.Transactions) != 10 {
		t.Fatalf("min_usd=1050: %d", len(p.Transactions))
	}
	if p := page("token=" + a["pepe"]); len(p.Transactions) != 0 {
		t.Fatalf("token filter: %d", len(p.Transactions))
	}
	seen := map[string]bool{}
	q := "limit=7"
	for n := 0; n < 20; n++ {
		p := page(q)
		for _, r := range p.Transactions {
			if seen[r.TxHash+r.BlockTime] {
				t.Fatalf("row repeated across pages: %+v", r)
			}
			seen[r.TxHash+r.BlockTime] = true
		}
		if p.NextCursor == nil {
			break
		}
		q = "limit=7&cursor=" + *p.NextCursor
	}
	if len(seen) != 61 {
		t.Fatalf("pages covered %d rows", len(seen))
	}
	p := page("limit=7")
	if code, body := ocDo(t, h, "GET", base+"?limit=7&days=10&cursor="+*p.NextCursor); code != 400 || !strings.Contains(body, "different filter") {
		t.Fatalf("cursor with other filters: %d %s", code, body)
	}
	if code, body := ocDo(t, h, "GET", base+"?limit=1001"); code != 400 || body != `{"detail":"limit must be between 1 and 1000"}` {
		t.Fatalf("limit 1001: %d %s", code, body)
	}
	rt := handlers.Lookup("onchain", "wallets-transactions")
	v, err := rt.Parse(map[string][]string{"limit": {"1000"}}, map[string]string{"address": a["W"]})
	if err != nil || v.Int("limit") != 500 {
		t.Fatalf("limit=1000 applies 500: %v %d", err, v.Int("limit"))
	}
}

// TestOnchainCounterpartiesRules: limit default 100 applied at 50, accepted to 1000;
// the MCP tool defaults to 10; ranked by USD volume with cascade labels.
func TestOnchainCounterpartiesRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var rows []query.Counterparty
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties", &rows)
	if len(rows) != 50 || rows[0].Address != ocAddr(159) || rows[0].VolumeUSD != 1059 || rows[0].InUSD != 1059 || rows[0].NetUSD != 1059 {
		t.Fatalf("%d rows, first %+v", len(rows), rows[0])
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].VolumeUSD > rows[i-1].VolumeUSD {
			t.Fatalf("not ranked at %d", i)
		}
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties?limit=1000&window=all", &rows)
	if len(rows) != 50 {
		t.Fatalf("limit=1000: %d rows", len(rows))
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties?limit=30&window=24h", &rows)
	if len(rows) != 24 || rows[23].Address != a["V"] || rows[23].InUSD != 500 { // 24h ago exactly is outside (now-24h, now]
		t.Fatalf("24h window: %+v", rows)
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties?window=all", &rows)
	last := rows[len(rows)-1]
	if last.Address != ocAddr(110) {
		t.Fatalf("50th counterparty %s", last.Address)
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties?limit=1&window=all&chain=ethereum", &rows)
	if code, _ := ocDo(t, h, "GET", "/v1/onchain/wallets/"+a["W"]+"/counterparties?limit=1001"); code != 400 {
		t.Fatalf("limit 1001: %d", code)
	}
	rt := handlers.Lookup("onchain", "wallets-counterparties")
	if rt.MCP.Defaults["limit"] != int64(10) {
		t.Fatalf("MCP default limit %v", rt.MCP.Defaults["limit"])
	}
	// The labelled counterparty carries the manual (priority 1) label.
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/counterparties?window=all&limit=50", &rows)
	for _, r := range rows {
		if r.Address == ocAddr(100) {
			t.Fatalf("counterparty 100 (1,000 USD) is not in the top 50")
		}
	}
}

// TestOnchainPnLRules: days default 30, applied 1 to 365; one zero-filled row per date.
func TestOnchainPnLRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var rows []query.PnLDay
	for q, n := range map[string]int{"": 30, "days=0": 30, "days=1000": 365, "days=-3": 1, "days=3": 3} {
		ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/pnl?"+q, &rows)
		if len(rows) != n || rows[len(rows)-1].Date != "2026-11-20" {
			t.Fatalf("%q: %d rows ending %s", q, len(rows), rows[len(rows)-1].Date)
		}
	}
	// Plain-Go sums per date of the fixture's transfers.
	want := map[string][2]float64{}
	for _, r := range f.transfers {
		d := r.t.Format("2006-01-02")
		x := want[d]
		if r.to == a["W"] {
			x[0] += r.usd
		}
		if r.from == a["W"] {
			x[1] += r.usd
		}
		want[d] = x
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/pnl?days=5", &rows)
	cum := 0.0
	for _, r := range rows {
		w := want[r.Date]
		cum += w[0] - w[1]
		if !near(r.InflowUSD, w[0]) || !near(r.OutflowUSD, w[1]) || !near(r.NetFlowUSD, w[0]-w[1]) || !near(r.CumulativeNetFlow, cum) {
			t.Fatalf("%s: %+v, oracle %v", r.Date, r, w)
		}
	}
}

// TestOnchainBalancesRules: min_usd omitted gives 1.0, an explicit 0 is honoured; the
// price is the latest hour at or before now; malformed address is Bad EVM address.
func TestOnchainBalancesRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var rows []query.Balance
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/balances", &rows)
	if len(rows) != 1 || rows[0].TokenAddress != a["usdc"] || *rows[0].PriceUSD != 1.01 || *rows[0].ValueUSD != 2525 || rows[0].Symbol != "USDC" {
		t.Fatalf("min_usd omitted: %s", jsonOf(rows))
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/balances?min_usd=0", &rows)
	if len(rows) != 3 || rows[1].TokenAddress != a["pepe"] || *rows[1].ValueUSD != 0.5 || rows[2].PriceUSD != nil || rows[2].ValueUSD != nil {
		t.Fatalf("explicit 0: %s", jsonOf(rows))
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["W"]+"/balances?min_usd=", &rows)
	if len(rows) != 1 {
		t.Fatalf("empty min_usd resolves to 1.0: %d", len(rows))
	}
	if code, body := ocDo(t, h, "GET", "/v1/onchain/wallets/"+a["W"][:41]+"/balances"); code != 400 || !strings.HasPrefix(body, `{"detail":"Bad EVM address`) {
		t.Fatalf("malformed: %d %s", code, body)
	}
}

// TestOnchainENSRules: the primary name and every name; malformed address is 400.
func TestOnchainENSRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var e query.ENS
	ocGet(t, h, "/v1/onchain/wallets/0x"+strings.ToUpper(a["W"][2:])+"/ens", &e)
	if e.Address != a["W"] || e.Name == nil || *e.Name != "whale.eth" || len(e.Names) != 2 || e.Names[1].Name != "alt.eth" {
		t.Fatalf("%+v", e)
	}
	ocGet(t, h, "/v1/onchain/wallets/"+a["V"]+"/ens", &e)
	if e.Name != nil || len(e.Names) != 0 {
		t.Fatalf("no name: %+v", e)
	}
	if code, body := ocDo(t, h, "GET", "/v1/onchain/wallets/0xzz/ens"); code != 400 || !strings.HasPrefix(body, `{"detail":"Bad EVM address`) {
		t.Fatalf("malformed: %d %s", code, body)
	}
}

// TestOnchainCompareRules: shared counterparties and tokens of two wallets, direct
// flows, limit applied at 50 and accepted to 1000.
func TestOnchainCompareRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var c query.WalletCompare
	ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&limit=1000", a["W"], a["V"]), &c)
	if len(c.SharedCounterparties) != 10 || c.SharedCounterparties[0].Address != ocAddr(109) || c.SharedCounterparties[0].AVolumeUSD != 1009 ||
		c.SharedCounterparties[0].BVolumeUSD != 10 || c.Direct.BToAUSD != 500 || c.Direct.AToBUSD != 0 || c.Direct.TxCount != 1 {
		t.Fatalf("%s", jsonOf(c))
	}
	if len(c.SharedTokens) != 1 || c.SharedTokens[0].TokenAddress != a["usdc"] || c.SharedTokens[0].Symbol != "USDC" {
		t.Fatalf("shared tokens %s", jsonOf(c.SharedTokens))
	}
	last := c.SharedCounterparties[9]
	if last.Address != ocAddr(100) || last.Label == nil || *last.Label != "Binance Hot" {
		t.Fatalf("labelled counterparty %s", jsonOf(last))
	}
	ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&limit=2", a["W"], a["V"]), &c)
	if len(c.SharedCounterparties) != 2 {
		t.Fatalf("limit=2: %d", len(c.SharedCounterparties))
	}
	if code, _ := ocDo(t, h, "GET", "/v1/onchain/wallets/compare?wallet_a="+a["W"]+"&wallet_b=0x1"); code != 400 {
		t.Fatalf("malformed wallet_b: %d", code)
	}
	if code, body := ocDo(t, h, "GET", "/v1/onchain/wallets/compare?wallet_a="+a["W"]); code != 400 || body != `{"detail":"wallet_b is required"}` {
		t.Fatalf("missing wallet_b: %d %s", code, body)
	}
	rt := handlers.Lookup("onchain", "wallets-compare")
	if v, err := rt.Parse(map[string][]string{"wallet_a": {a["W"]}, "wallet_b": {a["V"]}, "limit": {"1000"}}, nil); err != nil || v.Int("limit") != 50 {
		t.Fatalf("limit 1000 applies 50: %v", err)
	}
}

// TestOnchainTokenSearchRules: exact symbol first, then prefix, then name; size at most 20.
func TestOnchainTokenSearchRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var rows []query.TokenMatch
	ocGet(t, h, "/v1/onchain/tokens/search?q=usdc", &rows)
	if len(rows) != 3 || rows[0].TokenAddress != a["usdc"] || rows[1].Chain != "base" || rows[2].Symbol != "USDCX" || !strings.HasSuffix(rows[0].Logo, "USDC.png") {
		t.Fatalf("%s", jsonOf(rows))
	}
	ocGet(t, h, "/v1/onchain/tokens/search?q=pepe&chain=base", &rows)
	if len(rows) != 0 {
		t.Fatalf("chain filter: %s", jsonOf(rows))
	}
	ocGet(t, h, "/v1/onchain/tokens/search?q=coin&size=1", &rows)
	if len(rows) != 1 {
		t.Fatalf("size=1: %d", len(rows))
	}
	for _, tc := range []struct{ q, body string }{
		{"q=usdc&size=21", `{"detail":"size must be between 1 and 20"}`},
		{"", `{"detail":"q is required"}`},
	} {
		if code, body := ocDo(t, h, "GET", "/v1/onchain/tokens/search?"+tc.q); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.q, code, body)
		}
	}
	if rt := handlers.Lookup("onchain", "tokens-search"); rt.MCP.Credits != 0 {
		t.Fatalf("token search costs %d over MCP; SPEC says 0", rt.MCP.Credits)
	}
}

// TestOnchainHoldersRules: ranked by cumulative net inflow USD; limit default 50,
// accepted to 500, applied to 50.
func TestOnchainHoldersRules(t *testing.T) {
	f, a := ocNamedFixture()
	h := f.serve(t)
	var rows []query.TokenHolderRow
	ocGet(t, h, "/v1/onchain/tokens/"+a["usdc"]+"/holders?limit=500", &rows)
	if len(rows) != 50 {
		t.Fatalf("limit=500: %d rows", len(rows))
	}
	// Plain-Go net inflow per wallet.
	net := map[string]float64{}
	for _, r := range f.transfers {
		if r.token == a["usdc"] {
			net[r.to] += r.usd
			net[r.from] -= r.usd
		}
	}
	for i, r := range rows {
		if r.Rank != i+1 || !near(r.NetInflowUSD, net[r.Address]) || (i > 0 && r.NetInflowUSD > rows[i-1].NetInflowUSD) {
			t.Fatalf("row %d %+v, oracle net %v", i, r, net[r.Address])
		}
	}
	found := false
	for _, r := range rows {
		if r.Address == a["W"] {
			found = r.Balance != nil && *r.Balance == 2500 && r.Rank == 31
		}
	}
	if !found {
		t.Fatalf("W (net 537 USD, balance 2,500) not at rank 31 with its balance: %s", jsonOf(rows))
	}
	if code, _ := ocDo(t, h, "GET", "/v1/onchain/tokens/"+a["usdc"]+"/holders?limit=501"); code != 400 {
		t.Fatalf("limit 501: %d", code)
	}
}

// TestOnchainProvenanceRules: every source in cascade order; the first is selected.
func TestOnchainProvenanceRules(t *testing.T) {
	f, _ := ocNamedFixture()
	h := f.serve(t)
	var p query.LabelProvenance
	ocGet(t, h, "/v1/onchain/labels/"+ocAddr(100)+"/provenance", &p)
	if p.Resolved == nil || p.Resolved.Entity != "Binance Hot" || p.Resolved.Source != "manual" || len(p.Sources) != 2 ||
		!p.Sources[0].Selected || p.Sources[1].Selected || p.Sources[1].Priority != 4 || p.Sources[1].URL == "" {
		t.Fatalf("%s", jsonOf(p))
	}
	ocGet(t, h, "/v1/onchain/labels/"+ocAddr(1)+"/provenance", &p)
	if p.Resolved != nil || len(p.Sources) != 0 {
		t.Fatalf("unlabelled: %s", jsonOf(p))
	}
	b, _ := json.Marshal(p)
	if !strings.Contains(string(b), `"sources":[]`) {
		t.Fatalf("empty sources must encode as []: %s", b)
	}
}
