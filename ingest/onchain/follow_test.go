package onchain

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"mdq/internal/evmnode"
	"mdq/lake"
)

// chainModel is the test's own record of the node's chain: block → transfers.
type chainModel map[uint64][]evmnode.Log

type modelTransfer struct {
	block    uint64
	tx       string
	index    uint64
	from, to string
	value    string
}

var followToken = hexAddr('c', 9)

func makeLogs(block uint64, fork int) []evmnode.Log {
	var out []evmnode.Log
	for i := 0; i < 1+int(block%3); i++ {
		from := hexAddr('a', int(block+uint64(fork))%5+1)
		to := hexAddr('a', (int(block)+i+fork)%5+6)
		v := strconv.Itoa(int(block)*100 + i + fork*7)
		out = append(out, evmnode.Transfer(followToken, from, to, v, fmt.Sprintf("0x%060x%04x", block*10+uint64(i), fork), uint64(i)))
	}
	return out
}

// oracle lists the model's transfers up to block upTo, in block, tx, index order.
func (m chainModel) oracle(upTo uint64) []string {
	var out []string
	for b, logs := range m {
		if b > upTo {
			continue
		}
		for _, l := range logs {
			out = append(out, fmt.Sprintf("%d %s %d %s", b, l.TxHash, l.Index, valueOf32(l.Data)))
		}
	}
	sort.Strings(out)
	return out
}

func valueOf32(data string) string {
	v, _ := new(big.Int).SetString(data[2:], 16)
	return v.String()
}

func lakeTransfers(t *testing.T, root string) []string {
	var out []string
	for _, r := range readTransfers(t, root, "ethereum") {
		out = append(out, fmt.Sprintf("%d %s %d %s", r.Block, r.Tx, r.LogIndex, r.Raw))
	}
	sort.Strings(out)
	return out
}

// modelBalances is the oracle of onchain_balances: received minus sent per address,
// positive ones only, the zero address excluded.
func (m chainModel) balances(upTo uint64) map[string]string {
	bal := map[string]*big.Int{}
	add := func(a string, v *big.Int) {
		if bal[a] == nil {
			bal[a] = new(big.Int)
		}
		bal[a].Add(bal[a], v)
	}
	for b, logs := range m {
		if b > upTo {
			continue
		}
		for _, l := range logs {
			v, _ := new(big.Int).SetString(l.Data[2:], 16)
			add("0x"+l.Topics[2][26:], v)
			add("0x"+l.Topics[1][26:], new(big.Int).Neg(v))
		}
	}
	out := map[string]string{}
	for a, v := range bal {
		if v.Sign() > 0 {
			out[a] = v.String()
		}
	}
	return out
}

func lakeBalances(t *testing.T, root string) map[string]string {
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	rows, err := db.Query("SELECT address, balance_raw FROM read_parquet(" + lake.QuoteString(filepath.Join(root, "onchain/balances/chain=ethereum/balances.parquet")) + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var a, b string
		rows.Scan(&a, &b)
		out[a] = b
	}
	return out
}

// TestFollowerConfirmationsAndReorgs: the follower writes only blocks 3 deep; a
// reorganisation inside the confirmation depth never reaches the lake; one deeper
// (two written blocks replaced) is detected by the parent hash, rewound, logged and
// rewritten; a restarted follower resumes from its checkpoint; the lake's transfers
// and balances equal the node's confirmed chain at every step.
func TestFollowerConfirmationsAndReorgs(t *testing.T) {
	for _, logTimes := range []bool{false, true} {
		t.Run(fmt.Sprintf("blockTimestamp in logs %v", logTimes), func(t *testing.T) { followerReorgs(t, logTimes) })
	}
}

