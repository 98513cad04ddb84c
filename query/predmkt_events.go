package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sqlfiles "mdq/sql"
)

var (
	predmktEventsSQL     = sqlfiles.MustRead("predmkt/events.sql")
	predmktEventsSpanSQL = sqlfiles.MustRead("predmkt/events_span.sql")
)

// EventsMaxWindowMs and EventsMaxTokens are SPEC's limits on one /events request.
const (
	EventsMaxWindowMs = 86_400_000
	EventsMaxTokens   = 100
)

// EventCursor is the position of an event in tape order.
type EventCursor struct {
	LocalTS int64
	Seq     int64
	TokenID string
}

// String renders the cursor as SPEC writes it: <local_ts>:<seq>:<token_id>.
func (c EventCursor) String() string { return fmt.Sprintf("%d:%d:%s", c.LocalTS, c.Seq, c.TokenID) }

// PredmktEventsParams are the inputs of PredmktEvents.
type PredmktEventsParams struct {
	TokenIDs  []string // empty: every token
	FromMs    int64    // inclusive, on local_ts
	ToMs      int64    // exclusive
	EventType string   // "" for all
	After     *EventCursor
	Limit     int
}

// TapeEvent is one event of /v1/predmkt/events.
type TapeEvent struct {
	EventType  string  `json:"event_type" doc:"book, price_change, trade, tick_size_change or status"`
	TokenID    string  `json:"token_id"`
	TS         int64   `json:"ts" doc:"venue time, epoch ms"`
	LocalTS    int64   `json:"local_ts" doc:"recorder receive time, epoch ms"`
	Seq        int64   `json:"seq"`
	Side       string  `json:"side" doc:"BUY or SELL on price_change and trade; empty otherwise"`
	Price      float64 `json:"price" doc:"0 when the event type does not populate it"`
	Size       float64 `json:"size" doc:"0 when the event type does not populate it"`
	BestBid    float64 `json:"best_bid"`
	BestAsk    float64 `json:"best_ask"`
	Bids       string  `json:"bids" doc:"JSON text (parse a second time); empty unless event_type is book"`
	Asks       string  `json:"asks" doc:"JSON text; empty unless event_type is book"`
	IsSnapshot int     `json:"is_snapshot" doc:"1 on book snapshots"`
	Status     string  `json:"status" doc:"stream-health marker on status events; empty otherwise"`
}

// EventsPage is the body of /v1/predmkt/events.
type EventsPage struct {
	Events     []TapeEvent `json:"events"`
	HasMore    bool        `json:"has_more"`
	NextCursor *string     `json:"next_cursor" doc:"<local_ts>:<seq>:<token_id> of the last event; null on the last page"`

	arena *eventsArena // the memory of Events and their texts (Release)
}

// PredmktEvents returns one page of the tape; has_more is decided by reading one row
// past the page. Over every token, the tape index's per-minute counts bound the
// local_ts range that holds the page, and that range is read unordered and sorted
// here (sorting the whole window in DuckDB is most of the cost of a large page);
// with a token filter, or when the bound range holds fewer rows than a page (the
// counts include events the cursor excludes), events.sql sorts and cuts the window.
func (q *Queries) PredmktEvents(ctx context.Context, p PredmktEventsParams) (EventsPage, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt events"
	c := EventCursor{LocalTS: -1}
	if p.After != nil {
		c = *p.After
	}
	page := EventsPage{Events: []TapeEvent{}}
	// Only events received by the clock (local_ts at or before it; ts is never later).
	p.ToMs = min(p.ToMs, q.Now().UnixMilli()+1)
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	start := max(p.FromMs, c.LocalTS)
	if start >= p.ToMs {
		return page, nil
	}
	a := newEventsArena()
	done := false
	defer func() {
		if !done {
			a.release() // nothing of it was handed out
		}
	}()
	var evs []TapeEvent
	if len(p.TokenIDs) == 0 {
		end := ix.eventsBound(start, p.ToMs, int64(p.Limit)+1, p.EventType)
		if lo, hi, ok := ix.bookDates(start, end-1); ok {
			evs, err = q.scanEvents(ctx, a, predmktEventsSpanSQL, p.Limit+1, p.FromMs, end, p.EventType, c.LocalTS, c.Seq, c.TokenID, lo, hi)
			if err != nil {
				return EventsPage{}, wrap(ctx, op, err)
			}
		}
		if len(evs) <= p.Limit && end < p.ToMs {
			evs = nil // fewer than a page: fall back to sorting the whole window
		} else {
			done = true
			return pageOf(sortEvents(evs, p.Limit+1), p.Limit, a), nil
		}
	}
	lo, hi, ok := ix.bookDates(start, p.ToMs-1)
	if !ok {
		return page, nil // no file holds an event of the window
	}
	evs, err = q.scanEvents(ctx, a, predmktEventsSQL, p.Limit+1, strings.Join(p.TokenIDs, ","), p.FromMs, p.ToMs,
		p.EventType, c.LocalTS, c.Seq, c.TokenID, p.Limit+1, lo, hi)
	if err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	done = true
	return pageOf(evs, p.Limit, a), nil
}

