package query_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"mdq/internal/duckalloc"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestReadyzBeforeAndAfter: not ready (with the reason) before every area's derived
// state is warmed, ready once it is, still ready across an hour turn (the previous
// hour is served while the next builds), not ready when an area falls more than an hour
// behind or has never succeeded.
func TestReadyzBeforeAndAfter(t *testing.T) {
	clock := time.Date(2026, 11, 20, 12, 30, 0, 0, time.UTC)
	q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{Now: func() time.Time { return clock }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	r := q.Ready()
	if r.Ready || !strings.Contains(r.Reason, "building") {
		t.Fatalf("before any warm: %+v", r)
	}
	for _, a := range query.ReadyAreas[:len(query.ReadyAreas)-1] {
		q.MarkWarm(a, clock, nil)
	}
	if r = q.Ready(); r.Ready || r.Reason != "onchain building" {
		t.Fatalf("one area left: %+v", r)
	}
	q.MarkWarm("onchain", clock, errors.New("boom"))
	if r = q.Ready(); r.Ready || !strings.Contains(r.Areas["onchain"], "error: boom") {
		t.Fatalf("failed area: %+v", r)
	}
	q.MarkWarm("onchain", clock, nil)
	if r = q.Ready(); !r.Ready || r.Reason != "" {
		t.Fatalf("all warmed: %+v", r)
	}
	clock = clock.Add(time.Hour) // the hour turned; the refresher is building the next
	if r = q.Ready(); !r.Ready {
		t.Fatalf("an hour turn took the server out of rotation: %+v", r)
	}
	clock = clock.Add(time.Hour)
	if r = q.Ready(); r.Ready || !strings.Contains(r.Reason, "stale") {
		t.Fatalf("two hours behind: %+v", r)
	}
}

// TestCloseCancelsBackgroundBuilds: closing the store while its warm-up builds run
// returns within the close grace; the builds end with an error, not a hang.
func TestCloseCancelsBackgroundBuilds(t *testing.T) {
	q, err := query.Open(context.Background(), testlake.Copy(t), query.Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- q.OnchainWarm(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // inside the build
	start := time.Now()
	q.Close()
	if d := time.Since(start); d > query.CloseGrace+time.Second {
		t.Fatalf("Close took %s", d)
	}
	select {
	case <-errc:
	case <-time.After(15 * time.Second):
		t.Fatal("the warm-up did not end within 15 s of Close")
	}
}

// TestMemoryBudgetSplit: the budget is split between DuckDB (its memory_limit, which
// the engine reports back) and the Go heap, with the spill directory inside the lake.
func TestMemoryBudgetSplit(t *testing.T) {
	dir := testlake.Tiny(t)
	q, err := query.Open(context.Background(), dir, query.Options{Memory: 1 << 30, Threads: 1, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	b := q.Budget()
	if b.Total != 1<<30 || b.DuckDB+b.Go != b.Total || b.DuckDB < 600<<20 || b.DuckDB > 700<<20 {
		t.Fatalf("split: %+v", b)
	}
	var limit, temp string
	var threads int64
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('temp_directory')").Scan(&limit, &threads, &temp); err != nil {
		t.Fatal(err)
	}
	if threads != 1 || !strings.HasPrefix(temp, dir) || !strings.Contains(limit, "MiB") && !strings.Contains(limit, "MB") {
		t.Fatalf("duckdb settings: limit %q threads %d temp %q", limit, threads, temp)
	}
	if _, err := query.Open(context.Background(), dir, query.Options{Memory: 100 << 20, NoGoLimit: true}); err == nil {
		t.Fatal("a 100 MB budget was accepted")
	}
}

// TestStoreSetsAllocatorDecay: an open store has set the decay time of the allocator
// DuckDB is linked with (query.AllocatorDecay) for an arena its queries used and as
// the default of arenas made later, in place of jemalloc's 1 s.
func TestStoreSetsAllocatorDecay(t *testing.T) {
	if !duckalloc.Available() {
		if runtime.GOOS == "linux" {
			t.Fatal("DuckDB is linked without its bundled jemalloc on Linux")
		}
		t.Skip("DuckDB bundles jemalloc on Linux only: nothing to tune here")
	}
	q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var n int64
	if err := q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM predmkt_trades").Scan(&n); err != nil {
		t.Fatal(err)
	}
	want := query.AllocatorDecay.Milliseconds()
	for _, arena := range []int{-1, 0} {
		d, m, err := duckalloc.Decay(arena)
		if err != nil || d != want || m != want {
			t.Fatalf("arena %d: dirty %d ms, muzzy %d ms (%v), want %d", arena, d, m, err, want)
		}
	}
}

// TestBuildContextOutlivesRequestTimeout: a board build under a request's timeout is
// cut short (here 1 ms, standing for a large lake on a loaded machine), while the
// same build marked AsBuild (serve's refresher, rebuild, demo) gets BuildTimeout and
// completes, so readiness does not depend on the request timeout.
func TestBuildContextOutlivesRequestTimeout(t *testing.T) {
	q, err := query.Open(context.Background(), testlake.Copy(t), query.Options{Now: testlake.Now, NoGoLimit: true, Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.RebuildPredmktBoard(context.Background()); !errors.Is(err, query.ErrTimeout) {
		t.Fatalf("board under a 1 ms request timeout: %v, want a timeout", err)
	}
	b, err := q.RebuildPredmktBoard(query.AsBuild(context.Background()))
	if err != nil {
		t.Fatalf("board as a build: %v", err)
	}
	if len(b.Cats["all"]) == 0 {
		t.Fatal("the build's board is empty")
	}
}
