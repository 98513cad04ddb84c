package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/cmd/mdq/cli"
	"mdq/handlers"
	"mdq/query"
)

// ocFixture is a hand-made Ethereum-ETL export: wallets, tokens with 6, 18 and 0
// decimals (one unpriced), hourly prices, labels and ENS names, and the transfers
// an oracle reads back in plain Go.
type ocFixture struct {
	dir      string
	now      time.Time
	wallets  []string
	tokens   []ocTok
	prices   map[string]map[int64]float64 // token → hour → price
	rows     []ocFixRow
	labelled string
	opening  map[[2]string]*big.Int
}

type ocTok struct {
	addr, symbol string
	dec          int
}

type ocFixRow struct {
	block     int64
	t         time.Time
	tx        string
	logIndex  int
	token     string
	from, to  string
	raw       *big.Int
	amount    float64
	usd       float64
	priced    bool
	symbol    string
	direction string
}

func addr(prefix byte, i int) string { return fmt.Sprintf("0x%c%039x", prefix, i) }

func buildOnchainFixture(t *testing.T) *ocFixture {
	t.Helper()
	f := &ocFixture{dir: t.TempDir(), now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), prices: map[string]map[int64]float64{}}
	for i := 0; i < 6; i++ {
		f.wallets = append(f.wallets, addr('a', i+1))
	}
	f.tokens = []ocTok{{addr('c', 1), "USDX", 6}, {addr('c', 2), "WETX", 18}, {addr('c', 3), "ODD", 0}}
	start := f.now.Add(-10 * 24 * time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	var tr, blocks, prices strings.Builder
	tr.WriteString("token_address,from_address,to_address,value,transaction_hash,log_index,block_number\n")
	blocks.WriteString("number,hash,parent_hash,timestamp\n")
	prices.WriteString("chain,token_address,hour,price_usd\n")
	for h := start.Truncate(time.Hour); !h.After(f.now); h = h.Add(time.Hour) {
		for i, tk := range f.tokens[:2] {
			p := []float64{1, 2000}[i] * (1 + 0.01*float64(h.Hour()%7))
			if f.prices[tk.addr] == nil {
				f.prices[tk.addr] = map[int64]float64{}
			}
			f.prices[tk.addr][h.Unix()] = p
			fmt.Fprintf(&prices, "ethereum,%s,%s,%g\n", strings.ToUpper(tk.addr[:4])+tk.addr[4:], h.Format(time.RFC3339), p)
		}
	}
	block := int64(19_000_000)
	for ts := start.Add(7 * time.Minute); ts.Before(f.now); ts = ts.Add(time.Duration(50+rng.IntN(200)) * time.Minute) {
		block += int64(1 + rng.IntN(30))
		fmt.Fprintf(&blocks, "%d,0x%064x,0x%064x,%d\n", block, block, block-1, ts.Unix())
		for li := 0; li < 1+rng.IntN(3); li++ {
			a, b := rng.IntN(len(f.wallets)), rng.IntN(len(f.wallets)-1)
			if b >= a {
				b++
			}
			tk := f.tokens[rng.IntN(len(f.tokens))]
			raw := new(big.Int).Mul(big.NewInt(int64(1+rng.IntN(5_000_000))), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(tk.dec-3, 0))), nil))
			r := ocFixRow{block: block, t: ts, tx: fmt.Sprintf("0x%064x", block*10+int64(li)), logIndex: li, token: tk.addr,
				from: f.wallets[a], to: f.wallets[b], raw: raw, symbol: tk.symbol}
			r.amount, _ = new(big.Rat).SetFrac(raw, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tk.dec)), nil)).Float64()
			if p, ok := f.prices[tk.addr][ts.Truncate(time.Hour).Unix()]; ok {
				r.usd, r.priced = r.amount*p, true
			}
			f.rows = append(f.rows, r)
			fmt.Fprintf(&tr, "%s,%s,%s,%s,%s,%d,%d\n", r.token, r.from, r.to, raw, r.tx, li, block)
		}
	}
	var tokens strings.Builder
	tokens.WriteString("address,symbol,name,decimals,total_supply,block_number\n")
	for _, tk := range f.tokens {
		fmt.Fprintf(&tokens, "%s,%s,%s token,%d,0,1\n", tk.addr, tk.symbol, tk.symbol, tk.dec)
	}
	f.labelled = f.wallets[0]
	// Opening balances: wallets 0-2 hold 10^13 raw units of every token at the start,
	// so their computed balances stay positive; the others may go negative (left out).
	var opening strings.Builder
	opening.WriteString("address,token_address,balance_raw\n")
	f.opening = map[[2]string]*big.Int{}
	for _, w := range f.wallets[:3] {
		for _, tk := range f.tokens {
			fmt.Fprintf(&opening, "%s,%s,10000000000000\n", w, tk.addr)
			f.opening[[2]string{w, tk.addr}] = big.NewInt(1e13)
		}
	}
	files := map[string]string{
		"etl/token_transfers.csv": tr.String(),
		"etl/blocks.csv":          blocks.String(),
		"etl/tokens.csv":          tokens.String(),
		"prices.csv":              prices.String(),
		"label_sources.csv":       "source,name,kind,priority,url\nmanual,Manual review,manual,1,\n",
		"labels.csv":              "address,entity,wallet_type,confidence,risk_flag,source,observed_at\n" + f.labelled + ",Example Exchange,cex,high,,manual,2026-01-01T00:00:00Z\n",
		"ens.csv":                 "address,name,is_primary,registered_at\n" + f.wallets[1] + ",alice.eth,true,2024-05-01T00:00:00Z\n",
		"opening.csv":             opening.String(),
	}
	for name, content := range files {
		p := filepath.Join(f.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *ocFixture) path(name string) string { return filepath.Join(f.dir, name) }

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, b)
	}
}

