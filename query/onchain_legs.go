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
)

// OnchainLegsBuildTimeout bounds the one-off build of the in-memory legs table (about
// 15 s on the medium demo lake on two cores).
var OnchainLegsBuildTimeout = 5 * time.Minute

// legsState is the per-store state of the in-memory tables: the signature of the
// files they were built from.
type legsState struct {
	sig    atomic.Pointer[string]
	labels atomic.Pointer[map[string]Label] // the cascade of onchain_labels_mem, in Go
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
			for _, text := range []string{onchainLegsBuildSQL, onchainLegsTokSQL, onchainLabelsBuildSQL} {
				if _, err := q.db.ExecContext(bctx, text); err != nil {
					return wrap(bctx, "onchain legs", err)
				}
			}
			labels, err := q.readLabels(bctx)
			if err != nil {
				return err
			}
			st.labels.Store(&labels)
			return nil
		})
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
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OnchainLegsBuildTimeout)
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
