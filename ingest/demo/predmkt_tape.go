package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// The per-day tape simulation. Each market carries its two order books across days;
// a day of one market is simulated from its own random stream
// (predmkt/tape/<market>/<day>), so markets do not depend on each other. Books hold
// sizes in hundredths of a share per price in cents, so the tape replays exactly.

const (
	pmEvBook uint8 = iota + 1
	pmEvPC
	pmEvTrade
	pmEvTick
	pmEvStatus
)

var pmEvNames = [...]string{"", "book", "price_change", "trade", "tick_size_change", "status"}

const (
	pmSideNone uint8 = iota
	pmSideBuy
	pmSideSell
)

var pmSideNames = [...]string{"", "BUY", "SELL"}

type pmBook struct {
	bid, ask             [100]int64 // size in hundredths of a share at price i cents (1..99)
	seq, lastTs, lastLts int64
	smallTick            bool
}

// best returns the best bid (0 when none) and best ask (100 when none) in cents.
func (b *pmBook) best() (bb, ba int) {
	bb, ba = 0, 100
	for i := 99; i >= 1; i-- {
		if b.bid[i] > 0 {
			bb = i
			break
		}
	}
	for i := 1; i <= 99; i++ {
		if b.ask[i] > 0 {
			ba = i
			break
		}
	}
	return bb, ba
}

func (b *pmBook) levels(bids bool) int {
	n := 0
	for i := 1; i <= 99; i++ {
		if (bids && b.bid[i] > 0) || (!bids && b.ask[i] > 0) {
			n++
		}
	}
	return n
}

type pmState struct {
	books   [2]pmBook
	noise   float64
	lastT   int64
	pos     [2]map[int32]int64 // shares (hundredths) per wallet; market makers may go short
	holders [2][]int32         // ordinary and whale wallets that have held the token (may exit as makers)
}

type pmEv struct {
	tok                int32 // market index * 2 + outcome index
	typ, side          uint8
	ts, lts, seq       int64
	price, size        float64
	bb, ba             float64
	bids, asks, status string
}

type pmFill struct {
	tok          int32
	ts, lts, seq int64
	price, size  float64
	taker, maker int32
	side         uint8 // taker side
}

type pmDay struct {
	evs   []pmEv
	fills []pmFill
	slots []pmSlot
	json  []byte
}

const (
	pmSlotStatus uint8 = iota
	pmSlotSnap
	pmSlotGap
	pmSlotPull
	pmSlotPC
	pmSlotOrder
	pmSlotCamp
)

type pmSlot struct {
	t    int64
	kind uint8
	tok  uint8
	ci   int32
}

