// Package predmkt reads the prediction-market venue's public raw formats (the CLOB
// websocket market channel, Gamma market and event metadata, the Data API's wallet
// fills and the exchange contract's OrderFilled logs) into the lake tables of
// docs/DATA.md, and records the market channel live. Parsing is here; staging and the
// idempotent partition merge are package ingest's.
package predmkt

import (
	"errors"
	"fmt"
	"strconv"
)

// fixScale is the fixed-point scale of book arithmetic: prices and sizes are held as
// integers of 1e-8, so a book replayed from deltas and trades never drifts the way
// float sums do (the venue quotes at most 6 decimals).
const fixScale = 100_000_000

// decimal is one exact decimal from the feed: its fixed-point value and the nearest
// float64 (what the lake stores; ParseFloat is correctly rounded, so "0.51" stores
// exactly what 51/100 does).
type decimal struct {
	fix int64
	f   float64
}

var errDecimal = errors.New("not a decimal")

// parseDecimal reads a non-negative decimal string ("0.51", "25.0", "3149725.72",
// "1e-3" is refused: the venue never sends exponents and a typo must not pass).
func parseDecimal(s string) (decimal, error) {
	if s == "" {
		return decimal{}, errDecimal
	}
	var intPart, frac int64
	digits, fdigits := 0, 0
	seenDot := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !seenDot:
			seenDot = true
		case c >= '0' && c <= '9':
			d := int64(c - '0')
			if !seenDot {
				if intPart > (1<<62)/fixScale/10 {
					return decimal{}, fmt.Errorf("%q is too large", s)
				}
				intPart = intPart*10 + d
				digits++
				continue
			}
			if fdigits < 8 {
				frac = frac*10 + d
				fdigits++
			} else if d != 0 {
				return decimal{}, fmt.Errorf("%q has more than 8 decimal places", s)
			}
		default:
			return decimal{}, fmt.Errorf("%q is not a plain decimal", s)
		}
	}
	if digits == 0 && fdigits == 0 {
		return decimal{}, fmt.Errorf("%q is not a plain decimal", s)
	}
	for i := fdigits; i < 8; i++ {
		frac *= 10
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return decimal{}, fmt.Errorf("%q: %v", s, err)
	}
	return decimal{fix: intPart*fixScale + frac, f: f}, nil
}

// fixFloat converts a fixed-point value back to the float64 nearest its decimal value
// (through its exact decimal text, so it equals parseDecimal of the same number).
func fixFloat(v int64) float64 {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v/fixScale, 10) + "." + fmt.Sprintf("%08d", v%fixScale)
	f, _ := strconv.ParseFloat(s, 64)
	if neg {
		f = -f
	}
	return f
}
