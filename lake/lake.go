// Package lake describes the on-disk data lake: every table's location, partitioning,
// columns and sort order, and the atomic writer that puts Parquet files into it.
//
// The lake is one directory. Its archive part (archive/venue=<venue>/...) is what the
// bulk archive serves; every other table lives beside it as Hive-partitioned Parquet.
// The registry here is the single description of that layout: the demo generator and
// ingest write through it, the query store builds its DuckDB views from it, and
// docs/DATA.md is checked against it by a test.
package lake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Column is one stored column of a table.
type Column struct {
	Name string
	Type string // DuckDB type: VARCHAR, BIGINT, INTEGER, DOUBLE, BOOLEAN, TIMESTAMP, DATE
	Unit string // unit or format, for docs
	Doc  string
}

// Table is one logical table of the lake.
type Table struct {
	Name       string   // DuckDB view name, e.g. predmkt_trades
	Area       string   // predmkt, perpdex, onchain
	Prefix     string   // directory under the lake root, e.g. archive/venue=predmkt
	Partitions []string // Hive keys in path order below Prefix, e.g. ["date"]
	File       string   // file name inside the leaf directory
	Columns    []Column // stored columns, in file order (partition keys are not stored)
	SortBy     []string // the order rows are written in
	RowGroup   int      // rows per Parquet row group (0: DefaultRowGroup)
	Doc        string
	Routes     []string // routes that read it, for docs
	Derived    bool     // computed by mdq itself from other tables (mdq rebuild), not written by ingest or demo
	IngestOnly bool     // written by ingest only: the demo generator has no source for it, so a demo lake has none
}

// DefaultRowGroup bounds row groups so that a reader interested in one token or wallet
// touches few of them, using the min/max statistics DuckDB writes per column chunk.
const DefaultRowGroup = 100_000

// Glob returns the read pattern of the table, relative to the lake root.
func (t *Table) Glob() string {
	parts := []string{t.Prefix}
	for _, p := range t.Partitions {
		parts = append(parts, p+"=*")
	}
	parts = append(parts, t.File)
	return filepath.ToSlash(filepath.Join(parts...))
}

// Path returns the file of one partition, relative to the lake root. vals must hold a
// value for every partition key, in the table's order.
func (t *Table) Path(vals ...string) (string, error) {
	if len(vals) != len(t.Partitions) {
		return "", fmt.Errorf("table %s: %d partition values for %d keys", t.Name, len(vals), len(t.Partitions))
	}
	parts := []string{t.Prefix}
	for i, p := range t.Partitions {
		v := vals[i]
		if v == "" || strings.ContainsAny(v, `/\=`) || v == "." || v == ".." {
			return "", fmt.Errorf("table %s: bad value %q for partition %s", t.Name, v, p)
		}
		parts = append(parts, p+"="+v)
	}
	parts = append(parts, t.File)
	return filepath.ToSlash(filepath.Join(parts...)), nil
}

// ColumnNames returns the stored column names in order.
func (t *Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// Files lists the table's files under root, sorted.
func (t *Table) Files(root string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(t.Glob())))
	if err != nil {
		return nil, err
	}
	sort.Strings(m)
	return m, nil
}

var registry = map[string]*Table{}
var order []string

// Register adds t to the registry; it panics on a duplicate or malformed entry, at init.
func Register(t *Table) *Table {
	if _, dup := registry[t.Name]; dup {
		panic("lake: duplicate table " + t.Name)
	}
	if t.Name == "" || t.Prefix == "" || t.File == "" || len(t.Columns) == 0 {
		panic("lake: incomplete table " + t.Name)
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if seen[c.Name] {
			panic("lake: duplicate column " + t.Name + "." + c.Name)
		}
		seen[c.Name] = true
	}
	for _, p := range t.Partitions {
		if seen[p] {
			panic("lake: partition key stored as column " + t.Name + "." + p)
		}
	}
	for _, s := range t.SortBy {
		if !seen[s] {
			panic("lake: sort column not stored " + t.Name + "." + s)
		}
	}
	registry[t.Name] = t
	order = append(order, t.Name)
	return t
}

// Tables returns every registered table in registration order.
func Tables() []*Table {
	out := make([]*Table, 0, len(order))
	for _, n := range order {
		out = append(out, registry[n])
	}
	return out
}

// Get returns the named table or nil.
func Get(name string) *Table { return registry[name] }

// MarkerFile is written last by every generator or ingest run; its presence is what
// makes a directory a lake.
const MarkerFile = "lake.json"

// ErrNoLake reports a data directory that holds no lake.
var ErrNoLake = errors.New("no lake")

// Check returns an error naming dir when it holds no lake.
func Check(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); err != nil {
		return fmt.Errorf("%w at %s: run mdq demo or mdq ingest", ErrNoLake, dir)
	}
	return nil
}
