package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// TestOnchainHotWalletsAnswerAsTheSQL: counterparties, compare and transactions (every
// page; the cached legs bound the span its SQL reads) of wallets held in the cache of
// the busiest wallets' legs (query.HotWalletMinLegs lowered so that the fixture's
// wallets qualify; WarmHotWallets loads them) answer byte for byte as a store without
// the cache (the SQL), on self-transfers, equal volumes, a leg exactly at a window's
// start, direct flows both ways and a wallet compared with itself; with every wallet
// cached, with only W (its counterparties from Go, a compare with another wallet by
// the SQL), and on a lake where a leg's block time is not a whole second (its two
// wallets left out of the cache, answered by their SQL).
func TestOnchainHotWalletsAnswerAsTheSQL(t *testing.T) {
	fixture := func(subSecond bool) (*ocFixture, map[string]string) {
		f, a := ocNamedFixture()
		W, V, usdc, pepe := a["W"], a["V"], a["usdc"], a["pepe"]
		f.xfer("ethereum", 3*time.Hour, usdc, W, W, 5, 5)                  // a self-transfer: no counterparty
		f.xfer("ethereum", 26*time.Hour, pepe, V, V, 1, 900)               // and one of V's
		f.xfer("ethereum", 5*time.Hour, pepe, W, ocAddr(300), 1, 777)      // 300 and 301 tie at 777 USD
		f.xfer("ethereum", 6*time.Hour, usdc, ocAddr(301), W, 1, 777)      //
		f.xfer("ethereum", 7*time.Hour, usdc, W, V, 3, 3)                  // W to V; V sends W 500 too
		f.xfer("ethereum", 24*time.Hour, usdc, ocAddr(300), V, 1, 2)       // exactly at the 24h window's start
		f.xfer("ethereum", 2*time.Hour, pepe, ocAddr(105), W, 1, 0.000001) // a second token with 105
		f.xfer("ethereum", 50*24*time.Hour, pepe, ocAddr(104), V, 1, 11)   // only in 90d and all
		if subSecond {
			// A block time the cache's whole-second column cannot hold (xfer keeps
			// whole seconds): V and 302 are left out of the cache.
			f.transfers = append(f.transfers, ocRaw{chain: "ethereum", t: testlake.Now().Add(-30 * time.Hour).Truncate(time.Second).Add(250 * time.Millisecond),
				token: usdc, from: V, to: ocAddr(302), amount: 1, usd: 40, priced: true})
		}
		return f, a
	}
	f, a := fixture(false)
	W, V := a["W"], a["V"]
	dir := f.write(t)
	cold := (&handlers.API{Q: openQueries(t, dir)}).Handler()
	defer func(n int64) { query.HotWalletMinLegs = n }(query.HotWalletMinLegs)
	warm := func(dir string, min int64) (http.Handler, int) {
		q := openQueries(t, dir)
		query.HotWalletMinLegs = min
		if err := q.WarmHotWallets(context.Background()); err != nil {
			t.Fatal(err)
		}
		entries := 0
		for _, c := range q.CacheReport() {
			if c.Name == "onchain_hot_legs" {
				entries = c.Entries
			}
		}
		return (&handlers.API{Q: q}).Handler(), entries
	}
	// Every wallet cached; then only W (V and the others by their SQL).
	var hots []http.Handler
	every := 0
	for _, min := range []int64{1, 30} {
		h, entries := warm(dir, min)
		if min == 1 && entries < 4 || min == 30 && entries != 1 {
			t.Fatalf("at least %d legs: %d wallets' legs cached", min, entries)
		}
		if min == 1 {
			every = entries
		}
		hots = append(hots, h)
	}
	var targets []string
	for _, win := range []string{"24h", "7d", "30d", "90d", "all"} {
		for _, limit := range []int{1, 2, 50} {
			for _, w := range []string{W, V, ocAddr(300)} {
				targets = append(targets, fmt.Sprintf("/v1/onchain/wallets/%s/counterparties?window=%s&limit=%d", w, win, limit))
			}
			for _, p := range [][2]string{{W, V}, {V, W}, {W, W}, {W, ocAddr(100)}} {
				targets = append(targets, fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s&window=%s&limit=%d", p[0], p[1], win, limit))
			}
		}
	}
	// Transactions: every page of each filter, the cursors as the SQL gives them.
	for _, days := range []int{1, 30} {
		for _, limit := range []int{1, 2, 50} {
			for _, w := range []string{W, V, ocAddr(300)} {
				for _, filter := range []string{"", "&min_usd=777", "&token=" + a["usdc"]} {
					targets = append(targets, txPages(t, cold, fmt.Sprintf("/v1/onchain/wallets/%s/transactions?days=%d&limit=%d%s", w, days, limit, filter))...)
				}
			}
		}
	}
	nonEmpty := 0
	for _, target := range targets {
		wantCode, want := get(t, cold, target)
		for i, hot := range hots {
			code, body := get(t, hot, target)
			if code != 200 || wantCode != 200 || string(body) != string(want) {
				t.Fatalf("%s (cache %d):\n cached %d %s\n sql    %d %s", target, i, code, body, wantCode, want)
			}
		}
		if len(want) > 200 {
			nonEmpty++
		}
	}
	if nonEmpty < len(targets)/2 {
		t.Fatalf("only %d of %d answers hold rows", nonEmpty, len(targets))
	}
	// With a leg of V at a time that is not a whole second, every wallet but V (and its
	// new counterparty 302) is cached, and every answer is the SQL's of that lake.
	f2, _ := fixture(true)
	dir2 := f2.write(t)
	cold2 := (&handlers.API{Q: openQueries(t, dir2)}).Handler()
	hot2, entries := warm(dir2, 1)
	if entries != every-1 {
		t.Fatalf("%d wallets' legs cached with V's sub-second leg, %d without it", entries, every)
	}
	for _, target := range append(targets, fmt.Sprintf("/v1/onchain/wallets/%s/counterparties?window=all", ocAddr(302))) {
		wantCode, want := get(t, cold2, target)
		if code, body := get(t, hot2, target); code != 200 || wantCode != 200 || string(body) != string(want) {
			t.Fatalf("%s (V refused):\n cached %d %s\n sql    %d %s", target, code, body, wantCode, want)
		}
	}
}

// TestOnchainHotWalletsRefusedNotReadAgain: under a warm store, a day's transfers file
// of the fixture is replaced by one holding a leg of V whose block time is not a whole
// second. The next warm reads V (and its new counterparty 302), finds the columns cannot
// hold them, and drops V's entry of the older files; a warm after it reads nothing again
// while the files stay (serve's debug log counts the warm's reads). The answers equal
// those of a store on the replaced lake without the cache.
func TestOnchainHotWalletsRefusedNotReadAgain(t *testing.T) {
	defer func(n int64) { query.HotWalletMinLegs = n }(query.HotWalletMinLegs)
	query.HotWalletMinLegs = 1
	fixture := func(subSecond bool) (*ocFixture, map[string]string) {
		f, a := ocNamedFixture()
		f.xfer("ethereum", 26*time.Hour, a["pepe"], a["V"], a["V"], 1, 900)
		if subSecond {
			f.transfers = append(f.transfers, ocRaw{chain: "ethereum", t: testlake.Now().Add(-26 * time.Hour).Truncate(time.Second).Add(250 * time.Millisecond),
				token: a["usdc"], from: a["V"], to: ocAddr(302), amount: 1, usd: 40, priced: true})
		}
		return f, a
	}
	f, a := fixture(false)
	W, V := a["W"], a["V"]
	dir := f.write(t)
	var logs bytes.Buffer
	q, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	hot := (&handlers.API{Q: q}).Handler()
	// warm runs one warm and returns what its log line counted and the cache's entries.
	warm := func() (read, refused, entries int) {
		logs.Reset()
		if err := q.WarmHotWallets(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `msg="hot wallets warm"`) {
				if _, err := fmt.Sscanf(line[strings.Index(line, " read="):], " read=%d refused=%d entries=%d", &read, &refused, &entries); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				return read, refused, entries
			}
		}
		t.Fatalf("no warm line in the log:\n%s", logs.String())
		return
	}
	read, refused, every := warm()
	if read != every || refused != 0 || every < 4 {
		t.Fatalf("first warm: read %d, refused %d, %d entries", read, refused, every)
	}
	if read, _, _ := warm(); read != 0 {
		t.Fatalf("a warm over the same files read %d wallets again", read)
	}
	// The day's file replaced by a corrected one (a new file renamed over the old one).
	f2, _ := fixture(true)
	dir2 := f2.write(t)
	rel, err := lake.OnchainTransfers.Path("ethereum", testlake.Now().Add(-26*time.Hour).UTC().Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir2, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if err := lake.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(rel)), b); err != nil {
		t.Fatal(err)
	}
	// Its legs published, as serve's refresher or mdq rebuild publishes them.
	if _, err := q.PublishOnchainLegs(context.Background()); err != nil {
		t.Fatal(err)
	}
	read, refused, entries := warm()
	if read < 2 || refused != 2 || entries != every-1 {
		t.Fatalf("after the replaced file: read %d, refused %d (want V and 302), %d entries (want %d: V's dropped)", read, refused, entries, every-1)
	}
	if read, refused, entries := warm(); read != 0 || refused != 0 || entries != every-1 {
		t.Fatalf("a warm over the same files read %d wallets again (%d refused), %d entries", read, refused, entries)
	}
	cold := (&handlers.API{Q: openQueries(t, dir2)}).Handler()
	for _, target := range []string{"/v1/onchain/wallets/" + V + "/counterparties?window=all", "/v1/onchain/wallets/" + W + "/counterparties?window=all",
		"/v1/onchain/wallets/compare?window=all&wallet_a=" + W + "&wallet_b=" + V, "/v1/onchain/wallets/" + V + "/transactions?days=7&limit=2"} {
		wantCode, want := get(t, cold, target)
		if code, body := get(t, hot, target); code != 200 || wantCode != 200 || string(body) != string(want) {
			t.Fatalf("%s:\n cached %d %s\n sql    %d %s", target, code, body, wantCode, want)
		}
	}
}

// txPages is target and its next pages (up to 10) as h answers them.
func txPages(t *testing.T, h http.Handler, target string) []string {
	out := []string{target}
	for len(out) < 10 {
		code, body := get(t, h, out[len(out)-1])
		var page struct {
			Next *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); code != 200 || err != nil {
			t.Fatalf("%s: %d %s", target, code, body)
		}
		if page.Next == nil {
			break
		}
		out = append(out, target+"&cursor="+url.QueryEscape(*page.Next))
	}
	return out
}