func cents(x float64) float64 { return math.Round(x*100) / 100 }

// TestIngestOnchainETLServesRoutes: `mdq ingest onchain` loads an Ethereum-ETL export,
// prices, label sources, labels and ENS names into an empty directory; a server on
// the new lake (real HTTP on loopback) answers /v1/onchain routes with the figures a
// plain-Go oracle computes from the fixture's rows. A second identical ingest writes
// nothing new.
func TestIngestOnchainETLServesRoutes(t *testing.T) {
	f := buildOnchainFixture(t)
	dir := filepath.Join(t.TempDir(), "lake")
	args := []string{"ingest", "onchain", "--data", dir, "--chain", "ethereum", "--etl", f.path("etl"),
		"--prices", f.path("prices.csv"), "--label-sources", f.path("label_sources.csv"), "--labels", f.path("labels.csv"),
		"--ens", f.path("ens.csv"), "--balances", f.path("opening.csv"), "--clock", f.now.Format(time.RFC3339)}
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("ingest: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, fmt.Sprintf("written %d,", len(f.rows))) || !strings.Contains(out, "onchain legs:") {
		t.Fatalf("summary:\n%s", out)
	}
	code, out, errs = run(t, args...)
	if code != 0 || !strings.Contains(out, "written 0,") || !strings.Contains(out, fmt.Sprintf("deduplicated %d,", len(f.rows))) {
		t.Fatalf("re-ingest: %d\n%s\n%s", code, out, errs)
	}

	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	srv := httptest.NewServer((&handlers.API{Q: q}).Handler())
	defer srv.Close()

	for _, w := range f.wallets {
		// Oracle: every transfer of the wallet, newest first (block time, log index, tx).
		var mine []ocFixRow
		var in, outUSD float64
		for _, r := range f.rows {
			if r.from == w || r.to == w {
				mine = append(mine, r)
			}
			if r.to == w {
				in += r.usd
			}
			if r.from == w {
				outUSD += r.usd
			}
		}
		sort.Slice(mine, func(i, j int) bool {
			if !mine[i].t.Equal(mine[j].t) {
				return mine[i].t.After(mine[j].t)
			}
			if mine[i].logIndex != mine[j].logIndex {
				return mine[i].logIndex > mine[j].logIndex
			}
			return mine[i].tx > mine[j].tx
		})
		var txs query.WalletTransactions
		getJSON(t, srv.URL+"/v1/onchain/wallets/"+"0x"+strings.ToUpper(w[2:])+"/transactions?days=30&limit=500", &txs)
		if txs.Wallet != w || len(txs.Transactions) != len(mine) {
			t.Fatalf("%s: %d transactions, oracle %d", w, len(txs.Transactions), len(mine))
		}
		for i, g := range txs.Transactions {
			o := mine[i]
			dir, cp := "in", o.from
			if o.from == w {
				dir, cp = "out", o.to
			}
			usdOK := (!o.priced && g.USD == nil) || (o.priced && g.USD != nil && math.Abs(*g.USD-o.usd) < 0.006)
			if g.TxHash != o.tx || g.BlockNumber != o.block || g.LogIndex != int64(o.logIndex) || g.TokenAddress != o.token ||
				g.Symbol != o.symbol || g.Direction != dir || g.Counterparty != cp || g.From != o.from || g.To != o.to ||
				math.Abs(g.Amount-o.amount) > 1e-9*math.Max(1, o.amount) || !usdOK {
				t.Fatalf("%s row %d: got %+v, oracle %+v", w, i, g, o)
			}
		}
		var sum query.WalletSummary
		getJSON(t, srv.URL+"/v1/onchain/wallets/"+w, &sum)
		if sum.All.TxCount != int64(len(mine)) || math.Abs(sum.All.TotalInflow-cents(in)) > 0.011 || math.Abs(sum.All.TotalOutflow-cents(outUSD)) > 0.011 {
			t.Fatalf("%s summary %+v, oracle tx %d in %.2f out %.2f", w, sum.All, len(mine), in, outUSD)
		}
	}

	// Balances: opening plus received minus sent, positive ones only, whole tokens.
	bal := map[[2]string]*big.Int{}
	for k, v := range f.opening {
		bal[k] = new(big.Int).Set(v)
	}
	for _, r := range f.rows {
		for _, side := range []struct {
			w    string
			sign int64
		}{{r.to, 1}, {r.from, -1}} {
			k := [2]string{side.w, r.token}
			if bal[k] == nil {
				bal[k] = new(big.Int)
			}
			bal[k].Add(bal[k], new(big.Int).Mul(r.raw, big.NewInt(side.sign)))
		}
	}
	decOf := map[string]int{}
	for _, tk := range f.tokens {
		decOf[tk.addr] = tk.dec
	}
	for _, w := range f.wallets {
		want := map[string]float64{}
		for k, v := range bal {
			if k[0] == w && v.Sign() > 0 {
				want[k[1]], _ = new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decOf[k[1]])), nil)).Float64()
			}
		}
		var got []query.Balance
		getJSON(t, srv.URL+"/v1/onchain/wallets/"+w+"/balances?min_usd=0", &got)
		if len(got) != len(want) {
			t.Fatalf("%s balances %+v, oracle %v", w, got, want)
		}
		for _, g := range got {
			if wb, ok := want[g.TokenAddress]; !ok || math.Abs(g.Balance-wb) > 1e-9*math.Max(1, wb) {
				t.Fatalf("%s balance %+v, oracle %v", w, g, want)
			}
		}
	}

	var labels []map[string]any
	resp, err := http.Post(srv.URL+"/v1/onchain/labels/batch?addresses="+f.labelled+","+f.wallets[2], "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&labels)
	resp.Body.Close()
	if len(labels) != 2 || labels[0]["entity"] != "Example Exchange" || labels[0]["found"] != true || labels[1]["found"] != false {
		t.Fatalf("labels %v", labels)
	}
	var ens any
	getJSON(t, srv.URL+"/v1/onchain/wallets/"+f.wallets[1]+"/ens", &ens)
	if !strings.Contains(fmt.Sprint(ens), "alice.eth") {
		t.Fatalf("ens %v", ens)
	}
	var search any
	getJSON(t, srv.URL+"/v1/onchain/tokens/search?q=WETX", &search)
	if !strings.Contains(fmt.Sprint(search), f.tokens[1].addr) {
		t.Fatalf("token search %v", search)
	}
}

// TestIngestOnchainETLFromStdin: `--etl -` takes the fixture's export files
// concatenated on stdin and writes the same transfers as the files; the section files
// it spools are removed after the run.
func TestIngestOnchainETLFromStdin(t *testing.T) {
	f := buildOnchainFixture(t)
	names, _ := filepath.Glob(filepath.Join(f.path("etl"), "*.csv"))
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // transfers before blocks: the order does not matter
	var stream bytes.Buffer
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
	}
	dir := filepath.Join(t.TempDir(), "lake")
	var out, errb bytes.Buffer
	code := cli.Do([]string{"ingest", "onchain", "--data", dir, "--chain", "ethereum", "--etl", "-",
		"--prices", f.path("prices.csv"), "--clock", f.now.Format(time.RFC3339)}, &stream, &out, &errb, "test")
	if code != 0 || !strings.Contains(out.String(), fmt.Sprintf("written %d,", len(f.rows))) {
		t.Fatalf("ingest from stdin: %d\n%s\n%s", code, out.String(), errb.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp", "ingest", "etl-stdin-*")); len(left) != 0 {
		t.Fatalf("section files left behind: %v", left)
	}
}
