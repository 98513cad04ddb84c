package query

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mdq/internal/testlake"
	"mdq/lake"
)

// ctRow is one row of perpdex_closed_trades with its wallet.
type ctRow struct {
	wallet string
	pdTradeRow
}

const ctRowCols = `wallet, asset, CAST(trade_no AS BIGINT), direction = 'long', epoch_us(open_ts), epoch_us(close_ts),
	entry_price, exit_price, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee, fill_count, is_complete`

// ctRows reads rows in the columns of ctRowCols, sorted by wallet, asset, trade number.
func ctRows(t *testing.T, q *Queries, query string, args ...any) []ctRow {
	t.Helper()
	rows, err := q.db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []ctRow
	for rows.Next() {
		var r ctRow
		var entry, exit *float64
		if err := rows.Scan(&r.wallet, &r.asset, &r.tradeNo, &r.long, &r.openUS, &r.closeUS, &entry, &exit,
			&r.maxTok, &r.maxUsd, &r.vol, &r.pnl, &r.fee, &r.fills, &r.complete); err != nil {
			t.Fatal(err)
		}
		if entry != nil {
			r.entry, r.hasEntry = *entry, true
		}
		if exit != nil {
			r.exit, r.hasExit = *exit, true
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b ctRow) int {
		if c := strings.Compare(a.wallet, b.wallet); c != 0 {
			return c
		}
		if c := strings.Compare(a.asset, b.asset); c != 0 {
			return c
		}
		return int(a.tradeNo - b.tradeNo)
	})
	return out
}

// publishedCT reads the published closed trades of q's lake.
func publishedCT(t *testing.T, q *Queries) []ctRow {
	t.Helper()
	files, err := lake.PerpdexClosedTrades.Files(q.dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("no closed trades published: %v", err)
	}
	return ctRows(t, q, "SELECT "+ctRowCols+" FROM read_parquet($1, hive_partitioning = false)", filepath.Join(q.dir, lake.PerpdexClosedTrades.Glob()))
}

// sameCT compares two tables row by row (pdSameTrade: sums to 1e-9 relative, as the
// legs of a trade are added in another order once part of it comes from a checkpoint).
func sameCT(t *testing.T, what string, got, want []ctRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d trades, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].wallet != want[i].wallet || !pdSameTrade(got[i].pdTradeRow, want[i].pdTradeRow) {
			t.Fatalf("%s: row %d\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

// ctLakes are two copies of the tiny lake given the same fills: one published
// incrementally, one rebuilt from scratch each time.
type ctLakes struct {
	t         *testing.T
	src       string
	inc, full *Queries
	dates     []string
}

func newCTLakes(t *testing.T) *ctLakes {
	l := &ctLakes{t: t, src: testlake.Tiny(t)}
	for _, q := range []**Queries{&l.inc, &l.full} {
		var err error
		*q, err = Open(context.Background(), testlake.Copy(t), Options{Now: testlake.Now, NoGoLimit: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*q).Close() })
	}
	files, _ := lake.PerpdexFills.Files(l.src)
	for _, f := range files {
		l.dates = append(l.dates, strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "date="))
	}
	if len(l.dates) < 8 {
		t.Fatalf("tiny lake: %d fills dates", len(l.dates))
	}
	return l
}

func (l *ctLakes) fillsPath(dir, d string) string {
	rel, _ := lake.PerpdexFills.Path(d)
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// remove deletes date d's fills in both lakes.
func (l *ctLakes) remove(d string) {
	for _, q := range []*Queries{l.inc, l.full} {
		if err := os.RemoveAll(filepath.Dir(l.fillsPath(q.dir, d))); err != nil {
			l.t.Fatal(err)
		}
	}
}

// restore puts date d's original fills back in both lakes.
func (l *ctLakes) restore(d string) {
	b, err := os.ReadFile(l.fillsPath(l.src, d))
	if err != nil {
		l.t.Fatal(err)
	}
	for _, q := range []*Queries{l.inc, l.full} {
		p := l.fillsPath(q.dir, d)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			l.t.Fatal(err)
		}
	}
}

// correct replaces date d's fills by a corrected file: every fifth fill dropped (the
// positions of the rest no longer chain, as after a bad file) and prices moved.
func (l *ctLakes) correct(d string) {
	for _, q := range []*Queries{l.inc, l.full} {
		if _, err := lake.CopyQuery(context.Background(), q.db, q.dir, lake.PerpdexFills, []string{d},
			"SELECT * REPLACE (px * 1.001 AS px) FROM read_parquet($1, hive_partitioning = false) WHERE tid % 5 <> 0",
			l.fillsPath(l.src, d)); err != nil {
			l.t.Fatal(err)
		}
	}
}

