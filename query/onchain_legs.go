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

var onchainLabelsAtSQL = sqlfiles.MustRead("onchain/labels_at.sql")

// OnchainLegsBuildTimeout bounds one hourly on-chain board build and one first
// publication of the legs that a request has to wait for.
var OnchainLegsBuildTimeout = 5 * time.Minute

// errIndexUnfit reports data a Go index cannot hold exactly (ids out of range, sums
// beyond int64); the route then answers from its SQL.
var errIndexUnfit = errors.New("data unfit for the Go index (id range or int64 sums)")

// legsState is the per-store state of the on-chain derived state: the signature of the
// files the label cascade and the boards were built from, and the freshness of the
// published legs (onchain_legs and onchain_legs_by_token, tables of the lake).
type legsState struct {
	sig    atomic.Pointer[string]
	labels atomic.Pointer[labelIndex]           // the cascade's spans of onchain_label_spans, in Go
	syms   atomic.Pointer[map[[2]string]string] // side tables: (chain, token) -> symbol
	bal    atomic.Pointer[ocBalIndex]           // side tables: the Go balances index
	mu     sync.Mutex

	checked    atomic.Int64 // unix ns of the last check that the legs were current
	verified   atomic.Int64 // unix ns of the last check that sig was still the files' (serveStale: of the last check)
	publishing atomic.Bool  // a background publication runs
	checking   atomic.Bool  // a background check of the legs runs (serveStale)
	verifying  atomic.Bool  // a background check of sig runs (serveStale)
	macro      atomic.Bool  // the wallet_legs macro is defined
}

type legsKey struct{}

// legsCheckEvery throttles the freshness check of the published legs (a stat of every
// transfers partition) on the request path.
const legsCheckEvery = time.Second

// onchainLegs makes sure the published legs reflect the lake's transfer files and the
// label cascade its label files. The legs are tables of the lake, published
// incrementally (PublishOnchainLegs): a store that finds them behind the transfers
// publishes the missing partitions, in the background when it serves stale data
// (Options.ServeStale: a server answers from the last published legs meanwhile) and
// before answering otherwise (the offline CLI, or a lake with no legs published yet).
func (q *Queries) onchainLegs(ctx context.Context) error {
	st, err := q.onchainLegsOnly(ctx)
	if err != nil {
		return err
	}
	return st.ensure(ctx, q, "onchain labels", []*lake.Table{lake.OnchainLegs, lake.OnchainLabels, lake.OnchainLabelSources},
		func(bctx context.Context) error {
			// The cascade's spans are a table of the lake (onchain_label_spans), written
			// again only when the label files changed; a fresh process reads them.
			if _, err := q.publishLabelSpans(bctx); err != nil {
				return err
			}
			// Views are made again only when the file appeared or went (a rewritten
			// file is read through the same view), not at every publication.
			stale, err := q.viewsStale([]*lake.Table{lake.OnchainLabelSpans})
			if err == nil && stale {
				err = q.Reload(bctx)
			}
			if err != nil {
				return wrap(bctx, "onchain labels", err)
			}
			// A catalog statement, under q.ddl as every other (defineMacros).
			q.ddl.Lock()
			err = q.execDDL(bctx, onchainLabelsAtSQL)
			q.ddl.Unlock()
			if err != nil {
				return wrap(bctx, "onchain labels", err)
			}
			labels, err := q.readLabels(bctx)
			if err != nil {
				return err
			}
			st.labels.Store(&labels)
			return nil
		})
}

// onchainLegsOnly is onchainLegs without the label cascade, for the routes that show no
// label (the wallet summary, transactions and pnl): building the cascade (the label
// rows' spans, then read into a Go index) is 0.2 s of a fresh `mdq query` process at
// medium and 1.2 to 1.5 s at large, which those routes paid for nothing.
func (q *Queries) onchainLegsOnly(ctx context.Context) (*legsState, error) {
	v, _ := q.ext.LoadOrStore(legsKey{}, &legsState{})
	st := v.(*legsState)
	if err := q.ensureLegsPublished(ctx, st); err != nil {
		return nil, err
	}
	return st, q.ensureWalletLegsMacro(ctx, st)
}

