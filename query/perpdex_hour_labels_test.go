package query

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestHourLabelsAnswerAsTheTable: the liquidations route's hourly labels (read for the
// pairs of hour and wallet a page needs, kept in a byte-bounded LRU) equal
// perpdex_cohorts_hourly row for row, for every labelled wallet and hour of the tiny
// lake's newest three dates, a wallet no hour has and a date without labels; with a
// tenth of the room they are evicted and read again, still equal; and a partition
// rewritten with other labels (a republication) is answered from the new file, never
// from what was kept of the old one.
func TestHourLabelsAnswerAsTheTable(t *testing.T) {
	ctx := context.Background()
	now := testlake.Now()
	q, err := Open(ctx, testlake.Copy(t), Options{Now: func() time.Time { return now }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, _, err := q.PerpdexLabelsArgs(ctx, now); err != nil { // publishes the labels
		t.Fatal(err)
	}
	type label struct{ size, pnl sql.NullString }
	want := map[int64]map[string]label{}
	rows, err := q.db.QueryContext(ctx, `SELECT hour_ts, wallet, size_cohort, pnl_cohort FROM perpdex_cohorts_hourly
		WHERE hour_ts >= (SELECT max(hour_ts) FROM perpdex_cohorts_hourly)::DATE - INTERVAL 2 DAY`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			h time.Time
			w string
			l label
		)
		if err := rows.Scan(&h, &w, &l.size, &l.pnl); err != nil {
			t.Fatal(err)
		}
		if want[h.Unix()] == nil {
			want[h.Unix()] = map[string]label{}
		}
		want[h.Unix()][w] = l
	}
	rows.Close()
	if len(want) < 30 {
		t.Fatalf("only %d labelled hours in the newest dates", len(want))
	}
	absent := "0x00000000000000000000000000000000000000ff"
	var pairs []hourWallet
	for h, ws := range want {
		for w := range ws {
			pairs = append(pairs, hourWallet{time.Unix(h, 0).UTC(), w})
		}
		pairs = append(pairs, hourWallet{time.Unix(h, 0).UTC(), absent})
	}
	// An hour of a date without labels.
	pairs = append(pairs, hourWallet{time.Date(2001, 1, 1, 5, 0, 0, 0, time.UTC), absent})
	check := func(step string, size string) {
		t.Helper()
		got, err := q.perpdexHourLabels(ctx, pairs)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pairs {
			g := got[p]
			l, labelled := want[p.hour.Unix()][p.wallet]
			if size != "" {
				l.size = sql.NullString{String: size, Valid: true}
			}
			if g.ok != labelled || labelled && (g.size != l.size || g.pnl != l.pnl) {
				t.Fatalf("%s: %s at %s: %+v, the table %+v (labelled %v)", step, p.wallet, p.hour, g, l, labelled)
			}
		}
	}
	check("first read", "")
	check("from the cache", "")
	lru := q.hourLabelsLRU()
	if u := lru.use(); u.Entries != len(pairs)-1 || u.Bytes <= 0 || u.Limit != q.cacheLimit(hourLabelsCache) {
		t.Fatalf("cache use %+v for %d pairs with a partition", u, len(pairs)-1)
	}

	// A limit of a tenth of the pairs: evicted and read again.
	v, _ := q.ext.Load(lruKey{hourLabelsCache})
	small := newByteLRU[hourLabelKey, hourLabel](hourLabelsCache, lru.use().Bytes/10)
	v.(*lruState[hourLabelKey, hourLabel]).lru = small
	check("small limit", "")
	check("small limit again", "")
	if u := small.use(); u.Evictions == 0 || u.Bytes > u.Limit {
		t.Fatalf("small cache %+v: want evictions and bytes within the limit", u)
	}

	// Every partition of those dates republished with another size label.
	v.(*lruState[hourLabelKey, hourLabel]).lru = newByteLRU[hourLabelKey, hourLabel](hourLabelsCache, 1<<30)
	check("before republication", "")
	dates := map[string]bool{}
	for h := range want {
		dates[time.Unix(h, 0).UTC().Format(time.DateOnly)] = true
	}
	for d := range dates {
		rel, err := lake.PerpdexCohortsHourly.Path(d)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(q.dir, filepath.FromSlash(rel))
		tmp := file + ".new.parquet"
		if _, err := q.db.ExecContext(ctx, `COPY (SELECT hour_ts, wallet, 'leviathan' AS size_cohort, pnl_cohort
			FROM read_parquet('`+file+`') ORDER BY hour_ts, wallet) TO '`+tmp+`' (FORMAT parquet)`); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute) // a new version even within the clock's tick
		if err := os.Chtimes(file, later, later); err != nil {
			t.Fatal(err)
		}
	}
	check("after republication", "leviathan")
}
