package demo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"mdq/lake"
)

// Day-by-day transfer generation for one chain. The chain's running balances start from
// the world's opening balances; a wallet only ever sends what it holds, so balances never
// go negative.

var ocPow10Big [80]*big.Int

func init() {
	p := big.NewInt(1)
	for i := range ocPow10Big {
		ocPow10Big[i] = new(big.Int).Set(p)
		p.Mul(p, big.NewInt(10))
	}
}

// ocAmount is raw / 10^dec as the nearest float64.
func ocAmount(raw *big.Int, dec int) float64 {
	if raw.IsUint64() {
		if u := raw.Uint64(); u < 1<<53 {
			return float64(u) / math.Pow10(dec) // both exact, one correctly rounded division
		}
	}
	f, _ := new(big.Rat).SetFrac(raw, ocPow10Big[dec]).Float64()
	return f
}

// ocRandBelow returns a uniform integer in [0, 10^digits).
func ocRandBelow(rng *rand.Rand, digits int) *big.Int {
	r := new(big.Int)
	for digits > 0 {
		d := min(digits, 18)
		r.Mul(r, ocPow10Big[d])
		r.Add(r, new(big.Int).SetUint64(rng.Uint64N(ocPow10Big[d].Uint64())))
		digits -= d
	}
	return r
}

// ocTokensToRaw turns a whole-token amount into a raw integer: either a round figure
// (1 to 3 significant digits) or full precision with random low digits, as wallets and
// contracts produce.
func ocTokensToRaw(rng *rand.Rand, tokens float64, dec int, round bool) *big.Int {
	if !(tokens > 0) || math.IsInf(tokens, 0) {
		return new(big.Int)
	}
	e := int(math.Floor(math.Log10(tokens)))
	if round {
		s := 1 + rng.IntN(3)
		p := e - s + 1
		mant := int64(math.Round(tokens / math.Pow10(p)))
		if mant < 1 {
			mant = 1
		}
		if p+dec >= 0 {
			r := big.NewInt(mant)
			return r.Mul(r, ocPow10Big[p+dec])
		}
	}
	D := e + 1 + dec
	if D > 70 { // far beyond any real supply; keep the arithmetic in range
		D = 70
		tokens = 9.9e69 / math.Pow10(dec)
	}
	if D <= 15 {
		v := math.Round(tokens * math.Pow10(dec))
		if v < 1 {
			v = 1
		}
		return new(big.Int).SetUint64(uint64(v))
	}
	sh := D - 15
	mant := uint64(tokens * math.Pow10(dec-sh))
	r := new(big.Int).SetUint64(mant)
	r.Mul(r, ocPow10Big[sh])
	return r.Add(r, ocRandBelow(rng, sh))
}

// ocMedianUSD is the typical transfer size between two activity levels.
var ocMedianUSD = [5]float64{0, 150, 2_500, 120_000, 400_000}

func ocSizeUSD(rng *rand.Rand, a, b ocRole) float64 {
	lo, hi := a.level(), b.level()
	if lo > hi {
		lo, hi = hi, lo
	}
	med := ocMedianUSD[lo] * math.Exp(0.3*float64(hi-lo))
	return math.Min(ocLogNorm(rng, med, 1.3), 200e6)
}

// ocDay is the state of one chain while it generates.
type ocState struct {
	w     *ocWorld
	c     *ocChain
	rng   *rand.Rand
	bal   map[ocKey]*big.Int
	held  [][]int32
	refT  int64
	end   int64
	last  int
	total int64

	// per day
	active, nonHub, hubs          []int32
	activeCum, nonHubCum, hubsCum []float64
	activeSet                     []bool

	// per row
	curBlock int64
	logIdx   int32
}

func newOcState(g *Generator, w *ocWorld, c *ocChain) *ocState {
	s := &ocState{w: w, c: c, rng: g.RNG("onchain/transfers/" + c.def.name), refT: ocRefTime.Unix(),
		end: g.End.Unix(), last: w.nDays - 1, bal: make(map[ocKey]*big.Int, len(c.init)*2),
		held: make([][]int32, len(c.held)), curBlock: -1}
	for k, v := range c.init {
		s.bal[k] = new(big.Int).Set(v)
	}
	for i, h := range c.held {
		s.held[i] = slices.Clone(h)
	}
	return s
}

