package demo

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// The on-chain world: chains, tokens, hourly prices, wallet populations with roles and
// counterparty preferences, and opening balances. Everything here is a pure function of
// the seed, the scale and the history window, so the test can rebuild the opening
// balances the generator started from.

// ocZeroAddr is the native coin's token address.
const ocZeroAddr = "0x0000000000000000000000000000000000000000"

// ocRefTime anchors the per-chain block-number clocks. It is midnight UTC and every block
// time divides a minute, so blocks never straddle a day or the minute-aligned start.
var ocRefTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type ocChainDef struct {
	name     string
	blockSec int64
	refBlock int64 // block number at ocRefTime
	bit      int
}

var ocChainDefs = []ocChainDef{
	{"ethereum", 12, 18_908_900, 1},
	{"bsc", 3, 34_880_000, 2},
	{"base", 2, 8_830_000, 4},
}

type ocRole uint8

const (
	ocUser ocRole = iota
	ocDormant
	ocTrader
	ocMEV
	ocWhale
	ocExploiter
	ocFund
	ocCEX
	ocMM
	ocDEX
	ocDeFi
	ocBridge
)

func (r ocRole) hub() bool { return r >= ocCEX }

// level sizes transfers: 1 retail, 2 active, 3 large holders, 4 institutions.
func (r ocRole) level() int {
	switch r {
	case ocUser, ocDormant:
		return 1
	case ocTrader, ocMEV:
		return 2
	case ocWhale, ocExploiter, ocFund:
		return 3
	}
	return 4
}

func (r ocRole) walletType() string {
	switch r {
	case ocCEX:
		return "cex"
	case ocMM:
		return "market_maker"
	case ocDEX:
		return "dex"
	case ocDeFi:
		return "defi"
	case ocBridge:
		return "bridge"
	case ocFund:
		return "fund"
	}
	return "individual"
}

// ---- tokens -------------------------------------------------------------------------

type ocTokenDef struct {
	addr, symbol, name string
	decimals           int
	asset, priceKey    string // priceKey "" means unpriced
	weight             float64
}

type ocPriceDef struct {
	p0, vol float64 // starting USD price, hourly log volatility
	stable  bool
}

var ocPriceDefs = map[string]ocPriceDef{
	"eth": {3200, 0.006, false}, "btc": {65000, 0.005, false}, "bnb": {580, 0.007, false},
	"usdc": {1, 0, true}, "usdt": {1, 0, true}, "dai": {1, 0, true}, "busd": {1, 0, true},
	"fdusd": {1, 0, true}, "usdbc": {1, 0, true},
	"link": {15, 0.01, false}, "uni": {8, 0.011, false}, "aave": {150, 0.011, false},
	"pepe": {0.0000085, 0.02, false}, "shib": {0.000018, 0.016, false}, "ldo": {1.8, 0.012, false},
	"mkr": {1800, 0.01, false}, "cake": {2.3, 0.012, false}, "xrp": {0.55, 0.009, false},
	"doge": {0.12, 0.013, false}, "aero": {1.1, 0.015, false}, "degen": {0.008, 0.022, false},
	"brett": {0.09, 0.02, false}, "toshi": {0.0002, 0.022, false}, "virtual": {1.2, 0.018, false},
}

// The named catalogue per chain, most used first: a scale with fewer tokens keeps the
// head of each list. Each list keeps one unpriced token (ETHG, MOONX) within the first
// ten so even the tiny scale has transfers with NULL usd.
var ocNatives = map[string]ocTokenDef{
	"ethereum": {ocZeroAddr, "ETH", "Ether", 18, "eth", "eth", 20},
	"bsc":      {ocZeroAddr, "BNB", "BNB", 18, "bnb", "bnb", 20},
	"base":     {ocZeroAddr, "ETH", "Ether", 18, "eth", "eth", 20},
}

