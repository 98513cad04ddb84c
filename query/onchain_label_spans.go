package query

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var labelSpansPublishSQL = sqlfiles.MustRead("onchain/label_spans_publish.sql")

// labelSpansLayout names the query in the sidecar of onchain_label_spans, beside the
// label files' signature: a changed query writes the file again.
var labelSpansLayout = func() string {
	h := sha256.Sum256([]byte(labelSpansPublishSQL))
	return hex.EncodeToString(h[:6])
}()

func labelSpansSidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(lake.OnchainLabelSpans.Prefix), "_sources.json")
}

// publishLabelSpans writes onchain_label_spans again whole when the label files (or
// the query) changed since it was last written, and reports whether it did. The cascade is a
// window over every label row (131,394 at large, 0.3 to 0.6 s), cheap enough to
// recompute whole, and any label row may change any span of its address. The file is
// written atomically and the sidecar after it, so a cancelled publication leaves the
// previous one and is done again next time; without a label row there is no file.
func (q *Queries) publishLabelSpans(ctx context.Context) (bool, error) {
	const op = "onchain label spans publication"
	sig, err := filesSignature(q.dir, lake.OnchainLabels, lake.OnchainLabelSources)
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	sig = labelSpansLayout + "|" + sig
	side := labelSpansSidecar(q.dir)
	done, err := readSidecar[string](side)
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	rel, err := lake.OnchainLabelSpans.Path()
	if err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	file := filepath.Join(q.dir, filepath.FromSlash(rel))
	if done["sources"] == sig && (fileExists(file) || done["rows"] == "0") {
		return false, nil
	}
	// The label tables' views are current: the caller's build (legsState.verify)
	// checked or reloaded them, as they are among its tables.
	n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.OnchainLabelSpans, nil, labelSpansPublishSQL)
	if err != nil {
		return false, wrap(ctx, op, err)
	}
	rows := "some"
	if n == 0 {
		// No label row: the copy kept any old file, which no longer holds.
		if err := removePartitionFile(q.dir, lake.OnchainLabelSpans); err != nil {
			return false, &StoreError{Op: op, Err: err}
		}
		rows = "0"
	}
	if err := writeSidecar(side, map[string]string{"sources": sig, "rows": rows}); err != nil {
		return false, &StoreError{Op: op, Err: err}
	}
	return true, nil
}
