package ingest

import (
	"strconv"
	"strings"
	"time"

	"mdq/lake"
)

// Val is one value of a staged row held without an interface: a loader that builds its
// rows of Vals (AppendVals) into a buffer it reuses allocates nothing per value, where
// an `any` costs an allocation for every number, time and string that is boxed. The
// zero Val is NULL.
type Val struct {
	s string
	n int64 // integers, booleans (0/1), times (epoch microseconds)
	f float64
	k valKind
}

type valKind uint8

const (
	valNull valKind = iota
	valText
	valInt
	valFloat
	valBool
	valTime
)

// Text is a VARCHAR value.
func Text(s string) Val { return Val{s: s, k: valText} }

// Int is an integer value (BIGINT, INTEGER, SMALLINT or TINYINT columns).
func Int(n int64) Val { return Val{n: n, k: valInt} }

// Float is a DOUBLE value.
func Float(f float64) Val { return Val{f: f, k: valFloat} }

// Bool is a BOOLEAN value.
func Bool(b bool) Val {
	if b {
		return Val{n: 1, k: valBool}
	}
	return Val{k: valBool}
}

// Time is a TIMESTAMP value, kept to the microsecond as the lake stores it.
func Time(t time.Time) Val { return Val{n: t.UnixMicro(), k: valTime} }

// Null is NULL (the zero Val).
func Null() Val { return Val{} }

// OptText is NULL for nil, else the text.
func OptText(p *string) Val {
	if p == nil {
		return Val{}
	}
	return Text(*p)
}

// OptFloat is NULL for nil, else the number.
func OptFloat(p *float64) Val {
	if p == nil {
		return Val{}
	}
	return Float(*p)
}

// appendVal appends v as a field of a column of kind k, as appendValue does for the
// same value held in an interface; false when it has no exact CSV form.
func appendVal(dst []byte, k colKind, v Val) ([]byte, bool) {
	if v.k == valNull {
		return dst, true
	}
	switch k {
	case kindText:
		if v.k == valText {
			return appendText(dst, v.s)
		}
	case kindInt:
		if v.k == valInt {
			return strconv.AppendInt(dst, v.n, 10), true
		}
	case kindFloat:
		switch v.k {
		case valFloat:
			return appendFloat(dst, v.f), true
		case valInt:
			return appendFloat(dst, float64(v.n)), true
		}
	case kindBool:
		if v.k == valBool {
			if v.n != 0 {
				return append(dst, "true"...), true
			}
			return append(dst, "false"...), true
		}
	case kindTime:
		if v.k == valTime {
			return strconv.AppendInt(dst, v.n, 10), true
		}
	}
	return dst, false
}

// value is v as the DuckDB appender takes it for a column of type typ (a row the bulk
// file cannot carry).
func (v Val) value(typ string) any {
	switch v.k {
	case valText:
		return v.s
	case valInt:
		switch strings.ToUpper(typ) {
		case "INTEGER":
			return int32(v.n)
		case "SMALLINT":
			return int16(v.n)
		case "TINYINT":
			return int8(v.n)
		}
		return v.n
	case valFloat:
		return v.f
	case valBool:
		return v.n != 0
	case valTime:
		return time.UnixMicro(v.n).UTC()
	}
	return nil
}

// AppendVals stages one row of t as Append does, its values given as Vals.
func (s *Stage) AppendVals(t *lake.Table, part []string, vals ...Val) error {
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
	bt := s.batch()
	bt.rows = append(bt.rows, batchRow{st: st, v: len(bt.tvals), p: len(bt.parts), ord: s.seq, typed: true})
	bt.tvals = append(bt.tvals, vals...)
	bt.parts = append(bt.parts, part...)
	return s.appended(st, bt)
}
