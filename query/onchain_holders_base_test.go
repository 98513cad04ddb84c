package query

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestTokenHoldersHeadFromBase: token_holders.sql reading a holders base (written by
// holders_base_publish.sql from a bands file) and edge legs built by hand equals a plain
// Go ranking of the same pairs' sums, for random fixtures in which the hour's legs touch
// the base's first ranks, drop a top holder to the bottom, lift a pair from far down,
// add wallets the base does not hold and tie figures (the wallet breaks the tie), at
// caps from 1 to 6. The lake's own legs are left out (R after every date).
func TestTokenHoldersHeadFromBase(t *testing.T) {
	ctx := context.Background()
	q, err := Open(ctx, testlake.Copy(t), Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if _, err := q.PublishOnchainLegs(ctx); err != nil { // the views the SQL names
		t.Fatal(err)
	}
	if err := q.onchainLegs(ctx); err != nil { // the label cascade it joins
		t.Fatal(err)
	}
	if err := q.onchainSide(ctx); err != nil { // and the balances
		t.Fatal(err)
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	for _, stmt := range []string{
		`CREATE TEMP TABLE fx_bands (wallet VARCHAR, token VARCHAR, band INTEGER, inflow DECIMAL(38, 6), outflow DECIMAL(38, 6),
			tx_count BIGINT, first_time TIMESTAMP, last_time TIMESTAMP, amount_in DECIMAL(38, 10), amount_out DECIMAL(38, 10))`,
		`CREATE TEMP TABLE fx_edges (token VARCHAR, wallet VARCHAR, block_time TIMESTAMP, dir INTEGER, amount DECIMAL(38, 10),
			usd DECIMAL(38, 6), self BOOLEAN)`,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	type sums struct {
		in, out, ain, aout int64 // whole USD and tokens
		n                  int64
		first, last        time.Time
	}
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	wallet := func(i int) string { return fmt.Sprintf("0x%040x", 0x100+i) }
	tokens := []string{"0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"}
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		for _, stmt := range []string{"DELETE FROM fx_bands", "DELETE FROM fx_edges"} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		want := map[[2]string]*sums{}
		add := func(tok, w string, dir int, usd, amount int64, at time.Time) *sums {
			s := want[[2]string{tok, w}]
			if s == nil {
				s = &sums{first: at, last: at}
				want[[2]string{tok, w}] = s
			}
			if dir > 0 {
				s.in, s.ain = s.in+usd, s.ain+amount
			} else {
				s.out, s.aout = s.out+usd, s.aout+amount
			}
			s.n++
			if at.Before(s.first) {
				s.first = at
			}
			if at.After(s.last) {
				s.last = at
			}
			return s
		}
		for _, tok := range tokens {
			nw := 4 + rng.IntN(20)
			for i := range nw {
				w := wallet(i)
				// One or two band rows a pair; figures from a small range, so ties occur.
				for band := range 1 + rng.IntN(2) {
					in, out := int64(rng.IntN(6))*100, int64(rng.IntN(4))*100
					at := t0.Add(time.Duration(rng.IntN(500)) * time.Hour)
					var inArg, outArg, ainArg, aoutArg any
					if in > 0 {
						inArg, ainArg = in, in/10
						add(tok, w, 1, in, in/10, at)
					}
					if out > 0 {
						outArg, aoutArg = out, out/10
						add(tok, w, -1, out, out/10, at)
					}
					if in == 0 && out == 0 {
						continue
					}
					n := int64(0)
					if in > 0 {
						n++
					}
					if out > 0 {
						n++
					}
					if _, err := conn.ExecContext(ctx, `INSERT INTO fx_bands VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
						w, tok, 2+band, inArg, outArg, n, at, at, ainArg, aoutArg); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The hour's legs: the base's first ranks often, any pair sometimes, and new
			// wallets; a large outflow drops a holder, a large inflow lifts one.
			for range rng.IntN(12) {
				i := rng.IntN(nw + 3)
				if rng.IntN(2) == 0 {
					i = rng.IntN(3)
				}
				dir, usd := 1, int64(rng.IntN(5))*100
				if rng.IntN(2) == 0 {
					dir = -1
				}
				if rng.IntN(4) == 0 {
					usd = 5000
				}
				at := t0.Add(time.Duration(600+rng.IntN(40)) * time.Hour)
				add(tok, wallet(i), dir, usd, usd/10, at)
				if _, err := conn.ExecContext(ctx, `INSERT INTO fx_edges VALUES (?, ?, ?, ?, ?, ?, false)`,
					tok, wallet(i), at, dir, usd/10, usd); err != nil {
					t.Fatal(err)
				}
			}
		}
		bands := filepath.Join(dir, fmt.Sprintf("bands%d.parquet", seed))
		edges := filepath.Join(dir, fmt.Sprintf("edges%d.parquet", seed))
		for _, stmt := range []string{
			"COPY fx_bands TO '" + bands + "' (FORMAT parquet)",
			"COPY fx_edges TO '" + edges + "' (FORMAT parquet)",
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		base := filepath.Join(t.TempDir(), "base")
		if _, err := lake.CopyQuery(ctx, conn, base, lake.OnchainHoldersBase, []string{"fx", "ethereum"}, holdersBasePublishSQL, []string{bands}); err != nil {
			t.Fatal(err)
		}
		rel, err := lake.OnchainHoldersBase.Path("fx", "ethereum")
		if err != nil {
			t.Fatal(err)
		}
		// The oracle: every pair's sums, ranked by net inflow, then wallet.
		type row struct {
			tok, w string
			s      *sums
		}
		var all []row
		for k, s := range want {
			all = append(all, row{k[0], k[1], s})
		}
		slices.SortFunc(all, func(a, b row) int {
			return cmp.Or(cmp.Compare(a.tok, b.tok), cmp.Compare(b.s.in-b.s.out, a.s.in-a.s.out), cmp.Compare(a.w, b.w))
		})
		for limit := 1; limit <= 6; limit++ {
			var exp []string
			per := map[string]int{}
			for _, r := range all {
				if per[r.tok] < limit {
					per[r.tok]++
					exp = append(exp, fmt.Sprintf("%s %s %d %d %d %d %s %s", r.tok, r.w, r.s.in, r.s.out, r.s.ain-r.s.aout, r.s.n,
						r.s.first.Format(time.DateTime), r.s.last.Format(time.DateTime)))
				}
			}
			var got []string
			for _, v := range queryRows(t, conn, onchainTokenHoldersSQL, "ethereum", time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), limit,
				"9999-12-31", []string{edges}, []string{filepath.Join(base, filepath.FromSlash(rel))}) {
				got = append(got, fmt.Sprintf("%s %s %.0f %.0f %.0f %d %s %s", v[0], v[1], v[3], v[4], v[5], v[7],
					v[8].(time.Time).Format(time.DateTime), v[9].(time.Time).Format(time.DateTime)))
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("seed %d, %d a token:\ngot  %q\nwant %q", seed, limit, got, exp)
			}
		}
	}
}
