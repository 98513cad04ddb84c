package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
	"mdq/ratelimit"
)

// ocTinySetup opens the tiny lake and loads the raw rows once per test.
func ocTinySetup(t *testing.T) (http.Handler, *ocWorld) {
	t.Helper()
	q := openQueries(t, testlake.Tiny(t))
	w := ocLoad(t, q)
	if len(w.raw) < 1000 {
		t.Fatalf("tiny lake holds %d on-chain transfers", len(w.raw))
	}
	return (&handlers.API{Q: q}).Handler(), w
}

// ocDo serves target with method and returns status and trimmed body.
func ocDo(t *testing.T, h http.Handler, method, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// busiestTokens lists the tokens of chain by transfer count, most first.
func busiestTokens(w *ocWorld, chain string) []string {
	n := map[string]int{}
	for _, r := range w.raw {
		if r.chain == chain {
			n[r.token]++
		}
	}
	var out []string
	for k := range n {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return n[out[i]] > n[out[j]] || n[out[i]] == n[out[j]] && out[i] < out[j] })
	return out
}

// ---- every route -----------------------------------------------------------------------

// TestOnchainEveryRouteCreditsOneAndIsMCPTool: the fifteen on-chain routes each log 1
// credit per REST call and map to their own MCP tool.
func TestOnchainEveryRouteCreditsOneAndIsMCPTool(t *testing.T) {
	names := map[string]bool{}
	n := 0
	for _, rt := range handlers.Routes() {
		if rt.Area != "onchain" {
			continue
		}
		n++
		if rt.Credits != 1 || rt.MCP == nil || rt.MCP.Name == "" || names[rt.MCP.Name] {
			t.Errorf("%s %s: credits %d, mcp %+v", rt.Method, rt.Path, rt.Credits, rt.MCP)
			continue
		}
		names[rt.MCP.Name] = true
	}
	if n != 15 {
		t.Errorf("%d on-chain routes, SPEC names 15", n)
	}
}

// TestOnchainNonInputFailureIs503WithoutDriverText: a corrupt transfers file answers 503
// {"detail": "store unavailable"} on every route that reads it.
func TestOnchainNonInputFailureIs503WithoutDriverText(t *testing.T) {
	dir := testlake.Copy(t)
	q := openQueries(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, "onchain/transfers/chain=*/date=*/transfers.parquet"))
	if len(files) == 0 {
		t.Fatal("no transfers files")
	}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("PAR1 not parquet PAR1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logBuf bytes.Buffer
	h := (&handlers.API{Q: q, Log: slog.New(slog.NewJSONHandler(&logBuf, nil))}).Handler()
	a := "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
	for _, target := range []string{
		"/v1/onchain/tokens/" + a + "/transfers", "/v1/onchain/tokens/screener", "/v1/onchain/wallets/" + a,
		"/v1/onchain/wallets/discover", "/v1/onchain/wallets/" + a + "/trace",
	} {
		code, body := ocDo(t, h, "GET", target)
		if code != 503 || body != `{"detail":"store unavailable"}` {
			t.Errorf("%s: %d %s", target, code, body)
		}
	}
	code, body := ocDo(t, h, "POST", "/v1/onchain/labels/batch?addresses="+a)
	if code != 503 || body != `{"detail":"store unavailable"}` {
		t.Errorf("labels batch: %d %s", code, body)
	}
	if !strings.Contains(logBuf.String(), "transfers.parquet") {
		t.Errorf("log does not name the file")
	}
}

// ---- tokens/{token_address}/transfers ---------------------------------------------------