var ocCatalog = map[string][]ocTokenDef{
	"ethereum": {
		{"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USDC", "USD Coin", 6, "usdc", "usdc", 20},
		{"0xdac17f958d2ee523a2206206994597c13d831ec7", "USDT", "Tether USD", 6, "usdt", "usdt", 18},
		{"0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "WETH", "Wrapped Ether", 18, "weth", "eth", 12},
		{"0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", "WBTC", "Wrapped BTC", 8, "wbtc", "btc", 5},
		{"0x6b175474e89094c44da98b954eedeac495271d0f", "DAI", "Dai Stablecoin", 18, "dai", "dai", 4},
		{"0x514910771af9ca656af840dff83e8264ecf986ca", "LINK", "ChainLink Token", 18, "link", "link", 3},
		{"0x1f9840a85d5af5bf1d1762f925bdaddc4201f984", "UNI", "Uniswap", 18, "uni", "uni", 2.5},
		{"0x6982508145454ce325ddbe47a25d4ec3d2311933", "PEPE", "Pepe", 18, "pepe", "pepe", 3},
		{"0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9", "AAVE", "Aave Token", 18, "aave", "aave", 1.5},
		{"0x3e1f0c1b4d8a3a5f7e2b9c6d0a4f8e2b7c5d9a13", "ETHG", "Ethereum Gold Airdrop", 18, "ethg", "", 1.5},
		{"0x95ad61b0a150d79219dcf64e1e6cc01f0b64c4ce", "SHIB", "SHIBA INU", 18, "shib", "shib", 1.5},
		{"0xae7ab96520de3a18e5e111b5eaab095312d7fe84", "stETH", "Liquid staked Ether 2.0", 18, "steth", "eth", 2},
		{"0x5a98fcbea516cf06857215779fd812ca3bef1b32", "LDO", "Lido DAO Token", 18, "ldo", "ldo", 1},
		{"0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2", "MKR", "Maker", 18, "mkr", "mkr", 1},
		{"0xcbb7c0000ab88b473b1f5afd9ef808440eed33bf", "cbBTC", "Coinbase Wrapped BTC", 8, "cbbtc", "btc", 1},
	},
	"bsc": {
		{"0x55d398326f99059ff775485246999027b3197955", "USDT", "Tether USD", 18, "usdt", "usdt", 22},
		{"0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d", "USDC", "USD Coin", 18, "usdc", "usdc", 14},
		{"0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c", "WBNB", "Wrapped BNB", 18, "wbnb", "bnb", 12},
		{"0x2170ed0880ac9a755fd29b2688956bd959f933f8", "ETH", "Binance-Peg Ethereum Token", 18, "weth", "eth", 6},
		{"0x7130d2a12b9bcbfae4f2634d864a1ee1ce3ead9c", "BTCB", "Binance-Peg BTCB Token", 18, "btcb", "btc", 4},
		{"0x0e09fabb73bd3ade0a17ecc321fd13a19e81ce82", "CAKE", "PancakeSwap Token", 18, "cake", "cake", 4},
		{"0xf8a0bf9cf54bb92f17374d9e9a321e6a111a51bd", "LINK", "Binance-Peg ChainLink Token", 18, "link", "link", 1.5},
		{"0xe9e7cea3dedca5984780bafc599bd69add087d56", "BUSD", "Binance-Peg BUSD Token", 18, "busd", "busd", 2},
		{"0x6c1f4e9b2a7d3c8e5f0a9b4d7e2c1f6a3b8d5e07", "MOONX", "MoonX Token", 9, "moonx", "", 2},
		{"0xc5f0f7b66764f6ec8c8dff7ba683102295e16409", "FDUSD", "First Digital USD", 18, "fdusd", "fdusd", 3},
		{"0x1d2f0da169ceb9fc7b3144628db156f3f6c60dbe", "XRP", "Binance-Peg XRP Token", 18, "xrp", "xrp", 1.5},
		{"0xba2ae424d960c26247dd6c32edc70b295c744c43", "DOGE", "Binance-Peg Dogecoin Token", 8, "doge", "doge", 1.5},
		{"0xbf5140a22578168fd562dccf235e5d43a02ce9b1", "UNI", "Binance-Peg Uniswap", 18, "uni", "uni", 1},
	},
	"base": {
		{"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "USDC", "USD Coin", 6, "usdc", "usdc", 24},
		{"0x4200000000000000000000000000000000000006", "WETH", "Wrapped Ether", 18, "weth", "eth", 14},
		{"0xfde4c96c8593536e31f229ea8f37b2ada2699bb2", "USDT", "Bridged Tether USD", 6, "usdt", "usdt", 8},
		{"0xcbb7c0000ab88b473b1f5afd9ef808440eed33bf", "cbBTC", "Coinbase Wrapped BTC", 8, "cbbtc", "btc", 4},
		{"0x50c5725949a6f0c72e6c4a641f24049a917db0cb", "DAI", "Dai Stablecoin", 18, "dai", "dai", 2},
		{"0x940181a94a35a4569e4529a3cdfb74e38fd98631", "AERO", "Aerodrome", 18, "aero", "aero", 4},
		{"0x4ed4e862860bed51a9570b96d89af5e1b0efefed", "DEGEN", "Degen", 18, "degen", "degen", 3},
		{"0x532f27101965dd16442e59d40670faf5ebb142e4", "BRETT", "Brett", 18, "brett", "brett", 3},
		{"0xd9aaec86b65d86f6a7b5b1b0c42ffa531710b6ca", "USDbC", "USD Base Coin", 6, "usdbc", "usdbc", 2},
		{"0xac1bd2486aaf3b5c0fc3fd868558b082a531b2b4", "TOSHI", "Toshi", 18, "toshi", "toshi", 2},
		{"0x2ae3f1ec7f1f5012cfeab0185bfc7aa3cf0dec22", "cbETH", "Coinbase Wrapped Staked ETH", 18, "cbeth", "eth", 1},
		{"0x0b3e328455c4059eeb9e3f84b5543f74e24e7e1b", "VIRTUAL", "Virtual Protocol", 18, "virtual", "virtual", 2},
	},
}

var ocSynthPrefix = []string{"Aether", "Nova", "Quant", "Zephyr", "Orbit", "Lumen", "Vertex", "Helix",
	"Nimbus", "Pulse", "Kite", "Onyx", "Solace", "Strata", "Tidal", "Umbra", "Vela", "Xeno", "Zenith",
	"Arbor", "Blaze", "Cinder", "Drift", "Ember", "Flux", "Glyph", "Haven", "Ion", "Jade", "Kairo",
	"Lyra", "Mosaic", "Nexa", "Opal", "Prism", "Quill", "Rune", "Sable", "Terra", "Vortex"}
var ocSynthSuffix = []string{"Protocol", "Finance", "Network", "AI", "DAO", "Labs", "Swap", "Inu", "Token", "Chain"}

type ocToken struct {
	addr, symbol, name, logo, asset string
	decimals                        int
	weight                          float64
	px                              []float64 // hourly USD price; nil when unpriced
	shadow                          float64   // sizing price for an unpriced token (never written)
	stable                          bool
	native                          bool
}

// priced reports whether the token has a price series.
func (t *ocToken) priced() bool { return t.px != nil }

// price returns the USD price used for sizing at hour h.
func (t *ocToken) price(h int) float64 {
	if t.px == nil {
		return t.shadow
	}
	if h < 0 {
		h = 0
	}
	if h >= len(t.px) {
		h = len(t.px) - 1
	}
	return t.px[h]
}

// ---- entities -----------------------------------------------------------------------

type ocEntityDef struct {
	name   string
	role   ocRole
	chains int     // bit set of ocChainDefs[].bit
	k      float64 // addresses per chain at the small scale
	shared bool    // same address on every chain it is deployed to
	risk   string
	lender bool // offers flash loans
	weight float64
}

var ocEntities = []ocEntityDef{
	{"Binance", ocCEX, 7, 3, true, "", false, 100},
	{"Coinbase", ocCEX, 5, 2.5, false, "", false, 80},
	{"Kraken", ocCEX, 1, 1.5, false, "", false, 40},
	{"OKX", ocCEX, 7, 2, true, "", false, 60},
	{"Bybit", ocCEX, 3, 1.5, false, "", false, 50},
	{"Bitfinex", ocCEX, 1, 1, false, "", false, 25},
	{"KuCoin", ocCEX, 3, 1, false, "", false, 25},
	{"Gemini", ocCEX, 1, 1, false, "", false, 15},
	{"Gate.io", ocCEX, 3, 1, false, "", false, 20},
	{"HTX", ocCEX, 3, 1, false, "", false, 20},
	{"Crypto.com", ocCEX, 5, 1, false, "", false, 25},
	{"MEXC", ocCEX, 2, 1, false, "", false, 15},
	{"Wintermute", ocMM, 7, 1.5, true, "", false, 40},
	{"Jump Trading", ocMM, 1, 1, false, "", false, 30},
	{"Cumberland", ocMM, 1, 1, false, "", false, 20},
	{"GSR Markets", ocMM, 3, 1, false, "", false, 20},
	{"Amber Group", ocMM, 3, 1, false, "", false, 15},
	{"Flow Traders", ocMM, 1, 1, false, "", false, 15},
	{"DWF Labs", ocMM, 3, 1, false, "", false, 20},
	{"Uniswap V3: Universal Router", ocDEX, 5, 1, true, "", false, 70},
	{"Uniswap V3: USDC-WETH Pool", ocDEX, 5, 1, false, "", false, 40},
	{"Uniswap V2: Router", ocDEX, 1, 1, false, "", false, 25},
	{"PancakeSwap: Smart Router", ocDEX, 2, 1, false, "", false, 70},
	{"PancakeSwap V3: USDT-WBNB Pool", ocDEX, 2, 1, false, "", false, 40},
	{"Aerodrome: Router", ocDEX, 4, 1, false, "", false, 60},
	{"1inch: Aggregation Router", ocDEX, 7, 1, true, "", false, 30},
	{"0x: Exchange Proxy", ocDEX, 7, 1, true, "", false, 20},
	{"Curve: 3pool", ocDEX, 1, 1, false, "", false, 20},
	{"SushiSwap: Router", ocDEX, 3, 1, false, "", false, 10},
	{"Aave V3: Pool", ocDeFi, 7, 1, false, "", true, 30},
	{"Balancer: Vault", ocDeFi, 5, 1, true, "", true, 15},
	{"Compound V3: cUSDCv3", ocDeFi, 5, 1, false, "", false, 12},
	{"Lido: stETH", ocDeFi, 1, 1, false, "", false, 20},
	{"Morpho: Blue", ocDeFi, 5, 1, true, "", false, 10},
	{"Venus: vUSDT", ocDeFi, 2, 1, false, "", true, 15},
	{"Maker: PSM", ocDeFi, 1, 1, false, "", false, 10},
	{"Tornado Cash: Router", ocDeFi, 1, 1, false, "sanctioned", false, 3},
	{"Arbitrum: Bridge", ocBridge, 1, 1, false, "", false, 15},
	{"Optimism: Gateway", ocBridge, 1, 1, false, "", false, 10},
	{"Base: Bridge", ocBridge, 5, 1, false, "", false, 15},
	{"Stargate: Router", ocBridge, 7, 1, true, "", false, 10},
	{"Wormhole: Token Bridge", ocBridge, 7, 1, false, "", false, 8},
	{"Across: SpokePool", ocBridge, 7, 1, false, "", false, 8},
	{"Multichain: Router", ocBridge, 3, 1, false, "exploit", false, 2},
	{"Paradigm", ocFund, 1, 1, false, "", false, 3},
	{"a16z crypto", ocFund, 1, 1.5, false, "", false, 3},
	{"Polychain Capital", ocFund, 1, 1, false, "", false, 2},
	{"Galaxy Digital", ocFund, 5, 1, false, "", false, 3},
	{"Pantera Capital", ocFund, 1, 1, false, "", false, 2},
	{"Binance Labs", ocFund, 2, 1, false, "", false, 2},
	{"Euler Finance Exploiter", ocExploiter, 1, 1, false, "exploit", false, 2},
	{"Lazarus Group", ocExploiter, 3, 1, false, "sanctioned", false, 2},
}

// ---- wallets ------------------------------------------------------------------------

type ocWallet struct {
	addr     string
	role     ocRole
	entity   int // index into ocEntities, -1 for none
	weight   float64
	firstDay int // active day range, inclusive
	lastDay  int
	wakeLast bool // dormant wallet that wakes up on the last day
	hubs     []int32
	peers    []int32
}

func (w *ocWallet) activeOn(d, last int) bool {
	if d >= w.firstDay && d <= w.lastDay {
		return true
	}
	return w.wakeLast && d == last
}

type ocKey struct{ w, t int32 }

type ocChain struct {
	def     ocChainDef
	tokens  []*ocToken // index 0 is the native coin
	tokCum  []float64  // cumulative token weights
	wallets []*ocWallet
	byRole  [ocBridge + 1][]int32
	lenders []int32
	init    map[ocKey]*big.Int // opening balances at g.Start
	held    [][]int32          // tokens each non-hub wallet holds at g.Start
}

type ocWorld struct {
	chains []*ocChain
	hour0  time.Time // first price hour
	hours  int
	nDays  int
}

// hour returns the price-hour index of unix second t.
func (w *ocWorld) hour(t int64) int { return int((t - w.hour0.Unix()) / 3600) }

func ocHex(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return "0x" + hex.EncodeToString(b)
}

func ocLogNorm(rng *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*rng.NormFloat64())
}

// buildOnchainWorld derives the whole static world from the generator's seed and window.
func buildOnchainWorld(g *Generator) *ocWorld {
	w := &ocWorld{hour0: g.Start.Truncate(time.Hour), nDays: len(g.Days())}
	w.hours = int(g.End.Truncate(time.Hour).Sub(w.hour0)/time.Hour) + 1
	prices := ocBuildPrices(g, w.hours)
	synth := ocSynthTokens(g)
	var ethNonEntity []string
	for _, cd := range ocChainDefs {
		c := &ocChain{def: cd}
		ocBuildTokens(g, c, prices, synth, w.hours)
		ethNonEntity = ocBuildWallets(g, c, w.nDays, ethNonEntity)
		ocBuildBalances(g, c)
		w.chains = append(w.chains, c)
	}
	return w
}

// ocBuildPrices walks one hourly series per price key (sorted keys, own stream each).
func ocBuildPrices(g *Generator, hours int) map[string][]float64 {
	keys := make([]string, 0, len(ocPriceDefs))
	for k := range ocPriceDefs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string][]float64, len(keys))
	for _, k := range keys {
		out[k] = ocWalk(g.RNG("onchain/price/"+k), ocPriceDefs[k], hours)
	}
	return out
}

