package onchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Native-coin transfers over JSON-RPC (Loader.Native): logs carry only token
// transfers, so the value a transaction moves is read from the blocks themselves
// (eth_getBlockByNumber with full transactions, for every block of the range) and
// its outcome from the receipts (eth_getBlockReceipts per block that has a
// value-moving transaction, or eth_getTransactionReceipt per transaction where the
// node lacks the block method). Each successful transaction with a non-zero value is
// one transfer of the zero token address with log_index -1: the same row the
// Ethereum-ETL transactions.csv gives, so the two inputs agree and deduplicate.
// Internal value transfers (a contract paying out inside a transaction) need the
// node's trace API: with Loader.Traces they are read from it (traces.go), and the
// transactions' own values with them.

// fullBlocksPerRequest bounds a batch of full blocks: a busy block's transactions
// run to hundreds of kilobytes of JSON.
const fullBlocksPerRequest = 20

type rawTx struct {
	Hash  string  `json:"hash"`
	From  string  `json:"from"`
	To    *string `json:"to"`
	Value string  `json:"value"`
}

type rawFullBlock struct {
	rawHeader
	Transactions []json.RawMessage `json:"transactions"`
}

type rawReceipt struct {
	TransactionHash string  `json:"transactionHash"`
	BlockHash       string  `json:"blockHash"`
	Status          *string `json:"status"`
	ContractAddress *string `json:"contractAddress"`
}

// stageNative stages the native-coin transfers of blocks [from, to] and records every
// block's header in headers (a block already there, from its logs, must have the same
// hash: otherwise the chain moved while the range was read).
func stageNative(ctx context.Context, l *Loader, c *Client, from, to uint64, headers map[uint64]Header) error {
	for lo := from; lo <= to; lo += fullBlocksPerRequest {
		hi := min(to, lo+fullBlocksPerRequest-1)
		if err := stageNativeChunk(ctx, l, c, lo, hi, headers); err != nil {
			return err
		}
		if hi == to {
			break
		}
	}
	return nil
}

func stageNativeChunk(ctx context.Context, l *Loader, c *Client, lo, hi uint64, headers map[uint64]Header) error {
	n := int(hi - lo + 1)
	outs := make([]json.RawMessage, n)
	calls := make([]*Call, n)
	for i := range calls {
		// With traces the transactions' values come from the traces: hashes suffice.
		calls[i] = &Call{Method: "eth_getBlockByNumber", Params: []any{hexQ(lo + uint64(i)), !l.Traces}, Out: &outs[i]}
	}
	if err := c.Batch(ctx, calls); err != nil {
		return err
	}
	type pending struct {
		tr    Transfer
		block Header
	}
	var txs []pending
	var blocks []uint64
	hashes := map[uint64][]string{}
	for i, cl := range calls {
		b := lo + uint64(i)
		if cl.Err != nil {
			return fmt.Errorf("block %d: %w", b, cl.Err)
		}
		if len(outs[i]) == 0 || string(outs[i]) == "null" {
			return fmt.Errorf("block %d: the node does not have it", b)
		}
		var fb rawFullBlock
		if err := json.Unmarshal(outs[i], &fb); err != nil {
			return fmt.Errorf("block %d: %w", b, err)
		}
		h, err := fb.header()
		if err != nil {
			return fmt.Errorf("block %d: %w", b, err)
		}
		if h.Number != b {
			return fmt.Errorf("block %d: the node answered block %d", b, h.Number)
		}
		if old, ok := headers[b]; ok && !equalFoldHex(old.Hash, h.Hash) {
			return fmt.Errorf("block %d: hash %s is not the hash %s its logs named (the chain reorganised while reading)", b, h.Hash, old.Hash)
		}
		headers[b] = h
		l.SetBlockTime(b, h.Time)
		if l.Traces {
			if len(fb.Transactions) > 0 {
				blocks = append(blocks, b)
				for _, raw := range fb.Transactions {
					var hash string
					if err := json.Unmarshal(raw, &hash); err != nil {
						return fmt.Errorf("block %d: transaction hash: %w", b, err)
					}
					hashes[b] = append(hashes[b], hash)
				}
			}
			continue
		}
		for _, raw := range fb.Transactions {
			if len(raw) > 0 && raw[0] == '"' {
				return fmt.Errorf("block %d: the node sent transaction hashes, not transactions", b)
			}
			var tx rawTx
			if err := json.Unmarshal(raw, &tx); err != nil {
				return fmt.Errorf("block %d: transaction: %w", b, err)
			}
			v, err := ParseHexValue(tx.Value)
			if err != nil {
				return fmt.Errorf("block %d: transaction %s: %w", b, tx.Hash, err)
			}
			if v.IsZero() {
				continue
			}
			tr := Transfer{Block: b, LogIndex: -1, Token: ZeroAddress, Value: v}
			if tr.TxHash, err = TxHash(tx.Hash); err != nil {
				return fmt.Errorf("block %d: %w", b, err)
			}
			if tr.From, err = Address(tx.From); err != nil {
				return fmt.Errorf("block %d: transaction %s from: %w", b, tx.Hash, err)
			}
			if tx.To != nil && *tx.To != "" {
				if tr.To, err = Address(*tx.To); err != nil {
					return fmt.Errorf("block %d: transaction %s to: %w", b, tx.Hash, err)
				}
			}
			txs = append(txs, pending{tr, h})
		}
	}
	if l.Traces {
		return stageTraces(ctx, l, c, headers, blocks, hashes)
	}
	if len(txs) == 0 {
		return nil
	}
	trs := make([]Transfer, len(txs))
	for i, p := range txs {
		trs[i] = p.tr
	}
	receipts, err := nativeReceipts(ctx, c, trs)
	if err != nil {
		return err
	}
	for _, p := range txs {
		l.Sum.Read++
		r, ok := receipts[p.tr.TxHash]
		if !ok {
			return fmt.Errorf("block %d: no receipt for transaction %s", p.tr.Block, p.tr.TxHash)
		}
		if r.BlockHash != "" && !equalFoldHex(r.BlockHash, p.block.Hash) {
			return fmt.Errorf("block %d: receipt of %s names block hash %s, not %s (the chain reorganised while reading)",
				p.tr.Block, p.tr.TxHash, r.BlockHash, p.block.Hash)
		}
		// A failed transaction moved nothing. Receipts before Byzantium carry a state
		// root instead of a status: those transactions are taken as successful, as
		// Ethereum-ETL leaves their receipt_status empty.
		if r.Status != nil && *r.Status != "0x1" {
			l.Sum.Skip("failed transaction")
			continue
		}
		tr := p.tr
		if tr.To == "" {
			if r.ContractAddress == nil || *r.ContractAddress == "" {
				return fmt.Errorf("block %d: contract creation %s without a contractAddress in its receipt", tr.Block, tr.TxHash)
			}
			if tr.To, err = Address(*r.ContractAddress); err != nil {
				return fmt.Errorf("block %d: receipt of %s: %w", tr.Block, tr.TxHash, err)
			}
		}
		if err := l.Transfer(ctx, tr); err != nil {
			return err
		}
	}
	return nil
}