// TestOnchainTransfersAgainstOracle: the top-10 of each side equals a plain-Go ranking of
// the raw transfers, for every period, each chain and chain=all.
func TestOnchainTransfersAgainstOracle(t *testing.T) {
	h, w := ocTinySetup(t)
	periods := map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}
	checked := 0
	for _, chain := range []string{"ethereum", "bsc", "base", "all"} {
		c := chain
		if c == "all" {
			c = "ethereum"
		}
		for _, tok := range busiestTokens(w, c)[:4] {
			for p, d := range periods {
				for _, tab := range []string{"bought", "sold"} {
					var got []query.TokenTransferRow
					ocGet(t, h, fmt.Sprintf("/v1/onchain/tokens/%s/transfers?chain=%s&period=%s&tab=%s", "0x"+strings.ToUpper(tok[2:]), chain, p, tab), &got)
					want := oracleTransfers(w, tok, chain, tab, testlake.Now(), d)
					if len(got) != len(want) {
						t.Fatalf("%s %s %s %s: %d rows, oracle %d", chain, tok, p, tab, len(got), len(want))
					}
					for i := range want {
						g, o := got[i], want[i]
						if g.Address != o.Address || !near(g.Bought, o.Bought) || !near(g.Sold, o.Sold) || !near(g.NetTokens, o.NetTokens) ||
							!near(g.USDSpent, o.USDSpent) || !near(g.USDReceived, o.USDReceived) || !near(g.NetUSD, o.NetUSD) ||
							strings.Join(g.Chains, ",") != strings.Join(o.Chains, ",") || (g.Title == nil) != (o.Title == nil) ||
							(g.Title != nil && *g.Title != *o.Title) || g.NetUSDRaw != query.Round(g.NetUSD, 2) {
							t.Fatalf("%s %s %s %s row %d: %+v\noracle %+v", chain, tok, p, tab, i, g, o)
						}
					}
					checked += len(got)
				}
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d rows compared", checked)
	}
}

// TestOnchainTransfersRules: SPEC §4.1 rules of the token transfers route.
func TestOnchainTransfersRules(t *testing.T) {
	h, w := ocTinySetup(t)
	tok := busiestTokens(w, "ethereum")[0]
	if tok == query.OnchainZeroAddress {
		tok = busiestTokens(w, "ethereum")[1]
	}
	base := "/v1/onchain/tokens/" + tok + "/transfers"
	rows := func(target string) []map[string]any {
		var out []map[string]any
		ocGet(t, h, target, &out)
		return out
	}
	t.Run("exactly 10 rows of 18 fields", func(t *testing.T) {
		for _, tab := range []string{"bought", "sold"} {
			r := rows(base + "?period=7d&tab=" + tab)
			if len(r) != 10 {
				t.Fatalf("%s: %d rows", tab, len(r))
			}
			for _, row := range r {
				if len(row) != 18 {
					t.Fatalf("%d fields: %v", len(row), row)
				}
				if a := row["address"].(string); a != strings.ToLower(a) {
					t.Fatalf("address not lower-case: %s", a)
				}
			}
		}
	})
	t.Run("default period 24h and tab sold", func(t *testing.T) {
		a, _ := json.Marshal(rows(base))
		b, _ := json.Marshal(rows(base + "?period=24h&tab=sold&chain=ethereum"))
		if !bytes.Equal(a, b) {
			t.Fatal("defaults differ from period=24h&tab=sold&chain=ethereum")
		}
	})
	t.Run("unknown chain reads ethereum with 200", func(t *testing.T) {
		a, _ := json.Marshal(rows(base + "?chain=solana&period=7d"))
		b, _ := json.Marshal(rows(base + "?chain=ethereum&period=7d"))
		if !bytes.Equal(a, b) {
			t.Fatal("chain=solana differs from chain=ethereum")
		}
	})
	t.Run("chain all maps the token to its address on each chain", func(t *testing.T) {
		usdc := "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
		r := rows("/v1/onchain/tokens/" + usdc + "/transfers?chain=all&period=7d&tab=bought")
		seen := map[string]bool{}
		for _, row := range r {
			for _, c := range row["chains"].([]any) {
				seen[c.(string)] = true
			}
		}
		if !seen["eth"] || !seen["bsc"] && !seen["base"] {
			t.Fatalf("chains seen %v", seen)
		}
	})
	t.Run("zero address returns no buyers", func(t *testing.T) {
		if r := rows("/v1/onchain/tokens/0x0000000000000000000000000000000000000000/transfers?tab=bought&period=30d"); len(r) != 0 {
			t.Fatalf("%d rows", len(r))
		}
	})
	t.Run("limit is not a parameter and MCP ignores it", func(t *testing.T) {
		a, _ := json.Marshal(rows(base + "?limit=3&period=7d"))
		b, _ := json.Marshal(rows(base + "?period=7d"))
		if !bytes.Equal(a, b) {
			t.Fatal("limit changed the rows")
		}
		rt := handlers.Lookup("onchain", "tokens-transfers")
		if rt == nil || rt.MCP == nil || len(rt.MCP.Ignore) != 1 || rt.MCP.Ignore[0] != "limit" {
			t.Fatal("transfers tool does not ignore limit")
		}
	})
	for _, tc := range []struct{ rule, target, body string }{
		{"unknown period is 400", base + "?period=2h", `{"detail":"period must be one of 1h, 24h, 7d, 30d"}`},
		{"unknown tab is 400", base + "?tab=both", `{"detail":"tab must be one of bought, sold"}`},
		{"malformed token address is 400 Bad EVM address", "/v1/onchain/tokens/0x12/transfers", `{"detail":"Bad EVM address '0x12' (requires 0x prefix and exactly 42 characters)"}`},
	} {
		if code, body := ocDo(t, h, "GET", tc.target); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}

// TestOnchainTransfersFixture: round trips count in both bought and sold; usd_spent and
// usd_received are USD at transfer time, not token counts; fewer than ten wallets give
// fewer rows, never padding.
func TestOnchainTransfersFixture(t *testing.T) {
	f := &ocFixture{}
	tok, lender, bot, buyer := ocTok(1), ocAddr(1), ocAddr(2), ocAddr(3)
	f.token("ethereum", tok, "TKN", "Token", "tkn")
	f.xfer("ethereum", time.Hour+time.Minute, tok, lender, bot, 1000, 2500) // flash loan out
	f.xfer("ethereum", time.Hour+time.Minute, tok, bot, lender, 1000, 2500) // and back
	f.xfer("ethereum", 2*time.Hour, tok, lender, buyer, 10, 30)             // a buy at 3 USD
	f.xfer("ethereum", 48*time.Hour, tok, lender, buyer, 500, 500)          // outside 24h
	f.label(lender, "Aave V3: Pool", "defi", "manual")
	h := f.serve(t)
	var got []query.TokenTransferRow
	ocGet(t, h, "/v1/onchain/tokens/"+tok+"/transfers?tab=bought", &got)
	if len(got) != 3 {
		t.Fatalf("rows %+v", got)
	}
	if got[0].Address != lender || got[0].Bought != 1000 || got[0].Sold != 1010 || got[0].NetTokens != -10 ||
		got[0].USDSpent != 2500 || got[0].USDReceived != 2530 || got[0].NetUSD != 30 || got[0].Title == nil || *got[0].Title != "Aave V3: Pool" {
		t.Fatalf("lender row %+v", got[0])
	}
	if got[1].Address != bot || got[1].Bought != 1000 || got[1].Sold != 1000 || got[1].NetTokens != 0 || got[1].Title != nil {
		t.Fatalf("round trip not counted in both: %+v", got[1])
	}
	if got[2].Address != buyer || got[2].Bought != 10 || got[2].USDSpent != 30 || got[2].NetUSD != -30 || got[2].NetBarPct != 100 {
		t.Fatalf("usd_spent is not USD at transfer time: %+v", got[2])
	}
}

// ---- tokens/screener -----------------------------------------------------------------

type ocScreen struct {
	vol, in, out, smartNet float64
	holders                map[string]bool
	tx                     int64
}

// oracleScreener ranks the tokens of chain in plain Go.
func oracleScreener(w *ocWorld, chain string, days int, sortBy string, smartOnly bool, minVol float64, minHolders int64, limit int) []query.ScreenerRow {
	now := testlake.Now()
	// Smart-money cohort: non-venue wallets with realized PnL >= 10,000 over all history.
	pnl, _ := oraclePnL(w.raw, func(r ocRaw) bool { return r.chain == chain && !r.t.After(now) })
	smart := map[string]bool{}
	for a, v := range pnl {
		if v >= query.OnchainSmartMoneyPnL && !w.isVenue(a) {
			smart[a] = true
		}
	}
	first := now.AddDate(0, 0, -days).Format("2006-01-02")
	m := map[string]*ocScreen{}
	for _, r := range w.raw {
		if r.chain != chain || r.t.UTC().Format("2006-01-02") < first || r.t.After(now) {
			continue
		}
		fs, ts := smart[r.from], smart[r.to]
		if smartOnly && !fs && !ts {
			continue
		}
		s := m[r.token]
		if s == nil {
			s = &ocScreen{holders: map[string]bool{}}
			m[r.token] = s
		}
		fin, tin := !w.isVenue(r.from), !w.isVenue(r.to)
		if smartOnly {
			fin, tin = fs, ts
		}
		s.vol += r.usd
		s.tx++
		if tin && !fin {
			s.in += r.usd
		}
		if fin && !tin {
			s.out += r.usd
		}
		if ts && !fs {
			s.smartNet += r.usd
		}
		if fs && !ts {
			s.smartNet -= r.usd
		}
		if !smartOnly || fs {
			s.holders[r.from] = true
		}
		if !smartOnly || ts {
			s.holders[r.to] = true
		}
	}
	type keyed struct {
		row query.ScreenerRow
		key float64
	}
	var rows []keyed
	for tok, s := range m {
		delete(s.holders, query.OnchainZeroAddress)
		r := query.ScreenerRow{TokenAddress: tok, VolumeUSD: s.vol, InUSD: s.in, OutUSD: s.out,
			NetFlowUSD: query.Round(s.in, 2) - query.Round(s.out, 2), UniqueHolders: int64(len(s.holders)), TxCount: s.tx}
		if k, ok := w.tokens[[2]string{chain, tok}]; ok {
			n := k.name
			r.Symbol, r.Name = k.symbol, &n
		}
		if query.Round(r.VolumeUSD, 2) < minVol || r.UniqueHolders < minHolders {
			continue
		}
		key := query.Round(s.vol, 2)
		switch sortBy {
		case "net_inflow":
			key = r.NetFlowUSD
		case "holders":
			key = float64(r.UniqueHolders)
		case "smart_inflow":
			key = query.Round(s.smartNet, 2)
		}
		rows = append(rows, keyed{r, key})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].key != rows[j].key {
			return rows[i].key > rows[j].key
		}
		return rows[i].row.TokenAddress < rows[j].row.TokenAddress
	})
	out := []query.ScreenerRow{}
	for i := 0; i < len(rows) && i < limit; i++ {
		out = append(out, rows[i].row)
	}
	return out
}

