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

// emptyFile is a Parquet file of no rows with t's registry columns, under the hive
// directories hive (key=value each, none for a plain list) so that a read with
// hive_partitioning finds the same columns as in the lake's files, under values no
// filter keeps. One per (table, hive path) per store, written once.
func (q *Queries) emptyFile(t *lake.Table, hive ...string) (string, error) {
	v, _ := q.ext.LoadOrStore(emptyFilesKey{}, &emptyFiles{files: map[string]string{}})
	e := v.(*emptyFiles)
	e.mu.Lock()
	defer e.mu.Unlock()
	key := t.Name + "/" + strings.Join(hive, "/")
	if f, ok := e.files[key]; ok {
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
	sub := filepath.Join(append([]string{e.dir, t.Name}, hive...)...)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return "", err
	}
	f := filepath.Join(sub, t.File)
	tmp := f + ".tmp"
	// DuckDB takes no bound parameters in COPY; the path is the store's own temporary
	// directory, quoted.
	if _, err := q.db.Exec("COPY (SELECT " + strings.Join(cols, ", ") + " WHERE false) TO " + lake.QuoteString(tmp) + " (FORMAT parquet)"); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, f); err != nil {
		return "", err
	}
	e.files[key] = f
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
