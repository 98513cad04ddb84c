package query_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// TestMarketBoardMatchesScan: the market list and its tokens read from the hour's
// predmkt_market_board (and the fills since) equal the whole-tape scan at every clock
// of marketClocks (the edges of days, hours and the 24-hour window, clocks inside an
// hour, before any trade and after the last), and the API's pages are the same before
// the board is published (the per-day tables) and after. A board is read only for its
// own hour and the trades files it was summed from: a corrected file sets it aside
// until the board is published again.
func TestMarketBoardMatchesScan(t *testing.T) {
	dir := testlake.Copy(t)
	var clock atomic.Int64
	clock.Store(testlake.Now().UnixMilli())
	q, err := query.Open(context.Background(), dir, query.Options{NoGoLimit: true,
		Now: func() time.Time { return time.UnixMilli(clock.Load()).UTC() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	ctx := context.Background()
	publishDays(t, q)
	src := marketSources(t, q)
	cur, tokCur := query.PredmktMarketsBoardSQLForTest, sqlfiles.MustRead("predmkt/market_tokens_board.sql")
	pages := func() (query.PredmktMarketsPage, query.PredmktMarketsPage, any) {
		t.Helper()
		a, err := q.PredmktMarkets(ctx, query.PredmktMarketsParams{Sort: "volume", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		b, err := q.PredmktMarkets(ctx, query.PredmktMarketsParams{Sort: "volume_24h", Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		// Before the market was created: not found, either way.
		d, err := q.PredmktMarket(ctx, src.some)
		if errors.Is(err, query.ErrNotFound) {
			return a, b, err
		} else if err != nil {
			t.Fatal(err)
		}
		return a, b, d
	}
	published := map[int64]bool{} // board hours
	boardAt := func(step string, at time.Time) {
		t.Helper()
		clock.Store(at.UnixMilli())
		hour := at.Truncate(time.Hour).UnixMilli()
		if _, ok, err := q.MarketBoardForTest(at.UnixMilli()); err != nil || ok != published[hour] {
			t.Fatalf("%s at %s: a board is read %v, published %v (%v)", step, at.Format(time.RFC3339Nano), ok, published[hour], err)
		}
		a0, b0, d0 := pages()
		if wrote, err := q.PublishMarketBoard(ctx); err != nil || wrote == published[hour] {
			t.Fatalf("%s at %s: board written %v, published before %v (%v)", step, at.Format(time.RFC3339Nano), wrote, published[hour], err)
		}
		published[hour] = true
		args, ok, err := q.MarketBoardForTest(at.UnixMilli())
		if err != nil || !ok {
			t.Fatalf("%s at %s: the published board is not read (%v)", step, at.Format(time.RFC3339Nano), err)
		}
		src.check(t, q, step+" (board)", at, cur, args, tokCur, args)
		a1, b1, d1 := pages()
		if !reflect.DeepEqual(a0, a1) || !reflect.DeepEqual(b0, b1) || !reflect.DeepEqual(d0, d1) {
			t.Fatalf("%s at %s: the API's pages differ once the board is published", step, at.Format(time.RFC3339Nano))
		}
		if wrote, err := q.PublishMarketBoard(ctx); err != nil || wrote {
			t.Fatalf("%s at %s: a second publication in the same hour wrote again (%v)", step, at.Format(time.RFC3339Nano), err)
		}
	}
	// And a clock on a fill that changed its token's price, inside an hour: the fill at
	// the clock counts.
	var onFill int64
	if err := q.DB().QueryRowContext(ctx, `SELECT max(ts) FROM (
		SELECT ts, price, lag(price) OVER (PARTITION BY token_id ORDER BY ts, seq) AS prev
		FROM predmkt_trades WHERE role = 'taker') WHERE prev <> price AND ts % 3600000 > 60000`).Scan(&onFill); err != nil {
		t.Fatal(err)
	}
	for _, at := range append(marketClocks(), time.UnixMilli(onFill).UTC()) {
		boardAt("published tables", at)
	}

	// A corrected trades file: the board of the hour is set aside (the per-day tables
	// are not yet published from it either), then published again from them.
	end := testlake.Now()
	rel, _ := lake.PredmktTrades.Path(end.AddDate(0, 0, -1).Format("2006-01-02"))
	rewriteFile(t, filepath.Join(dir, filepath.FromSlash(rel)), "SELECT * REPLACE (usd * 1.5 + 0.0000004 AS usd) FROM SRC WHERE hash(trade_id) % 3 <> 0")
	time.Sleep(query.DayFilesFresh + 50*time.Millisecond)
	at := end.Add(-5*time.Hour - 29*time.Minute - 31*time.Second - 7*time.Millisecond)
	clock.Store(at.UnixMilli())
	if wrote, err := q.PublishMarketBoard(ctx); err != nil || wrote {
		t.Fatalf("corrected day: a board was published before the day's fills (%v)", err)
	}
	checkMarkets(t, q, "corrected day, not yet published")
	publishDays(t, q)
	published = map[int64]bool{}
	boardAt("corrected day", at)
}
