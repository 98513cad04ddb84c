package lake

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"mdq/internal/duckconn"
)

// Writer writes lake tables as sorted Parquet files, atomically: rows are staged in an
// in-memory DuckDB table, copied sorted to a temporary file beside the target, fsynced
// and renamed into place. A reader never sees a half-written file and a failure at any
// step leaves the previous file (or no file) where it was.
type Writer struct {
	root string
	db   *sql.DB
}

// NewWriter opens a writer for the lake at root. Each writer owns its own in-memory
// DuckDB, so writers in different goroutines do not contend.
func NewWriter(root string) (*Writer, error) {
	db, err := duckconn.Open("")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &Writer{root: root, db: db}, nil
}

// Close releases the writer's DuckDB.
func (w *Writer) Close() error { return w.db.Close() }

// Root returns the lake directory.
func (w *Writer) Root() string { return w.root }

// AppendFunc adds one row; values follow the table's column order. Accepted Go types:
// string, int64, int32, int, float64, bool, time.Time and nil for NULL.
type AppendFunc func(vals ...any) error

var stageSeq atomic.Int64

// Write replaces one partition file of t with the rows fill appends and returns the
// number of rows written. partVals gives the partition values in t.Partitions order.
func (w *Writer) Write(ctx context.Context, t *Table, partVals []string, fill func(AppendFunc) error) (int64, error) {
	rel, final, err := partitionFile(w.root, t, partVals)
	if err != nil {
		return 0, err
	}

	conn, err := w.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()

	// Stage the rows. The stage name is internal (a counter), never input.
	stage := fmt.Sprintf("stage_%d", stageSeq.Add(1))
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = quoteIdent(c.Name) + " " + c.Type
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE "+stage+" ("+strings.Join(cols, ", ")+")"); err != nil {
		return 0, fmt.Errorf("stage %s: %w", t.Name, err)
	}
	defer conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+stage) //nolint:errcheck

	var n int64
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", stage)
		if err != nil {
			return err
		}
		row := make([]driver.Value, len(t.Columns))
		ferr := fill(func(vals ...any) error {
			if len(vals) != len(t.Columns) {
				return fmt.Errorf("table %s: row has %d values for %d columns", t.Name, len(vals), len(t.Columns))
			}
			for i, v := range vals {
				switch x := v.(type) {
				case int:
					row[i] = int64(x)
				default:
					row[i] = x
				}
			}
			n++
			if n%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return app.AppendRow(row...)
		})
		cerr := app.Close()
		if ferr != nil {
			return ferr
		}
		return cerr
	})
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", rel, err)
	}

	sel := "SELECT * FROM " + stage + orderBy(t)
	if _, err := copyAtomic(ctx, conn, t, final, sel, nil, true); err != nil {
		return 0, fmt.Errorf("write %s: %w", rel, err)
	}
	return n, nil
}

// Execer runs a statement: *sql.DB, *sql.Conn and *sql.Tx are Execers.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CopyQuery replaces one partition file of t under root with the rows of query, run
// with the bound args by the DuckDB behind db and written by it straight to Parquet:
// no row passes through Go. The layout and guarantees are Writer.Write's: the file is
// sorted by t.SortBy with t's row groups and compression, written to a hidden temporary
// file beside the target, fsynced and renamed into place, so a reader sees the old or
// the new file and a failed or cancelled copy leaves the old one (or none) and no
// temporary file. The query must return every column of t by name; each is cast to its
// registered type and written in registry order (other columns are dropped), so the
// file's schema is the registry's whatever types the query's expressions have. A query
// with no row writes nothing and keeps the previous file: a derived partition is only
// ever replaced by data. It returns the rows written.
//
// query and args come from the caller's embedded SQL; the only text spliced in here is
// the registry's own identifiers and the temporary path (quoted), as in Write.
func CopyQuery(ctx context.Context, db Execer, root string, t *Table, partVals []string, query string, args ...any) (int64, error) {
	rel, final, err := partitionFile(root, t, partVals)
	if err != nil {
		return 0, err
	}
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = "CAST(q." + quoteIdent(c.Name) + " AS " + c.Type + ") AS " + quoteIdent(c.Name)
	}
	// The query is closed on its own line so that a trailing comment cannot swallow
	// the parenthesis; a trailing semicolon would end the statement early.
	query = strings.TrimRight(strings.TrimSpace(query), ";")
	sel := "SELECT " + strings.Join(cols, ", ") + " FROM (\n" + query + "\n) q" + orderBy(t)
	n, err := copyAtomic(ctx, db, t, final, sel, args, false)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", rel, err)
	}
	return n, nil
}