// nativeReceipts fetches the receipts of the transactions (by hash): one
// eth_getBlockReceipts per block that has any, batched; when the node does not know
// that method, one eth_getTransactionReceipt per transaction.
func nativeReceipts(ctx context.Context, c *Client, trs []Transfer) (map[string]rawReceipt, error) {
	var blocks []uint64
	seen := map[uint64]bool{}
	hashes := make([]string, len(trs))
	for i, tr := range trs {
		if !seen[tr.Block] {
			seen[tr.Block] = true
			blocks = append(blocks, tr.Block)
		}
		hashes[i] = tr.TxHash
	}
	out := map[string]rawReceipt{}
	add := func(r rawReceipt) error {
		h, err := TxHash(r.TransactionHash)
		if err != nil {
			return fmt.Errorf("receipt: %w", err)
		}
		out[h] = r
		return nil
	}
	if !c.noBlockReceipts.Load() {
		rs := make([][]rawReceipt, len(blocks))
		calls := make([]*Call, len(blocks))
		for i, b := range blocks {
			calls[i] = &Call{Method: "eth_getBlockReceipts", Params: []any{hexQ(b)}, Out: &rs[i]}
		}
		if err := c.Batch(ctx, calls); err != nil {
			return nil, err
		}
		unsupported := false
		for i, cl := range calls {
			var re *RPCError
			if errors.As(cl.Err, &re) && methodMissing(re) {
				unsupported = true
				break
			}
			if cl.Err != nil {
				return nil, fmt.Errorf("block %d receipts: %w", blocks[i], cl.Err)
			}
			for _, r := range rs[i] {
				if err := add(r); err != nil {
					return nil, fmt.Errorf("block %d: %w", blocks[i], err)
				}
			}
		}
		if !unsupported {
			return out, nil
		}
		c.noBlockReceipts.Store(true) // asked once per client, not per range
		clear(out)
	}
	rs := make([]*rawReceipt, len(hashes))
	calls := make([]*Call, len(hashes))
	for i, h := range hashes {
		calls[i] = &Call{Method: "eth_getTransactionReceipt", Params: []any{h}, Out: &rs[i]}
	}
	if err := c.Batch(ctx, calls); err != nil {
		return nil, err
	}
	for i, cl := range calls {
		if cl.Err != nil {
			return nil, fmt.Errorf("receipt of %s: %w", hashes[i], cl.Err)
		}
		if rs[i] == nil {
			return nil, fmt.Errorf("receipt of %s: the node does not have it", hashes[i])
		}
		if err := add(*rs[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// methodMissing reports a node's answer to a method it does not serve.
func methodMissing(e *RPCError) bool {
	m := strings.ToLower(e.Message)
	return e.Code == -32601 || strings.Contains(m, "not found") || strings.Contains(m, "does not exist") ||
		strings.Contains(m, "not supported") || strings.Contains(m, "not available")
}