func (q *Queries) ensureLegsPublished(ctx context.Context, st *legsState) error {
	last := st.checked.Load()
	if time.Now().UnixNano()-last < int64(legsCheckEvery) {
		return nil
	}
	if q.serveStale && last != 0 {
		// A server answers from the legs it last found current while the check runs
		// aside: the check stats every transfers partition and reads three sidecars
		// (13 to 15 ms on the large lake), and the request that came first after each
		// second paid it, which was the per-wallet routes' p99.
		q.aside(&st.checking, &st.checked, "onchain legs check", func(life context.Context) error {
			return q.checkLegsPublished(life, st)
		})
		return nil
	}
	return q.checkLegsPublished(ctx, st)
}

// checkLegsPublished is ensureLegsPublished's check, run when it is due.
func (q *Queries) checkLegsPublished(ctx context.Context, st *legsState) error {
	const op = "onchain legs"
	if q.legsCheck != nil {
		q.legsCheck()
	}
	cur, err := q.onchainLegsCurrent()
	if err != nil {
		return &StoreError{Op: op, Err: err}
	}
	if cur {
		for _, t := range []*lake.Table{lake.OnchainLegs, lake.OnchainLegsByToken, lake.OnchainWalletLegs, lake.OnchainWalletDays, lake.OnchainWalletEdges, lake.OnchainWalletBands} {
			if err := q.ensureView(ctx, t); err != nil {
				return wrap(ctx, op, err)
			}
		}
		st.checked.Store(time.Now().UnixNano())
		return nil
	}
	have, err := lake.OnchainLegs.Files(q.dir)
	if err != nil {
		return &StoreError{Op: op, Err: err}
	}
	if len(have) > 0 && q.serveStale {
		if st.publishing.CompareAndSwap(false, true) {
			q.background(func(life context.Context) {
				defer st.publishing.Store(false)
				if _, err := q.PublishOnchainLegs(life); err != nil && life.Err() == nil {
					q.log.Error("onchain legs publication", "err", err)
				}
			})
		}
		return nil
	}
	bctx, cancel := context.WithTimeout(q.detach(ctx), OnchainLegsBuildTimeout)
	defer cancel()
	if _, err := q.PublishOnchainLegs(bctx); err != nil {
		return err
	}
	st.checked.Store(time.Now().UnixNano())
	return nil
}

// ensure runs build when the files of tables differ from those the in-memory tables
// were last built from (or on first use). Requests arriving during a build wait for
// it; the build outlives the request's own deadline, since it serves every later one.
//
// The signature is a stat of every file of tables (hundreds on a large lake: 15% of a
// cached board route's CPU when taken per request), so it is taken at most once per
// legsCheckEvery, like the legs' own freshness check: a replaced file is seen within a
// second (with ServeStale, a second plus the check and the build, which then run aside
// while requests are answered from the previous build).
func (st *legsState) ensure(ctx context.Context, q *Queries, op string, tables []*lake.Table, build func(context.Context) error) error {
	if st.sig.Load() != nil {
		if time.Now().UnixNano()-st.verified.Load() < int64(legsCheckEvery) {
			return nil
		}
		if q.serveStale {
			// A server answers from what it built last while the signature is taken (and
			// a changed file rebuilt) aside, as ensureLegsPublished does.
			q.aside(&st.verifying, &st.verified, op, func(life context.Context) error {
				return st.verify(life, q, op, tables, build)
			})
			return nil
		}
	}
	return st.verify(ctx, q, op, tables, build)
}

// verify is ensure's check of the files' signature, and the build when it changed.
func (st *legsState) verify(ctx context.Context, q *Queries, op string, tables []*lake.Table, build func(context.Context) error) error {
	sig, err := filesSignature(q.dir, tables...)
	if err != nil {
		return &StoreError{Op: op, Err: err}
	}
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		st.verified.Store(time.Now().UnixNano())
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		return nil
	}
	bctx, cancel := context.WithTimeout(q.detach(ctx), OnchainLegsBuildTimeout)
	defer cancel()
	// A view made before its table had files (or while it had some) must be made again
	// once that changed. On the first build only this build's tables are checked: a
	// whole reload globs and binds every table of the lake, about 170 ms at medium,
	// which a fresh `mdq query` process paid twice after Open's own. A rebuild (a file
	// changed) reloads every view, as a replaced file may have changed what binds.
	reload := st.sig.Load() != nil
	if !reload {
		stale, err := q.viewsStale(tables)
		if err != nil {
			return &StoreError{Op: op, Err: err}
		}
		reload = stale
	}
	if reload {
		if err := q.Reload(bctx); err != nil {
			return wrap(bctx, op, err)
		}
	}
	if err := build(bctx); err != nil {
		return err
	}
	st.sig.Store(&sig)
	st.verified.Store(time.Now().UnixNano())
	return nil
}

