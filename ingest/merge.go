package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"mdq/internal/duckconn"
	"mdq/lake"
)

// Stage collects the rows of one ingest run in bulk files, one per table and partition
// under the lake's temporary directory (bulk.go; rows the files cannot carry, and rows
// staged by a query, in a staging table of an in-memory DuckDB that spills there too),
// and merges them into the lake: for each partition the rows touch, the partition's
// current file and the staged rows are unioned, deduplicated on the table's key (a staged row wins
// over a stored one, so a corrected file replaces what it corrects; among staged rows
// the later one wins) and written back atomically by lake.CopyQuery. Partitions the
// rows do not touch are never read or written. Ingesting the same rows twice changes
// nothing.
type Stage struct {
	closeOnce sync.Once // Close ends the stage's raised GC target once (gc.go)
	root      string
	tmp       string // the lake's .tmp/ingest: bulk files and DuckDB's spill
	db        *sql.DB
	conn      *sql.Conn
	tables    map[string]*staged
	keys      map[string][]string // keys declared by Key, by table name
	seq       int64
	// Rows are formatted by a writer goroutine (stage_writer.go): cur is the batch
	// being filled, work feeds the writer. The connection is used by the writer (the
	// appender), or by others only after sync. The fields below werr belong to the
	// writer (read by others only after sync).
	cur   *stageBatch
	free  chan *stageBatch // batches the writer has finished with
	work  chan stageMsg
	done  chan struct{}
	werr  error // the writer's first error
	line  []byte
	ends  []int
	kh    maphash.Hash
	open  int                             // bulk files open
	marks map[int64]map[*partFile]filePos // how far each file had got at each mark
	// merging: threads raised for the merges.
	merging bool
	// arrowBytes is the size of the Arrow batches held (stage_arrow.go; the writer's).
	arrowBytes int64
	arrowMax   int64 // their bound (SetArrowBudget)
	views      int   // Arrow views registered, for their names
}

type staged struct {
	t       *lake.Table
	name    string               // the staging table: appender and query rows
	kinds   []colKind            // nil: every row goes through the appender (bulk.go)
	parts   map[string]*partFile // bulk files by partition
	key     []string             // the declared key (Key), nil when none
	keyIdx  []int                // its column positions
	arr     arrowTable           // the Arrow schema (stage_arrow.go)
	app     *duckdb.Appender     // opened for the first row the bulk file cannot carry
	row     []driver.Value
	n       int64 // rows staged (counted by Append)
	tabRows int64 // of which in the staging table (read after sync)
}

// NewStage opens a stage for the lake at root.
func NewStage(ctx context.Context, root string) (*Stage, error) {
	db, err := duckconn.Open("")
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(root, ".tmp", "ingest")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		db.Close()
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	// The path is the operator's --data directory, quoted; DuckDB takes no parameter here.
	if _, err := conn.ExecContext(ctx, "SET temp_directory = "+lake.QuoteString(tmp)); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	// One DuckDB thread while rows are staged: the loader's goroutine and the writer
	// have the cores, and DuckDB only takes the appender's rare rows then (docs/
	// INGEST.md, throughput). Merge raises it for the reads, sorts and writes.
	if _, err := conn.ExecContext(ctx, "SET threads = 1"); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	bulkGCStart()
	return &Stage{root: root, tmp: tmp, db: db, conn: conn, tables: map[string]*staged{}, keys: map[string][]string{},
		free: make(chan *stageBatch, 16), arrowMax: arrowBudget,
		marks: map[int64]map[*partFile]filePos{}}, nil
}

// ArrowStaging says whether this build hands rows staged as Vals to DuckDB as Arrow
// batches (the duckdb_arrow build tag, stage_arrow.go) rather than as CSV files.
const ArrowStaging = arrowOn

// SetArrowBudget bounds the bytes of Arrow batches the stage holds in memory before
// further rows go to the bulk files on disk (512 MB unless set; 0 sends every row to
// the files, as a build without the duckdb_arrow tag does). Call it before staging.
func (s *Stage) SetArrowBudget(n int64) {
	if err := s.sync(); err == nil {
		s.arrowMax = n
	}
}