func pmPoisson(rng *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	if lambda > 30 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func (d *pmDay) emit(m *pmMarket, k int, bk *pmBook, typ uint8, t int64, rng *rand.Rand) *pmEv {
	ts := max(t, bk.lastTs)
	lts := max(bk.lastLts, ts+1+rng.Int64N(40))
	bk.seq++
	bk.lastTs, bk.lastLts = ts, lts
	d.evs = append(d.evs, pmEv{tok: int32(m.idx*2 + k), typ: typ, ts: ts, lts: lts, seq: bk.seq})
	return &d.evs[len(d.evs)-1]
}

func pmSetBest(ev *pmEv, bk *pmBook) {
	bb, ba := bk.best()
	if bb > 0 {
		ev.bb = float64(bb) / 100
	}
	if ba < 100 {
		ev.ba = float64(ba) / 100
	}
}

func pmTargets(f float64) (tb, ta int) {
	c := f * 100
	tb = min(max(int(math.Floor(c-0.6)), 1), 98)
	ta = min(max(int(math.Ceil(c+0.6)), tb+1), 99)
	return tb, ta
}

func pmLevelSize(m *pmMarket, rng *rand.Rand) int64 {
	v := 250 * m.depth * math.Exp(0.9*rng.NormFloat64())
	return max(int64(math.Round(v*100)), 500)
}

// fair returns the YES probability at t, advancing the market's noise.
func (w *pmWorld) fair(m *pmMarket, st *pmState, t int64, rng *rand.Rand) float64 {
	if m.famAsset != "" {
		if t < m.famStart {
			return 0.5
		}
		T := m.end.UnixMilli() - m.famStart
		el := min(t-m.famStart, T)
		i := min(int(el/pmMinMs), len(m.famR)-1)
		tau := float64(T-el) / float64(pmMinMs)
		z := float64(m.famR[i]) / (m.famSigma * math.Sqrt(tau+1))
		return min(max(0.5*(1+math.Erf(z/math.Sqrt2)), 0.02), 0.98)
	}
	if dt := float64(t-st.lastT) / float64(pmDayMs); dt > 0 {
		const theta, sigma = 1.0, 0.25
		decay := math.Exp(-theta * dt)
		st.noise = st.noise*decay + sigma*math.Sqrt((1-decay*decay)/(2*theta))*rng.NormFloat64()
		st.lastT = t
	}
	u := min(max(float64(t-m.lifeStart)/float64(m.lifeEnd-m.lifeStart), 0), 1)
	x := m.x0 + (m.xF-m.x0)*u*u*u + st.noise
	if m.status == pmOpen && t > w.endMs-24*pmHourMs {
		ramp := float64(t-(w.endMs-24*pmHourMs)) / float64(24*pmHourMs)
		if m.winner == 0 {
			x += ramp
		} else {
			x -= ramp
		}
	}
	return min(max(pmSigmoid(x), 0.01), 0.99)
}

func (w *pmWorld) initBook(m *pmMarket, bk *pmBook, f float64, rng *rand.Rand) {
	tb, ta := pmTargets(f)
	for side := 0; side < 2; side++ {
		n := 5 + rng.IntN(9)
		q := tb
		if side == 1 {
			q = ta
		}
		for placed := 0; placed < n && q >= 1 && q <= 99; {
			if placed == 0 || rng.Float64() > 0.15 {
				if side == 0 {
					bk.bid[q] = pmLevelSize(m, rng)
				} else {
					bk.ask[q] = pmLevelSize(m, rng)
				}
				placed++
			}
			if side == 0 {
				q--
			} else {
				q++
			}
		}
	}
}

func (d *pmDay) levelsJSON(bk *pmBook, bids bool, dup int) string {
	b := d.json[:0]
	b = append(b, '[')
	n := 0
	write := func(q int, sz int64) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"price":"`...)
		b = strconv.AppendFloat(b, float64(q)/100, 'f', -1, 64)
		b = append(b, `","size":"`...)
		b = strconv.AppendFloat(b, float64(sz)/100, 'f', -1, 64)
		b = append(b, `"}`...)
		n++
	}
	var lv []int
	if bids {
		for q := 99; q >= 1; q-- {
			if bk.bid[q] > 0 {
				lv = append(lv, q)
			}
		}
	} else {
		for q := 1; q <= 99; q++ {
			if bk.ask[q] > 0 {
				lv = append(lv, q)
			}
		}
	}
	for i, q := range lv {
		sz := bk.ask[q]
		if bids {
			sz = bk.bid[q]
		}
		write(q, sz)
		if dup >= 0 && i == dup%len(lv) {
			write(q, sz) // the venue's duplicated (side, level) defect
		}
	}
	b = append(b, ']')
	d.json = b
	return string(b)
}

func (w *pmWorld) snap(m *pmMarket, k int, bk *pmBook, t int64, rng *rand.Rand, d *pmDay) {
	dupB, dupA := -1, -1
	if rng.Float64() < 0.03 {
		if rng.IntN(2) == 0 {
			dupB = rng.IntN(20)
		} else {
			dupA = rng.IntN(20)
		}
	}
	bids := d.levelsJSON(bk, true, dupB)
	asks := d.levelsJSON(bk, false, dupA)
	ev := d.emit(m, k, bk, pmEvBook, t, rng)
	ev.bids, ev.asks = bids, asks
}

func (w *pmWorld) status(m *pmMarket, k int, bk *pmBook, t int64, s string, rng *rand.Rand, d *pmDay) {
	ev := d.emit(m, k, bk, pmEvStatus, t, rng)
	ev.status = s
}

func (w *pmWorld) tickCheck(m *pmMarket, k int, bk *pmBook, t int64, rng *rand.Rand, d *pmDay) {
	bb, ba := bk.best()
	extreme := bb >= 96 || ba <= 4
	switch {
	case extreme && !bk.smallTick:
		bk.smallTick = true
		d.emit(m, k, bk, pmEvTick, t, rng).price = 0.001
	case !extreme && bk.smallTick && bb < 94 && ba > 6:
		bk.smallTick = false
		d.emit(m, k, bk, pmEvTick, t, rng).price = 0.01
	}
}

func (w *pmWorld) pcEvent(m *pmMarket, k int, bk *pmBook, t int64, bid bool, q int, sz int64, rng *rand.Rand, d *pmDay) {
	side := pmSideSell
	if bid {
		side = pmSideBuy
		bk.bid[q] = sz
	} else {
		bk.ask[q] = sz
	}
	ev := d.emit(m, k, bk, pmEvPC, t, rng)
	ev.side, ev.price, ev.size = side, float64(q)/100, float64(sz)/100
	pmSetBest(ev, bk)
}

