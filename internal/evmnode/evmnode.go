// Package evmnode is a small EVM JSON-RPC node for tests: it serves eth_blockNumber,
// eth_getBlockByNumber (with full transactions when asked), eth_getBlockReceipts and
// eth_getTransactionReceipt, eth_getLogs (Transfer logs, optionally refusing wide
// ranges or answering slowly, as public endpoints do), eth_call for ERC-20 metadata,
// batched requests, and can reorganise its chain. Tests start it on 127.0.0.1 with
// Start.
package evmnode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TransferTopic is topic 0 of Transfer(address,address,uint256).
const TransferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// Log is one event log of a block (block number and hash are filled in when served).
type Log struct {
	Address string
	Topics  []string
	Data    string
	TxHash  string
	Index   uint64
}

// Transfer builds an ERC-20 Transfer log of value (a decimal or 0x hex integer).
func Transfer(token, from, to string, value string, tx string, index uint64) Log {
	return Log{Address: token, Topics: []string{TransferTopic, word(from), word(to)}, Data: "0x" + uintHex(value), TxHash: tx, Index: index}
}

// NFTTransfer builds an ERC-721 Transfer log (four topics, no data).
func NFTTransfer(token, from, to string, id uint64, tx string, index uint64) Log {
	return Log{Address: token, Topics: []string{TransferTopic, word(from), word(to), fmt.Sprintf("0x%064x", id)}, Data: "0x", TxHash: tx, Index: index}
}

func word(addr string) string {
	return "0x" + strings.Repeat("0", 24) + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

func uintHex(v string) string {
	var n [32]byte
	if strings.HasPrefix(v, "0x") {
		b, _ := hex.DecodeString(fmt.Sprintf("%064s", v[2:]))
		copy(n[32-len(b):], b)
		return hex.EncodeToString(n[:])
	}
	// decimal → big-endian bytes, by repeated division (no math/big needed here).
	digits := []byte(v)
	for i := 31; i >= 0 && len(digits) > 0; i-- {
		var rem int
		var q []byte
		for _, d := range digits {
			cur := rem*10 + int(d-'0')
			if len(q) > 0 || cur/256 > 0 {
				q = append(q, byte('0'+cur/256))
			}
			rem = cur % 256
		}
		n[i] = byte(rem)
		digits = q
	}
	return hex.EncodeToString(n[:])
}

// Tx is a transaction of a block: its native-coin value (a decimal or 0x hex
// integer), and whether it failed (receipt status 0). To "" is a contract creation,
// which creates Created.
type Tx struct {
	Hash, From, To string
	Value          string
	Failed         bool
	Created        string
	// Calls are the calls the transaction makes inside it, as a trace API reports
	// them (trace_block, debug_traceBlockByHash).
	Calls []Call
}

// Call is one call inside a transaction: Type is call, delegatecall, staticcall,
// callcode, create or selfdestruct (To is then the beneficiary); Failed reverts it
// (and so everything under it); Calls are the calls it makes in turn.
type Call struct {
	Type, From, To string
	Value          string
	Failed         bool
	Calls          []Call
}

// Token is a contract's answers to decimals(), symbol() and name().
type Token struct {
	Decimals       int
	RevertDecimals bool
	Symbol, Name   string
	Bytes32Symbol  bool // symbol() returns bytes32 (early tokens such as MKR)
}

// Node is the chain and its behaviour. Lock-free fields are set before Start.
type Node struct {
	// TimeOf gives block n's timestamp.
	TimeOf func(n uint64) int64
	Tokens map[string]Token
	// MaxResults > 0 refuses an eth_getLogs answer of more logs (the error public
	// endpoints give); SlowSpan > 0 answers a range wider than it after Delay.
	MaxResults int
	SlowSpan   uint64
	Delay      time.Duration
	// Throttle answers the next requests HTTP 429 (one per request).
	Throttle int
	// LogTimestamps adds blockTimestamp to logs, as Erigon, Reth and recent Geth do.
	LogTimestamps bool
	// NoBlockReceipts answers eth_getBlockReceipts "method not found", as older nodes
	// do (receipts are then asked one transaction at a time).
	NoBlockReceipts bool
	// NoTraceBlock and NoDebugTrace answer trace_block (Erigon, Nethermind, Reth) and
	// debug_traceBlockByHash (Geth) "method not found"; DebugNoTxHash leaves txHash
	// out of the latter's answers, as Geth did before 1.13.
	NoTraceBlock, NoDebugTrace, DebugNoTxHash bool
	// RewardTo, when set, adds a block reward trace (no transaction) to trace_block.
	RewardTo string

	mu     sync.Mutex
	head   uint64
	logs   map[uint64][]Log
	txs    map[uint64][]Tx
	fork   map[uint64]int // blocks from a fork point have that fork's hashes
	nfork  int
	calls  map[string]int
	reqs   int
	ranges [][2]uint64
}

// New returns a node whose head is head.
func New(head uint64, timeOf func(uint64) int64) *Node {
	return &Node{TimeOf: timeOf, Tokens: map[string]Token{}, head: head, logs: map[uint64][]Log{}, txs: map[uint64][]Tx{},
		fork: map[uint64]int{}, calls: map[string]int{}}
}

// Start serves n on 127.0.0.1 until the test ends and returns its URL.
func (n *Node) Start(t testing.TB) string {
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	return srv.URL
}

// AddLogs appends logs to block b.
func (n *Node) AddLogs(b uint64, logs ...Log) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs[b] = append(n.logs[b], logs...)
}