// Close releases the stage (staged rows not merged are dropped).
func (s *Stage) Close() error {
	s.closeOnce.Do(bulkGCEnd)
	s.stop()
	for _, st := range s.tables {
		if st.app != nil {
			st.app.Close()
		}
		for _, pf := range st.parts {
			s.removePart(pf)
		}
	}
	s.conn.Close()
	return s.db.Close()
}

// Append stages one row of t: part gives the partition values in t.Partitions order,
// vals the stored columns in t.Columns order (string, int64, int32, int, float64,
// bool, time.Time, or nil for NULL).
func (s *Stage) Append(t *lake.Table, part []string, vals ...any) error {
	if len(part) != len(t.Partitions) {
		return errPartCount(t, len(part))
	}
	if len(vals) != len(t.Columns) {
		return errColCount(t, len(vals))
	}
	st, err := s.table(t)
	if err != nil {
		return err
	}
	// The row is copied into the batch (the caller may reuse vals and part), counted
	// here, and formatted by the writer goroutine (stage_writer.go).
	bt := s.batch()
	bt.rows = append(bt.rows, batchRow{st: st, v: len(bt.vals), p: len(bt.parts), ord: s.seq})
	bt.vals = append(bt.vals, vals...)
	bt.parts = append(bt.parts, part...)
	return s.appended(st, bt)
}

func errPartCount(t *lake.Table, n int) error {
	return fmt.Errorf("table %s: %d partition values for %d keys", t.Name, n, len(t.Partitions))
}

func errColCount(t *lake.Table, n int) error {
	return fmt.Errorf("table %s: row has %d values for %d columns", t.Name, n, len(t.Columns))
}

// batch is the batch being filled: one the writer has finished with, else a new one.
// Reusing them matters: a batch of Vals is a few hundred kilobytes, and allocating
// (and clearing) one every 512 rows cost more than the boxing it saves.
func (s *Stage) batch() *stageBatch {
	if s.cur == nil {
		select {
		case b := <-s.free:
			s.cur = b
		default:
			s.cur = &stageBatch{rows: make([]batchRow, 0, batchRows), parts: make([]string, 0, batchRows)}
		}
	}
	return s.cur
}

// appended counts the row just added to bt and hands a full batch to the writer.
func (s *Stage) appended(st *staged, bt *stageBatch) error {
	s.seq++
	st.n++
	if len(bt.rows) == batchRows {
		return s.send()
	}
	return nil
}

// appendRow stages one row through its partition's bulk file, or through the
// appender when the file cannot carry it. Called by the writer goroutine only.
func (s *Stage) appendRow(st *staged, vals []any, tvals []Val, part []string, ord int64) error {
	t := st.t
	if st.kinds != nil && tvals != nil && arrowOn {
		ok, err := s.addArrow(st, tvals, part, ord)
		if err != nil || ok {
			return err
		}
	}
	if st.kinds != nil {
		ok, err := s.addBulk(st, vals, tvals, part, ord)
		if err != nil || ok {
			return err
		}
	}
	if st.app == nil {
		err := s.conn.Raw(func(dc any) error {
			app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", st.name)
			st.app = app
			return err
		})
		if err != nil {
			return err
		}
		st.row = make([]driver.Value, len(t.Columns)+len(t.Partitions)+1)
	}
	for i := range t.Columns {
		var v any
		if tvals != nil {
			v = tvals[i].value(t.Columns[i].Type)
		} else if x, ok := vals[i].(int); ok {
			v = int64(x)
		} else {
			v = vals[i]
		}
		st.row[i] = v
	}
	for i, p := range part {
		st.row[len(t.Columns)+i] = p
	}
	st.row[len(st.row)-1] = ord
	if err := st.app.AppendRow(st.row...); err != nil {
		return err
	}
	st.tabRows++
	return nil
}

