package query

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"mdq/lake"
)

// A route that knows which partition files it needs (the per-day tables' plans) names
// them to read_parquet instead of filtering the table's view by date: binding a view
// globs every partition of the table and evaluates the date filter per file, about 2 ms
// of CPU per view at 46 dates and growing with the lake, against 0.4 ms for a named
// file (docs/PERFORMANCE.md, "Market list, liquidations, smart_money"). read_parquet needs at
// least one file, so an empty list is given as a file of no rows with the table's
// registry columns, written once per store into a directory of its own (removed at
// Close).

type emptyFilesKey struct{}

type emptyFiles struct {
	mu    sync.Mutex
	dir   string
	files map[string]string // table name -> file
}

// fileSep separates the files of a list: the unit separator (chr(31) in the SQL), which
// no lake path holds, where a comma may.
const fileSep = "\x1f"

// fileList is the list read_parquet(string_split($n, chr(31))) takes for the given
// files of t: the files, or t's empty file when there are none.
func (q *Queries) fileList(t *lake.Table, files []string) (string, error) {
	for _, f := range files {
		if strings.Contains(f, fileSep) {
			return "", fmt.Errorf("file path %q holds a unit separator", f)
		}
	}
	if len(files) > 0 {
		return strings.Join(files, fileSep), nil
	}
	return q.emptyFile(t)
}

// partitionFiles maps dates to t's partition files in the lake.
func (q *Queries) partitionFiles(t *lake.Table, dates []string) ([]string, error) {
	out := make([]string, 0, len(dates))
	for _, d := range dates {
		rel, err := t.Path(d)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.Join(q.dir, filepath.FromSlash(rel)))
	}
	return out, nil
}

// emptyFile is a Parquet file of no rows with t's registry columns.
func (q *Queries) emptyFile(t *lake.Table) (string, error) {
	v, _ := q.ext.LoadOrStore(emptyFilesKey{}, &emptyFiles{files: map[string]string{}})
	e := v.(*emptyFiles)
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.files[t.Name]; ok {
		return f, nil
	}
	if e.dir == "" {
		d, err := os.MkdirTemp("", "mdq-empty-")
		if err != nil {
			return "", err
		}
		e.dir = d
	}
	cols := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		cols = append(cols, fmt.Sprintf("CAST(NULL AS %s) AS %s", c.Type, lake.QuoteIdent(c.Name)))
	}
	f := filepath.Join(e.dir, t.Name+".parquet")
	tmp := f + ".tmp"
	if _, err := q.db.Exec("COPY (SELECT " + strings.Join(cols, ", ") + " WHERE false) TO " + lake.QuoteString(tmp) + " (FORMAT parquet)"); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, f); err != nil {
		return "", err
	}
	e.files[t.Name] = f
	return f, nil
}

// removeEmptyFiles removes the store's empty files (Close).
func (q *Queries) removeEmptyFiles() {
	if v, ok := q.ext.Load(emptyFilesKey{}); ok {
		e := v.(*emptyFiles)
		e.mu.Lock()
		if e.dir != "" {
			os.RemoveAll(e.dir) //nolint:errcheck
		}
		e.mu.Unlock()
	}
}
