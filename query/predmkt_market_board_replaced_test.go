package query

import (
	"context"
	"os"
	"reflect"
	"testing"

	"mdq/internal/testlake"
)

// TestMarketBoardRemovedBeforeItsRead: a board removed between a request's check and
// its read (a board of newer trades files replaced it) is answered from the per-day
// tables, the same page, not an error.
func TestMarketBoardRemovedBeforeItsRead(t *testing.T) {
	dir := testlake.Copy(t)
	q, err := Open(context.Background(), dir, Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	if _, err := q.PublishDayTables(ctx); err != nil {
		t.Fatal(err)
	}
	params := PredmktMarketsParams{Sort: "volume_24h", Limit: 20}
	want, err := q.PredmktMarkets(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := q.PublishMarketBoard(ctx); err != nil || !wrote {
		t.Fatalf("board not published (%v)", err)
	}
	removed := 0
	marketBoardReadHook = func(path string) {
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
		removed++
	}
	defer func() { marketBoardReadHook = nil }()
	got, err := q.PredmktMarkets(ctx, params)
	if err != nil {
		t.Fatalf("a board removed before its read: %v", err)
	}
	if removed != 1 || !reflect.DeepEqual(got, want) {
		t.Fatalf("removed %d boards; the page differs from the per-day tables' page", removed)
	}
}