// Key declares t's dedupe key before its rows are staged: the writer then notes
// whether two staged rows of a partition share a key, and a merge on that key
// deduplicates the staged rows only when some do. Without it (or when Merge is given
// another key) every merge deduplicates them.
func (s *Stage) Key(t *lake.Table, key ...string) error {
	if err := s.sync(); err != nil {
		return err
	}
	s.keys[t.Name] = append([]string(nil), key...)
	if st := s.tables[t.Name]; st != nil {
		s.setKey(st)
	}
	return nil
}

// setKey takes the declared key of st's table, if any (after sync).
func (s *Stage) setKey(st *staged) {
	key, ok := s.keys[st.t.Name]
	if !ok {
		return
	}
	idx := make([]int, 0, len(key))
	for _, k := range key {
		i := slices.IndexFunc(st.t.Columns, func(c lake.Column) bool { return c.Name == k })
		if i < 0 {
			return // Merge reports the unknown column
		}
		idx = append(idx, i)
	}
	st.key, st.keyIdx = key, idx
	for _, pf := range st.parts {
		if pf.keys == nil {
			pf.dups = true // rows written before the key was known
		}
	}
}

// flush makes every row appended to t so far readable (bulk files flushed, appender
// rows in the staging table), before anything reads or changes them.
func (s *Stage) flush(_ context.Context, _ *staged) error {
	return s.sync()
}

// Staged returns how many rows of t are staged.
func (s *Stage) Staged(t *lake.Table) int64 {
	if st := s.tables[t.Name]; st != nil {
		return st.n
	}
	return 0
}

func (s *Stage) table(t *lake.Table) (*staged, error) {
	if st := s.tables[t.Name]; st != nil {
		return st, nil
	}
	st := &staged{t: t, name: "stage_" + t.Name, parts: map[string]*partFile{}}
	cols := make([]string, 0, len(t.Columns)+len(t.Partitions)+1)
	for _, c := range t.Columns {
		cols = append(cols, lake.QuoteIdent(c.Name)+" "+c.Type)
	}
	for _, p := range t.Partitions {
		cols = append(cols, lake.QuoteIdent("_part_"+p)+" VARCHAR")
	}
	cols = append(cols, "_ord BIGINT")
	if err := s.sync(); err != nil {
		return nil, err
	}
	// Identifiers come from the registry, never from input.
	if _, err := s.conn.ExecContext(context.Background(), "CREATE TABLE "+st.name+" ("+strings.Join(cols, ", ")+")"); err != nil {
		return nil, err
	}
	if k, ok := bulkKinds(t); ok {
		st.kinds = k
	}
	s.setKey(st)
	s.tables[t.Name] = st
	return st, nil
}

// MergeStats is what merging one table did.
type MergeStats struct {
	Staged       int64    // rows staged
	Written      int64    // staged rows that were new to the lake (not duplicates)
	Deduplicated int64    // staged rows whose key was already stored or staged
	Partitions   []string // partitions rewritten, as paths relative to the lake root
}