func ocWalk(rng *rand.Rand, d ocPriceDef, hours int) []float64 {
	px := make([]float64, hours)
	if d.stable {
		x := 0.0
		for i := range px {
			x = 0.9*x + 0.0004*rng.NormFloat64()
			x = math.Max(-0.01, math.Min(0.01, x))
			px[i] = 1 + x
		}
		return px
	}
	p := d.p0 * math.Exp(0.1*rng.NormFloat64())
	for i := range px {
		p *= math.Exp(d.vol*rng.NormFloat64() - d.vol*d.vol/2)
		px[i] = p
	}
	return px
}

type ocSynth struct {
	symbol, name, asset string
	decimals            int
	chains              int
	p0, vol             float64
	addrs               [3]string
}

// ocSynthTokens makes the long tail of tokens beyond the named catalogue. Each has a
// home chain; about a fifth are bridged to a second chain under the same asset_id.
func ocSynthTokens(g *Generator) []*ocSynth {
	rng := g.RNG("onchain/tokens")
	need := [3]int{}
	for i, cd := range ocChainDefs {
		need[i] = max(0, g.Scale.ChainTokens-len(ocCatalog[cd.name]))
	}
	used := map[string]bool{}
	for _, l := range ocCatalog {
		for _, t := range l {
			used[t.symbol] = true
		}
	}
	var out []*ocSynth
	for i := 0; need[0]+need[1]+need[2] > 0; i++ {
		pre := ocSynthPrefix[rng.IntN(len(ocSynthPrefix))]
		suf := ocSynthSuffix[rng.IntN(len(ocSynthSuffix))]
		sym := strings.ToUpper(pre[:min(len(pre), 3+rng.IntN(2))])
		if rng.IntN(3) == 0 {
			sym += strings.ToUpper(suf[:1])
		}
		for n := 2; used[sym]; n++ {
			sym = fmt.Sprintf("%s%d", strings.TrimRight(sym, "0123456789"), n)
		}
		used[sym] = true
		s := &ocSynth{symbol: sym, name: pre + " " + suf, asset: strings.ToLower(sym), decimals: 18,
			p0: math.Pow(10, -6+8*rng.Float64()), vol: 0.01 + 0.02*rng.Float64()}
		switch r := rng.IntN(20); {
		case r < 2:
			s.decimals = 9
		case r < 3:
			s.decimals = 6
		case r < 4:
			s.decimals = 8
		}
		home := i % 3
		if need[home] == 0 {
			for j := range need {
				if need[j] > 0 {
					home = j
					break
				}
			}
		}
		s.chains = 1 << home
		need[home]--
		if rng.IntN(5) == 0 {
			other := (home + 1 + rng.IntN(2)) % 3
			if need[other] > 0 {
				s.chains |= 1 << other
				need[other]--
			}
		}
		for j := range s.addrs {
			s.addrs[j] = ocHex(rng, 20)
		}
		out = append(out, s)
	}
	return out
}

