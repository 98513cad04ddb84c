package demo

import (
	"math"
	"time"
)

// The static model of the perpetuals venue: coins, wallet behaviours and builders.
// Everything here is a plain table; the simulation is in perpdex.go. Cohort bands are
// not here: mdq owns them (query/perpdex_cohort_bands.go) and derives the labels.

// perpdexLabelStart is the first hour mdq publishes point-in-time cohort labels for
// (SPEC 2.3): liquidations before it carry today's (current) label, so the prehistory
// block below is simulated before it.
var perpdexLabelStart = time.Date(2026, 4, 7, 0, 0, 0, 0, time.UTC)

// perpdexPrehistoryFrom is the first date of the small prehistory block. Whatever
// g.Start is, the generator writes a few wallets' fills, funding, marks and ledger on
// the dates from here up to the day before history starts (at most up to 2026-04-06),
// so that liquidations before perpdexLabelStart always exist and the liquidation route
// has rows on the current-label basis. When the history itself starts before
// 2026-03-20 the block is empty (history already covers those dates).
var perpdexPrehistoryFrom = time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)

// perpdexCoin is one listed perpetual.
type perpdexCoin struct {
	Name   string  // venue ticker; builder-deployed markets are <dex>:<symbol>
	Dex    string  // "" for the main venue
	Start  float64 // price at the start of the simulation
	Vol    float64 // annualised volatility
	SzDec  int     // size decimals
	MaxLev float64 // maximum leverage
	Weight float64 // share of trading activity
}

var perpdexCoins = []perpdexCoin{
	{"BTC", "", 84_000, 0.50, 5, 40, 30},
	{"ETH", "", 1_900, 0.65, 4, 25, 18},
	{"SOL", "", 130, 0.80, 2, 20, 10},
	{"HYPE", "", 16, 1.00, 2, 10, 10},
	{"DOGE", "", 0.17, 0.90, 0, 10, 4},
	{"AVAX", "", 19, 0.85, 2, 10, 3},
	{"ARB", "", 0.33, 0.90, 1, 10, 3},
	{"xyz:TSLA", "xyz", 250, 0.55, 3, 10, 3},
	{"xyz:NVDA", "xyz", 110, 0.50, 3, 10, 3},
}

func perpdexCoinIndex(name string) int {
	for i, c := range perpdexCoins {
		if c.Name == name {
			return i
		}
	}
	panic("perpdex: unknown coin " + name)
}

// Wallet behaviours.
const (
	pwMM       = iota // market-maker vault: the default counterparty
	pwHLP             // liquidator vault: takes over liquidated positions
	pwCopy            // copy-traders: near-identical positions held to the end
	pwWhale           // large, slow, high conviction
	pwBot             // scalpers: many small, short trades
	pwSwing           // hours to days
	pwPosition        // days
	pwRetail          // small accounts, high leverage
)

// perpdexKind describes one behaviour.
type perpdexKind struct {
	Name      string
	Style     string    // the style it is modelled on; mdq derives the tag from its closed trades
	Share     float64   // share of regular wallets
	Weight    float64   // relative trading activity per wallet
	CapMedian float64   // median deposited capital, USD
	CapSigma  float64   // log-normal spread of capital
	Look      int       // minutes of look-ahead a skilled wallet "sees"
	Hold      float64   // mean holding time, minutes
	FracLo    float64   // share of free equity (times leverage) put into one order
	FracHi    float64   //
	Levs      []float64 // leverage settings it picks from
}

var perpdexKinds = [...]perpdexKind{
	pwMM:       {"market_maker", "scalper", 0, 0, 40e6, 0, 0, 0, 0, 0, []float64{5}},
	pwHLP:      {"liquidator_vault", "position", 0, 0, 80e6, 0, 0, 0, 0, 0, []float64{3}},
	pwCopy:     {"copy_trader", "swing", 0, 0, 20_000, 0.5, 0, 1e9, 0.3, 0.5, nil},
	pwWhale:    {"whale", "position", 0.04, 1.5, 2e6, 0.8, 720, 1_440, 0.05, 0.3, []float64{3, 5, 10, 20}},
	pwBot:      {"bot", "scalper", 0.10, 25, 40_000, 0.8, 30, 20, 0.02, 0.15, []float64{10, 20, 25}},
	pwSwing:    {"swing", "swing", 0.35, 2, 20_000, 1.0, 240, 360, 0.05, 0.35, []float64{3, 5, 10}},
	pwPosition: {"position", "position", 0.20, 0.7, 80_000, 1.0, 720, 1_440, 0.05, 0.3, []float64{2, 3, 5}},
	pwRetail:   {"retail", "swing", 0.31, 3, 2_000, 1.0, 60, 180, 0.1, 0.6, []float64{10, 20, 25, 40, 50}},
}

// perpdexBuilder is a builder code: a front end that adds its own fee to the fills it routes.
type perpdexBuilder struct {
	Rate   float64 // builder fee as a fraction of notional
	Weight float64 // share of builder-routed wallets
}

var perpdexBuilders = []perpdexBuilder{
	{0.0001, 0.40},
	{0.00025, 0.30},
	{0.0005, 0.20},
	{0.001, 0.10},
}

// perpdexClusters are groups of copy-trader wallets that open the same coin and side
// at near-identical entry prices and leverage a few hours before the end, and hold to
// the end: position matching finds several of them in one tolerance band. The last
// wallet of each group uses leverage+1, outside the route's plus-or-minus 0.5.
var perpdexClusters = []struct {
	Coin string
	Dir  float64 // +1 long, -1 short
	Lev  float64
	Eps  float64 // entry-price spread, fraction of the mark
	N    int
}{
	{"ETH", +1, 10, 0.0002, 6},
	{"BTC", -1, 20, 0.0002, 4},
	{"SOL", +1, 5, 0.003, 4},
}

// perpdexRound rounds x to dec decimals.
func perpdexRound(x float64, dec int) float64 {
	p := math.Pow10(dec)
	return math.Round(x*p) / p
}

// perpdexSig rounds a price to five significant figures, as the venue does.
func perpdexSig(x float64) float64 {
	if x <= 0 {
		return 0
	}
	e := int(math.Floor(math.Log10(x))) - 4
	if e >= 0 {
		p := math.Pow10(e)
		return math.Round(x/p) * p
	}
	p := math.Pow10(-e)
	return math.Round(x*p) / p
}

// perpdexTick is the price increment at five significant figures.
func perpdexTick(x float64) float64 { return math.Pow10(int(math.Floor(math.Log10(x))) - 4) }

func perpdexSign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