// AddTxs appends transactions to block b.
func (n *Node) AddTxs(b uint64, txs ...Tx) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.txs[b] = append(n.txs[b], txs...)
}

// SetHead moves the head.
func (n *Node) SetHead(h uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.head = h
}

// Reorg replaces blocks from..head: they get new hashes, and their logs become
// replace (block → logs; blocks not named lose their logs); their transactions are
// dropped (AddTxs adds the new chain's).
func (n *Node) Reorg(from uint64, replace map[uint64][]Log) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nfork++
	f := n.nfork
	for b := range n.logs {
		if b >= from {
			delete(n.logs, b)
		}
	}
	for b, l := range replace {
		n.logs[b] = l
	}
	for b := range n.txs {
		if b >= from {
			delete(n.txs, b)
		}
	}
	for b := range n.fork {
		if b > from {
			delete(n.fork, b)
		}
	}
	n.fork[from] = f
}

// forkOf is the fork number in force at block b (the latest fork point at or below b).
func (n *Node) forkOf(b uint64) int {
	best, f := uint64(0), 0
	for p, v := range n.fork {
		if p <= b && p >= best {
			best, f = p, v
		}
	}
	return f
}

// Hash is block b's hash on the current chain.
func (n *Node) Hash(b uint64) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hash(b)
}

func (n *Node) hash(b uint64) string {
	s := sha256.Sum256([]byte(fmt.Sprintf("block %d fork %d", b, n.forkOf(b))))
	return "0x" + hex.EncodeToString(s[:])
}

// Calls is how many calls of method were served; Requests how many HTTP requests.
func (n *Node) Calls(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

func (n *Node) Requests() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.reqs
}

// Ranges are the eth_getLogs ranges asked, in order.
func (n *Node) Ranges() [][2]uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([][2]uint64(nil), n.ranges...)
}

type req struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type resp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcErr         `json:"error,omitempty"`
}

func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n.mu.Lock()
	n.reqs++
	if n.Throttle > 0 {
		n.Throttle--
		n.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		var reqs []req
		if err := json.Unmarshal(body, &reqs); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		out := make([]resp, len(reqs))
		for i, q := range reqs {
			out[i] = n.answer(q)
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	var q req
	if err := json.Unmarshal(body, &q); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	a := n.answer(q)
	if q.Method == "eth_getLogs" && n.SlowSpan > 0 && a.Error == nil {
		if rg := n.lastRange(); rg[1]-rg[0]+1 > n.SlowSpan {
			time.Sleep(n.Delay)
		}
	}
	json.NewEncoder(w).Encode(a)
}

func (n *Node) lastRange() [2]uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ranges[len(n.ranges)-1]
}

