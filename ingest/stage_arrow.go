//go:build duckdb_arrow

package ingest

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"mdq/lake"
)

// Rows staged as Vals (AppendVals) are handed to DuckDB as Arrow record batches held
// in memory, one list per partition, instead of being formatted as CSV lines and
// parsed back: the writer goroutine appends each value to a column builder (no
// number is formatted, no text quoted), and the merge registers the partition's
// batches as a view (the driver's Arrow scan) that its query reads like the bulk file.
// Per 200,000 perpdex fills the whole ingest takes about 0.2 CPU-seconds less (of
// about 1.6), mostly DuckDB's side: no CSV to parse (docs/INGEST.md, fourth round). The batches stay in memory until the stage is
// closed, so at most arrowBudget bytes of them are held: past it rows go to the bulk
// file as before (a partition holding both is deduplicated at merge, as its key
// hashes come from two forms). Built only with the duckdb_arrow tag (the driver's
// Arrow interface needs it; the Makefile sets it); without it every row takes the
// CSV (stage_arrow_off.go).

const arrowOn = true

// arrowBudget is the default bound of the bytes of Arrow batches a stage holds
// (Stage.SetArrowBudget).
const arrowBudget int64 = 512 << 20

// A record batch is cut at arrowBatchRows rows or arrowBatchBytes bytes (its text
// offsets are 32-bit).
const (
	arrowBatchRows  = 64 << 10
	arrowBatchBytes = 64 << 20
)

// arrowTable is a staged table's Arrow schema, made for its first row.
type arrowTable struct {
	schema *arrow.Schema
}

// arrowState is a partition's rows held as Arrow batches.
type arrowState struct {
	bld     *array.RecordBuilder
	pending int                 // rows in bld
	pbytes  int64               // their size
	recs    []arrow.RecordBatch // cut batches, in staging order
	n       int64               // rows in recs and bld
}

// arrowSchema is the record schema of st's rows: the stored columns, then _ord.
func arrowSchema(st *staged) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(st.t.Columns)+1)
	for i, c := range st.t.Columns {
		var dt arrow.DataType
		switch st.kinds[i] {
		case kindText:
			dt = arrow.BinaryTypes.String
		case kindInt:
			dt = arrow.PrimitiveTypes.Int64
		case kindFloat:
			dt = arrow.PrimitiveTypes.Float64
		case kindBool:
			dt = arrow.FixedWidthTypes.Boolean
		case kindTime:
			dt = arrow.FixedWidthTypes.Timestamp_us
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: dt, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "_ord", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// arrowFits says whether every value of the row has an exact Arrow form in its
// column, under the same rules as the CSV (appendVal): a row that does not goes
// through the CSV or the appender, which convert or refuse it as before.
func arrowFits(kinds []colKind, tvals []Val) (int64, bool) {
	size := int64(8 * (len(kinds) + 1))
	for i, k := range kinds {
		v := tvals[i]
		if v.k == valNull {
			continue
		}
		switch k {
		case kindText:
			if v.k != valText || !textFits(v.s) {
				return 0, false
			}
			size += int64(len(v.s))
		case kindInt:
			if v.k != valInt {
				return 0, false
			}
		case kindFloat:
			if v.k != valFloat && v.k != valInt {
				return 0, false
			}
		case kindBool:
			if v.k != valBool {
				return 0, false
			}
		case kindTime:
			if v.k != valTime {
				return 0, false
			}
		}
	}
	return size, true
}

// textFits is appendText's rule: no NUL byte, valid UTF-8. Nearly every staged text
// (addresses, hashes, coin names) is ASCII, so one pass eight bytes at a time checks
// both at once for those (no byte with the high bit set, none zero); only a text with
// a non-ASCII byte takes the two library scans (a loop over the bytes was a quarter of
// the hand-off's Go time, the two scans about a tenth of a node-fills ingest's CPU).
func textFits(s string) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		if w&hi != 0 || (w-lo)&^w&hi != 0 {
			return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
		}
	}
	return true
}