// pageOf cuts ordered events to a page of limit, with has_more and next_cursor; a
// holds their memory (nil: none to release).
func pageOf(evs []TapeEvent, limit int, a *eventsArena) EventsPage {
	page := EventsPage{Events: evs, arena: a}
	if page.Events == nil {
		page.Events = []TapeEvent{}
	}
	if len(evs) > limit {
		page.Events, page.HasMore = evs[:limit:limit], true
		last := page.Events[limit-1]
		s := EventCursor{last.LocalTS, last.Seq, last.TokenID}.String()
		page.NextCursor = &s
	}
	return page
}

// sortEvents returns the first n of evs in (local_ts, seq, token_id) order. It sorts
// compact keys rather than the wide events, comparing token ids only on a tie, then
// moves the events into that order in place: a copy of a 50,000-event page was 9 MB
// more garbage a request, and the collector's cycles on a large heap were the page's
// slowest requests. evs is reordered.
func sortEvents(evs []TapeEvent, n int) []TapeEvent {
	type key struct {
		lt, seq int64
		i       int
	}
	keys := make([]key, len(evs))
	for i := range evs {
		keys[i] = key{evs[i].LocalTS, evs[i].Seq, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.lt != b.lt {
			return cmp.Compare(a.lt, b.lt)
		}
		if a.seq != b.seq {
			return cmp.Compare(a.seq, b.seq)
		}
		return strings.Compare(evs[a.i].TokenID, evs[b.i].TokenID)
	})
	// Position k takes the event keys[k].i: follow each cycle of that permutation,
	// marking a key done by setting its i to -1.
	for k := range keys {
		if keys[k].i < 0 || keys[k].i == k {
			continue
		}
		held := evs[k]
		dst := k
		for {
			src := keys[dst].i
			keys[dst].i = -1
			if src == k {
				evs[dst] = held
				break
			}
			evs[dst] = evs[src]
			dst = src
		}
	}
	return evs[:min(n, len(evs))]
}

// unpackEventTexts splits the texts value of events.sql: the byte lengths of
// event_type, token_id, side, status and bids, each followed by a comma, then the six
// texts back to back (asks last). The fields are slices of s (no copy).
func unpackEventTexts(s string, e *TapeEvent) bool {
	var lens [5]int
	for i := range lens {
		j := strings.IndexByte(s, ',')
		if j <= 0 {
			return false
		}
		l, ok := atoi64(s[:j])
		if !ok || l < 0 {
			return false
		}
		lens[i], s = int(l), s[j+1:]
	}
	for i, dst := range [5]*string{&e.EventType, &e.TokenID, &e.Side, &e.Status, &e.Bids} {
		if lens[i] > len(s) {
			return false
		}
		*dst, s = s[:lens[i]], s[lens[i]:]
	}
	e.Asks = s
	return true
}

// atoi64 parses a decimal integer (optionally negative); strconv.ParseInt does the
// long ones, where overflow is possible.
func atoi64(s string) (int64, bool) {
	if len(s) > 18 {
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	neg := false
	if s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if s == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int64(c)
	}
	if neg {
		v = -v
	}
	return v, true
}
