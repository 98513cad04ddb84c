package query

import (
	"context"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestPerpdexCohortsNewestFirstSameAsWholeWindow pins the cohorts page's widening
// window (the newest day before the page's anchor first, wider only while it gives too
// few groups): every page, walked by its cursor, equals the same slice of the one query
// over the whole window, for limits that fill inside the first day, across several
// widenings and past the whole history, both axes, one coin and every coin, with a start
// inside the history and at two clocks.
func TestPerpdexCohortsNewestFirstSameAsWholeWindow(t *testing.T) {
	ctx := context.Background()
	end := testlake.Now()
	for _, clock := range []time.Time{end, end.Add(-36*time.Hour - 30*time.Minute)} {
		q, err := Open(ctx, testlake.Tiny(t), Options{Now: func() time.Time { return clock }})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.perpdexCohortsEnsure(ctx); err != nil {
			t.Fatal(err)
		}
		lab, err := q.perpdexLabelsAt(ctx, q.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			coin, axis string
			start      time.Time
		}{
			{"", "size", time.Unix(0, 0).UTC()},
			{"", "pnl", time.Unix(0, 0).UTC()},
			{"BTC", "size", time.Unix(0, 0).UTC()},
			{"", "size", clock.Add(-5 * 24 * time.Hour)},
		} {
			whole := PerpdexCohortsParams{Coin: c.coin, Axis: c.axis, Start: c.start, End: clock, Limit: 1 << 30}
			want, err := q.perpdexCohortRows(ctx, whole, c.start, nil, nil, nil, lab)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 50 {
				t.Fatalf("%+v: only %d groups on the tiny lake; the test needs several days of them", c, len(want))
			}
			for _, limit := range []int{1, 7, 100, 1000, len(want) + 5} {
				var got []CohortPositioning
				p := PerpdexCohortsParams{Coin: c.coin, Axis: c.axis, Start: c.start, End: clock, Limit: limit}
				for pages := 0; ; pages++ {
					if pages > len(want)+2 {
						t.Fatalf("%+v limit %d: the cursor does not end", c, limit)
					}
					page, err := q.PerpdexCohorts(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, page.Rows...)
					if page.Next == nil {
						break
					}
					p.After = page.Next
					if limit < 1000 && pages == 25 {
						break // enough pages of a small limit; the rest is the same walk
					}
				}
				for i, r := range got {
					w := want[i]
					if r.TS != ISOSeconds(w.ts) || r.Coin != w.row.Coin || r.Cohort != w.row.Cohort ||
						r.LongUsd != Round(w.long, 2) || r.ShortUsd != Round(w.short, 2) ||
						r.LongPositions != w.row.LongPositions || r.ShortPositions != w.row.ShortPositions {
						t.Fatalf("clock %s %+v limit %d: row %d = %+v, the whole window's %+v (ts %s long %v short %v)",
							clock, c, limit, i, r, w.row, w.ts, w.long, w.short)
					}
				}
				if limit >= 1000 && len(got) != len(want) {
					t.Fatalf("clock %s %+v limit %d: %d rows over the pages, the whole window %d", clock, c, limit, len(got), len(want))
				}
			}
		}
		q.Close()
	}
}
