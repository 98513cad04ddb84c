package lake_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdq/lake"
)

// copyTable is a partitioned table for the CopyQuery tests (not registered).
var copyTable = &lake.Table{Name: "copy_t", Prefix: "c", Partitions: []string{"date"}, File: "c.parquet", RowGroup: 2048,
	Columns: []lake.Column{{Name: "ts", Type: "TIMESTAMP"}, {Name: "k", Type: "VARCHAR"}, {Name: "v", Type: "BIGINT"}},
	SortBy:  []string{"k", "v"}}

func copyDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dirNames lists the file names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestCopyQueryWritesRegistrySchemaSorted: a partition written straight from a query
// lands at the table's path with exactly the registry's columns and types in registry
// order (whatever order and types the query returns, extra columns dropped), sorted by
// the sort key, in bounded row groups, with the bound values as given (a quote in a
// value is data, not SQL), and no other file beside it.
func TestCopyQueryWritesRegistrySchemaSorted(t *testing.T) {
	dir := t.TempDir()
	db := copyDB(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	// v is INTEGER here, ts a VARCHAR and k comes last: the file must still follow
	// the registry.
	n, err := lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-20"},
		`SELECT CAST(20000 - range AS INTEGER) AS v, 'extra' AS junk, strftime($1::TIMESTAMP, '%Y-%m-%d %H:%M:%S') AS ts,
		        CASE WHEN range % 3 = 0 THEN $2 ELSE 'b' END AS k
		 FROM range($3::BIGINT) -- a trailing comment;`, day, "o'brien", 20000)
	if err != nil || n != 20000 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	final := filepath.Join(dir, "c", "date=2026-11-20", "c.parquet")
	if names := dirNames(t, filepath.Dir(final)); len(names) != 1 || names[0] != "c.parquet" {
		t.Fatalf("partition directory holds %v", names)
	}
	rows, err := db.Query("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false)", final)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, typ string
		var a, b, c, d sql.NullString
		if err := rows.Scan(&name, &typ, &a, &b, &c, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+" "+typ)
	}
	rows.Close()
	var want []string
	for _, c := range copyTable.Columns {
		want = append(want, c.Name+" "+c.Type)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("schema %v, registry %v", got, want)
	}
	var unsorted, quoted, groups, maxRows int
	var ts time.Time
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT k, v, lag(k) OVER () pk, lag(v) OVER () pv FROM read_parquet(?))
		WHERE pk > k OR (pk = k AND pv > v)`, final).Scan(&unsorted); err != nil || unsorted != 0 {
		t.Fatalf("unsorted rows=%d err=%v", unsorted, err)
	}
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE k = 'o''brien'), min(ts) FROM read_parquet(?)", final).Scan(&quoted, &ts); err != nil || quoted != 6667 || !ts.Equal(day) {
		t.Fatalf("bound values: %d rows with the quoted key, ts %v, err %v", quoted, ts, err)
	}
	if err := db.QueryRow("SELECT count(DISTINCT row_group_id), max(row_group_num_rows) FROM parquet_metadata(?)", final).Scan(&groups, &maxRows); err != nil || groups < 9 || maxRows > 2048 {
		t.Fatalf("row groups=%d max rows=%d err=%v", groups, maxRows, err)
	}
	// A query without rows replaces nothing.
	before, _ := os.ReadFile(final)
	if n, err := lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-20"},
		"SELECT now() AS ts, 'x' AS k, 1 AS v WHERE false"); err != nil || n != 0 {
		t.Fatalf("empty copy: n=%d err=%v", n, err)
	}
	if after, _ := os.ReadFile(final); string(after) != string(before) {
		t.Fatal("an empty result replaced the partition")
	}
	if names := dirNames(t, filepath.Dir(final)); len(names) != 1 {
		t.Fatalf("partition directory holds %v", names)
	}
}

// TestInterruptedCopyLeavesNoPartialFile: a copy that fails midway (a runtime error
// after rows were produced, a column missing), is cancelled before it starts, or is
// interrupted while DuckDB runs it leaves the previous file byte for byte and no
// temporary file; on a partition without a file it leaves none.
func TestInterruptedCopyLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	db := copyDB(t)
	ctx := context.Background()
	good := "SELECT TIMESTAMP '2026-11-20 00:00:00' AS ts, 'old' AS k, range AS v FROM range(10)"
	if _, err := lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-20"}, good); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "c", "date=2026-11-20", "c.parquet")
	before, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: copy succeeded", name)
		}
		if after, _ := os.ReadFile(final); string(after) != string(before) {
			t.Fatalf("%s: the previous file changed", name)
		}
		if names := dirNames(t, filepath.Dir(final)); len(names) != 1 || names[0] != "c.parquet" {
			t.Fatalf("%s: partition directory holds %v", name, names)
		}
	}
	_, err = lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-20"},
		`SELECT TIMESTAMP '2026-11-20 00:00:00' AS ts, 'new' AS k,
		        CASE WHEN range = 150000 THEN error('crash mid-copy') ELSE range END AS v FROM range(300000)`)
	check("runtime error", err)
	_, err = lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-20"}, "SELECT 'new' AS k, 1 AS v")
	check("missing column", err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = lake.CopyQuery(cctx, db, dir, copyTable, []string{"2026-11-20"}, good)
	check("cancelled", err)

	// Interrupted while running: a query that would take a long time, cancelled once
	// its temporary file exists. The outcome must not depend on how far it got.
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	done := make(chan error, 1)
	go func() {
		_, err := lake.CopyQuery(ictx, db, dir, copyTable, []string{"2026-11-20"},
			`SELECT TIMESTAMP '2026-11-20 00:00:00' AS ts, 'new' AS k, CAST(max(hash(range)) % 1000 AS BIGINT) AS v
			 FROM range(5000000000)`)
		done <- err
	}()
	for i := 0; ; i++ {
		if len(dirNames(t, filepath.Dir(final))) > 1 || i == 2000 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let DuckDB start; either way the copy must leave nothing
	icancel()
	select {
	case err := <-done:
		check("interrupted", err)
		if !errors.Is(err, context.Canceled) {
			t.Logf("interrupted copy: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a cancelled copy kept running")
	}

	// A partition that had no file gets none from a failed copy.
	_, err = lake.CopyQuery(ctx, db, dir, copyTable, []string{"2026-11-21"},
		"SELECT TIMESTAMP '2026-11-21 00:00:00' AS ts, error('boom') AS k, 1 AS v")
	if err == nil {
		t.Fatal("failed copy succeeded")
	}
	if names := dirNames(t, filepath.Join(dir, "c", "date=2026-11-21")); len(names) != 0 {
		t.Fatalf("a failed copy left %v", names)
	}
}

// TestDataDocOneHeadingPerArea: docs/DATA.md prints each area's heading once, however
// many registry files register its tables, and every table under its own area.
func TestDataDocOneHeadingPerArea(t *testing.T) {
	seen := map[string]bool{}
	area := ""
	titles := map[string]string{"Prediction market": "predmkt", "Perpetuals venue": "perpdex", "On-chain": "onchain"}
	for _, line := range strings.Split(lake.DataDoc(), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			if seen[h] {
				t.Fatalf("heading %q printed twice", h)
			}
			seen[h], area = true, titles[h]
		}
		if name, ok := strings.CutPrefix(line, "### "); ok {
			if tb := lake.Get(name); tb == nil || tb.Area != area {
				t.Fatalf("table %s under the %q heading", name, area)
			}
		}
	}
	if len(seen) != 3 {
		t.Fatalf("headings %v", seen)
	}
}
