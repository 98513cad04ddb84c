package onchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"mdq/internal/duckconn"
	"mdq/lake"
)

// Checkpoint is the follower's state, kept in the lake (.ingest/onchain-<chain>.json):
// the first block not yet written and the hashes of recently written blocks, which
// detect a reorganisation below the confirmation depth.
type Checkpoint struct {
	Chain  string            `json:"chain"`
	Next   uint64            `json:"next_block"`
	Hashes map[string]string `json:"hashes"` // block number → hash
}

// CheckpointPath is where the follower of chain keeps its checkpoint.
func CheckpointPath(root, chain string) string {
	return filepath.Join(root, ".ingest", "onchain-"+chain+".json")
}

// ReadCheckpoint returns the stored checkpoint (nil when there is none).
func ReadCheckpoint(root, chain string) (*Checkpoint, error) {
	b, err := os.ReadFile(CheckpointPath(root, chain))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("%s: %w", CheckpointPath(root, chain), err)
	}
	if cp.Hashes == nil {
		cp.Hashes = map[string]string{}
	}
	return &cp, nil
}

func writeCheckpoint(root string, cp *Checkpoint) error {
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	return lake.WriteFileAtomic(CheckpointPath(root, cp.Chain), append(b, '\n'))
}

// Follower keeps one chain of the lake at the head of a node, Confirmations blocks
// behind it: only blocks at least that deep are written, so an ordinary
// reorganisation never reaches the lake. Before each range it checks the hash of the
// last block it wrote against the node; when they differ (a reorganisation deeper
// than the confirmations) it finds the newest block both agree on among the hashes
// it remembers, removes every transfer above it and carries on from there, saying so
// in its log.
type Follower struct {
	Root, Chain   string
	Client        *Client
	Confirmations uint64
	// Start is the first block when there is no checkpoint (-1: the current safe head).
	Start int64
	// MaxBlocks bounds one step's range (default 2,000); Keep is how many block hashes
	// the checkpoint remembers (default 256).
	MaxBlocks uint64
	Keep      int
	// Native reads native-coin transfers too (Loader.Native): every block of a range
	// is fetched whole, and its hash is remembered, so the reorg check covers blocks
	// without token transfers as well.
	Native bool
	// Traces reads them from the node's trace API, internal value transfers included
	// (Loader.Traces).
	Traces bool
	Log    io.Writer
	Now    func() time.Time
	// After runs once a step has changed the lake (the archive and derived tables).
	After func(ctx context.Context) error
	// PublishEvery spaces the publication of what the steps wrote (the chain's
	// onchain_balances, which reads every transfer of the chain, then After) while
	// the follower catches up (default 10 minutes; negative: after every step). A
	// step that finds the follower at the confirmed head publishes what is pending;
	// so does a rewind, and Publish.
	PublishEvery time.Duration

	lastPublish time.Time
	dirty       bool
}

// Publish recomputes the chain's balances and runs After if transfers changed since
// the last publication.
func (f *Follower) Publish(ctx context.Context) error {
	if !f.dirty {
		return nil
	}
	if _, err := PublishBalances(ctx, f.Root, f.Chain); err != nil {
		return err
	}
	if f.After != nil {
		if err := f.After(ctx); err != nil {
			return err
		}
	}
	f.dirty, f.lastPublish = false, time.Now()
	return nil
}

func (f *Follower) maybePublish(ctx context.Context, atHead bool) error {
	every := f.PublishEvery
	if every == 0 {
		every = 10 * time.Minute
	}
	if atHead || every < 0 || time.Since(f.lastPublish) >= every {
		return f.Publish(ctx)
	}
	return nil
}

// StepResult is what one step did.
type StepResult struct {
	From, To  uint64 // blocks written (To < From: none)
	Written   int64  // transfers new to the lake
	Rewound   uint64 // blocks removed by a reorganisation (0: none)
	Head      uint64
	CaughtUp  bool
	Transfers int64
}

func (f *Follower) logf(format string, args ...any) {
	if f.Log != nil {
		fmt.Fprintf(f.Log, "%s onchain %s: %s\n", time.Now().UTC().Format(time.RFC3339), f.Chain, fmt.Sprintf(format, args...))
	}
}

