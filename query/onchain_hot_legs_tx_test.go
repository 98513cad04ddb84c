package query

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestTxPageSpan: a transactions page's span from hand-built cached legs. Legs at one
// second are all inside it, a self-transfer counts once (its receiving leg), a leg at
// the cursor's time, a USD value at min_usd itself and a token not held are not
// counted (they widen the span), and fewer counted legs than the page give the whole
// window.
func TestTxPageSpan(t *testing.T) {
	const sec = 1_000_000
	cp := "0x" + strings.Repeat("0c", 20)
	b := &hotBuilder{h: &hotLegs{}, toks: map[string]uint16{}, ok: true}
	for _, l := range []struct {
		tok        string
		at, usd    int64
		send, self bool
	}{
		{"a", 100, 5 * sec, false, false},
		{"a", 100, 5 * sec, true, false},
		{"b", 100, 5 * sec, false, false},
		{"a", 90, 5 * sec, false, false},
		{"a", 85, 5 * sec, true, true},
		{"a", 85, 5 * sec, false, true},
		{"b", 70, 2 * sec, false, false},
		{"a", 60, 5 * sec, true, false},
		{"a", 50, 5 * sec, false, false},
	} {
		if !b.add(cp, l.tok, l.at*sec, l.usd, true, l.send, l.self) {
			t.Fatal("leg refused")
		}
	}
	h := b.finish()
	since, until := int64(10*sec), int64(200*sec)
	at := func(s int64) *TxCursor { return &TxCursor{BlockUS: s * sec, LogIndex: 3, TxHash: "0x"} }
	for _, tc := range []struct {
		name     string
		p        OnchainWalletTransactionsParams
		from, to int64
	}{
		{"a second's legs are all in", OnchainWalletTransactionsParams{Limit: 1}, 100*sec - 1, until},
		{"the next older second", OnchainWalletTransactionsParams{Limit: 3}, 90*sec - 1, until},
		{"a self-transfer counts once", OnchainWalletTransactionsParams{Limit: 2, After: at(100)}, 70*sec - 1, 100 * sec},
		{"a leg at the cursor's time is not counted", OnchainWalletTransactionsParams{Limit: 0, After: at(90)}, 85*sec - 1, 90 * sec},
		{"one token", OnchainWalletTransactionsParams{Limit: 1, Token: "b"}, 70*sec - 1, until},
		{"a token not held", OnchainWalletTransactionsParams{Limit: 1, Token: "z"}, since, until},
		{"min_usd", OnchainWalletTransactionsParams{Limit: 5, MinUSD: 3}, 60*sec - 1, until},
		{"a USD value at min_usd is not counted", OnchainWalletTransactionsParams{Limit: 0, MinUSD: 2, Token: "b"}, 100*sec - 1, until},
		{"fewer legs than the page", OnchainWalletTransactionsParams{Limit: 8}, since, until},
		{"the window's start", OnchainWalletTransactionsParams{Limit: 0}, 100*sec - 1, 100 * sec},
	} {
		if tc.name == "the window's start" {
			since, until = 95*sec, 100*sec
		}
		from, to := h.txPageSpan(tc.p, since, until)
		if from != tc.from || to != tc.to {
			t.Errorf("%s: span (%d, %d], want (%d, %d]", tc.name, from/sec, to/sec, tc.from/sec, tc.to/sec)
		}
	}
}

// TestHotLegsTransactionsAsTheSQL: with every wallet of the tiny lake cached, each page
// of transactions (bounded by the cached legs) is the page the SQL gives over the whole
// window, through every page of several filters, and the span is narrower than the
// window for the busy wallets' first pages.
func TestHotLegsTransactionsAsTheSQL(t *testing.T) {
	ctx := context.Background()
	q, now := hotStore(t)
	if err := q.WarmHotWallets(ctx); err != nil {
		t.Fatal(err)
	}
	wallets := busiestWallets(t, q, 12)
	narrowed, pages := 0, 0
	for _, w := range wallets {
		a, err := q.walletArgs(ctx, w.wallet, w.chain)
		if err != nil {
			t.Fatal(err)
		}
		h := q.hotLegsFor(w.chain, w.wallet, a)
		if h == nil {
			t.Fatalf("%s %s not cached", w.chain, w.wallet)
		}
		tok, minUSD := h.toks[h.tok[0]], float64(h.usd[len(h.usd)/2])/1e6 // a held token; a leg's USD itself
		for _, p := range []OnchainWalletTransactionsParams{
			{Days: 30, Limit: 3},
			{Days: 30, Limit: 50},
			{Days: 7, Limit: 2, Token: tok},
			{Days: 30, Limit: 4, MinUSD: minUSD},
			{Days: 1, Limit: 5},
			{Days: 30, Limit: 3, Token: "0x" + strings.Repeat("9", 40)},
		} {
			p.Chain, p.Address = w.chain, w.wallet
			since, until := micros(now.AddDate(0, 0, -p.Days)), micros(now)
			for page := 0; page < 6; page++ {
				if from, _ := h.txPageSpan(p, since, until); page == 0 && from > since {
					narrowed++
				}
				got, gotNext, err := q.OnchainWalletTransactions(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				want, wantNext, err := q.onchainWalletTransactionsSQL(ctx, p, since, until, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotNext, wantNext) {
					t.Fatalf("%s %s %+v page %d:\n cached %v %+v\n sql    %v %+v", w.chain, w.wallet, p, page, gotNext, got, wantNext, want)
				}
				pages++
				if gotNext == nil {
					break
				}
				p.After = gotNext
			}
		}
	}
	if narrowed < len(wallets) || pages < 3*len(wallets) {
		t.Fatalf("%d first pages narrowed of %d wallets, %d pages compared", narrowed, len(wallets), pages)
	}
}