func followerReorgs(t *testing.T, logTimes bool) {
	const conf = 3
	node := evmnode.New(1100, linearTime)
	node.LogTimestamps = logTimes
	node.Tokens[followToken] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
	model := chainModel{}
	for b := uint64(1000); b <= 1100; b++ {
		model[b] = makeLogs(b, 0)
		node.AddLogs(b, model[b]...)
	}
	url := node.Start(t)
	root := t.TempDir()
	var logBuf bytes.Buffer
	newFollower := func() *Follower {
		c := testClient(url)
		return &Follower{Root: root, Chain: "ethereum", Client: c, Confirmations: conf, Start: 1000, MaxBlocks: 40, Log: &logBuf, PublishEvery: -1}
	}
	catchUp := func(f *Follower) {
		t.Helper()
		for i := 0; i < 50; i++ {
			res, err := f.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.CaughtUp {
				return
			}
		}
		t.Fatal("follower did not catch up")
	}
	check := func(step string, upTo uint64) {
		t.Helper()
		got, want := lakeTransfers(t, root), model.oracle(upTo)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: lake has %d transfers, the confirmed chain %d", step, len(got), len(want))
		}
		gb, wb := lakeBalances(t, root), model.balances(upTo)
		if fmt.Sprint(gb) != fmt.Sprint(wb) {
			t.Fatalf("%s: balances %v, want %v", step, gb, wb)
		}
		cp, err := ReadCheckpoint(root, "ethereum")
		if err != nil || cp.Next != upTo+1 {
			t.Fatalf("%s: checkpoint %+v %v, want next %d", step, cp, err, upTo+1)
		}
	}
	f := newFollower()
	catchUp(f)
	check("caught up", 1100-conf)

	// A reorganisation of the last two blocks (inside the confirmation depth): nothing
	// written changes.
	replace := map[uint64][]evmnode.Log{}
	for b := uint64(1099); b <= 1100; b++ {
		model[b] = makeLogs(b, 1)
		replace[b] = model[b]
	}
	node.Reorg(1099, replace)
	catchUp(f)
	check("shallow reorg", 1100-conf)
	if strings.Contains(logBuf.String(), "reorganisation") {
		t.Fatal("a reorganisation above the confirmed head was rewound")
	}
	node.SetHead(1110)
	for b := uint64(1101); b <= 1110; b++ {
		model[b] = makeLogs(b, 1)
		node.AddLogs(b, model[b]...)
	}
	catchUp(f)
	check("after the shallow reorg", 1110-conf)

	// A reorganisation deeper than the confirmations: blocks 1106-1112 replaced while
	// 1106 and 1107 are written.
	replace = map[uint64][]evmnode.Log{}
	for b := uint64(1106); b <= 1112; b++ {
		model[b] = makeLogs(b, 2)
		replace[b] = model[b]
	}
	node.Reorg(1106, replace)
	node.SetHead(1112)
	// A restarted follower resumes from the checkpoint and handles it.
	f = newFollower()
	catchUp(f)
	check("deep reorg", 1112-conf)
	if !strings.Contains(logBuf.String(), "reorganisation: block 1107's hash changed; rewound to block") {
		t.Fatalf("log does not report the rewind:\n%s", logBuf.String())
	}
}

// BenchmarkFollowerCalls: the JSON-RPC requests and calls the follower makes per 1,000
// blocks (5 transfers a block) catching up in steps of 2,000 blocks, with nodes that
// give logs without and with blockTimestamp, and with native-coin transfers read too
// (one value transaction a block).
func BenchmarkFollowerCalls(b *testing.B) {
	for _, mode := range []struct{ logTimes, native bool }{{false, false}, {true, false}, {true, true}} {
		logTimes := mode.logTimes
		b.Run(fmt.Sprintf("logTimestamps=%v/native=%v", logTimes, mode.native), func(b *testing.B) {
			const blocks = 4000
			node := evmnode.New(1000+blocks+12, linearTime)
			node.LogTimestamps = logTimes
			node.Tokens[followToken] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
			for blk := uint64(1000); blk < 1000+blocks; blk++ {
				for i := 0; i < 5; i++ {
					node.AddLogs(blk, evmnode.Transfer(followToken, hexAddr('a', i+1), hexAddr('b', int(blk%50)), "1000", fmt.Sprintf("0x%060x%04x", blk, i), uint64(i)))
				}
				if mode.native { // one value transfer a block
					node.AddTxs(blk, evmnode.Tx{Hash: fmt.Sprintf("0x%060x%04x", blk, 99), From: hexAddr('a', 1), To: hexAddr('b', 2), Value: "1000000000"})
				}
			}
			url := node.Start(b)
			var reqs, calls int64
			for i := 0; i < b.N; i++ {
				c := NewClient(url)
				f := &Follower{Root: b.TempDir(), Chain: "ethereum", Client: c, Confirmations: 12, Start: 1000, MaxBlocks: 2000,
					Native: mode.native}
				for {
					res, err := f.Step(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if res.CaughtUp {
						break
					}
				}
				reqs += c.Requests()
				calls += c.Calls()
			}
			b.ReportMetric(float64(reqs)/float64(b.N)/blocks*1000, "requests/1000blocks")
			b.ReportMetric(float64(calls)/float64(b.N)/blocks*1000, "calls/1000blocks")
		})
	}
}

// TestFollowerNative: a follower with Native writes the chain's native-coin transfers
// (only confirmed blocks), and a reorganisation deeper than the confirmations that
// replaces a block's transactions (a chain with no token transfers at all: the reorg
// check rests on the blocks' own hashes) is rewound and rewritten.
func TestFollowerNative(t *testing.T) {
	// With Traces the same, read from the trace API, plus each transaction's internal
	// value transfer (log_index -2), rewound with its block.
	for _, traces := range []bool{false, true} {
		t.Run(fmt.Sprintf("traces=%v", traces), func(t *testing.T) { followerNative(t, traces) })
	}
}

func followerNative(t *testing.T, traces bool) {
	const conf = 3
	node := evmnode.New(1040, linearTime)
	model := map[uint64][]evmnode.Tx{}
	txsOf := func(b uint64, fork int) []evmnode.Tx {
		to := hexAddr('b', fork+1)
		return []evmnode.Tx{{Hash: fmt.Sprintf("0x%060x%04x", b, fork), From: hexAddr('a', int(b)%5+1), To: to,
			Value: strconv.Itoa(int(b)*1000 + fork), Calls: []evmnode.Call{{Type: "call", From: to, To: hexAddr('c', 1), Value: strconv.Itoa(int(b) + fork)}}}}
	}
	for b := uint64(1000); b <= 1040; b++ {
		model[b] = txsOf(b, 0)
		node.AddTxs(b, model[b]...)
	}
	url := node.Start(t)
	root := t.TempDir()
	var logBuf bytes.Buffer
	f := &Follower{Root: root, Chain: "ethereum", Client: testClient(url), Confirmations: conf, Start: 1000, MaxBlocks: 15,
		Native: true, Traces: traces, Log: &logBuf, PublishEvery: -1}
	check := func(step string, upTo uint64) {
		t.Helper()
		for i := 0; i < 20; i++ {
			res, err := f.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.CaughtUp {
				break
			}
		}
		var want []string
		for b, txs := range model {
			if b <= upTo {
				for _, tx := range txs {
					want = append(want, fmt.Sprintf("%d %s -1 %s", b, tx.Hash, tx.Value))
					if traces {
						want = append(want, fmt.Sprintf("%d %s -2 %s", b, tx.Hash, tx.Calls[0].Value))
					}
				}
			}
		}
		sort.Strings(want)
		if got := lakeTransfers(t, root); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s:\n got %v\nwant %v", step, got, want)
		}
	}
	check("caught up", 1040-conf)
	node.Reorg(1035, nil)
	for b := uint64(1035); b <= 1045; b++ {
		model[b] = txsOf(b, 1)
		node.AddTxs(b, model[b]...)
	}
	node.SetHead(1045)
	check("deep reorg", 1045-conf)
	if !strings.Contains(logBuf.String(), "reorganisation: block 1037's hash changed; rewound to block 1034") {
		t.Fatalf("log does not report the rewind:\n%s", logBuf.String())
	}
}

