package onchain

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// LoadRPC stages the ERC-20 transfers of blocks [from, to] read from a node: Transfer
// logs by eth_getLogs over ranges that adapt to the node (halved when it refuses a
// range or times out, doubled while answers stay small), block timestamps by batched
// eth_getBlockByNumber, token metadata by eth_call (l.Meta). ERC-721 transfers and
// removed logs are skipped and counted. With l.Native the native-coin value of every
// successful transaction is read too (native.go). progress, when set, gets the blocks
// done.
func LoadRPC(ctx context.Context, l *Loader, c *Client, from, to uint64, progress func(done uint64)) error {
	if c == nil {
		return errors.New("no JSON-RPC client")
	}
	_, err := loadRange(ctx, l, c, from, to, progress)
	return err
}

// smallAnswer is the log count under which the next range is doubled.
const smallAnswer = 2000

// loadRange is LoadRPC returning the headers it fetched (the blocks with transfers).
func loadRange(ctx context.Context, l *Loader, c *Client, from, to uint64, progress func(done uint64)) (map[uint64]Header, error) {
	span, maxSpan := c.Span, c.MaxSpan
	if span == 0 {
		span = 2000
	}
	if maxSpan == 0 {
		maxSpan = 100_000
	}
	headers := map[uint64]Header{}
	failures := 0
	// ceiling is the widest range worth trying: below the last refused one, raised
	// again after a run of answers, so a node's limit is probed rarely, not every
	// other call.
	ceiling, streak := maxSpan, 0
	for cur := from; cur <= to; {
		end := min(to, cur+span-1)
		logs, err := c.GetLogs(ctx, cur, end)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var eh *errHTTP
			throttled := errors.As(err, &eh) && (eh.status == 429 || eh.retryAfter > 0)
			var re *RPCError
			if errors.As(err, &re) && re.rateLimited() {
				throttled = true
			}
			if !throttled && end > cur {
				// The node refused the range (too many results, response too large,
				// timeout): halve it.
				ceiling = max(1, (end-cur+1)/2)
				span = max(1, (end-cur+1)/2)
				streak = 0
				continue
			}
			failures++
			if failures > c.retries() {
				return nil, fmt.Errorf("eth_getLogs blocks %d-%d: %w", cur, end, err)
			}
			if err := sleep(ctx, c.backoff(failures-1)); err != nil {
				return nil, err
			}
			continue
		}
		failures = 0
		if err := stageLogs(ctx, l, c, logs, headers); err != nil {
			return nil, fmt.Errorf("blocks %d-%d: %w", cur, end, err)
		}
		if l.Native {
			if err := stageNative(ctx, l, c, cur, end, headers); err != nil {
				return nil, fmt.Errorf("blocks %d-%d: native transfers: %w", cur, end, err)
			}
		}
		if streak++; streak >= 16 {
			ceiling, streak = min(maxSpan, ceiling*2), 0
		}
		if len(logs) < smallAnswer && span < ceiling {
			span = min(ceiling, span*2)
		}
		if progress != nil {
			progress(end - from + 1)
		}
		if end == to {
			break
		}
		cur = end + 1
	}
	return headers, nil
}

// stageLogs decodes logs, fetches the timestamps of their blocks not known yet (one
// batch) and stages the transfers. A log whose block hash is not the block's hash the
// node gave (the chain moved between the two calls) is an error: nothing of the range
// is kept and the caller retries it.
func stageLogs(ctx context.Context, l *Loader, c *Client, logs []Log, headers map[uint64]Header) error {
	trs := make([]Transfer, 0, len(logs))
	hashes := make([]string, 0, len(logs))
	need := map[uint64]bool{}
	for _, lg := range logs {
		l.Sum.Read++
		tr, skip, err := DecodeLog(lg)
		if err != nil {
			return fmt.Errorf("log %s/%s: %w", lg.TransactionHash, lg.LogIndex, err)
		}
		if skip != "" {
			l.Sum.Skip(skip)
			continue
		}
		trs = append(trs, tr)
		hashes = append(hashes, lg.BlockHash)
		if _, ok := headers[tr.Block]; ok {
			continue
		}
		if ts, err := hexUint(lg.BlockTimestamp); err == nil && lg.BlockHash != "" && !need[tr.Block] {
			// The log carries its block's time: no header call. Its hash still anchors
			// the follower's reorg check, and the other logs of the block must agree.
			h, _ := TxHash(lg.BlockHash)
			headers[tr.Block] = Header{Number: tr.Block, Hash: h, Time: int64(ts)}
			l.SetBlockTime(tr.Block, int64(ts))
			continue
		}
		need[tr.Block] = true
	}
	if len(need) > 0 {
		blocks := make([]uint64, 0, len(need))
		for b := range need {
			blocks = append(blocks, b)
		}
		sort.Slice(blocks, func(i, j int) bool { return blocks[i] < blocks[j] })
		hs, err := c.Headers(ctx, blocks)
		if err != nil {
			return err
		}
		for b, h := range hs {
			headers[b] = h
			l.SetBlockTime(b, h.Time)
		}
	}
	for i, tr := range trs {
		if h := headers[tr.Block]; hashes[i] != "" && !equalFoldHex(hashes[i], h.Hash) {
			return fmt.Errorf("block %d: log block hash %s is not the node's block hash %s (the chain reorganised while reading)", tr.Block, hashes[i], h.Hash)
		}
		if err := l.Transfer(ctx, tr); err != nil {
			return err
		}
	}
	return nil
}

func equalFoldHex(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'F' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'F' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