// orderBy is the ORDER BY clause of t's sort key ("" when it has none).
func orderBy(t *Table) string {
	if len(t.SortBy) == 0 {
		return ""
	}
	q := make([]string, len(t.SortBy))
	for i, s := range t.SortBy {
		q[i] = quoteIdent(s)
	}
	return " ORDER BY " + strings.Join(q, ", ")
}

// copyAtomic copies the rows of sel (bound args) sorted to a temporary file beside
// final, makes it durable and renames it into place; with keepEmpty false a result
// without rows is discarded and final left as it was. It returns the rows copied.
//
// The temporary file lies in a hidden staging directory of its own beside final
// (".<name>.tmp-<random>/", matched by no table's glob), and a failed copy removes the
// directory whole: after a cancellation the driver can return while DuckDB still runs
// the COPY, which then creates its file again after a plain remove
// (TestPerpdexTradesCarryRepublishes left such files); in a removed directory it cannot.
func copyAtomic(ctx context.Context, db Execer, t *Table, final, sel string, args []any, keepEmpty bool) (int64, error) {
	stage, err := MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-")
	if err != nil {
		return 0, err
	}
	committed := false
	defer func() {
		if !committed {
			removeStage(stage)
		}
	}()
	// The file is created here, with the lake's file mode, for DuckDB to write into.
	tmp, err := CreateTemp(stage, "part-")
	if err != nil {
		return 0, err
	}
	tmpName := tmp.Name()
	tmp.Close()
	rg := t.RowGroup
	if rg <= 0 {
		rg = DefaultRowGroup
	}
	// COPY takes no bound parameter for its target; the path is generated here from
	// the registry and a temp-file name, never from request input, and is quoted.
	// USE_TMP_FILE false: the target is already our own temporary file, and DuckDB's
	// own staging file (tmp_<name>, not hidden) would be left behind by a crash.
	copySQL := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE %d, USE_TMP_FILE false)",
		sel, quoteString(tmpName), rg)
	res, err := db.ExecContext(ctx, copySQL, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if n == 0 && !keepEmpty {
		return 0, nil
	}
	if err := syncFile(tmpName); err != nil {
		return 0, err
	}
	if err := os.Rename(tmpName, final); err != nil {
		return 0, err
	}
	committed = true
	os.Remove(stage) //nolint:errcheck // empty now: its file was renamed out
	return n, syncDir(filepath.Dir(final))
}

// removeStage removes a staging directory and what it holds, again when a COPY that is
// still finishing created its file meanwhile (the directory is then not empty).
func removeStage(dir string) {
	for range 50 {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WriteFileAtomic writes data to path through a synced temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return syncDir(filepath.Dir(path))
}

func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // some filesystems refuse fsync on a directory; the rename is still atomic
	return nil
}

func quoteIdent(s string) string  { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// QuoteString quotes s as a SQL string literal. Used only for lake paths in view DDL,
// which DuckDB cannot take as bound parameters.
func QuoteString(s string) string { return quoteString(s) }

// QuoteIdent quotes s as a SQL identifier.
func QuoteIdent(s string) string { return quoteIdent(s) }

// CopyResult replaces one partition file of t under root with the result of query (run
// with the bound args), its columns named positionally by t's registered columns and
// written with the types the query gives them (a test compares them with the
// registry's), in the query's own order (t.SortBy is not applied: a board's order is
// its query's). Unlike CopyQuery an empty result is written too: an empty board is
// still a published board. It returns the rows written.
func CopyResult(ctx context.Context, db Execer, root string, t *Table, partVals []string, query string, args ...any) (int64, error) {
	rel, final, err := partitionFile(root, t, partVals)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = quoteIdent(c.Name)
	}
	query = strings.TrimRight(strings.TrimSpace(query), ";")
	sel := "SELECT * FROM (\n" + query + "\n) AS q(" + strings.Join(names, ", ") + ")"
	n, err := copyAtomic(ctx, db, t, final, sel, args, true)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", rel, err)
	}
	return n, nil
}

// SyncDir makes a rename into dir durable (a publication that renames staged files).
func SyncDir(dir string) error { return syncDir(dir) }

// partitionFile returns the file of one partition of t (relative to root, and under
// root), its directory created.
func partitionFile(root string, t *Table, partVals []string) (rel, final string, err error) {
	if rel, err = t.Path(partVals...); err != nil {
		return "", "", err
	}
	final = filepath.Join(root, filepath.FromSlash(rel))
	return rel, final, os.MkdirAll(filepath.Dir(final), 0o755)
}