// priceChange moves one level of the book toward quotes around the fair price, or
// reshapes the depth.
func (w *pmWorld) priceChange(m *pmMarket, k int, bk *pmBook, f float64, t int64, rng *rand.Rand, d *pmDay) {
	bb, ba := bk.best()
	tb, ta := pmTargets(f)
	switch {
	case bb > tb && rng.Float64() < 0.85:
		w.pcEvent(m, k, bk, t, true, bb, 0, rng, d)
	case ba < ta && rng.Float64() < 0.85:
		w.pcEvent(m, k, bk, t, false, ba, 0, rng, d)
	case bb < tb && tb < ba:
		w.pcEvent(m, k, bk, t, true, tb, pmLevelSize(m, rng), rng, d)
	case ba > ta && ta > bb:
		w.pcEvent(m, k, bk, t, false, ta, pmLevelSize(m, rng), rng, d)
	default:
		bid := rng.IntN(2) == 0
		if bk.levels(bid) >= 14 && rng.Float64() < 0.5 { // trim the far end
			if bid {
				for q := 1; q <= 99; q++ {
					if bk.bid[q] > 0 {
						w.pcEvent(m, k, bk, t, true, q, 0, rng, d)
						break
					}
				}
			} else {
				for q := 99; q >= 1; q-- {
					if bk.ask[q] > 0 {
						w.pcEvent(m, k, bk, t, false, q, 0, rng, d)
						break
					}
				}
			}
			break
		}
		i := rng.IntN(8)
		var q int
		var cur int64
		if bid {
			ref := bb
			if ref == 0 {
				ref = min(tb, ba-1)
			}
			q = ref - i
			if q < 1 || q >= ba {
				return
			}
			cur = bk.bid[q]
		} else {
			ref := ba
			if ref == 100 {
				ref = max(ta, bb+1)
			}
			q = ref + i
			if q > 99 || q <= bb {
				return
			}
			cur = bk.ask[q]
		}
		var nsz int64
		switch {
		case cur == 0:
			nsz = pmLevelSize(m, rng)
		case rng.Float64() < 0.2:
			nsz = 0
		default:
			nsz = max(int64(float64(cur)*pmUnif(rng, 0.5, 1.7)), 100)
		}
		if nsz == cur {
			return
		}
		w.pcEvent(m, k, bk, t, bid, q, nsz, rng, d)
	}
	w.tickCheck(m, k, bk, t, rng, d)
}

func (w *pmWorld) addPos(st *pmState, k int, wal int32, delta int64) {
	mp := st.pos[k]
	old := mp[wal]
	nw := old + delta
	if nw == 0 {
		delete(mp, wal)
	} else {
		mp[wal] = nw
	}
	if old <= 0 && nw > 0 {
		if c := w.wallets[wal].class; c == pmOrdinary || c == pmWhale {
			st.holders[k] = append(st.holders[k], wal)
		}
	}
}

func (w *pmWorld) pickMaker(m *pmMarket, st *pmState, k int, makerSells bool, fill int64, taker int32, rng *rand.Rand) int32 {
	if makerSells {
		if h := st.holders[k]; len(h) > 0 && rng.Float64() < 0.4 {
			c := h[rng.IntN(len(h))]
			if c != taker && st.pos[k][c] >= fill {
				return c
			}
		}
	} else if len(m.pool) > 0 && rng.Float64() < 0.3 {
		if c := m.pool[rng.IntN(len(m.pool))]; c != taker {
			return c
		}
	}
	mms := w.byClass[pmMM]
	return mms[rng.IntN(len(mms))]
}