func (s *ocState) balance(w, t int32) *big.Int {
	k := ocKey{w, t}
	b := s.bal[k]
	if b == nil {
		b = new(big.Int)
		s.bal[k] = b
	}
	return b
}

func (s *ocState) prepareDay(d int) {
	s.active, s.nonHub, s.hubs = s.active[:0], s.nonHub[:0], s.hubs[:0]
	s.activeCum, s.nonHubCum, s.hubsCum = s.activeCum[:0], s.nonHubCum[:0], s.hubsCum[:0]
	if s.activeSet == nil {
		s.activeSet = make([]bool, len(s.c.wallets))
	}
	var ta, tn, th float64
	for i, w := range s.c.wallets {
		on := w.role.hub() || w.activeOn(d, s.last)
		s.activeSet[i] = on
		if !on {
			continue
		}
		ta += w.weight
		s.active = append(s.active, int32(i))
		s.activeCum = append(s.activeCum, ta)
		if w.role.hub() {
			th += w.weight
			s.hubs = append(s.hubs, int32(i))
			s.hubsCum = append(s.hubsCum, th)
		} else {
			tn += w.weight
			s.nonHub = append(s.nonHub, int32(i))
			s.nonHubCum = append(s.nonHubCum, tn)
		}
	}
}

// counterparty picks whom wallet a deals with: mostly its hubs and peers.
func (s *ocState) counterparty(a int32) int32 {
	w := s.c.wallets[a]
	r := s.rng.Float64()
	if w.role.hub() {
		if r < 0.15 || len(s.nonHub) == 0 {
			return s.hubs[ocPickCum(s.rng, s.hubsCum)]
		}
		return s.nonHub[ocPickCum(s.rng, s.nonHubCum)]
	}
	switch {
	case r < 0.55 && len(w.hubs) > 0:
		return w.hubs[s.rng.IntN(len(w.hubs))]
	case r < 0.8 && len(w.peers) > 0:
		p := w.peers[s.rng.IntN(len(w.peers))]
		if s.activeSet[p] {
			return p
		}
		if len(w.hubs) > 0 {
			return w.hubs[s.rng.IntN(len(w.hubs))]
		}
	}
	return s.active[ocPickCum(s.rng, s.activeCum)]
}

// pickToken picks a token wallet a sends: any token for a hub, else one it holds.
func (s *ocState) pickToken(a int32) int32 {
	if s.c.wallets[a].role.hub() {
		return int32(ocPickCum(s.rng, s.c.tokCum))
	}
	h := s.held[a]
	tot := 0.0
	for _, t := range h {
		tot += s.c.tokens[t].weight
	}
	x := s.rng.Float64() * tot
	for _, t := range h {
		x -= s.c.tokens[t].weight
		if x <= 0 {
			return t
		}
	}
	return h[len(h)-1]
}

func (s *ocState) receive(w, t int32) {
	if !s.c.wallets[w].role.hub() && !ocHas(s.held[w], t) {
		s.held[w] = append(s.held[w], t)
	}
}

// fit caps raw to what wallet a holds; zero when it holds nothing.
func (s *ocState) fit(a, t int32, raw *big.Int) *big.Int {
	b := s.balance(a, t)
	if b.Cmp(raw) >= 0 {
		return raw
	}
	if b.Sign() == 0 {
		return new(big.Int)
	}
	if s.rng.IntN(10) < 3 {
		return new(big.Int).Set(b) // send the whole balance
	}
	r := new(big.Int).Mul(b, big.NewInt(int64(100+s.rng.IntN(800))))
	return r.Quo(r, big.NewInt(1000))
}

type ocRow struct {
	from, to, tok int32
	raw           *big.Int
}

