package query

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// The tape index must answer exactly what the routes' SQL answers over the raw
// files at the store clock. These tests hold it to that SQL on the tiny demo lake,
// and check that a file added after the index was built is seen at once.

func openTapeLake(t *testing.T, dir string, now time.Time) *Queries {
	t.Helper()
	q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func tapeStrings(t *testing.T, q *Queries, text string, args ...any) []string {
	t.Helper()
	rows, err := q.db.QueryContext(context.Background(), text, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func sameBars(a, b []CandleBar) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.TS != y.TS || x.Open != y.Open || x.High != y.High || x.Low != y.Low || x.Close != y.Close || x.Trades != y.Trades ||
			math.Abs(x.Volume-y.Volume) > 1e-9*math.Max(1, math.Abs(y.Volume)) {
			return false
		}
	}
	return true
}

// TestPredmktTapeIndexOHLCVMatchesSQL: bars read from the date partitions the index's
// spans select equal ohlcv.sql's over every partition, for every interval, windows
// cut inside bars, from later than to, and limits that cut.
func TestPredmktTapeIndexOHLCVMatchesSQL(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	toks := tapeStrings(t, q, "SELECT token_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 25")
	if len(toks) == 0 {
		t.Fatal("tiny lake holds no trades")
	}
	now := testlake.Now().UnixMilli()
	windows := [][2]int64{{0, math.MaxInt64}, {now - 3*86_400_000 + 12_345, now - 86_400_000 - 777}, {now, now - 1}, {now - 10*86_400_000, now}}
	for _, tok := range append(toks, "no-such-token") {
		for iv := range OHLCVIntervals {
			for _, w := range windows {
				for _, limit := range []int{1000, 3} {
					p := PredmktOHLCVParams{TokenID: tok, Interval: iv, From: w[0], To: w[1], Limit: limit}
					got, err := q.PredmktOHLCV(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					want := ohlcvAllDates(t, q, p)
					if !sameBars(got, want) {
						t.Fatalf("%+v: index %d bars %v, SQL %d bars %v", p, len(got), got, len(want), want)
					}
				}
			}
		}
	}
}

// ohlcvAllDates is ohlcv.sql with every date partition open.
func ohlcvAllDates(t *testing.T, q *Queries, p PredmktOHLCVParams) []CandleBar {
	t.Helper()
	items := []CandleBar{}
	if p.From > p.To {
		return items
	}
	rows, err := q.db.Query(predmktOHLCVSQL, p.TokenID, OHLCVIntervals[p.Interval], p.From, p.To, p.Limit, "0001-01-01", "9999-12-31")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i CandleBar
		if err := rows.Scan(&i.TS, &i.Open, &i.High, &i.Low, &i.Close, &i.Volume, &i.Trades); err != nil {
			t.Fatal(err)
		}
		items = append(items, i)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return items
}

// TestPredmktTapeIndexMidsMatchSQL: the latest mid at or before the clock, from the
// index, equals mids.sql's at several clocks, including ones inside a file's span.
func TestPredmktTapeIndexMidsMatchSQL(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	toks := tapeStrings(t, q, "SELECT DISTINCT token_id FROM predmkt_book_events ORDER BY 1")
	now := testlake.Now().UnixMilli()
	for _, at := range []int64{now, now - 3_600_000 - 17, now - 5*86_400_000 + 1, 0} {
		got, err := q.mids(ctx, toks, at)
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.midsFromSQL(ctx, toks, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("clock %d: index has mids of %d tokens, SQL %d", at, len(got), len(want))
		}
		for tok, m := range want {
			if got[tok] != m {
				t.Fatalf("clock %d token %s: index mid %v, SQL %v", at, tok, got[tok], m)
			}
		}
	}
}

func orderbookFromSQL(t *testing.T, q *Queries, tok string, ts int64) (int64, string, string, bool) {
	var at int64
	var bids, asks sql.NullString
	err := q.db.QueryRowContext(context.Background(), predmktOrderbookSQL, tok, ts).Scan(&at, &bids, &asks)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return at, bids.String, asks.String, true
}

// TestPredmktTapeIndexOrderbookMatchesSQL: the snapshot the index picks and the row it
// reads equal orderbook.sql's, at every snapshot's own ts, a millisecond before it,
// and before the tape began.
func TestPredmktTapeIndexOrderbookMatchesSQL(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	rows, err := q.db.QueryContext(ctx, "SELECT token_id, ts FROM predmkt_book_events WHERE event_type = 'book' ORDER BY hash(token_id, ts) LIMIT 100")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		tok string
		ts  int64
	}
	var probes []probe
	for rows.Next() {
		var p probe
		if err := rows.Scan(&p.tok, &p.ts); err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p, probe{p.tok, p.ts - 1}, probe{p.tok, 0}, probe{p.tok, math.MaxInt64})
	}
	rows.Close()
	if len(probes) == 0 {
		t.Fatal("tiny lake holds no book snapshots")
	}
	for _, p := range probes {
		ts, bids, asks, found, err := q.orderbookSnapshot(ctx, PredmktOrderbookParams{TokenID: p.tok, TS: p.ts, Depth: 25})
		if err != nil {
			t.Fatal(err)
		}
		wts, wb, wa, wfound := orderbookFromSQL(t, q, p.tok, p.ts)
		if found != wfound || ts != wts || bids.String != wb || asks.String != wa {
			t.Fatalf("%s at %d: index (%v %d), SQL (%v %d)", p.tok, p.ts, found, ts, wfound, wts)
		}
	}
}

