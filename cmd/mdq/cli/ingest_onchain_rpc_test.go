package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/evmnode"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

type demoTransfer struct {
	block    int64
	t        time.Time
	tx       string
	li       int64
	token    string
	from, to string
	raw      string
	amount   float64
	usd      sql.NullFloat64
}

func (r demoTransfer) String() string {
	usd := "NULL"
	if r.usd.Valid {
		usd = strconv.FormatUint(math.Float64bits(r.usd.Float64), 16)
	}
	return fmt.Sprintf("%d|%d|%s|%d|%s|%s|%s|%s|%x|%s", r.block, r.t.Unix(), r.tx, r.li, r.token, r.from, r.to, r.raw, math.Float64bits(r.amount), usd)
}

func demoTransfers(t *testing.T, db *sql.DB, root, chain, where string) []demoTransfer {
	t.Helper()
	glob := filepath.Join(root, "onchain", "transfers", "chain="+chain, "date=*", "transfers.parquet")
	rows, err := db.Query("SELECT block_number, block_time, tx_hash, log_index, token_address, from_address, to_address, value_raw, amount, usd FROM read_parquet(" +
		lake.QuoteString(glob) + ") WHERE " + where + " ORDER BY tx_hash, log_index")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []demoTransfer
	for rows.Next() {
		var r demoTransfer
		if err := rows.Scan(&r.block, &r.t, &r.tx, &r.li, &r.token, &r.from, &r.to, &r.raw, &r.amount, &r.usd); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

const zeroAddr = "0x0000000000000000000000000000000000000000"

// TestIngestOnchainRPCRoundTripFromDemoLake: a JSON-RPC node on loopback serves the
// tiny demo lake's Ethereum ERC-20 transfers as Transfer logs (block timestamps and
// token metadata from the lake too). A copy of the demo lake whose Ethereum transfers
// keep only the native-coin rows (which no log carries) gets the rest back through
// `mdq ingest onchain --rpc`: its onchain_transfers rows are then the demo lake's
// bit for bit (amount and USD included), and every /v1/onchain route answers the same
// bytes on both lakes. The node refuses answers of more than 400 logs, so the ranges
// adapt throughout. Balances are computed from the transfers plus an opening
// snapshot (--balances) the test derives from the demo (its balances minus the net of
// its transfers); only their as_of differs (the newest block time, not the demo's
// end).
func TestIngestOnchainRPCRoundTripFromDemoLake(t *testing.T) {
	demo := testlake.Tiny(t)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	erc20 := demoTransfers(t, db, demo, "ethereum", "token_address <> '"+zeroAddr+"'")
	if len(erc20) < 100 {
		t.Fatalf("the demo lake has %d ethereum ERC-20 transfers", len(erc20))
	}
	times := map[uint64]int64{}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	node := evmnode.New(0, nil)
	for _, r := range erc20 {
		b := uint64(r.block)
		times[b] = r.t.Unix()
		lo, hi = min(lo, b), max(hi, b)
		node.AddLogs(b, evmnode.Transfer(r.token, r.from, r.to, r.raw, r.tx, uint64(r.li)))
	}
	node.TimeOf = func(n uint64) int64 {
		if ts, ok := times[n]; ok {
			return ts
		}
		return times[lo] + (int64(n)-int64(lo))*12
	}
	node.SetHead(hi + 20)
	node.MaxResults = 400
	trows, err := db.Query("SELECT token_address, symbol, name, decimals FROM read_parquet(" + lake.QuoteString(filepath.Join(demo, "onchain/tokens/tokens.parquet")) + ") WHERE chain = 'ethereum'")
	if err != nil {
		t.Fatal(err)
	}
	for trows.Next() {
		var a string
		var tk evmnode.Token
		trows.Scan(&a, &tk.Symbol, &tk.Name, &tk.Decimals)
		node.Tokens[a] = tk
	}
	trows.Close()
	url := node.Start(t)

	// The second lake: the demo lake with only the native rows of Ethereum transfers.
	dir := testlake.Copy(t)
	files, _ := filepath.Glob(filepath.Join(dir, "onchain", "transfers", "chain=ethereum", "date=*", "transfers.parquet"))
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		tmp := f + ".orig"
		if err := os.Rename(f, tmp); err != nil {
			t.Fatal(err)
		}
		date := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date=")
		if _, err := lake.CopyQuery(context.Background(), conn, dir, lake.OnchainTransfers, []string{"ethereum", date},
			"SELECT * FROM read_parquet("+lake.QuoteString(tmp)+") WHERE token_address = ?", zeroAddr); err != nil {
			t.Fatal(err)
		}
		os.Remove(tmp)
	}
	conn.Close()

	// The demo's opening positions, as a balances snapshot for the starting block: its
	// balances minus the net of every Ethereum transfer. With it, the balances mdq
	// computes from the transfers are the demo's.
	net := map[[2]string]*big.Int{}
	for _, r := range demoTransfers(t, db, demo, "ethereum", "true") {
		v, _ := new(big.Int).SetString(r.raw, 10)
		for _, side := range []struct {
			w string
			v *big.Int
		}{{r.to, v}, {r.from, new(big.Int).Neg(v)}} {
			k := [2]string{side.w, r.token}
			if net[k] == nil {
				net[k] = new(big.Int)
			}
			net[k].Add(net[k], side.v)
		}
	}
	brows, err := db.Query("SELECT address, token_address, balance_raw FROM read_parquet(" + lake.QuoteString(filepath.Join(demo, "onchain/balances/chain=ethereum/balances.parquet")) + ")")
	if err != nil {
		t.Fatal(err)
	}
	open := map[[2]string]*big.Int{}
	for brows.Next() {
		var a, tk, raw string
		brows.Scan(&a, &tk, &raw)
		open[[2]string{a, tk}], _ = new(big.Int).SetString(raw, 10)
	}
	brows.Close()
	for k, v := range net {
		if open[k] == nil {
			open[k] = new(big.Int)
		}
		open[k].Sub(open[k], v)
	}
	var snap strings.Builder
	snap.WriteString("address,token_address,balance_raw\n")
	for k, v := range open {
		if k[0] == zeroAddr || v.Sign() == 0 {
			continue
		}
		if v.Sign() < 0 {
			t.Fatalf("demo opening position of %v is negative", k)
		}
		fmt.Fprintf(&snap, "%s,%s,%s\n", k[0], k[1], v)
	}
	openingFile := filepath.Join(t.TempDir(), "opening.csv")
	if err := os.WriteFile(openingFile, []byte(snap.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errs := run(t, "ingest", "onchain", "--data", dir, "--chain", "ethereum", "--rpc", url, "--balances", openingFile,
		"--from-block", strconv.FormatUint(lo-5, 10), "--to-block", strconv.FormatUint(hi, 10), "--clock", testlake.End.Format(time.RFC3339))
	if code != 0 {
		t.Fatalf("ingest: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, fmt.Sprintf("written %d,", len(erc20))) || !strings.Contains(out, "rpc: ") {
		t.Fatalf("summary:\n%s", out)
	}
	t.Logf("%d ERC-20 transfers over blocks %d-%d; %s", len(erc20), lo, hi, strings.SplitN(out, "\n", 3)[:2])
	all := func(root string) string {
		var b strings.Builder
		for _, r := range demoTransfers(t, db, root, "ethereum", "true") {
			b.WriteString(r.String())
			b.WriteByte('\n')
		}
		return b.String()
	}
	if a, b := all(demo), all(dir); a != b || a == "" {
		t.Fatalf("transfers differ after the round trip (%d and %d bytes)", len(a), len(b))
	}

	// Every /v1/onchain route, with addresses that exist in the lake, on both lakes.
	var wallet, wallet2, token string
	if err := db.QueryRow("SELECT to_address FROM read_parquet(" + lake.QuoteString(filepath.Join(demo, "onchain/transfers/chain=ethereum/*/transfers.parquet")) +
		") WHERE token_address <> '" + zeroAddr + "' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&wallet); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT from_address FROM read_parquet("+lake.QuoteString(filepath.Join(demo, "onchain/transfers/chain=ethereum/*/transfers.parquet"))+
		") WHERE to_address = ? GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1", wallet).Scan(&wallet2); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT token_address FROM read_parquet(" + lake.QuoteString(filepath.Join(demo, "onchain/transfers/chain=ethereum/*/transfers.parquet")) +
		") WHERE token_address <> '" + zeroAddr + "' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&token); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{
		"/v1/onchain/tokens/{token_address}/transfers": "/v1/onchain/tokens/" + token + "/transfers?period=30d&tab=bought",
		"/v1/onchain/tokens/screener":                  "/v1/onchain/tokens/screener?window=30d&sort=net_inflow",
		"/v1/onchain/wallets/discover":                 "/v1/onchain/wallets/discover?window=all",
		"/v1/onchain/wallets/{address}":                "/v1/onchain/wallets/" + wallet,
		"/v1/onchain/wallets/{address}/trace":          "/v1/onchain/wallets/" + wallet + "/trace?window=all&min_usd=1",
		"/v1/onchain/labels/batch":                     "/v1/onchain/labels/batch?addresses=" + wallet + "," + wallet2,
		"/v1/onchain/wallets/{address}/transactions":   "/v1/onchain/wallets/" + wallet + "/transactions?days=30&limit=500",
		"/v1/onchain/wallets/{address}/counterparties": "/v1/onchain/wallets/" + wallet + "/counterparties?window=all",
		"/v1/onchain/wallets/{address}/pnl":            "/v1/onchain/wallets/" + wallet + "/pnl?days=30",
		"/v1/onchain/wallets/{address}/ens":            "/v1/onchain/wallets/" + wallet + "/ens",
		"/v1/onchain/wallets/compare":                  "/v1/onchain/wallets/compare?wallet_a=" + wallet + "&wallet_b=" + wallet2,
		"/v1/onchain/tokens/search":                    "/v1/onchain/tokens/search?q=usd",
		"/v1/onchain/labels/{address}/provenance":      "/v1/onchain/labels/" + wallet + "/provenance",
	}
	targets["/v1/onchain/wallets/{address}/balances"] = "/v1/onchain/wallets/" + wallet + "/balances?min_usd=0"
	targets["/v1/onchain/tokens/{token_address}/holders"] = "/v1/onchain/tokens/" + token + "/holders"
	// Computed balances are as of the newest transfer's block time, the demo's as of
	// its end: the one difference allowed.
	asOf := regexp.MustCompile(`"as_of":"[^"]*"`)
	serve := func(root string) *httptest.Server {
		q, err := query.Open(context.Background(), root, query.Options{Now: testlake.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		srv := httptest.NewServer((&handlers.API{Q: q}).Handler())
		t.Cleanup(srv.Close)
		return srv
	}
	a, b := serve(demo), serve(dir)
	fetch := func(srv *httptest.Server, method, target string) (int, []byte) {
		req, _ := http.NewRequest(method, srv.URL+target, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	var checked []string
	for _, rt := range handlers.Routes() {
		if rt.Area != "onchain" {
			continue
		}
		target, ok := targets[rt.Path]
		if !ok {
			t.Errorf("no round-trip request for %s", rt.Path)
			continue
		}
		ca, ba := fetch(a, rt.Method, target)
		cb, bb := fetch(b, rt.Method, target)
		ba, bb = asOf.ReplaceAll(ba, []byte(`"as_of":""`)), asOf.ReplaceAll(bb, []byte(`"as_of":""`))
		if ca != 200 || cb != 200 || !bytes.Equal(ba, bb) || len(ba) < 3 {
			t.Errorf("%s %s: demo %d %d bytes, ingested %d %d bytes\n%.300s\n%.300s", rt.Method, target, ca, len(ba), cb, len(bb), ba, bb)
		}
		checked = append(checked, rt.Path)
		t.Logf("%s: %d bytes, equal", target, len(ba))
	}
	sort.Strings(checked)
	if len(checked) != len(targets) {
		t.Fatalf("checked %v", checked)
	}
}

// TestRecordOnchainOnceAndFlags: `mdq record onchain --once` catches up to the
// confirmed head of a loopback node and publishes the derived tables; a second run
// resumes from the checkpoint and writes nothing; bad flag combinations are refused
// with the reason and change nothing.
func TestRecordOnchainOnceAndFlags(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	node := evmnode.New(1060, func(n uint64) int64 { return start + (int64(n)-1000)*12 })
	tok := "0x00000000000000000000000000000000000000c1"
	node.Tokens[tok] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
	for b := uint64(1000); b <= 1060; b++ {
		node.AddLogs(b, evmnode.Transfer(tok, fmt.Sprintf("0x%040x", b%4+1), fmt.Sprintf("0x%040x", b%5+10), "1000000", fmt.Sprintf("0x%064x", b), 0))
	}
	url := node.Start(t)
	dir := filepath.Join(t.TempDir(), "lake")
	args := []string{"record", "onchain", "--data", dir, "--chain", "ethereum", "--rpc", url, "--confirmations", "10",
		"--from-block", "1000", "--once", "--max-blocks", "20", "--clock", "2026-03-01T01:00:00Z"}
	code, out, errs := run(t, args...)
	if code != 0 || !strings.Contains(out, "caught up at head 1060 (10 confirmations)") || !strings.Contains(out, "onchain legs:") {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var n, maxBlock int64
	if err := db.QueryRow("SELECT count(*), max(block_number) FROM read_parquet("+lake.QuoteString(filepath.Join(dir, "onchain/transfers/chain=ethereum/*/transfers.parquet"))+")").Scan(&n, &maxBlock); err != nil {
		t.Fatal(err)
	}
	if n != 51 || maxBlock != 1050 {
		t.Fatalf("%d transfers up to block %d, want 51 up to 1050", n, maxBlock)
	}
	code, out, errs = run(t, args...)
	if code != 0 || !strings.Contains(out, "caught up at head 1060") || strings.Contains(errs, "written") {
		t.Fatalf("second record: %d\n%s\n%s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ingest", "onchain", "--data", dir, "--chain", "solana", "--prices", "x"}, `--chain "solana" not supported`},
		{[]string{"ingest", "onchain", "--data", dir}, "nothing to ingest"},
		{[]string{"ingest", "onchain", "--data", dir, "--rpc", url}, "--rpc needs --from-block and --to-block"},
		{[]string{"ingest", "onchain", "--data", dir, "--from-block", "5", "--to-block", "9"}, "--from-block and --to-block go together, with --rpc"},
		{[]string{"ingest", "onchain", "--data", dir, "--rpc", url, "--from-block", "9", "--to-block", "5"}, "must not be below"},
		{[]string{"record", "onchain", "--data", dir}, "--rpc is required"},
	} {
		code, out, errs := run(t, tc.args...)
		if code == 0 || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: %d %s %s, want %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// TestIngestOnchainNativeFlag: `mdq ingest onchain --rpc --native` and `mdq record
// onchain --native` store the native-coin value of successful transactions (token
// 0x0, log_index -1) beside the token transfers, which a run without the flag does
// not; --native without a block range is refused.
func TestIngestOnchainNativeFlag(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	node := evmnode.New(1040, func(n uint64) int64 { return start + (int64(n)-1000)*12 })
	tok := "0x00000000000000000000000000000000000000c1"
	node.Tokens[tok] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
	node.AddLogs(1005, evmnode.Transfer(tok, "0x"+strings.Repeat("1", 40), "0x"+strings.Repeat("2", 40), "1000000", fmt.Sprintf("0x%064x", 1), 0))
	node.AddTxs(1005, evmnode.Tx{Hash: fmt.Sprintf("0x%064x", 2), From: "0x" + strings.Repeat("1", 40), To: "0x" + strings.Repeat("3", 40), Value: "1500000000000000000",
		// an internal payment: read with --traces only
		Calls: []evmnode.Call{{Type: "call", From: "0x" + strings.Repeat("3", 40), To: "0x" + strings.Repeat("4", 40), Value: "250000000000000000"}}})
	node.AddTxs(1020, evmnode.Tx{Hash: fmt.Sprintf("0x%064x", 3), From: "0x" + strings.Repeat("3", 40), To: "0x" + strings.Repeat("1", 40), Value: "7", Failed: true})
	url := node.Start(t)
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	count := func(dir string) (all, native int64) {
		t.Helper()
		q := "SELECT count(*), count(*) FILTER (WHERE token_address = '" + zeroAddr + "' AND log_index = -1 AND amount = 1.5) FROM read_parquet(" +
			lake.QuoteString(filepath.Join(dir, "onchain/transfers/chain=ethereum/*/transfers.parquet")) + ")"
		if err := db.QueryRow(q).Scan(&all, &native); err != nil {
			t.Fatal(err)
		}
		return all, native
	}
	for _, tc := range []struct {
		args         []string
		all, native  int64
		wantInOutput string
	}{
		{[]string{"ingest", "onchain", "--chain", "ethereum", "--rpc", url, "--from-block", "1000", "--to-block", "1030", "--native"}, 2, 1, "failed transaction 1"},
		{[]string{"ingest", "onchain", "--chain", "ethereum", "--rpc", url, "--from-block", "1000", "--to-block", "1030"}, 1, 0, "written 1"},
		{[]string{"record", "onchain", "--chain", "ethereum", "--rpc", url, "--confirmations", "5", "--from-block", "1000", "--once", "--native"}, 2, 1, "caught up at head 1040"},
		{[]string{"ingest", "onchain", "--chain", "ethereum", "--rpc", url, "--from-block", "1000", "--to-block", "1030", "--native", "--traces"}, 3, 1, "reverted call 1"},
		{[]string{"record", "onchain", "--chain", "ethereum", "--rpc", url, "--confirmations", "5", "--from-block", "1000", "--once", "--native", "--traces"}, 3, 1, "caught up at head 1040"},
	} {
		dir := filepath.Join(t.TempDir(), "lake")
		code, out, errs := run(t, append(tc.args, "--data", dir, "--clock", "2026-03-01T01:00:00Z")...)
		if code != 0 || !strings.Contains(out, tc.wantInOutput) {
			t.Fatalf("%v: %d\n%s\n%s", tc.args, code, out, errs)
		}
		if all, native := count(dir); all != tc.all || native != tc.native {
			t.Errorf("%v: %d transfers, %d native; want %d and %d", tc.args, all, native, tc.all, tc.native)
		}
	}
	for _, cmd := range [][]string{{"ingest", "onchain", "--from-block", "1000", "--to-block", "1030"}, {"record", "onchain", "--once"}} {
		code, out, errs := run(t, append(cmd, "--data", t.TempDir(), "--rpc", url, "--traces")...)
		if code == 0 || !strings.Contains(out+errs, "--traces reads native-coin transfers: give --native too") {
			t.Errorf("%v --traces without --native: %d %s %s", cmd, code, out, errs)
		}
	}
	code, out, errs := run(t, "ingest", "onchain", "--data", t.TempDir(), "--rpc", url, "--native", "--prices", "x")
	if code == 0 || !strings.Contains(out+errs, "--native reads blocks over --rpc") {
		t.Errorf("--native without a range: %d %s %s", code, out, errs)
	}
}
