package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestPredmktEventsBodyIsByteIdenticalToEncodingJSON: /v1/predmkt/events is written by
// the page's own encoder (handlers.JSONAppender); its body is exactly what
// encoding/json wrote for the same page (HTML escaping off, one newline), on a full
// 24-hour page of the tiny lake and on a cut page resumed from a cursor.
func TestPredmktEventsBodyIsByteIdenticalToEncodingJSON(t *testing.T) {
	q, h, last := eventsStore(t)
	ctx := context.Background()
	from, to := last-86_400_000+1, last+1
	first, err := q.PredmktEvents(ctx, query.PredmktEventsParams{FromMs: from, ToMs: to, Limit: 777})
	if err != nil {
		t.Fatal(err)
	}
	if !first.HasMore {
		t.Fatal("the tiny lake's last day holds under 777 events: no cut page to compare")
	}
	c := query.EventCursor{LocalTS: first.Events[776].LocalTS, Seq: first.Events[776].Seq, TokenID: first.Events[776].TokenID}
	cases := []struct {
		qs string
		p  query.PredmktEventsParams
	}{
		{fmt.Sprintf("from_ms=%d&to_ms=%d&limit=50000", from, to), query.PredmktEventsParams{FromMs: from, ToMs: to, Limit: 50_000}},
		{fmt.Sprintf("from_ms=%d&to_ms=%d&limit=777&cursor=%s", from, to, url.QueryEscape(c.String())),
			query.PredmktEventsParams{FromMs: from, ToMs: to, Limit: 777, After: &c}},
	}
	for _, tc := range cases {
		page, err := q.PredmktEvents(ctx, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		want := stdJSON(t, page)
		code, body := get(t, h, "/v1/predmkt/events?"+tc.qs)
		if code != 200 || len(page.Events) == 0 || !bytes.Equal(body, want) {
			t.Fatalf("%s: %d, %d events\nREST          %.300s\nencoding/json %.300s", tc.qs, code, len(page.Events), body, want)
		}
	}
}

type failingAppender struct{}

func (failingAppender) AppendJSON(dst []byte) ([]byte, error) {
	return append(dst, `{"partial":`...), errors.New("json: unsupported value: NaN")
}

// TestEncodeWritesNothingWhenAppenderFails: like encoding/json, Encode writes nothing
// when a JSONAppender fails, so a route answers 503 with a clean error body.
func TestEncodeWritesNothingWhenAppenderFails(t *testing.T) {
	var buf bytes.Buffer
	if err := handlers.Encode(&buf, failingAppender{}); err == nil || buf.Len() != 0 {
		t.Fatalf("error %v, wrote %q", err, buf.String())
	}
}

// TestPredmktEventsReleasedPagesLeaveLaterOnesIntact: the REST handler hands each
// events page's memory back once its body is encoded, and a later page reuses it.
// Requests of different windows in turn, each several times, answer exactly what
// encoding/json writes for a page read by the store directly (never released).
func TestPredmktEventsReleasedPagesLeaveLaterOnesIntact(t *testing.T) {
	q, h, last := eventsStore(t)
	ctx := context.Background()
	windows := []query.PredmktEventsParams{
		{FromMs: last - 86_400_000 + 1, ToMs: last + 1, Limit: 50_000},
		{FromMs: last - 3*3_600_000, ToMs: last - 3_600_000, EventType: "book", Limit: 997},
		{FromMs: last - 7_200_000, ToMs: last + 1, Limit: 10},
	}
	want := make([][]byte, len(windows))
	for i, p := range windows {
		page, err := q.PredmktEvents(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == 0 {
			t.Fatalf("window %d holds no event: nothing compared", i)
		}
		want[i] = stdJSON(t, page)
	}
	// Three clients at once, each through the windows in its own order: a page whose
	// memory were handed back before its body was encoded would be overwritten by
	// another client's page.
	var wg sync.WaitGroup
	for client := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 6 {
				i := (round + client) % len(windows)
				p := windows[i]
				qs := fmt.Sprintf("from_ms=%d&to_ms=%d&limit=%d", p.FromMs, p.ToMs, p.Limit)
				if p.EventType != "" {
					qs += "&event_type=" + p.EventType
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/predmkt/events?"+qs, nil))
				if body := rec.Body.Bytes(); rec.Code != 200 || !bytes.Equal(body, want[i]) {
					t.Errorf("client %d round %d window %d: %d\nREST   %.300s\nstore  %.300s", client, round, i, rec.Code, body, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// eventsStore opens the tiny lake with its REST handler and returns the last local_ts
// of its tape.
func eventsStore(t *testing.T) (*query.Queries, http.Handler, int64) {
	t.Helper()
	q := openQueries(t, testlake.Tiny(t))
	var last int64
	if err := q.DB().QueryRowContext(context.Background(), "SELECT max(local_ts) FROM predmkt_book_events").Scan(&last); err != nil {
		t.Fatal(err)
	}
	return q, (&handlers.API{Q: q}).Handler(), last
}

// stdJSON is what encoding/json writes for v with HTML escaping off, as handlers.Encode
// promises to write.
func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
