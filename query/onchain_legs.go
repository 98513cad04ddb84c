package query

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainLegsBuildSQL   = sqlfiles.MustRead("onchain/legs_build.sql")
	onchainLabelsBuildSQL = sqlfiles.MustRead("onchain/labels_build.sql")
	onchainLegsTokSQL     = sqlfiles.MustRead("onchain/legs_tok_build.sql")
	onchainLegsChainSQL   = sqlfiles.MustRead("onchain/legs_build_chain.sql")
	onchainLegsTokChain   = sqlfiles.MustRead("onchain/legs_tok_build_chain.sql")
	onchainLegsChainsSQL  = sqlfiles.MustRead("onchain/legs_chains.sql")
	onchainLegsSwapSQL    = sqlfiles.MustRead("onchain/legs_swap.sql")
	onchainLegsTokSwapSQL = sqlfiles.MustRead("onchain/legs_tok_swap.sql")
)

// OnchainLegsBuildTimeout bounds the one-off build of the in-memory legs table (about
// 15 s on the medium demo lake on two cores).
var OnchainLegsBuildTimeout = 5 * time.Minute

// legsState is the per-store state of the in-memory tables: the signature of the
// files they were built from.
type legsState struct {
	sig    atomic.Pointer[string]
	labels atomic.Pointer[map[string]Label]     // the cascade of onchain_labels_mem, in Go
	index  atomic.Pointer[ocIndex]              // the Go per-wallet index of the legs
	syms   atomic.Pointer[map[[2]string]string] // side tables: (chain, token) -> symbol
	bal    atomic.Pointer[ocBalIndex]           // side tables: the Go balances index
	mu     sync.Mutex
}

type legsKey struct{}

// onchainLegs makes sure onchain_legs_mem, its token-ordered copy onchain_legs_tok_mem
// and onchain_labels_mem reflect the lake's
// current transfers and label files
// (names, sizes and modification times), building it on first use and rebuilding it
// when a file was added, replaced or removed. Requests arriving during a build wait.
func (q *Queries) onchainLegs(ctx context.Context) error {
	v, _ := q.ext.LoadOrStore(legsKey{}, &legsState{})
	st := v.(*legsState)
	return st.ensure(ctx, q, "onchain legs", []*lake.Table{lake.OnchainTransfers, lake.OnchainLabels, lake.OnchainLabelSources},
		func(bctx context.Context) error {
			if err := q.buildLegs(bctx); err != nil {
				return err
			}
			if _, err := q.db.ExecContext(bctx, onchainLabelsBuildSQL); err != nil {
				return wrap(bctx, "onchain legs", err)
			}
			labels, err := q.readLabels(bctx)
			if err != nil {
				return err
			}
			idx, err := q.buildWalletIndex(bctx)
			if errors.Is(err, errIndexUnfit) {
				// Not a store failure: the routes answer from their SQL instead.
				q.log.Warn("onchain wallet index not built; per-wallet routes use SQL", "err", err)
				idx, err = nil, nil
			}
			if err != nil {
				return err
			}
			st.labels.Store(&labels)
			st.index.Store(idx)
			return nil
		})
}

// buildLegs builds onchain_legs_mem and onchain_legs_tok_mem one chain at a time (each
// chain's legs sorted apart, in chain order, so the tables are in the same order as
// one sort of every chain would give): the sort of one chain is about a third of the
// peak memory of sorting all of them at once.
func (q *Queries) buildLegs(ctx context.Context) error {
	rows, err := q.db.QueryContext(ctx, onchainLegsChainsSQL)
	if err != nil {
		return wrap(ctx, "onchain legs", err)
	}
	var chains []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return wrap(ctx, "onchain legs", err)
		}
		chains = append(chains, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap(ctx, "onchain legs", err)
	}
	for _, step := range []struct{ create, insert, swap string }{
		{onchainLegsBuildSQL, onchainLegsChainSQL, onchainLegsSwapSQL},
		{onchainLegsTokSQL, onchainLegsTokChain, onchainLegsTokSwapSQL},
	} {
		if _, err := q.db.ExecContext(ctx, step.create); err != nil {
			return wrap(ctx, "onchain legs", err)
		}
		for _, c := range chains {
			if _, err := q.db.ExecContext(ctx, step.insert, c); err != nil {
				return wrap(ctx, "onchain legs", err)
			}
		}
		if err := q.swapTable(ctx, step.swap); err != nil {
			return err
		}
	}
	return nil
}

