package query

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mdq/internal/testlake"
	"mdq/lake"
)

// stdJSON is what handlers.Encode wrote for every route before the append hook:
// encoding/json with HTML escaping off, without its trailing newline.
func stdJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func sameAsStdJSON(t *testing.T, what string, p EventsPage) {
	t.Helper()
	want, werr := stdJSON(p)
	got, gerr := p.AppendJSON([]byte("prefix"))
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: encoding/json error %v, AppendJSON error %v", what, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("%s:\nAppendJSON    %.400s\nencoding/json %.400s", what, got, want)
	}
}

// TestPredmktEventsJSONIsByteIdenticalToEncodingJSONOnTinyLake: the hand-written
// encoder of /v1/predmkt/events writes every page of the tiny lake's tape exactly as
// encoding/json does: a whole-window page, cut pages with has_more and next_cursor,
// every event type, and an empty page.
func TestPredmktEventsJSONIsByteIdenticalToEncodingJSONOnTinyLake(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	var first, last int64
	if err := q.db.QueryRowContext(ctx, "SELECT min(local_ts), max(local_ts) FROM predmkt_book_events").Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	n := 0
	for from := first; from <= last; from += EventsMaxWindowMs {
		for _, limit := range []int{50_000, 333} {
			p, err := q.PredmktEvents(ctx, PredmktEventsParams{FromMs: from, ToMs: from + EventsMaxWindowMs, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Events {
				types[e.EventType] = true
			}
			n += len(p.Events)
			sameAsStdJSON(t, "tiny lake page", p)
		}
	}
	if n == 0 || len(types) < 4 {
		t.Fatalf("compared %d events of types %v: too little to prove anything", n, types)
	}
	empty, err := q.PredmktEvents(ctx, PredmktEventsParams{FromMs: last + 1, ToMs: last + 2, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	sameAsStdJSON(t, "empty page", empty)
}

// jsonTrickyStrings are texts encoding/json escapes: quotes, backslashes, every
// control byte, HTML characters (not escaped with HTML escaping off), DEL, multi-byte
// UTF-8, U+2028 and U+2029, invalid and truncated UTF-8, and each of them at every
// offset of an eight-byte word.
func jsonTrickyStrings() []string {
	base := []string{"", "book", `[{"price":"0.54","size":"223.72"}]`, `a\b`, `\\"`, "<script>&amp;</script>",
		"\x7f", "é", "日本語", "🙂", "\u2028", "\u2029", "x\u2028y\u2029z", "\xff", "\xc3", "a\xe2\x80", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", strings.Repeat("7", 78), "\ufffd"}
	for c := 0; c < 0x20; c++ {
		base = append(base, string(rune(c)), "ab"+string(rune(c))+"cd")
	}
	var out []string
	for _, s := range base {
		out = append(out, s)
		for pad := 1; pad < 9; pad++ {
			out = append(out, strings.Repeat("0", pad)+s+strings.Repeat("9", 9-pad))
		}
	}
	return out
}

// jsonTrickyFloats are doubles around encoding/json's format cut-offs (1e-6, 1e21),
// negative zero, cents, the extremes, and values just off a cent.
func jsonTrickyFloats() []float64 {
	return []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.54, 0.1, 0.2, 0.3, 0.01, 0.05, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20,
		1e21, 123456789012.34, 99999999999999.99, 1e14, 1e15 + 0.25, 223.72, 0.1 + 0.2, math.Nextafter(0.54, 1),
		math.Nextafter(0.54, 0), math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 5e-324, 1 / 3.0,
		-2.675, 1e100, -1e-300}
}

// TestPredmktEventsJSONIsByteIdenticalToEncodingJSONOnFixtures: hand-built events with
// every text escaping case in every text field, empty fields, doubles at the format
// cut-offs, every cent from -2,000.00 to 2,000.00 (the encoder's shortcut for
// cents), random doubles of every magnitude, a nil events list, has_more with a
// cursor, and NaN and infinities, which both refuse.
func TestPredmktEventsJSONIsByteIdenticalToEncodingJSONOnFixtures(t *testing.T) {
	strs := jsonTrickyStrings()
	floats := jsonTrickyFloats()
	var evs []TapeEvent
	for i, s := range strs {
		f := floats[i%len(floats)]
		evs = append(evs, TapeEvent{EventType: s, TokenID: strs[(i+1)%len(strs)], TS: int64(i) - 5, LocalTS: math.MaxInt64 - int64(i),
			Seq: math.MinInt64 + int64(i), Side: strs[(i+2)%len(strs)], Price: f, Size: -f, BestBid: floats[(i+3)%len(floats)],
			BestAsk: floats[(i+7)%len(floats)], Bids: s + s, Asks: strs[(i+5)%len(strs)], IsSnapshot: i%3 - 1, Status: s})
	}
	evs = append(evs, TapeEvent{}) // every field unpopulated
	cur := strs[len(strs)/2] + ":\u2028\"x"
	sameAsStdJSON(t, "tricky strings", EventsPage{Events: evs, HasMore: true, NextCursor: &cur})
	sameAsStdJSON(t, "nil events", EventsPage{})
	sameAsStdJSON(t, "empty events", EventsPage{Events: []TapeEvent{}})

	// Every cent over a range wider than the tape's prices and sizes.
	var cents []TapeEvent
	for k := int64(-200_000); k <= 200_000; k += 4 {
		cents = append(cents, TapeEvent{Price: float64(k) / 100, Size: float64(k+1) / 100, BestBid: float64(k+2) / 100, BestAsk: float64(k+3) / 100})
	}
	sameAsStdJSON(t, "cents", EventsPage{Events: cents})

	// Random doubles: random bit patterns (every exponent) and random values on scales
	// near cents and near the cut-offs.
	r := rand.New(rand.NewPCG(4, 50_000))
	var rnd []TapeEvent
	for len(rnd) < 25_000 {
		var f [4]float64
		for j := range f {
			switch r.IntN(4) {
			case 0:
				f[j] = math.Float64frombits(r.Uint64())
			case 1:
				f[j] = float64(r.Int64N(2e16)-1e16) / 100
			case 2:
				f[j] = r.Float64() * math.Pow(10, float64(r.IntN(50)-25))
			default:
				f[j] = float64(r.Int64N(1e9)) / math.Pow(10, float64(r.IntN(12)))
			}
			if math.IsNaN(f[j]) || math.IsInf(f[j], 0) {
				f[j] = 0.25
			}
		}
		rnd = append(rnd, TapeEvent{Price: f[0], Size: f[1], BestBid: f[2], BestAsk: f[3]})
	}
	sameAsStdJSON(t, "random doubles", EventsPage{Events: rnd})

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for field := range 4 {
			e := TapeEvent{EventType: "trade"}
			*[]*float64{&e.Price, &e.Size, &e.BestBid, &e.BestAsk}[field] = bad
			p := EventsPage{Events: []TapeEvent{e}}
			if _, err := p.AppendJSON(nil); err == nil {
				t.Fatalf("%v in field %d: encoded, encoding/json refuses it", bad, field)
			}
			sameAsStdJSON(t, "unsupported double", p)
		}
	}
}

// FuzzPredmktEventsJSON holds the hand-written encoder to encoding/json on arbitrary
// texts and doubles; its seeds (the tricky texts and doubles) run with go test.
func FuzzPredmktEventsJSON(f *testing.F) {
	strs, floats := jsonTrickyStrings(), jsonTrickyFloats()
	for i, s := range strs {
		f.Add(s, floats[i%len(floats)], int64(i))
	}
	f.Fuzz(func(t *testing.T, s string, x float64, n int64) {
		e := TapeEvent{EventType: s, TokenID: s + s, TS: n, LocalTS: -n, Seq: n, Side: s, Price: x, Size: -x,
			BestBid: x / 3, BestAsk: x * 1e7, Bids: s, Asks: s, IsSnapshot: int(n), Status: s}
		sameAsStdJSON(t, "fuzz", EventsPage{Events: []TapeEvent{e}, NextCursor: &s})
	})
}

// TestPredmktEventsReadOddStoredValuesBackExactly: a hand-built tape file whose
// doubles are not cents (thirds, 1e-7, 1e300, the smallest subnormal, -0, NaN and
// infinities, values one ulp off a cent, large values), whose texts hold commas,
// quotes, digits and multi-byte UTF-8 (they travel length-prefixed in one value), and
// whose optional fields are NULL or empty, reads back through PredmktEvents, on both
// the bounded read sorted in Go and events.sql's sorted window, exactly as stored,
// with 0 and "" for NULL (SPEC: zero values for fields an event does not populate).
func TestPredmktEventsReadOddStoredValuesBackExactly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, lake.MarkerFile), []byte(`{"end":"2026-11-20T12:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "archive", "venue=predmkt", "date=2026-11-19")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	doubles := []float64{0, math.Copysign(0, -1), 0.54, 1 / 3.0, -2.0 / 3, 1e-7, 1e300, -1e300, 5e-324, math.NaN(), math.Inf(1),
		math.Inf(-1), math.Nextafter(0.54, 1), math.Nextafter(0.54, 0), 999_999_999_999.99, 1e12, 1_000_000_000_000.01, -0.01, 12345.6,
		0.1 + 0.2, 123.456}
	texts := []string{"", "book", "a,b", `[{"price":"0.5","size":"1"}]`, "12,34,", "日本,語", "\"", ",", "0"}
	const base = int64(1_795_000_000_000)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE e (event_type VARCHAR, token_id VARCHAR, ts BIGINT, local_ts BIGINT, seq BIGINT, side VARCHAR,
		price DOUBLE, size DOUBLE, best_bid DOUBLE, best_ask DOUBLE, bids VARCHAR, asks VARCHAR, is_snapshot INTEGER, status VARCHAR)`); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, d := range doubles {
		for j, s := range texts {
			null := (i+j)%4 == 0 // NULL optional fields on a quarter of the rows
			opt := func(v any) any {
				if null {
					return nil
				}
				return v
			}
			if _, err := db.Exec(`INSERT INTO e VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				texts[(j+1)%len(texts)]+"x", "7"+s, base+int64(n), base+int64(n/3), int64(n%3), opt(s), opt(d), opt(-d),
				opt(doubles[(i+j)%len(doubles)]), opt(d*3), opt(s+s), opt(texts[(j+2)%len(texts)]), opt(n%2), opt(s)); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if _, err := db.Exec(`COPY (SELECT * FROM e ORDER BY token_id, local_ts, seq) TO '` + filepath.Join(part, "book_events.parquet") + `' (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}
	q := openTapeLake(t, dir, testlake.Now())
	ctx := context.Background()
	// Every token: the bounded read sorted in Go; a token filter: events.sql's sort.
	var toks []string
	for _, s := range texts {
		if !strings.Contains(s, ",") { // token ids are digits; the filter is comma-separated
			toks = append(toks, "7"+s)
		}
	}
	for _, c := range []struct {
		limit int
		toks  []string
	}{{n, nil}, {7, nil}, {5, toks}} {
		limit := c.limit
		var got []TapeEvent
		p := PredmktEventsParams{FromMs: base - 1, ToMs: base + int64(n), Limit: limit, TokenIDs: c.toks}
		for {
			page, err := q.PredmktEvents(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Events...)
			if !page.HasMore {
				break
			}
			l := page.Events[len(page.Events)-1]
			p.After = &EventCursor{l.LocalTS, l.Seq, l.TokenID}
		}
		rows, err := db.Query(`SELECT event_type, token_id, ts, local_ts, seq, coalesce(side, ''), coalesce(price, 0), coalesce(size, 0),
			coalesce(best_bid, 0), coalesce(best_ask, 0), coalesce(bids, ''), coalesce(asks, ''), coalesce(is_snapshot, 0), coalesce(status, '')
			FROM read_parquet('` + filepath.Join(part, "book_events.parquet") + `') ORDER BY local_ts, seq, token_id`)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rows.Next() {
			var e TapeEvent
			if err := rows.Scan(&e.EventType, &e.TokenID, &e.TS, &e.LocalTS, &e.Seq, &e.Side, &e.Price, &e.Size,
				&e.BestBid, &e.BestAsk, &e.Bids, &e.Asks, &e.IsSnapshot, &e.Status); err != nil {
				t.Fatal(err)
			}
			if c.toks != nil && !slices.Contains(c.toks, e.TokenID) {
				continue
			}
			i++
			if i > len(got) || !sameEventBits(got[i-1], e) {
				t.Fatalf("limit %d, event %d: route %+v, stored %+v", limit, i-1, got[min(i, len(got))-1], e)
			}
		}
		rows.Close()
		if i != len(got) || i == 0 || (c.toks == nil && i != n) {
			t.Fatalf("limit %d, tokens %q: route %d events, stored %d", limit, c.toks, len(got), i)
		}
	}
}

// sameEventBits compares events with doubles by their bits (-0 is not 0), any NaN
// matching any NaN (encoding refuses them all).
func sameEventBits(a, b TapeEvent) bool {
	for _, f := range [][2]*float64{{&a.Price, &b.Price}, {&a.Size, &b.Size}, {&a.BestBid, &b.BestBid}, {&a.BestAsk, &b.BestAsk}} {
		if math.Float64bits(*f[0]) != math.Float64bits(*f[1]) && !(math.IsNaN(*f[0]) && math.IsNaN(*f[1])) {
			return false
		}
		*f[0], *f[1] = 0, 0
	}
	return a == b
}
