package onchain

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Internal value transfers over JSON-RPC (Loader.Traces): a contract paying out
// inside a transaction moves the native coin without a log or a transaction of its
// own; only the node's trace API sees it. Two dialects are read:
//
//   - trace_block (the Parity-style trace API of Erigon, Nethermind, Reth and
//     OpenEthereum): one flat list per block, each trace with its transaction hash and
//     trace address, in trace_address order;
//   - debug_traceBlockByHash with Geth's callTracer: per transaction, the call tree
//     nested. By hash, not number, so the traces are those of the block whose header
//     was read (a block replaced meanwhile answers "not found").
//
// trace_block is asked first; a node that does not serve it is asked
// debug_traceBlockByHash from then on (once per client). Both give the same rows,
// which are those Ethereum-ETL's traces.csv gives (etlTrace): the k-th successful call
// or create of a transaction that moves value, in trace_address order, is one
// transfer of the zero token address with log_index -1-k; the outermost call is the
// transaction's own value (-1, the key of the transaction's own transfer). A call is
// successful when neither it nor any call it runs under reverted; delegatecall,
// staticcall and callcode move no value of their own, selfdestruct refunds and block
// rewards are not transfers (skipped and counted, as in etlTrace). With traces the
// transactions' own values come from the traces too, so no receipt is needed.

// traceCall is one call of a transaction, flattened in trace_address order.
type traceCall struct {
	kind     string // call, delegatecall, staticcall, callcode, create, selfdestruct
	from, to string
	value    string // hex quantity; "" for none
	failed   bool   // it or a call it runs under reverted
}

// txTraces is one transaction's calls.
type txTraces struct {
	hash  string
	calls []traceCall
}