func compareScreener(t *testing.T, name string, got, want []query.ScreenerRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, oracle %d", name, len(got), len(want))
	}
	for i := range want {
		g, o := got[i], want[i]
		if g.TokenAddress != o.TokenAddress || g.Symbol != o.Symbol || (g.Name == nil) != (o.Name == nil) || (g.Name != nil && *g.Name != *o.Name) ||
			!near(g.VolumeUSD, o.VolumeUSD) || !near(g.InUSD, o.InUSD) || !near(g.OutUSD, o.OutUSD) || !near(g.NetFlowUSD, o.NetFlowUSD) ||
			g.UniqueHolders != o.UniqueHolders || g.TxCount != o.TxCount {
			t.Fatalf("%s row %d: %+v\noracle %+v", name, i, g, o)
		}
	}
}

// TestOnchainScreenerAgainstOracle: every sort, window and chain, with and without
// smart_money_only and the min floors, equals the plain-Go ranking.
func TestOnchainScreenerAgainstOracle(t *testing.T) {
	h, w := ocTinySetup(t)
	smartRows := 0
	for _, chain := range []string{"ethereum", "bsc", "base"} {
		for win, days := range query.OnchainScreenerWindows {
			for _, s := range []string{"volume", "net_inflow", "holders", "smart_inflow"} {
				for _, smart := range []bool{false, true} {
					target := fmt.Sprintf("/v1/onchain/tokens/screener?chain=%s&window=%s&sort=%s&smart_money_only=%t", chain, win, s, smart)
					var got []query.ScreenerRow
					ocGet(t, h, target, &got)
					compareScreener(t, target, got, oracleScreener(w, chain, days, s, smart, 0, 0, 50))
					if smart {
						smartRows += len(got)
					}
				}
			}
		}
	}
	if smartRows == 0 {
		t.Fatal("the smart-money cohort is empty on every chain")
	}
	var got []query.ScreenerRow
	ocGet(t, h, "/v1/onchain/tokens/screener?window=7d&min_volume_usd=5000000&min_holders=100&limit=3", &got)
	compareScreener(t, "floors", got, oracleScreener(w, "ethereum", 7, "volume", false, 5e6, 100, 3))
}

