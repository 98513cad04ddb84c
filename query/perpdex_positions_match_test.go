package query

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"mdq/lake"
)

// pdMatchPos is one position row of the match fixture: ETH, leverage 10.
type pdMatchPos struct {
	at     time.Time
	wallet string
	entry  float64
}

func pdWriteMatchPositions(t *testing.T, dir string, rows ...pdMatchPos) {
	t.Helper()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	byDate := map[string][]pdMatchPos{}
	for _, r := range rows {
		d := r.at.Format(time.DateOnly)
		byDate[d] = append(byDate[d], r)
	}
	for d, rs := range byDate {
		if _, err := w.Write(context.Background(), lake.PerpdexPositions, []string{d}, func(add lake.AppendFunc) error {
			for _, r := range rs {
				if err := add(r.at, r.wallet, "ETH", 1.0, r.entry, 2000.0, 10.0, 0.0, 0.0, 2000.0); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPerpdexPositionsMatchCacheFreshness: the in-memory batch answers exactly what
// positions_match.sql answers on the raw files at the store clock: a newer batch
// reached by the clock, a batch across midnight, and a replaced partition file are
// all seen at once.
func TestPerpdexPositionsMatchCacheFreshness(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	w1, w2, w3 := "0x"+fmt.Sprintf("%040x", 1), "0x"+fmt.Sprintf("%040x", 2), "0x"+fmt.Sprintf("%040x", 3)
	rows := []pdMatchPos{
		{at(11, 0), w1, 2000}, // the 11:00 batch
		{at(12, 0), w1, 2100}, // the 12:00 batch: w1 moved away, w2 opened
		{at(12, 0), w2, 2000.4},
		{at(23, 55), w3, 2000.2}, // 10 minutes before the 00:05 batch of the next date
		{at(24, 5), w2, 2000.4},
	}
	pdWriteMatchPositions(t, dir, rows...)
	if err := lake.WriteFileAtomic(filepath.Join(dir, lake.MarkerFile), []byte(`{"kind":"fixture"}`)); err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	m := MatchQuery{Coin: "ETH", Side: "long", Leverage: 10, EntryPrice: 2000, MarkPriceHint: 2000}
	check := func(name string, now time.Time, want ...string) {
		t.Helper()
		clock.Store(now.UnixNano())
		page, err := q.PerpdexMatchPositions(context.Background(), m, 50)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range page.Matches {
			got = append(got, r.Address)
		}
		// The one-shot SQL on the raw files is the reference answer.
		rs, err := q.db.Query(perpdexMatchSQL, m.Coin, 1, m.Leverage, m.EntryPrice, m.MarkPriceHint, 50, now)
		if err != nil {
			t.Fatal(err)
		}
		var ref []string
		for rs.Next() {
			var w, c string
			var ts time.Time
			var f [8]float64
			var band int
			if err := rs.Scan(&w, &c, &ts, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &band); err != nil {
				t.Fatal(err)
			}
			ref = append(ref, w)
		}
		rs.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(ref) != fmt.Sprint(want) {
			t.Fatalf("%s: cache %v, sql %v, want %v", name, got, ref, want)
		}
	}
	check("before every batch: no match", at(10, 0))
	check("the 11:00 batch", at(11, 30), w1)
	check("the clock reaches the 12:00 batch: reloaded", at(12, 0), w2)
	check("the clock moves back before it: reloaded", at(11, 59), w1)
	check("the 12:00 batch again", at(12, 30), w2)
	// Replace the 2026-11-20 partition while the clock stays in the 12:00 batch: w2
	// now enters at 2050 (2.5% away: no band).
	rows[2].entry = 2050
	pdWriteMatchPositions(t, dir, rows[:4]...)
	check("a replaced partition file is reread", at(12, 30))
	check("a batch just after midnight sees the 15 minutes before it", at(24, 30), w3, w2)
	check("the same batch a day later", at(49, 0), w3, w2)
	// A new date partition holding a batch before the clock.
	pdWriteMatchPositions(t, dir, pdMatchPos{at(48, 0), w1, 2000})
	check("a new partition with a newer batch is seen", at(49, 0), w1)
}
