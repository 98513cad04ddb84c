package query

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// boardRowsOf runs a board query and returns its rows as scanned values, in order.
func boardRowsOf(t *testing.T, q *Queries, query string, args ...any) [][]any {
	t.Helper()
	rows, err := q.db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameBoardValue compares two scanned values exactly: floats by their bits.
func sameBoardValue(a, b any) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return math.Float64bits(fa) == math.Float64bits(fb)
	}
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

// sameBoard compares the rows of two board queries field for field.
func sameBoard(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d columns, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if !sameBoardValue(got[i][j], want[i][j]) {
				t.Fatalf("%s: row %d (%v) column %d: got %v, want %v", what, i, want[i][0], j, got[i][j], want[i][j])
			}
		}
	}
}

// perpdexBoardBefore is sql/perpdex/board.sql as it was before the position batches
// were bound and the two equity scans merged: the oracle of TestPerpdexBoardSame.
func perpdexBoardBefore(t *testing.T) string {
	b, err := os.ReadFile("testdata/perpdex_board_before.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPerpdexBoardSame: the board query gives the rows of the one it replaced, field
// for field (floats by their bits), for every window and wallet bucket, at the lake's
// clock and at past clocks (an hour inside a day, so both window edges cut a day).
func TestPerpdexBoardSame(t *testing.T) {
	ctx := context.Background()
	q, err := Open(ctx, testlake.Tiny(t), Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	// One thread: a parallel double sum adds in an order that varies between runs.
	if _, err := q.db.Exec("SET threads = 1"); err != nil {
		t.Fatal(err)
	}
	if err := q.perpdexEnsure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.perpdexCohortsEnsure(ctx); err != nil {
		t.Fatal(err)
	}
	before := perpdexBoardBefore(t)
	for _, at := range []time.Time{PerpdexBoardTime(testlake.Now()), PerpdexBoardTime(testlake.Now().Add(-3*24*time.Hour - 7*time.Hour))} {
		lab, err := q.perpdexLabelsAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range PerpdexWindowNames {
			start := PerpdexWindowStart(w, at)
			bs, be, err := q.PerpdexBoardBatches(ctx, start, at)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, b := range closedTradeBuckets {
				lo, hi := bucketRange(b)
				want := boardRowsOf(t, q, before, start, at, lo, hi, lab.current)
				got := boardRowsOf(t, q, perpdexBoardSQL, start, at, lo, hi, lab.current, bs, be)
				sameBoard(t, fmt.Sprintf("%s %s bucket %s", at.Format(time.RFC3339), w, b), got, want)
				n += len(want)
			}
			if n == 0 {
				t.Fatalf("%s %s: an empty board proves nothing", at, w)
			}
		}
	}
}
