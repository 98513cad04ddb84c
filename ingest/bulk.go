package ingest

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mdq/lake"
)

// Rows are staged in bulk files: each row is written as one CSV line (by the stage's
// writer goroutine, stage_writer.go) to the temporary file of its table and partition
// beside the lake, and the merge of that partition reads the file straight into the
// Parquet it writes (merge.go): no row is stored twice in DuckDB, and the reading runs
// on every core at merge time. Appending through the DuckDB appender costs several cgo
// calls a value (a C string allocated per text value); formatting a line in Go and
// letting DuckDB's parallel CSV reader read it costs a fraction of that, and every
// area stages the same way. Values are written so that they read back exactly: text quoted when it
// holds a delimiter, quote, line break, blank or backslash (quotes doubled), doubles in the shortest form that parses to the same double, timestamps
// as epoch microseconds (what the appender stores), NULL as an empty unquoted field
// (an empty string is a quoted empty field). A row the file cannot carry exactly
// (text that is not UTF-8 or holds a NUL byte, a Go type without a CSV form) goes
// through the appender into the table's staging table instead, as before, and so do
// rows staged by a query (AppendQuery, InsertQuery); the merge reads both.

// maxOpenParts bounds the bulk files held open at once (a long backfill touches one
// partition per day and table): past it every open file is flushed and closed, and
// reopened for appending when its partition gets a row again. A variable so that a
// test can make every row reopen its file.
var maxOpenParts = 64

// colKind is how one stored column is written to the bulk file.
type colKind uint8

const (
	kindText colKind = iota
	kindInt
	kindFloat
	kindBool
	kindTime // epoch microseconds in the file; make_timestamp when loaded
)

// bulkKinds is the bulk form of each of t's columns; false when t has a column type
// the bulk file does not carry (its rows then all go through the appender).
func bulkKinds(t *lake.Table) ([]colKind, bool) {
	out := make([]colKind, len(t.Columns))
	for i, c := range t.Columns {
		switch strings.ToUpper(c.Type) {
		case "VARCHAR":
			out[i] = kindText
		case "BIGINT", "INTEGER", "SMALLINT", "TINYINT":
			out[i] = kindInt
		case "DOUBLE":
			out[i] = kindFloat
		case "BOOLEAN":
			out[i] = kindBool
		case "TIMESTAMP":
			out[i] = kindTime
		default:
			return nil, false
		}
	}
	return out, true
}

// appendText appends s as a CSV field: as it is when it holds nothing the reader
// would take apart (most values: hex, ids, words), else quoted with quotes doubled;
// an empty string is quoted, so that it is not NULL. False when s is not valid UTF-8
// or holds a NUL byte (DuckDB's CSV reader refuses the one, the appender truncates at
// the other: such a row keeps the appender's behaviour).
func appendText(dst []byte, s string) ([]byte, bool) {
	quote, ascii := s == "", true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
		case c == 0:
			return dst, false
		case c == ',' || c == '"' || c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\\':
			quote = true
		}
	}
	if !ascii && !utf8.ValidString(s) {
		return dst, false
	}
	if !quote {
		return append(dst, s...), true
	}
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, '"')
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, '"'), true
}

func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendValue appends v as a field of a column of kind k; false when the value has
// no exact CSV form here (the row then goes through the appender, which converts or
// refuses it as it always did).
func appendValue(dst []byte, k colKind, v any) ([]byte, bool) {
	if v == nil {
		return dst, true // NULL: an empty unquoted field
	}
	switch k {
	case kindText:
		if s, ok := v.(string); ok {
			return appendText(dst, s)
		}
	case kindInt:
		switch x := v.(type) {
		case int64:
			return strconv.AppendInt(dst, x, 10), true
		case int:
			return strconv.AppendInt(dst, int64(x), 10), true
		case int32:
			return strconv.AppendInt(dst, int64(x), 10), true
		case int16:
			return strconv.AppendInt(dst, int64(x), 10), true
		case int8:
			return strconv.AppendInt(dst, int64(x), 10), true
		case uint32:
			return strconv.AppendUint(dst, uint64(x), 10), true
		case uint16:
			return strconv.AppendUint(dst, uint64(x), 10), true
		case uint8:
			return strconv.AppendUint(dst, uint64(x), 10), true
		}
	case kindFloat:
		switch x := v.(type) {
		case float64:
			return appendFloat(dst, x), true
		case float32:
			return appendFloat(dst, float64(x)), true
		case int64:
			return appendFloat(dst, float64(x)), true
		case int:
			return appendFloat(dst, float64(x)), true
		case int32:
			return appendFloat(dst, float64(x)), true
		}
	case kindBool:
		if b, ok := v.(bool); ok {
			if b {
				return append(dst, "true"...), true
			}
			return append(dst, "false"...), true
		}
	case kindTime:
		if t, ok := v.(time.Time); ok {
			return strconv.AppendInt(dst, t.UnixMicro(), 10), true
		}
	}
	return dst, false
}

