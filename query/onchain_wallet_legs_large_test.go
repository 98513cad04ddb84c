package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"mdq/lake"
)

// TestOnchainWalletLegsLargeReadOnly measures the per-wallet SQL on a lake the store
// must not write into (MDQ_WALLET_LAKE, e.g. the large lake): it writes the wallet
// segments of the busiest wallets' buckets (every chain, history up to the day before
// the newest) into MDQ_WALLET_SCRATCH, points onchain_wallet_legs and
// onchain_wallet_days at them, and times each per-wallet SQL file beside the SQL it
// replaced (testdata/onchain_wallet_before), checking both give the same rows. A
// measurement, skipped unless both variables are set.
func TestOnchainWalletLegsLargeReadOnly(t *testing.T) {
	dir, scratch := os.Getenv("MDQ_WALLET_LAKE"), os.Getenv("MDQ_WALLET_SCRATCH")
	if dir == "" || scratch == "" {
		t.Skip("MDQ_WALLET_LAKE and MDQ_WALLET_SCRATCH not set")
	}
	ctx := context.Background()
	q, err := Open(ctx, dir, Options{TempDir: filepath.Join(scratch, "spill"), NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var newest time.Time
	if err := q.db.QueryRowContext(ctx, `SELECT max(date) FROM onchain_legs`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	r := newest.AddDate(0, 0, -1).Format(time.DateOnly)
	now := newest.Add(12 * time.Hour)
	var hubs []string
	rows, err := q.db.QueryContext(ctx, `SELECT wallet FROM onchain_legs WHERE chain = 'ethereum' AND date = $1::DATE GROUP BY 1 ORDER BY count(*) DESC LIMIT 3`, r)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		rows.Scan(&w) //nolint:errcheck
		hubs = append(hubs, w)
	}
	rows.Close()
	conn, err := q.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := map[string]bool{}
	start := time.Now()
	for _, w := range hubs {
		b := w[2:3]
		if done[b] {
			continue
		}
		done[b] = true
		lo, hi := bucketRange(b)
		for _, c := range []string{"base", "bsc", "ethereum"} {
			for _, x := range []struct {
				t   *lake.Table
				sql string
			}{{lake.OnchainWalletLegs, walletLegsSegmentSQL}, {lake.OnchainWalletDays, walletDaysSegmentSQL}} {
				if _, err := os.Stat(filepath.Join(scratch, x.t.Prefix, "chain="+c, "bucket="+b, "segment=history", x.t.File)); err == nil {
					continue
				}
				if _, err := lake.CopyQuery(ctx, conn, scratch, x.t, []string{c, b, "history"}, x.sql, c, noSplit, r, lo, hi); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("segments of %d buckets written in %s", len(done), time.Since(start).Round(time.Millisecond))
	// onchain_tokens_mem for transactions; first, since it reloads the lake's views.
	if err := q.onchainSide(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*lake.Table{lake.OnchainWalletLegs, lake.OnchainWalletDays} {
		ddl, _ := viewDDL(scratch, tb)
		if _, err := q.db.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := q.ext.LoadOrStore(legsKey{}, &legsState{})
	if err := q.ensureWalletLegsMacro(ctx, st.(*legsState)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{walletLegsMacroSQL, walletDaysMacroSQL} {
		if _, err := q.db.ExecContext(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	us := func(d time.Duration) int64 { return now.Add(-d).UnixMicro() }
	const day = 24 * time.Hour
	for _, f := range []struct {
		file  string
		args  func(w string) []any
		chain string
		other func(w string) string
	}{
		{"wallet.sql", func(w string) []any { return []any{w, us(0)} }, "", nil},
		{"wallet_transactions.sql", func(w string) []any {
			return []any{"ethereum", w, us(30 * day), us(0), "", 0.0, false, int64(0), int64(0), "", 101}
		}, "ethereum", nil},
		{"wallet_transactions.sql", func(w string) []any { // the newest day first, as the route asks
			return []any{"ethereum", w, us(day), us(0), "", 0.0, false, int64(0), int64(0), "", 101}
		}, "ethereum", nil},
		{"wallet_counterparties.sql", func(w string) []any { return []any{"ethereum", w, us(30 * day), us(0), 50} }, "ethereum", nil},
		{"wallet_pnl.sql", func(w string) []any {
			return []any{"ethereum", w, now.AddDate(0, 0, -29).Format(time.DateOnly), us(0)}
		}, "ethereum", nil},
		{"wallet_compare.sql", func(w string) []any {
			return []any{"ethereum", w, hubs[(slices.Index(hubs, w)+1)%len(hubs)], us(30 * day), us(0), 50}
		}, "ethereum", func(w string) string { return hubs[(slices.Index(hubs, w)+1)%len(hubs)] }},
	} {
		text, err := os.ReadFile(filepath.Join("testdata", "onchain_wallet_before", f.file))
		if err != nil {
			t.Fatal(err)
		}
		newText, err := os.ReadFile(filepath.Join("..", "sql", "onchain", f.file))
		if err != nil {
			t.Fatal(err)
		}
		var before, after []time.Duration
		for i := 0; i < 9; i++ {
			w := hubs[i%len(hubs)]
			t0 := time.Now()
			old := scanAll(t, q, string(text), f.args(w)...)
			before = append(before, time.Since(t0))
			t0 = time.Now()
			a, err := q.walletArgsAt(ctx, scratch, w, f.chain, r, r)
			if err != nil {
				t.Fatal(err)
			}
			tail := a.legsTail()
			switch f.file {
			case "wallet.sql", "wallet_pnl.sql":
				tail = a.daysTail()
			case "wallet_compare.sql":
				b, err := q.walletArgsAt(ctx, scratch, f.other(w), f.chain, r, r)
				if err != nil {
					t.Fatal(err)
				}
				a.other = b.legs
				tail = a.compareTail()
			}
			got := scanAll(t, q, string(newText), append(f.args(w), tail...)...)
			after = append(after, time.Since(t0))
			if fmt.Sprint(old) != fmt.Sprint(got) {
				t.Fatalf("%s %s: rows differ:\n%v\n%v", f.file, w, old, got)
			}
		}
		slices.Sort(before)
		slices.Sort(after)
		t.Logf("%-26s before p50 %6.1f ms max %6.1f ms | after p50 %6.1f ms max %6.1f ms", f.file,
			ms(before[len(before)/2]), ms(before[len(before)-1]), ms(after[len(after)/2]), ms(after[len(after)-1]))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func scanAll(t *testing.T, q *Queries, text string, args ...any) [][]any {
	t.Helper()
	out := queryRows(t, q.db, text, args...)
	for _, v := range out {
		for i, x := range v { // comparable values
			if b, ok := x.([]byte); ok {
				v[i] = string(b)
			}
			if tm, ok := x.(time.Time); ok {
				v[i] = tm.UnixMicro()
			}
		}
	}
	return out
}
