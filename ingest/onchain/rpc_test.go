package onchain

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdq/ingest"
	"mdq/internal/evmnode"
	"mdq/lake"
)

// linearTime is a chain with a block every 12 s from block 1,000 at 2026-02-01.
func linearTime(n uint64) int64 {
	return time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Unix() + (int64(n)-1000)*12
}

func testClient(url string) *Client {
	c := NewClient(url)
	c.Backoff = time.Millisecond
	return c
}

func ingestRPC(t *testing.T, root string, c *Client, from, to uint64) (ingest.Summary, error) {
	t.Helper()
	ctx := context.Background()
	l, err := NewLoader(ctx, root, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Meta = c.TokenMeta
	if err := LoadRPC(ctx, l, c, from, to, nil); err != nil {
		return l.Sum, err
	}
	return l.Sum, l.Commit(ctx, time.Now())
}

// TestRPCSampleLogsThroughNode: the real eth_getLogs answer of block 483920, served by
// a node on loopback with the sample block's timestamp, is stored as the ground-truth
// transfers with that block time.
func TestRPCSampleLogsThroughNode(t *testing.T) {
	dir := samples(t)
	var logs struct {
		Result []Log `json:"result"`
	}
	var blk struct {
		Result json.RawMessage `json:"result"`
	}
	for name, v := range map[string]any{"eth_getLogs_response_block_483920.json": &logs, "eth_getBlockByNumber_483920.json": &blk} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ParseHeader(blk.Result)
	if err != nil {
		t.Fatal(err)
	}
	node := evmnode.New(h.Number+100, func(n uint64) int64 { return h.Time + (int64(n)-int64(h.Number))*15 })
	for _, lg := range logs.Result {
		idx, _ := hexUint(lg.LogIndex)
		node.AddLogs(h.Number, evmnode.Log{Address: lg.Address, Topics: lg.Topics, Data: lg.Data, TxHash: lg.TransactionHash, Index: idx})
	}
	node.Tokens[logs.Result[0].Address] = evmnode.Token{Decimals: 0, Symbol: "SAMPLE", Name: "Sample token"}
	root := t.TempDir()
	sum, err := ingestRPC(t, root, testClient(node.Start(t)), h.Number-50, h.Number+50)
	if err != nil {
		t.Fatal(err)
	}
	want := readCSV(t, filepath.Join(dir, "expected_token_transfers_block_483920.csv"))
	got := readTransfers(t, root, "ethereum")
	if len(got) != len(want) || sum.Written != int64(len(want)) {
		t.Fatalf("%d rows, want %d (%s)", len(got), len(want), sum.String())
	}
	for i, w := range want {
		r := got[i]
		if r.Token != w["token_address"] || r.From != w["from_address"] || r.To != w["to_address"] || r.Raw != w["value"] ||
			r.Tx != w["transaction_hash"] || strconv.Itoa(int(r.LogIndex)) != w["log_index"] || strconv.FormatInt(r.Block, 10) != w["block_number"] ||
			!r.Time.Equal(time.Unix(h.Time, 0)) || r.Amount != float64(mustInt(w["value"])) {
			t.Errorf("row %d: %+v, want %v", i, r, w)
		}
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

type tokenRow struct {
	Symbol, Name string
	Decimals     int
}

func readTokens(t *testing.T, root string) map[string]tokenRow {
	t.Helper()
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	rows, err := db.Query("SELECT token_address, symbol, name, decimals FROM read_parquet(" + lake.QuoteString(filepath.Join(root, "onchain/tokens/tokens.parquet")) + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]tokenRow{}
	for rows.Next() {
		var a string
		var r tokenRow
		if err := rows.Scan(&a, &r.Symbol, &r.Name, &r.Decimals); err != nil {
			t.Fatal(err)
		}
		out[a] = r
	}
	return out
}

func hexAddr(prefix byte, i int) string { return fmt.Sprintf("0x%c%039x", prefix, i) }

// TestRPCTokenMetadataAndValues: token metadata by eth_call, for 0, 6, 18 and 24
// decimals, a bytes32 symbol and a reverting decimals(); a value of 2^256-1; an
// ERC-721 transfer skipped and counted; every amount exact to one rounding.
func TestRPCTokenMetadataAndValues(t *testing.T) {
	node := evmnode.New(2000, linearTime)
	toks := []struct {
		addr string
		tk   evmnode.Token
		dec  int
	}{
		{hexAddr('c', 1), evmnode.Token{Decimals: 0, Symbol: "ZERO", Name: "Zero decimals"}, 0},
		{hexAddr('c', 2), evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}, 6},
		{hexAddr('c', 3), evmnode.Token{Decimals: 18, Symbol: "MKR", Name: "Maker", Bytes32Symbol: true}, 18},
		{hexAddr('c', 4), evmnode.Token{Decimals: 24, Symbol: "YOC", Name: "Yocto"}, 24},
		{hexAddr('c', 5), evmnode.Token{RevertDecimals: true, Symbol: "NODEC", Name: "No decimals"}, -1},
	}
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	values := []string{"7", "1234567", "1000000000000000000", max.String(), "42"}
	for i, tk := range toks {
		node.Tokens[tk.addr] = tk.tk
		node.AddLogs(uint64(1100+i), evmnode.Transfer(tk.addr, hexAddr('a', 1), hexAddr('a', 2), values[i], fmt.Sprintf("0x%064x", i+1), 0))
	}
	node.AddLogs(1100, evmnode.NFTTransfer(hexAddr('d', 1), hexAddr('a', 1), hexAddr('a', 2), 77, fmt.Sprintf("0x%064x", 99), 1))
	root := t.TempDir()
	sum, err := ingestRPC(t, root, testClient(node.Start(t)), 1000, 1999)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Written != 5 || sum.Skipped[SkipERC721] != 1 {
		t.Fatalf("summary %s", sum.String())
	}
	tokens := readTokens(t, root)
	rows := readTransfers(t, root, "ethereum")
	for i, tk := range toks {
		want := tokenRow{tk.tk.Symbol, tk.tk.Name, max0(tk.dec)}
		if got := tokens[tk.addr]; got != want {
			t.Errorf("token %s: %+v, want %+v", tk.addr, got, want)
		}
		raw, _ := new(big.Int).SetString(values[i], 10)
		amt, _ := new(big.Rat).SetFrac(raw, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max0(tk.dec))), nil)).Float64()
		r := rows[i]
		if r.Token != tk.addr || r.Raw != values[i] || r.Amount != amt || r.Block != int64(1100+i) || !r.Time.Equal(time.Unix(linearTime(uint64(1100+i)), 0)) {
			t.Errorf("transfer %d: %+v, want raw %s amount %v", i, r, values[i], amt)
		}
	}
}

