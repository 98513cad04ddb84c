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
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	start := max(p.FromMs, c.LocalTS)
	if start >= p.ToMs {
		return page, nil
	}
	var evs []TapeEvent
	if len(p.TokenIDs) == 0 {
		end := ix.eventsBound(start, p.ToMs, int64(p.Limit)+1, p.EventType)
		if lo, hi, ok := ix.bookDates(start, end-1); ok {
			evs, err = q.scanEvents(ctx, predmktEventsSpanSQL, p.Limit+1, p.FromMs, end, p.EventType, c.LocalTS, c.Seq, c.TokenID, lo, hi)
			if err != nil {
				return EventsPage{}, wrap(ctx, op, err)
			}
		}
		if len(evs) <= p.Limit && end < p.ToMs {
			evs = nil // fewer than a page: fall back to sorting the whole window
		} else {
			return pageOf(sortEvents(evs, p.Limit+1), p.Limit), nil
		}
	}
	lo, hi, ok := ix.bookDates(start, p.ToMs-1)
	if !ok {
		return page, nil // no file holds an event of the window
	}
	evs, err = q.scanEvents(ctx, predmktEventsSQL, p.Limit+1, strings.Join(p.TokenIDs, ","), p.FromMs, p.ToMs,
		p.EventType, c.LocalTS, c.Seq, c.TokenID, p.Limit+1, lo, hi)
	if err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	return pageOf(evs, p.Limit), nil
}

// sortEvents returns the first n of evs in (local_ts, seq, token_id) order, sorting
// positions rather than the wide events themselves.
func sortEvents(evs []TapeEvent, n int) []TapeEvent {
	idx := make([]int32, len(evs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &evs[i], &evs[j]
		if c := cmp.Compare(a.LocalTS, b.LocalTS); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		return strings.Compare(a.TokenID, b.TokenID)
	})
	out := make([]TapeEvent, min(n, len(idx)))
	for k := range out {
		out[k] = evs[idx[k]]
	}
	return out
}

// pageOf cuts ordered events to a page of limit, with has_more and next_cursor.
func pageOf(evs []TapeEvent, limit int) EventsPage {
	page := EventsPage{Events: evs}
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

// scanEvents runs events.sql or events_span.sql and reads their rows.
func (q *Queries) scanEvents(ctx context.Context, stmt string, hint int, args ...any) ([]TapeEvent, error) {
	rows, err := q.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	evs := make([]TapeEvent, 0, min(hint, 50_001))
	var row string
	for rows.Next() {
		if err := rows.Scan(&row); err != nil {
			return nil, err
		}
		var e TapeEvent
		if !unpackEvent(row, &e) {
			return nil, fmt.Errorf("malformed event row %.60q", row)
		}
		evs = append(evs, e)
	}
	return evs, rows.Err()
}

// unpackEvent splits the row text of events.sql and events_span.sql: ts, local_ts,
// seq, is_snapshot, price, size, best_bid, best_ask, the byte lengths of event_type,
// token_id, side, status and bids, comma-separated, then the six texts back to back
// (asks last). The text fields share the row's string.
func unpackEvent(s string, e *TapeEvent) bool {
	var f [13]string
	for i := range f {
		j := strings.IndexByte(s, ',')
		if j <= 0 {
			return false
		}
		f[i], s = s[:j], s[j+1:]
	}
	var ints [4]int64
	for i := range ints {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return false
		}
		ints[i] = v
	}
	e.TS, e.LocalTS, e.Seq, e.IsSnapshot = ints[0], ints[1], ints[2], int(ints[3])
	for i, dst := range []*float64{&e.Price, &e.Size, &e.BestBid, &e.BestAsk} {
		v, err := strconv.ParseFloat(f[4+i], 64)
		if err != nil {
			return false
		}
		*dst = v
	}
	out := [5]*string{&e.EventType, &e.TokenID, &e.Side, &e.Status, &e.Bids}
	for i, dst := range out {
		l, err := strconv.Atoi(f[8+i])
		if err != nil || l < 0 || l > len(s) {
			return false
		}
		*dst, s = s[:l], s[l:]
	}
	e.Asks = s
	return true
}
