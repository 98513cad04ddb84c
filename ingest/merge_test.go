package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"mdq/lake"
)

func readAll(t *testing.T, file string) [][2]string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT wallet, display_name FROM read_parquet(" + lake.QuoteString(file) + ") ORDER BY wallet")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestMergeIsIdempotentAndStagedRowsWin: merging the same rows twice changes nothing;
// a corrected row replaces the stored one; other rows are kept; of two staged rows
// with one key the later wins. With the key declared up front (Stage.Key) the stage
// notes the staged duplicates as it writes them and deduplicates only then; without
// it every merge deduplicates: both give the same lake.
func TestMergeIsIdempotentAndStagedRowsWin(t *testing.T) {
	for _, declared := range []bool{false, true} {
		t.Run(map[bool]string{false: "key at merge", true: "key declared"}[declared], func(t *testing.T) {
			testMergeIdempotent(t, declared)
		})
	}
}

func testMergeIdempotent(t *testing.T, declared bool) {
	root := t.TempDir()
	ctx := context.Background()
	tb := lake.PredmktProfiles
	merge := func(rows ...[3]string) MergeStats {
		t.Helper()
		s, err := NewStage(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if declared {
			if err := s.Key(tb, "wallet"); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range rows {
			if err := s.Append(tb, nil, r[0], r[1], r[2]); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := s.Merge(ctx, tb, []string{"wallet"})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	file := filepath.Join(root, "predmkt/profiles/profiles.parquet")
	ms := merge([3]string{"0xa", "p", "A"}, [3]string{"0xb", "q", "B"}, [3]string{"0xa", "p", "A2"})
	if ms.Written != 2 || ms.Deduplicated != 1 {
		t.Fatalf("first merge: %+v", ms)
	}
	want := [][2]string{{"0xa", "A2"}, {"0xb", "B"}}
	if got := readAll(t, file); !equal(got, want) {
		t.Fatalf("after first merge %v, want %v", got, want)
	}
	before, _ := os.ReadFile(file)
	ms = merge([3]string{"0xa", "p", "A2"}, [3]string{"0xb", "q", "B"})
	if ms.Written != 0 || ms.Deduplicated != 2 {
		t.Fatalf("repeat merge: %+v", ms)
	}
	after, _ := os.ReadFile(file)
	if got := readAll(t, file); !equal(got, want) || len(before) == 0 || len(after) == 0 {
		t.Fatalf("repeat merge changed rows: %v", got)
	}
	ms = merge([3]string{"0xb", "q", "B-corrected"}, [3]string{"0xc", "r", "C"})
	if ms.Written != 1 || ms.Deduplicated != 1 {
		t.Fatalf("correction merge: %+v", ms)
	}
	want = [][2]string{{"0xa", "A2"}, {"0xb", "B-corrected"}, {"0xc", "C"}}
	if got := readAll(t, file); !equal(got, want) {
		t.Fatalf("after correction %v, want %v", got, want)
	}
}

func equal(a, b [][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOpenDecompressesByContent: gzip, zstd and LZ4 are read by their magic bytes; a
// name that claims compression over plain content is refused.
func TestOpenDecompressesByContent(t *testing.T) {
	dir := t.TempDir()
	plain := "a\nb\n"
	var gz, zs, l4 bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write([]byte(plain))
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write([]byte(plain))
	zw.Close()
	lw := lz4.NewWriter(&l4)
	lw.Write([]byte(plain))
	lw.Close()
	for name, b := range map[string][]byte{"p.jsonl": []byte(plain), "g.gz": gz.Bytes(), "z.bin": zs.Bytes(), "l.lz4": l4.Bytes()} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		r, err := Open(p, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var lines []string
		if err := Lines(r, p, func(n int, b []byte) error { lines = append(lines, string(b)); return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.Close()
		if strings.Join(lines, ",") != "a,b" {
			t.Fatalf("%s: read %q", name, lines)
		}
	}
	p := filepath.Join(dir, "fake.gz")
	os.WriteFile(p, []byte(plain), 0o644)
	if _, err := Open(p, nil); err == nil {
		t.Fatal("plain content named .gz was accepted")
	}
	// A truncated LZ4 stream is an error at a line, not silence.
	p = filepath.Join(dir, "cut.lz4")
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 100000)
	var cut bytes.Buffer
	lw = lz4.NewWriter(&cut)
	lw.Write(big)
	lw.Close()
	os.WriteFile(p, cut.Bytes()[:cut.Len()/2], 0o644)
	r, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = Lines(r, p, func(int, []byte) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), p+":") {
		t.Fatalf("truncated lz4: %v", err)
	}
}

// TestLinesReportsFileAndLine: an error from the callback names FILE:LINE.
func TestLinesReportsFileAndLine(t *testing.T) {
	err := Lines(strings.NewReader("ok\n\nbad\n"), "in.jsonl", func(n int, b []byte) error {
		if string(b) == "bad" {
			return errors.New("not JSON")
		}
		return nil
	})
	if err == nil || err.Error() != "in.jsonl:3: not JSON" {
		t.Fatalf("got %v", err)
	}
}
