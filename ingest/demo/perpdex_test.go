package demo

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/lake"
)

type perpdexCountProgress struct{ n int }

func (p *perpdexCountProgress) Start(int) {}
func (p *perpdexCountProgress) Step(name string) {
	if name == "perpdex" {
		p.n++
	}
}
func (p *perpdexCountProgress) Done() {}

var perpdexTestEnd = time.Date(2026, 4, 12, 15, 37, 0, 0, time.UTC)

// perpdexGenerate runs only the perpetuals generator into a fresh directory, the way
// Run sets up each area, and returns the lake directory and the generator.
func perpdexGenerate(t testing.TB, scale string, seed uint64, end time.Time) (string, *Generator) {
	t.Helper()
	dir := t.TempDir()
	sc := Scales[scale]
	prog := &perpdexCountProgress{}
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	end = end.UTC().Truncate(time.Minute)
	g := &Generator{Opt: Options{Dir: dir, Scale: scale, Seed: seed, End: end, Progress: prog},
		Scale: sc, End: end, Start: end.Add(-time.Duration(sc.Days) * 24 * time.Hour), W: w}
	if err := genPerpdex(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if want := len(g.Days()) + 1; prog.n != want {
		t.Fatalf("perpdex steps = %d, want %d", prog.n, want)
	}
	return dir, g
}

func perpdexGlob(dir string, t *lake.Table) string {
	return lake.QuoteString(filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(t.Glob()))))
}

func perpdexTS(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05") + "'"
}