// Step writes the next confirmed range, or rewinds after a reorganisation. The
// checkpoint moves only after the range is in the lake.
func (f *Follower) Step(ctx context.Context) (StepResult, error) {
	var res StepResult
	cp, err := ReadCheckpoint(f.Root, f.Chain)
	if err != nil {
		return res, err
	}
	head, err := f.Client.BlockNumber(ctx)
	if err != nil {
		return res, fmt.Errorf("eth_blockNumber: %w", err)
	}
	res.Head = head
	if head < f.Confirmations {
		res.CaughtUp = true
		return res, nil
	}
	safe := head - f.Confirmations
	if cp == nil {
		start := safe
		if f.Start >= 0 {
			start = uint64(f.Start)
		}
		cp = &Checkpoint{Chain: f.Chain, Next: start, Hashes: map[string]string{}}
	}
	if rewound, err := f.checkReorg(ctx, cp); err != nil || rewound > 0 {
		res.Rewound = rewound
		if err == nil {
			f.dirty = true
			err = f.Publish(ctx)
		}
		return res, err
	}
	if cp.Next > safe {
		res.CaughtUp = true
		return res, f.maybePublish(ctx, true)
	}
	maxB := f.MaxBlocks
	if maxB == 0 {
		maxB = 2000
	}
	end := min(safe, cp.Next+maxB-1)
	res.From, res.To = cp.Next, end
	l, err := NewLoader(ctx, f.Root, f.Chain)
	if err != nil {
		return res, err
	}
	defer l.Close()
	l.Meta, l.Native, l.Traces = f.Client.TokenMeta, f.Native, f.Traces
	headers, err := loadRange(ctx, l, f.Client, cp.Next, end, nil)
	if err != nil {
		return res, fmt.Errorf("blocks %d-%d: %w", cp.Next, end, err)
	}
	// The last block's hash anchors the next check (and a block with transfers each).
	// The range's first block must descend from the block written before it: its
	// parent hash is checked against the remembered hash, in the same request, so a
	// reorganisation between the check above and this read fails the step (nothing
	// written) and the next step rewinds.
	want := []uint64{end}
	prev, linked := cp.Hashes[strconv.FormatUint(cp.Next-1, 10)]
	if linked && cp.Next != end {
		want = append(want, cp.Next)
	}
	hs, err := f.Client.Headers(ctx, want)
	if err != nil {
		return res, fmt.Errorf("blocks %d-%d: %w", cp.Next, end, err)
	}
	if first := hs[cp.Next]; linked && first.ParentHash != prev {
		return res, fmt.Errorf("blocks %d-%d: block %d's parent hash %s is not the hash %s written for block %d (the chain reorganised while reading); nothing written, the next step rewinds",
			cp.Next, end, cp.Next, first.ParentHash, prev, cp.Next-1)
	}
	headers[end] = hs[end]
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	if err := l.Commit(ctx, now()); err != nil {
		return res, fmt.Errorf("blocks %d-%d: %w", cp.Next, end, err)
	}
	res.Written, res.Transfers = l.Sum.Written, l.Transfers()
	for b, h := range headers {
		cp.Hashes[strconv.FormatUint(b, 10)] = h.Hash
	}
	f.trim(cp)
	cp.Next = end + 1
	if err := writeCheckpoint(f.Root, cp); err != nil {
		return res, err
	}
	if len(l.Sum.Partitions) > 0 {
		f.dirty = true
	}
	if err := f.maybePublish(ctx, end == safe); err != nil {
		return res, err
	}
	f.logf("blocks %d-%d written (head %d, %d confirmations): %d transfers, %d new", res.From, res.To, head, f.Confirmations, res.Transfers, res.Written)
	return res, nil
}

// trim keeps the Keep newest hashes.
func (f *Follower) trim(cp *Checkpoint) {
	keep := f.Keep
	if keep <= 0 {
		keep = 256
	}
	bs := sortedBlocks(cp)
	for len(bs) > keep {
		delete(cp.Hashes, strconv.FormatUint(bs[0], 10))
		bs = bs[1:]
	}
}

func sortedBlocks(cp *Checkpoint) []uint64 {
	bs := make([]uint64, 0, len(cp.Hashes))
	for k := range cp.Hashes {
		if n, err := strconv.ParseUint(k, 10, 64); err == nil {
			bs = append(bs, n)
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i] < bs[j] })
	return bs
}