// execute sweeps the touch for a taker order of want hundredths of a share, at most
// five levels and no worse than limit cents; each level filled is one trade event.
func (w *pmWorld) execute(m *pmMarket, st *pmState, k int, sell bool, want int64, limit int, taker int32, t int64, rng *rand.Rand, d *pmDay) {
	bk := &st.books[k]
	var filled int64
	for lv := 0; want-filled > 0 && lv < 5; lv++ {
		bb, ba := bk.best()
		var q int
		var avail int64
		if sell {
			if bb <= 0 || bb < limit {
				break
			}
			q, avail = bb, bk.bid[bb]
		} else {
			if ba >= 100 || ba > limit {
				break
			}
			q, avail = ba, bk.ask[ba]
		}
		fill := min(want-filled, avail)
		side := pmSideBuy
		if sell {
			bk.bid[q] -= fill
			side = pmSideSell
		} else {
			bk.ask[q] -= fill
		}
		ev := d.emit(m, k, bk, pmEvTrade, t, rng)
		ev.side, ev.price, ev.size = side, float64(q)/100, float64(fill)/100
		pmSetBest(ev, bk)
		f := pmFill{tok: ev.tok, ts: ev.ts, lts: ev.lts, seq: ev.seq, price: ev.price, size: ev.size, taker: taker, side: side}
		f.maker = w.pickMaker(m, st, k, !sell, fill, taker, rng)
		d.fills = append(d.fills, f)
		if sell {
			w.addPos(st, k, taker, -fill)
			w.addPos(st, k, f.maker, fill)
		} else {
			w.addPos(st, k, taker, fill)
			w.addPos(st, k, f.maker, -fill)
		}
		filled += fill
	}
	if filled > 0 {
		w.tickCheck(m, k, bk, t, rng, d)
	}
}

func (w *pmWorld) buyShares(usd float64, ba int) int64 {
	return max(int64(usd/(float64(ba)/100)*100), 100)
}

// randomOrder is one order of the background flow: bots, whales and the market's
// ordinary traders, buying either outcome or selling (part of) what they hold.
func (w *pmWorld) randomOrder(m *pmMarket, st *pmState, t int64, rng *rand.Rand, d *pmDay) {
	var wal int32
	r := rng.Float64()
	switch {
	case r < 0.2:
		b := w.byClass[pmBot]
		wal = b[rng.IntN(len(b))]
	case r < 0.38:
		b := w.byClass[pmWhale]
		wal = b[rng.IntN(len(b))]
	default:
		wal = m.pool[rng.IntN(len(m.pool))]
	}
	cls := w.wallets[wal].class
	exitP := 0.3
	switch cls {
	case pmBot:
		exitP = 0.5
	case pmWhale:
		exitP = 0.35
	}
	h0, h1 := st.pos[0][wal], st.pos[1][wal]
	if (h0 > 0 || h1 > 0) && rng.Float64() < exitP {
		k := 0
		if h1 > 0 && (h0 <= 0 || rng.IntN(2) == 1) {
			k = 1
		}
		hold := st.pos[k][wal]
		want := hold
		if rng.Float64() < 0.5 {
			want = int64(float64(hold) * pmUnif(rng, 0.3, 1))
		}
		bb, _ := st.books[k].best()
		if bb <= 0 {
			return
		}
		limit := max(1, bb-3)
		if cls == pmBot {
			want = min(want, max(int64(15/(float64(bb)/100)*100), 100))
			limit = bb
		}
		w.execute(m, st, k, true, min(want, hold), limit, wal, t, rng, d)
		return
	}
	k := rng.IntN(2)
	var usd float64
	switch cls {
	case pmBot:
		usd = pmUnif(rng, 1, 15)
	case pmWhale:
		usd = pmUnif(rng, 500, 2500)
		if rng.Float64() < 0.55 {
			k = m.winner
		} else {
			k = 1 - m.winner
		}
	default:
		usd = min(pmLogNorm(rng, 25, 1.0), 3000)
	}
	_, ba := st.books[k].best()
	if ba >= 100 {
		return
	}
	limit := min(99, ba+3)
	switch cls {
	case pmWhale:
		limit = min(99, ba+6)
	case pmBot:
		limit = ba
	}
	w.execute(m, st, k, false, w.buyShares(usd, ba), limit, wal, t, rng, d)
}

func (w *pmWorld) campaignOrder(m *pmMarket, st *pmState, o pmOrder, t int64, rng *rand.Rand, d *pmDay) {
	k := int(o.tok)
	bb, ba := st.books[k].best()
	if o.sell {
		hold := st.pos[k][o.wallet]
		want := int64(float64(hold) * o.amount)
		if want < 100 || bb <= 0 {
			return
		}
		w.execute(m, st, k, true, want, max(o.limit, bb-3), o.wallet, t, rng, d)
		return
	}
	if ba >= 100 || ba > o.limit {
		return
	}
	w.execute(m, st, k, false, w.buyShares(o.amount, ba), min(o.limit, ba+3), o.wallet, t, rng, d)
}

