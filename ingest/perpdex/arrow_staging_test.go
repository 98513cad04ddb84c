package perpdex

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"mdq/ingest"
)

// loadBudget loads batches of files into root as the CLI does (a stage per batch),
// with the stage's Arrow budget set to budget (0: every row through the CSV files).
// It returns each batch's summary and rejected files.
func loadBudget(t *testing.T, root string, budget int64, files ...string) string {
	t.Helper()
	sum, rejected, l := loadWith(t, root, Options{}, func(st *ingest.Stage, _ *Loader) {
		if budget >= 0 {
			st.SetArrowBudget(budget)
		}
	}, files...)
	out := ""
	for _, r := range rejected {
		out += fmt.Sprintf("rejected %s; ", filepath.Base(r.file))
	}
	return out + fmt.Sprintf("%s; derived %d; tables %v", sum.String(), l.derived, l.Tables)
}

// TestArrowStagingAsCSV: rows handed to DuckDB as Arrow batches (the duckdb_arrow
// build) give the lake the CSV hand-off gives, file for file and byte for byte, with
// the same summaries: on the fixtures, a generated day of 70,000 fills (two batches
// of 65,536 rows), a second load over the stored lake with the same day repeated, a
// file rolled back for a malformed line, and a budget that sends part of the rows to
// the files (partitions holding both forms).
func TestArrowStagingAsCSV(t *testing.T) {
	if !ingest.ArrowStaging {
		t.Skip("built without the duckdb_arrow tag: every row goes through the CSV")
	}
	day, _ := nodeFile(t, 70_000, false)
	// A day's fills, more than one Arrow batch of them, then a malformed line: the
	// file's rows are dropped again, cut batches included.
	good, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad_node_fills.jsonl")
	writeFile(t, bad, string(good)+"{\"block_number\": oops}\n")
	cases := []struct {
		name    string
		budget  int64 // -1: the default
		batches [][]string
	}{
		{"fixtures", -1, [][]string{fixtures()}},
		{"a generated day", -1, [][]string{{day}}},
		{"the day again over the stored lake", -1, [][]string{{day}, {"testdata/node_fills.jsonl", day}}},
		{"a file rolled back", -1, [][]string{{"testdata/node_fills.jsonl", bad}}},
		{"budget spent part way", 4 << 20, [][]string{{day, "testdata/node_fills.jsonl"}, fixtures()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			viaCSV, viaArrow := t.TempDir(), t.TempDir()
			for i, files := range c.batches {
				a := loadBudget(t, viaCSV, 0, files...)
				b := loadBudget(t, viaArrow, c.budget, files...)
				if a != b {
					t.Errorf("batch %d summary:\ncsv   %s\narrow %s", i, a, b)
				}
			}
			a, b := lakeFiles(t, viaCSV), lakeFiles(t, viaArrow)
			if len(a) == 0 {
				t.Fatal("nothing written")
			}
			if !reflect.DeepEqual(keys(a), keys(b)) {
				t.Fatalf("files differ:\ncsv   %v\narrow %v", keys(a), keys(b))
			}
			for rel, x := range a {
				if !bytes.Equal(x, b[rel]) {
					t.Errorf("%s: not the same bytes (%d, %d)", rel, len(x), len(b[rel]))
				}
			}
		})
	}
}

// lakeFiles is every Parquet file under root, by path relative to it.
func lakeFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".parquet" {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
