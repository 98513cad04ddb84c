package query

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainLegsBuildSQL   = sqlfiles.MustRead("onchain/legs_build.sql")
	onchainLabelsBuildSQL = sqlfiles.MustRead("onchain/labels_build.sql")
)

// OnchainLegsBuildTimeout bounds the one-off build of the in-memory legs table (about
// 15 s on the medium demo lake on two cores).
var OnchainLegsBuildTimeout = 5 * time.Minute

// legsState is the per-store state of the in-memory tables: the signature of the
// files they were built from.
type legsState struct {
	sig atomic.Pointer[string]
	mu  sync.Mutex
}

type legsKey struct{}

// onchainLegs makes sure onchain_legs_mem and onchain_labels_mem reflect the lake's
// current transfers and label files
// (names, sizes and modification times), building it on first use and rebuilding it
// when a file was added, replaced or removed. Requests arriving during a build wait.
func (q *Queries) onchainLegs(ctx context.Context) error {
	v, _ := q.ext.LoadOrStore(legsKey{}, &legsState{})
	st := v.(*legsState)
	sig, err := transfersSignature(q.dir)
	if err != nil {
		return &StoreError{Op: "onchain legs", Err: err}
	}
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if cur := st.sig.Load(); cur != nil && *cur == sig {
		return nil
	}
	// The build outlives the request's own deadline: it serves every later request.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OnchainLegsBuildTimeout)
	defer cancel()
	if err := q.Reload(bctx); err != nil { // a table whose first files appeared since Open
		return wrap(bctx, "onchain legs", err)
	}
	for _, text := range []string{onchainLegsBuildSQL, onchainLabelsBuildSQL} {
		if _, err := q.db.ExecContext(bctx, text); err != nil {
			return wrap(bctx, "onchain legs", err)
		}
	}
	st.sig.Store(&sig)
	return nil
}

// transfersSignature summarises the transfers and label files of the lake.
func transfersSignature(dir string) (string, error) {
	var files []string
	for _, t := range []*lake.Table{lake.OnchainTransfers, lake.OnchainLabels, lake.OnchainLabelSources} {
		f, err := t.Files(dir)
		if err != nil {
			return "", err
		}
		files = append(files, f...)
	}
	var b strings.Builder
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s|%d|%d;", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), nil
}
