package query

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// totalsStore opens a copy of the tiny lake whose clock the test moves.
func totalsStore(t *testing.T) (q *Queries, dir string, clock *atomic.Int64) {
	t.Helper()
	dir = testlake.Copy(t)
	clock = &atomic.Int64{}
	clock.Store(testlake.Now().UnixMilli())
	q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return time.UnixMilli(clock.Load()).UTC() }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q, dir, clock
}

// totalsDates lists the predmkt_wallet_totals dates in the sidecar and on disk.
func totalsDates(t *testing.T, dir string) (listed, files []string) {
	t.Helper()
	done, err := readSidecar[totalsSource](walletTotalsSidecar(dir))
	if err != nil {
		t.Fatal(err)
	}
	for d := range done {
		listed = append(listed, d)
	}
	fs, err := lake.PredmktWalletTotals.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		files = append(files, strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date="))
	}
	slices.Sort(listed)
	slices.Sort(files)
	return listed, files
}

// checkTotalsBoard: the board at clock at equals the board of every raw fill
// (boardBefore, the oracle), and reads the totals of date want for the days up to it
// ("" : no totals stand in, every day is read as before).
func checkTotalsBoard(t *testing.T, q *Queries, step string, at time.Time, want string) {
	t.Helper()
	src, err := datePartitions(q.dir, lake.PredmktTrades)
	if err != nil {
		t.Fatal(err)
	}
	upTo, file, err := q.walletTotalsFor(src, at.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if upTo != want {
		t.Fatalf("%s at %s: the board reads the totals of %q, want %q", step, at, upTo, want)
	}
	days, _, err := q.predmktBoardPlan(at.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if want != "" && (file == "" || !slices.Contains(strings.Split(days, fileSep), file)) {
		t.Fatalf("%s at %s: the plan's days %q do not list the totals %q", step, at, days, file)
	}
	got, err := q.computeBoard(context.Background(), at)
	if err != nil {
		t.Fatalf("%s at %s: %v", step, at, err)
	}
	raw := boardBefore(t, q, at)
	if len(raw.Cats["all"]) == 0 {
		t.Fatalf("%s at %s: empty board", step, at)
	}
	if !reflect.DeepEqual(got.Cats, raw.Cats) {
		for cat, es := range raw.Cats {
			for i := range es {
				if i >= len(got.Cats[cat]) || !reflect.DeepEqual(got.Cats[cat][i], es[i]) {
					t.Fatalf("%s at %s, %s row %d: with totals %+v, raw %+v", step, at, cat, i, got.Cats[cat][min(i, len(got.Cats[cat])-1)], es[i])
				}
			}
		}
		t.Fatalf("%s at %s: boards differ", step, at)
	}
}

// TestPredmktWalletTotalsBoardSameAsRaw: the lifetime totals stand in for the days
// before the board's widest window and the board equals the board of every raw fill
// after every kind of publication: the first (summed from the days), the clock a day
// on (the previous totals plus one day) and another (the oldest dropped: two kept), a
// corrected day and a removed day before the totals (stale totals are not read; the
// next publication sums them again), a late day landing again, and the clock moved
// back. The tiny lake's ten days all end before the widest window of a clock 25 days
// after its end.
func TestPredmktWalletTotalsBoardSameAsRaw(t *testing.T) {
	q, dir, clock := totalsStore(t)
	ctx := context.Background()
	publish := func(at time.Time) DayPublication {
		t.Helper()
		clock.Store(at.UnixMilli())
		pubs, err := q.PublishDayTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pubs {
			if p.Table == lake.PredmktWalletTotals.Name {
				return p
			}
		}
		t.Fatal("PublishDayTables did not publish predmkt_wallet_totals")
		return DayPublication{}
	}
	end := testlake.Now()
	day := func(d int) string { return end.AddDate(0, 0, d).Format("2006-01-02") }

	// At the lake's end no day lies before the 30-day window: no totals.
	if p := publish(end); len(p.Written) != 0 {
		t.Fatalf("at the end: wrote %v", p.Written)
	}
	checkTotalsBoard(t, q, "at the end", end, "")

	c1 := end.AddDate(0, 0, 25) // the window starts at end-5d, mid-day
	if p := publish(c1); !slices.Equal(p.Written, []string{day(-6)}) {
		t.Fatalf("first: wrote %v, want %s", p.Written, day(-6))
	}
	checkTotalsBoard(t, q, "first", c1, day(-6))
	checkTotalsBoard(t, q, "first, an hour on", c1.Add(time.Hour), day(-6))
	checkTotalsBoard(t, q, "first, at an earlier clock", c1.AddDate(0, 0, -1), "") // its days reach into that clock's window

	c2 := c1.AddDate(0, 0, 1)
	if p := publish(c2); !slices.Equal(p.Written, []string{day(-5)}) {
		t.Fatalf("a day on: wrote %v", p.Written)
	}
	checkTotalsBoard(t, q, "a day on", c2, day(-5))
	c3 := c2.AddDate(0, 0, 1)
	publish(c3)
	checkTotalsBoard(t, q, "two days on", c3, day(-4))
	if listed, files := totalsDates(t, dir); !slices.Equal(listed, []string{day(-5), day(-4)}) || !slices.Equal(files, listed) {
		t.Fatalf("two days on: the sidecar lists %v, the files %v; want the newest two", listed, files)
	}

	// A corrected day before the totals: they are stale until published again.
	correctTradesDay(t, q, day(-7))
	checkTotalsBoard(t, q, "corrected day, not yet published", c3, "")
	if p := publish(c3); !slices.Equal(p.Written, []string{day(-4)}) {
		t.Fatalf("corrected day: wrote %v", p.Written)
	}
	checkTotalsBoard(t, q, "corrected day published", c3, day(-4))

	// A day removed, then landing again late.
	aside := filepath.Join(t.TempDir(), "trades.parquet")
	rel, _ := lake.PredmktTrades.Path(day(-8))
	file := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.Rename(file, aside); err != nil {
		t.Fatal(err)
	}
	checkTotalsBoard(t, q, "a day removed, not yet published", c3, "")
	publish(c3)
	checkTotalsBoard(t, q, "a day removed", c3, day(-4))
	if err := os.Rename(aside, file); err != nil {
		t.Fatal(err)
	}
	checkTotalsBoard(t, q, "late day, not yet published", c3, "")
	publish(c3)
	checkTotalsBoard(t, q, "late day published", c3, day(-4))

	// The clock moved back: its date is summed again, the newer ones go.
	if p := publish(c1); !slices.Equal(p.Written, []string{day(-6)}) || !slices.Equal(p.Removed, []string{day(-5), day(-4)}) {
		t.Fatalf("clock back: wrote %v, removed %v", p.Written, p.Removed)
	}
	checkTotalsBoard(t, q, "clock back", c1, day(-6))

	// A listed file removed by hand: not read, written again, and not a base to add to.
	removeTotals := func(date string) {
		t.Helper()
		rel, _ := lake.PredmktWalletTotals.Path(date)
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	removeTotals(day(-6))
	checkTotalsBoard(t, q, "file removed by hand", c1, "")
	if p := publish(c1); !slices.Equal(p.Written, []string{day(-6)}) {
		t.Fatalf("file removed by hand: wrote %v", p.Written)
	}
	checkTotalsBoard(t, q, "file removed by hand, published", c1, day(-6))
	removeTotals(day(-6))
	if p := publish(c2); !slices.Equal(p.Written, []string{day(-5)}) {
		t.Fatalf("base removed by hand: wrote %v", p.Written)
	}
	checkTotalsBoard(t, q, "base removed by hand", c2, day(-5))
}

// TestPredmktWalletTotalsCancelled: a publication of the totals cancelled at random
// points leaves the previous totals or the new ones, never a partial or temporary file
// nor a listed date without its file, and the board equals the raw oracle after each.
func TestPredmktWalletTotalsCancelled(t *testing.T) {
	q, dir, clock := totalsStore(t)
	end := testlake.Now()
	at := end.AddDate(0, 0, 25)
	clock.Store(at.UnixMilli())
	if _, err := q.PublishDayTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	cancelled := 0
	for i := range 8 {
		at = at.AddDate(0, 0, 1)
		if i%3 == 2 {
			at = at.AddDate(0, 0, -3) // and back, which rewrites an older date
		}
		clock.Store(at.UnixMilli())
		cctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(60))*time.Millisecond)
		_, err := q.publishWalletTotals(cctx)
		cancel()
		if err != nil {
			cancelled++
		}
		listed, files := totalsDates(t, dir)
		done, _ := readSidecar[totalsSource](walletTotalsSidecar(dir))
		for _, d := range listed {
			if done[d].Rows > 0 && !slices.Contains(files, d) {
				t.Fatalf("round %d: %s is listed without its file", i, d)
			}
		}
		filepath.Walk(filepath.Join(dir, "predmkt"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.Contains(filepath.Base(p), ".tmp-") {
				t.Fatalf("round %d: temporary file left: %s", i, p)
			}
			return nil
		})
		src, _ := datePartitions(dir, lake.PredmktTrades)
		upTo, _, err := q.walletTotalsFor(src, at.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		checkTotalsBoard(t, q, "round", at, upTo)
	}
	if cancelled == 0 {
		t.Fatal("no publication was cancelled; the test did not test cancellation")
	}
	if _, err := q.publishWalletTotals(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A clock at noon: its window starts at noon 30 days before, so the totals are
	// those of the day before that.
	checkTotalsBoard(t, q, "after cancellations", at, at.AddDate(0, 0, -31).Format("2006-01-02"))
}