func hexQ(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func parseQ(raw json.RawMessage) (uint64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || !strings.HasPrefix(s, "0x") {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	return v, err == nil
}

func (n *Node) answer(q req) resp {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls[q.Method]++
	out := resp{JSONRPC: "2.0", ID: q.ID}
	fail := func(code int, msg string) resp { out.Error = &rpcErr{code, msg}; return out }
	switch q.Method {
	case "eth_blockNumber":
		out.Result = hexQ(n.head)
	case "eth_getBlockByNumber":
		if len(q.Params) < 1 {
			return fail(-32602, "missing block")
		}
		b, ok := parseQ(q.Params[0])
		if !ok {
			return fail(-32602, "bad block")
		}
		if b > n.head {
			out.Result = nil
			return out
		}
		parent := strings.Repeat("0", 64)
		if b > 0 {
			parent = n.hash(b - 1)[2:]
		}
		txs := []any{}
		var full bool
		if len(q.Params) > 1 {
			json.Unmarshal(q.Params[1], &full) //nolint:errcheck // absent or malformed: hashes only
		}
		for i, tx := range n.txs[b] {
			if !full {
				txs = append(txs, tx.Hash)
				continue
			}
			var to any
			if tx.To != "" {
				to = tx.To
			}
			txs = append(txs, map[string]any{"hash": tx.Hash, "from": tx.From, "to": to, "value": quantity(tx.Value),
				"blockNumber": hexQ(b), "blockHash": n.hash(b), "transactionIndex": hexQ(uint64(i)), "input": "0x", "nonce": "0x0", "gas": "0x5208"})
		}
		out.Result = map[string]any{"number": hexQ(b), "hash": n.hash(b), "parentHash": "0x" + parent,
			"timestamp": hexQ(uint64(n.TimeOf(b))), "transactions": txs}
	case "eth_getBlockReceipts":
		if n.NoBlockReceipts {
			return fail(-32601, "the method eth_getBlockReceipts does not exist/is not available")
		}
		if len(q.Params) < 1 {
			return fail(-32602, "missing block")
		}
		b, ok := parseQ(q.Params[0])
		if !ok {
			return fail(-32602, "bad block")
		}
		if b > n.head {
			out.Result = nil
			return out
		}
		rs := []any{}
		for i := range n.txs[b] {
			rs = append(rs, n.receipt(b, i))
		}
		out.Result = rs
	case "trace_block":
		if n.NoTraceBlock {
			return fail(-32601, "the method trace_block does not exist/is not available")
		}
		b, ok := uint64(0), len(q.Params) > 0
		if ok {
			b, ok = parseQ(q.Params[0])
		}
		if !ok {
			return fail(-32602, "bad block")
		}
		if b > n.head {
			out.Result = nil
			return out
		}
		out.Result = n.parityTraces(b)
	case "debug_traceBlockByHash":
		if n.NoDebugTrace {
			return fail(-32601, "the method debug_traceBlockByHash does not exist/is not available")
		}
		var h string
		var opt struct {
			Tracer string `json:"tracer"`
		}
		if len(q.Params) < 2 || json.Unmarshal(q.Params[0], &h) != nil || json.Unmarshal(q.Params[1], &opt) != nil || opt.Tracer != "callTracer" {
			return fail(-32602, "want a block hash and {\"tracer\": \"callTracer\"}")
		}
		var b uint64
		found := false
		for i := uint64(0); i <= n.head; i++ {
			if strings.EqualFold(n.hash(i), h) {
				b, found = i, true
				break
			}
		}
		if !found {
			return fail(-32000, "block "+h+" not found")
		}
		res := []any{}
		for _, tx := range n.txs[b] {
			r := map[string]any{"result": gethFrame(topCall(tx))}
			if !n.DebugNoTxHash {
				r["txHash"] = tx.Hash
			}
			res = append(res, r)
		}
		out.Result = res
	case "eth_getTransactionReceipt":
		var h string
		if len(q.Params) < 1 || json.Unmarshal(q.Params[0], &h) != nil {
			return fail(-32602, "bad hash")
		}
		out.Result = nil
		for b, txs := range n.txs {
			for i, tx := range txs {
				if b <= n.head && strings.EqualFold(tx.Hash, h) {
					out.Result = n.receipt(b, i)
				}
			}
		}
	case "eth_getLogs":
		var f struct {
			From   string `json:"fromBlock"`
			To     string `json:"toBlock"`
			Topics []any  `json:"topics"`
		}
		if len(q.Params) < 1 || json.Unmarshal(q.Params[0], &f) != nil {
			return fail(-32602, "bad filter")
		}
		from, ok1 := parseQ(json.RawMessage(strconv.Quote(f.From)))
		to, ok2 := parseQ(json.RawMessage(strconv.Quote(f.To)))
		if !ok1 || !ok2 || to < from {
			return fail(-32602, "bad range")
		}
		n.ranges = append(n.ranges, [2]uint64{from, to})
		to = min(to, n.head)
		var blocks []uint64
		for b := range n.logs {
			if b >= from && b <= to {
				blocks = append(blocks, b)
			}
		}
		sort.Slice(blocks, func(i, j int) bool { return blocks[i] < blocks[j] })
		logs := []map[string]any{}
		for _, b := range blocks {
			for _, l := range n.logs[b] {
				if len(l.Topics) == 0 || l.Topics[0] != TransferTopic {
					continue
				}
				m := map[string]any{"address": l.Address, "topics": l.Topics, "data": l.Data,
					"blockNumber": hexQ(b), "blockHash": n.hash(b), "transactionHash": l.TxHash, "logIndex": hexQ(l.Index),
					"transactionIndex": "0x0", "removed": false}
				if n.LogTimestamps {
					m["blockTimestamp"] = hexQ(uint64(n.TimeOf(b)))
				}
				logs = append(logs, m)
			}
		}
		if n.MaxResults > 0 && len(logs) > n.MaxResults {
			return fail(-32005, fmt.Sprintf("query returned more than %d results", n.MaxResults))
		}
		out.Result = logs
	case "eth_call":
		var c struct {
			To   string `json:"to"`
			Data string `json:"data"`
		}
		if len(q.Params) < 1 || json.Unmarshal(q.Params[0], &c) != nil {
			return fail(-32602, "bad call")
		}
		tk, ok := n.Tokens[strings.ToLower(c.To)]
		if !ok {
			out.Result = "0x" // no code at the address
			return out
		}
		switch c.Data {
		case "0x313ce567":
			if tk.RevertDecimals {
				return fail(3, "execution reverted")
			}
			out.Result = fmt.Sprintf("0x%064x", tk.Decimals)
		case "0x95d89b41":
			if tk.Bytes32Symbol {
				b := make([]byte, 32)
				copy(b, tk.Symbol)
				out.Result = "0x" + hex.EncodeToString(b)
			} else {
				out.Result = abiString(tk.Symbol)
			}
		case "0x06fdde03":
			out.Result = abiString(tk.Name)
		default:
			return fail(3, "execution reverted")
		}
	default:
		return fail(-32601, "method not found")
	}
	return out
}

// quantity is v (decimal or 0x hex) as a JSON-RPC quantity: 0x, no leading zeros.
func quantity(v string) string {
	h := strings.TrimLeft(uintHex(v), "0")
	if h == "" {
		h = "0"
	}
	return "0x" + h
}

// receipt is the receipt of block b's i-th transaction.
func (n *Node) receipt(b uint64, i int) map[string]any {
	tx := n.txs[b][i]
	status := "0x1"
	if tx.Failed {
		status = "0x0"
	}
	var created any
	if tx.To == "" {
		created = tx.Created
	}
	return map[string]any{"transactionHash": tx.Hash, "transactionIndex": hexQ(uint64(i)), "blockNumber": hexQ(b),
		"blockHash": n.hash(b), "status": status, "contractAddress": created, "logs": []any{}}
}

func abiString(s string) string {
	pad := (len(s) + 31) / 32 * 32
	b := make([]byte, 64+pad)
	b[31] = 32
	b[63] = byte(len(s))
	copy(b[64:], s)
	return "0x" + hex.EncodeToString(b)
}

// topCall is the transaction itself as the outermost call of its trace.
func topCall(tx Tx) Call {
	c := Call{Type: "call", From: tx.From, To: tx.To, Value: tx.Value, Failed: tx.Failed, Calls: tx.Calls}
	if tx.To == "" {
		c.Type, c.To = "create", tx.Created
	}
	return c
}

// gethFrame is c as Geth's callTracer writes it: upper-case types, value only where
// the call carries one, an error on a reverted call, the calls under it nested.
func gethFrame(c Call) map[string]any {
	f := map[string]any{"type": strings.ToUpper(c.Type), "from": c.From, "to": c.To, "gas": "0x0", "gasUsed": "0x0", "input": "0x"}
	if c.Type != "delegatecall" && c.Type != "staticcall" {
		f["value"] = quantity(c.Value)
	}
	if c.Failed {
		f["error"] = "execution reverted"
	}
	if len(c.Calls) > 0 {
		sub := make([]any, len(c.Calls))
		for i, s := range c.Calls {
			sub[i] = gethFrame(s)
		}
		f["calls"] = sub
	}
	return f
}

// parityTraces is block b's trace_block answer: every transaction's calls flattened
// in trace_address order (a reverted call's own trace has an error and no result; the
// calls under it keep theirs, as the Parity-style trace API reports them), then the
// block reward when RewardTo is set.
func (n *Node) parityTraces(b uint64) []any {
	out := []any{}
	var walk func(tx Tx, pos int, c Call, addr []int)
	walk = func(tx Tx, pos int, c Call, addr []int) {
		t := map[string]any{"blockNumber": b, "blockHash": n.hash(b), "transactionHash": tx.Hash, "transactionPosition": pos,
			"traceAddress": append([]int{}, addr...), "subtraces": len(c.Calls)}
		switch c.Type {
		case "create":
			t["type"] = "create"
			t["action"] = map[string]any{"from": c.From, "value": quantity(c.Value), "init": "0x", "gas": "0x0"}
			t["result"] = map[string]any{"address": c.To, "code": "0x", "gasUsed": "0x0"}
		case "selfdestruct":
			t["type"] = "suicide"
			t["action"] = map[string]any{"address": c.From, "refundAddress": c.To, "balance": quantity(c.Value)}
			t["result"] = nil
		default:
			t["type"] = "call"
			t["action"] = map[string]any{"callType": c.Type, "from": c.From, "to": c.To, "value": quantity(c.Value), "input": "0x", "gas": "0x0"}
			t["result"] = map[string]any{"gasUsed": "0x0", "output": "0x"}
		}
		if c.Failed {
			delete(t, "result")
			t["error"] = "Reverted"
		}
		out = append(out, t)
		for i, s := range c.Calls {
			walk(tx, pos, s, append(addr, i))
		}
	}
	for i, tx := range n.txs[b] {
		walk(tx, i, topCall(tx), nil)
	}
	if n.RewardTo != "" && len(n.txs[b]) > 0 {
		out = append(out, map[string]any{"type": "reward", "blockNumber": b, "blockHash": n.hash(b), "transactionHash": nil,
			"transactionPosition": nil, "traceAddress": []int{}, "subtraces": 0,
			"action": map[string]any{"author": n.RewardTo, "rewardType": "block", "value": "0x1bc16d674ec80000"}, "result": nil})
	}
	return out
}