// swapTable runs a swap file (a DROP and a RENAME) in one transaction.
func (q *Queries) swapTable(ctx context.Context, swap string) error {
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(ctx, "onchain legs", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, swap); err != nil {
		return wrap(ctx, "onchain legs", err)
	}
	return wrap(ctx, "onchain legs", tx.Commit())
}

// ensure runs build when the files of tables differ from those the in-memory tables
// were last built from (or on first use). Requests arriving during a build wait for
// it; the build outlives the request's own deadline, since it serves every later one.
func (st *legsState) ensure(ctx context.Context, q *Queries, op string, tables []*lake.Table, build func(context.Context) error) error {
	sig, err := filesSignature(q.dir, tables...)
	if err != nil {
		return &StoreError{Op: op, Err: err}
	}
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		return nil
	}
	bctx, cancel := context.WithTimeout(q.detach(ctx), OnchainLegsBuildTimeout)
	defer cancel()
	if err := q.Reload(bctx); err != nil { // a table whose first files appeared since Open
		return wrap(bctx, op, err)
	}
	if err := build(bctx); err != nil {
		return err
	}
	st.sig.Store(&sig)
	return nil
}

// readLabels reads the whole in-memory cascade (one row per labelled address) into a map.
func (q *Queries) readLabels(ctx context.Context) (map[string]Label, error) {
	rows, err := q.db.QueryContext(ctx, onchainLabelsSQL)
	if err != nil {
		return nil, wrap(ctx, "onchain labels", err)
	}
	defer rows.Close()
	out := map[string]Label{}
	for rows.Next() {
		var a string
		var l Label
		if err := rows.Scan(&a, &l.Entity, &l.WalletType, &l.Confidence, &l.RiskFlag, &l.Source); err != nil {
			return nil, wrap(ctx, "onchain labels", err)
		}
		out[a] = l
	}
	return out, wrap(ctx, "onchain labels", rows.Err())
}

// filesSignature summarises the files of tables in the lake: every file's name, size
// and modification time. It is checked on every on-chain request, so it avoids
// lake.Table.Files' glob: that opens and lists every partition directory (one per chain
// and day, about 140 on the medium lake) only to match a file name without wildcards;
// here the partition directories are globbed and the file is stat'ed in each, which
// finds the same files with one system call per partition instead of four.
func filesSignature(dir string, tables ...*lake.Table) (string, error) {
	var b strings.Builder
	for _, t := range tables {
		files, infos, err := tableFiles(dir, t)
		if err != nil {
			return "", err
		}
		for i, f := range files {
			fmt.Fprintf(&b, "%s|%d|%d;", f, infos[i].Size(), infos[i].ModTime().UnixNano())
		}
	}
	return b.String(), nil
}

// tableFiles lists t's files under dir, sorted, with their os.Stat.
func tableFiles(dir string, t *lake.Table) ([]string, []os.FileInfo, error) {
	pattern := filepath.Join(dir, filepath.FromSlash(t.Glob()))
	pdir, name := filepath.Split(pattern)
	var files []string
	if strings.ContainsAny(name, `*?[\`) {
		f, err := t.Files(dir)
		if err != nil {
			return nil, nil, err
		}
		files = f
	} else {
		dirs, err := filepath.Glob(filepath.Clean(pdir))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range dirs {
			files = append(files, filepath.Join(d, name))
		}
		sort.Strings(files)
	}
	kept := files[:0]
	var infos []os.FileInfo
	for _, f := range files {
		fi, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue // a partition directory without the table's file, or a stray file (as the glob does)
		}
		if err != nil {
			return nil, nil, err
		}
		kept = append(kept, f)
		infos = append(infos, fi)
	}
	return kept, infos, nil
}

// legsLabels is the cascade map of the last legs build, for a request that has just
// called onchainLegs: OnchainLabels would check the files' signature a second time
// (a glob over every transfer partition, about 2 ms on the medium lake).
func (q *Queries) legsLabels() map[string]Label {
	v, ok := q.ext.Load(legsKey{})
	if !ok {
		return nil
	}
	m := v.(*legsState).labels.Load()
	if m == nil {
		return nil
	}
	return *m
}