// TestFollowerParentHashCheck: a reorganisation that lands between the step's reorg
// check and its read of the next range (the node reorganises while answering
// eth_getLogs) is caught by the parent hash of the range's first block: the step
// fails writing nothing, and the next step rewinds and rewrites, so the lake ends equal
// to the node's confirmed chain.
func TestFollowerParentHashCheck(t *testing.T) {
	const conf = 2
	node := evmnode.New(1030, linearTime)
	node.Tokens[followToken] = evmnode.Token{Decimals: 6, Symbol: "USDC", Name: "USD Coin"}
	model := chainModel{}
	for b := uint64(1000); b <= 1030; b++ {
		model[b] = makeLogs(b, 0)
		node.AddLogs(b, model[b]...)
	}
	var arm atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if arm.Load() && bytes.Contains(body, []byte("eth_getLogs")) && arm.CompareAndSwap(true, false) {
			// Blocks 1027 on are replaced (1027 and 1028 are written) while the next
			// range is being read.
			replace := map[uint64][]evmnode.Log{}
			for b := uint64(1027); b <= 1040; b++ {
				model[b] = makeLogs(b, 3)
				replace[b] = model[b]
			}
			node.Reorg(1027, replace)
			node.SetHead(1040)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		node.ServeHTTP(w, r)
	}))
	defer srv.Close()
	root := t.TempDir()
	var logBuf bytes.Buffer
	f := &Follower{Root: root, Chain: "ethereum", Client: testClient(srv.URL), Confirmations: conf, Start: 1000, MaxBlocks: 40,
		Log: &logBuf, PublishEvery: -1}
	if res, err := f.Step(context.Background()); err != nil || res.To != 1028 {
		t.Fatalf("first step: %+v %v", res, err)
	}
	node.SetHead(1034)
	arm.Store(true)
	_, err := f.Step(context.Background())
	if err == nil || !strings.Contains(err.Error(), "block 1029's parent hash") {
		t.Fatalf("step across the reorganisation: %v", err)
	}
	if cp, _ := ReadCheckpoint(root, "ethereum"); cp.Next != 1029 {
		t.Fatalf("checkpoint moved past the failed range: %+v", cp)
	}
	for i := 0; i < 10; i++ {
		res, err := f.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.CaughtUp {
			break
		}
	}
	if got, want := lakeTransfers(t, root), model.oracle(1040-conf); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lake has %d transfers, the confirmed chain %d", len(got), len(want))
	}
	if !strings.Contains(logBuf.String(), "reorganisation: block 1028's hash changed; rewound to block") {
		t.Fatalf("log:\n%s", logBuf.String())
	}
}
