package handlers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// Hand-built prediction-market lakes for the edge rules and for the oracle tests while
// (or in addition to) the demo generator's tiny lake.

type pmMarket struct {
	cond, question, slug, category string
	tokens                         [2]string
	created, end                   time.Time
	res                            *pmRes
}

type pmRes struct {
	ts      time.Time
	winner  int // -1 for invalid
	invalid bool
}

type pmFill struct {
	id       string
	ts       int64
	seq      int64
	mkt      int
	outcome  int
	wallet   string
	role     string
	side     string
	price    float64
	size     float64
	localLag int64
}

type pmEvent struct {
	typ             string
	token           string
	ts, local, seq  int64
	side            string
	price, size     float64
	bestBid, bestAs float64
	bids, asks      string
	snapshot        int
	status          string
}

type pmFixture struct {
	markets  []pmMarket
	profiles map[string][2]string
	fills    []pmFill
	events   []pmEvent
}

func pmWallet(i int) string { return fmt.Sprintf("0x%040x", 0xa000+i) }

func pmToken(m, o int) string { return fmt.Sprintf("%d", 7_000_000_000+m*10+o) }

// addMarket appends a market of category cat; res may be nil (open).
func (f *pmFixture) addMarket(cat string, created time.Time, res *pmRes) int {
	i := len(f.markets)
	f.markets = append(f.markets, pmMarket{
		cond: fmt.Sprintf("0x%064x", 0xc000+i), question: fmt.Sprintf("Fixture market %d?", i),
		slug: fmt.Sprintf("fixture-market-%d", i), category: cat,
		tokens:  [2]string{pmToken(i, 0), pmToken(i, 1)},
		created: created, end: created.Add(30 * 24 * time.Hour), res: res,
	})
	return i
}

// trade records one tape trade as its taker fill and the opposite maker fill.
func (f *pmFixture) trade(ts int64, mkt, outcome int, taker, maker, side string, price, size float64) {
	seq := int64(len(f.fills) + 1)
	other := "SELL"
	if side == "SELL" {
		other = "BUY"
	}
	f.fills = append(f.fills,
		pmFill{fmt.Sprintf("t%d", seq), ts, seq, mkt, outcome, taker, "taker", side, price, size, 3},
		pmFill{fmt.Sprintf("m%d", seq), ts, seq, mkt, outcome, maker, "maker", other, price, size, 3})
	f.events = append(f.events, pmEvent{typ: "trade", token: f.markets[mkt].tokens[outcome], ts: ts, local: ts + 3, seq: seq,
		side: side, price: price, size: size})
}

// quote records a price_change carrying a best bid and ask (a recorded mid).
func (f *pmFixture) quote(ts int64, mkt, outcome int, bid, ask float64) {
	f.events = append(f.events, pmEvent{typ: "price_change", token: f.markets[mkt].tokens[outcome], ts: ts, local: ts + 2,
		seq: int64(len(f.events) + 100000), side: "BUY", price: bid, size: 10, bestBid: bid, bestAs: ask})
}