// emit writes the rows of one transaction at unix second t, applying them to balances.
func (s *ocState) emit(app lake.AppendFunc, t int64, rows []ocRow) error {
	bs := s.c.def.blockSec
	blk := s.c.def.refBlock + ocFloorDiv(t-s.refT, bs)
	if blk != s.curBlock {
		s.curBlock, s.logIdx = blk, 0
	}
	bt := time.Unix(s.refT+(blk-s.c.def.refBlock)*bs, 0).UTC()
	h := s.w.hour(bt.Unix())
	tx := ocHex(s.rng, 32)
	for _, r := range rows {
		tok := s.c.tokens[r.tok]
		s.balance(r.from, r.tok).Sub(s.balance(r.from, r.tok), r.raw)
		s.balance(r.to, r.tok).Add(s.balance(r.to, r.tok), r.raw)
		s.receive(r.to, r.tok)
		amt := ocAmount(r.raw, tok.decimals)
		var usd any
		if tok.priced() {
			usd = amt * tok.px[h]
		}
		if err := app(blk, bt, tx, s.logIdx, tok.addr, s.c.wallets[r.from].addr, s.c.wallets[r.to].addr,
			r.raw.String(), amt, usd); err != nil {
			return err
		}
		s.logIdx++
		s.total++
	}
	return nil
}

func ocFloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// ocSpan is one calendar day's part of the history, in unix seconds [from, to).
type ocSpan struct{ from, to int64 }

