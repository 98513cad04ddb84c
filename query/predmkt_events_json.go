package query

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the page as encoding/json encodes it with HTML escaping off (the
// encoder every transport uses, handlers.Encode), byte for byte, without the trailing
// newline. A 50,000-event page is about 16 MB of JSON: encoding/json's reflection
// spent more time on it than DuckDB spent reading the rows, and this writes it in a
// third of that. Like encoding/json it refuses NaN and infinities.
func (p EventsPage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"events":`...)
	if p.Events == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range p.Events {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = p.Events[i].AppendJSON(dst); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"has_more":`...)
	dst = strconv.AppendBool(dst, p.HasMore)
	dst = append(dst, `,"next_cursor":`...)
	if p.NextCursor == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, *p.NextCursor)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends one event as encoding/json encodes it (see EventsPage.AppendJSON).
func (e *TapeEvent) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"event_type":`...)
	dst = appendJSONString(dst, e.EventType)
	dst = append(dst, `,"token_id":`...)
	dst = appendJSONString(dst, e.TokenID)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, e.TS, 10)
	dst = append(dst, `,"local_ts":`...)
	dst = strconv.AppendInt(dst, e.LocalTS, 10)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"side":`...)
	dst = appendJSONString(dst, e.Side)
	dst = append(dst, `,"price":`...)
	if dst, err = appendJSONFloat(dst, e.Price); err != nil {
		return dst, err
	}
	dst = append(dst, `,"size":`...)
	if dst, err = appendJSONFloat(dst, e.Size); err != nil {
		return dst, err
	}
	dst = append(dst, `,"best_bid":`...)
	if dst, err = appendJSONFloat(dst, e.BestBid); err != nil {
		return dst, err
	}
	dst = append(dst, `,"best_ask":`...)
	if dst, err = appendJSONFloat(dst, e.BestAsk); err != nil {
		return dst, err
	}
	dst = append(dst, `,"bids":`...)
	dst = appendJSONString(dst, e.Bids)
	dst = append(dst, `,"asks":`...)
	dst = appendJSONString(dst, e.Asks)
	dst = append(dst, `,"is_snapshot":`...)
	dst = strconv.AppendInt(dst, int64(e.IsSnapshot), 10)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, e.Status)
	return append(dst, '}'), nil
}

// appendJSONFloat is encoding/json's float64 encoding: ES6 number formatting, 'e' form
// below 1e-6 and from 1e21 on, exponents without a leading zero.
func appendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	if k := math.Round(f * 100); f == k/100 && math.Abs(k) < 1e14 && (k != 0 || !math.Signbit(f)) {
		return appendCents(dst, int64(k)), nil
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendCents writes k/100 as its shortest decimal, which is what strconv writes for
// the double nearest k/100 (f above) when |k| < 1e14: any other decimal with as few
// significant digits is also a multiple of 0.01, so it lies at least 0.01 from f while
// the double's rounding interval is narrower than 0.001 there; the shortest digits
// that read back to f are therefore k/100's own. Prices and sizes are cents, and the
// unpopulated fields 0: this skips the general shortest-digits search for nearly all.
func appendCents(dst []byte, k int64) []byte {
	if k < 0 {
		dst = append(dst, '-')
		k = -k
	}
	dst = strconv.AppendInt(dst, k/100, 10)
	if c := k % 100; c != 0 {
		dst = append(dst, '.', byte('0'+c/10))
		if c%10 != 0 {
			dst = append(dst, byte('0'+c%10))
		}
	}
	return dst
}

// jsonPlain marks the ASCII bytes encoding/json copies into a string unescaped with
// HTML escaping off: everything from space up, except the quote and the backslash.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

const jsonHex = "0123456789abcdef"

// jsonWordNeedsLook reports whether any of the eight bytes of w is a control byte,
// a quote, a backslash or not ASCII (it may say yes for a plain byte next to such a
// byte, never no for one of them).
func jsonWordNeedsLook(w string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs } // high bit of each zero byte
	return (x&highs)|((x-0x20*ones) & ^x & highs)|zero(x^('"'*ones))|zero(x^('\\'*ones)) != 0
}

// appendJSONString is encoding/json's string encoding with HTML escaping off: \" and
// \\, the short escapes \b \f \n \r \t, \u00XX for other control bytes, \ufffd for
// each byte of invalid UTF-8, and \u2028 \u2029 escaped; everything else verbatim.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look (token ids are 78 digits).
		for i+8 <= len(s) && !jsonWordNeedsLook(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonPlain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[b>>4], jsonHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
