package query

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// smart_money from compact days. The cohort (3,300 wallets of the large lake) makes
// half of a day's fills (96,000 of the 186,000 a 24-hour window reads), so the SQL's
// work per request is inherent: 60 ms of DuckDB for the default window. A trades file
// never changes once written (a new version is a new file signature), so each date's
// fills are read once per version into a compact columnar day (smart_day.sql: sorted by
// market, wallet and time; integer micro-units rounded by DuckDB exactly as the SQL
// rounds them), kept in a byte-bounded LRU (cache_budget.go), and a request walks the
// window's days in Go. smart_money_flows.sql and smart_money_buys.sql stay the
// definition: TestSmartMoneyDaysAnswerAsTheSQL compares the two row for row, and the
// route uses the SQL for windows over more than smartDaysMax dates, for a day with a
// NULL where the SQL would skip a row, and when the market or token table repeats a
// market (the SQL's join would count its fills twice). The market fields come from the
// tape index, which holds the markets and tokens files for the route already.

var (
	predmktSmartDaySQL = sqlfiles.MustRead("predmkt/smart_day.sql")
)

// smartDaysCache is the registered name (and share) of the cache.
const smartDaysCache = "predmkt_smart_days"

// smartDaysMax is the most dates a window may touch for the Go path: 48 hours touch
// three. Longer windows (up to 720 hours) read every fill of their dates once per
// request either way, and would push the newest days out of the cache.
const smartDaysMax = 3

// smartDay is one trades file's fills, sorted by market, wallet and ts.
type smartDay struct {
	market, wallet, token []int32 // indexes into markets, wallets (sorted), tokens
	outcome               []int8
	side                  []byte // 'B' BUY, 'S' SELL, 0 other
	ts, usd, size         []int64
	markets, wallets      []string
	tokens                []string
	exact                 bool // no NULL the SQL would treat apart
}

func (d *smartDay) bytes() int64 {
	n := int64(len(d.ts)) * (3*4 + 1 + 1 + 3*8)
	for _, l := range [][]string{d.markets, d.wallets, d.tokens} {
		for _, s := range l {
			n += int64(len(s)) + 16
		}
	}
	return n + 256
}

// smartDaysLRU holds file signature -> *smartDay.
func (q *Queries) smartDaysLRU() *byteLRU[string, any] {
	return storeLRU[string, any](q, smartDaysCache)
}

// smartInputs are a request's days, or ok false when the route must use the SQL.
func (q *Queries) smartInputs(ctx context.Context, lo, hi string) (days []*smartDay, ok bool, err error) {
	const op = "predmkt smart_money"
	l, err1 := time.Parse(time.DateOnly, lo)
	h, err2 := time.Parse(time.DateOnly, hi)
	if err1 != nil || err2 != nil || h.Sub(l) >= smartDaysMax*24*time.Hour {
		return nil, false, nil
	}
	lru := q.smartDaysLRU()
	parts, err := q.cachedDatePartitions(lake.PredmktTrades)
	if err != nil {
		return nil, false, &StoreError{Op: op, Err: err}
	}
	for d := l; !d.After(h); d = d.AddDate(0, 0, 1) {
		f, found := parts[d.Format(time.DateOnly)]
		if !found {
			continue
		}
		key := "day|" + f.path + "|" + f.sig
		if v, hit := lru.get(key); hit {
			days = append(days, v.(*smartDay))
			continue
		}
		rd := q.smartReads()
		if rd.replaced(f.path, f.sig) {
			// A new version of a file read before (the newest day, rewritten by each
			// ingest batch): reading it here would cost this request 5 to 10 times the
			// SQL (a whole day of the large lake: 0.64 s), so the SQL answers it while the
			// day is read in the background for the requests after.
			rd.readInBackground(q, lru, key, f.path, f.sig)
			return nil, false, nil
		}
		day, err := rd.load(ctx, q, lru, key, f.path, f.sig)
		if err != nil {
			return nil, false, err
		}
		days = append(days, day)
	}
	for _, d := range days {
		if !d.exact {
			return nil, false, nil
		}
	}
	return days, true, nil
}

// smartDayReads remembers, per trades file, the version last read into the cache, and
// the reads in flight (one per version), a request's or a background one.
type smartDayReads struct {
	mu      sync.Mutex
	last    map[string]string       // file -> signature of the version read last (one entry per date)
	loading map[string]*smartDayRun // cache key being read
	loads   atomic.Int64            // reads made by requests (the tests count them)
}

// smartDayRun is a read of a day in flight, which the requests asking for the same day
// meanwhile wait for.
type smartDayRun struct {
	done chan struct{}
	day  *smartDay
	err  error
}

type smartDayReadsKey struct{}

func (q *Queries) smartReads() *smartDayReads {
	v, _ := q.ext.LoadOrStore(smartDayReadsKey{}, &smartDayReads{last: map[string]string{}, loading: map[string]*smartDayRun{}})
	return v.(*smartDayReads)
}

