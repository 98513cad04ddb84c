package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"mdq/ingest/demo"
	"mdq/internal/testlake"
	"mdq/lake"
)

// tableHashes returns, per table, the row count and an order-independent hash of every
// row (DuckDB hashes each row as a struct; the sum is a HUGEINT, so it cannot wrap).
func tableHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	for _, tb := range lake.Tables() {
		files, _ := tb.Files(dir)
		if len(files) == 0 {
			out[tb.Name] = "empty"
			continue
		}
		var n int64
		var h string
		err := db.QueryRow(`SELECT count(*), coalesce(sum(hash(x)::HUGEINT), 0)::VARCHAR
			FROM (SELECT * FROM read_parquet(?::VARCHAR[])) x`, files).Scan(&n, &h)
		if err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		out[tb.Name] = fmt.Sprintf("%d rows, hash %s", n, h)
	}
	return out
}

// TestDemoDeterminism: the same seed and end give the same rows in every table; a
// different seed gives different rows.
func TestDemoDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("generates three tiny lakes")
	}
	a := testlake.Tiny(t)
	b := t.TempDir()
	if _, err := demo.Run(context.Background(), demo.Options{Dir: b, Scale: "tiny", Seed: testlake.Seed, End: testlake.End}); err != nil {
		t.Fatal(err)
	}
	c := t.TempDir()
	if _, err := demo.Run(context.Background(), demo.Options{Dir: c, Scale: "tiny", Seed: testlake.Seed + 1, End: testlake.End}); err != nil {
		t.Fatal(err)
	}
	ha, hb, hc := tableHashes(t, a), tableHashes(t, b), tableHashes(t, c)
	differ := 0
	for _, tb := range lake.Tables() {
		if ha[tb.Name] == "empty" && !tb.Derived && !tb.IngestOnly {
			t.Errorf("%s: the demo lake has no rows", tb.Name)
		}
		if ha[tb.Name] != hb[tb.Name] {
			t.Errorf("%s: same seed, different rows: %s vs %s", tb.Name, ha[tb.Name], hb[tb.Name])
		}
		if ha[tb.Name] != hc[tb.Name] {
			differ++
		}
	}
	if differ == 0 {
		t.Error("a different seed gave identical rows in every table")
	}
}

// TestDemoSchemaMatchesDataDoc: every Parquet file of every table has exactly the
// columns and types docs/DATA.md lists, in order.
func TestDemoSchemaMatchesDataDoc(t *testing.T) {
	dir := testlake.Tiny(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "DATA.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := lake.ParseDataDoc(string(doc))
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	for _, tb := range lake.Tables() {
		files, _ := tb.Files(dir)
		if len(files) == 0 {
			if !tb.Derived && !tb.IngestOnly { // derived tables are built by mdq rebuild, ingest-only ones by ingest
				t.Errorf("%s: no files", tb.Name)
			}
			continue
		}
		for _, f := range files {
			rows, err := db.Query("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false)", f)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var got [][2]string
			for rows.Next() {
				var name, typ string
				var a, b, c, d sql.NullString
				if err := rows.Scan(&name, &typ, &a, &b, &c, &d); err != nil {
					t.Fatal(err)
				}
				got = append(got, [2]string{name, typ})
			}
			rows.Close()
			if len(got) != len(want[tb.Name]) {
				t.Errorf("%s: %d columns, DATA.md lists %d", f, len(got), len(want[tb.Name]))
				continue
			}
			for i := range got {
				if got[i] != want[tb.Name][i] {
					t.Errorf("%s column %d: file has %v, DATA.md %v", f, i, got[i], want[tb.Name][i])
				}
			}
		}
	}
}

// TestDemoRefusesNonEmptyDir: without --force a non-empty directory is refused with a
// clear message and left as it was.
func TestDemoRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644) //nolint:errcheck
	_, err := demo.Run(context.Background(), demo.Options{Dir: dir, Scale: "tiny", Seed: 1, End: testlake.End})
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory changed: %d entries", len(entries))
	}
	if _, err := demo.Run(context.Background(), demo.Options{Dir: dir, Scale: "nope", Seed: 1, End: testlake.End, Force: true}); err == nil {
		t.Fatal("unknown scale accepted")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal("a bad scale changed the directory")
	}
}

// TestDemoForceKeepsOtherFiles: --force replaces the lake but keeps other files
// (credentials live beside the lake).
func TestDemoForceKeepsOtherFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a lake")
	}
	dir := testlake.Copy(t)
	keep := filepath.Join(dir, "mdq.db")
	os.WriteFile(keep, []byte("keys"), 0o600) //nolint:errcheck
	stale := filepath.Join(dir, "archive", "venue=predmkt", "date=1999-01-01")
	os.MkdirAll(stale, 0o755) //nolint:errcheck
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := demo.Run(ctx, demo.Options{Dir: dir, Scale: "tiny", Seed: 3, End: testlake.End, Force: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "keys" {
		t.Fatal("--force removed a non-lake file")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("--force kept a stale partition")
	}
}