// Merge writes the staged rows of t into the lake, deduplicated on key (column names
// of t); an empty key keeps every row (the table has no natural key: a re-ingest then
// duplicates, so every loader names one). It returns what it did.
func (s *Stage) Merge(ctx context.Context, t *lake.Table, key []string) (MergeStats, error) {
	st := s.tables[t.Name]
	if st == nil {
		return MergeStats{}, nil
	}
	if err := s.flush(ctx, st); err != nil {
		return MergeStats{}, err
	}
	if len(key) == 0 {
		return MergeStats{}, fmt.Errorf("table %s: merge needs a key", t.Name)
	}
	if err := s.mergeThreads(ctx); err != nil {
		return MergeStats{}, err
	}
	for _, k := range key {
		if !hasColumn(t, k) {
			return MergeStats{}, fmt.Errorf("table %s: key column %s is not stored", t.Name, k)
		}
	}
	parts, err := s.partitions(ctx, st, key)
	if err != nil {
		return MergeStats{}, err
	}
	ms := MergeStats{Staged: st.n}
	for _, p := range parts {
		rel, err := t.Path(p.vals...)
		if err != nil {
			return ms, err
		}
		file := filepath.Join(s.root, filepath.FromSlash(rel))
		var oldN int64
		stored := false
		if _, err := os.Stat(file); err == nil {
			stored = true
			// From the file's metadata: no row is read.
			if err := s.conn.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet("+lake.QuoteString(file)+")").Scan(&oldN); err != nil {
				return ms, fmt.Errorf("merge %s: %w", rel, err)
			}
		}
		var drop func()
		if p.file != nil && p.file.arr.n > 0 {
			s.views++
			p.view, drop, err = s.arrowView(ctx, st, p.file, fmt.Sprintf("stage_arrow_%d", s.views))
			if err != nil {
				return ms, err
			}
		}
		q, args := mergeQuery(st, key, p, file, stored)
		// The merged count is what the copy wrote (running the merge query once more
		// just to count it doubled the cost of a large ingest).
		mergedN, err := lake.CopyQuery(ctx, s.conn, s.root, t, p.vals, q, args...)
		if drop != nil {
			drop()
		}
		if err != nil {
			return ms, err
		}
		ms.Written += mergedN - oldN
		ms.Deduplicated += p.staged - (mergedN - oldN)
		ms.Partitions = append(ms.Partitions, rel)
	}
	return ms, nil
}

// mergeThreads gives the merges (sort, compress, write) every core the process may use,
// once: GOMAXPROCS, the Go runtime's count (CPU affinity, a container's CPU quota, or
// the GOMAXPROCS variable), so that GOMAXPROCS=1 keeps a whole ingest on one core.
func (s *Stage) mergeThreads(ctx context.Context) error {
	if s.merging {
		return nil
	}
	if _, err := s.conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", runtime.GOMAXPROCS(0))); err != nil {
		return err
	}
	s.merging = true
	return nil
}

func hasColumn(t *lake.Table, name string) bool {
	for _, c := range t.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// stagedPart is one partition the staged rows of a table touch.
type stagedPart struct {
	vals   []string  // partition values in t.Partitions order
	staged int64     // staged rows
	dups   bool      // some staged rows may share a key
	file   *partFile // its bulk file, nil when none
	view   string    // the SELECT of its Arrow rows (a registered view), "" when none
	table  bool      // rows in the staging table too
}

// partitions lists the partitions the staged rows touch, sorted: those of the bulk
// files (their rows counted, and whether two share a key noted, as they were written)
// and, when the staging table holds rows, those of one grouped pass over its keys.
// A partition with rows in both is deduplicated whatever the keys.
func (s *Stage) partitions(ctx context.Context, st *staged, key []string) ([]stagedPart, error) {
	byPart := map[string]*stagedPart{}
	keyed := slices.Equal(key, st.key)
	for k, pf := range st.parts {
		if pf.total() == 0 {
			continue
		}
		// Key hashes of CSV lines and of Arrow rows differ for one key: a partition
		// with rows in both forms is deduplicated.
		mixed := pf.rows > 0 && pf.arr.n > 0
		byPart[k] = &stagedPart{vals: pf.vals, staged: pf.total(), dups: pf.dups || !keyed || mixed, file: pf}
	}
	if st.tabRows > 0 {
		tab, err := s.tablePartitions(ctx, st, key)
		if err != nil {
			return nil, err
		}
		for _, tp := range tab {
			k := strings.Join(tp.vals, "\x00")
			if p := byPart[k]; p != nil {
				p.staged += tp.staged
				p.dups, p.table = true, true
				continue
			}
			tp.table = true
			byPart[k] = &tp
		}
	}
	out := make([]stagedPart, 0, len(byPart))
	for _, p := range byPart {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i].vals, "/") < strings.Join(out[j].vals, "/") })
	return out, nil
}

