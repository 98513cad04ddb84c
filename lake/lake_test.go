package lake_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"mdq/lake"
)

var update = flag.Bool("update", false, "rewrite docs/DATA.md from the registry")

// TestDataDoc: docs/DATA.md documents every table of the registry, exactly.
func TestDataDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "DATA.md")
	want := lake.DataDoc()
	if *update {
		if err := lake.WriteFileAtomic(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/DATA.md is stale: run go test ./lake -run TestDataDoc -update")
	}
	parsed := lake.ParseDataDoc(string(got))
	for _, tb := range lake.Tables() {
		cols := parsed[tb.Name]
		if len(cols) != len(tb.Columns) {
			t.Errorf("%s: DATA.md has %d columns, registry %d", tb.Name, len(cols), len(tb.Columns))
		}
	}
}

func TestPathRejectsBadPartitionValues(t *testing.T) {
	for _, v := range []string{"", "..", "a/b", `a\b`, "k=v"} {
		if _, err := lake.PredmktTrades.Path(v); err == nil {
			t.Errorf("Path(%q) accepted", v)
		}
	}
	p, err := lake.OnchainTransfers.Path("base", "2026-11-01")
	if err != nil || p != "onchain/transfers/chain=base/date=2026-11-01/transfers.parquet" {
		t.Fatalf("Path = %q, %v", p, err)
	}
}

// TestInterruptedWriteLeavesNoPartialFile: a write that fails midway (or is cancelled)
// leaves the previous file untouched and no temporary file behind.
func TestInterruptedWriteLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tb := lake.PredmktProfiles
	ctx := context.Background()
	if _, err := w.Write(ctx, tb, nil, func(app lake.AppendFunc) error {
		return app("0xaaa", "old", "")
	}); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "predmkt/profiles/profiles.parquet")
	before, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}

	boom := errors.New("crash mid-write")
	for name, fill := range map[string]func(lake.AppendFunc) error{
		"error after rows": func(app lake.AppendFunc) error {
			for i := 0; i < 1000; i++ {
				if err := app("0xbbb", "new", ""); err != nil {
					return err
				}
			}
			return boom
		},
		"wrong arity": func(app lake.AppendFunc) error { return app("0xccc") },
	} {
		if _, err := w.Write(ctx, tb, nil, fill); err == nil {
			t.Fatalf("%s: write succeeded", name)
		}
		after, _ := os.ReadFile(final)
		if string(after) != string(before) {
			t.Fatalf("%s: the previous file changed", name)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Write(cctx, tb, nil, func(app lake.AppendFunc) error { return app("0xddd", "x", "") }); err == nil {
		t.Fatal("cancelled write succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(final))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
	// The file that survived is the complete old one.
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var n int
	var name string
	if err := db.QueryRow("SELECT count(*), min(pseudonym) FROM read_parquet(?)", final).Scan(&n, &name); err != nil || n != 1 || name != "old" {
		t.Fatalf("survivor: n=%d name=%q err=%v", n, name, err)
	}
}

// TestWriteSortsAndBoundsRowGroups: files are sorted by the registry's sort key and
// split into row groups of at most RowGroup rows, with statistics.
func TestWriteSortsAndBoundsRowGroups(t *testing.T) {
	dir := t.TempDir()
	w, _ := lake.NewWriter(dir)
	defer w.Close()
	tb := &lake.Table{Name: "t", Prefix: "x", File: "f.parquet", RowGroup: 2048, // DuckDB rounds row groups to its 2048-row vectors
		Columns: []lake.Column{{Name: "k", Type: "VARCHAR"}, {Name: "v", Type: "BIGINT"}}, SortBy: []string{"k", "v"}}
	n, err := w.Write(context.Background(), tb, nil, func(app lake.AppendFunc) error {
		for i := 20000; i > 0; i-- {
			if err := app(string(rune('a'+i%5)), int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 20000 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	f := filepath.Join(dir, "x/f.parquet")
	var groups, maxRows int
	if err := db.QueryRow("SELECT count(DISTINCT row_group_id), max(row_group_num_rows) FROM parquet_metadata(?)", f).Scan(&groups, &maxRows); err != nil {
		t.Fatal(err)
	}
	if groups < 9 || maxRows > 2048 {
		t.Fatalf("row groups=%d max rows=%d", groups, maxRows)
	}
	var stats int
	db.QueryRow("SELECT count(*) FROM parquet_metadata(?) WHERE stats_min IS NOT NULL", f).Scan(&stats) //nolint:errcheck
	if stats == 0 {
		t.Fatal("no column statistics")
	}
	var unsorted int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT k, v, lag(k) OVER () pk, lag(v) OVER () pv FROM read_parquet(?))
		WHERE pk > k OR (pk = k AND pv > v)`, f).Scan(&unsorted); err != nil || unsorted != 0 {
		t.Fatalf("unsorted rows=%d err=%v", unsorted, err)
	}
}
