package query

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortEventsInPlace: sortEvents orders a page by (local_ts, seq, token_id) in place
// and cuts it to n; the oracle is a stable sort of a copy by the same key. Sizes cover
// an empty page, one event, pages shorter and longer than n, and many ties on
// local_ts and seq (token ids then decide), in random orders.
func TestSortEventsInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct{ size, n, spread int }{
		{0, 5, 3}, {1, 1, 1}, {1, 5, 1}, {7, 3, 2}, {50, 50, 4}, {200, 120, 3}, {1000, 1001, 40}, {5000, 4000, 2},
	} {
		t.Run(fmt.Sprintf("%d_%d_%d", c.size, c.n, c.spread), func(t *testing.T) {
			for round := range 5 {
				evs := make([]TapeEvent, c.size)
				for i := range evs {
					// Distinct (local_ts, seq, token_id) per event, so the order is total.
					evs[i] = TapeEvent{LocalTS: int64(rng.IntN(c.spread)), Seq: int64(rng.IntN(c.spread)),
						TokenID: fmt.Sprintf("%03d-%d", rng.IntN(c.spread), i), Price: float64(i)}
				}
				want := slices.Clone(evs)
				slices.SortStableFunc(want, func(a, b TapeEvent) int {
					return cmp.Or(cmp.Compare(a.LocalTS, b.LocalTS), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.TokenID, b.TokenID))
				})
				want = want[:min(c.n, len(want))]
				got := sortEvents(evs, c.n)
				if !slices.Equal(got, want) {
					t.Fatalf("round %d: sortEvents differs from the oracle (got %d events, want %d)", round, len(got), len(want))
				}
			}
		})
	}
}
