package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// The prediction-market world: wallets with behaviours, markets with a known fate,
// and the planned orders ("campaigns") of the wallets whose results must come out a
// certain way (sharps, hot and cold traders). Everything here is built once, up front,
// from g.RNG("predmkt/...") streams; the per-day tape simulation lives in
// predmkt_tape.go.

var pmCategories = []string{"Crypto", "Sports", "Politics", "Pop-Culture", "Tech"}

const (
	pmCatCrypto = 0
	pmDayMs     = int64(24 * time.Hour / time.Millisecond)
	pmHourMs    = int64(time.Hour / time.Millisecond)
	pmMinMs     = int64(time.Minute / time.Millisecond)
)

var (
	pmFamAssets = []string{"btc", "eth", "sol"}
	pmFamNames  = map[string]string{"btc": "Bitcoin", "eth": "Ethereum", "sol": "Solana"}
	pmFamTenors = []string{"15m", "1h", "1d"}
	pmTenorDur  = map[string]int64{"15m": 15 * pmMinMs, "1h": pmHourMs, "1d": pmDayMs}
)

type pmClass uint8

const (
	pmOrdinary pmClass = iota
	pmMM               // market maker: the maker of most fills; may hold short (minted) inventory
	pmBot              // many small taker orders
	pmWhale            // large orders
	pmSharp            // category specialist that buys the eventual winner
	pmHot              // generalist that mostly buys the eventual winner
	pmCold             // mostly buys the eventual loser
	pmNumClasses
)

type pmWallet struct {
	addr      string
	class     pmClass
	cat       int // category of a sharp
	pseudonym string
	display   string
}

type pmStatus uint8

const (
	pmOpen pmStatus = iota
	pmResolved
	pmInvalid
)

// pmOrder is one taker order planned ahead (a campaign step).
type pmOrder struct {
	t      int64 // epoch ms
	wallet int32
	tok    uint8
	sell   bool
	amount float64 // USD for a buy, fraction of the position for a sell
	limit  int     // cents: highest price a buy pays, lowest a sell accepts
}

type pmMarket struct {
	idx      int
	cond     string
	question string
	slug     string
	cat      int
	famAsset string
	famTenor string
	outcomes [2]string
	tokens   [2]string

	created, end time.Time
	closed       bool
	status       pmStatus
	resolvedTs   time.Time // zero when not resolved within history
	winner       int       // winning index; for open markets the direction prices drift to

	tapeStart, tapeEnd int64 // ms; events lie in [tapeStart, tapeEnd)
	weight             float64
	depth              float64

	// price model: YES logit x(t) = x0 + (xF-x0)*u^3 + OU noise (+ a late ramp on open markets)
	x0, xF     float64
	lifeStart  int64
	lifeEnd    int64
	famStart   int64
	famR       []float32 // family: Brownian path per minute from famStart
	famSigma   float64
	pool       []int32 // ordinary wallets that trade this market
	campaign   []pmOrder
	campaignAt int

	st *pmState
}

type pmWorld struct {
	g              *Generator
	startMs, endMs int64
	wallets        []pmWallet
	byClass        [pmNumClasses][]int32
	markets        []*pmMarket
	ordersPerWMs   float64 // random taker orders per (weight * ms)
	pcPerWMs       float64 // price_change events per (weight * ms)
	idSalt         uint64
}

func pmHex(rng *rand.Rand, nBytes int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2+2*nBytes)
	b[0], b[1] = '0', 'x'
	for i := 0; i < nBytes; i++ {
		v := rng.Uint32()
		b[2+2*i] = digits[(v>>4)&15]
		b[3+2*i] = digits[v&15]
	}
	return string(b)
}