// TestOnchainScreenerRules: SPEC §4.1 and §8 rules of the screener.
func TestOnchainScreenerRules(t *testing.T) {
	h, _ := ocTinySetup(t)
	t.Run("native coin is the zero address with its real symbol and name", func(t *testing.T) {
		var got []query.ScreenerRow
		ocGet(t, h, "/v1/onchain/tokens/screener?window=7d", &got)
		ok := false
		for _, r := range got {
			if r.Symbol == "" || r.Name == nil {
				t.Fatalf("row without metadata: %+v", r)
			}
			if r.TokenAddress == query.OnchainZeroAddress && r.Symbol == "ETH" && *r.Name == "Ether" {
				ok = true
			}
		}
		if !ok {
			t.Fatal("no native-coin row")
		}
	})
	t.Run("zero-resolving defaults", func(t *testing.T) {
		_, a := ocDo(t, h, "GET", "/v1/onchain/tokens/screener")
		_, b := ocDo(t, h, "GET", "/v1/onchain/tokens/screener?limit=0&min_volume_usd=0&min_holders=&window=&chain=&sort=")
		_, c := ocDo(t, h, "GET", "/v1/onchain/tokens/screener?limit=50&window=24h&chain=ethereum&sort=volume")
		if a != b || a != c {
			t.Fatal("0, empty and omitted do not resolve to the route defaults")
		}
	})
	for _, tc := range []struct{ rule, target, body string }{
		{"unknown chain is 400 with SPEC's message", "/v1/onchain/tokens/screener?chain=solana", `{"detail":"chain 'solana' not supported (use ethereum, bsc, or base)"}`},
		{"limit accepted up to 500", "/v1/onchain/tokens/screener?limit=501", `{"detail":"limit must be between 1 and 500"}`},
		{"unknown sort is 400", "/v1/onchain/tokens/screener?sort=pnl", `{"detail":"sort must be one of volume, net_inflow, holders, smart_inflow"}`},
	} {
		if code, body := ocDo(t, h, "GET", tc.target); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}

// TestOnchainScreenerFixture: limit defaults to 50; 500 is accepted and applied at 100; a token whose
// in_usd equals out_usd ranks at zero on net_inflow, between gainers and losers.
func TestOnchainScreenerFixture(t *testing.T) {
	f := &ocFixture{}
	cex, a, b := ocAddr(900), ocAddr(1), ocAddr(2)
	f.label(cex, "Binance 1", "cex", "manual")
	for i := 0; i < 120; i++ {
		tok := ocTok(i)
		f.token("ethereum", tok, fmt.Sprintf("T%d", i), fmt.Sprintf("Token %d", i), fmt.Sprintf("t%d", i))
		f.xfer("ethereum", time.Hour, tok, a, b, 1, float64(100+i))
	}
	// Token 200: 1,000 in and 1,000 out (to the cent) at the wallets' edge; 201 gains
	// 0.01; 202 loses 0.01.
	for i, d := range []float64{0, 0.01, -0.01} {
		tok := ocTok(-4096 + i) // addresses before the plain tokens
		f.token("ethereum", tok, fmt.Sprintf("Z%d", i), fmt.Sprintf("Zero %d", i), fmt.Sprintf("z%d", i))
		f.xfer("ethereum", time.Hour, tok, cex, a, 1, 1000.10+d)
		f.xfer("ethereum", time.Hour, tok, b, cex, 1, 1000.10)
	}
	h := f.serve(t)
	var got []query.ScreenerRow
	ocGet(t, h, "/v1/onchain/tokens/screener?limit=500", &got)
	if len(got) != 100 {
		t.Fatalf("limit=500 served %d rows, want 100", len(got))
	}
	ocGet(t, h, "/v1/onchain/tokens/screener", &got)
	if len(got) != 50 {
		t.Fatalf("default limit served %d rows, want 50", len(got))
	}
	ocGet(t, h, "/v1/onchain/tokens/screener?sort=net_inflow&min_volume_usd=1000", &got)
	pos := map[string]int{}
	for i, r := range got {
		pos[r.TokenAddress] = i
	}
	if len(got) != 3 {
		t.Fatalf("min_volume_usd=1000 kept %d tokens", len(got))
	}
	z := got[pos[ocTok(-4096)]]
	if z.InUSD != z.OutUSD || z.NetFlowUSD != 0 {
		t.Fatalf("zero-net token %+v", z)
	}
	if !(pos[ocTok(-4095)] == 0 && pos[ocTok(-4096)] == 1 && pos[ocTok(-4094)] == 2) {
		t.Fatalf("net_inflow order: +0.01 at %d, 0 at %d, -0.01 at %d", pos[ocTok(-4095)], pos[ocTok(-4096)], pos[ocTok(-4094)])
	}
	// The 120 wallet-to-wallet tokens (net 0) and the zero-net token tie at 0 and order by address.
	ocGet(t, h, "/v1/onchain/tokens/screener?sort=net_inflow&limit=100", &got)
	if got[0].TokenAddress != ocTok(-4095) || got[1].TokenAddress != ocTok(-4096) {
		t.Fatalf("net_inflow head %+v", got[:2])
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].NetFlowUSD == got[i].NetFlowUSD && got[i-1].TokenAddress > got[i].TokenAddress {
			t.Fatalf("tie not ordered by address at %d", i)
		}
		if got[i-1].NetFlowUSD < got[i].NetFlowUSD {
			t.Fatalf("not descending at %d", i)
		}
	}
}

// ---- wallets/{address} ---------------------------------------------------------------

