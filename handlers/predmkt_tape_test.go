package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// tapeFixture holds a small hand-built tape on two tokens: three book snapshots of
// token A (one with a duplicated price level and one with an empty ask side), one
// snapshot of B, trades, price changes and a status marker, several sharing a
// local_ts so the (local_ts, seq, token_id) order is exercised.
func tapeFixture() (*pmFixture, string, string, int64) {
	now := testlake.Now()
	f := &pmFixture{profiles: map[string][2]string{}}
	m := f.addMarket("Crypto", now.Add(-48*time.Hour), nil)
	a, b := f.markets[m].tokens[0], f.markets[m].tokens[1]
	t0 := now.Add(-20 * time.Hour).UnixMilli()
	book := func(tok string, ts, seq int64, bids, asks string) {
		f.events = append(f.events, pmEvent{typ: "book", token: tok, ts: ts, local: ts + 4, seq: seq, bids: bids, asks: asks, snapshot: 1})
	}
	book(a, t0, 1, `[{"price":"0.48","size":"100"},{"price":"0.47","size":"50"}]`, `[{"price":"0.52","size":"80"}]`)
	book(b, t0, 1, `[{"price":"0.50","size":"10"}]`, `[{"price":"0.53","size":"10"}]`)
	// Duplicated level 0.49 (as SPEC documents upstream) and 30 bid levels (depth cap).
	var bids []string
	bids = append(bids, `{"price":"0.49","size":"200"}`, `{"price":"0.49","size":"200"}`)
	for i := range 30 {
		bids = append(bids, fmt.Sprintf(`{"price":"0.%02d","size":"%d"}`, 48-i, 10+i))
	}
	book(a, t0+60_000, 2, "["+strings.Join(bids, ",")+"]", `[{"price":"0.51","size":"5"},{"price":"0.51","size":"5"}]`)
	book(a, t0+120_000, 3, `[{"price":"0.45","size":"1"}]`, `[]`) // no asks at all
	for i := range 40 {
		ts := t0 + int64(i)*1000
		f.events = append(f.events,
			pmEvent{typ: "price_change", token: a, ts: ts, local: ts + 4, seq: int64(10 + i), side: "BUY", price: 0.48, size: 5, bestBid: 0.48, bestAs: 0.52},
			pmEvent{typ: "trade", token: b, ts: ts, local: ts + 4, seq: int64(10 + i), side: "SELL", price: 0.5, size: 3, bestBid: 0.5, bestAs: 0.53})
	}
	f.events = append(f.events, pmEvent{typ: "status", token: a, ts: t0 + 500_000, local: t0 + 500_000, seq: 99, status: "gap"})
	return f, a, b, t0
}

