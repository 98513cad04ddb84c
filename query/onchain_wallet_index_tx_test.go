package query

import (
	"context"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestOnchainTransactionsIndexAnswersAsTheSQL: on the tiny lake, the Go index pages a
// wallet's transactions exactly as wallet_transactions.sql (the fallback and the
// benchmark's baseline): same rows in the same order (time, log index, tx hash, all
// descending; a self-transfer once), same fields, and the same next cursor, over 1, 30
// and 365 days, with a token filter (one the wallet moved and one unknown), min_usd 0
// and a high floor, and following the cursor page after page with small limits, for
// the busiest wallets of each chain and a sample of quiet ones.
func TestOnchainTransactionsIndexAnswersAsTheSQL(t *testing.T) {
	ctx := context.Background()
	now := testlake.Now()
	q, err := Open(ctx, testlake.Tiny(t), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.onchainSide(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	x, syms := q.walletIndex(), q.symbols()
	if x == nil || x.tx == nil || syms == nil {
		t.Fatal("no transactions index built")
	}
	rows, err := q.db.QueryContext(ctx, `SELECT chain, wallet, tok FROM (SELECT chain, wallet, mode(token) AS tok,
			row_number() OVER (PARTITION BY chain ORDER BY count(*) DESC, wallet) r
			FROM onchain_legs_mem GROUP BY chain, wallet)
		WHERE r <= 3 OR r % 97 = 0 ORDER BY chain, r`)
	if err != nil {
		t.Fatal(err)
	}
	type pick struct{ chain, wallet, tok string }
	var picks []pick
	for rows.Next() {
		var p pick
		if err := rows.Scan(&p.chain, &p.wallet, &p.tok); err != nil {
			t.Fatal(err)
		}
		picks = append(picks, p)
	}
	rows.Close()
	picks = append(picks, pick{"ethereum", "0x00000000000000000000000000000000000000ff", ""}) // never seen
	var rowsSeen, pagesFollowed int
	for _, pk := range picks {
		for _, days := range []int{1, 30, 365} {
			for _, f := range []struct {
				tok    string
				minUSD float64
			}{{"", 0}, {pk.tok, 0}, {"", 1000}, {"0x00000000000000000000000000000000000000ee", 0}} {
				p := OnchainWalletTransactionsParams{Chain: pk.chain, Address: pk.wallet, Days: days,
					Token: f.tok, MinUSD: f.minUSD, Limit: 100}
				limits := []int{100}
				if days == 30 && f.minUSD == 0 {
					limits = append(limits, 1, 7)
				}
				for _, limit := range limits {
					p.Limit, p.After = limit, nil
					for page := 0; page < 6; page++ {
						since, until := micros(now.Add(-time.Duration(days)*24*time.Hour)), micros(now)
						gi, gn, ok := x.transactions(p, since, until, *syms)
						wi, wn, err := q.onchainWalletTransactionsSQL(ctx, p, since, until)
						if !ok || err != nil || !reflect.DeepEqual(gi, wi) || !reflect.DeepEqual(gn, wn) {
							t.Fatalf("%+v page %d:\nindex %+v next %+v (ok %v)\nsql   %+v next %+v (%v)", p, page, gi, gn, ok, wi, wn, err)
						}
						rowsSeen += len(gi)
						if gn == nil {
							break
						}
						p.After = gn
						pagesFollowed++
					}
				}
			}
		}
	}
	if rowsSeen < 1000 || pagesFollowed < 50 {
		t.Fatalf("only %d rows and %d cursor pages compared: the check proves little", rowsSeen, pagesFollowed)
	}
}
