package query

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestPublishedCurrentAgreesWithWarm: PublishedCurrent (what /readyz waits for on a
// restart) says an area is current exactly when its warm has nothing left to publish:
// on a lake without boards the board areas are not current; after the warms published
// them a fresh store finds every area current, and its warms then rewrite no derived
// file (a check that passed with something unpublished would let them write); a source
// file that changes makes the areas reading it not current again, and only those.
func TestPublishedCurrentAgreesWithWarm(t *testing.T) {
	dir := testlake.Copy(t)
	now := testlake.Now()
	open := func() *Queries {
		q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return now }, NoGoLimit: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	ctx := AsBuild(context.Background())
	check := func(q *Queries, want map[string]bool) {
		t.Helper()
		got, err := q.PublishedCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("published current: %v, want %v", got, want)
		}
	}
	warm := func(q *Queries) {
		t.Helper()
		for _, f := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
			if err := f(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(boardFiles(t, dir)); n != 0 {
		t.Fatalf("the copied lake already holds %d board files", n)
	}
	q := open()
	got, err := q.PublishedCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["perpdex"] || got["onchain"] {
		t.Fatalf("no board is published, yet: %v", got)
	}
	warm(q)

	all := map[string]bool{"predmkt": true, "perpdex_cohorts": true, "perpdex": true, "onchain": true}
	check(open(), all)
	derived := append(append([]*lake.Table{lake.PredmktBoard}, boardTables...), tapeDigestTables...)
	files := derivedFiles(t, dir, derived)
	warm(open())
	if again := derivedFiles(t, dir, derived); !reflect.DeepEqual(again, files) {
		t.Fatalf("warms after a current check published: %d files before, %d after", len(files), len(again))
	}

	// A corrected fills file: the perpetuals boards are out of date, the rest current.
	fills, err := lake.PerpdexFills.Files(dir)
	if err != nil || len(fills) == 0 {
		t.Fatalf("fills files: %v %v", fills, err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(fills[0], later, later); err != nil {
		t.Fatal(err)
	}
	q = open()
	check(q, map[string]bool{"predmkt": true, "perpdex_cohorts": true, "perpdex": false, "onchain": true})
	warm(q)
	check(open(), all)
}