func TestPerpdexGenerator(t *testing.T) {
	dir, g := perpdexGenerate(t, "tiny", 42, perpdexTestEnd)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fills := "read_parquet(" + perpdexGlob(dir, lake.PerpdexFills) + ", hive_partitioning=false)"
	positions := "read_parquet(" + perpdexGlob(dir, lake.PerpdexPositions) + ", hive_partitioning=false)"
	one := func(q string, dst ...any) {
		t.Helper()
		if err := db.QueryRow(q).Scan(dst...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// Position state machine: start_position chains per (wallet, coin), closed_pnl is
	// the closing part against the average entry, and what is left is the final
	// snapshot's szi.
	type state struct{ run, entry float64 }
	st := map[[2]string]*state{}
	rows, err := db.Query(`SELECT wallet, coin, side, px, sz, dir, start_position, closed_pnl, liquidation
		FROM ` + fills + ` ORDER BY wallet, coin, time, tid`)
	if err != nil {
		t.Fatal(err)
	}
	nFills, nClosing, nFlips := 0, 0, 0
	for rows.Next() {
		var wallet, coin, side, dir string
		var px, sz, start, closed float64
		var liq bool
		if err := rows.Scan(&wallet, &coin, &side, &px, &sz, &dir, &start, &closed, &liq); err != nil {
			t.Fatal(err)
		}
		nFills++
		k := [2]string{wallet, coin}
		s := st[k]
		if s == nil {
			s = &state{}
			st[k] = s
		}
		if math.Abs(start-s.run) > 1e-9*math.Max(1, math.Abs(s.run)) {
			t.Fatalf("%s %s: start_position %v, running position %v", wallet, coin, start, s.run)
		}
		d := sz
		if side == "A" {
			d = -sz
		}
		if sz <= 0 || (side != "A" && side != "B") {
			t.Fatalf("bad fill side/size %s %v", side, sz)
		}
		var want float64
		var wantDir string
		a0 := math.Abs(s.run)
		switch {
		case a0 < 1e-12:
			wantDir = map[bool]string{true: "Open Long", false: "Open Short"}[d > 0]
			s.entry = px
		case s.run*d > 0:
			wantDir = map[bool]string{true: "Open Long", false: "Open Short"}[d > 0]
			s.entry = (a0*s.entry + sz*px) / (a0 + sz)
		case sz <= a0*(1+1e-9):
			wantDir = map[bool]string{true: "Close Long", false: "Close Short"}[s.run > 0]
			want = sz * (px - s.entry) * math.Copysign(1, s.run)
			nClosing++
		default:
			wantDir = map[bool]string{true: "Long > Short", false: "Short > Long"}[s.run > 0]
			want = a0 * (px - s.entry) * math.Copysign(1, s.run)
			s.entry = px
			nFlips++
		}
		if dir != wantDir {
			t.Fatalf("%s %s: dir %q, want %q (start %v, delta %v)", wallet, coin, dir, wantDir, start, d)
		}
		if math.Abs(closed-want) > 1e-5+1e-9*sz*px {
			t.Fatalf("%s %s: closed_pnl %v, recomputed %v", wallet, coin, closed, want)
		}
		prev := s.run
		s.run += d
		if math.Abs(s.run) < 1e-9*math.Max(1, math.Abs(prev)) {
			s.run = 0
		}
		if liq && s.run != 0 {
			t.Fatalf("%s %s: liquidation left position %v", wallet, coin, s.run)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if nFills < 10_000 || nClosing < 1000 || nFlips < 10 {
		t.Fatalf("too few fills: %d fills, %d closing, %d flips", nFills, nClosing, nFlips)
	}
	final := map[[2]string]float64{}
	rows, err = db.Query(`SELECT wallet, coin, szi FROM ` + positions + ` WHERE snapshot_ts = (SELECT max(snapshot_ts) FROM ` + positions + `)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w, c string
		var szi float64
		if err := rows.Scan(&w, &c, &szi); err != nil {
			t.Fatal(err)
		}
		final[[2]string{w, c}] = szi
	}
	rows.Close()
	open := 0
	for k, s := range st {
		if s.run == 0 {
			if _, ok := final[k]; ok {
				t.Fatalf("%v is flat by fills but in the final snapshot", k)
			}
			continue
		}
		open++
		if szi, ok := final[k]; !ok || math.Abs(szi-s.run) > 1e-9*math.Max(1, math.Abs(s.run)) {
			t.Fatalf("%v: fills sum to %v, final snapshot szi %v (present %v)", k, s.run, szi, ok)
		}
	}
	if open != len(final) || open < 20 {
		t.Fatalf("open positions by fills %d, in final snapshot %d", open, len(final))
	}

	// Both sides of every trade.
	var bad, tids int64
	one(`SELECT count(*) FILTER (WHERE NOT (n = 2 AND buys = 1 AND takers = 1 AND pxs = 1 AND szs = 1 AND times = 1 AND hashes = 1 AND wallets = 2)), count(*)
		FROM (SELECT tid, count(*) n, count(*) FILTER (WHERE side = 'B') buys, count(*) FILTER (WHERE crossed) takers,
			count(DISTINCT px) pxs, count(DISTINCT sz) szs, count(DISTINCT time) times, count(DISTINCT hash) hashes, count(DISTINCT wallet) wallets
			FROM `+fills+` GROUP BY tid)`, &bad, &tids)
	if bad != 0 || tids*2 != int64(nFills) {
		t.Fatalf("%d of %d trades do not have two matching sides (%d fills)", bad, tids, nFills)
	}
	var trades int64
	one(`SELECT count(*) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexTrades)+`, hive_partitioning=false) a
		JOIN (SELECT tid, any_value(wallet) FILTER (WHERE side = 'B') b, any_value(wallet) FILTER (WHERE side = 'A') s FROM `+fills+` GROUP BY tid) f
		ON a.tid = f.tid AND a.buyer = f.b AND a.seller = f.s`, &trades)
	if trades == 0 {
		t.Fatal("archive trades do not match fills")
	}

	// Liquidations before and after the first published hourly label.
	var liqBefore, liqAfter, liqBad int64
	one(`SELECT count(*) FILTER (WHERE liquidation AND time < TIMESTAMP '2026-04-07'),
		count(*) FILTER (WHERE liquidation AND time >= TIMESTAMP '2026-04-07'),
		count(*) FILTER (WHERE liquidation <> (liq_mark_px IS NOT NULL) OR (liquidation AND NOT crossed) OR fee <= 0)
		FROM `+fills, &liqBefore, &liqAfter, &liqBad)
	if liqBefore < 3 || liqAfter < 3 || liqBad != 0 {
		t.Fatalf("liquidations before %d, after %d, malformed %d", liqBefore, liqAfter, liqBad)
	}

	// Builder fills on every day of history, with builder_fee; deployer fees on xyz.
	var builders, bDays, bBad, nonUSD, dep, depBad int64
	one(`SELECT count(DISTINCT builder) FILTER (WHERE builder IS NOT NULL),
		count(DISTINCT time::DATE) FILTER (WHERE builder IS NOT NULL AND time >= `+perpdexTS(g.Start)+`),
		count(*) FILTER (WHERE (builder IS NULL) <> (builder_fee IS NULL) OR NOT regexp_full_match(coalesce(builder, '0x' || repeat('0', 40)), '0x[0-9a-f]{40}')),
		count(*) FILTER (WHERE builder IS NOT NULL AND fee_token <> 'USDC'),
		count(*) FILTER (WHERE deployer_fee IS NOT NULL AND dex = 'xyz' AND coin LIKE 'xyz:%'),
		count(*) FILTER (WHERE (deployer_fee IS NULL) <> (dex = ''))
		FROM `+fills, &builders, &bDays, &bBad, &nonUSD, &dep, &depBad)
	if builders < 3 || bDays != int64(len(g.Days())) || bBad != 0 || nonUSD == 0 || dep == 0 || depBad != 0 {
		t.Fatalf("builders %d, builder days %d of %d, malformed %d, non-USD builder fills %d, deployer fills %d/%d bad",
			builders, bDays, len(g.Days()), bBad, nonUSD, dep, depBad)
	}

	// What mdq's cohort derivation needs from the raw tables: an opening deposit at
	// 00:00 of the first date for every wallet funded before the simulation, hourly
	// account snapshots from 2026-04-07 on, and at least two trading wallets that no
	// snapshot ever saw (labelled in neither cohort table).
	var opening, funded, noSnap int64
	var maxAcct time.Time
	one(`SELECT count(*) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexLedger)+`, hive_partitioning=false)
		WHERE kind = 'deposit' AND time = (SELECT min(time) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexFills)+`, hive_partitioning=false))::DATE`, &opening)
	one(`SELECT count(DISTINCT wallet) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexAccounts)+`, hive_partitioning=false)
		WHERE snapshot_ts = (SELECT min(snapshot_ts) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexAccounts)+`, hive_partitioning=false))`, &funded)
	one(`SELECT max(snapshot_ts) FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexAccounts)+`, hive_partitioning=false)`, &maxAcct)
	one(`SELECT count(DISTINCT wallet) FROM `+fills+` WHERE wallet NOT IN
		(SELECT wallet FROM read_parquet(`+perpdexGlob(dir, lake.PerpdexAccounts)+`, hive_partitioning=false))`, &noSnap)
	if opening < funded || funded == 0 || maxAcct.Before(g.End.Add(-time.Hour)) || noSnap < 2 {
		t.Fatalf("opening deposits %d for %d wallets funded at the start, last account hour %v, traders without snapshots %d",
			opening, funded, maxAcct, noSnap)
	}

	// Same seed, same rows.
	dir2, _ := perpdexGenerate(t, "tiny", 42, perpdexTestEnd)
	for _, tb := range lake.Tables() {
		if tb.Area != "perpdex" || tb.Derived || tb.IngestOnly {
			continue
		}
		var h [2]string
		for i, d := range []string{dir, dir2} {
			q := `SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR FROM read_parquet(` + perpdexGlob(d, tb) + `) t`
			one(q, &h[i])
		}
		if h[0] != h[1] || h[0] == "0:0" {
			t.Errorf("%s: run hashes %s and %s", tb.Name, h[0], h[1])
		}
	}
}

// TestPerpdexTiming times one generation at the scale in MDQ_PERPDEX_SCALE (skipped
// unless set), for example MDQ_PERPDEX_SCALE=small.
func TestPerpdexTiming(t *testing.T) {
	sc := os.Getenv("MDQ_PERPDEX_SCALE")
	if sc == "" {
		t.Skip("set MDQ_PERPDEX_SCALE to time a generation")
	}
	t0 := time.Now()
	dir, g := perpdexGenerate(t, sc, 7, perpdexTestEnd)
	el := time.Since(t0)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tb := range lake.Tables() {
		if tb.Area != "perpdex" {
			continue
		}
		var n int64
		if err := db.QueryRow(`SELECT count(*) FROM read_parquet(` + perpdexGlob(dir, tb) + `)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-26s %10d rows", tb.Name, n)
	}
	t.Logf("%s: %d days in %v", sc, len(g.Days()), el)
	fmt.Fprintln(os.Stderr, "perpdex", sc, "generated in", el)
}