// TestOnchainWalletAgainstOracle: the five windows equal plain-Go sums for busy, quiet
// and unknown wallets; the idle 24h window is present and zeroed; all-time fields repeat.
func TestOnchainWalletAgainstOracle(t *testing.T) {
	h, w := ocTinySetup(t)
	now := testlake.Now()
	lastSeen := map[string]time.Time{}
	count := map[string]int{}
	for _, r := range w.raw {
		for _, a := range []string{r.from, r.to} {
			count[a]++
			if r.t.After(lastSeen[a]) {
				lastSeen[a] = r.t
			}
		}
	}
	var busy, idle []string
	for a, n := range count {
		if n > 200 {
			busy = append(busy, a)
		}
		if now.Sub(lastSeen[a]) > 48*time.Hour {
			idle = append(idle, a)
		}
	}
	sort.Strings(busy)
	sort.Strings(idle)
	if len(idle) == 0 || len(busy) == 0 {
		t.Fatalf("busy %d idle %d wallets", len(busy), len(idle))
	}
	picks := append(append(busy[:min(5, len(busy))], idle[:min(5, len(idle))]...), ocAddr(12345))
	for _, a := range picks {
		var keys map[string]json.RawMessage
		code, body := get(t, h, "/v1/onchain/wallets/0x"+strings.ToUpper(a[2:])) // any case in, lower-case out
		if code != 200 || json.Unmarshal(body, &keys) != nil || len(keys) != 5 {
			t.Fatalf("%s: %d %s", a, code, body)
		}
		var got map[string]query.WalletWindow
		json.Unmarshal(body, &got) //nolint:errcheck
		want := oracleWallet(w, a, now)
		for _, name := range []string{"24h", "7d", "30d", "90d", "all"} {
			g, o := got[name], want[name]
			if !near(g.TotalInflow, o.TotalInflow) || !near(g.TotalOutflow, o.TotalOutflow) || !near(g.TotalVolume, o.TotalVolume) ||
				!near(g.NetFlow, o.NetFlow) || g.TxCount != o.TxCount || g.TokensTraded != o.TokensTraded ||
				fmt.Sprint(g.FirstSeen) != fmt.Sprint(o.FirstSeen) && *g.FirstSeen != *o.FirstSeen ||
				fmt.Sprint(g.LastActive) != fmt.Sprint(o.LastActive) && *g.LastActive != *o.LastActive {
				t.Fatalf("%s %s: %+v\noracle %+v", a, name, g, o)
			}
		}
		if lastSeen[a].Before(now.Add(-24*time.Hour)) && (got["24h"].TxCount != 0 || got["24h"].TotalVolume != 0) {
			t.Fatalf("%s: idle 24h not zeroed: %+v", a, got["24h"])
		}
		if got["24h"].TokensTraded != got["all"].TokensTraded || fmt.Sprint(got["24h"].FirstSeen) != fmt.Sprint(got["all"].FirstSeen) && *got["24h"].FirstSeen != *got["all"].FirstSeen {
			t.Fatalf("%s: all-time fields not repeated", a)
		}
	}
	if code, body := ocDo(t, h, "GET", "/v1/onchain/wallets/0xnothex"); code != 400 || !strings.HasPrefix(body, `{"detail":"Bad EVM address`) {
		t.Fatalf("malformed address: %d %s", code, body)
	}
}

// ---- wallets/discover ----------------------------------------------------------------

// TestOnchainDiscoverAgainstOracle: every sort, order and window on both chains equals the
// plain-Go leaderboard; total is the whole pnl_available population.
func TestOnchainDiscoverAgainstOracle(t *testing.T) {
	h, w := ocTinySetup(t)
	now := testlake.Now()
	windows := map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour, "all": 0}
	for _, chain := range []string{"ethereum", "bsc"} {
		seenFirst, seenLast := map[string]time.Time{}, map[string]time.Time{}
		for _, r := range w.raw {
			if r.chain != chain || r.t.After(now) {
				continue
			}
			for _, a := range []string{r.from, r.to} {
				if f, ok := seenFirst[a]; !ok || r.t.Before(f) {
					seenFirst[a] = r.t
				}
				if r.t.After(seenLast[a]) {
					seenLast[a] = r.t
				}
			}
		}
		for win, d := range windows {
			keep := func(r ocRaw) bool {
				return r.chain == chain && !r.t.After(now) && (d == 0 || r.t.After(now.Add(-d)))
			}
			pnl, prof := oraclePnL(w.raw, keep)
			rows := map[string]*query.DiscoverRow{}
			toks := map[string]map[string]bool{}
			for _, r := range w.raw {
				if !keep(r) {
					continue
				}
				for _, a := range []string{r.from, r.to} {
					if rows[a] == nil {
						rows[a] = &query.DiscoverRow{Address: a}
						toks[a] = map[string]bool{}
					}
					toks[a][r.token] = true
				}
				rows[r.to].Inflow += r.usd
				rows[r.from].Outflow += r.usd
				rows[r.to].TxCount++
				if r.from != r.to {
					rows[r.from].TxCount++
				}
			}
			var list []query.DiscoverRow
			for a, r := range rows {
				v, ok := pnl[a]
				if !ok {
					continue
				}
				r.RealizedPnL, r.TokensProfitable, r.TokensTraded = v, int64(prof[a]), int64(len(toks[a]))
				r.Volume, r.NetFlow = r.Inflow+r.Outflow, r.Inflow-r.Outflow
				list = append(list, *r)
			}
			for _, s := range []string{"volume", "inflow", "outflow", "net_flow", "tx_count", "pnl"} {
				for _, order := range []string{"desc", "asc"} {
					key := func(r query.DiscoverRow) float64 {
						switch s {
						case "inflow":
							return query.Round(r.Inflow, 2)
						case "outflow":
							return query.Round(r.Outflow, 2)
						case "net_flow":
							return query.Round(r.Inflow, 2) - query.Round(r.Outflow, 2)
						case "tx_count":
							return float64(r.TxCount)
						case "pnl":
							return query.Round(r.RealizedPnL, 2)
						}
						return query.Round(r.Inflow, 2) + query.Round(r.Outflow, 2)
					}
					sort.Slice(list, func(i, j int) bool {
						ki, kj := key(list[i]), key(list[j])
						if order == "desc" {
							ki, kj = -ki, -kj
						}
						if ki != kj {
							return ki < kj
						}
						return list[i].Address < list[j].Address
					})
					var got query.Discover
					ocGet(t, h, fmt.Sprintf("/v1/onchain/wallets/discover?chain=%s&window=%s&sort=%s&order=%s&size=20", chain, win, s, order), &got)
					if got.Total != int64(len(list)) || len(got.Wallets) != min(20, len(list)) {
						t.Fatalf("%s %s %s %s: total %d rows %d; oracle %d", chain, win, s, order, got.Total, len(got.Wallets), len(list))
					}
					for i, g := range got.Wallets {
						o := list[i]
						if g.Address != o.Address || !near(g.Volume, o.Volume) || !near(g.Inflow, o.Inflow) || !near(g.Outflow, o.Outflow) ||
							!near(g.NetFlow, o.NetFlow) || g.TxCount != o.TxCount || g.TokensTraded != o.TokensTraded ||
							g.TokensProfitable != o.TokensProfitable || !near(g.RealizedPnL, o.RealizedPnL) || g.PnLAvailable != 1 ||
							*g.FirstSeen != seenFirst[o.Address].UTC().Format("2006-01-02") || *g.LastActive != seenLast[o.Address].UTC().Format("2006-01-02") {
							t.Fatalf("%s %s %s %s row %d: %+v\noracle %+v", chain, win, s, order, i, g, o)
						}
					}
				}
			}
		}
	}
}