// addArrow adds one row to its partition's Arrow batches; false when it has no exact
// Arrow form or the budget is spent (nothing is added then).
func (s *Stage) addArrow(st *staged, tvals []Val, part []string, ord int64) (bool, error) {
	size, ok := arrowFits(st.kinds, tvals)
	if !ok || s.arrowBytes+size > s.arrowMax {
		return false, nil
	}
	pf := s.partState(st, part)
	a := &pf.arr
	if a.bld == nil {
		if st.arr.schema == nil {
			st.arr.schema = arrowSchema(st)
		}
		a.bld = array.NewRecordBuilder(memory.DefaultAllocator, st.arr.schema)
	}
	for i, k := range st.kinds {
		v, fb := tvals[i], a.bld.Field(i)
		if v.k == valNull {
			fb.AppendNull()
			continue
		}
		switch k {
		case kindText:
			fb.(*array.StringBuilder).Append(v.s)
		case kindInt:
			fb.(*array.Int64Builder).Append(v.n)
		case kindFloat:
			f := v.f
			if v.k == valInt {
				f = float64(v.n)
			}
			fb.(*array.Float64Builder).Append(f)
		case kindBool:
			fb.(*array.BooleanBuilder).Append(v.n != 0)
		case kindTime:
			fb.(*array.TimestampBuilder).Append(arrow.Timestamp(v.n))
		}
	}
	a.bld.Field(len(st.kinds)).(*array.Int64Builder).Append(ord)
	if st.keyIdx != nil && pf.keys != nil {
		if pf.keys.add(s.valKeyHash(tvals, st.keyIdx)) {
			pf.dups = true
		}
	}
	a.pending++
	a.pbytes += size
	a.n++
	s.arrowBytes += size
	if a.pending == arrowBatchRows || a.pbytes >= arrowBatchBytes {
		a.cut()
	}
	return true, nil
}

// valKeyHash hashes the key fields of a row of Vals (kind, then value; separated), as
// keyHash does for a CSV line. The two hashes differ for one key: a partition with
// rows in both forms is always deduplicated (Stage.partitions).
func (s *Stage) valKeyHash(tvals []Val, idx []int) uint64 {
	s.kh.Reset()
	var b [9]byte
	for _, i := range idx {
		v := tvals[i]
		b[0] = byte(v.k)
		switch v.k {
		case valText:
			s.kh.WriteByte(b[0])
			s.kh.WriteString(v.s)
			s.kh.WriteByte(0)
			continue
		case valFloat:
			binary.LittleEndian.PutUint64(b[1:], math.Float64bits(v.f))
		default:
			binary.LittleEndian.PutUint64(b[1:], uint64(v.n))
		}
		s.kh.Write(b[:])
	}
	return s.kh.Sum64()
}

// cut closes the rows being built into a batch (at a mark, so that a rollback drops
// whole batches, and every arrowBatchRows rows).
func (a *arrowState) cut() {
	if a.pending == 0 {
		return
	}
	a.recs = append(a.recs, a.bld.NewRecordBatch())
	a.pending, a.pbytes = 0, 0
}

// truncate drops the batches after the first recs (and any rows being built): the
// state at a mark, which cut there.
func (a *arrowState) truncate(recs int, n int64) {
	if a.pending > 0 {
		a.bld.NewRecordBatch().Release()
		a.pending, a.pbytes = 0, 0
	}
	for _, r := range a.recs[recs:] {
		r.Release()
	}
	a.recs = a.recs[:recs]
	a.n = n
}

// release frees the batches and the builder.
func (a *arrowState) release() {
	a.truncate(0, 0)
	if a.bld != nil {
		a.bld.Release()
		a.bld = nil
	}
}

// arrowView registers the partition's batches as a temporary view named name on the
// stage's connection and returns the SELECT the merge reads (t's stored columns, then
// _ord) and the function that drops it again.
func (s *Stage) arrowView(ctx context.Context, st *staged, pf *partFile, name string) (string, func(), error) {
	pf.arr.cut()
	rdr, err := array.NewRecordReader(st.arr.schema, pf.arr.recs)
	if err != nil {
		return "", nil, err
	}
	defer rdr.Release() // the view's stream holds its own reference
	var release func()
	err = s.conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err = ar.RegisterView(rdr, name)
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("stage %s: %w", st.t.Name, err)
	}
	cols := make([]string, 0, len(st.t.Columns)+1)
	for _, c := range st.t.Columns {
		cols = append(cols, lake.QuoteIdent(c.Name))
	}
	cols = append(cols, "_ord")
	drop := func() {
		// The name is generated here; DuckDB takes no parameter for it.
		s.conn.ExecContext(context.Background(), "DROP VIEW IF EXISTS "+lake.QuoteIdent(name)) //nolint:errcheck // a temporary view, gone with the connection anyway
		release()
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + lake.QuoteIdent(name), drop, nil
}