// partFile is the pending CSV of one partition of one staged table. Its rows are in
// staging order (ascending _ord).
type partFile struct {
	vals  []string // partition values in t.Partitions order
	path  string
	f     *os.File // nil while closed (not yet created, or closed past maxOpenParts)
	w     *bufio.Writer
	rows  int64
	bytes int64
	// longest is the longest line written, for the reader's line limit.
	longest int
	// keys holds a hash of each row's key fields when the table's key was declared
	// (Stage.Key): a hash seen twice means two rows may share a key, so the merge
	// deduplicates the file's rows; otherwise it takes them as they are. A collision
	// only costs a dedupe that finds nothing.
	keys *hashSet
	dups bool
	// arr holds the rows staged as Arrow batches (stage_arrow.go); rows counts the
	// CSV lines only.
	arr arrowState
}

// total is the partition's staged rows, in the file and as Arrow batches.
func (pf *partFile) total() int64 { return pf.rows + pf.arr.n }

// filePos is how far a partition file had got at a mark (for rolling back).
type filePos struct {
	rows, bytes int64
	longest     int
	recs        int   // Arrow batches (the mark cut the rows being built)
	arows       int64 // Arrow rows
}

// addBulk writes one row (stored columns, then _ord), given as vals or as tvals, to
// the bulk file of its partition; false when the row has no exact CSV form (nothing is
// written then).
func (s *Stage) addBulk(st *staged, vals []any, tvals []Val, part []string, ord int64) (bool, error) {
	x := s.line[:0]
	ends := s.ends[:0]
	var ok bool
	for i, k := range st.kinds {
		if i > 0 {
			x = append(x, ',')
		}
		if tvals != nil {
			x, ok = appendVal(x, k, tvals[i])
		} else {
			x, ok = appendValue(x, k, vals[i])
		}
		if !ok {
			s.line = x
			return false, nil
		}
		ends = append(ends, len(x))
	}
	x = append(x, ',')
	x = strconv.AppendInt(x, ord, 10)
	x = append(x, '\n')
	s.line, s.ends = x, ends
	pf, err := s.partFile(st, part)
	if err != nil {
		return false, err
	}
	if st.keyIdx != nil && pf.keys != nil {
		if pf.keys.add(s.keyHash(x, ends, st.keyIdx)) {
			pf.dups = true
		}
	}
	if _, err := pf.w.Write(x); err != nil {
		return false, err
	}
	pf.rows++
	pf.bytes += int64(len(x))
	pf.longest = max(pf.longest, len(x))
	return true, nil
}

// keyHash hashes the key fields of a formatted line (ends[i] is where field i ends;
// fields are separated by one comma), each followed by a separator the CSV never
// leaves unquoted inside a field.
func (s *Stage) keyHash(line []byte, ends []int, idx []int) uint64 {
	s.kh.Reset()
	for _, i := range idx {
		from := 0
		if i > 0 {
			from = ends[i-1] + 1
		}
		s.kh.Write(line[from:ends[i]])
		s.kh.WriteByte(',')
	}
	return s.kh.Sum64()
}

// partState is st's partition part (its file not opened).
func (s *Stage) partState(st *staged, part []string) *partFile {
	k := strings.Join(part, "\x00")
	pf := st.parts[k]
	if pf == nil {
		pf = &partFile{vals: append([]string(nil), part...)}
		if st.keyIdx != nil {
			pf.keys = &hashSet{}
		}
		st.parts[k] = pf
	}
	return pf
}

