package query

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestParquetMetadataCacheSeesAReplacedFile: the per-wallet pool keeps DuckDB's Parquet
// footers between queries (parquet_metadata_cache; the main pool does not, since kept
// footers are never evicted). A file is published by writing a new file and renaming
// it over the old one, so a replaced file must be read afresh even when it has the old
// one's size and modification time to the second: DuckDB checks a local file's kept
// footer against its device, inode, size and modification time, and the rename gives
// it a new inode. The footer's statistics decide the answer here (a range no old row
// group holds is skipped), so a stale footer would answer 0 rows.
func TestParquetMetadataCacheSeesAReplacedFile(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	q, err := Open(ctx, dir, Options{NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, p := range []struct {
		name string
		db   *sql.DB
		want bool
	}{{"main", q.db, false}, {"per-wallet", q.walletDB, true}} {
		var on bool
		if err := p.db.QueryRowContext(ctx, "SELECT current_setting('parquet_metadata_cache')").Scan(&on); err != nil || on != p.want {
			t.Fatalf("%s pool: parquet_metadata_cache = %v (%v), want %v", p.name, on, err, p.want)
		}
	}
	path := filepath.Join(t.TempDir(), "x.parquet")
	old := time.Now().Add(-time.Hour).Truncate(time.Second) // past DuckDB's 10-second doubt
	write := func(base int) int64 {
		tmp := path + ".tmp"
		if _, err := q.db.ExecContext(ctx, fmt.Sprintf(
			"COPY (SELECT %d + range AS x FROM range(1000)) TO '%s' (FORMAT parquet, COMPRESSION uncompressed)", base, tmp)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(tmp, old, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	count := func(lo int) (n int64) {
		if err := q.walletDB.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet(?) WHERE x >= ?", path, lo).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sizeA := write(1_000_000)
	for i := 0; i < 3; i++ { // the footer is now cached
		if n := count(2_000_000); n != 0 {
			t.Fatalf("first file: %d rows at or above 2,000,000, want 0", n)
		}
	}
	sizeB := write(2_000_000)
	if sizeA != sizeB {
		t.Fatalf("the two files differ in size (%d, %d): the test needs them alike", sizeA, sizeB)
	}
	if n := count(2_000_000); n != 1000 {
		t.Fatalf("replaced file (same size and modification time): %d rows at or above 2,000,000, want 1000 (a stale footer)", n)
	}
}

// TestDuckDBKeepsNoCopyOfLakeFiles: DuckDB's external file cache (on by default since
// 1.3) keeps the bytes of every Parquet file it reads in its buffer pool, up to its
// memory limit; for local files the page cache already holds them, so the copy only
// added RSS (the large lake served at 3.9 to 4.0 GB at peak with it). The store turns
// it off: after reads through both pools, DuckDB holds no file bytes.
func TestDuckDBKeepsNoCopyOfLakeFiles(t *testing.T) {
	ctx := context.Background()
	q, err := Open(ctx, testlake.Copy(t), Options{NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	files, err := filepath.Glob(filepath.Join(q.dir, "onchain", "transfers", "*", "*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transfers files (%v)", err)
	}
	for _, db := range []*sql.DB{q.db, q.walletDB} {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(DISTINCT to_address) FROM read_parquet(?)", files).Scan(&n); err != nil || n == 0 {
			t.Fatalf("read %d receivers (%v)", n, err)
		}
	}
	var kept int64
	if err := q.db.QueryRowContext(ctx, `SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()
		WHERE tag = 'EXTERNAL_FILE_CACHE'`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != 0 {
		t.Fatalf("DuckDB keeps %d bytes of the files it read, want 0", kept)
	}
}
