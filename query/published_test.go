package query

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
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

// TestPublishOnlyStorePublishesWithoutReadBack: a publish-only store (mdq rebuild, demo,
// ingest, lake cut) publishes every derived table a serving store's warms publish, with
// the same rows (a board computed in it reads nothing it skipped), without reading a
// published board back into memory; a serving store opened afterwards finds every
// area current, writes nothing, and reads the boards back itself. Run again with
// everything published, the publish-only store reads and writes nothing.
func TestPublishOnlyStorePublishesWithoutReadBack(t *testing.T) {
	now := testlake.Now()
	ctx := AsBuild(context.Background())
	open := func(dir string, publishOnly bool) *Queries {
		// One DuckDB thread: the boards' DOUBLE sums then add in one order, so two
		// computations agree to the bit.
		q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return now }, NoGoLimit: true, PublishOnly: publishOnly, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	// What publishDerived (cmd/mdq/cli) runs after the days' tables.
	publish := func(q *Queries) {
		t.Helper()
		if _, _, err := q.PublishPredmktBoard(ctx); err != nil {
			t.Fatal(err)
		}
		for _, f := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
			if err := f(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	derived := append(append([]*lake.Table{lake.PredmktBoard}, boardTables...), tapeDigestTables...)

	po, served := testlake.Copy(t), testlake.Copy(t)
	q := open(po, true)
	publish(q)
	if n := q.boardReads.Load(); n != 0 {
		t.Fatalf("the publish-only store read %d published files back", n)
	}
	s := open(served, false)
	publish(s)
	if s.boardReads.Load() == 0 {
		t.Fatal("the serving store read no published file back: the count counts nothing")
	}
	// The publish-only store's routes answer ErrPublishOnly, never the empty boards its
	// builds return; the serving store's the same routes answer.
	routes := map[string]func(*Queries) error{
		"predmkt board": func(q *Queries) error { _, err := q.PredmktBoard(ctx); return err },
		"perpdex leaderboard": func(q *Queries) error {
			_, err := q.perpdexBoardOf(ctx, "30d")
			return err
		},
		"perpdex builders": func(q *Queries) error { _, _, err := q.buildersData(ctx, "7d"); return err },
		"onchain discover": func(q *Queries) error {
			_, err := q.OnchainDiscover(ctx, OnchainDiscoverParams{Chain: "ethereum", Window: "30d", Sort: "volume", Order: "desc", Size: 10})
			return err
		},
		"onchain screener": func(q *Queries) error {
			_, err := q.onchainScreenerBoard(ctx, "ethereum", "7d", false, ocBoardHour(now))
			return err
		},
		"onchain holders": func(q *Queries) error {
			_, err := q.OnchainTokenHolders(ctx, "ethereum", OnchainZeroAddress, 5)
			return err
		},
		"onchain labels": func(q *Queries) error {
			_, err := q.OnchainLabelsBatch(ctx, []string{OnchainZeroAddress})
			return err
		},
	}
	for name, route := range routes {
		if err := route(q); !errors.Is(err, ErrPublishOnly) {
			t.Errorf("%s from the publish-only store: %v, want ErrPublishOnly", name, err)
		}
		if err := route(s); err != nil {
			t.Errorf("%s from the serving store: %v", name, err)
		}
	}

	// The same files (the built names hold a hash of the sources' modification times,
	// which differ between the copies) with the same rows.
	norm := regexp.MustCompile(`(built=\d{8}T\d{2})_[0-9a-f]+|src_[0-9a-f]+`)
	byName := func(dir string) map[string]string {
		out := map[string]string{}
		for rel := range derivedFiles(t, dir, derived) {
			key := norm.ReplaceAllStringFunc(rel, func(m string) string { return m[:strings.IndexAny(m, "_")] })
			if _, dup := out[key]; dup {
				t.Fatalf("two versions of %s", key)
			}
			out[key] = filepath.Join(dir, rel)
		}
		return out
	}
	a, b := byName(po), byName(served)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d derived files published by the publish-only store, %d by the serving one", len(a), len(b))
	}
	for key, fa := range a {
		fb, ok := b[key]
		if !ok {
			t.Fatalf("%s: published by the publish-only store only", key)
		}
		var diff int64
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM (
			(SELECT * FROM read_parquet($1, hive_partitioning = false) EXCEPT ALL SELECT * FROM read_parquet($2, hive_partitioning = false))
			UNION ALL
			(SELECT * FROM read_parquet($2, hive_partitioning = false) EXCEPT ALL SELECT * FROM read_parquet($1, hive_partitioning = false)))`,
			fa, fb).Scan(&diff); err != nil {
			t.Fatal(err)
		}
		if diff != 0 {
			t.Fatalf("%s: %d rows differ between the two stores' publications", key, diff)
		}
	}

	files := derivedFiles(t, po, derived)
	s2 := open(po, false)
	got, err := s2.PublishedCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"predmkt": true, "perpdex_cohorts": true, "perpdex": true, "onchain": true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the publish-only store: current %v, want %v", got, want)
	}
	publish(s2)
	if again := derivedFiles(t, po, derived); !reflect.DeepEqual(again, files) {
		t.Fatal("a serving store's warms after the publish-only store published again")
	}
	if s2.boardReads.Load() == 0 {
		t.Fatal("the serving store did not read the published boards back")
	}
	q2 := open(po, true)
	publish(q2)
	if n := q2.boardReads.Load(); n != 0 {
		t.Fatalf("a publish-only store with everything published read %d files back", n)
	}
	if again := derivedFiles(t, po, derived); !reflect.DeepEqual(again, files) {
		t.Fatal("a publish-only store with everything published wrote derived files")
	}
}