func ocBuildTokens(g *Generator, c *ocChain, prices map[string][]float64, synth []*ocSynth, hours int) {
	mk := func(d ocTokenDef, native bool) *ocToken {
		t := &ocToken{addr: d.addr, symbol: d.symbol, name: d.name, decimals: d.decimals, asset: d.asset,
			weight: d.weight, native: native, logo: "https://assets.mdq.example/tokens/" + d.asset + ".png"}
		if d.priceKey != "" {
			t.px = prices[d.priceKey]
			t.stable = ocPriceDefs[d.priceKey].stable
		} else {
			t.shadow = 0.004
		}
		return t
	}
	c.tokens = append(c.tokens, mk(ocNatives[c.def.name], true))
	cat := ocCatalog[c.def.name]
	for i := 0; i < len(cat) && i < g.Scale.ChainTokens; i++ {
		c.tokens = append(c.tokens, mk(cat[i], false))
	}
	ci := 0
	for i, cd := range ocChainDefs {
		if cd.name == c.def.name {
			ci = i
		}
	}
	rank := 0
	for _, s := range synth {
		if s.chains&(1<<ci) == 0 {
			continue
		}
		// The price series of a synthetic asset is shared by its chains: derive it from
		// the asset's own stream.
		key := "synth/" + s.asset
		px, ok := prices[key]
		if !ok {
			px = ocWalk(g.RNG("onchain/price/"+key), ocPriceDef{p0: s.p0, vol: s.vol}, hours)
			prices[key] = px
		}
		rank++
		c.tokens = append(c.tokens, &ocToken{addr: s.addrs[ci], symbol: s.symbol, name: s.name,
			decimals: s.decimals, asset: s.asset, weight: 1.5 / float64(rank+1), px: px,
			logo: "https://assets.mdq.example/tokens/" + s.asset + ".png"})
	}
	total := 0.0
	for _, t := range c.tokens {
		total += t.weight
		c.tokCum = append(c.tokCum, total)
	}
}