// TestOnchainDiscoverRules: size at most 20 (default 10), chain ethereum or bsc only.
func TestOnchainDiscoverRules(t *testing.T) {
	h, _ := ocTinySetup(t)
	var d query.Discover
	ocGet(t, h, "/v1/onchain/wallets/discover", &d)
	if len(d.Wallets) != 10 || d.Total <= 20 {
		t.Fatalf("default size: %d rows, total %d", len(d.Wallets), d.Total)
	}
	ocGet(t, h, "/v1/onchain/wallets/discover?size=0", &d)
	if len(d.Wallets) != 10 {
		t.Fatalf("size=0 resolves to 10: %d", len(d.Wallets))
	}
	for _, tc := range []struct{ rule, target, body string }{
		{"size above 20 is 400", "/v1/onchain/wallets/discover?size=21", `{"detail":"size must be between 1 and 20"}`},
		{"base is not a discover chain", "/v1/onchain/wallets/discover?chain=base", `{"detail":"chain 'base' not supported (use ethereum or bsc)"}`},
	} {
		if code, body := ocDo(t, h, "GET", tc.target); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}

// TestOnchainDiscoverPnLWithoutOverflow: realized PnL of a wallet with huge amounts is
// the exact figure, not a wrapped one.
func TestOnchainDiscoverPnLWithoutOverflow(t *testing.T) {
	f := &ocFixture{}
	tok, a, b := ocTok(1), ocAddr(1), ocAddr(2)
	f.token("ethereum", tok, "PEPE", "Pepe", "pepe")
	f.xfer("ethereum", 3*time.Hour, tok, b, a, 4e15, 2e10) // buys 4e15 tokens for 20 billion USD
	f.xfer("ethereum", 2*time.Hour, tok, a, b, 4e15, 3e10) // sells them for 30 billion USD
	h := f.serve(t)
	var d query.Discover
	ocGet(t, h, "/v1/onchain/wallets/discover?sort=pnl", &d)
	if d.Total != 2 || d.Wallets[0].Address != a || d.Wallets[0].RealizedPnL != 1e10 || d.Wallets[1].RealizedPnL != -1e10 {
		t.Fatalf("%+v", d)
	}
}

// ---- wallets/{address}/trace -----------------------------------------------------------

// TestOnchainTraceAgainstOracle: graphs from several roots, depths and widths equal the
// plain-Go breadth-first expansion over the raw transfers.
func TestOnchainTraceAgainstOracle(t *testing.T) {
	h, w := ocTinySetup(t)
	now := testlake.Now()
	roots := busiestWallets(w, "ethereum", 3)
	for _, root := range roots {
		for _, tc := range []struct {
			depth, width int
			window       string
			since        time.Duration
			minUSD       float64
		}{{2, 5, "30d", 30 * 24 * time.Hour, 10_000}, {3, 4, "7d", 7 * 24 * time.Hour, 1_000}, {5, 3, "24h", 24 * time.Hour, 500}} {
			target := fmt.Sprintf("/v1/onchain/wallets/%s/trace?depth=%d&width=%d&window=%s&min_usd=%g", root, tc.depth, tc.width, tc.window, tc.minUSD)
			var got query.TraceGraph
			ocGet(t, h, target, &got)
			want := oracleTrace(w, root, "ethereum", tc.depth, tc.width, now.Add(-tc.since), now, tc.minUSD)
			compareTrace(t, target, got, want)
			if got.Stats.NodeCount < 3 {
				t.Fatalf("%s: only %d nodes", target, got.Stats.NodeCount)
			}
		}
	}
}

func busiestWallets(w *ocWorld, chain string, n int) []string {
	c := map[string]int{}
	for _, r := range w.raw {
		if r.chain == chain {
			c[r.from]++
			c[r.to]++
		}
	}
	var out []string
	for a := range c {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return c[out[i]] > c[out[j]] || c[out[i]] == c[out[j]] && out[i] < out[j] })
	return out[:n]
}

