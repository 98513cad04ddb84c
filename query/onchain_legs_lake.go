package query

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainLegsPublishSQL     = sqlfiles.MustRead("onchain/legs_publish.sql")
	onchainLegsByTokPublishSQ = sqlfiles.MustRead("onchain/legs_by_token_publish.sql")
)

// legsSources is the sidecar of the published legs: for each (chain, date) partition,
// the signature (size and modification time) of the onchain_transfers file it was
// computed from. A partition whose source signature differs (a new day, a late day, a
// corrected file) is recomputed; one whose source is gone is removed; the rest are
// left alone, so publishing one more day costs that day.
const legsSourcesFile = "onchain/legs/_sources.json"

var legsLocks sync.Map // lake dir -> *sync.Mutex: one publication at a time per lake in a process

// LegsPublication is what one publication did.
type LegsPublication struct {
	Partitions int                       // (chain, date) partitions of the source
	Written    []string                  // partitions recomputed ("chain=X/date=D")
	Removed    []string                  // partitions whose source disappeared
	Wallet     WalletSegmentsPublication // what the wallet-clustered copy did
	Took       time.Duration             // wall time
}

// PublishOnchainLegs brings onchain_legs and onchain_legs_by_token up to date with the
// lake's transfer files, recomputing only the partitions whose source changed, then
// onchain_wallet_legs with them (publishWalletLegs). Each
// file is written atomically (temp, fsync, rename) and the sidecar is updated after
// each partition, so a cancelled publication leaves every file either as it was or
// complete, and the next publication carries on where it stopped.
func (q *Queries) PublishOnchainLegs(ctx context.Context) (LegsPublication, error) {
	const op = "onchain legs publication"
	start := time.Now()
	mu, _ := legsLocks.LoadOrStore(q.dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	src, err := transferPartitions(q.dir)
	if err != nil {
		return LegsPublication{}, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[string](filepath.Join(q.dir, filepath.FromSlash(legsSourcesFile)))
	if err != nil {
		return LegsPublication{}, &StoreError{Op: op, Err: err}
	}
	pub := LegsPublication{Partitions: len(src)}
	var todo []string
	for part, sig := range src {
		if done[part] != sig {
			todo = append(todo, part)
		}
	}
	sort.Strings(todo)
	var gone []string
	for part := range done {
		if _, ok := src[part]; !ok {
			gone = append(gone, part)
		}
	}
	sort.Strings(gone)
	if len(todo) == 0 && len(gone) == 0 {
		side, err := readWalletLegsSide(q.dir)
		if err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		edges, err := walletEdgesCurrent(q.dir, side, q.Now())
		if err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		if walletLegsCurrent(src, side) && edges {
			pub.Wallet = WalletSegmentsPublication{History: side.History, Recent: side.Recent}
			pub.Took = time.Since(start)
			return pub, nil
		}
	}
	// The views must see the transfers partitions that appeared since Open, and the
	// legs view must exist to read a just-written partition back.
	if err := q.Reload(ctx); err != nil {
		return pub, wrap(ctx, op, err)
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return pub, wrap(ctx, op, err)
	}
	defer conn.Close()
	for _, part := range gone {
		for _, t := range []*lake.Table{lake.OnchainLegs, lake.OnchainLegsByToken} {
			if err := removePartition(q.dir, t, part); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
		}
		delete(done, part)
		if err := writeSidecar(filepath.Join(q.dir, filepath.FromSlash(legsSourcesFile)), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Removed = append(pub.Removed, part)
	}
	// debug logs each step's wall and CPU time (mdq rebuild --log-level debug).
	step := q.warmSteps("onchain legs publication")
	for i, part := range todo {
		chain, date := splitPart(part)
		n, err := lake.CopyQuery(ctx, conn, q.dir, lake.OnchainLegs, []string{chain, date}, onchainLegsPublishSQL, chain, date)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		if n == 0 { // an empty source day: no legs
			for _, t := range []*lake.Table{lake.OnchainLegs, lake.OnchainLegsByToken} {
				if err := removePartition(q.dir, t, part); err != nil {
					return pub, &StoreError{Op: op, Err: err}
				}
			}
		} else {
			if i == 0 {
				// The first legs file of a lake needs its view before it can be read back.
				if err := q.Reload(ctx); err != nil {
					return pub, wrap(ctx, op, err)
				}
			}
			if _, err := lake.CopyQuery(ctx, conn, q.dir, lake.OnchainLegsByToken, []string{chain, date}, onchainLegsByTokPublishSQ, chain, date); err != nil {
				return pub, wrap(ctx, op, err)
			}
		}
		done[part] = src[part]
		if err := writeSidecar(filepath.Join(q.dir, filepath.FromSlash(legsSourcesFile)), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, part)
	}
	if err := q.Reload(ctx); err != nil { // the by-token view's first files
		return pub, wrap(ctx, op, err)
	}
	step(fmt.Sprintf("%d legs partitions", len(todo)))
	if pub.Wallet, err = q.publishWalletLegs(ctx, conn, src); err != nil {
		return pub, wrap(ctx, op, err)
	}
	pub.Took = time.Since(start)
	return pub, nil
}

// onchainLegsCurrent reports whether every transfers partition has its legs published.
func (q *Queries) onchainLegsCurrent() (bool, error) {
	src, err := transferPartitions(q.dir)
	if err != nil {
		return false, err
	}
	done, err := readSidecar[string](filepath.Join(q.dir, filepath.FromSlash(legsSourcesFile)))
	if err != nil {
		return false, err
	}
	if !maps.Equal(src, done) {
		return false, nil
	}
	side, err := readWalletLegsSide(q.dir)
	if err != nil {
		return false, err
	}
	if !walletLegsCurrent(src, side) {
		return false, nil
	}
	return walletEdgesCurrent(q.dir, side, q.Now())
}

// transferPartitions maps each onchain_transfers partition ("chain=X/date=D") to its
// file's signature. It runs at every freshness check of a serving store (once a second
// with on-chain traffic), so it lists the files as filesSignature does (tableFiles: one
// stat per partition directory rather than a glob that lists each one): 2 ms instead of
// 8 at large, taken on a core the requests share.
func transferPartitions(dir string) (map[string]string, error) {
	files, infos, err := tableFiles(dir, lake.OnchainTransfers)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(files))
	base := filepath.Join(dir, filepath.FromSlash(lake.OnchainTransfers.Prefix))
	for i, f := range files {
		rel, err := filepath.Rel(base, filepath.Dir(f))
		if err != nil {
			return nil, err
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%d:%d", infos[i].Size(), infos[i].ModTime().UnixNano())
	}
	return out, nil
}

func splitPart(part string) (chain, date string) {
	c, d, _ := strings.Cut(part, "/")
	return strings.TrimPrefix(c, "chain="), strings.TrimPrefix(d, "date=")
}

func removePartition(dir string, t *lake.Table, part string) error {
	chain, date := splitPart(part)
	return removePartitionFile(dir, t, chain, date)
}
