//go:build duckdb_arrow

package query

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// scanEvents runs events.sql or events_span.sql and reads their rows in the order
// they come, a record batch at a time through DuckDB's Arrow interface: a page of
// 50,000 events is 450,000 values, and database/sql's row-by-row scan converted each
// through the driver (a fifth of the route's CPU). The texts are copied out of the
// batch (its memory goes with it) into the arena a and sliced there. hint is the
// expected count.
func (q *Queries) scanEvents(ctx context.Context, a *eventsArena, stmt string, hint int, args ...any) ([]TapeEvent, error) {
	// The bounded read returns up to a minute of events past the page: room for them
	// saves growing (copying) 8 MB of events.
	evs := a.reset(min(hint, 50_001) * 9 / 8)
	defer func() { a.keep(evs) }()
	err := arrowBatches(ctx, q.db, stmt, args, func(rec arrow.RecordBatch) (bool, error) {
		var ints [4]*array.Int64
		var floats [4]*array.Float64
		ok := rec.NumCols() == 9
		for c := 0; ok && c < 4; c++ {
			ints[c], ok = rec.Column(c).(*array.Int64)
		}
		for c := 0; ok && c < 4; c++ {
			floats[c], ok = rec.Column(4 + c).(*array.Float64)
		}
		var texts *array.String
		if ok {
			texts, ok = rec.Column(8).(*array.String)
		}
		if !ok {
			return false, fmt.Errorf("events: unexpected Arrow columns %v", rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			// The SQL coalesces the flag and the prices; a NULL time or sequence is
			// an error here as it was for the row scan's int64.
			for c := range 4 {
				if ints[c].IsNull(i) || floats[c].IsNull(i) {
					return false, fmt.Errorf("events: NULL in column %d or %d", c, 4+c)
				}
			}
			e := TapeEvent{TS: ints[0].Value(i), LocalTS: ints[1].Value(i), Seq: ints[2].Value(i), IsSnapshot: int(ints[3].Value(i)),
				Price: floats[0].Value(i), Size: floats[1].Value(i), BestBid: floats[2].Value(i), BestAsk: floats[3].Value(i)}
			if texts.IsNull(i) {
				return false, fmt.Errorf("events: NULL texts")
			}
			text := a.text(texts.Value(i))
			if !unpackEventTexts(text, &e) {
				return false, fmt.Errorf("malformed event texts %.60q", text)
			}
			evs = append(evs, e)
		}
		return true, nil
	})
	return evs, err
}