// TestOnchainTraceHandBuilt: hand-built graphs with a cycle, a wallet named by several
// neighbours, a counterparty under min_usd, and width and depth at their caps.
func TestOnchainTraceHandBuilt(t *testing.T) {
	f := &ocFixture{}
	tok := ocTok(1)
	f.token("ethereum", tok, "USDC", "USD Coin", "usdc")
	R, A, B, C, D, E := ocAddr(1), ocAddr(2), ocAddr(3), ocAddr(4), ocAddr(5), ocAddr(6)
	x := func(from, to string, usd float64) { f.xfer("ethereum", 24*time.Hour, tok, from, to, usd, usd) }
	x(R, A, 50_000) // cycle R -> A -> B -> R
	x(A, B, 40_000)
	x(B, R, 30_000)
	x(R, C, 20_000)
	x(C, D, 15_000) // D is named by both A and C
	x(A, D, 25_000)
	x(R, E, 5_000) // under the default min_usd
	// Second graph: P is expanded before Q; P does not name Q (width 2) but Q names P.
	P, Q, S, Z := ocAddr(11), ocAddr(12), ocAddr(13), ocAddr(14)
	x(S, P, 100_000)
	x(S, Q, 90_000)
	x(P, Z, 80_000)
	x(Q, P, 20_000)
	// Third graph: a chain L0..L7 and twelve leaves on L0, for the caps.
	L := func(i int) string { return ocAddr(100 + i) }
	for i := 0; i < 7; i++ {
		x(L(i), L(i+1), 30_000)
	}
	for i := 1; i <= 12; i++ {
		x(L(0), ocAddr(200+i), 10_500+float64(i)*1000)
	}
	f.label(A, "Exchange A", "cex", "community")
	f.label(A, "Exchange A (manual)", "cex", "manual") // the cascade picks priority 1
	h := f.serve(t)
	trace := func(q string) query.TraceGraph {
		var g query.TraceGraph
		ocGet(t, h, "/v1/onchain/wallets/"+q, &g)
		return g
	}
	type e struct {
		from, to string
		out, in  float64
	}
	check := func(name string, g query.TraceGraph, nodes map[string]int, vols map[string]float64, edges []e) {
		t.Helper()
		if len(g.Nodes) != len(nodes) || len(g.Edges) != len(edges) || g.Stats.NodeCount != len(nodes) || g.Stats.EdgeCount != len(edges) {
			t.Fatalf("%s: %d nodes %d edges %+v", name, len(g.Nodes), len(g.Edges), g)
		}
		for _, n := range g.Nodes {
			if d, ok := nodes[n.Address]; !ok || d != n.Depth {
				t.Fatalf("%s: node %+v", name, n)
			}
			if v, ok := vols[n.Address]; ok && n.TotalVolumeUSD != v {
				t.Fatalf("%s: node %s volume %v, want %v", name, n.Address, n.TotalVolumeUSD, v)
			}
		}
		for i, w := range edges {
			g := g.Edges[i]
			if g.From != w.from || g.To != w.to || g.OutUSD != w.out || g.InUSD != w.in || g.VolumeUSD != w.out+w.in || g.TxCount != 1 {
				t.Fatalf("%s: edge %d %+v, want %+v", name, i, g, w)
			}
		}
	}
	t.Run("cycle, several neighbours and min_usd", func(t *testing.T) {
		g := trace(R + "/trace")
		check("R", g, map[string]int{R: 0, A: 1, B: 1, C: 1, D: 2},
			map[string]float64{R: 100_000, A: 115_000, B: 70_000, C: 35_000, D: 40_000},
			[]e{{R, A, 50_000, 0}, {R, B, 0, 30_000}, {R, C, 20_000, 0}, {A, B, 40_000, 0}, {A, D, 25_000, 0}, {C, D, 15_000, 0}})
		if g.Nodes[1].Label != "Exchange A (manual)" || g.Nodes[1].WalletType != "cex" || g.Stats.MaxDepthReached != 2 {
			t.Fatalf("labels or stats: %+v %+v", g.Nodes[1], g.Stats)
		}
		if g.Root != R || g.Depth != 2 || g.Width != 5 || g.Window != "30d" || g.MinUSD != 10_000 {
			t.Fatalf("echo: %+v", g)
		}
		// Depth 3 expands D once although A and C both name it: nothing new appears.
		g3 := trace(R + "/trace?depth=3")
		if g3.Stats.NodeCount != 5 || g3.Stats.EdgeCount != 6 || g3.Stats.MaxDepthReached != 2 || g3.Depth != 3 {
			t.Fatalf("depth 3: %+v", g3.Stats)
		}
		// A small positive floor admits E; min_usd=0 reads 10,000.
		if g := trace(R + "/trace?min_usd=1000"); g.Stats.NodeCount != 6 || g.MinUSD != 1000 {
			t.Fatalf("min_usd=1000: %+v", g.Stats)
		}
		if g := trace(R + "/trace?min_usd=0&depth=0&width=0&window=31d"); g.MinUSD != 10_000 || g.Depth != 2 || g.Width != 5 || g.Window != "30d" || g.Stats.NodeCount != 5 {
			t.Fatalf("zero-resolving defaults and misspelled window: %+v", g)
		}
	})
	t.Run("from is the wallet expanded first, not the sender", func(t *testing.T) {
		g := trace(S + "/trace?width=2")
		check("S", g, map[string]int{S: 0, P: 1, Q: 1, Z: 2}, nil,
			[]e{{S, P, 100_000, 0}, {S, Q, 90_000, 0}, {P, Z, 80_000, 0}, {P, Q, 0, 20_000}})
	})
	t.Run("width and depth at their caps", func(t *testing.T) {
		g := trace(L(0) + "/trace?depth=99&width=99")
		if g.Depth != 5 || g.Width != 10 || g.Stats.MaxDepthReached != 5 || g.Stats.NodeCount != 15 || g.Stats.EdgeCount != 14 {
			t.Fatalf("caps: depth %d width %d %+v", g.Depth, g.Width, g.Stats)
		}
		for _, n := range g.Nodes {
			if n.Address == L(6) || n.Address == ocAddr(201) || n.Address == ocAddr(202) || n.Address == ocAddr(203) {
				t.Fatalf("node %s beyond the caps", n.Address)
			}
		}
		if g := trace(L(0) + "/trace?depth=-3&width=-1"); g.Depth != 1 || g.Width != 1 || g.Stats.NodeCount != 2 || g.Nodes[1].Address != L(1) {
			t.Fatalf("negative values apply 1: %+v", g)
		}
	})
	for _, tc := range []struct{ rule, target, body string }{
		{"unknown chain is 400", "/v1/onchain/wallets/" + R + "/trace?chain=polygon", `{"detail":"chain 'polygon' not supported (use ethereum, bsc, or base)"}`},
		{"negative min_usd is 400", "/v1/onchain/wallets/" + R + "/trace?min_usd=-5", `{"detail":"min_usd must be at least 0"}`},
	} {
		if code, body := ocDo(t, h, "GET", tc.target); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
}

// ---- labels/batch --------------------------------------------------------------------

// ocAuth accepts any credential; ocBudget admits every request and records credits.
type ocAuth struct{}

func (ocAuth) Authenticate(context.Context, string, string) (ratelimit.Principal, error) {
	return ratelimit.Principal{CredentialID: "k", Kind: "api_key"}, nil
}

type ocBudget struct{ credits []string }

func (b *ocBudget) Spend(context.Context, ratelimit.Principal, int) (ratelimit.Decision, error) {
	return ratelimit.Decision{Allowed: true, Limit: 20000, Remaining: 1, Reset: testlake.Now()}, nil
}

func (b *ocBudget) LogCredits(_ context.Context, _ ratelimit.Principal, route string, credits int) {
	b.credits = append(b.credits, fmt.Sprintf("%s=%d", route, credits))
}

// TestOnchainRejectedBatchesNotBilled: a 400 batch logs no credit; an accepted batch
// (even one answering []) and every other on-chain call log exactly 1.
func TestOnchainRejectedBatchesNotBilled(t *testing.T) {
	b := &ocBudget{}
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t)), Auth: ocAuth{}, Budget: b}).Handler()
	do := func(method, target string) int {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("X-API-Key", "k")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	a := ocAddr(1)
	for _, q := range []string{"", "addresses=", "chain=solana&addresses=" + a, "addresses=" + strings.Repeat(a+",", 101)} {
		if code := do("POST", "/v1/onchain/labels/batch?"+q); code != 400 {
			t.Fatalf("%q: %d", q, code)
		}
	}
	if len(b.credits) != 0 {
		t.Fatalf("rejected batches billed: %v", b.credits)
	}
	if do("POST", "/v1/onchain/labels/batch?addresses=nothex") != 200 || do("POST", "/v1/onchain/labels/batch?addresses="+a) != 200 ||
		do("GET", "/v1/onchain/wallets/"+a) != 200 {
		t.Fatal("accepted calls failed")
	}
	want := []string{"/v1/onchain/labels/batch=1", "/v1/onchain/labels/batch=1", "/v1/onchain/wallets/{address}=1"}
	if fmt.Sprint(b.credits) != fmt.Sprint(want) {
		t.Fatalf("credits %v, want %v", b.credits, want)
	}
}

