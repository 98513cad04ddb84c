package query

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// smartTestStore opens a store over a copy of the tiny lake (its files are rewritten or
// published into) at clock end, with the hour's prediction-market board.
func smartTestStore(t *testing.T, end time.Time) (*Queries, *Board) {
	t.Helper()
	q, err := Open(context.Background(), testlake.Copy(t), Options{Now: func() time.Time { return end }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	board, err := q.PredmktBoard(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q, board
}

// TestSmartMoneyDaysAnswerAsTheSQL: smart_money's Go path over compact days gives the
// rows smart_money_flows.sql and smart_money_buys.sql give (every field, every market
// and outcome), for every category, windows of 1 to 48 hours at the lake's end, on
// an hour, mid-hour and a day earlier, with the board's cohort and with a cohort of a
// few wallets; the days are read once per trades file and kept under the cache's
// limit, and a limit too small for one day still answers right.
func TestSmartMoneyDaysAnswerAsTheSQL(t *testing.T) {
	ctx, end := context.Background(), testlake.Now()
	q, board := smartTestStore(t, end)
	flows := func(a []smartFlowAgg) []string {
		var out []string
		for _, x := range a {
			y := "<nil>"
			if x.yes != nil {
				y = *x.yes
			}
			out = append(out, fmt.Sprintf("%s|%s|%s|%d|%d|%d|%d|%d|%s", x.cond, x.title, x.slug, x.wallets, x.buy, x.sell, x.trades, x.last, y))
		}
		slices.Sort(out)
		return out
	}
	buys := func(a []smartSide) []string {
		var out []string
		for _, x := range a {
			out = append(out, fmt.Sprintf("%s|%s|%s|%d|%s|%d|%d|%d|%d", x.cond, x.title, x.slug, x.idx, x.token, x.wallets, x.usd, x.size, x.last))
		}
		slices.Sort(out)
		return out
	}
	checked, nonEmpty := 0, 0
	run := func(cat, cohort string, from, now int64) {
		t.Helper()
		days, ix, ok, err := q.smartDaysFor(ctx, cohort, from, now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if cohort != "" {
				if _, _, any, _ := q.smartDates(ctx, from, now); any {
					t.Fatalf("%s %d..%d: the Go path gave way to the SQL", cat, from, now)
				}
			}
			return
		}
		list := strings.Split(cohort, ",")
		wantF, err := q.smartFlowsFromSQL(ctx, cat, cohort, from, now)
		if err != nil {
			t.Fatal(err)
		}
		wantB, err := q.smartBuysFromSQL(ctx, cat, cohort, from, now)
		if err != nil {
			t.Fatal(err)
		}
		gotF, gotB := flows(smartFlowsFromDays(days, ix, cat, list, from, now)), buys(smartBuysFromDays(days, ix, cat, list, from, now))
		if w := flows(wantF); !slices.Equal(gotF, w) {
			t.Fatalf("flows %s %d..%d: %d rows, the SQL %d\n%v\n%v", cat, from, now, len(gotF), len(w), gotF[:min(3, len(gotF))], w[:min(3, len(w))])
		}
		if w := buys(wantB); !slices.Equal(gotB, w) {
			t.Fatalf("buys %s %d..%d: %d rows, the SQL %d\n%v\n%v", cat, from, now, len(gotB), len(w), gotB[:min(3, len(gotB))], w[:min(3, len(w))])
		}
		checked++
		if len(wantF) > 0 && len(wantB) > 0 {
			nonEmpty++
		}
	}
	hour := end.Truncate(time.Hour)
	clocks := []time.Time{end, hour, hour.Add(-30 * time.Minute), end.Add(-24 * time.Hour)}
	for _, cat := range append([]string{"all"}, PredmktCategories...) {
		cohort := smartCohort(board, cat)
		few := strings.Split(cohort, ",")
		few = few[:min(len(few), 3)]
		for _, at := range clocks {
			now := at.UnixMilli()
			for _, hours := range []int64{1, 6, 24, 48} {
				run(cat, cohort, now-hours*3_600_000, now)
				run(cat, strings.Join(few, ","), now-hours*3_600_000, now)
			}
		}
	}
	if checked < 100 || nonEmpty < 20 {
		t.Fatalf("compared %d windows, %d with rows of both kinds: the fixture does not exercise the path", checked, nonEmpty)
	}
	u := q.smartDaysLRU().use()
	if u.Entries < 2 || u.Bytes > u.Limit || u.Limit != q.cacheLimit(smartDaysCache) {
		t.Fatalf("cache %+v", u)
	}

	// Room for less than a day: nothing is kept, every request reads its days, and the
	// answer is the same.
	v, _ := q.ext.Load(lruKey{smartDaysCache})
	v.(*lruState[string, any]).lru = newByteLRU[string, any](smartDaysCache, 1024)
	cohort := smartCohort(board, "all")
	now := end.UnixMilli()
	run("all", cohort, now-24*3_600_000, now)
	if u := v.(*lruState[string, any]).lru.use(); u.Entries != 0 || u.Bytes != 0 {
		t.Fatalf("a 1 KB cache holds %+v", u)
	}
	// The route answers the same through either path (the SQL when the window is
	// longer than smartDaysMax dates).
	long, err := q.PredmktSmartMoney(ctx, PredmktSmartMoneyParams{Mode: "flows", Hours: 24 * 5, Category: "all", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rows := long.([]SmartMoneyFlowRow); !slices.IsSortedFunc(rows, func(a, b SmartMoneyFlowRow) int { return cmp.Compare(b.NetInflow, a.NetInflow) }) {
		t.Fatalf("120-hour flows not ordered by net inflow: %+v", rows)
	}
}

// TestSmartMoneyDayReadAgainInBackground: when a trades file read before is replaced
// (the newest day, rewritten by ingest), the next request is answered by the SQL while
// the new version is read in the background, and the requests after walk the new
// version; every answer equals the SQL's.
func TestSmartMoneyDayReadAgainInBackground(t *testing.T) {
	ctx, end := context.Background(), testlake.Now()
	q, board := smartTestStore(t, end)
	cohort := smartCohort(board, "all")
	now := end.UnixMilli()
	from := now - 24*3_600_000
	want, err := q.smartFlowsFromSQL(ctx, "all", cohort, from, now)
	if err != nil || len(want) == 0 {
		t.Fatalf("the SQL: %d rows, %v", len(want), err)
	}
	goPath := func() bool {
		t.Helper()
		days, ix, ok, err := q.smartDaysFor(ctx, cohort, from, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got := smartFlowsFromDays(days, ix, "all", strings.Split(cohort, ","), from, now)
			if len(got) != len(want) {
				t.Fatalf("Go path: %d markets, the SQL %d", len(got), len(want))
			}
		}
		return ok
	}
	if !goPath() {
		t.Fatal("first request: the days were not read")
	}
	// The newest trades file, written again (same rows, a new version).
	parts, err := q.cachedDatePartitions(lake.PredmktTrades)
	if err != nil {
		t.Fatal(err)
	}
	newest := end.Format(time.DateOnly)
	f, ok := parts[newest]
	if !ok {
		t.Fatalf("no trades file for %s", newest)
	}
	tmp := f.path + ".new.parquet"
	if _, err := q.db.ExecContext(ctx, `COPY (SELECT * FROM read_parquet('`+f.path+`')) TO '`+tmp+`' (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(f.path, later, later); err != nil {
		t.Fatal(err)
	}
	time.Sleep(DayFilesFresh + 100*time.Millisecond) // the partition listing is kept this long
	// The request right after the change takes the SQL; a later one the new version.
	if goPath() {
		t.Fatal("the request after the file changed read the new version itself")
	}
	deadline := time.Now().Add(30 * time.Second)
	for !goPath() {
		if time.Now().After(deadline) {
			t.Fatal("the new version was not read in the background within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	parts, _ = q.cachedDatePartitions(lake.PredmktTrades)
	if _, hit := q.smartDaysLRU().get("day|" + parts[newest].path + "|" + parts[newest].sig); !hit {
		t.Fatal("the cache does not hold the new version")
	}
}

// TestSmartMoneyDaysGiveWayOnARepeatedMarket: a markets file listing a market twice
// (which the SQL's join would count twice) sends smart_money to its SQL.
func TestSmartMoneyDaysGiveWayOnARepeatedMarket(t *testing.T) {
	ctx, end := context.Background(), testlake.Now()
	q, board := smartTestStore(t, end)
	cohort := smartCohort(board, "all")
	now := end.UnixMilli()
	if _, _, ok, err := q.smartDaysFor(ctx, cohort, now-24*3_600_000, now); err != nil || !ok {
		t.Fatalf("before: ok %v, %v", ok, err)
	}
	files, err := lake.PredmktMarkets.Files(q.dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("markets files %v, %v", files, err)
	}
	tmp := files[0] + ".new.parquet"
	if _, err := q.db.ExecContext(ctx, `COPY (SELECT * FROM read_parquet('`+files[0]+`') UNION ALL
		(SELECT * FROM read_parquet('`+files[0]+`') LIMIT 1)) TO '`+tmp+`' (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, files[0]); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(files[0], later, later); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := q.smartDaysFor(ctx, cohort, now-24*3_600_000, now); err != nil || ok {
		t.Fatalf("after: ok %v, %v: the Go path kept a repeated market", ok, err)
	}
}

// TestSmartMoneyDaysReadOnceForConcurrentRequests: requests that need a day no one has
// read yet, arriving together, read it once: one reads, the others wait for its read
// and walk the same day (a cold large lake under 16 connections had every request read
// the same days side by side, 6 to 13 s each).
func TestSmartMoneyDaysReadOnceForConcurrentRequests(t *testing.T) {
	ctx, end := context.Background(), testlake.Now()
	q, _ := smartTestStore(t, end)
	lo, hi := end.AddDate(0, 0, -1).Format(time.DateOnly), end.Format(time.DateOnly)
	const n = 12
	got := make([][]*smartDay, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			days, ok, err := q.smartInputs(ctx, lo, hi)
			if err == nil && !ok {
				err = fmt.Errorf("the window fell back to the SQL")
			}
			got[i], errs[i] = days, err
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if len(got[i]) != 2 || got[i][0] != got[0][0] || got[i][1] != got[0][1] {
			t.Fatalf("request %d walked days %p, want the same two as request 0 (%p)", i, got[i], got[0])
		}
	}
	if reads := q.smartReads().loads.Load(); reads != 2 {
		t.Fatalf("%d reads of the window's two days by %d requests, want 2", reads, n)
	}
}
