package query

import (
	"context"
	"fmt"
	"strings"

	sqlfiles "mdq/sql"
)

var predmktEventsSQL = sqlfiles.MustRead("predmkt/events.sql")

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
// past the page.
func (q *Queries) PredmktEvents(ctx context.Context, p PredmktEventsParams) (EventsPage, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt events"
	c := EventCursor{LocalTS: -1}
	if p.After != nil {
		c = *p.After
	}
	rows, err := q.db.QueryContext(ctx, predmktEventsSQL, strings.Join(p.TokenIDs, ","), p.FromMs, p.ToMs,
		p.EventType, c.LocalTS, c.Seq, c.TokenID, p.Limit+1)
	if err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	defer rows.Close()
	page := EventsPage{Events: make([]TapeEvent, 0, min(p.Limit, 4096))}
	for rows.Next() {
		var e TapeEvent
		if err := rows.Scan(&e.EventType, &e.TokenID, &e.TS, &e.LocalTS, &e.Seq, &e.Side, &e.Price, &e.Size,
			&e.BestBid, &e.BestAsk, &e.Bids, &e.Asks, &e.IsSnapshot, &e.Status); err != nil {
			return EventsPage{}, wrap(ctx, op, err)
		}
		if len(page.Events) == p.Limit {
			page.HasMore = true
			break
		}
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return EventsPage{}, wrap(ctx, op, err)
	}
	if page.HasMore {
		last := page.Events[len(page.Events)-1]
		s := EventCursor{last.LocalTS, last.Seq, last.TokenID}.String()
		page.NextCursor = &s
	}
	return page, nil
}
