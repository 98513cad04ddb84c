package query_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestLabelsFirstBuildFollowsItsTablesFiles: the label cascade's first build checks its
// own tables' views instead of reloading every view of the lake, and still sees what
// changed between Open and the first use: a labels file that appeared since is read
// (its view, made without files, is made again), and one removed since leaves no label
// rather than an error reading a file that is gone.
func TestLabelsFirstBuildFollowsItsTablesFiles(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		atOpen    bool // the labels file is there when the store opens
		wantLabel bool
	}{
		{"appeared after open", false, true},
		{"removed after open", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testlake.Copy(t)
			// The legs published first, so that the first use finds them current and
			// reloads nothing itself (a publication remakes every view).
			q0 := openStore(t, dir)
			if _, err := q0.PublishOnchainLegs(ctx); err != nil {
				t.Fatal(err)
			}
			q0.Close()
			f := filepath.Join(dir, "onchain", "labels", "labels.parquet")
			addr := labelledAddress(t, f)
			aside := filepath.Join(t.TempDir(), "labels.parquet")
			if !tc.atOpen {
				if err := os.Rename(f, aside); err != nil {
					t.Fatal(err)
				}
			}
			q := openStore(t, dir)
			var err error
			if tc.atOpen {
				err = os.Rename(f, aside)
			} else {
				err = os.Rename(aside, f)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := q.OnchainLabels(ctx, []string{addr}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatalf("labels: %v", err)
			}
			if _, ok := got[addr]; ok != tc.wantLabel {
				t.Fatalf("label of %s found %v, want %v (labels %v)", addr, ok, tc.wantLabel, got)
			}
		})
	}
}

// labelledAddress is an address the labels file f labels from a source the lake
// ranks (so the cascade picks one of its rows).
func labelledAddress(t *testing.T, f string) string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src := filepath.Join(filepath.Dir(filepath.Dir(f)), "label_sources", "label_sources.parquet")
	var a string
	if err := db.QueryRow(`SELECT address FROM read_parquet(?) WHERE source IN (SELECT source FROM read_parquet(?))
		ORDER BY address LIMIT 1`, f, src).Scan(&a); err != nil {
		t.Fatal(err)
	}
	return a
}