// genDay generates the transfers of one calendar day.
func (s *ocState) genDay(g *Generator, d int, sp ocSpan, app lake.AppendFunc) error {
	s.prepareDay(d)
	frac := float64(sp.to-sp.from) / 86400
	n := int(float64(g.Scale.TransfersPerDay) * 0.85 * frac * math.Exp(0.12*s.rng.NormFloat64()))
	nFlash := int(math.Ceil(math.Max(2, float64(g.Scale.TransfersPerDay)/400) * frac))
	type ev struct {
		t     int64
		flash bool
	}
	evs := make([]ev, 0, n+nFlash)
	span := float64(sp.to - sp.from)
	for len(evs) < n {
		t := sp.from + int64(s.rng.Float64()*span)
		hod := float64(t%86400) / 3600
		if s.rng.Float64() < 0.75+0.25*math.Sin(2*math.Pi*(hod-9)/24) {
			evs = append(evs, ev{t: t})
		}
	}
	for i := 0; i < nFlash && len(s.c.lenders) > 0; i++ {
		evs = append(evs, ev{t: sp.from + int64(s.rng.Float64()*span), flash: true})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	var rows []ocRow
	for _, e := range evs {
		var err error
		if e.flash {
			rows = s.flashLoan(rows[:0], s.w.hour(e.t))
		} else {
			rows = s.transfer(rows[:0], s.w.hour(e.t))
		}
		if len(rows) > 0 {
			err = s.emit(app, e.t, rows)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// transfer builds one ordinary transaction: a plain transfer, or a swap against a DEX.
func (s *ocState) transfer(rows []ocRow, h int) []ocRow {
	a := s.active[ocPickCum(s.rng, s.activeCum)]
	b := s.counterparty(a)
	if a == b {
		return rows
	}
	wa, wb := s.c.wallets[a], s.c.wallets[b]
	if (wa.role == ocDEX) != (wb.role == ocDEX) {
		if wa.role == ocDEX {
			a, b, wa, wb = b, a, wb, wa
		}
		return s.swap(rows, a, b, h)
	}
	if s.rng.IntN(2) == 0 {
		a, b, wa, wb = b, a, wb, wa
	}
	tok := s.pickToken(a)
	t := s.c.tokens[tok]
	usd := ocSizeUSD(s.rng, wa.role, wb.role)
	raw := ocTokensToRaw(s.rng, usd/t.price(h), t.decimals, t.stable && s.rng.IntN(2) == 0 || s.rng.IntN(6) == 0)
	if s.balance(a, tok).Cmp(raw) < 0 && s.balance(b, tok).Cmp(raw) >= 0 {
		a, b = b, a // the other side has it: it pays
	}
	raw = s.fit(a, tok, raw)
	if raw.Sign() == 0 {
		return rows
	}
	return append(rows, ocRow{a, b, tok, raw})
}

// swap: trader pays token A to the DEX, the DEX pays token B back at market value.
func (s *ocState) swap(rows []ocRow, trader, dex int32, h int) []ocRow {
	ta := s.pickToken(trader)
	tb := int32(ocPickCum(s.rng, s.c.tokCum))
	for i := 0; i < 4 && (tb == ta || !s.c.tokens[tb].priced()); i++ {
		tb = int32(ocPickCum(s.rng, s.c.tokCum))
	}
	if tb == ta {
		return rows
	}
	A, B := s.c.tokens[ta], s.c.tokens[tb]
	usd := ocSizeUSD(s.rng, s.c.wallets[trader].role, ocDEX)
	rawA := s.fit(trader, ta, ocTokensToRaw(s.rng, usd/A.price(h), A.decimals, s.rng.IntN(3) == 0))
	if rawA.Sign() == 0 {
		return rows
	}
	usd = ocAmount(rawA, A.decimals) * A.price(h) * (0.994 + 0.005*s.rng.Float64())
	rawB := ocTokensToRaw(s.rng, usd/B.price(h), B.decimals, false)
	if rawB.Sign() == 0 || s.balance(dex, tb).Cmp(rawB) < 0 {
		return rows
	}
	return append(rows, ocRow{trader, dex, ta, rawA}, ocRow{dex, trader, tb, rawB})
}

// flashLoan: a lending pool lends a large amount to a bot, which (often) arbitrages it
// through two DEXes and returns exactly the borrowed amount in the same transaction.
func (s *ocState) flashLoan(rows []ocRow, h int) []ocRow {
	lender := s.c.lenders[s.rng.IntN(len(s.c.lenders))]
	pool := s.c.byRole[ocMEV]
	if len(pool) == 0 {
		pool = s.c.byRole[ocTrader]
	}
	if len(pool) == 0 {
		return rows
	}
	bot := pool[s.rng.IntN(len(pool))]
	var tok int32 = -1
	for i := 0; i < 8; i++ { // a major priced token
		t := int32(ocPickCum(s.rng, s.c.tokCum))
		if s.c.tokens[t].priced() && s.c.tokens[t].weight >= 4 {
			tok = t
			break
		}
	}
	if tok < 0 {
		return rows
	}
	T := s.c.tokens[tok]
	raw := ocTokensToRaw(s.rng, ocLogNorm(s.rng, 3e6, 0.9)/T.price(h), T.decimals, s.rng.IntN(2) == 0)
	half := new(big.Int).Rsh(s.balance(lender, tok), 1)
	if raw.Cmp(half) > 0 {
		raw = half
	}
	if raw.Sign() == 0 {
		return rows
	}
	rows = append(rows, ocRow{lender, bot, tok, raw})
	dexes := s.c.byRole[ocDEX]
	if len(dexes) >= 2 && s.rng.IntN(5) < 3 {
		d1, d2 := dexes[s.rng.IntN(len(dexes))], dexes[s.rng.IntN(len(dexes))]
		mid := int32(ocPickCum(s.rng, s.c.tokCum))
		M := s.c.tokens[mid]
		if mid != tok && M.priced() && d1 != d2 {
			usd := ocAmount(raw, T.decimals) * T.price(h)
			rawM := ocTokensToRaw(s.rng, usd/M.price(h), M.decimals, false)
			profit := new(big.Int).Mul(raw, big.NewInt(int64(1+s.rng.IntN(40))))
			profit.Quo(profit, big.NewInt(10_000))
			back := new(big.Int).Add(raw, profit)
			if rawM.Sign() > 0 && s.balance(d1, mid).Cmp(rawM) >= 0 && s.balance(d2, tok).Cmp(back) >= 0 {
				rows = append(rows, ocRow{bot, d1, tok, raw}, ocRow{d1, bot, mid, rawM},
					ocRow{bot, d2, mid, rawM}, ocRow{d2, bot, tok, back})
			}
		}
	}
	return append(rows, ocRow{bot, lender, tok, raw})
}