// ocBuildWallets creates the entity wallets (per the catalogue) and the non-entity
// population of the chain. On bsc and base about a third of the non-entity wallets reuse
// an Ethereum address (the same key on several chains).
func ocBuildWallets(g *Generator, c *ocChain, nDays int, ethNonEntity []string) []string {
	rng := g.RNG("onchain/wallets/" + c.def.name)
	seen := map[string]bool{ocZeroAddr: true}
	add := func(w *ocWallet) int32 {
		for seen[w.addr] {
			w.addr = ocHex(rng, 20)
		}
		seen[w.addr] = true
		c.wallets = append(c.wallets, w)
		idx := int32(len(c.wallets) - 1)
		c.byRole[w.role] = append(c.byRole[w.role], idx)
		return idx
	}
	W := g.Scale.ChainWallets
	scale := math.Sqrt(float64(W) / 1500)
	last := nDays - 1
	for ei, e := range ocEntities {
		if e.chains&c.def.bit == 0 {
			continue
		}
		k := max(1, int(math.Round(e.k*scale)))
		for j := 0; j < k; j++ {
			var addr string
			if e.shared {
				addr = ocHex(g.RNG(fmt.Sprintf("onchain/entity/%s/%d", e.name, j)), 20)
			} else {
				addr = ocHex(g.RNG(fmt.Sprintf("onchain/entity/%s/%s/%d", e.name, c.def.name, j)), 20)
			}
			wt := e.weight / float64(k) * (0.5 + rng.Float64())
			if !e.role.hub() {
				wt = e.weight * (0.5 + rng.Float64())
			}
			idx := add(&ocWallet{addr: addr, role: e.role, entity: ei, weight: wt, lastDay: last})
			if e.lender {
				c.lenders = append(c.lenders, idx)
			}
		}
	}
	n := max(W-len(c.wallets), 60)
	var nonEntity []string
	for i := 0; i < n; i++ {
		w := &ocWallet{entity: -1, lastDay: last}
		if c.def.name != "ethereum" && i < len(ethNonEntity) && rng.IntN(3) == 0 {
			w.addr = ethNonEntity[i]
		} else {
			w.addr = ocHex(rng, 20)
		}
		r := rng.Float64()
		switch {
		case i < max(2, n/100):
			w.role, w.weight = ocMEV, 4+4*rng.Float64()
		case r < 0.06:
			w.role, w.weight = ocWhale, ocLogNorm(rng, 3, 0.5)
			if rng.IntN(5) == 0 { // a whale that went quiet
				w.lastDay = max(0, last-2-rng.IntN(max(1, nDays/2)))
			}
		case r < 0.24:
			w.role, w.weight = ocTrader, ocLogNorm(rng, 2.5, 0.5)
			if rng.IntN(7) == 0 {
				w.lastDay = max(0, last-2-rng.IntN(max(1, nDays/2)))
			}
		case r < 0.34:
			w.role, w.weight = ocDormant, 0.6
			w.lastDay = rng.IntN(max(1, nDays/3))
			w.wakeLast = rng.IntN(6) == 0
		default:
			w.role, w.weight = ocUser, math.Min(20, 0.5/math.Pow(1-rng.Float64(), 0.6))
			if rng.IntN(5) < 2 {
				w.firstDay = rng.IntN(nDays)
			}
			if rng.IntN(4) == 0 {
				w.lastDay = w.firstDay + rng.IntN(max(1, last-2-w.firstDay))
				w.lastDay = min(w.lastDay, max(w.firstDay, last-2))
			}
		}
		add(w)
		nonEntity = append(nonEntity, w.addr)
	}
	// Hubs initiate about a third of transactions: scale their activity weights against
	// the rest of the population (relative weights among hubs are kept).
	var hubW, restW float64
	for _, w := range c.wallets {
		if w.role.hub() {
			hubW += w.weight
		} else {
			restW += w.weight
		}
	}
	for _, w := range c.wallets {
		if w.role.hub() {
			w.weight *= 0.5 * restW / hubW
		}
	}
	// Counterparty preferences: each non-hub wallet trades with a few hubs and peers.
	pickRole := func(r ocRole) int32 {
		l := c.byRole[r]
		if len(l) == 0 {
			return -1
		}
		tot := 0.0
		for _, i := range l {
			tot += c.wallets[i].weight
		}
		x := rng.Float64() * tot
		for _, i := range l {
			x -= c.wallets[i].weight
			if x <= 0 {
				return i
			}
		}
		return l[len(l)-1]
	}
	var bigPool, smallPool []int32
	for i, w := range c.wallets {
		switch w.role {
		case ocWhale, ocFund, ocTrader, ocExploiter:
			bigPool = append(bigPool, int32(i))
		case ocUser:
			smallPool = append(smallPool, int32(i))
		}
	}
	smallPool = append(smallPool, bigPool...)
	for i, w := range c.wallets {
		if w.role.hub() {
			continue
		}
		addHub := func(r ocRole) {
			if h := pickRole(r); h >= 0 {
				w.hubs = append(w.hubs, h)
			}
		}
		addHub(ocCEX)
		addHub(ocDEX)
		if rng.IntN(2) == 0 {
			addHub(ocCEX)
		}
		if rng.IntN(2) == 0 {
			addHub(ocDeFi)
		}
		if rng.IntN(3) == 0 {
			addHub(ocBridge)
		}
		if w.role.level() >= 2 && rng.IntN(3) == 0 {
			addHub(ocMM)
		}
		if w.role == ocExploiter {
			addHub(ocBridge)
			if len(c.byRole[ocDeFi]) > 0 {
				// the mixer, when the chain has one
				for _, d := range c.byRole[ocDeFi] {
					if ocEntities[c.wallets[d].entity].risk == "sanctioned" {
						w.hubs = append(w.hubs, d)
					}
				}
			}
		}
		pool, np := smallPool, 1+rng.IntN(2)
		if w.role.level() >= 2 {
			pool, np = bigPool, 2+rng.IntN(3)
		}
		for j := 0; j < np && len(pool) > 1; j++ {
			p := pool[rng.IntN(len(pool))]
			if p != int32(i) {
				w.peers = append(w.peers, p)
			}
		}
	}
	if c.def.name == "ethereum" {
		return nonEntity
	}
	return ethNonEntity
}