func max0(d int) int { return max(d, 0) }

// TestRPCAdaptiveRanges: a node that refuses answers of more than 3 logs, then one
// that answers ranges wider than 40 blocks after the client's timeout, then one that
// throttles (HTTP 429): every transfer is stored once, the refused ranges were halved
// and small answers let the range grow again.
func TestRPCAdaptiveRanges(t *testing.T) {
	build := func() (*evmnode.Node, int) {
		node := evmnode.New(5000, linearTime)
		node.Tokens[hexAddr('c', 1)] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
		n := 0
		for b := uint64(1000); b < 1400; b += 3 {
			for i := 0; i < 2; i++ {
				node.AddLogs(b, evmnode.Transfer(hexAddr('c', 1), hexAddr('a', int(b)), hexAddr('a', i+1), strconv.Itoa(int(b)*10+i), fmt.Sprintf("0x%064x", b*10+uint64(i)), uint64(i)))
				n++
			}
		}
		return node, n
	}
	for _, tc := range []struct {
		name  string
		setup func(*evmnode.Node, *Client)
		check func(t *testing.T, node *evmnode.Node)
	}{
		{"too many results", func(n *evmnode.Node, c *Client) { n.MaxResults = 3; c.Span = 1000 }, func(t *testing.T, node *evmnode.Node) {
			rs := node.Ranges()
			if rs[0] != [2]uint64{1000, 1999} || rs[1] != [2]uint64{1000, 1499} {
				t.Errorf("first ranges %v: want the refused range halved", rs[:2])
			}
		}},
		{"timeouts", func(n *evmnode.Node, c *Client) {
			n.SlowSpan, n.Delay = 40, 300*time.Millisecond
			c.HTTP = &http.Client{Timeout: 100 * time.Millisecond}
			c.Span = 200
		}, func(t *testing.T, node *evmnode.Node) {
			grew := false
			rs := node.Ranges()
			for i := 1; i < len(rs); i++ {
				if rs[i][1]-rs[i][0] > rs[i-1][1]-rs[i-1][0] {
					grew = true
				}
			}
			if rs[0][1]-rs[0][0]+1 != 200 || !grew {
				t.Errorf("ranges %v: want halving after timeouts and growth after answers", rs)
			}
		}},
		{"throttled", func(n *evmnode.Node, c *Client) { n.Throttle = 3 }, func(t *testing.T, node *evmnode.Node) {
			if node.Requests() < 4 {
				t.Errorf("%d requests", node.Requests())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node, n := build()
			c := testClient(node.Start(t))
			tc.setup(node, c)
			root := t.TempDir()
			sum, err := ingestRPC(t, root, c, 1000, 4999)
			if err != nil {
				t.Fatal(err)
			}
			rows := readTransfers(t, root, "ethereum")
			if len(rows) != n || sum.Written != int64(n) {
				t.Fatalf("%d rows stored, written %d, want %d", len(rows), sum.Written, n)
			}
			for _, r := range rows {
				if r.Raw != strconv.Itoa(int(r.Block)*10+int(r.LogIndex)) {
					t.Fatalf("row %+v", r)
				}
			}
			tc.check(t, node)
		})
	}
}

// TestRPCErrorNamesRange: a node that keeps refusing one block fails the run with the
// block range and writes nothing.
func TestRPCErrorNamesRange(t *testing.T) {
	node := evmnode.New(2000, linearTime)
	node.Tokens[hexAddr('c', 1)] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
	for i := 0; i < 3; i++ {
		node.AddLogs(1500, evmnode.Transfer(hexAddr('c', 1), hexAddr('a', 1), hexAddr('a', 2), "1", fmt.Sprintf("0x%064x", i+1), uint64(i)))
	}
	node.MaxResults = 2
	c := testClient(node.Start(t))
	c.Retries = 2
	root := t.TempDir()
	_, err := ingestRPC(t, root, c, 1000, 1999)
	if err == nil || !strings.Contains(err.Error(), "eth_getLogs blocks 1500-1500") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, lake.MarkerFile)); !os.IsNotExist(err) {
		t.Fatal("a failed ingest made a lake")
	}
}

