package query

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestPredmktBoardPublishedOnce: the prediction-market board carries the signature of
// its source files, so publishing it again with nothing due (a second `mdq rebuild`,
// a restarted server in the same hour) reads it back instead of recomputing it, while
// a changed source file (a corrected trades file, new resolutions) or a new hour does
// recompute it, and replaces the version it supersedes.
func TestPredmktBoardPublishedOnce(t *testing.T) {
	dir := testlake.Copy(t)
	var clock atomic.Int64
	clock.Store(testlake.Now().Add(5 * time.Minute).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	open := func() *Queries {
		q, err := Open(context.Background(), dir, Options{Now: now, NoGoLimit: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	ctx := AsBuild(context.Background())
	publish := func(q *Queries, wantComputed bool, step string) *Board {
		t.Helper()
		before := q.boardState().computes.Load()
		b, computed, err := q.PublishPredmktBoard(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if computed != wantComputed || q.boardState().computes.Load()-before != map[bool]int64{true: 1}[wantComputed] {
			t.Fatalf("%s: computed %v (%d computations), want %v", step, computed, q.boardState().computes.Load()-before, wantComputed)
		}
		if len(b.Cats["all"]) == 0 {
			t.Fatalf("%s: empty board", step)
		}
		files, _ := lake.PredmktBoard.Files(dir)
		if len(files) != 1 {
			t.Fatalf("%s: board files %v, want the one version", step, files)
		}
		return b
	}
	q := open()
	first := publish(q, true, "first rebuild")
	publish(q, false, "second rebuild, same store")
	q2 := open()
	again := publish(q2, false, "rebuild from a fresh process in the same hour")
	if again.Rows() != first.Rows() {
		t.Fatalf("read back %d rows, computed %d", again.Rows(), first.Rows())
	}
	// A restart serving the hour reads the published board.
	q3 := open()
	if _, err := q3.PredmktBoard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := q3.boardState().computes.Load(); n != 0 {
		t.Fatalf("a restart in the same hour computed the board %d times", n)
	}
	boardPublished := func(q *Queries) bool {
		_, path, err := q.predmktBoardFile(q.Now().Truncate(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return fileExists(path)
	}
	if !boardPublished(q3) {
		t.Fatal("the board is not reported published after its publication")
	}

	// A corrected source file: recomputed, the previous version removed.
	for _, src := range predmktBoardSources {
		files, err := src.Files(dir)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s files: %v %v", src.Name, files, err)
		}
		later := time.Now().Add(time.Duration(len(src.Name)) * time.Second)
		if err := os.Chtimes(files[len(files)-1], later, later); err != nil {
			t.Fatal(err)
		}
		q := open()
		if boardPublished(q) {
			t.Fatalf("%s changed, yet the board is reported published", src.Name)
		}
		publish(q, true, src.Name+" changed")
		publish(open(), false, src.Name+" changed, rebuilt again")
	}

	// The next hour: recomputed, the earlier hour removed.
	clock.Add(time.Hour.Milliseconds())
	b := publish(open(), true, "next hour")
	if !b.Hour.Equal(testlake.Now().Add(time.Hour)) {
		t.Fatalf("next hour's board stamped %v", b.Hour)
	}
}