// ocUSDToRaw converts a USD value of token t at hour h to a raw amount.
func ocUSDToRaw(usd float64, t *ocToken, h int) *big.Int {
	f := new(big.Float).SetFloat64(usd / t.price(h) * math.Pow10(t.decimals))
	r, _ := f.Int(nil)
	return r
}

// ocBuildBalances sets the opening balance of every wallet: hubs hold every token in
// depth, other wallets the native coin plus a few tokens sized by their role.
func ocBuildBalances(g *Generator, c *ocChain) {
	rng := g.RNG("onchain/balances/" + c.def.name)
	c.init = map[ocKey]*big.Int{}
	c.held = make([][]int32, len(c.wallets))
	maxW := 0.0
	for _, t := range c.tokens {
		maxW = math.Max(maxW, t.weight)
	}
	for i, w := range c.wallets {
		if w.role.hub() {
			med := map[ocRole]float64{ocCEX: 80e6, ocMM: 20e6, ocDEX: 30e6, ocDeFi: 60e6, ocBridge: 15e6}[w.role]
			for ti, t := range c.tokens {
				usd := ocLogNorm(rng, med, 0.8) * math.Max(0.03, t.weight/maxW)
				c.init[ocKey{int32(i), int32(ti)}] = ocUSDToRaw(usd, t, 0)
			}
			continue
		}
		var med float64
		var extra int
		switch w.role.level() {
		case 1:
			med, extra = 3_000, 1+rng.IntN(3)
		case 2:
			med, extra = 80_000, 2+rng.IntN(4)
		default:
			med, extra = 3_000_000, 3+rng.IntN(6)
		}
		toks := []int32{0}
		for j := 0; j < extra*3 && len(toks) < extra+1; j++ {
			t := int32(ocPickCum(rng, c.tokCum))
			if !ocHas(toks, t) {
				toks = append(toks, t)
			}
		}
		for _, ti := range toks {
			usd := ocLogNorm(rng, med, 1.0) / float64(len(toks))
			if ti == 0 {
				usd = math.Max(usd, med/20) // gas money
			}
			c.init[ocKey{int32(i), ti}] = ocUSDToRaw(usd, c.tokens[ti], 0)
		}
		c.held[i] = toks
	}
}

func ocHas(l []int32, v int32) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// ocPickCum picks an index from a cumulative weight list.
func ocPickCum(rng *rand.Rand, cum []float64) int {
	x := rng.Float64() * cum[len(cum)-1]
	i := sort.SearchFloat64s(cum, x)
	if i >= len(cum) {
		i = len(cum) - 1
	}
	return i
}