// TestRPCErrorsHideTheEndpointKey: a transport error names the endpoint without its
// path or query (where providers put API keys).
func TestRPCErrorsHideTheEndpointKey(t *testing.T) {
	c := testClient("http://127.0.0.1:1/v3/SECRETKEY?apikey=SECRET2")
	c.Retries = 1
	_, err := c.BlockNumber(context.Background())
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "http://127.0.0.1:1/...") {
		t.Fatalf("error %v", err)
	}
	for in, want := range map[string]string{"https://eth.example.org": "https://eth.example.org", "https://u:p@h.example/": "https://h.example/...", "wss://x.example/ws/KEY": "wss://x.example/..."} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// loadBlocksRPC loads blocks 1000 to 1050 of node into a fresh lake through JSON-RPC,
// with Native and Traces as given, and returns the lake, what the load counted, the
// client and the load's error (the lake is committed only without one).
func loadBlocksRPC(t *testing.T, node *evmnode.Node, native, traces bool) (string, ingest.Summary, *Client, error) {
	t.Helper()
	c := testClient(node.Start(t))
	root := t.TempDir()
	ctx := context.Background()
	l, err := NewLoader(ctx, root, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Meta, l.Native, l.Traces = c.TokenMeta, native, traces
	if err := LoadRPC(ctx, l, c, 1000, 1050, nil); err != nil {
		return root, l.Sum, c, err
	}
	if err := l.Commit(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	return root, l.Sum, c, nil
}

// TestRPCNativeTransfers: with Native, the value of every successful transaction is a
// transfer of the zero token address with log_index -1 (a contract creation pays the
// created contract; a failed or zero-value transaction moves nothing), beside the
// token transfers of the same blocks; the rows equal those transactions.csv gives for
// the same transactions. A node without eth_getBlockReceipts is asked per
// transaction, and only once per client for the block method. Without Native no
// block is fetched whole and no native row is written.
func TestRPCNativeTransfers(t *testing.T) {
	const (
		tok  = "0x00000000000000000000000000000000000000aa"
		a    = "0x1111111111111111111111111111111111111111"
		b    = "0x2222222222222222222222222222222222222222"
		made = "0x3333333333333333333333333333333333333333"
	)
	tx := func(i int) string { return fmt.Sprintf("0x%064x", i) }
	newNode := func(noBlockReceipts bool) *evmnode.Node {
		n := evmnode.New(1100, linearTime)
		n.NoBlockReceipts = noBlockReceipts
		n.Tokens[tok] = evmnode.Token{Decimals: 6, Symbol: "TKN", Name: "Token"}
		n.AddLogs(1010, evmnode.Transfer(tok, a, b, "2500000", tx(1), 0))
		n.AddTxs(1010,
			evmnode.Tx{Hash: tx(1), From: a, To: tok, Value: "0"},                 // the token call: no value
			evmnode.Tx{Hash: tx(2), From: a, To: b, Value: "1000000000000000000"}, // 1 ETH
			evmnode.Tx{Hash: tx(3), From: b, To: a, Value: "5", Failed: true})     // reverted
		n.AddTxs(1030, evmnode.Tx{Hash: tx(4), From: b, Value: "0x1bc16d674ec80000", Created: made}) // 2 ETH into a new contract
		return n
	}
	type row struct {
		Block    int64
		Tx       string
		LogIndex int32
		Token    string
		From, To string
		Raw      string
		Amount   float64
	}
	load := func(t *testing.T, node *evmnode.Node, native bool) ([]row, ingest.Summary, *Client) {
		t.Helper()
		root, sum, c, err := loadBlocksRPC(t, node, native, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, r := range readTransfers(t, root, "ethereum") {
			out = append(out, row{r.Block, r.Tx, r.LogIndex, r.Token, r.From, r.To, r.Raw, r.Amount})
		}
		if native {
			if tk, ok := readTokens(t, root)[ZeroAddress]; !ok || tk.Symbol != "ETH" || tk.Decimals != 18 {
				t.Errorf("native token row %+v (present %v)", tk, ok)
			}
		}
		return out, sum, c
	}
	want := []row{
		{1010, tx(1), 0, tok, a, b, "2500000", 2.5},
		{1010, tx(2), -1, ZeroAddress, a, b, "1000000000000000000", 1},
		{1030, tx(4), -1, ZeroAddress, b, made, "2000000000000000000", 2},
	}
	node := newNode(false)
	got, sum, _ := load(t, node, true)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("native over RPC\n got %v\nwant %v", got, want)
	}
	if sum.Skipped["failed transaction"] != 1 {
		t.Errorf("skipped %v", sum.Skipped)
	}
	if node.Calls("eth_getBlockReceipts") != 2 || node.Calls("eth_getTransactionReceipt") != 0 {
		t.Errorf("receipts: %d block, %d transaction calls", node.Calls("eth_getBlockReceipts"), node.Calls("eth_getTransactionReceipt"))
	}

	old := newNode(true)
	got, _, c := load(t, old, true)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("without eth_getBlockReceipts\n got %v\nwant %v", got, want)
	}
	if old.Calls("eth_getBlockReceipts") != 1 || old.Calls("eth_getTransactionReceipt") != 3 || !c.noBlockReceipts.Load() {
		t.Errorf("fallback: %d block, %d transaction receipt calls", old.Calls("eth_getBlockReceipts"), old.Calls("eth_getTransactionReceipt"))
	}

	off := newNode(false)
	got, _, _ = load(t, off, false)
	if len(got) != 1 || got[0].Token != tok || off.Calls("eth_getBlockReceipts") != 0 {
		t.Errorf("without Native: %v, %d receipt calls", got, off.Calls("eth_getBlockReceipts"))
	}

	// The same transactions from an Ethereum-ETL export give the same native rows.
	d := t.TempDir()
	ts := func(n uint64) string { return time.Unix(linearTime(n), 0).UTC().Format("2006-01-02 15:04:05 UTC") }
	writeFile(t, filepath.Join(d, "transactions.csv"), "hash,block_number,from_address,to_address,value,block_timestamp,receipt_status,receipt_contract_address\n"+
		tx(2)+",1010,"+a+","+b+",1000000000000000000,"+ts(1010)+",1,\n"+
		tx(3)+",1010,"+b+","+a+",5,"+ts(1010)+",0,\n"+
		tx(4)+",1030,"+b+",,2000000000000000000,"+ts(1030)+",1,"+made+"\n")
	root := t.TempDir()
	if _, err := ingestETL(t, root, "ethereum", Options{}, nil, filepath.Join(d, "transactions.csv")); err != nil {
		t.Fatal(err)
	}
	var etl []row
	for _, r := range readTransfers(t, root, "ethereum") {
		etl = append(etl, row{r.Block, r.Tx, r.LogIndex, r.Token, r.From, r.To, r.Raw, r.Amount})
	}
	if fmt.Sprint(etl) != fmt.Sprint(want[1:]) {
		t.Errorf("ETL native rows\n got %v\nwant %v", etl, want[1:])
	}
}

// TestRPCInternalTransfers: with Traces, the native coin is read from the node's trace
// API, internal value transfers included: the k-th successful call or create of a
// transaction that moves value (trace_address order) is log_index -1-k, the outermost
// call being the transaction's own value; delegatecall, staticcall, selfdestruct and
// block rewards are not transfers, and a call under a reverted one is skipped however
// its own trace reads. trace_block and Geth's debug_traceBlockByHash (with and without
// txHash) give the same rows, equal to those the same calls' Ethereum-ETL traces.csv
// gives; a node with neither is a clear error.
func TestRPCInternalTransfers(t *testing.T) {
	const (
		a, b, c, d = "0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222",
			"0x3333333333333333333333333333333333333333", "0x4444444444444444444444444444444444444444"
		router, lib, made, made2 = "0x5555555555555555555555555555555555555555", "0x6666666666666666666666666666666666666666",
			"0x7777777777777777777777777777777777777777", "0x8888888888888888888888888888888888888888"
		eth = "000000000000000000" // 18 zeros
	)
	tx := func(i int) string { return fmt.Sprintf("0x%064x", i) }
	newNode := func() *evmnode.Node {
		n := evmnode.New(1100, linearTime)
		n.RewardTo = d
		n.AddTxs(1010,
			evmnode.Tx{Hash: tx(1), From: a, To: router, Value: "3" + eth, Calls: []evmnode.Call{
				{Type: "call", From: router, To: b, Value: "1" + eth},
				{Type: "delegatecall", From: router, To: lib, Value: "5" + eth},
				{Type: "staticcall", From: router, To: lib},
				{Type: "call", From: router, To: c, Value: "2" + eth, Failed: true, Calls: []evmnode.Call{
					{Type: "call", From: c, To: d, Value: "7" + eth}}}, // reverted with its parent
				{Type: "create", From: router, To: made2, Value: "4" + eth, Calls: []evmnode.Call{
					{Type: "selfdestruct", From: made2, To: a, Value: "4" + eth}}},
				{Type: "call", From: router, To: d, Value: "0"},
			}},
			evmnode.Tx{Hash: tx(2), From: b, To: a, Value: "5", Failed: true, Calls: []evmnode.Call{
				{Type: "call", From: a, To: c, Value: "1"}}},
			evmnode.Tx{Hash: tx(3), From: a, To: router, Value: "0", Calls: []evmnode.Call{
				{Type: "call", From: router, To: c, Value: "6"}}})
		n.AddTxs(1030, evmnode.Tx{Hash: tx(4), From: b, Value: "2" + eth, Created: made})
		return n
	}
	type row struct {
		Block    int64
		Tx       string
		LogIndex int32
		From, To string
		Raw      string
	}
	want := []row{
		{1010, tx(1), -3, router, made2, "4" + eth},
		{1010, tx(1), -2, router, b, "1" + eth},
		{1010, tx(1), -1, a, router, "3" + eth},
		{1010, tx(3), -1, router, c, "6"},
		{1030, tx(4), -1, b, made, "2" + eth},
	}
	rowsOf := func(root string) []row {
		var out []row
		for _, r := range readTransfers(t, root, "ethereum") {
			if r.Token != ZeroAddress {
				t.Errorf("token %s", r.Token)
			}
			out = append(out, row{r.Block, r.Tx, r.LogIndex, r.From, r.To, r.Raw})
		}
		return out
	}
	load := func(t *testing.T, node *evmnode.Node) ([]row, ingest.Summary, error) {
		t.Helper()
		root, sum, _, err := loadBlocksRPC(t, node, true, true)
		if err != nil {
			return nil, sum, err
		}
		return rowsOf(root), sum, nil
	}
	for _, tc := range []struct {
		name                            string
		noTraceBlock, noDebug, noTxHash bool
	}{
		{name: "trace_block"},
		{name: "debug_traceBlockByHash", noTraceBlock: true},
		{name: "debug_traceBlockByHash without txHash", noTraceBlock: true, noTxHash: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := newNode()
			node.NoTraceBlock, node.NoDebugTrace, node.DebugNoTxHash = tc.noTraceBlock, tc.noDebug, tc.noTxHash
			got, sum, err := load(t, node)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("internal transfers\n got %v\nwant %v", got, want)
			}
			// Reverted: tx(1)'s failed call and the call under it, tx(2) and its call.
			if sum.Skipped["reverted call"] != 4 {
				t.Errorf("skipped %v", sum.Skipped)
			}
			if node.Calls("eth_getBlockReceipts")+node.Calls("eth_getTransactionReceipt") != 0 {
				t.Errorf("receipts asked with traces")
			}
			// Only the two blocks with transactions are traced; the fallback is found once.
			if tc.noTraceBlock && (node.Calls("trace_block") != 1 || node.Calls("debug_traceBlockByHash") != 2) {
				t.Errorf("fallback: %d trace_block, %d debug calls", node.Calls("trace_block"), node.Calls("debug_traceBlockByHash"))
			}
		})
	}
	t.Run("no trace API", func(t *testing.T) {
		node := newNode()
		node.NoTraceBlock, node.NoDebugTrace = true, true
		_, _, err := load(t, node)
		if err == nil || !strings.Contains(err.Error(), "serves neither trace_block nor debug_traceBlockByHash") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("same as traces.csv", func(t *testing.T) {
		d := t.TempDir()
		// Ethereum-ETL's traces.csv of the same calls (trace_address order; status 0 on
		// a reverted call and under it).
		var sb strings.Builder
		sb.WriteString("transaction_hash,from_address,to_address,value,trace_type,call_type,status,block_number\n")
		line := func(h, from, to, value, typ, call, status string, blk uint64) {
			fmt.Fprintf(&sb, "%s,%s,%s,%s,%s,%s,%s,%d\n", h, from, to, value, typ, call, status, blk)
		}
		line(tx(1), a, router, "3"+eth, "call", "call", "1", 1010)
		line(tx(1), router, b, "1"+eth, "call", "call", "1", 1010)
		line(tx(1), router, lib, "5"+eth, "call", "delegatecall", "1", 1010)
		line(tx(1), router, lib, "0", "call", "staticcall", "1", 1010)
		line(tx(1), router, c, "2"+eth, "call", "call", "0", 1010)
		line(tx(1), c, d, "7"+eth, "call", "call", "0", 1010)
		line(tx(1), router, made2, "4"+eth, "create", "", "1", 1010)
		line(tx(1), made2, a, "4"+eth, "suicide", "", "1", 1010)
		line(tx(1), router, d, "0", "call", "call", "1", 1010)
		line(tx(2), b, a, "5", "call", "call", "0", 1010)
		line(tx(2), a, c, "1", "call", "call", "0", 1010)
		line(tx(3), a, router, "0", "call", "call", "1", 1010)
		line(tx(3), router, c, "6", "call", "call", "1", 1010)
		line("", "", d, "2"+eth, "reward", "", "1", 1010)
		line(tx(4), b, made, "2"+eth, "create", "", "1", 1030)
		writeFile(t, filepath.Join(d, "traces.csv"), sb.String())
		writeFile(t, filepath.Join(d, "blocks.csv"), fmt.Sprintf("number,timestamp\n1010,%d\n1030,%d\n", linearTime(1010), linearTime(1030)))
		root := t.TempDir()
		if _, err := ingestETL(t, root, "ethereum", Options{}, nil, filepath.Join(d, "blocks.csv"), filepath.Join(d, "traces.csv")); err != nil {
			t.Fatal(err)
		}
		if got := rowsOf(root); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("traces.csv\n got %v\nwant %v", got, want)
		}
	})
}