// publish publishes both lakes (the full one from scratch), compares them and returns
// the incremental publication.
func (l *ctLakes) publish(what string) ClosedTradesPublication {
	l.t.Helper()
	ctx := context.Background()
	p, err := l.inc.PublishPerpdexClosedTradesFrom(ctx)
	if err != nil || !p.Wrote {
		l.t.Fatalf("%s: incremental publication %+v %v", what, p, err)
	}
	os.Remove(filepath.Join(l.full.dir, filepath.FromSlash(closedTradesSourcesFile)))
	if f, err := l.full.PublishPerpdexClosedTradesFrom(ctx); err != nil || f.From != "" {
		l.t.Fatalf("%s: full publication %+v %v", what, f, err)
	}
	sameCT(l.t, what, publishedCT(l.t, l.inc), publishedCT(l.t, l.full))
	return p
}

// TestPerpdexClosedTradesIncremental: after a sequence of publications, each restarting
// from a checkpoint, the closed trades equal a rebuild from scratch of the same fills,
// which equals closed_trades.sql run on all of them: a new day, a day that arrives
// after a later one, a corrected day, a removed day, and a change older than every
// checkpoint (a full rebuild).
// Run with the history segment split every few days (most publications rewrite the
// recent segment only) and at every publication (both segments, the split moving
// forward and, for a late day, back).
func TestPerpdexClosedTradesIncremental(t *testing.T) {
	for _, days := range []int{7, 0} {
		t.Run(fmt.Sprintf("split every %d days", days), func(t *testing.T) {
			defer func(d int) { closedTradesCompactDays = d }(closedTradesCompactDays)
			closedTradesCompactDays = days
			testClosedTradesIncremental(t, days == 0)
		})
	}
}

func testClosedTradesIncremental(t *testing.T, alwaysCompact bool) {
	l := newCTLakes(t)
	n := len(l.dates)
	d := func(i int) string { return l.dates[n-i] } // d(1) is the newest
	for i := 1; i <= 3; i++ {
		l.remove(d(i))
	}
	if p := l.publish("cut to " + d(4)); p.From != "" {
		t.Fatalf("first publication restarted from %s", p.From)
	}
	direct := ctRows(t, l.full, "SELECT "+ctRowCols+" FROM ("+strings.TrimRight(strings.TrimSpace(perpdexClosedTradesSQL), ";")+") ct",
		"0x", "0y", closedTradesEnd)
	sameCT(t, "publication against closed_trades.sql", publishedCT(t, l.full), direct)
	steps := []struct {
		name   string
		change func()
		from   string // the checkpoint the publication must restart from; "" full
	}{
		{"new day " + d(3), func() { l.restore(d(3)) }, d(4)},
		{"new day " + d(1) + " (a day missing)", func() { l.restore(d(1)) }, d(3)},
		{"late day " + d(2), func() { l.restore(d(2)) }, d(3)},
		{"corrected day " + d(2), func() { l.correct(d(2)) }, d(3)},
		{"corrected newest day " + d(1), func() { l.correct(d(1)) }, d(1)},
		{"removed day " + d(1), func() { l.remove(d(1)) }, d(1)},
		{"corrected old day " + l.dates[n/2], func() { l.correct(l.dates[n/2]) }, ""},
		{"day back after a full rebuild " + d(1), func() { l.restore(d(1)) }, d(2)},
	}
	compacted := 0
	for _, s := range steps {
		s.change()
		p := l.publish(s.name)
		if p.From != s.from {
			t.Fatalf("%s: restarted from %q, want %q", s.name, p.From, s.from)
		}
		if p.Compact && p.From != "" {
			compacted++
		}
	}
	if alwaysCompact != (compacted > 2) {
		t.Fatalf("%d incremental publications rewrote both segments", compacted)
	}
	direct = ctRows(t, l.full, "SELECT "+ctRowCols+" FROM ("+strings.TrimRight(strings.TrimSpace(perpdexClosedTradesSQL), ";")+") ct",
		"0x", "0y", closedTradesEnd)
	sameCT(t, "last publication against closed_trades.sql", publishedCT(t, l.inc), direct)
}

// TestPerpdexClosedTradesCancelled: a publication cancelled before any bucket, between
// buckets, after the last one and after the checkpoint leaves the previous publication
// as it was (every file) and no staged file; the next publication is right.
func TestPerpdexClosedTradesCancelled(t *testing.T) {
	l := newCTLakes(t)
	newest := l.dates[len(l.dates)-1]
	l.remove(newest)
	l.publish("cut")
	before := publishedCT(t, l.inc)
	l.restore(newest)
	defer func() { closedTradesTestHook = nil }()
	for _, at := range []int{0, 1, 7, len(closedTradeBuckets), len(closedTradeBuckets) + 1} {
		ctx, cancel := context.WithCancel(context.Background())
		closedTradesTestHook = func(step int) {
			if step == at {
				cancel()
			}
		}
		p, err := l.inc.PublishPerpdexClosedTradesFrom(ctx)
		cancel()
		if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
			t.Fatalf("cancelled at %d: %+v %v", at, p, err)
		}
		sameCT(t, fmt.Sprintf("after a publication cancelled at step %d", at), publishedCT(t, l.inc), before)
		if left, _ := filepath.Glob(filepath.Join(l.inc.dir, "perpdex", closedTradesStaging+"*")); len(left) > 0 {
			t.Fatalf("cancelled at %d: staging left: %v", at, left)
		}
	}
	closedTradesTestHook = nil
	l.publish("after cancellations")
}