// tablePartitions lists the partitions the rows of st's staging table touch, with
// how many rows each has and whether any two of them share a key (one pass over the
// staged keys).
func (s *Stage) tablePartitions(ctx context.Context, st *staged, key []string) ([]stagedPart, error) {
	cols := make([]string, len(st.t.Partitions))
	for i, p := range st.t.Partitions {
		cols[i] = lake.QuoteIdent("_part_" + p)
	}
	keys := make([]string, len(key))
	for i, k := range key {
		keys[i] = lake.QuoteIdent(k)
	}
	// Grouping by partition and key counts each key once (NULL fields grouped
	// together, as the PARTITION BY of the dedupe does); plain columns group faster
	// than a row() of them.
	inner := strings.Join(append(append([]string{}, cols...), keys...), ", ")
	outer := append(append([]string{}, cols...), "coalesce(sum(n), 0)::BIGINT", "count(*)")
	q := "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + inner + ", count(*) AS n FROM " + st.name + " GROUP BY ALL)"
	if len(cols) > 0 {
		q += " GROUP BY ALL"
	}
	rows, err := s.conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stagedPart
	for rows.Next() {
		p := stagedPart{vals: make([]string, len(cols))}
		var distinct int64
		ptrs := make([]any, 0, len(cols)+2)
		for i := range p.vals {
			ptrs = append(ptrs, &p.vals[i])
		}
		ptrs = append(ptrs, &p.staged, &distinct)
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		if p.staged == 0 {
			continue // an empty table without partitions still answers one row
		}
		p.dups = distinct != p.staged
		if len(cols) == 0 {
			p.vals = nil
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func partWhere(t *lake.Table) string {
	if len(t.Partitions) == 0 {
		return "true"
	}
	w := make([]string, len(t.Partitions))
	for i, p := range t.Partitions {
		w[i] = lake.QuoteIdent("_part_"+p) + " = ?"
	}
	return strings.Join(w, " AND ")
}

func partArgs(pv []string) []any {
	out := make([]any, len(pv))
	for i, v := range pv {
		out[i] = v
	}
	return out
}

// mergeQuery is the merged content of one partition: the stored rows whose key no
// staged row has, and the staged rows (read straight from the partition's bulk file,
// and from the staging table when it holds rows of the partition), one per key (the
// latest staged one winning). Stored rows are unique on the key already (every merge
// writes them so), so only the staged side is deduplicated, and only when two staged
// rows may share a key: an anti-join on the keys and a plain scan cost a fraction of
// numbering every stored and staged row by key. When a partition is stored the staged
// rows are read once into a materialised CTE, used by the anti-join and the union.
// Paths are generated from the registry and the operator's data directory, quoted.
func mergeQuery(st *staged, key []string, p stagedPart, file string, stored bool) (string, []any) {
	t := st.t
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = lake.QuoteIdent(c.Name)
	}
	list := strings.Join(cols, ", ")
	var src []string
	var args []any
	if p.file != nil && p.file.rows > 0 {
		src = append(src, readCSV(st, p.file))
	}
	if p.view != "" {
		src = append(src, p.view)
	}
	if p.table {
		src = append(src, "SELECT "+list+", _ord FROM "+st.name+" WHERE "+partWhere(t))
		args = partArgs(p.vals)
	}
	from := "(" + strings.Join(src, " UNION ALL ") + ")"
	if stored {
		from = "s"
	}
	q := "SELECT " + list + " FROM " + from
	if p.dups {
		keys := make([]string, len(key))
		for i, k := range key {
			keys[i] = lake.QuoteIdent(k)
		}
		q += " QUALIFY row_number() OVER (PARTITION BY " + strings.Join(keys, ", ") + " ORDER BY _ord DESC) = 1"
	}
	if !stored {
		return q, args
	}
	match := make([]string, 0, len(key))
	for _, k := range key {
		k = lake.QuoteIdent(k)
		match = append(match, "s."+k+" IS NOT DISTINCT FROM o."+k)
	}
	old := "SELECT " + list + " FROM read_parquet(" + lake.QuoteString(file) + ") o WHERE NOT EXISTS (SELECT 1 FROM s WHERE " +
		strings.Join(match, " AND ") + ")"
	return "WITH s AS MATERIALIZED (" + strings.Join(src, " UNION ALL ") + ") " + old + " UNION ALL " + q, args
}

// Summary is the closing line of an ingest run.
type Summary struct {
	Read         int64            // input records read (lines, messages, CSV rows)
	Written      int64            // rows new to the lake
	Deduplicated int64            // rows already in the lake (or twice in the input)
	Rejected     int64            // malformed records (reported as FILE:LINE: reason)
	Skipped      map[string]int64 // records understood but not stored, by reason
	Partitions   []string         // partition files rewritten
}

// Add counts one merge.
func (s *Summary) Add(m MergeStats) {
	s.Written += m.Written
	s.Deduplicated += m.Deduplicated
	s.Partitions = append(s.Partitions, m.Partitions...)
}

// Skip counts a record understood but not stored.
func (s *Summary) Skip(reason string) {
	if s.Skipped == nil {
		s.Skipped = map[string]int64{}
	}
	s.Skipped[reason]++
}

func (s *Summary) String() string {
	out := fmt.Sprintf("read %d, written %d, deduplicated %d, rejected %d, partitions rewritten %d",
		s.Read, s.Written, s.Deduplicated, s.Rejected, len(s.Partitions))
	if len(s.Skipped) > 0 {
		ks := make([]string, 0, len(s.Skipped))
		for k := range s.Skipped {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = fmt.Sprintf("%s %d", k, s.Skipped[k])
		}
		out += "; skipped: " + strings.Join(parts, ", ")
	}
	return out
}

// Marker is lake.json as an ingest run writes it when the lake has none yet; an
// existing marker (a demo lake, an earlier ingest) is kept.
type Marker struct {
	Kind      string    `json:"kind"`
	Tables    []string  `json:"tables"`
	Generated string    `json:"generator"`
	Created   time.Time `json:"created"`
}

// EnsureLake makes root a lake (lake.json) if it is not one yet. Call it after the
// first successful merge, so a failed first ingest leaves "no lake", not an empty one.
func EnsureLake(root string, now time.Time) error {
	if err := lake.Check(root); err == nil {
		return nil
	} else if !errors.Is(err, lake.ErrNoLake) {
		return err
	}
	m := Marker{Kind: "ingest", Generated: "mdq ingest", Created: now.UTC()}
	for _, t := range lake.Tables() {
		m.Tables = append(m.Tables, t.Name)
	}
	sort.Strings(m.Tables)
	b, _ := json.MarshalIndent(m, "", "  ")
	return lake.WriteFileAtomic(filepath.Join(root, lake.MarkerFile), append(b, '\n'))
}

// Mark returns a point to roll the stage back to (see Rollback).
func (s *Stage) Mark() int64 {
	s.markHere()
	return s.seq
}

// Rollback drops every row staged since mark, in every table: a loader stages a file
// in one pass and, when a malformed line turns up, takes the file's rows back out.
func (s *Stage) Rollback(ctx context.Context, mark int64) error {
	return s.rollback(ctx, mark)
}

// rollback cuts every bulk file back to where it was at mark (its rows are in staging
// order, so the rows after the mark are the end of the file) and deletes the staging
// tables' rows from mark on.
func (s *Stage) rollback(ctx context.Context, mark int64) error {
	if err := s.sync(); err != nil {
		return err
	}
	snap, ok := s.marks[mark]
	if !ok {
		return fmt.Errorf("stage: rollback to %d, which is not a mark", mark)
	}
	for m := range s.marks {
		if m > mark {
			delete(s.marks, m) // past the rollback: gone
		}
	}
	for _, st := range s.tables {
		n := int64(0)
		for _, pf := range st.parts {
			if err := s.truncate(pf, snap[pf]); err != nil {
				return err
			}
			n += pf.total()
		}
		if st.tabRows > 0 {
			// The table name is generated from the registry, never from input.
			res, err := s.conn.ExecContext(ctx, "DELETE FROM "+st.name+" WHERE _ord >= ?", mark)
			if err != nil {
				return fmt.Errorf("rollback %s: %w", st.t.Name, err)
			}
			d, _ := res.RowsAffected()
			st.tabRows -= d
		}
		st.n = n + st.tabRows
	}
	return nil
}
