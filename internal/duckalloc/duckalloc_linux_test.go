//go:build linux && cgo

package duckalloc

import (
	"database/sql"
	"errors"
	"syscall"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// TestSetDecayReadsBack: the decay times set are those jemalloc then reports, for an
// arena DuckDB's threads already use and for the default of arenas made later; and a
// query still runs (the allocator DuckDB uses is the one tuned).
func TestSetDecayReadsBack(t *testing.T) {
	// A query first, so that DuckDB's threads have arenas of their own.
	db, _ := afterQuery(t, "SELECT count(*) FROM range(1000000) GROUP BY range % 7 LIMIT 1")
	var n int64
	for _, ms := range []int64{10_000, 2_500} {
		if err := SetDecay(ms); err != nil {
			t.Fatal(err)
		}
		for _, arena := range []int{-1, 0} {
			d, m, err := Decay(arena)
			if err != nil {
				t.Fatal(err)
			}
			if d != ms || m != ms {
				t.Fatalf("arena %d after SetDecay(%d): dirty %d, muzzy %d", arena, ms, d, m)
			}
		}
		if err := db.QueryRow("SELECT sum(range) FROM range(1000000)").Scan(&n); err != nil || n != 499999500000 {
			t.Fatalf("query after SetDecay(%d): %d, %v", ms, n, err)
		}
	}
}

// TestSetDecayLeavesTheHugeArena: jemalloc's arena for huge allocations (256 MB and
// more in DuckDB) purges at once; SetDecay, called after DuckDB made one, leaves it so
// and sets every other initialised arena.
func TestSetDecayLeavesTheHugeArena(t *testing.T) {
	// One list of 40 M BIGINTs is one allocation of about 320 MB.
	if _, n := afterQuery(t, "SELECT len(list(range)) FROM range(40000000)"); n != 40_000_000 {
		t.Fatalf("list of %d", n)
	}
	if err := SetDecay(7_000); err != nil {
		t.Fatal(err)
	}
	var set, huge int
	for i := 0; i < 4096; i++ { // bounded: past the last arena mallctl answers an error
		d, m, err := Decay(i)
		if errors.Is(err, syscall.EFAULT) {
			continue // not initialised
		}
		if err != nil {
			break // past the last arena
		}
		switch {
		case d == 0 && m == 0:
			huge++
		case d == 7_000 && m == 7_000:
			set++
		default:
			t.Fatalf("arena %d: dirty %d ms, muzzy %d ms", i, d, m)
		}
	}
	if huge != 1 || set == 0 {
		t.Fatalf("%d arenas purging at once (want the huge one), %d set", huge, set)
	}
}

// afterQuery opens an in-memory DuckDB, runs query on it (its one BIGINT is returned)
// and restores the decay of arena 0 at the end of the test.
func afterQuery(t *testing.T, query string) (*sql.DB, int64) {
	t.Helper()
	if !Available() {
		t.Fatal("duckdb-go is linked without its bundled jemalloc (duckdb_je_mallctl missing)")
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	d0, _, err := Decay(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetDecay(d0) }) //nolint:errcheck // the package default again
	return db, n
}
