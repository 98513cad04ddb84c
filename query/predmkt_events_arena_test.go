package query

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"testing"

	"mdq/internal/testlake"
)

// TestEventsArenaReusedReadsTheSameEvents: one arena reused scan after scan (as the
// REST handler's released pages are) reads every window's events exactly as a fresh
// arena does: windows of different sizes and event types in turn, each twice, so a
// later scan overwrites the texts of a longer earlier one and reads past its chunks.
func TestEventsArenaReusedReadsTheSameEvents(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	var last int64
	if err := q.db.QueryRowContext(ctx, "SELECT max(local_ts) FROM predmkt_book_events").Scan(&last); err != nil {
		t.Fatal(err)
	}
	type window struct {
		from, to int64
		typ      string
		limit    int
	}
	windows := []window{
		{last - 86_400_000 + 1, last + 1, "", 50_000},
		{last - 3*3_600_000, last - 3_600_000, "price_change", 997},
		{last - 86_400_000 + 1, last + 1, "book", 50_000},
		{last - 7_200_000, last + 1, "", 10},
	}
	scan := func(a *eventsArena, w window) []TapeEvent {
		evs, err := q.scanEvents(ctx, a, predmktEventsSQL, w.limit+1, "", w.from, w.to, w.typ, int64(-1), int64(0), "",
			w.limit+1, "0001-01-01", "9999-12-31")
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	shared := &eventsArena{}
	books := 0
	for round := range 2 {
		for i, w := range windows {
			want := scan(&eventsArena{}, w)
			got := scan(shared, w)
			if len(want) == 0 {
				t.Fatalf("window %d holds no event: nothing compared", i)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d window %d: the reused arena read %d events, a fresh one %d (first differs: %v)", round, i, len(got), len(want), firstDiffEvent(got, want))
			}
			for _, e := range got {
				if e.Bids != "" {
					books++
				}
			}
		}
	}
	if books == 0 || len(shared.chunks) < 2 {
		t.Fatalf("%d events with bids, %d chunks: the texts never filled more than one chunk", books, len(shared.chunks))
	}
}

func firstDiffEvent(a, b []TapeEvent) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %+v against %+v", i, a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// TestEventsArenaKeptWithinTheGoLimit: a released arena is kept for the next page
// only when it is at most a sixteenth of the Go heap's limit, and at most two are
// kept.
func TestEventsArenaKeptWithinTheGoLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	drain := func() {
		for {
			select {
			case <-eventsArenas:
			default:
				return
			}
		}
	}
	drain()
	defer drain()
	a := &eventsArena{}
	a.reset(100_000) // about 17 MB of events
	debug.SetMemoryLimit(200 << 20)
	a.release()
	if b := newEventsArena(); b == a {
		t.Fatal("an arena of 17 MB was kept under a 200 MB limit (a sixteenth is 12.5 MB)")
	}
	debug.SetMemoryLimit(1 << 30)
	a.release()
	if b := newEventsArena(); b != a {
		t.Fatal("an arena of 17 MB was not kept under a 1 GB limit")
	}
	kept := []*eventsArena{{}, {}, {}}
	for _, k := range kept {
		k.release()
	}
	if n := len(eventsArenas); n != 2 {
		t.Fatalf("%d arenas kept, want 2", n)
	}
}
