package onchain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"mdq/ingest"
)

// LoadPrices reads an hourly price file into l: CSV with the header
// chain,token_address,hour,price_usd, or JSON (an array of objects with those keys, or
// one object per line). hour is RFC 3339, "YYYY-MM-DD HH:MM:SS" (UTC) or unix seconds,
// truncated to the hour; price_usd is the USD price of one whole token (a number, or a
// number in a string). Rows of every supported chain are staged into that chain's
// prices; the loader's chain's prices also price this run's transfers.
func LoadPrices(l *Loader, path string, opt Options) error {
	f, err := ingest.Open(path, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(512)
	trimmed := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		return pricesJSON(l, path, br, trimmed[0] == '[', opt)
	}
	return csvFile2(path, br, opt, &l.Sum, []string{"chain", "token_address", "hour", "price_usd"}, func(col func(string) string) error {
		return addPrice(l, col("chain"), col("token_address"), col("hour"), json.Number(col("price_usd")))
	})
}

type priceRec struct {
	Chain string      `json:"chain"`
	Token string      `json:"token_address"`
	Hour  json.Number `json:"hour"`
	Price json.Number `json:"price_usd"`
}

// UnmarshalJSON takes hour as a string or a number, price as a number or a string.
func (p *priceRec) UnmarshalJSON(b []byte) error {
	var raw struct {
		Chain string          `json:"chain"`
		Token string          `json:"token_address"`
		Hour  json.RawMessage `json:"hour"`
		Price json.RawMessage `json:"price_usd"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p.Chain, p.Token = raw.Chain, raw.Token
	p.Hour = json.Number(strings.Trim(string(raw.Hour), `"`))
	p.Price = json.Number(strings.Trim(string(raw.Price), `"`))
	return nil
}

func pricesJSON(l *Loader, path string, r io.Reader, array bool, opt Options) error {
	if !array {
		return ingest.Lines(r, path, func(line int, b []byte) error {
			l.Sum.Read++
			var p priceRec
			err := json.Unmarshal(b, &p)
			if err == nil {
				err = addPrice(l, p.Chain, p.Token, string(p.Hour), p.Price)
			}
			return skipOr(err, path, line, opt, &l.Sum)
		})
	}
	// An array: decode element by element, naming the line each starts on.
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
	if _, err := dec.Token(); err != nil {
		return &ingest.LineError{File: path, Line: 1, Reason: err.Error()}
	}
	for dec.More() {
		// InputOffset is the end of the previous value; the element starts after it.
		off := dec.InputOffset()
		for off < int64(len(data)) && (data[off] == ',' || data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t') {
			off++
		}
		line := lineAt(off)
		var p priceRec
		if err := dec.Decode(&p); err != nil {
			return &ingest.LineError{File: path, Line: line, Reason: err.Error()}
		}
		l.Sum.Read++
		if err := skipOr(addPrice(l, p.Chain, p.Token, string(p.Hour), p.Price), path, line, opt, &l.Sum); err != nil {
			return err
		}
	}
	return nil
}

// skipOr turns a row's error into FILE:LINE, or counts and reports it with SkipBad.
func skipOr(err error, path string, line int, opt Options, sum *ingest.Summary) error {
	if err == nil {
		return nil
	}
	var re *RunError
	if errors.As(err, &re) {
		return re.Err
	}
	if opt.SkipBad {
		sum.Rejected++
		if opt.Warn != nil {
			fmt.Fprintf(opt.Warn, "%s:%d: %v (skipped)\n", path, line, err)
		}
		return nil
	}
	return &ingest.LineError{File: path, Line: line, Reason: err.Error()}
}

func addPrice(l *Loader, chain, token, hour string, price json.Number) error {
	if !ValidChain(chain) {
		return fmt.Errorf("chain %q not supported (use ethereum, bsc, or base)", chain)
	}
	addr, err := Address(token)
	if err != nil {
		return fmt.Errorf("token_address: %w", err)
	}
	h, err := parseTime(hour)
	if err != nil {
		return fmt.Errorf("hour: %w", err)
	}
	p, err := strconv.ParseFloat(string(price), 64)
	if err != nil || p < 0 || math.IsInf(p, 0) || math.IsNaN(p) {
		return fmt.Errorf("bad price_usd %q (want a non-negative number)", string(price))
	}
	return l.AddPrice(chain, addr, h, p)
}

// parseTime reads an instant: RFC 3339, "YYYY-MM-DD HH:MM:SS" (UTC), or unix seconds.
func parseTime(s string) (time.Time, error) {
	ts, err := parseTimestamp(s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(ts, 0).UTC(), nil
}

// csvFile2 reads a small CSV (prices, labels, ENS) with required columns: fn gets each
// row through a column lookup; errors are FILE:LINE: reason (or skipped with SkipBad).
func csvFile2(path string, r io.Reader, opt Options, sum *ingest.Summary, required []string, fn func(col func(string) string) error) error {
	var idx map[string]int
	var fields []string
	col := func(name string) string {
		if i, ok := idx[name]; ok && i < len(fields) {
			return strings.TrimSpace(fields[i])
		}
		return ""
	}
	return ingest.Lines(r, path, func(line int, b []byte) error {
		rec, err := splitCSVLine(b)
		if err != nil {
			return skipOr(err, path, line, opt, sum)
		}
		if idx == nil {
			idx = map[string]int{}
			for i, c := range rec {
				idx[strings.TrimSpace(strings.TrimPrefix(c, "\ufeff"))] = i
			}
			for _, c := range required {
				if _, ok := idx[c]; !ok {
					return fmt.Errorf("header lacks column %s (want %s)", c, strings.Join(required, ","))
				}
			}
			return nil
		}
		sum.Read++
		if len(rec) != len(idx) {
			return skipOr(fmt.Errorf("%d fields, header has %d", len(rec), len(idx)), path, line, opt, sum)
		}
		fields = rec
		return skipOr(fn(col), path, line, opt, sum)
	})
}

// splitCSVLine splits one CSV line (quoted fields with "" escapes; no line breaks
// inside a field in these small files).
func splitCSVLine(b []byte) ([]string, error) {
	var out []string
	s := string(b)
	for {
		if strings.HasPrefix(s, `"`) {
			var sb strings.Builder
			i := 1
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return nil, errors.New("unterminated quoted field")
				}
				sb.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					sb.WriteByte('"')
					i++
					continue
				}
				break
			}
			out = append(out, sb.String())
			s = s[i:]
			if s == "" {
				return out, nil
			}
			if s[0] != ',' {
				return nil, errors.New("text after a quoted field")
			}
			s = s[1:]
			continue
		}
		j := strings.IndexByte(s, ',')
		if j < 0 {
			return append(out, s), nil
		}
		out = append(out, s[:j])
		s = s[j+1:]
	}
}
