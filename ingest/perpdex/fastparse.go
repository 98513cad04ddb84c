package perpdex

import (
	"bytes"
	"strconv"
)

// The fast path for node fill lines: node files are large (the venue writes every
// fill), and encoding/json with per-field decoders spends most of an ingest's time.
// fastNodeLine scans a line by hand for the common shape (no escapes in strings, the
// known fields); anything unusual makes it give up (ok false) and ParseNodeLine, the
// reference decoder, reads the line and reports what is wrong. Both produce the same
// rows: rawFill.fill does the checks and conversions for either.

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns its contents.
func (s *scanner) str() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	j := bytes.IndexByte(s.b[s.i+1:], '"')
	if j < 0 {
		return nil, false
	}
	v := s.b[s.i+1 : s.i+1+j]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	s.i += j + 2
	return v, true
}

// value returns the raw text of the next value; strings come without their quotes
// (isStr true). Objects and arrays are returned whole.
func (s *scanner) value() (v []byte, isStr, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, false
	}
	switch c := s.b[s.i]; c {
	case '"':
		v, ok = s.str()
		return v, true, ok
	case '{', '[':
		start, depth := s.i, 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return nil, false, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return s.b[start:s.i], false, true
				}
			}
			s.i++
		}
		return nil, false, false
	default:
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				break
			}
			s.i++
		}
		return s.b[start:s.i], false, s.i > start
	}
}

// object calls fn for each key of an object; fn reads the value.
func (s *scanner) object(fn func(key []byte) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.eat(':') || !fn(k) {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

var nullLit = []byte("null")

func (s *scanner) num(n *num) bool {
	v, _, ok := s.value()
	if !ok {
		return false
	}
	n.set = true
	if bytes.Equal(v, nullLit) {
		n.null = true
		return true
	}
	if !isDecimal(v) {
		return false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return false
	}
	n.v = f
	return true
}

func (s *scanner) integer(n *integer) bool {
	v, _, ok := s.value()
	if !ok {
		return false
	}
	if bytes.Equal(v, nullLit) {
		return true
	}
	x, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return false
	}
	n.v, n.set = x, true
	return true
}

func (s *scanner) strField(f *str) bool {
	v, isStr, ok := s.value()
	if !ok {
		return false
	}
	if isStr {
		f.v, f.set = string(v), true
		return true
	}
	return bytes.Equal(v, nullLit)
}

func (s *scanner) skip() bool {
	_, _, ok := s.value()
	return ok
}

func (s *scanner) fill(r *rawFill) bool {
	return s.object(func(k []byte) bool {
		switch string(k) {
		case "coin":
			return s.strField(&r.Coin)
		case "px":
			return s.num(&r.Px)
		case "sz":
			return s.num(&r.Sz)
		case "side":
			return s.strField(&r.Side)
		case "time":
			return s.integer(&r.Time)
		case "startPosition":
			return s.num(&r.StartPosition)
		case "dir":
			return s.strField(&r.Dir)
		case "closedPnl":
			return s.num(&r.ClosedPnl)
		case "hash":
			return s.strField(&r.Hash)
		case "oid":
			return s.integer(&r.Oid)
		case "crossed":
			v, _, ok := s.value()
			if !ok {
				return false
			}
			switch string(v) {
			case "true":
				t := true
				r.Crossed = &t
			case "false":
				f := false
				r.Crossed = &f
			case "null":
			default:
				return false
			}
			return true
		case "fee":
			return s.num(&r.Fee)
		case "tid":
			return s.integer(&r.Tid)
		case "feeToken":
			return s.strField(&r.FeeToken)
		case "builder":
			return s.strField(&r.Builder)
		case "builderFee":
			return s.num(&r.BuilderFee)
		case "deployerFee":
			return s.num(&r.DeployerFee)
		case "user":
			return s.strField(&r.User)
		case "liquidation":
			s.ws()
			if s.i+4 <= len(s.b) && bytes.Equal(s.b[s.i:s.i+4], nullLit) {
				s.i += 4
				return true
			}
			l := &rawLiq{}
			r.Liquidation = l
			return s.object(func(k []byte) bool {
				switch string(k) {
				case "liquidatedUser":
					return s.strField(&l.LiquidatedUser)
				case "markPx":
					return s.num(&l.MarkPx)
				case "method":
					return s.strField(&l.Method)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
}

// fastNodeLine is ParseNodeLine's fast path; ok false means "read it the slow way".
func fastNodeLine(b []byte, fills []Fill) (_ []Fill, spot int, ok bool) {
	s := &scanner{b: b}
	sawEvents := false
	ok = s.object(func(k []byte) bool {
		if string(k) != "events" {
			return s.skip()
		}
		sawEvents = true
		if !s.eat('[') {
			return false
		}
		if s.eat(']') {
			return true
		}
		for {
			if !s.eat('[') {
				return false
			}
			user, ok := s.str()
			if !ok || !s.eat(',') {
				return false
			}
			var r rawFill
			if !s.fill(&r) || !s.eat(']') {
				return false
			}
			f, err := r.fill(string(user))
			switch {
			case err == errSpot:
				spot++
			case err != nil:
				return false
			default:
				fills = append(fills, f)
			}
			if s.eat(',') {
				continue
			}
			return s.eat(']')
		}
	})
	s.ws()
	if !ok || !sawEvents || s.i != len(s.b) {
		return nil, 0, false
	}
	return fills, spot, true
}