// stageTraces stages the internal value transfers (and the transactions' own
// values) of the blocks whose headers were just read: hashes holds each block's
// transaction hashes in block order (Geth before 1.13 does not name them).
func stageTraces(ctx context.Context, l *Loader, c *Client, headers map[uint64]Header, blocks []uint64, hashes map[uint64][]string) error {
	traces, err := blockTraces(ctx, c, headers, blocks, hashes)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		for _, tx := range traces[b] {
			k := int32(0)
			for _, cl := range tx.calls {
				if cl.kind != "call" && cl.kind != "create" {
					continue
				}
				v, err := ParseHexValue(orZero(cl.value))
				if err != nil {
					return fmt.Errorf("block %d: trace of %s: %w", b, tx.hash, err)
				}
				if v.IsZero() {
					continue
				}
				l.Sum.Read++
				if cl.failed {
					l.Sum.Skip("reverted call")
					continue
				}
				tr := Transfer{Block: b, LogIndex: -1 - k, Token: ZeroAddress, Value: v}
				k++
				if tr.TxHash, err = TxHash(tx.hash); err != nil {
					return fmt.Errorf("block %d: trace: %w", b, err)
				}
				if tr.From, err = Address(cl.from); err != nil {
					return fmt.Errorf("block %d: trace of %s from: %w", b, tx.hash, err)
				}
				if tr.To, err = Address(cl.to); err != nil {
					return fmt.Errorf("block %d: trace of %s to: %w", b, tx.hash, err)
				}
				if err := l.Transfer(ctx, tr); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func orZero(v string) string {
	if v == "" {
		return "0x0"
	}
	return v
}

// blockTraces reads the traces of blocks through trace_block, or
// debug_traceBlockByHash where the node lacks it.
func blockTraces(ctx context.Context, c *Client, headers map[uint64]Header, blocks []uint64, hashes map[uint64][]string) (map[uint64][]txTraces, error) {
	if !c.noTraceBlock.Load() {
		out, err := parityTraces(ctx, c, headers, blocks)
		var re *RPCError
		if !errors.As(err, &re) || !methodMissing(re) {
			return out, err
		}
		c.noTraceBlock.Store(true)
	}
	out, err := gethTraces(ctx, c, headers, blocks, hashes)
	var re *RPCError
	if errors.As(err, &re) && methodMissing(re) {
		return nil, fmt.Errorf("internal value transfers need the node's trace API: it serves neither trace_block nor debug_traceBlockByHash (%w)", err)
	}
	return out, err
}

// perBlock asks one call per block (method and parameters from call) in batched
// requests and returns each block's answer; a block's error answer fails them all,
// naming the block (and wrapping the node's error, so a missing method is seen).
func perBlock[T any](ctx context.Context, c *Client, blocks []uint64, call func(b uint64) (string, []any)) ([]T, error) {
	outs := make([]T, len(blocks))
	calls := make([]*Call, len(blocks))
	for i, b := range blocks {
		m, p := call(b)
		calls[i] = &Call{Method: m, Params: p, Out: &outs[i]}
	}
	if err := c.Batch(ctx, calls); err != nil {
		return nil, err
	}
	for i, cl := range calls {
		if cl.Err != nil {
			return nil, fmt.Errorf("block %d traces: %w", blocks[i], cl.Err)
		}
	}
	return outs, nil
}

type rawParityTrace struct {
	Type   string `json:"type"`
	Action struct {
		CallType      string `json:"callType"`
		From          string `json:"from"`
		To            string `json:"to"`
		Value         string `json:"value"`
		Address       string `json:"address"`
		RefundAddress string `json:"refundAddress"`
		Balance       string `json:"balance"`
	} `json:"action"`
	Result *struct {
		Address string `json:"address"`
	} `json:"result"`
	Error           string  `json:"error"`
	TraceAddress    []int   `json:"traceAddress"`
	TransactionHash *string `json:"transactionHash"`
	BlockHash       string  `json:"blockHash"`
}

func parityTraces(ctx context.Context, c *Client, headers map[uint64]Header, blocks []uint64) (map[uint64][]txTraces, error) {
	outs, err := perBlock[[]rawParityTrace](ctx, c, blocks, func(b uint64) (string, []any) {
		return "trace_block", []any{hexQ(b)}
	})
	if err != nil {
		return nil, err
	}
	res := map[uint64][]txTraces{}
	for i, b := range blocks {
		// Each call's path is looked up by its trace address: a call under a reverted
		// one reverted too, whatever its own trace says.
		failed := map[string]bool{}
		var txs []txTraces
		for _, t := range outs[i] {
			if t.BlockHash != "" && !equalFoldHex(t.BlockHash, headers[b].Hash) {
				return nil, fmt.Errorf("block %d: traces name block hash %s, not %s (the chain reorganised while reading)", b, t.BlockHash, headers[b].Hash)
			}
			if t.TransactionHash == nil || *t.TransactionHash == "" {
				continue // a block or uncle reward: no transaction, not a transfer
			}
			if len(txs) == 0 || !strings.EqualFold(txs[len(txs)-1].hash, *t.TransactionHash) {
				txs = append(txs, txTraces{hash: *t.TransactionHash})
				clear(failed)
			}
			path := traceKey(t.TraceAddress)
			parent := ""
			if len(t.TraceAddress) > 0 {
				parent = traceKey(t.TraceAddress[:len(t.TraceAddress)-1])
			}
			f := t.Error != "" || (len(t.TraceAddress) > 0 && failed[parent])
			failed[path] = f
			cl := traceCall{failed: f}
			switch t.Type {
			case "call":
				cl.kind, cl.from, cl.to, cl.value = strings.ToLower(t.Action.CallType), t.Action.From, t.Action.To, t.Action.Value
			case "create", "create2":
				cl.kind, cl.from, cl.value = "create", t.Action.From, t.Action.Value
				if t.Result != nil {
					cl.to = t.Result.Address
				}
			case "suicide", "selfdestruct":
				cl.kind, cl.from, cl.to, cl.value = "selfdestruct", t.Action.Address, t.Action.RefundAddress, t.Action.Balance
			default:
				cl.kind = t.Type
			}
			txs[len(txs)-1].calls = append(txs[len(txs)-1].calls, cl)
		}
		res[b] = txs
	}
	return res, nil
}

func traceKey(addr []int) string {
	var sb strings.Builder
	for _, a := range addr {
		sb.WriteString(strconv.Itoa(a))
		sb.WriteByte('.')
	}
	return sb.String()
}

type rawGethFrame struct {
	Type  string         `json:"type"`
	From  string         `json:"from"`
	To    string         `json:"to"`
	Value string         `json:"value"`
	Error string         `json:"error"`
	Calls []rawGethFrame `json:"calls"`
}

type rawGethTx struct {
	TxHash string       `json:"txHash"`
	Result rawGethFrame `json:"result"`
	Error  string       `json:"error"`
}

func gethTraces(ctx context.Context, c *Client, headers map[uint64]Header, blocks []uint64, hashes map[uint64][]string) (map[uint64][]txTraces, error) {
	outs, err := perBlock[[]rawGethTx](ctx, c, blocks, func(b uint64) (string, []any) {
		return "debug_traceBlockByHash", []any{headers[b].Hash, map[string]string{"tracer": "callTracer"}}
	})
	if err != nil {
		return nil, err
	}
	res := map[uint64][]txTraces{}
	for i, b := range blocks {
		if len(outs[i]) != len(hashes[b]) {
			return nil, fmt.Errorf("block %d: %d transaction traces for %d transactions", b, len(outs[i]), len(hashes[b]))
		}
		txs := make([]txTraces, len(outs[i]))
		for j, t := range outs[i] {
			if t.Error != "" {
				return nil, fmt.Errorf("block %d: trace of %s: %s", b, hashes[b][j], t.Error)
			}
			h := t.TxHash
			if h == "" {
				h = hashes[b][j] // Geth before 1.13: the block's order
			} else if !strings.EqualFold(h, hashes[b][j]) {
				return nil, fmt.Errorf("block %d: trace %d is of %s, the block's transaction %d is %s", b, j, h, j, hashes[b][j])
			}
			txs[j].hash = h
			var walk func(f *rawGethFrame, parentFailed bool)
			walk = func(f *rawGethFrame, parentFailed bool) {
				failed := parentFailed || f.Error != ""
				kind := strings.ToLower(f.Type)
				if kind == "create2" {
					kind = "create"
				}
				txs[j].calls = append(txs[j].calls, traceCall{kind: kind, from: f.From, to: f.To, value: f.Value, failed: failed})
				for k := range f.Calls {
					walk(&f.Calls[k], failed)
				}
			}
			walk(&t.Result, false)
		}
		res[b] = txs
	}
	return res, nil
}