// TestPredmktTapeIndexSeesNewFiles: a date partition written after the index was
// built is part of the next answer, and rows after the store clock stay out of it.
func TestPredmktTapeIndexSeesNewFiles(t *testing.T) {
	dir := testlake.Copy(t)
	now := testlake.Now()
	// The store's clock is past the day written below: ohlcv serves no bar after the
	// clock (point in time), and this test is about seeing a new file, not a future one.
	q := openTapeLake(t, dir, now.Add(48*time.Hour))
	ctx := context.Background()
	tok := tapeStrings(t, q, "SELECT token_id FROM predmkt_book_events WHERE event_type = 'book' GROUP BY 1 ORDER BY 1 LIMIT 1")[0]
	before, err := q.PredmktOHLCV(ctx, PredmktOHLCVParams{TokenID: tok, Interval: "1d", From: 0, To: math.MaxInt64, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.mids(ctx, []string{tok}, now.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	// A later day: one trade and one snapshot (mid 0.5) of the token, after the lake's end.
	later := now.Add(36 * time.Hour)
	date, ts := later.Format("2006-01-02"), later.UnixMilli()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(ctx, lake.PredmktTrades, []string{date}, func(add lake.AppendFunc) error {
		return add("late-1", ts, ts+3, int64(1), tok, "0xlate", 0, "0xw", "taker", "BUY", 0.42, 7.0, 2.94, "0xfeed")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, lake.PredmktBookEvents, []string{date}, func(add lake.AppendFunc) error {
		return add("book", tok, ts, ts+3, int64(1), "", 0.0, 0.0, 0.4, 0.6, `[{"price":"0.4","size":"1"}]`, `[{"price":"0.6","size":"2"}]`, 1, "")
	}); err != nil {
		t.Fatal(err)
	}
	after, err := q.PredmktOHLCV(ctx, PredmktOHLCVParams{TokenID: tok, Interval: "1d", From: 0, To: math.MaxInt64, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 || after[len(after)-1].Close != 0.42 || after[len(after)-1].Trades != 1 {
		t.Fatalf("new trades file not seen: %d bars before, %d after (%+v)", len(before), len(after), after[len(after)-1])
	}
	book, err := q.PredmktOrderbook(ctx, PredmktOrderbookParams{TokenID: tok, TS: ts, Depth: 25})
	if err != nil {
		t.Fatal(err)
	}
	if len(book) != 2 || book[0].AsOfTS != ts || book[0].Price != 0.4 || book[1].Size != 2 {
		t.Fatalf("new book_events file not seen: %+v", book)
	}
	for _, at := range []int64{now.UnixMilli(), ts + 3} {
		got, err := q.mids(ctx, []string{tok}, at)
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.midsFromSQL(ctx, []string{tok}, at)
		if err != nil {
			t.Fatal(err)
		}
		if got[tok] != want[tok] {
			t.Fatalf("mid at %d: index %v, SQL %v", at, got[tok], want[tok])
		}
		if at > now.UnixMilli() && got[tok] != 0.5 {
			t.Fatalf("mid after the new snapshot is %v, want 0.5", got[tok])
		}
	}
}

// TestPredmktSmartMoneyDatePruningChangesNothing: the cohort aggregates read from the
// date partitions the index's spans select equal the same SQL over every partition,
// per category and window (including an empty one), and the cohort passed to the SQL
// is the board's (SPEC §4.2 thresholds on the stored figures).
func TestPredmktSmartMoneyDatePruningChangesNothing(t *testing.T) {
	q := openTapeLake(t, testlake.Copy(t), testlake.Now())
	ctx := context.Background()
	b, err := q.PredmktBoard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := testlake.Now().UnixMilli()
	all := func(text string, cat, cohort string, from int64, scan func(*sql.Rows) error) {
		t.Helper()
		rows, err := q.db.Query(text, cat, from, now, "0001-01-01", "9999-12-31", cohort)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for _, cat := range append([]string{"all"}, PredmktCategories...) {
		cohort := smartCohort(b, cat)
		for _, e := range b.Cats[cat] {
			in := strings.Contains(","+cohort+",", ","+e.Wallet+",")
			if in != (e.PnL >= 1000 && e.Resolved >= 5 && e.Volume >= 5000) {
				t.Fatalf("%s: wallet %s in cohort %t against SPEC's thresholds", cat, e.Wallet, in)
			}
		}
		for _, h := range []int64{1, 24, 24 * 7, 720} {
			from := now - h*3_600_000 + 1234
			got, err := q.smartFlowsFromSQL(ctx, cat, cohort, from, now)
			if err != nil {
				t.Fatal(err)
			}
			var want []smartFlowAgg
			if cohort != "" {
				all(predmktSmartFlowsSQL, cat, cohort, from, func(r *sql.Rows) error {
					var a smartFlowAgg
					err := r.Scan(&a.cond, &a.title, &a.slug, &a.wallets, &a.buy, &a.sell, &a.trades, &a.last, &a.yes)
					want = append(want, a)
					return err
				})
			}
			seen += len(got)
			if len(got) != len(want) {
				t.Fatalf("flows %s %dh: pruned %d markets, all dates %d", cat, h, len(got), len(want))
			}
			byCond := map[string]smartFlowAgg{}
			for _, a := range want {
				byCond[a.cond] = a
			}
			for _, g := range got {
				w := byCond[g.cond]
				if g.title != w.title || g.slug != w.slug || g.wallets != w.wallets || g.trades != w.trades ||
					g.buy != w.buy || g.sell != w.sell || g.last != w.last || (g.yes == nil) != (w.yes == nil) ||
					(g.yes != nil && *g.yes != *w.yes) {
					t.Fatalf("flows %s %dh %s: pruned %+v, all dates %+v", cat, h, g.cond, g, w)
				}
			}
			gotB, err := q.smartBuysFromSQL(ctx, cat, cohort, from, now)
			if err != nil {
				t.Fatal(err)
			}
			var wantB []smartSide
			if cohort != "" {
				all(predmktSmartBuysSQL, cat, cohort, from, func(r *sql.Rows) error {
					var s smartSide
					err := r.Scan(&s.cond, &s.title, &s.slug, &s.idx, &s.token, &s.wallets, &s.usd, &s.size, &s.last)
					wantB = append(wantB, s)
					return err
				})
			}
			if len(gotB) != len(wantB) {
				t.Fatalf("buys %s %dh: pruned %d sides, all dates %d", cat, h, len(gotB), len(wantB))
			}
			bySide := map[string]smartSide{}
			for _, s := range wantB {
				bySide[s.cond+"|"+strconv.Itoa(s.idx)] = s
			}
			for _, g := range gotB {
				if w := bySide[g.cond+"|"+strconv.Itoa(g.idx)]; g != w {
					t.Fatalf("buys %s %dh: pruned %+v, all dates %+v", cat, h, g, w)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no cohort flows in any window: the comparison proved nothing")
	}
}

// TestPredmktTapeIndexEventsMatchSQL: pages bounded by the index's per-minute counts
// and sorted in Go equal events.sql's pages over the whole window, through a cursor
// walk, for every event type, and with a limit larger than the window.
func TestPredmktTapeIndexEventsMatchSQL(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	var last int64
	if err := q.db.QueryRowContext(ctx, "SELECT max(local_ts) FROM predmkt_book_events").Scan(&last); err != nil {
		t.Fatal(err)
	}
	fromSQL := func(p PredmktEventsParams) EventsPage {
		c := EventCursor{LocalTS: -1}
		if p.After != nil {
			c = *p.After
		}
		evs, err := q.scanEvents(ctx, &eventsArena{}, predmktEventsSQL, p.Limit+1, "", p.FromMs, p.ToMs, p.EventType, c.LocalTS, c.Seq, c.TokenID,
			p.Limit+1, "0001-01-01", "9999-12-31")
		if err != nil {
			t.Fatal(err)
		}
		return pageOf(evs, p.Limit, nil)
	}
	for _, typ := range []string{"", "book", "price_change", "trade", "status"} {
		for _, w := range [][2]int64{{last - 86_400_000 + 1, last + 1}, {last - 3*3_600_000 - 5, last - 3_600_000 + 7}} {
			for _, limit := range []int{1, 997, 50_000} {
				p := PredmktEventsParams{FromMs: w[0], ToMs: w[1], EventType: typ, Limit: limit}
				for pages := 0; pages < 4; pages++ {
					got, err := q.PredmktEvents(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					want := fromSQL(p)
					if len(got.Events) != len(want.Events) || got.HasMore != want.HasMore || (got.NextCursor == nil) != (want.NextCursor == nil) ||
						(got.NextCursor != nil && *got.NextCursor != *want.NextCursor) {
						t.Fatalf("%+v: index %d events more %v, SQL %d more %v", p, len(got.Events), got.HasMore, len(want.Events), want.HasMore)
					}
					for i := range got.Events {
						if got.Events[i] != want.Events[i] {
							t.Fatalf("%+v event %d: index %+v, SQL %+v", p, i, got.Events[i], want.Events[i])
						}
					}
					if !got.HasMore {
						break
					}
					cur := EventCursor{got.Events[len(got.Events)-1].LocalTS, got.Events[len(got.Events)-1].Seq, got.Events[len(got.Events)-1].TokenID}
					p.After = &cur
				}
			}
		}
	}
}

// TestPredmktEventsRowTextReadsBackExactly: a page's fields travel as typed numbers plus
// one length-prefixed text value per row; they must read back to exactly the stored
// values (doubles included).
func TestPredmktEventsRowTextReadsBackExactly(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	var last int64
	if err := q.db.QueryRowContext(ctx, "SELECT max(local_ts) FROM predmkt_book_events").Scan(&last); err != nil {
		t.Fatal(err)
	}
	from, to := last-86_400_000+1, last+1
	page, err := q.PredmktEvents(ctx, PredmktEventsParams{FromMs: from, ToMs: to, Limit: 50_000})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := q.db.QueryContext(ctx, `SELECT event_type, token_id, ts, local_ts, seq, coalesce(side, ''), coalesce(price, 0),
		coalesce(size, 0), coalesce(best_bid, 0), coalesce(best_ask, 0), coalesce(bids, ''), coalesce(asks, ''),
		coalesce(is_snapshot, 0), coalesce(status, '')
		FROM predmkt_book_events WHERE local_ts >= $1 AND local_ts < $2 ORDER BY local_ts, seq, token_id LIMIT 50000`, from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		var e TapeEvent
		if err := rows.Scan(&e.EventType, &e.TokenID, &e.TS, &e.LocalTS, &e.Seq, &e.Side, &e.Price, &e.Size,
			&e.BestBid, &e.BestAsk, &e.Bids, &e.Asks, &e.IsSnapshot, &e.Status); err != nil {
			t.Fatal(err)
		}
		if i >= len(page.Events) || page.Events[i] != e {
			t.Fatalf("event %d: route %+v, raw %+v", i, page.Events[min(i, len(page.Events)-1)], e)
		}
	}
	if i != len(page.Events) || i == 0 {
		t.Fatalf("route %d events, raw %d", len(page.Events), i)
	}
}
