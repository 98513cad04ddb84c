package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDiscoverAscendingFromDescending: the ascending orders derived from the
// descending ones (reversed, ties back in address order) are the orders a sort gives,
// for every key, on boards with many ties (equal volumes, zeros of both signs, equal
// counts), and a NaN key falls back to the sort.
func TestDiscoverAscendingFromDescending(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, -0.0, 1, 1, 2.5, -3, 1e9, -1e-9}
	for n := range []int{0, 1, 2, 7, 300} {
		size := []int{0, 1, 2, 7, 300}[n]
		rows := make([]discoverBoardRow, size)
		for i := range rows {
			r := &rows[i]
			r.Address = fmt.Sprintf("0x%040x", rng.IntN(1000000))
			r.inKey, r.outKey, r.netKey = vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
			r.pnlKey, r.volKey = vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
			r.TxCount = int64(rng.IntN(3))
		}
		if size == 7 {
			rows[3].pnlKey = nanValue()
		}
		derived := &discoverBoard{rows: rows, orders: map[string][]int32{}}
		derived.sortAll()
		for _, s := range discoverSorts {
			got := derived.ranked(s, "asc")
			want := derived.sorted(s, "asc")
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows, sort %s: derived %v, sorted %v", size, s, got, want)
			}
		}
	}
}

func nanValue() float64 { var z float64; return z / z }