// replaced reports whether another version of file than sig was read before.
func (r *smartDayReads) replaced(file, sig string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.last[file]
	return ok && old != sig
}

// start registers a read of key, or returns the read of key in flight (started false).
func (r *smartDayReads) start(key string) (run *smartDayRun, started bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.loading[key]; ok {
		return run, false
	}
	run = &smartDayRun{done: make(chan struct{})}
	r.loading[key] = run
	return run, true
}

// finish ends run with its outcome: a day read is kept under key, as file's version sig.
func (r *smartDayReads) finish(lru *byteLRU[string, any], run *smartDayRun, key, file, sig string, day *smartDay, err error) {
	r.mu.Lock()
	delete(r.loading, key)
	if err == nil {
		lru.put(key, day, day.bytes())
		r.last[file] = sig
	}
	run.day, run.err = day, err
	r.mu.Unlock()
	close(run.done)
}

// load reads file's version sig into the cache under key and returns it, once however
// many requests ask at the same time: the first reads it, the others wait for its
// read (the large lake served under 16 connections from a cold start had sixteen
// requests read the same two days side by side, 6 to 13 s each, where one read takes
// 0.64 s). A waiter whose reader failed (its request may have ended) reads it itself.
func (r *smartDayReads) load(ctx context.Context, q *Queries, lru *byteLRU[string, any], key, file, sig string) (*smartDay, error) {
	for {
		run, started := r.start(key)
		if !started {
			select {
			case <-run.done:
				if run.err == nil {
					return run.day, nil
				}
				continue
			case <-ctx.Done():
				return nil, wrap(ctx, "predmkt smart_money", ctx.Err())
			}
		}
		r.loads.Add(1)
		day, err := q.readSmartDay(ctx, file)
		r.finish(lru, run, key, file, sig, day, err)
		return day, err
	}
}

// readInBackground reads file's version sig into the cache under key, once however many
// requests ask, under the store's life (Close cancels it and waits).
func (r *smartDayReads) readInBackground(q *Queries, lru *byteLRU[string, any], key, file, sig string) {
	run, started := r.start(key)
	if !started {
		return
	}
	q.background(func(life context.Context) {
		ctx, cancel := context.WithTimeout(life, max(q.timeout, time.Minute))
		defer cancel()
		day, err := q.readSmartDay(ctx, file)
		if err != nil && life.Err() == nil {
			// The SQL keeps answering; the next request asks again.
			q.log.Warn("smart_money: reading a trades day", "file", file, "err", err.Error())
		}
		r.finish(lru, run, key, file, sig, day, err)
	})
}

// readSmartDay reads one trades file into a compact day.
func (q *Queries) readSmartDay(ctx context.Context, file string) (*smartDay, error) {
	const op = "predmkt smart_money"
	rows, err := q.db.QueryContext(ctx, predmktSmartDaySQL, file)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	d := &smartDay{exact: true}
	markets, wallets, tokens := map[string]int32{}, map[string]int32{}, map[string]int32{}
	intern := func(m map[string]int32, list *[]string, s string) int32 {
		if i, ok := m[s]; ok {
			return i
		}
		i := int32(len(*list))
		m[s] = i
		*list = append(*list, s)
		return i
	}
	for rows.Next() {
		var (
			cond, wallet, side, token sql.NullString
			outcome                   sql.NullInt64
			ts, usd, size             int64
			usdOK, sizeOK             bool
		)
		var u, s sql.NullInt64
		if err := rows.Scan(&cond, &wallet, &outcome, &side, &ts, &u, &s, &token); err != nil {
			return nil, wrap(ctx, op, err)
		}
		usd, usdOK, size, sizeOK = u.Int64, u.Valid, s.Int64, s.Valid
		if !cond.Valid || !wallet.Valid || !outcome.Valid || !side.Valid || !usdOK || !sizeOK || !token.Valid ||
			outcome.Int64 < -128 || outcome.Int64 > 127 {
			d.exact = false // a NULL the SQL would skip or group apart: the route uses the SQL
			continue
		}
		sd := byte(0)
		switch side.String {
		case "BUY":
			sd = 'B'
		case "SELL":
			sd = 'S'
		}
		d.market = append(d.market, intern(markets, &d.markets, cond.String))
		d.wallet = append(d.wallet, intern(wallets, &d.wallets, wallet.String))
		d.token = append(d.token, intern(tokens, &d.tokens, token.String))
		d.outcome = append(d.outcome, int8(outcome.Int64))
		d.side = append(d.side, sd)
		d.ts, d.usd, d.size = append(d.ts, ts), append(d.usd, usd), append(d.size, size)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	// Wallets sorted, so a cohort's wallets are found by binary search.
	order := make([]int32, len(d.wallets))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(d.wallets[a], d.wallets[b]) })
	remap := make([]int32, len(order))
	sorted := make([]string, len(order))
	for to, from := range order {
		remap[from], sorted[to] = int32(to), d.wallets[from]
	}
	d.wallets = sorted
	for i, w := range d.wallet {
		d.wallet[i] = remap[w]
	}
	return d, nil
}

