//go:build !duckdb_arrow

package query

import (
	"context"
	"fmt"
)

// scanEvents runs events.sql or events_span.sql and reads their rows in the order
// they come, row by row (a build without the duckdb_arrow tag;
// predmkt_events_arrow.go otherwise); the events are kept in the arena a, the texts
// are the driver's strings. hint is the expected count.
func (q *Queries) scanEvents(ctx context.Context, a *eventsArena, stmt string, hint int, args ...any) ([]TapeEvent, error) {
	rows, err := q.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The bounded read returns up to a minute of events past the page: room for them
	// saves growing (copying) 8 MB of events.
	evs := a.reset(min(hint, 50_001) * 9 / 8)
	defer func() { a.keep(evs) }()
	var snap int64
	var text string
	for rows.Next() {
		var e TapeEvent
		if err := rows.Scan(&e.TS, &e.LocalTS, &e.Seq, &snap, &e.Price, &e.Size, &e.BestBid, &e.BestAsk, &text); err != nil {
			return nil, err
		}
		e.IsSnapshot = int(snap)
		if !unpackEventTexts(text, &e) {
			return nil, fmt.Errorf("malformed event texts %.60q", text)
		}
		evs = append(evs, e)
	}
	return evs, rows.Err()
}
