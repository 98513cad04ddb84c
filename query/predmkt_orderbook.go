package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	sqlfiles "mdq/sql"
)

var (
	predmktOrderbookSQL    = sqlfiles.MustRead("predmkt/orderbook.sql")
	predmktOrderbookRowSQL = sqlfiles.MustRead("predmkt/orderbook_row.sql")
)

// PredmktOrderbookParams are the inputs of PredmktOrderbook.
type PredmktOrderbookParams struct {
	TokenID string
	TS      int64 // epoch ms; the nearest snapshot at or before it
	Depth   int   // levels per side
}

// BookRow is one level of /v1/predmkt/orderbook.
type BookRow struct {
	AsOfTS int64   `json:"as_of_ts" doc:"venue ts (epoch ms) of the snapshot used"`
	Side   string  `json:"side" doc:"bid or ask"`
	Level  int     `json:"level" doc:"1 at the touch on each side"`
	Price  float64 `json:"price"`
	Size   float64 `json:"size"`
}

type bookLevel struct {
	Price string `json:"price"`
	Size  string `json:"size"`
}

// PredmktOrderbook returns the levels of the snapshot nearest at or before p.TS, bids
// then asks, each (side, level) once: a price listed twice in a side keeps its first
// entry, and levels are numbered after that de-duplication.
func (q *Queries) PredmktOrderbook(ctx context.Context, p PredmktOrderbookParams) ([]BookRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "predmkt orderbook"
	ts, bids, asks, found, err := q.orderbookSnapshot(ctx, p)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	if !found {
		return []BookRow{}, nil // before the token's tape began
	}
	out := []BookRow{}
	for _, s := range []struct {
		name string
		text sql.NullString
		desc bool
	}{{"bid", bids, true}, {"ask", asks, false}} {
		levels, err := ParseBookSide(s.text.String, s.desc)
		if err != nil {
			return nil, wrap(ctx, op, err)
		}
		for i, l := range levels {
			if i == p.Depth {
				break
			}
			out = append(out, BookRow{AsOfTS: ts, Side: s.name, Level: i + 1, Price: l[0], Size: l[1]})
		}
	}
	return out, nil
}

// orderbookSnapshot finds the snapshot in the tape index and reads only its row; the
// row read is checked against the index's key, and orderbook.sql over the whole tape
// answers when it does not match (a file rewritten since the check).
func (q *Queries) orderbookSnapshot(ctx context.Context, p PredmktOrderbookParams) (ts int64, bids, asks sql.NullString, found bool, err error) {
	ix, err := q.predmktTape(ctx)
	if err != nil {
		return 0, bids, asks, false, err
	}
	f, s, ok, err := q.tapeSnapshot(ctx, ix, p.TokenID, p.TS)
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, bids, asks, false, err
	case err != nil:
		// A digest removed since this version of the index was taken (its archive file
		// went away and a newer index pruned it): the SQL over the tape answers.
		q.log.Warn("orderbook snapshot digests unreadable; answering from the tape", "err", err)
	case !ok:
		return 0, bids, asks, false, nil
	default:
		var tok, typ string
		var rts, local, seq int64
		err = q.db.QueryRowContext(ctx, predmktOrderbookRowSQL, f.path, s.row).Scan(&tok, &typ, &rts, &local, &seq, &bids, &asks)
		if err == nil && tok == p.TokenID && typ == "book" && rts == s.ts && local == s.local && seq == s.seq {
			return rts, bids, asks, true, nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, bids, asks, false, err
		}
	}
	err = q.db.QueryRowContext(ctx, predmktOrderbookSQL, p.TokenID, p.TS).Scan(&ts, &bids, &asks)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, bids, asks, false, nil
	}
	return ts, bids, asks, err == nil, err
}

// ParseBookSide reads one side's JSON text ([{"price":"0.48","size":"120"},...]) into
// (price, size) pairs ordered from the touch outwards (bids descending, asks
// ascending), one per price: a repeated price keeps its first entry.
func ParseBookSide(text string, desc bool) ([][2]float64, error) {
	if text == "" {
		return nil, nil
	}
	var raw []bookLevel
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, err
	}
	seen := map[float64]bool{}
	var out [][2]float64
	for _, l := range raw {
		pr, err1 := strconv.ParseFloat(l.Price, 64)
		sz, err2 := strconv.ParseFloat(l.Size, 64)
		if err1 != nil || err2 != nil {
			return nil, errors.Join(err1, err2)
		}
		if seen[pr] {
			continue
		}
		seen[pr] = true
		out = append(out, [2]float64{pr, sz})
	}
	slices.SortStableFunc(out, func(a, b [2]float64) int {
		if desc {
			return cmp.Compare(b[0], a[0])
		}
		return cmp.Compare(a[0], b[0])
	})
	return out, nil
}