// TestOnchainLabelsBatchRules: SPEC §4.1 rules of POST labels/batch.
func TestOnchainLabelsBatchRules(t *testing.T) {
	h, w := ocTinySetup(t)
	var labelled []string
	for a := range w.labels {
		labelled = append(labelled, a)
	}
	sort.Strings(labelled)
	l1, l2, none := labelled[0], labelled[len(labelled)-1], ocAddr(4242)
	post := func(q string) (int, string) { return ocDo(t, h, "POST", "/v1/onchain/labels/batch?"+q) }
	code, body := post("addresses=" + strings.ToUpper(l2[2:3]) + "," + none + ",0x" + strings.ToUpper(l2[2:]) + ",nothex," + l1)
	var rows []query.LabelRow
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil {
		t.Fatalf("%d %s", code, body)
	}
	if len(rows) != 3 || rows[0].Wallet != none || rows[1].Wallet != l2 || rows[2].Wallet != l1 {
		t.Fatalf("input order kept, malformed skipped, lower-cased echo: %s", body)
	}
	if rows[0].Found || rows[0].Entity != nil || rows[0].WalletType != nil || rows[0].Confidence != nil || rows[0].RiskFlag != nil ||
		rows[0].Net30dUSD != 0 || rows[0].Volume30dUSD != 0 || rows[0].Tx30d != 0 || rows[0].Tokens30dCount != 0 {
		t.Fatalf("found false row not zeroed: %+v", rows[0])
	}
	for _, r := range rows[1:] {
		l := w.labels[r.Wallet]
		if !r.Found || *r.Entity != l.entity || *r.WalletType != l.walletType || *r.Confidence != l.confidence || *r.RiskFlag != l.risk {
			t.Fatalf("label %+v, cascade %+v", r, l)
		}
		// 30-day Ethereum activity, from the raw rows.
		var in, out float64
		var n int64
		toks := map[string]bool{}
		for _, x := range w.raw {
			if x.chain != "ethereum" || !x.t.After(testlake.Now().Add(-30*24*time.Hour)) || (x.from != r.Wallet && x.to != r.Wallet) {
				continue
			}
			n++
			toks[x.token] = true
			if x.to == r.Wallet {
				in += x.usd
			}
			if x.from == r.Wallet {
				out += x.usd
			}
		}
		if !near(r.Net30dUSD, in-out) || !near(r.Volume30dUSD, in+out) || r.Tx30d != n || r.Tokens30dCount != int64(len(toks)) {
			t.Fatalf("30d figures %+v; oracle in %v out %v n %d toks %d", r, in, out, n, len(toks))
		}
	}
	t.Run("only malformed addresses give []", func(t *testing.T) {
		if code, body := post("addresses=abc,0x12"); code != 200 || body != "[]" {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("chain is validated but never applied", func(t *testing.T) {
		_, a := post("addresses=" + l1)
		_, b := post("addresses=" + l1 + "&chain=bsc")
		if a != b {
			t.Fatal("chain=bsc changed the rows")
		}
		if code, body := post("addresses=" + l1 + "&chain=solana"); code != 400 || body != `{"detail":"chain 'solana' not supported (use ethereum, bsc, or base)"}` {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("a body is ignored", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/onchain/labels/batch?addresses="+l1, strings.NewReader(`{"addresses":["`+l2+`"]}`)))
		_, a := post("addresses=" + l1)
		if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != a {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = ocAddr(i)
	}
	if code, body := post("addresses=" + strings.Join(hundred, ",")); code != 200 || strings.Count(body, `"wallet"`) != 100 {
		t.Fatalf("100 addresses: %d", code)
	}
	for _, tc := range []struct{ rule, q, body string }{
		{"missing addresses is 400", "", `{"detail":"addresses (list) is required"}`},
		{"empty addresses is 400", "addresses=", `{"detail":"addresses (list) is required"}`},
		{"more than 100 is 400", "addresses=" + strings.Join(hundred, ",") + "," + none, `{"detail":"batch capped at 100 addresses"}`},
	} {
		if code, body := post(tc.q); code != 400 || body != tc.body {
			t.Errorf("%s: %d %s", tc.rule, code, body)
		}
	}
	if code, _ := ocDo(t, h, "GET", "/v1/onchain/labels/batch?addresses="+l1); code != 405 {
		t.Errorf("GET labels/batch: %d", code)
	}
}