// checkReorg compares the newest remembered hash with the node's. On a mismatch it
// finds the newest remembered block the node still has, removes every transfer above
// it from the lake, and moves the checkpoint back to the block after it.
func (f *Follower) checkReorg(ctx context.Context, cp *Checkpoint) (uint64, error) {
	bs := sortedBlocks(cp)
	if len(bs) == 0 {
		return 0, nil
	}
	last := bs[len(bs)-1]
	hs, err := f.Client.Headers(ctx, []uint64{last})
	if err != nil {
		return 0, fmt.Errorf("reorg check at block %d: %w", last, err)
	}
	if hs[last].Hash == cp.Hashes[strconv.FormatUint(last, 10)] {
		return 0, nil
	}
	all, err := f.Client.Headers(ctx, bs)
	if err != nil {
		return 0, fmt.Errorf("reorg search: %w", err)
	}
	var keep uint64
	found := false
	for i := len(bs) - 1; i >= 0; i-- {
		if all[bs[i]].Hash == cp.Hashes[strconv.FormatUint(bs[i], 10)] {
			keep, found = bs[i], true
			break
		}
	}
	if !found {
		return 0, fmt.Errorf("reorganisation deeper than the %d blocks remembered (blocks %d-%d all differ): re-ingest from block %d with mdq ingest onchain --rpc, then restart", len(bs), bs[0], last, bs[0])
	}
	removed, err := RemoveAbove(ctx, f.Root, f.Chain, keep)
	if err != nil {
		return 0, err
	}
	for _, b := range bs {
		if b > keep {
			delete(cp.Hashes, strconv.FormatUint(b, 10))
		}
	}
	old := cp.Next
	cp.Next = keep + 1
	if err := writeCheckpoint(f.Root, cp); err != nil {
		return 0, err
	}
	f.logf("reorganisation: block %d's hash changed; rewound to block %d (blocks %d-%d, %d transfers removed) and will rewrite them", last, keep, keep+1, old-1, removed)
	return old - keep - 1, nil
}

// RemoveAbove removes the chain's transfers above block keep, rewriting each affected
// date partition atomically (removing a partition left empty). It returns the rows
// removed.
func RemoveAbove(ctx context.Context, root, chain string, keep uint64) (int64, error) {
	files, err := filepath.Glob(filepath.Join(root, "onchain", "transfers", "chain="+chain, "date=*", lake.OnchainTransfers.File))
	if err != nil {
		return 0, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(files))) // newest date first
	unlock, err := lockLake(root)
	if err != nil {
		return 0, err
	}
	defer unlock()
	db, err := duckconn.Open("")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var removed int64
	for _, file := range files {
		src := "read_parquet(" + lake.QuoteString(file) + ")"
		var above, total int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE block_number > ?), count(*) FROM "+src, int64(keep)).Scan(&above, &total); err != nil {
			return removed, fmt.Errorf("%s: %w", file, err)
		}
		if above == 0 {
			break // older dates hold older blocks
		}
		if above == total {
			if err := os.Remove(file); err != nil {
				return removed, err
			}
		} else {
			date := filepath.Base(filepath.Dir(file))[len("date="):]
			if _, err := lake.CopyQuery(ctx, conn, root, lake.OnchainTransfers, []string{chain, date},
				"SELECT * FROM "+src+" WHERE block_number <= ?", int64(keep)); err != nil {
				return removed, err
			}
		}
		removed += above
	}
	return removed, nil
}

// Run steps until ctx ends: at once while behind, every interval once caught up,
// with exponential backoff (up to five minutes) after an error, which is logged with
// the checkpoint left where it was.
func (f *Follower) Run(ctx context.Context, every time.Duration) error {
	fails := 0
	for {
		res, err := f.Step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := time.Duration(0)
		switch {
		case err != nil:
			fails++
			wait = min(every<<min(fails, 10), 5*time.Minute)
			f.logf("error (retry in %s): %v", wait, err)
		case res.CaughtUp:
			fails = 0
			wait = every
		default:
			fails = 0
		}
		if wait > 0 {
			if err := sleep(ctx, wait); err != nil {
				return nil
			}
		}
	}
}