// genMarketDay simulates market m inside [lo, hi) (epoch ms) of day di.
func (w *pmWorld) genMarketDay(m *pmMarket, di int, lo, hi int64, d *pmDay) {
	a, b := max(lo, m.tapeStart), min(hi, m.tapeEnd)
	if a >= b {
		return
	}
	rng := w.g.RNG(fmt.Sprintf("predmkt/tape/%d/%d", m.idx, di))
	if m.st == nil {
		m.st = &pmState{lastT: m.tapeStart}
		m.st.pos[0] = map[int32]int64{}
		m.st.pos[1] = map[int32]int64{}
	}
	st := m.st
	slots := d.slots[:0]
	if m.tapeStart >= lo && m.tapeStart < hi {
		for k := uint8(0); k < 2; k++ {
			slots = append(slots, pmSlot{t: m.tapeStart, kind: pmSlotStatus, tok: k}, pmSlot{t: m.tapeStart, kind: pmSlotSnap, tok: k})
		}
	}
	const every = 4 * pmHourMs
	for B := (a + every - 1) / every * every; B < b; B += every {
		if B <= m.tapeStart {
			continue
		}
		for k := uint8(0); k < 2; k++ {
			if t := B + rng.Int64N(1500); t < b {
				slots = append(slots, pmSlot{t: t, kind: pmSlotSnap, tok: k})
			}
		}
	}
	slotEnd := b - 5000
	if slotEnd > a+1 {
		dur := float64(slotEnd - a)
		when := func() int64 { return a + 1 + rng.Int64N(slotEnd-a-1) }
		for i := pmPoisson(rng, w.pcPerWMs*m.weight*dur); i > 0; i-- {
			slots = append(slots, pmSlot{t: when(), kind: pmSlotPC, tok: uint8(rng.IntN(2))})
		}
		for i := pmPoisson(rng, w.ordersPerWMs*m.weight*dur); i > 0; i-- {
			slots = append(slots, pmSlot{t: when(), kind: pmSlotOrder})
		}
		frac := dur / float64(pmDayMs)
		if rng.Float64() < 0.06*frac {
			slots = append(slots, pmSlot{t: when(), kind: pmSlotGap})
		}
		for k := uint8(0); k < 2; k++ {
			if rng.Float64() < 0.04*frac {
				slots = append(slots, pmSlot{t: when(), kind: pmSlotPull, tok: k})
			}
		}
	}
	for m.campaignAt < len(m.campaign) && m.campaign[m.campaignAt].t < hi {
		if o := m.campaign[m.campaignAt]; o.t >= a && o.t < slotEnd {
			slots = append(slots, pmSlot{t: o.t, kind: pmSlotCamp, ci: int32(m.campaignAt)})
		}
		m.campaignAt++
	}
	sort.SliceStable(slots, func(i, j int) bool {
		if slots[i].t != slots[j].t {
			return slots[i].t < slots[j].t
		}
		return slots[i].kind < slots[j].kind
	})
	for _, s := range slots {
		p := w.fair(m, st, s.t, rng)
		k := int(s.tok)
		f := p
		if k == 1 {
			f = 1 - p
		}
		bk := &st.books[k]
		switch s.kind {
		case pmSlotStatus:
			w.status(m, k, bk, s.t, "connected", rng, d)
		case pmSlotSnap:
			if bk.seq <= 1 && bk.levels(true) == 0 && bk.levels(false) == 0 {
				w.initBook(m, bk, f, rng)
			}
			w.snap(m, k, bk, s.t, rng, d)
		case pmSlotGap: // the recorder lost the stream for a few seconds, then resynced
			back := s.t + 2000 + rng.Int64N(2000)
			for k := 0; k < 2; k++ {
				bk := &st.books[k]
				w.status(m, k, bk, s.t, "gap_start", rng, d)
				w.status(m, k, bk, back, "live_resume", rng, d)
				w.snap(m, k, bk, back+50, rng, d)
			}
		case pmSlotPull: // the makers pull one whole side for a while
			bid := rng.IntN(2) == 0
			for {
				bb, ba := bk.best()
				if bid && bb > 0 {
					w.pcEvent(m, k, bk, s.t, true, bb, 0, rng, d)
				} else if !bid && ba < 100 {
					w.pcEvent(m, k, bk, s.t, false, ba, 0, rng, d)
				} else {
					break
				}
			}
			w.snap(m, k, bk, s.t+200, rng, d)
		case pmSlotPC:
			w.priceChange(m, k, bk, f, s.t, rng, d)
		case pmSlotOrder:
			w.randomOrder(m, st, s.t, rng, d)
		case pmSlotCamp:
			w.campaignOrder(m, st, m.campaign[s.ci], s.t, rng, d)
		}
	}
	d.slots = slots
	if b >= m.tapeEnd { // the tape is over: free the market's state
		m.st = nil
		m.campaign = nil
	}
}
