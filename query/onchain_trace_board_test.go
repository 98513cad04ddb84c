package query

import (
	"context"
	"math"
	"math/big"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestTracePairBoardIsEachRankingsHead: the published pair board of a chain's 30-day
// window holds, per wallet, exactly the first OnchainTraceMaxWidth pairs of its
// ranking (pair volume largest first, ties on the counterparty), in that order, with
// the pair's sums: checked against plain Go summing the window's legs exactly (big.Rat
// from the decimal text; a pair with no priced leg has no volume and ranks last, as
// DuckDB orders NULL), on every chain of the tiny lake. Fails when no wallet has more
// pairs than the head holds (the cut would be untested).
func TestTracePairBoardIsEachRankingsHead(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	now := testlake.Now()
	q, err := Open(ctx, dir, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	at := ocBoardHour(now)
	cut := 0
	for _, chain := range OnchainChains {
		path, err := q.tracePairsFile(ctx, chain, "30d", at)
		if err != nil {
			t.Fatal(err)
		}
		since, until := windowBounds(at, "30d")
		type pair struct {
			out, in, vol *big.Rat
			n            int64
			priced       bool // some leg had a usd: else the pair's volume is NULL
		}
		pairs := map[string]map[string]*pair{}
		rows, err := q.db.QueryContext(ctx, `SELECT wallet, cp, dir, CAST(usd AS VARCHAR) FROM onchain_legs
			WHERE chain = $1 AND NOT self AND block_time > make_timestamp($2) AND block_time <= make_timestamp($3)`, chain, since, until)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var w, c string
			var dir int
			var usd *string
			if err := rows.Scan(&w, &c, &dir, &usd); err != nil {
				t.Fatal(err)
			}
			if pairs[w] == nil {
				pairs[w] = map[string]*pair{}
			}
			p := pairs[w][c]
			if p == nil {
				p = &pair{new(big.Rat), new(big.Rat), new(big.Rat), 0, false}
				pairs[w][c] = p
			}
			p.n++
			if usd == nil {
				continue
			}
			v, ok := new(big.Rat).SetString(*usd)
			if !ok {
				t.Fatalf("usd %q", *usd)
			}
			p.priced = true
			p.vol.Add(p.vol, v)
			if dir == -1 {
				p.out.Add(p.out, v)
			} else {
				p.in.Add(p.in, v)
			}
		}
		rows.Close()
		type row struct {
			w, c    string
			out, in float64
			vol     *float64
			n       int64
		}
		var want []row
		wallets := make([]string, 0, len(pairs))
		for w := range pairs {
			wallets = append(wallets, w)
		}
		sort.Strings(wallets)
		for _, w := range wallets {
			cps := make([]string, 0, len(pairs[w]))
			for c := range pairs[w] {
				cps = append(cps, c)
			}
			sort.Slice(cps, func(i, j int) bool {
				a, b := pairs[w][cps[i]], pairs[w][cps[j]]
				if a.priced != b.priced {
					return a.priced
				}
				if d := a.vol.Cmp(b.vol); d != 0 {
					return d > 0
				}
				return cps[i] < cps[j]
			})
			if len(cps) > OnchainTraceMaxWidth {
				cut++
				cps = cps[:OnchainTraceMaxWidth]
			}
			for _, c := range cps {
				p := pairs[w][c]
				f := func(r *big.Rat) float64 { x, _ := r.Float64(); return x }
				r := row{w: w, c: c, out: f(p.out), in: f(p.in), n: p.n}
				if p.priced {
					v := f(p.vol)
					r.vol = &v
				}
				want = append(want, r)
			}
		}
		rows, err = q.db.QueryContext(ctx, "SELECT wallet, counterparty, out_usd, in_usd, volume, tx_count FROM read_parquet($1) ORDER BY file_row_number", path)
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.w, &r.c, &r.out, &r.in, &r.vol, &r.n); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		rows.Close()
		if len(got) != len(want) {
			t.Fatalf("%s: the board holds %d pairs, want %d (each wallet's first %d)", chain, len(got), len(want), OnchainTraceMaxWidth)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		for i := range want {
			g, w := got[i], want[i]
			vol := (g.vol == nil) == (w.vol == nil) && (g.vol == nil || near(*g.vol, *w.vol))
			if g.w != w.w || g.c != w.c || g.n != w.n || !near(g.out, w.out) || !near(g.in, w.in) || !vol {
				t.Fatalf("%s: board row %d is %+v, want %+v", chain, i, g, w)
			}
		}
	}
	if cut == 0 {
		t.Fatal("no wallet has more pairs than the head: the cut is untested")
	}
}