// TestPredmktOrderbookRules: SPEC §2.2 and §4.2 rules of /v1/predmkt/orderbook.
func TestPredmktOrderbookRules(t *testing.T) {
	f, a, _, t0 := tapeFixture()
	q := openQueries(t, f.write(t))
	h := (&handlers.API{Q: q}).Handler()
	book := func(qs string) []query.BookRow {
		var rows []query.BookRow
		getJSON(t, h, "/v1/predmkt/orderbook?token_id="+a+qs, &rows)
		return rows
	}
	t.Run("latest snapshot when ts is omitted, and a side may hold no rows", func(t *testing.T) {
		rows := book("")
		if len(rows) != 1 || rows[0].AsOfTS != t0+120_000 || rows[0].Side != "bid" || rows[0].Level != 1 || rows[0].Price != 0.45 {
			t.Fatalf("%+v", rows)
		}
	})
	t.Run("nearest snapshot at or before ts; as_of_ts is the snapshot used", func(t *testing.T) {
		for _, tc := range []struct{ ts, want int64 }{{t0, t0}, {t0 + 59_999, t0}, {t0 + 60_000, t0 + 60_000}, {t0 + 119_999, t0 + 60_000}} {
			rows := book(fmt.Sprintf("&ts=%d", tc.ts))
			if len(rows) == 0 || rows[0].AsOfTS != tc.want {
				t.Fatalf("ts=%d: %+v", tc.ts, rows)
			}
		}
	})
	t.Run("ts before the token's tape began returns []", func(t *testing.T) {
		code, body := get(t, h, fmt.Sprintf("/v1/predmkt/orderbook?token_id=%s&ts=%d", a, t0-1))
		if code != 200 || strings.TrimSpace(string(body)) != "[]" {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("each side and level once, levels from 1 at the touch, depth 25 capped at 25", func(t *testing.T) {
		for _, qs := range []string{"", "&depth=25", "&depth=100"} {
			rows := book(fmt.Sprintf("&ts=%d%s", t0+60_000, qs))
			seen := map[string]bool{}
			bids, asks := 0, 0
			for _, r := range rows {
				k := fmt.Sprintf("%s/%d", r.Side, r.Level)
				if seen[k] {
					t.Fatalf("%s twice", k)
				}
				seen[k] = true
				if r.Side == "bid" {
					bids++
					if r.Level != bids {
						t.Fatalf("bid level %d at position %d", r.Level, bids)
					}
				} else {
					asks++
				}
			}
			// 31 distinct bid prices (0.49 listed twice), one distinct ask price.
			if bids != 25 || asks != 1 || rows[0].Price != 0.49 || rows[0].Size != 200 || rows[1].Price != 0.48 {
				t.Fatalf("%s: %d bids, %d asks, first %+v", qs, bids, asks, rows[0])
			}
		}
		rows := book(fmt.Sprintf("&ts=%d&depth=3", t0+60_000))
		if len(rows) != 4 {
			t.Fatalf("depth=3: %d rows", len(rows))
		}
	})
	for _, tc := range []struct{ rule, qs, body string }{
		{"token_id is required", "depth=5", `{"error":"token_id is required"}`},
		{"depth must be positive", "token_id=1&depth=0", `{"error":"depth must be at least 1"}`},
		{"ts must be an integer", "token_id=1&ts=yesterday", `{"error":"ts must be an integer"}`},
		{"unknown query parameter is 400", "token_id=1&side=bid", `{"error":"unknown query parameter \"side\""}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, body := get(t, h, "/v1/predmkt/orderbook?"+tc.qs)
			if code != 400 || strings.TrimSpace(string(body)) != tc.body {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}

type eventKey struct {
	lt, seq int64
	tok     string
}

// TestPredmktEventsRules: SPEC §2.2, §4.2 and §7 rules of /v1/predmkt/events.
func TestPredmktEventsRules(t *testing.T) {
	f, a, b, t0 := tapeFixture()
	q := openQueries(t, f.write(t))
	h := (&handlers.API{Q: q}).Handler()
	from, to := t0-1000, t0+86_400_000-1000
	page := func(qs string) query.EventsPage {
		var p query.EventsPage
		getJSON(t, h, "/v1/predmkt/events?"+qs, &p)
		return p
	}
	all := page(fmt.Sprintf("from_ms=%d&to_ms=%d", from, to))
	t.Run("ordered by local_ts, seq, token_id; last page has has_more false and next_cursor null", func(t *testing.T) {
		if len(all.Events) != len(f.events) || all.HasMore || all.NextCursor != nil {
			t.Fatalf("%d events (fixture %d), has_more %v", len(all.Events), len(f.events), all.HasMore)
		}
		keys := make([]eventKey, len(all.Events))
		for i, e := range all.Events {
			keys[i] = eventKey{e.LocalTS, e.Seq, e.TokenID}
		}
		if !sort.SliceIsSorted(keys, func(i, j int) bool {
			x, y := keys[i], keys[j]
			if x.lt != y.lt {
				return x.lt < y.lt
			}
			if x.seq != y.seq {
				return x.seq < y.seq
			}
			return x.tok < y.tok
		}) {
			t.Fatal("not in (local_ts, seq, token_id) order")
		}
		code, body := get(t, h, fmt.Sprintf("/v1/predmkt/events?from_ms=%d&to_ms=%d", from, to))
		if code != 200 || !strings.Contains(string(body), `"has_more":false,"next_cursor":null}`) {
			t.Fatalf("next_cursor not present as null: %s", body[max(0, len(body)-80):])
		}
	})
	t.Run("paging with the cursor resumes strictly after it, also on a page's last event", func(t *testing.T) {
		var got []query.TapeEvent
		cursor := ""
		pages := 0
		for {
			qs := fmt.Sprintf("from_ms=%d&to_ms=%d&limit=7", from, to)
			if cursor != "" {
				qs += "&cursor=" + url.QueryEscape(cursor)
			}
			p := page(qs)
			pages++
			got = append(got, p.Events...)
			if !p.HasMore {
				if p.NextCursor != nil {
					t.Fatal("next_cursor on the last page")
				}
				break
			}
			last := p.Events[len(p.Events)-1]
			if want := fmt.Sprintf("%d:%d:%s", last.LocalTS, last.Seq, last.TokenID); *p.NextCursor != want {
				t.Fatalf("next_cursor %s, want %s", *p.NextCursor, want)
			}
			cursor = *p.NextCursor
		}
		if jsonOf(got) != jsonOf(all.Events) || pages != (len(all.Events)+6)/7 {
			t.Fatalf("paged %d events in %d pages, whole %d", len(got), pages, len(all.Events))
		}
	})
	t.Run("window is half-open on local_ts", func(t *testing.T) {
		first := all.Events[0].LocalTS
		if p := page(fmt.Sprintf("from_ms=%d&to_ms=%d", first-10, first)); len(p.Events) != 0 {
			t.Fatalf("to_ms is exclusive: %d events", len(p.Events))
		}
		p := page(fmt.Sprintf("from_ms=%d&to_ms=%d", first, first+1))
		if len(p.Events) == 0 || p.Events[0].LocalTS != first {
			t.Fatalf("from_ms is inclusive: %+v", p.Events)
		}
	})
	t.Run("token_ids wins over token_id; event_type filters", func(t *testing.T) {
		p := page(fmt.Sprintf("from_ms=%d&to_ms=%d&token_id=%s&token_ids=%s", from, to, a, b))
		for _, e := range p.Events {
			if e.TokenID != b {
				t.Fatalf("token %s listed", e.TokenID)
			}
		}
		p = page(fmt.Sprintf("from_ms=%d&to_ms=%d&token_id=%s&event_type=book", from, to, a))
		if len(p.Events) != 3 {
			t.Fatalf("%d book events of A", len(p.Events))
		}
		for _, e := range p.Events {
			if e.EventType != "book" || e.TokenID != a || e.IsSnapshot != 1 || !json.Valid([]byte(e.Bids)) || e.Price != 0 || e.Side != "" {
				t.Fatalf("%+v", e)
			}
		}
	})
	t.Run("unpopulated fields are 0 and empty strings, never null", func(t *testing.T) {
		code, body := get(t, h, fmt.Sprintf("/v1/predmkt/events?from_ms=%d&to_ms=%d&event_type=status", from, to))
		if code != 200 || strings.Contains(string(body), "null,") || !strings.Contains(string(body), `"price":0,"size":0,"best_bid":0,"best_ask":0,"bids":"","asks":"","is_snapshot":0,"status":"gap"`) {
			t.Fatalf("%s", body)
		}
	})
	t.Run("a window of exactly 86,400,000 ms is accepted", func(t *testing.T) {
		code, body := get(t, h, fmt.Sprintf("/v1/predmkt/events?from_ms=%d&to_ms=%d", from, from+86_400_000))
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("limit defaults to 5000 and is capped at 50000", func(t *testing.T) {
		for _, qs := range []string{"", "&limit=1000000"} {
			if p := page(fmt.Sprintf("from_ms=%d&to_ms=%d%s", from, to, qs)); len(p.Events) != len(all.Events) || p.HasMore {
				t.Fatalf("%s: %d events", qs, len(p.Events))
			}
		}
	})
	many := strings.TrimSuffix(strings.Repeat("1,", 101), ",")
	for _, tc := range []struct{ rule, qs, body string }{
		{"a window one ms over 24 hours is refused naming requested and maximum", fmt.Sprintf("from_ms=%d&to_ms=%d", from, from+86_400_001),
			`{"error":"window of 86400001 ms exceeds the maximum of 86400000 ms (24 hours)"}`},
		{"more than 100 tokens is refused naming the count and maximum", fmt.Sprintf("from_ms=%d&to_ms=%d&token_ids=%s", from, to, many),
			`{"error":"token_ids holds 101 tokens; the maximum is 100"}`},
		{"to_ms must be greater than from_ms", fmt.Sprintf("from_ms=%d&to_ms=%d", from, from),
			fmt.Sprintf(`{"error":"to_ms (%d) must be greater than from_ms (%d)"}`, from, from)},
		{"from_ms is required", "to_ms=5", `{"error":"from_ms is required"}`},
		{"unknown event_type is 400", fmt.Sprintf("from_ms=%d&to_ms=%d&event_type=fill", from, to), `{"error":"event_type must be one of book, price_change, trade, tick_size_change, status"}`},
		{"malformed cursor is 400", fmt.Sprintf("from_ms=%d&to_ms=%d&cursor=abc", from, to), `{"error":"cursor \"abc\" is not of the form <local_ts>:<seq>:<token_id>"}`},
		{"unknown query parameter is 400", fmt.Sprintf("from_ms=%d&to_ms=%d&market=x", from, to), `{"error":"unknown query parameter \"market\""}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, body := get(t, h, "/v1/predmkt/events?"+tc.qs)
			if code != 400 || strings.TrimSpace(string(body)) != tc.body {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}