func pmTokenID(rng *rand.Rand) string {
	n := 76 + rng.IntN(2)
	b := make([]byte, n)
	b[0] = byte('1' + rng.IntN(9))
	for i := 1; i < n; i++ {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

func pmLogNorm(rng *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*rng.NormFloat64())
}

func pmUnif(rng *rand.Rand, a, b float64) float64 { return a + (b-a)*rng.Float64() }

func pmLogit(p float64) float64   { return math.Log(p / (1 - p)) }
func pmSigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var (
	pmPseudoAdj  = []string{"Gleaming", "Quiet", "Rapid", "Frosty", "Amber", "Lucky", "Silent", "Bold", "Crimson", "Misty", "Golden", "Wild", "Clever", "Brave", "Sunny", "Velvet"}
	pmPseudoNoun = []string{"Quartz", "Falcon", "Otter", "Harbor", "Comet", "Maple", "Tiger", "Ember", "Willow", "Raven", "Summit", "Lynx", "Pebble", "Meadow", "Orbit", "Fjord"}
	pmHandles    = []string{"degen", "alpha", "oracle", "whale", "punter", "quant", "edge", "sharp", "moon", "value", "hedge", "yolo"}
)

func newPmWorld(g *Generator) *pmWorld {
	w := &pmWorld{g: g, startMs: g.Start.UnixMilli(), endMs: g.End.UnixMilli()}
	w.idSalt = g.RNG("predmkt/ids").Uint64()
	w.buildWallets()
	w.buildMarkets()
	w.buildRates()
	w.buildPools()
	w.buildCampaigns()
	return w
}

func (w *pmWorld) buildWallets() {
	rng := w.g.RNG("predmkt/wallets")
	n := max(w.g.Scale.PredWallets, 120)
	counts := [pmNumClasses]int{
		pmMM:    max(3, n/300),
		pmBot:   max(6, n/25),
		pmWhale: max(4, n/60),
		pmSharp: 5 * max(5, n/300),
		pmHot:   max(4, n/100),
		pmCold:  max(10, n/30),
	}
	classes := make([]pmClass, 0, n)
	for c := pmClass(1); c < pmNumClasses; c++ {
		for i := 0; i < counts[c]; i++ {
			classes = append(classes, c)
		}
	}
	for len(classes) < n {
		classes = append(classes, pmOrdinary)
	}
	rng.Shuffle(len(classes), func(i, j int) { classes[i], classes[j] = classes[j], classes[i] })
	w.wallets = make([]pmWallet, n)
	sharpN := 0
	for i := range w.wallets {
		wl := &w.wallets[i]
		wl.class = classes[i]
		wl.addr = pmHex(rng, 20)
		if wl.class == pmSharp {
			wl.cat = sharpN % len(pmCategories)
			sharpN++
		}
		w.byClass[wl.class] = append(w.byClass[wl.class], int32(i))
	}
	prng := w.g.RNG("predmkt/profiles")
	for i := range w.wallets {
		wl := &w.wallets[i]
		if prng.Float64() < 0.6 {
			wl.pseudonym = pmPseudoAdj[prng.IntN(len(pmPseudoAdj))] + "-" + pmPseudoNoun[prng.IntN(len(pmPseudoNoun))]
		}
		if prng.Float64() < 0.25 {
			wl.display = fmt.Sprintf("%s%d", pmHandles[prng.IntN(len(pmHandles))], prng.IntN(10000))
		}
	}
}

var (
	pmTeams    = []string{"Lakers", "Celtics", "Warriors", "Knicks", "Chiefs", "Eagles", "Yankees", "Dodgers", "Arsenal", "Real Madrid", "Bulls", "Heat"}
	pmPols     = []string{"infrastructure", "farm", "border security", "crypto market structure", "defense", "tax"}
	pmPeople   = []string{"Senator Hale", "Governor Ruiz", "Minister Okafor", "Chancellor Brandt", "Speaker Lin"}
	pmArtists  = []string{"Taylor Swift", "Bad Bunny", "Dua Lipa", "Kendrick Lamar", "Billie Eilish", "Zara Vale"}
	pmFilms    = []string{"Dune III", "Avatar 4", "The Batman II", "Moana 3"}
	pmCompany  = []string{"OpenAI", "Google", "Apple", "NVIDIA", "Tesla", "Meta", "Anthropic", "Microsoft"}
	pmSlugNonW = strings.NewReplacer("$", "", "?", "", ".", "", ",", "", ":", "", "'", "")
)

func pmQuestion(rng *rand.Rand, cat int, end time.Time) (q string, outcomes [2]string) {
	day := end.Format("January 2")
	outcomes = [2]string{"Yes", "No"}
	switch cat {
	case pmCatCrypto:
		switch rng.IntN(3) {
		case 0:
			q = fmt.Sprintf("Will Bitcoin reach $%d,000 by %s?", 90+5*rng.IntN(20), day)
		case 1:
			q = fmt.Sprintf("Will Ethereum close above $%d on %s?", 2500+250*rng.IntN(12), day)
		default:
			q = fmt.Sprintf("Will Solana hit $%d by %s?", 150+25*rng.IntN(10), day)
		}
	case 1:
		a := rng.IntN(len(pmTeams))
		b := (a + 1 + rng.IntN(len(pmTeams)-1)) % len(pmTeams)
		if rng.Float64() < 0.5 {
			q = fmt.Sprintf("%s vs. %s (%s)", pmTeams[a], pmTeams[b], day)
			outcomes = [2]string{pmTeams[a], pmTeams[b]}
		} else {
			q = fmt.Sprintf("Will the %s win on %s?", pmTeams[a], day)
		}
	case 2:
		if rng.Float64() < 0.5 {
			q = fmt.Sprintf("Will the %s bill pass the Senate by %s?", pmPols[rng.IntN(len(pmPols))], day)
		} else {
			q = fmt.Sprintf("Will %s lead the national poll on %s?", pmPeople[rng.IntN(len(pmPeople))], day)
		}
	case 3:
		if rng.Float64() < 0.6 {
			q = fmt.Sprintf("Will %s top the Billboard Hot 100 on %s?", pmArtists[rng.IntN(len(pmArtists))], day)
		} else {
			q = fmt.Sprintf("Will the %s trailer pass 50M views by %s?", pmFilms[rng.IntN(len(pmFilms))], day)
		}
	default:
		c := pmCompany[rng.IntN(len(pmCompany))]
		switch rng.IntN(3) {
		case 0:
			q = fmt.Sprintf("Will %s release a new flagship model by %s?", c, day)
		case 1:
			q = fmt.Sprintf("Will %s stock close above $%d on %s?", c, 100+10*rng.IntN(40), day)
		default:
			q = fmt.Sprintf("Will %s announce layoffs by %s?", c, day)
		}
	}
	return q, outcomes
}

func pmSlug(q string, idx int) string {
	s := strings.ToLower(pmSlugNonW.Replace(q))
	s = strings.Join(strings.Fields(strings.NewReplacer("(", " ", ")", " ", "/", " ").Replace(s)), "-")
	return fmt.Sprintf("%s-%d", s, idx)
}

func (w *pmWorld) buildMarkets() {
	g := w.g
	rng := g.RNG("predmkt/markets")
	total := max(g.Scale.PredMarkets, 30)
	perFam := max(2, total*3/10/9)
	span := w.endMs - w.startMs

	// Crypto up/down families: per (asset, tenor) perFam instances; the last is open at
	// the end of history, the others start at random tenor-aligned times.
	frng := g.RNG("predmkt/families")
	var fams []*pmMarket
	for _, a := range pmFamAssets {
		for _, tn := range pmFamTenors {
			T := pmTenorDur[tn]
			openStart := (w.endMs / T) * T
			used := map[int64]bool{openStart: true}
			starts := []int64{}
			lo := (w.startMs/T + 1) * T
			hi := w.endMs - 2*T
			slots := (hi - lo) / T
			for i := 0; i < perFam-1 && int64(len(starts)) < slots; i++ {
				for try := 0; try < 20; try++ {
					s := lo + frng.Int64N(slots)*T
					if !used[s] {
						used[s] = true
						starts = append(starts, s)
						break
					}
				}
			}
			sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
			starts = append(starts, openStart)
			for _, s := range starts {
				m := &pmMarket{cat: pmCatCrypto, famAsset: a, famTenor: tn}
				m.famStart = s
				m.created = time.UnixMilli(s - T).UTC()
				m.end = time.UnixMilli(s + T).UTC()
				m.famSigma = 1
				nMin := int(T/pmMinMs) + 1
				m.famR = make([]float32, nMin)
				r := 0.0
				for i := 1; i < nMin; i++ {
					r += frng.NormFloat64()
					m.famR[i] = float32(r)
				}
				if m.famR[nMin-1] >= 0 {
					m.winner = 0
				} else {
					m.winner = 1
				}
				m.outcomes = [2]string{"Up", "Down"}
				st := time.UnixMilli(s).UTC()
				et := time.UnixMilli(s + T).UTC()
				if tn == "1d" {
					m.question = fmt.Sprintf("%s Up or Down on %s?", pmFamNames[a], st.Format("January 2"))
				} else {
					m.question = fmt.Sprintf("%s Up or Down - %s, %s-%s UTC", pmFamNames[a], st.Format("January 2"), st.Format("15:04"), et.Format("15:04"))
				}
				m.slug = fmt.Sprintf("%s-updown-%s-%d", a, tn, s/1000)
				m.weight = map[string]float64{"15m": 6, "1h": 4, "1d": 2}[tn] * pmLogNorm(frng, 1, 0.3)
				m.depth = pmLogNorm(frng, 1, 0.3)
				if m.end.UnixMilli() <= w.endMs {
					m.closed = true
					rt := m.end.Add(time.Duration(1+frng.IntN(5)) * time.Minute)
					if rt.UnixMilli() <= w.endMs {
						m.status = pmResolved
						m.resolvedTs = rt
					}
				}
				m.tapeStart = max(m.created.UnixMilli(), w.startMs)
				m.tapeEnd = min(m.end.UnixMilli(), w.endMs+1)
				fams = append(fams, m)
			}
		}
	}

	nReg := max(15, total-len(fams))
	regs := make([]*pmMarket, nReg)
	perCat := make([]int, len(pmCategories))
	for i := range regs {
		m := &pmMarket{cat: i % len(pmCategories)}
		j := perCat[m.cat]
		perCat[m.cat]++
		switch {
		case j%3 == 1:
			m.status = pmOpen
		case j%12 == 5:
			m.status = pmInvalid
		default:
			m.status = pmResolved
		}
		createdBefore := rng.Float64() < 0.5
		switch m.status {
		case pmOpen:
			if createdBefore {
				m.created = time.UnixMilli(w.startMs - int64(pmUnif(rng, 1, 60)*float64(pmDayMs))).UTC()
			} else {
				lo, hi := w.startMs+pmDayMs, w.endMs-30*pmHourMs
				m.created = time.UnixMilli(lo + rng.Int64N(max(hi-lo, 1))).UTC()
			}
			m.end = time.UnixMilli(w.endMs + int64(pmUnif(rng, 3, 90)*float64(pmDayMs))).UTC().Truncate(time.Hour)
		default:
			rt := w.startMs + 12*pmHourMs + rng.Int64N(max(span-12*pmHourMs-10*pmMinMs, 1))
			if j == 0 { // every category has a market that resolved in the last day
				rt = w.endMs - 22*pmHourMs + rng.Int64N(21*pmHourMs)
			}
			m.resolvedTs = time.UnixMilli(rt).UTC().Truncate(time.Second)
			m.end = m.resolvedTs.Add(-time.Duration(rng.Int64N(int64(2 * time.Hour)))).Truncate(time.Minute)
			latest := m.end.UnixMilli() - 12*pmHourMs
			if createdBefore || latest <= w.startMs+pmDayMs {
				m.created = time.UnixMilli(w.startMs - int64(pmUnif(rng, 1, 60)*float64(pmDayMs))).UTC()
			} else {
				lo := w.startMs + pmDayMs
				m.created = time.UnixMilli(lo + rng.Int64N(latest-lo)).UTC()
			}
			m.closed = true
		}
		m.created = m.created.Truncate(time.Second)
		m.question, m.outcomes = pmQuestion(rng, m.cat, m.end)
		m.winner = rng.IntN(2)
		// The winner's (or, for open markets, the drift target's) starting price.
		var pw float64
		switch m.status {
		case pmResolved:
			pw = pmUnif(rng, 0.25, 0.75)
		case pmOpen:
			pw = pmUnif(rng, 0.3, 0.6)
		default:
			pw = pmUnif(rng, 0.2, 0.8)
		}
		pYes := pw
		if m.winner == 1 {
			pYes = 1 - pw
		}
		m.x0 = pmLogit(pYes)
		m.xF = m.x0
		if m.status == pmResolved {
			m.xF = 4.2
			if m.winner == 1 {
				m.xF = -4.2
			}
		}
		// The price path starts where the tape starts: a market listed before the
		// history has not converged yet when the recording begins.
		m.tapeStart = max(m.created.UnixMilli(), w.startMs)
		m.tapeEnd = min(m.end.UnixMilli(), w.endMs+1)
		m.lifeStart = m.tapeStart
		m.lifeEnd = m.end.UnixMilli()
		m.weight = pmLogNorm(rng, 1, 0.8)
		m.depth = pmLogNorm(rng, 1.3, 0.5)
		regs[i] = m
	}

	// Interleave deterministically: regular markets then families, then ids.
	w.markets = append(regs, fams...)
	for i, m := range w.markets {
		m.idx = i
		m.cond = pmHex(rng, 32)
		m.tokens = [2]string{pmTokenID(rng), pmTokenID(rng)}
		if m.slug == "" {
			m.slug = pmSlug(m.question, i)
		}
	}
}

// buildRates sets the random-flow and price_change rates so that an average day holds
// about PredTradesDay fill rows and PredTapePerDay tape events.
func (w *pmWorld) buildRates() {
	sc := w.g.Scale
	days := float64(w.endMs-w.startMs) / float64(pmDayMs)
	var wsum float64
	for _, m := range w.markets {
		if m.tapeEnd > m.tapeStart {
			wsum += m.weight * float64(m.tapeEnd-m.tapeStart)
		}
	}
	wref := wsum / days // weight-ms of an average day
	ordersDay := float64(sc.PredTradesDay) * 0.24
	pcDay := float64(sc.PredTapePerDay)*0.97 - float64(sc.PredTradesDay)*0.5
	w.ordersPerWMs = ordersDay / wref
	w.pcPerWMs = max(pcDay, float64(sc.PredTapePerDay)*0.3) / wref
}

func (w *pmWorld) buildPools() {
	rng := w.g.RNG("predmkt/pools")
	ord := w.byClass[pmOrdinary]
	for _, m := range w.markets {
		exp := w.ordersPerWMs * m.weight * float64(max(m.tapeEnd-m.tapeStart, 0))
		n := min(max(int(exp/4), 8), 60, len(ord))
		m.pool = make([]int32, n)
		for i := range m.pool {
			m.pool[i] = ord[rng.IntN(len(ord))]
		}
	}
}

func (m *pmMarket) valid() bool { return m.status == pmResolved }

// campaignWindow returns the part of the market's tape where informed wallets trade.
func (m *pmMarket) campaignWindow(frac float64) (int64, int64) {
	a := m.tapeStart + 10*pmMinMs
	b := m.tapeStart + int64(frac*float64(m.tapeEnd-m.tapeStart))
	return a, max(b, a+1)
}

func (w *pmWorld) buildCampaigns() {
	rng := w.g.RNG("predmkt/campaigns")
	var resolvedByCat [5][]*pmMarket
	var openByCat [5][]*pmMarket
	var resolvedAll []*pmMarket
	for _, m := range w.markets {
		life := m.tapeEnd - m.tapeStart
		if m.valid() && life >= 6*pmHourMs && m.famAsset == "" {
			resolvedByCat[m.cat] = append(resolvedByCat[m.cat], m)
		}
		if m.valid() && life >= 20*pmMinMs {
			resolvedAll = append(resolvedAll, m)
		}
		if m.status == pmOpen && m.famAsset == "" && m.tapeStart < w.endMs-12*pmHourMs {
			openByCat[m.cat] = append(openByCat[m.cat], m)
		}
	}
	pick := func(list []*pmMarket, n int) []*pmMarket {
		idx := rng.Perm(len(list))
		out := make([]*pmMarket, 0, min(n, len(list)))
		for _, i := range idx[:min(n, len(list))] {
			out = append(out, list[i])
		}
		return out
	}
	add := func(m *pmMarket, o pmOrder) { m.campaign = append(m.campaign, o) }
	for _, wi := range w.byClass[pmSharp] {
		cat := w.wallets[wi].cat
		for _, m := range pick(resolvedByCat[cat], 8) {
			a, b := m.campaignWindow(0.7)
			for k := 4 + rng.IntN(3); k > 0; k-- {
				add(m, pmOrder{t: a + rng.Int64N(b-a), wallet: wi, tok: uint8(m.winner), amount: pmUnif(rng, 200, 450), limit: 85})
			}
			if rng.Float64() < 0.3 { // take some profit before resolution
				a2, b2 := m.tapeStart+int64(0.75*float64(m.tapeEnd-m.tapeStart)), m.tapeStart+int64(0.9*float64(m.tapeEnd-m.tapeStart))
				add(m, pmOrder{t: a2 + rng.Int64N(max(b2-a2, 1)), wallet: wi, tok: uint8(m.winner), sell: true, amount: pmUnif(rng, 0.3, 0.6), limit: 1})
			}
		}
		for _, m := range pick(openByCat[cat], 2) {
			a := max(m.tapeStart+10*pmMinMs, w.endMs-24*pmHourMs)
			b := w.endMs - 8*pmHourMs
			for k := 3 + rng.IntN(3); k > 0; k-- {
				add(m, pmOrder{t: a + rng.Int64N(max(b-a, 1)), wallet: wi, tok: uint8(m.winner), amount: pmUnif(rng, 150, 400), limit: 90})
			}
		}
	}
	for _, wi := range w.byClass[pmHot] {
		for _, m := range pick(resolvedAll, 25) {
			a, b := m.campaignWindow(0.7)
			for k := 2 + rng.IntN(2); k > 0; k-- {
				tok := m.winner
				if rng.Float64() > 0.8 {
					tok = 1 - tok
				}
				add(m, pmOrder{t: a + rng.Int64N(b-a), wallet: wi, tok: uint8(tok), amount: pmUnif(rng, 100, 300), limit: 85})
			}
		}
	}
	for _, wi := range w.byClass[pmCold] {
		for _, m := range pick(resolvedAll, 25) {
			a, b := m.campaignWindow(0.8)
			for k := 1 + rng.IntN(3); k > 0; k-- {
				tok := 1 - m.winner
				if rng.Float64() > 0.75 {
					tok = m.winner
				}
				add(m, pmOrder{t: a + rng.Int64N(b-a), wallet: wi, tok: uint8(tok), amount: pmUnif(rng, 60, 220), limit: 90})
			}
		}
	}
	for _, m := range w.markets {
		sort.SliceStable(m.campaign, func(i, j int) bool { return m.campaign[i].t < m.campaign[j].t })
	}
}
