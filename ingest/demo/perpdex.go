package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"mdq/lake"
)

// genPerpdex generates the perpetuals venue: a per-minute price walk per coin, wallets
// with behaviours trading against each other and a market-maker vault through a real
// position state machine per (wallet, coin), liquidations, builder codes, hourly
// funding, ledger flows (opening deposits included), hourly position and account
// snapshots, venue statistics and the archive tapes. It runs day by day (bounded memory): each day's
// events are generated, sorted by time and applied in order, then that day's
// partitions are written.
//
// Before the history proper it simulates the prehistory block (see
// perpdexPrehistoryFrom): a few wallets trading on the dates 2026-03-20 up to the day
// before g.Start (never later than 2026-04-06), written to perpdex_fills,
// perpdex_funding, perpdex_marks and perpdex_ledger only, so that liquidations dated
// before the first published hourly label (2026-04-07) exist whatever g.Start is.
// Positions opened there carry on into the history, so the fills' state machine
// chains across the whole lake.
func genPerpdex(ctx context.Context, g *Generator) error {
	s := newPerpdexSim(ctx, g)
	days := g.Days()
	first := days[0]
	if perpdexPrehistoryFrom.Before(first) {
		first = perpdexPrehistoryFrom
	}
	s.openingDeposits(first)
	for d := first; d.Before(days[0]); d = d.Add(24 * time.Hour) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Before(perpdexLabelStart) {
			if err := s.day(d, d.UnixMilli(), d.Add(24*time.Hour).UnixMilli(), perpdexOld); err != nil {
				return err
			}
		} else {
			s.advancePath() // a gap between the prehistory block and a later history
		}
	}
	for _, d := range days {
		if err := ctx.Err(); err != nil {
			return err
		}
		lo := d
		if lo.Before(g.Start) {
			lo = g.Start
		}
		hi := d.Add(24 * time.Hour).UnixMilli()
		if e := g.End.UnixMilli() + 1; e < hi {
			hi = e
		}
		if err := s.day(d, lo.UnixMilli(), hi, perpdexMain); err != nil {
			return err
		}
		g.Step("perpdex")
	}
	if err := s.writeFinal(); err != nil {
		return err
	}
	if err := writePerpdexVaults(s); err != nil {
		return err
	}
	g.Step("perpdex")
	return nil
}

const (
	perpdexOld  = 1 // prehistory block: few wallets, fills/funding/marks/ledger only
	perpdexMain = 2 // history: everything
)

// Event kinds, in the order they are applied when they share a millisecond.
const (
	evTick = iota
	evJoin
	evLedger
	evDrain
	evCluster
	evLiq
	evTrade
)

type perpdexEv struct {
	ms   int64
	kind int
	idx  int
}

type perpdexWallet struct {
	Addr       string
	Kind       int
	Weight     float64
	Skill      float64
	Builder    int // index into perpdexBuilders, -1 for none
	Fav        int // favourite coin
	Capital    float64
	PriorPnL   float64 // all-time PnL made before the simulation
	Cash       float64
	JoinMs     int64 // first deposit inside the history; 0 for wallets funded before it
	Joined     bool
	Inactive   bool
	Old        bool // trades in the prehistory block
	Unlabelled bool // no account snapshot: mdq labels it in neither cohort table
	DrainMs    int64
	Cluster    int // copy-trader group, -1 otherwise
	ClusterLev float64
	Fills      int
	Realized   float64
	Fees       float64
	Funding    float64
	Equity     float64 // at the last hourly snapshot
}

type perpdexPos struct {
	Szi, Entry, Lev float64
	OpenMs, HoldMs  int64
}

type perpdexTrade struct {
	coin          int
	ms            int64
	buy           bool // taker bought
	px, sz        float64
	hash          string
	tid           int64
	buyer, seller string
	seq, localTS  int64
}

type perpdexSim struct {
	g   *Generator
	ctx context.Context
	nc  int
	w   []perpdexWallet
	pos []perpdexPos
	bAd []string // builder addresses

	cumAll, cumOld []float64
	idxAll, idxOld []int

	path [][]float64 // [coin][minute 0..1440] of the current day
	last []float64
	rate []float64
	seq  []int64

	tid, oid       int64
	mode           int
	dayMs, lastMs  int64
	loMs           int64
	hiMs           int64
	endMs          int64
	clusterMs      int64
	rPx, rTr, rLq  *rand.Rand
	rLe, rBk, rFu  *rand.Rand
	rHs            *rand.Rand
	fills, funding [][]any
	ledger, posns  [][]any
	accts, marks   [][]any
	stats          [][]any
	trades         []perpdexTrade
}