// labelSpan is one span of the cascade: the label an address resolved to from from
// (inclusive) until until (exclusive), both in epoch microseconds.
type labelSpan struct {
	from, until int64
	label       Label
}

// labelIndex holds every address's cascade spans in time order (most addresses have
// one), so a lookup resolves the label as it stood at any clock.
type labelIndex map[string][]labelSpan

// at returns a's label as the cascade stood at t: only rows observed at or before t
// count.
func (x labelIndex) at(a string, t time.Time) (Label, bool) {
	us := t.UnixMicro()
	for _, s := range x[a] {
		if s.from <= us && us < s.until {
			return s.label, true
		}
	}
	return Label{}, false
}

// readLabels reads every span of the published cascade (onchain_label_spans) into an
// index. The label's texts repeat across addresses (a few wallet types, confidences,
// risk flags and sources; an entity for many of its addresses), so each distinct text
// is kept once.
func (q *Queries) readLabels(ctx context.Context) (labelIndex, error) {
	rows, err := q.db.QueryContext(ctx, onchainLabelsSQL)
	if err != nil {
		return nil, wrap(ctx, "onchain labels", err)
	}
	defer rows.Close()
	out := labelIndex{}
	texts := map[string]string{}
	intern := func(p *string) {
		if v, ok := texts[*p]; ok {
			*p = v
		} else {
			texts[*p] = *p
		}
	}
	for rows.Next() {
		var a string
		var s labelSpan
		l := &s.label
		if err := rows.Scan(&a, &l.Entity, &l.WalletType, &l.Confidence, &l.RiskFlag, &l.Source, &s.from, &s.until); err != nil {
			return nil, wrap(ctx, "onchain labels", err)
		}
		for _, p := range []*string{&l.Entity, &l.WalletType, &l.Confidence, &l.RiskFlag, &l.Source} {
			intern(p)
		}
		out[a] = append(out[a], s)
	}
	return out, wrap(ctx, "onchain labels", rows.Err())
}

// filesSignature summarises the files of tables in the lake: every file's path in the
// lake, size and modification time. It is checked on every on-chain request, so it avoids
// lake.Table.Files' glob: that opens and lists every partition directory (one per chain
// and day, about 140 on the medium lake) only to match a file name without wildcards;
// here the partition directories are globbed and the file is stat'ed in each, which
// finds the same files with one system call per partition instead of four.
func filesSignature(dir string, tables ...*lake.Table) (string, error) {
	var b strings.Builder
	// Paths relative to the lake: the hourly boards keep a hash of the signature in the
	// lake, so the lake moved or named through another path must give the same one.
	prefix := filepath.Join(dir, "x")
	prefix = prefix[:len(prefix)-1]
	for _, t := range tables {
		files, infos, err := tableFiles(dir, t)
		if err != nil {
			return "", err
		}
		for i, f := range files {
			fmt.Fprintf(&b, "%s|%d|%d;", strings.TrimPrefix(f, prefix), infos[i].Size(), infos[i].ModTime().UnixNano())
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

// legsLabels is the cascade index of the last legs build, for a request that has just
// called onchainLegs: OnchainLabels would check the files' signature a second time
// (a glob over every transfer partition, about 2 ms on the medium lake). Look labels up
// at the request's clock (labelIndex.at).
func (q *Queries) legsLabels() labelIndex {
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

// aside runs check in the background unless one flagged by running already runs, and
// then sets stamp to the time it ended, also when it failed or started a publication:
// the next check, a second later, tries again or sees the publication's end (not every
// request meanwhile). Its error is logged.
func (q *Queries) aside(running *atomic.Bool, stamp *atomic.Int64, op string, check func(context.Context) error) {
	if !running.CompareAndSwap(false, true) {
		return
	}
	q.background(func(life context.Context) {
		defer running.Store(false)
		err := check(life)
		stamp.Store(time.Now().UnixNano())
		if err != nil && life.Err() == nil {
			q.log.Error(op, "err", err)
		}
	})
}
