package perpdex

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The venue sends decimal numbers as JSON strings ("66653.0") so that no client loses
// digits; some fields (leverage value, maxLeverage) are JSON numbers. num and integer
// accept both, check the text is a plain decimal (no hex, no NaN, no underscores) and
// convert it once with strconv, which rounds correctly: the stored double is the
// nearest one to the decimal the venue wrote.

// num is a decimal field: set when present, null when present as JSON null.
type num struct {
	v    float64
	set  bool
	null bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	n.set = true
	if bytes.Equal(b, []byte("null")) {
		n.null = true
		return nil
	}
	s := unquote(b)
	if !isDecimal(s) {
		return fmt.Errorf("not a decimal number: %s", b)
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil || math.IsInf(v, 0) {
		return fmt.Errorf("not a decimal number: %s", b)
	}
	n.v = v
	return nil
}

// ok is true when the field holds a number.
func (n num) ok() bool { return n.set && !n.null }

// orNil is the value, or nil (a NULL column) when absent or null.
func (n num) orNil() any {
	if !n.ok() {
		return nil
	}
	return n.v
}

// integer is an integer field (ids, epoch milliseconds), as a number or a string;
// parsed as an integer so that 64-bit ids never pass through a double.
type integer struct {
	v   int64
	set bool
}

func (n *integer) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	v, err := strconv.ParseInt(string(unquote(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	n.v, n.set = v, true
	return nil
}

// str is a string field: set when present and not null.
type str struct {
	v   string
	set bool
}

func (s *str) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) == 0 || b[0] != '"' {
		return fmt.Errorf("not a string: %s", b)
	}
	if bytes.IndexByte(b, '\\') < 0 {
		s.v = string(b[1 : len(b)-1])
	} else {
		v, err := strconv.Unquote(string(b))
		if err != nil {
			return err
		}
		s.v = v
	}
	s.set = true
	return nil
}

func unquote(b []byte) []byte {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return b[1 : len(b)-1]
	}
	return b
}

// isDecimal accepts -?digits[.digits][e[+-]digits] (a leading "." or trailing "." too).
func isDecimal(s []byte) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		e := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			e++
		}
		if e == 0 {
			return false
		}
	}
	return i == len(s)
}

// missing names the first required field that is absent.
func missing(fields ...any) error {
	for i := 0; i+1 < len(fields); i += 2 {
		name := fields[i].(string)
		var ok bool
		switch f := fields[i+1].(type) {
		case num:
			ok = f.ok()
		case integer:
			ok = f.set
		case str:
			ok = f.set
		case *bool:
			ok = f != nil
		default:
			panic("missing: unknown field type")
		}
		if !ok {
			return fmt.Errorf("missing required field %q", name)
		}
	}
	return nil
}

var errNoUser = errors.New("no user for these fills: pass --user ADDR or name the file after the address (0x and 40 hex digits)")