func newPerpdexSim(ctx context.Context, g *Generator) *perpdexSim {
	s := &perpdexSim{g: g, ctx: ctx, nc: len(perpdexCoins),
		rPx: g.RNG("perpdex/prices"), rTr: g.RNG("perpdex/trades"), rLq: g.RNG("perpdex/liquidations"),
		rLe: g.RNG("perpdex/ledger"), rBk: g.RNG("perpdex/book"), rFu: g.RNG("perpdex/funding"),
		rHs: g.RNG("perpdex/hashes"),
		tid: 700_000_000_000_000, oid: 50_000_000_000,
		endMs: g.End.UnixMilli(),
	}
	s.last = make([]float64, s.nc)
	s.rate = make([]float64, s.nc)
	s.seq = make([]int64, s.nc)
	s.path = make([][]float64, s.nc)
	for c, coin := range perpdexCoins {
		s.last[c] = coin.Start
		s.rate[c] = 0.0000125
		s.path[c] = make([]float64, 1441)
	}
	cl := g.End.Add(-5 * time.Hour)
	if cl.Before(g.Start) {
		cl = g.Start.Add(g.End.Sub(g.Start) / 2)
	}
	s.clusterMs = cl.UnixMilli()

	r := g.RNG("perpdex/wallets")
	addr := func() string { return fmt.Sprintf("0x%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32()) }
	for range perpdexBuilders {
		s.bAd = append(s.bAd, addr())
	}
	n := max(g.Scale.PerpWallets, 40)
	startMs, span := g.Start.UnixMilli(), g.End.Sub(g.Start).Milliseconds()
	nCopy := 0
	for _, c := range perpdexClusters {
		nCopy += c.N
	}
	bots := 0
	for i := range n {
		w := perpdexWallet{Addr: addr(), Builder: -1, Cluster: -1, Skill: 0.5}
		switch {
		case i == 0:
			w.Kind = pwMM
		case i == 1:
			w.Kind = pwHLP
		case i < 2+nCopy:
			w.Kind = pwCopy
			k := i - 2
			for gi, c := range perpdexClusters {
				if k < c.N {
					w.Cluster, w.ClusterLev, w.Fav = gi, c.Lev, perpdexCoinIndex(c.Coin)
					if k == c.N-1 {
						w.ClusterLev++
					}
					break
				}
				k -= c.N
			}
		default:
			u := r.Float64()
			w.Kind = pwRetail
			for k := pwWhale; k <= pwRetail; k++ {
				if u < perpdexKinds[k].Share {
					w.Kind = k
					break
				}
				u -= perpdexKinds[k].Share
			}
		}
		k := perpdexKinds[w.Kind]
		w.Capital = math.Round(k.CapMedian * math.Exp(k.CapSigma*r.NormFloat64()))
		w.Weight = k.Weight * math.Exp(0.5*r.NormFloat64())
		if w.Kind >= pwWhale {
			switch u := r.Float64(); {
			case u < 0.15:
				w.Skill = 0.62 + 0.08*r.Float64()
			case u < 0.40:
				w.Skill = 0.30 + 0.10*r.Float64()
			default:
				w.Skill = 0.45 + 0.10*r.Float64()
			}
			if w.Kind == pwBot {
				w.Skill += 0.05
			}
			// Favourite coin: mostly the majors; builder-3 users like the xyz markets.
			w.Fav = s.pickWeightedCoin(r)
			if r.Float64() < 0.3 {
				w.Builder = pickBuilder(r)
			}
			if w.Kind == pwBot && bots < len(perpdexBuilders) {
				w.Builder = bots // every builder routes at least one bot: fills every day
				bots++
			}
			if w.Builder == 3 && r.Float64() < 0.6 {
				w.Fav = perpdexCoinIndex("xyz:TSLA") + r.IntN(2)
			}
			// All-time PnL before the simulation sets the multiple-winner bands.
			switch u := r.Float64(); {
			case u < 0.04:
				w.PriorPnL = w.Capital * (10.5 + 20*r.Float64())
			case u < 0.12:
				w.PriorPnL = w.Capital * (3.2 + 5*r.Float64())
			default:
				w.PriorPnL = w.Capital * math.Max(-0.85, math.Min(2.5, 0.1+0.5*r.NormFloat64()))
			}
			if r.Float64() < 0.15 && span > 24*3_600_000 {
				w.JoinMs = startMs + r.Int64N(span-12*3_600_000)
				w.PriorPnL = 0
			}
			// The second draw is kept so the random stream (and every other row) is
			// unchanged since cohort labels left the generator.
			if r.Float64() < 0.05 {
				w.Unlabelled = true
			} else {
				_ = r.Float64()
			}
		} else {
			w.PriorPnL = 0.2 * w.Capital
		}
		w.PriorPnL = math.Round(w.PriorPnL*100) / 100
		if w.JoinMs == 0 {
			w.Joined = true
			w.Cash = w.Capital + w.PriorPnL
		}
		s.w = append(s.w, w)
	}
	// Prehistory traders, wallets that drain their account to almost nothing, and at
	// least two wallets without account snapshots (in neither cohort table).
	nOld, nDrain, nUnl := 0, 0, 0
	for i := range s.w {
		w := &s.w[i]
		if w.Kind < pwWhale || !w.Joined {
			continue
		}
		if w.Unlabelled {
			nUnl++
		}
		if w.Kind != pwWhale && (nOld < 6 || r.Float64() < 0.08) {
			w.Old = true
			nOld++
			continue
		}
		if w.Kind != pwWhale && span > 2*3_600_000*6 && (nDrain < 2 || r.Float64() < 0.02) {
			w.DrainMs = startMs + span*4/10 + r.Int64N(span*6/10-6*3_600_000)
			nDrain++
		}
	}
	for i := len(s.w) - 1; i >= 0 && nUnl < 2; i-- {
		if s.w[i].Kind >= pwWhale && !s.w[i].Unlabelled {
			s.w[i].Unlabelled = true
			nUnl++
		}
	}
	s.pos = make([]perpdexPos, len(s.w)*s.nc)
	tot, totOld := 0.0, 0.0
	for i, w := range s.w {
		if w.Kind < pwWhale {
			continue
		}
		tot += w.Weight
		s.cumAll = append(s.cumAll, tot)
		s.idxAll = append(s.idxAll, i)
		if w.Old {
			totOld += w.Weight
			s.cumOld = append(s.cumOld, totOld)
			s.idxOld = append(s.idxOld, i)
		}
	}
	return s
}

func pickBuilder(r *rand.Rand) int {
	u := r.Float64()
	for i, b := range perpdexBuilders {
		if u < b.Weight {
			return i
		}
		u -= b.Weight
	}
	return len(perpdexBuilders) - 1
}

func (s *perpdexSim) pickWeightedCoin(r *rand.Rand) int {
	tot := 0.0
	for _, c := range perpdexCoins {
		tot += c.Weight
	}
	u := r.Float64() * tot
	for i, c := range perpdexCoins {
		if u < c.Weight {
			return i
		}
		u -= c.Weight
	}
	return 0
}

// advancePath draws the next day's per-minute prices of every coin: a log-normal walk
// with a daily drift and, now and then, a jump (which is what liquidates people).
func (s *perpdexSim) advancePath() {
	r := s.rPx
	for c, coin := range perpdexCoins {
		sig := coin.Vol / math.Sqrt(525_600)
		mu := r.NormFloat64() * 0.6 * coin.Vol / math.Sqrt(365) / 1440
		jump, jumpAt := 0.0, -1
		if r.Float64() < 0.15 {
			jump = perpdexSign(r.Float64()-0.5) * (0.02 + 0.04*r.Float64())
			jumpAt = r.IntN(1440)
		}
		p := s.path[c]
		p[0] = s.last[c]
		for m := 1; m <= 1440; m++ {
			x := mu + sig*r.NormFloat64()
			if m == jumpAt {
				x += jump
			}
			p[m] = p[m-1] * math.Exp(x)
		}
		s.last[c] = p[1440]
	}
}

// day simulates one UTC day over [lo, hi) and writes its partitions.
func (s *perpdexSim) day(d time.Time, lo, hi int64, mode int) error {
	s.mode, s.dayMs, s.lastMs, s.loMs, s.hiMs = mode, d.UnixMilli(), lo, lo, hi
	s.advancePath()
	frac := float64(hi-lo) / 86_400_000
	var evs []perpdexEv
	r := s.rTr
	nTrades, nLiq, nLedger := 0, 0, 0
	if mode == perpdexOld {
		nTrades = max(40, s.g.Scale.PerpFillsDay/40)
		nLiq = 3 + r.IntN(3)
		nLedger = 2
	} else {
		nTrades = int(math.Round(float64(s.g.Scale.PerpFillsDay) / 2 * frac))
		nLiq = int(math.Round(math.Max(3, float64(nTrades)/250) * frac))
		nLedger = int(math.Round(math.Max(3, 0.03*float64(len(s.w))) * frac))
	}
	span := hi - lo
	if hi > s.endMs {
		span = max(s.endMs-lo, 1) // nothing happens after the final snapshot batch
	}
	for i := range nTrades {
		evs = append(evs, perpdexEv{lo + r.Int64N(span), evTrade, i})
	}
	for i := range nLiq {
		evs = append(evs, perpdexEv{lo + s.rLq.Int64N(span), evLiq, i})
	}
	for i := range nLedger {
		evs = append(evs, perpdexEv{lo + s.rLe.Int64N(span), evLedger, i})
	}
	if mode == perpdexMain {
		for i, w := range s.w {
			if w.JoinMs >= lo && w.JoinMs < hi {
				evs = append(evs, perpdexEv{w.JoinMs, evJoin, i})
			}
			if w.DrainMs >= lo && w.DrainMs < hi {
				evs = append(evs, perpdexEv{w.DrainMs, evDrain, i})
			}
		}
		if s.clusterMs >= lo && s.clusterMs < hi {
			evs = append(evs, perpdexEv{s.clusterMs, evCluster, 0})
		}
	}
	// Hourly ticks, and in the final hour a position snapshot every 5 minutes.
	h := (lo + 3_599_999) / 3_600_000 * 3_600_000
	for ; h < hi; h += 3_600_000 {
		evs = append(evs, perpdexEv{h, evTick, 1})
	}
	if mode == perpdexMain {
		// The newest batch is at the end of history itself, after the last fill.
		for t := s.endMs; t > s.endMs-3_600_000; t -= 300_000 {
			if t >= lo && t < hi && t%3_600_000 != 0 {
				evs = append(evs, perpdexEv{t, evTick, 0})
			}
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if a.ms != b.ms {
			return a.ms < b.ms
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.idx < b.idx
	})
	for _, e := range evs {
		m := int((e.ms - s.dayMs) / 60_000)
		switch e.kind {
		case evTick:
			s.tick(e.ms, m, e.idx == 1)
		case evJoin:
			w := &s.w[e.idx]
			w.Joined = true
			w.Cash += w.Capital
			s.ledgerRow(e.ms, e.idx, "deposit", w.Capital, -1, s.hash())
		case evLedger:
			s.ledgerEvent(e.ms, m)
		case evDrain:
			s.drain(e.ms, m, e.idx)
		case evCluster:
			s.cluster(e.ms, m)
		case evLiq:
			s.liqEvent(e.ms, m)
		case evTrade:
			s.trade(e.ms, m)
		}
		if e.ms > s.lastMs {
			s.lastMs = e.ms
		}
	}
	return s.flushDay(d)
}

// equity returns a wallet's account value at minute m, the notional of its open
// positions, the margin they use and the maintenance margin they need.
func (s *perpdexSim) equity(w, m int) (eq, ntl, margin, maint float64) {
	eq = s.w[w].Cash
	for c := range s.nc {
		p := &s.pos[w*s.nc+c]
		if p.Szi == 0 {
			continue
		}
		px := s.path[c][m]
		eq += p.Szi * (px - p.Entry)
		n := math.Abs(p.Szi) * px
		ntl += n
		margin += n / p.Lev
		maint += n / (2 * perpdexCoins[c].MaxLev)
	}
	return
}

// sample picks an active wallet by trading weight (prehistory: only its wallets).
func (s *perpdexSim) sample() int {
	cum, idx := s.cumAll, s.idxAll
	if s.mode == perpdexOld {
		cum, idx = s.cumOld, s.idxOld
	}
	if len(cum) == 0 {
		return -1
	}
	for range 30 {
		i := sort.SearchFloat64s(cum, s.rTr.Float64()*cum[len(cum)-1])
		if i >= len(idx) {
			i = len(idx) - 1
		}
		w := idx[i]
		if s.w[w].Joined && !s.w[w].Inactive {
			return w
		}
	}
	return -1
}

func (s *perpdexSim) pickLev(w, c int) float64 {
	wl := &s.w[w]
	if wl.Kind == pwCopy {
		return wl.ClusterLev
	}
	levs := perpdexKinds[wl.Kind].Levs
	l := levs[s.rTr.IntN(len(levs))]
	return math.Min(l, perpdexCoins[c].MaxLev)
}

func (s *perpdexSim) holdMs(w int) int64 {
	k := perpdexKinds[s.w[w].Kind]
	return int64(k.Hold * 60_000 * s.rTr.ExpFloat64())
}

// trade is one taker order of a wallet, filled against a maker.
func (s *perpdexSim) trade(ms int64, m int) {
	w := s.sample()
	if w < 0 {
		return
	}
	r := s.rTr
	wl := &s.w[w]
	k := perpdexKinds[wl.Kind]
	// An overdue position is usually dealt with first; otherwise an open one half the
	// time, or a new coin.
	c := -1
	var open, due [16]int
	nOpen, nDue := 0, 0
	for ci := range s.nc {
		if q := &s.pos[w*s.nc+ci]; q.Szi != 0 {
			open[nOpen] = ci
			nOpen++
			if ms-q.OpenMs > q.HoldMs {
				due[nDue] = ci
				nDue++
			}
		}
	}
	if u := r.Float64(); nDue > 0 && u < 0.85 {
		c = due[r.IntN(nDue)]
	} else if nOpen > 0 && u < 0.5 || nOpen >= 4 {
		c = open[r.IntN(nOpen)]
	}
	if c < 0 {
		if r.Float64() < 0.4 {
			c = wl.Fav
		} else {
			c = s.pickWeightedCoin(r)
		}
	}
	coin := perpdexCoins[c]
	p := &s.pos[w*s.nc+c]
	mid := s.path[c][m]
	eq, _, margin, _ := s.equity(w, m)
	free := math.Max(eq-margin, 0)
	px := perpdexSig(mid * (1 + 0.0002*r.NormFloat64()))
	newSize := func(lev float64) float64 {
		n := free * lev * (k.FracLo + r.Float64()*(k.FracHi-k.FracLo))
		return perpdexRound(n/px, coin.SzDec)
	}
	abs := math.Abs(p.Szi)
	sgn := perpdexSign(p.Szi)
	partial := func(lo, hi float64) float64 {
		part := perpdexRound(abs*(lo+(hi-lo)*r.Float64()), coin.SzDec)
		if part <= 0 || part >= abs {
			part = abs
		}
		return -sgn * part
	}
	var delta float64
	if p.Szi == 0 {
		lev := s.pickLev(w, c)
		sz := newSize(lev)
		if sz <= 0 {
			return
		}
		mf := min(m+k.Look, 1440)
		dir := -1.0
		if s.path[c][mf] >= s.path[c][m] {
			dir = 1
		}
		if r.Float64() >= wl.Skill {
			dir = -dir
		}
		p.Lev = lev
		delta = dir * sz
	} else if ms-p.OpenMs > p.HoldMs {
		switch u := r.Float64(); {
		case u < 0.72:
			delta = -p.Szi
		case u < 0.84:
			if sz := newSize(p.Lev); sz > 0 {
				delta = -p.Szi - sgn*sz
			} else {
				delta = -p.Szi
			}
		default:
			delta = partial(0.3, 0.7)
		}
	} else {
		if sz := perpdexRound(newSize(p.Lev)*0.5, coin.SzDec); r.Float64() < 0.55 && sz > 0 {
			delta = sgn * sz
		} else {
			delta = partial(0.2, 0.5)
		}
	}
	if delta == 0 {
		return
	}
	maker := s.pickMaker(w, c, delta, m, px)
	s.exec(ms, c, px, w, maker, delta, false, 0)
}

// pickMaker finds the other side of a taker order: another wallet that is reducing a
// position of the same direction or opening a new one, or else the market maker.
func (s *perpdexSim) pickMaker(w, c int, delta float64, m int, px float64) int {
	if s.rTr.Float64() >= 0.35 {
		return 0
	}
	for range 3 {
		o := s.sample()
		if o < 0 || o == w {
			continue
		}
		q := s.pos[o*s.nc+c]
		if q.Szi != 0 {
			if perpdexSign(q.Szi) == perpdexSign(delta) && math.Abs(q.Szi) >= math.Abs(delta) {
				return o
			}
			continue
		}
		if s.rTr.Float64() >= 0.3 {
			continue
		}
		eq, _, margin, _ := s.equity(o, m)
		if (eq-margin)*2.5 >= math.Abs(delta)*px {
			return o
		}
	}
	return 0
}

func (s *perpdexSim) hash() string {
	r := s.rHs
	return fmt.Sprintf("0x%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
}

// exec fills one trade: the taker's fill (crossed) and the maker's (not crossed).
func (s *perpdexSim) exec(ms int64, c int, px float64, taker, maker int, delta float64, liq bool, liqMark float64) {
	s.tid += 1 + int64(s.rHs.IntN(40))
	h := s.hash()
	s.fill(ms, c, px, taker, delta, true, liq, liqMark, h)
	s.fill(ms, c, px, maker, -delta, false, false, 0, h)
	if s.mode == perpdexMain {
		t := perpdexTrade{coin: c, ms: ms, buy: delta > 0, px: px, sz: math.Abs(delta), hash: h, tid: s.tid}
		if delta > 0 {
			t.buyer, t.seller = s.w[taker].Addr, s.w[maker].Addr
		} else {
			t.buyer, t.seller = s.w[maker].Addr, s.w[taker].Addr
		}
		s.trades = append(s.trades, t)
	}
	if ms > s.lastMs {
		s.lastMs = ms
	}
}

// apply moves the (wallet, coin) position by delta at px and returns the position
// before the fill, the fill's direction and the PnL realized by its closing part.
func (s *perpdexSim) apply(w, c int, delta, px float64, ms int64) (start float64, dir string, closed float64) {
	p := &s.pos[w*s.nc+c]
	dec := perpdexCoins[c].SzDec
	s0 := p.Szi
	start = s0
	a0, a := math.Abs(s0), math.Abs(delta)
	switch {
	case s0 == 0:
		dir = "Open Short"
		if delta > 0 {
			dir = "Open Long"
		}
		if p.Lev == 0 {
			p.Lev = s.pickLev(w, c)
		}
		p.Szi, p.Entry, p.OpenMs, p.HoldMs = perpdexRound(delta, dec), px, ms, s.holdMs(w)
	case s0*delta > 0:
		dir = "Open Short"
		if delta > 0 {
			dir = "Open Long"
		}
		p.Entry = (a0*p.Entry + a*px) / (a0 + a)
		p.Szi = perpdexRound(s0+delta, dec)
	case perpdexRound(a-a0, dec) <= 0:
		dir = "Close Short"
		if s0 > 0 {
			dir = "Close Long"
		}
		closed = a * (px - p.Entry) * perpdexSign(s0)
		p.Szi = perpdexRound(s0+delta, dec)
		if p.Szi == 0 {
			*p = perpdexPos{}
		}
	default:
		dir = "Short > Long"
		if s0 > 0 {
			dir = "Long > Short"
		}
		closed = a0 * (px - p.Entry) * perpdexSign(s0)
		p.Szi, p.Entry, p.OpenMs, p.HoldMs = perpdexRound(s0+delta, dec), px, ms, s.holdMs(w)
	}
	return start, dir, perpdexRound(closed, 6)
}

// fill applies and records one side of a trade.
func (s *perpdexSim) fill(ms int64, c int, px float64, w int, delta float64, crossed, liq bool, liqMark float64, h string) {
	r := s.rTr
	coin := perpdexCoins[c]
	wl := &s.w[w]
	start, dir, closed := s.apply(w, c, delta, px, ms)
	notional := math.Abs(delta) * px
	rate := 0.00015
	if crossed {
		rate = 0.00045
	}
	var deployer any
	if coin.Dex != "" {
		rate *= 2
	}
	base := notional * rate
	fee := base
	if coin.Dex != "" {
		deployer = perpdexRound(base*0.5, 6)
	}
	var builder, bfee any
	if wl.Builder >= 0 && (crossed || r.Float64() < 0.3) {
		bf := perpdexRound(notional*perpdexBuilders[wl.Builder].Rate, 6)
		builder, bfee = s.bAd[wl.Builder], bf
		fee += bf
	}
	fee = math.Max(perpdexRound(fee, 6), 0.000001)
	feeToken := "USDC"
	if r.Float64() < 0.015 {
		feeToken = "USDH"
	}
	wl.Cash += closed - fee
	wl.Realized += closed
	wl.Fees += fee
	wl.Fills++
	side := "A"
	if delta > 0 {
		side = "B"
	}
	var lm any
	if liq {
		lm = liqMark
	}
	s.oid += 1 + int64(r.IntN(500))
	s.fills = append(s.fills, []any{time.UnixMilli(ms).UTC(), wl.Addr, coin.Name, coin.Dex, side, px,
		math.Abs(delta), dir, start, closed, fee, feeToken, builder, bfee, deployer, crossed, h, s.tid, s.oid, liq, lm})
}

// liqEvent liquidates the most distressed losing position of the venue.
func (s *perpdexSim) liqEvent(ms int64, m int) {
	best, bestC, bestRatio := -1, -1, math.Inf(1)
	for w := range s.w {
		wl := &s.w[w]
		if wl.Kind < pwWhale || !wl.Joined {
			continue
		}
		worst, wc := 0.0, -1
		for c := range s.nc {
			p := &s.pos[w*s.nc+c]
			if p.Szi == 0 {
				continue
			}
			if u := p.Szi * (s.path[c][m] - p.Entry); u < worst {
				worst, wc = u, c
			}
		}
		if wc < 0 {
			continue
		}
		eq, _, _, maint := s.equity(w, m)
		if ratio := eq / maint; ratio < bestRatio {
			best, bestC, bestRatio = w, wc, ratio
		}
	}
	if best >= 0 {
		s.liquidate(ms, m, best, bestC)
	}
}

// liquidate closes a position fully against the liquidator vault at a price a little
// worse than the mark; an account left below zero loses its other positions too and
// then either tops up or is left with a few cents.
func (s *perpdexSim) liquidate(ms int64, m, w, c int) {
	p := &s.pos[w*s.nc+c]
	mark := perpdexSig(s.path[c][m])
	px := perpdexSig(mark * (1 - perpdexSign(p.Szi)*0.0008))
	s.exec(ms, c, px, w, 1, -p.Szi, true, mark)
	eq, _, _, _ := s.equity(w, m)
	if eq >= 0 {
		return
	}
	for oc := range s.nc {
		q := &s.pos[w*s.nc+oc]
		if q.Szi == 0 {
			continue
		}
		mk := perpdexSig(s.path[oc][m])
		s.exec(ms, oc, perpdexSig(mk*(1-perpdexSign(q.Szi)*0.0008)), w, 1, -q.Szi, true, mk)
	}
	wl := &s.w[w]
	if wl.Cash >= 0 {
		return
	}
	if s.rLq.Float64() < 0.5 {
		amt := math.Round(wl.Capital*(0.3+0.7*s.rLq.Float64())*100) / 100
		wl.Cash = 0
		wl.Cash += amt
		wl.Capital += amt
		s.ledgerRow(ms, w, "deposit", amt, -1, s.hash())
		return
	}
	wl.Cash = math.Round((0.01+0.89*s.rLq.Float64())*100) / 100
	wl.Inactive = true
}

// marginCheck liquidates, just before the hour, every account below maintenance margin.
func (s *perpdexSim) marginCheck(tickMs int64) {
	for w := range s.w {
		wl := &s.w[w]
		if wl.Kind < pwWhale || !wl.Joined {
			continue
		}
		for range s.nc {
			mTick := int((tickMs - s.dayMs) / 60_000)
			eq, ntl, _, maint := s.equity(w, mTick)
			if ntl == 0 || eq >= maint {
				break
			}
			liqMs := max(s.lastMs, tickMs-1-s.rLq.Int64N(50_000), s.dayMs)
			m := int((liqMs - s.dayMs) / 60_000)
			worst, wc := math.Inf(1), -1
			for c := range s.nc {
				p := &s.pos[w*s.nc+c]
				if p.Szi == 0 {
					continue
				}
				if u := p.Szi * (s.path[c][m] - p.Entry); u < worst {
					worst, wc = u, c
				}
			}
			s.liquidate(liqMs, m, w, wc)
		}
	}
}

// ledgerEvent is a deposit, withdrawal or send of a random wallet.
func (s *perpdexSim) ledgerEvent(ms int64, m int) {
	r := s.rLe
	w := -1
	for range 20 {
		i := s.idxAll[r.IntN(len(s.idxAll))]
		if s.mode == perpdexOld {
			i = s.idxOld[r.IntN(len(s.idxOld))]
		}
		if s.w[i].Joined && !s.w[i].Inactive {
			w = i
			break
		}
	}
	if w < 0 {
		return
	}
	wl := &s.w[w]
	eq, _, margin, _ := s.equity(w, m)
	free := eq - margin
	switch u := r.Float64(); {
	case u < 0.45:
		amt := math.Round(wl.Capital*(0.05+0.45*r.Float64())*100) / 100
		wl.Cash += amt
		wl.Capital += amt
		s.ledgerRow(ms, w, "deposit", amt, -1, s.hash())
	case u < 0.8:
		if free < 10 {
			return
		}
		amt := math.Round(free*(0.05+0.25*r.Float64())*100) / 100
		wl.Cash -= amt
		s.ledgerRow(ms, w, "withdraw", amt, -1, s.hash())
	default:
		if free < 10 {
			return
		}
		o := s.idxAll[r.IntN(len(s.idxAll))]
		if o == w || !s.w[o].Joined {
			return
		}
		amt := math.Round(free*(0.02+0.18*r.Float64())*100) / 100
		h := s.hash()
		wl.Cash -= amt
		s.w[o].Cash += amt
		s.w[o].Capital += amt
		s.ledgerRow(ms, w, "send_out", amt, o, h)
		s.ledgerRow(ms, o, "send_in", amt, w, h)
	}
}

func (s *perpdexSim) ledgerRow(ms int64, w int, kind string, amt float64, other int, h string) {
	var cp any
	if other >= 0 {
		cp = s.w[other].Addr
	}
	s.ledger = append(s.ledger, []any{time.UnixMilli(ms).UTC(), s.w[w].Addr, kind, amt, cp, h})
}

// drain closes every position of a wallet and withdraws all but a few cents.
func (s *perpdexSim) drain(ms int64, m, w int) {
	wl := &s.w[w]
	if wl.Inactive || !wl.Joined {
		return
	}
	for c := range s.nc {
		p := &s.pos[w*s.nc+c]
		if p.Szi == 0 {
			continue
		}
		px := perpdexSig(s.path[c][m] * (1 - perpdexSign(p.Szi)*0.0003))
		s.exec(ms, c, px, w, 0, -p.Szi, false, 0)
	}
	if wl.Cash > 1 {
		amt := math.Round((wl.Cash-(0.05+0.9*s.rLe.Float64()))*100) / 100
		wl.Cash -= amt
		s.ledgerRow(ms, w, "withdraw", amt, -1, s.hash())
	}
	wl.Inactive = true
}

// cluster opens the copy-traders' positions (perpdexClusters), all in one millisecond.
func (s *perpdexSim) cluster(ms int64, m int) {
	for w := range s.w {
		wl := &s.w[w]
		if wl.Kind != pwCopy {
			continue
		}
		cl := perpdexClusters[wl.Cluster]
		c := wl.Fav
		px := perpdexSig(s.path[c][m] * (1 + cl.Eps*(2*s.rTr.Float64()-1)))
		sz := perpdexRound(wl.Cash*wl.ClusterLev*(0.3+0.2*s.rTr.Float64())/px, perpdexCoins[c].SzDec)
		if sz <= 0 || s.pos[w*s.nc+c].Szi != 0 {
			continue
		}
		s.pos[w*s.nc+c].Lev = wl.ClusterLev
		s.exec(ms, c, px, w, 0, cl.Dir*sz, false, 0)
	}
}

// tick is an hourly (or, in the final hour, 5-minute) snapshot time.
func (s *perpdexSim) tick(ms int64, m int, hourly bool) {
	t := time.UnixMilli(ms).UTC()
	marks := make([]float64, s.nc)
	for c := range s.nc {
		marks[c] = perpdexSig(s.path[c][m])
	}
	if hourly {
		s.marginCheck(ms)
		r := s.rFu
		for c := range s.nc {
			x := 0.6*s.rate[c] + 0.4*0.0000125 + 0.000008*r.NormFloat64()
			s.rate[c] = perpdexRound(math.Max(-0.0004, math.Min(0.0004, x)), 8)
			s.marks = append(s.marks, []any{t, perpdexCoins[c].Name, marks[c]})
		}
		for w := range s.w {
			for c := range s.nc {
				p := &s.pos[w*s.nc+c]
				if p.Szi == 0 {
					continue
				}
				usdc := perpdexRound(-p.Szi*marks[c]*s.rate[c], 6)
				s.w[w].Cash += usdc
				s.w[w].Funding += usdc
				s.funding = append(s.funding, []any{t, s.w[w].Addr, perpdexCoins[c].Name, usdc, p.Szi, s.rate[c]})
			}
		}
	}
	if s.mode != perpdexMain {
		return
	}
	var nPos, nLong, nShort, nProfit int64
	var oiL, oiS float64
	for w := range s.w {
		wl := &s.w[w]
		var eq, maint float64
		for c := range s.nc {
			p := &s.pos[w*s.nc+c]
			if p.Szi == 0 {
				continue
			}
			if maint == 0 {
				eq, _, _, maint = s.equity(w, m)
			}
			upnl := perpdexRound(p.Szi*(marks[c]-p.Entry), 6)
			val := perpdexRound(math.Abs(p.Szi)*marks[c], 6)
			// Cross margin: the price of this coin at which the account's equity
			// would fall to its maintenance margin, the other positions held
			// still; 0.0 when there is none (a well-covered long, or a vault).
			liqPx := 0.0
			if wl.Kind >= pwCopy {
				liqPx = perpdexSig(math.Max(0, marks[c]-(eq-maint)/p.Szi))
			}
			s.posns = append(s.posns, []any{t, wl.Addr, perpdexCoins[c].Name, p.Szi, p.Entry, marks[c], p.Lev, liqPx, upnl, val})
			nPos++
			if p.Szi > 0 {
				nLong++
				oiL += val
			} else {
				nShort++
				oiS += val
			}
			if upnl > 0 {
				nProfit++
			}
		}
	}
	if !hourly {
		return
	}
	var totEq float64
	var nW int64
	for w := range s.w {
		wl := &s.w[w]
		if !wl.Joined {
			continue
		}
		eq, ntl, margin, _ := s.equity(w, m)
		eq = perpdexRound(eq, 6)
		wl.Equity = eq
		// An Unlabelled wallet trades but the snapshot feed never saw it: mdq can
		// label it in neither cohort table. It still counts in the venue's totals.
		if !wl.Unlabelled {
			s.accts = append(s.accts, []any{t, wl.Addr, eq, perpdexRound(ntl, 6), perpdexRound(margin, 6)})
		}
		if eq > 0 {
			totEq += eq
			nW++
		}
	}
	s.stats = append(s.stats, []any{t, perpdexRound(totEq, 2), nW, nPos, nLong, nShort,
		perpdexRound(oiL+oiS, 2), perpdexRound(oiL, 2), perpdexRound(oiS, 2), nProfit})
}

// flushDay writes the day's partitions and resets the buffers.
func (s *perpdexSim) flushDay(d time.Time) error {
	date := Date(d)
	type part struct {
		t    *lake.Table
		rows [][]any
		skip bool
	}
	parts := []part{
		{lake.PerpdexFills, s.fills, false},
		{lake.PerpdexFunding, s.funding, false},
		{lake.PerpdexMarks, s.marks, false},
		{lake.PerpdexLedger, s.ledger, len(s.ledger) == 0},
	}
	if s.mode == perpdexMain {
		book, trades := s.tapes()
		parts = append(parts,
			part{lake.PerpdexPositions, s.posns, false},
			part{lake.PerpdexAccounts, s.accts, false},
			part{lake.PerpdexTrades, trades, false},
			part{lake.PerpdexBookEvents, book, false})
	}
	for _, p := range parts {
		if p.skip {
			continue
		}
		if err := s.write(p.t, []string{date}, p.rows); err != nil {
			return err
		}
	}
	s.fills, s.funding, s.marks, s.ledger = s.fills[:0], s.funding[:0], s.marks[:0], s.ledger[:0]
	s.posns, s.accts, s.trades = s.posns[:0], s.accts[:0], s.trades[:0]
	return nil
}

func (s *perpdexSim) write(t *lake.Table, parts []string, rows [][]any) error {
	_, err := s.g.W.Write(s.ctx, t, parts, func(app lake.AppendFunc) error {
		for _, r := range rows {
			if err := app(r...); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// writeFinal writes the unpartitioned tables: venue stats and HYPE balances. (Cohort
// labels are not generated: mdq derives them from accounts, ledger and fills.)
func (s *perpdexSim) writeFinal() error {
	if err := s.write(lake.PerpdexVenueStats, nil, s.stats); err != nil {
		return err
	}
	end := s.g.End
	r := s.g.RNG("perpdex/hype")
	var hype [][]any
	asOf := func() time.Time { return end.Add(-time.Duration(r.IntN(3600)) * time.Second).Truncate(time.Second) }
	amount := func(k int) float64 {
		a := 300 * math.Exp(1.5*r.NormFloat64())
		if k == pwWhale {
			a *= 100
		}
		return perpdexRound(a, 4)
	}
	for w := range s.w {
		wl := &s.w[w]
		if wl.Kind < pwCopy {
			continue
		}
		u := r.Float64()
		if u < 0.35 {
			hype = append(hype, []any{wl.Addr, "spot", amount(wl.Kind), asOf()})
		}
		if u > 0.25 && u < 0.5 {
			hype = append(hype, []any{wl.Addr, "staked", amount(wl.Kind), asOf()})
		}
	}
	// A few holders that never traded perps.
	for i := range 6 {
		a := fmt.Sprintf("0x%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32())
		if i%3 != 2 {
			hype = append(hype, []any{a, "spot", amount(pwWhale), asOf()})
		}
		if i%3 != 0 {
			hype = append(hype, []any{a, "staked", amount(pwWhale), asOf()})
		}
	}
	return s.write(lake.PerpdexHypeBalances, nil, hype)
}

// openingDeposits writes, at 00:00 of the lake's first date, one deposit per wallet
// funded before the simulation (every wallet but those joining later) of the capital
// it put in. Its starting equity is that capital plus the PnL it made before
// (PriorPnL), so account value minus net flows in (mdq's all-time PnL) carries the
// earlier history. The hashes come from their own random stream, leaving every other
// row unchanged.
func (s *perpdexSim) openingDeposits(first time.Time) {
	r := s.g.RNG("perpdex/opening")
	for w := range s.w {
		wl := &s.w[w]
		if !wl.Joined {
			continue
		}
		h := fmt.Sprintf("0x%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
		s.ledgerRow(first.UnixMilli(), w, "deposit", wl.Capital, -1, h)
	}
}