// cohortOf maps the day's wallets to their index in cohort (sorted), -1 outside it.
func (d *smartDay) cohortOf(cohort []string) []int32 {
	in := make([]int32, len(d.wallets))
	for i := range in {
		in[i] = -1
	}
	for ci, w := range cohort {
		if i, ok := slices.BinarySearch(d.wallets, w); ok {
			in[i] = int32(ci)
		}
	}
	return in
}

// marketsOf maps the day's markets to the tape index's market rows of the category
// (nil: absent from the markets file, or of another category: the SQL's join drops
// those fills).
func (d *smartDay) marketsOf(ix *tapeIndex, cat string) []*tapeMarket {
	out := make([]*tapeMarket, len(d.markets))
	for i, id := range d.markets {
		if m, ok := ix.markets[id]; ok && (cat == "all" || m.category == cat) {
			out[i] = &m
		}
	}
	return out
}

// yesToken is the market's first-outcome token (yes_mid's), nil without one.
func yesToken(ix *tapeIndex, cond string) *string {
	if tok, ok := ix.yes[cond]; ok {
		return &tok
	}
	return nil
}

// distinctCount counts the distinct values of ws (cohort indexes), reordering it.
func distinctCount(ws []int32) int64 {
	slices.Sort(ws)
	return int64(len(slices.Compact(ws)))
}

// smartFlowsFromDays is smart_money_flows.sql over the days: the cohort's fills in
// [from, now] per market of the category. A day's fills are sorted by market and
// wallet, so each (market, wallet) of a day adds its wallet once; the days' lists are
// made distinct at the end.
func smartFlowsFromDays(days []*smartDay, ix *tapeIndex, cat string, cohort []string, from, now int64) []smartFlowAgg {
	type acc struct {
		a       smartFlowAgg
		wallets []int32
	}
	byMkt := map[string]*acc{}
	for _, d := range days {
		in, mkts := d.cohortOf(cohort), d.marketsOf(ix, cat)
		var x *acc
		prevM, prevW := int32(-1), int32(-1)
		for i := range d.ts {
			c := in[d.wallet[i]]
			if c < 0 || d.ts[i] < from || d.ts[i] > now {
				continue
			}
			mi := d.market[i]
			m := mkts[mi]
			if m == nil {
				continue
			}
			if mi != prevM {
				cond := d.markets[mi]
				if x = byMkt[cond]; x == nil {
					x = &acc{a: smartFlowAgg{cond: cond, title: m.question, slug: m.slug, yes: yesToken(ix, cond), last: d.ts[i]}}
					byMkt[cond] = x
				}
				prevM, prevW = mi, -1
			}
			if c != prevW {
				x.wallets = append(x.wallets, c)
				prevW = c
			}
			switch d.side[i] {
			case 'B':
				x.a.buy += d.usd[i]
			case 'S':
				x.a.sell += d.usd[i]
			}
			x.a.trades++
			x.a.last = max(x.a.last, d.ts[i])
		}
	}
	out := make([]smartFlowAgg, 0, len(byMkt))
	for _, x := range byMkt {
		x.a.wallets = distinctCount(x.wallets)
		out = append(out, x.a)
	}
	return out
}

// smartBuysFromDays is smart_money_buys.sql over the days: the cohort's buys in
// [from, now] per market of the category and outcome.
func smartBuysFromDays(days []*smartDay, ix *tapeIndex, cat string, cohort []string, from, now int64) []smartSide {
	type key struct {
		cond string
		idx  int8
	}
	type acc struct {
		s       smartSide
		wallets []int32
		prevW   int32 // the last wallet added in the day being walked
	}
	by := map[key]*acc{}
	for _, d := range days {
		in, mkts := d.cohortOf(cohort), d.marketsOf(ix, cat)
		for _, x := range by {
			x.prevW = -1
		}
		for i := range d.ts {
			c := in[d.wallet[i]]
			if d.side[i] != 'B' || c < 0 || d.ts[i] < from || d.ts[i] > now {
				continue
			}
			m := mkts[d.market[i]]
			if m == nil {
				continue
			}
			cond := d.markets[d.market[i]]
			k := key{cond, d.outcome[i]}
			x := by[k]
			if x == nil {
				x = &acc{s: smartSide{cond: cond, title: m.question, slug: m.slug, idx: int(d.outcome[i]), token: d.tokens[d.token[i]], last: d.ts[i]},
					prevW: -1}
				by[k] = x
			}
			if c != x.prevW {
				x.wallets = append(x.wallets, c)
				x.prevW = c
			}
			x.s.usd += d.usd[i]
			x.s.size += d.size[i]
			x.s.last = max(x.s.last, d.ts[i])
		}
	}
	out := make([]smartSide, 0, len(by))
	for _, x := range by {
		x.s.wallets = distinctCount(x.wallets)
		out = append(out, x.s)
	}
	return out
}