// write puts the fixture in a fresh lake directory and returns it.
func (f *pmFixture) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	must := func(_ int64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Write(ctx, lake.PredmktMarkets, nil, func(add lake.AppendFunc) error {
		for _, m := range f.markets {
			if err := add(m.cond, m.question, m.slug, m.category, "", "", m.created, m.end, m.res != nil); err != nil {
				return err
			}
		}
		return nil
	}))
	must(w.Write(ctx, lake.PredmktTokens, nil, func(add lake.AppendFunc) error {
		for _, m := range f.markets {
			for o, tok := range m.tokens {
				if err := add(tok, m.cond, o, []string{"Yes", "No"}[o]); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	must(w.Write(ctx, lake.PredmktResolutions, nil, func(add lake.AppendFunc) error {
		for _, m := range f.markets {
			if m.res == nil {
				continue
			}
			var win any = m.res.winner
			if m.res.invalid {
				win = nil
			}
			if err := add(m.cond, m.res.ts, win, m.res.invalid); err != nil {
				return err
			}
		}
		return nil
	}))
	must(w.Write(ctx, lake.PredmktProfiles, nil, func(add lake.AppendFunc) error {
		for wallet, p := range f.profiles {
			if err := add(wallet, p[0], p[1]); err != nil {
				return err
			}
		}
		return nil
	}))
	byDate := map[string][]pmFill{}
	for _, fl := range f.fills {
		d := time.UnixMilli(fl.ts).UTC().Format("2006-01-02")
		byDate[d] = append(byDate[d], fl)
	}
	for d, fills := range byDate {
		must(w.Write(ctx, lake.PredmktTrades, []string{d}, func(add lake.AppendFunc) error {
			for _, fl := range fills {
				m := f.markets[fl.mkt]
				if err := add(fl.id, fl.ts, fl.ts+fl.localLag, fl.seq, m.tokens[fl.outcome], m.cond, fl.outcome, fl.wallet,
					fl.role, fl.side, fl.price, fl.size, fl.price*fl.size, "0xfeed"); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	evByDate := map[string][]pmEvent{}
	for _, e := range f.events {
		d := time.UnixMilli(e.local).UTC().Format("2006-01-02")
		evByDate[d] = append(evByDate[d], e)
	}
	for d, evs := range evByDate {
		must(w.Write(ctx, lake.PredmktBookEvents, []string{d}, func(add lake.AppendFunc) error {
			for _, e := range evs {
				if err := add(e.typ, e.token, e.ts, e.local, e.seq, e.side, e.price, e.size, e.bestBid, e.bestAs,
					e.bids, e.asks, e.snapshot, e.status); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	if err := lake.WriteFileAtomic(filepath.Join(dir, lake.MarkerFile), []byte(`{"kind":"fixture"}`)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// randomPmFixture is a deterministic, varied lake: 36 markets over five categories
// (one invalid resolution, several open), 40 wallets of which one is a sharp that buys
// winners cheaply, one a bot, one a whale and one a loser, with trades spread over the
// 60 days to testlake.Now and quotes on every token.
func randomPmFixture(seed uint64) *pmFixture {
	rng := rand.New(rand.NewPCG(seed, 99))
	now := testlake.Now()
	end := now.UnixMilli()
	f := &pmFixture{profiles: map[string][2]string{}}
	cats := []string{"Crypto", "Sports", "Politics", "Pop-Culture", "Tech"}
	for i := range 36 {
		created := now.Add(-time.Duration(40+rng.IntN(20)) * 24 * time.Hour)
		var res *pmRes
		switch {
		case i == 5:
			res = &pmRes{ts: now.Add(-10 * 24 * time.Hour), winner: -1, invalid: true}
		case i%6 == 0:
			// open
		default:
			// resolution times spread over the last 40 days, some inside 24h and 7d
			back := time.Duration(rng.IntN(40*24)+1) * time.Hour
			res = &pmRes{ts: now.Add(-back), winner: rng.IntN(2)}
		}
		f.addMarket(cats[i%5], created, res)
	}
	const nw = 40
	for i := range nw {
		if i%3 == 0 {
			f.profiles[pmWallet(i)] = [2]string{fmt.Sprintf("Pseudo-%d", i), ""}
		}
	}
	sharp, bot, whale, loser := pmWallet(0), pmWallet(1), pmWallet(2), pmWallet(3)
	for mi, m := range f.markets {
		start := m.created.UnixMilli()
		stop := end
		if m.res != nil {
			stop = m.res.ts.UnixMilli() - 60_000
		}
		win := 0
		if m.res != nil && m.res.winner >= 0 {
			win = m.res.winner
		}
		at := func() int64 { return start + rng.Int64N(stop-start) }
		// ordinary two-way flow
		for range 30 + rng.IntN(30) {
			a, b := pmWallet(4+rng.IntN(nw-4)), pmWallet(4+rng.IntN(nw-4))
			side := []string{"BUY", "SELL"}[rng.IntN(2)]
			f.trade(at(), mi, rng.IntN(2), a, b, side, float64(5+rng.IntN(90))/100, float64(10+rng.IntN(400)))
		}
		// the sharp buys the (eventual) winner cheaply, the loser buys the other side
		if m.res != nil || mi%6 == 0 {
			f.trade(at(), mi, win, sharp, pmWallet(4+mi%30), "BUY", 0.35, 2000)
			f.trade(at(), mi, 1-win, loser, pmWallet(5+mi%30), "BUY", 0.60, 900)
		}
		// the whale trades big both ways
		f.trade(at(), mi, rng.IntN(2), whale, pmWallet(6+mi%30), "BUY", 0.5, 5000)
		f.trade(at(), mi, rng.IntN(2), whale, pmWallet(7+mi%30), "SELL", 0.5, 4000)
		// the bot: many tiny taker trades
		for range 4 {
			f.trade(at(), mi, rng.IntN(2), bot, pmWallet(8+mi%30), []string{"BUY", "SELL"}[rng.IntN(2)], 0.5, 10)
		}
		// quotes on both tokens; the last one sets the current mid
		for o := range 2 {
			for k := range 5 {
				ts := start + int64(k+1)*(stop-start)/6
				mid := 0.2 + 0.6*rng.Float64()
				f.quote(ts, mi, o, mid-0.01, mid+0.01)
			}
		}
	}
	// Recent cohort activity on open markets: the sharp buys below the current mid.
	for mi := range f.markets {
		if mi%6 != 0 || mi == 0 {
			continue
		}
		ts := end - int64(2+mi)*3_600_000
		f.trade(ts, mi, 0, sharp, pmWallet(9), "BUY", 0.40, 1500)
		f.trade(ts+1000, mi, 0, sharp, pmWallet(10), "SELL", 0.41, 100)
		f.quote(ts+5000, mi, 0, 0.40+float64(mi)/200, 0.42+float64(mi)/200)
	}
	sort.SliceStable(f.fills, func(i, j int) bool { return f.fills[i].ts < f.fills[j].ts })
	return f
}
