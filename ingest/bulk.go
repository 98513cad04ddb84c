package ingest

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mdq/lake"
)

// Rows are staged through a bulk file: each row is written as one CSV line to a
// temporary file beside the lake (by the stage's writer goroutine, stage_writer.go),
// and the file is handed to DuckDB in one INSERT ... FROM read_csv: in the background
// when it grows past bulkChunkBytes (DuckDB loads one chunk while the next is
// written), and before anything reads or changes the staging tables (sync). Appending through the DuckDB appender costs several cgo calls a
// value (a C string allocated per text value); formatting a line in Go and letting
// DuckDB's parallel CSV reader load it costs a fraction of that, and every area stages
// the same way. Values are written so that they read back exactly: text quoted when it
// holds a delimiter, quote, line break, blank or backslash (quotes doubled), doubles in the shortest form that parses to the same double, timestamps
// as epoch microseconds (what the appender stores), NULL as an empty unquoted field
// (an empty string is a quoted empty field). A row the file cannot carry exactly
// (text that is not UTF-8 or holds a NUL byte, a Go type without a CSV form) goes
// through the appender instead, as before.

// bulkChunkBytes is the size at which a bulk file is loaded in the background: small
// enough that loading overlaps parsing from early on, large enough that the per-load
// cost does not count. A variable so that a test can make every few rows a chunk.
var bulkChunkBytes int64 = 16 << 20

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

// bulkFile is the pending CSV of one staging table.
type bulkFile struct {
	path    string
	f       *os.File
	w       *bufio.Writer
	line    []byte
	rows    int64
	bytes   int64
	longest int
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

// add writes one row (stored columns, partition values, _ord) to the bulk file; false
// when the row has no exact CSV form (nothing is written then).
func (b *bulkFile) add(dir string, kinds []colKind, vals []any, part []string, ord int64) (bool, error) {
	x := b.line[:0]
	var ok bool
	for i, v := range vals {
		if i > 0 {
			x = append(x, ',')
		}
		if x, ok = appendValue(x, kinds[i], v); !ok {
			b.line = x
			return false, nil
		}
	}
	for _, p := range part {
		x = append(x, ',')
		if x, ok = appendText(x, p); !ok {
			b.line = x
			return false, nil
		}
	}
	x = append(x, ',')
	x = strconv.AppendInt(x, ord, 10)
	x = append(x, '\n')
	b.line = x
	if b.f == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		f, err := os.CreateTemp(dir, "stage-*.csv")
		if err != nil {
			return false, err
		}
		b.f, b.path, b.w = f, f.Name(), bufio.NewWriterSize(f, 1<<20)
	}
	if _, err := b.w.Write(x); err != nil {
		return false, err
	}
	b.rows++
	b.bytes += int64(len(x))
	b.longest = max(b.longest, len(x))
	return true, nil
}

// query is the INSERT that loads the file into st's staging table.
func (b *bulkFile) query(st *staged) string {
	t := st.t
	cols := make([]string, 0, len(t.Columns)+len(t.Partitions)+1)
	sel := make([]string, 0, cap(cols))
	for i, c := range t.Columns {
		name := fmt.Sprintf("c%d", i)
		switch st.kinds[i] {
		case kindTime:
			cols = append(cols, lake.QuoteString(name)+": 'BIGINT'")
			sel = append(sel, "make_timestamp("+name+")")
		default:
			cols = append(cols, lake.QuoteString(name)+": "+lake.QuoteString(c.Type))
			sel = append(sel, name)
		}
	}
	for i := range t.Partitions {
		name := fmt.Sprintf("p%d", i)
		cols = append(cols, lake.QuoteString(name)+": 'VARCHAR'")
		sel = append(sel, name)
	}
	cols = append(cols, "'ord': 'BIGINT'")
	sel = append(sel, "ord")
	// The reader's line limit must hold the longest line (a whole order book can be
	// one text value); its buffer is a multiple of it, so it is not raised needlessly.
	maxLine := max(2<<20, b.longest+1)
	// Identifiers and types come from the registry, the path is generated here under
	// the operator's lake directory (quoted): read_csv takes no bound parameter here.
	return "INSERT INTO " + st.name + " SELECT " + strings.Join(sel, ", ") + " FROM read_csv(" + lake.QuoteString(b.path) +
		", header = false, auto_detect = false, delim = ',', quote = '\"', escape = '\"', nullstr = '', allow_quoted_nulls = false" +
		fmt.Sprintf(", max_line_size = %d", maxLine) +
		", columns = {" + strings.Join(cols, ", ") + "})"
}

// detach closes the pending file and returns what loads it; st gets a fresh one.
func (st *staged) detach() (path, query string, rows int64, err error) {
	b := &st.bulk
	if b.rows == 0 {
		return "", "", 0, nil
	}
	path, query, rows = b.path, b.query(st), b.rows
	err = b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	*b = bulkFile{line: b.line[:0]}
	if err != nil {
		os.Remove(path)
		return "", "", 0, err
	}
	return path, query, rows, nil
}

// loadFile runs the INSERT of a detached bulk file and removes the file.
func (s *Stage) loadFile(ctx context.Context, name, path, query string, rows int64) error {
	defer os.Remove(path)
	res, err := s.conn.ExecContext(ctx, query)
	if err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != rows {
		return fmt.Errorf("stage %s: %d rows loaded of %d written", name, n, rows)
	}
	return nil
}

// wait waits for the background load in flight, if any, and returns its error.
func (s *Stage) wait() error {
	if s.loading == nil {
		return nil
	}
	err := <-s.loading
	s.loading = nil
	return err
}

// loadBehind hands st's bulk file to a background load (after the one in flight).
func (s *Stage) loadBehind(st *staged) error {
	if err := s.wait(); err != nil {
		return err
	}
	path, q, rows, err := st.detach()
	if err != nil || rows == 0 {
		return err
	}
	ch := make(chan error, 1)
	s.loading = ch
	go func() { ch <- s.loadFile(context.Background(), st.t.Name, path, q, rows) }()
	return nil
}

// remove deletes the bulk file.
func (b *bulkFile) remove() {
	if b.f != nil {
		b.f.Close()
		os.Remove(b.path)
		b.f, b.path = nil, ""
	}
}