// partFile is st's open bulk file for the partition part, created or reopened.
func (s *Stage) partFile(st *staged, part []string) (*partFile, error) {
	pf := s.partState(st, part)
	if pf.f != nil {
		return pf, nil
	}
	if s.open >= maxOpenParts {
		if err := s.closeParts(); err != nil {
			return nil, err
		}
	}
	if pf.path == "" {
		f, err := os.CreateTemp(s.tmp, "stage-*.csv")
		if err != nil {
			return nil, err
		}
		pf.f, pf.path = f, f.Name()
	} else {
		f, err := os.OpenFile(pf.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		pf.f = f
	}
	pf.w = bufio.NewWriterSize(pf.f, 256<<10)
	s.open++
	return pf, nil
}

// flush writes pf's buffered lines to its file (it stays open).
func (pf *partFile) flush() error {
	if pf.f == nil {
		return nil
	}
	return pf.w.Flush()
}

// close flushes and closes pf's file.
func (s *Stage) closePart(pf *partFile) error {
	if pf.f == nil {
		return nil
	}
	err := pf.w.Flush()
	if cerr := pf.f.Close(); err == nil {
		err = cerr
	}
	pf.f, pf.w = nil, nil
	s.open--
	return err
}

// closeParts flushes and closes every open bulk file.
func (s *Stage) closeParts() error {
	for _, st := range s.tables {
		for _, pf := range st.parts {
			if err := s.closePart(pf); err != nil {
				return err
			}
		}
	}
	return nil
}

// truncate drops pf's lines after pos (a rollback): rows are in staging order, so the
// rows after a mark are the end of the file.
func (s *Stage) truncate(pf *partFile, pos filePos) error {
	if pf.arr.n != pos.arows {
		pf.arr.truncate(pos.recs, pos.arows)
	}
	if pf.rows == pos.rows {
		return nil
	}
	if err := s.closePart(pf); err != nil {
		return err
	}
	if err := os.Truncate(pf.path, pos.bytes); err != nil {
		return err
	}
	pf.rows, pf.bytes, pf.longest = pos.rows, pos.bytes, pos.longest
	// The key hashes of the dropped rows stay: at worst a needless dedupe.
	return nil
}

// remove deletes pf's file.
func (s *Stage) removePart(pf *partFile) {
	pf.arr.release()
	s.closePart(pf) //nolint:errcheck // the file goes anyway
	if pf.path != "" {
		os.Remove(pf.path)
	}
}

// readCSV is the SELECT of pf's rows (t's stored columns by name, then _ord) as the
// merge reads them. Identifiers and types come from the registry, the path is
// generated here under the operator's lake directory (quoted): read_csv takes no
// bound parameter here.
func readCSV(st *staged, pf *partFile) string {
	t := st.t
	cols := make([]string, 0, len(t.Columns)+1)
	sel := make([]string, 0, cap(cols))
	for i, c := range t.Columns {
		name := fmt.Sprintf("c%d", i)
		switch st.kinds[i] {
		case kindTime:
			cols = append(cols, lake.QuoteString(name)+": 'BIGINT'")
			sel = append(sel, "make_timestamp("+name+") AS "+lake.QuoteIdent(c.Name))
		default:
			cols = append(cols, lake.QuoteString(name)+": "+lake.QuoteString(c.Type))
			sel = append(sel, name+" AS "+lake.QuoteIdent(c.Name))
		}
	}
	cols = append(cols, "'_ord': 'BIGINT'")
	sel = append(sel, "_ord")
	// The reader's line limit must hold the longest line (a whole order book can be
	// one text value); its buffer is a multiple of it, so it is not raised needlessly.
	maxLine := max(2<<20, pf.longest+1)
	return "SELECT " + strings.Join(sel, ", ") + " FROM read_csv(" + lake.QuoteString(pf.path) +
		", header = false, auto_detect = false, delim = ',', quote = '\"', escape = '\"', nullstr = '', allow_quoted_nulls = false" +
		fmt.Sprintf(", max_line_size = %d", maxLine) +
		", columns = {" + strings.Join(cols, ", ") + "})"
}

// hashSet is a set of key hashes (open addressing, linear probing): the writer adds
// one per staged row, and a Go map of that size cost a quarter of the writer's time.
// 0 stands for an empty slot, so a hash of 0 is stored as 1 (a collision at worst).
type hashSet struct {
	slots []uint64
	n     int
}

// add inserts h and says whether it was there already.
func (hs *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if 2*(hs.n+1) > len(hs.slots) {
		hs.grow()
	}
	mask := uint64(len(hs.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch hs.slots[i] {
		case h:
			return true
		case 0:
			hs.slots[i] = h
			hs.n++
			return false
		}
	}
}

func (hs *hashSet) grow() {
	old := hs.slots
	hs.slots = make([]uint64, max(1024, 2*len(old)))
	hs.n = 0
	for _, h := range old {
		if h != 0 {
			hs.add(h)
		}
	}
}
