package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Address labels from several sources that sometimes disagree, and ENS names.

type ocSource struct {
	id, name, kind string
	priority       int
	url            string
}

var ocSources = []ocSource{
	{"mdq_manual", "mdq manual curation", "manual", 1, "https://labels.mdq.example/manual"},
	{"exchange_disclosures", "Exchange proof-of-reserve disclosures", "exchange_disclosure", 2, "https://labels.mdq.example/exchange-disclosures"},
	{"cluster_heuristics", "Address clustering heuristics", "heuristic", 3, "https://labels.mdq.example/clustering"},
	{"community_tags", "Community-submitted tags", "community", 4, "https://labels.mdq.example/community"},
	{"explorer_tags", "Public block-explorer name tags", "community", 5, "https://labels.mdq.example/explorer-tags"},
}

type ocLabelRow struct {
	address, entity, walletType, confidence, risk, source string
	observed                                              time.Time
}

type ocLabelTruth struct {
	addr, entity, walletType, risk string
	role                           ocRole
	extra                          bool // label-only address, not in the transfer population
}

// ocLabels builds the label rows. Addresses are collected chain by chain in wallet order
// (a shared address is labelled once).
func ocLabels(g *Generator, w *ocWorld) []ocLabelRow {
	rng := g.RNG("onchain/labels")
	seen := map[string]bool{}
	var truths []ocLabelTruth
	for _, c := range w.chains {
		n := map[int]int{}
		for _, wl := range c.wallets {
			if seen[wl.addr] {
				continue
			}
			var t ocLabelTruth
			switch {
			case wl.entity >= 0:
				e := ocEntities[wl.entity]
				n[wl.entity]++
				t = ocLabelTruth{entity: e.name, walletType: e.role.walletType(), risk: e.risk}
				if e.role == ocCEX {
					t.entity = fmt.Sprintf("%s %d", e.name, n[wl.entity])
				}
			case wl.role == ocWhale && rng.IntN(10) < 8:
				t = ocLabelTruth{entity: "Whale " + wl.addr[2:8], walletType: "individual"}
			case wl.role == ocTrader && rng.IntN(2) == 0:
				t = ocLabelTruth{entity: "Active Trader " + wl.addr[2:8], walletType: "individual"}
			case wl.role == ocMEV:
				t = ocLabelTruth{entity: "MEV Bot " + wl.addr[2:8], walletType: "individual"}
			case (wl.role == ocUser || wl.role == ocDormant) && rng.IntN(100) < 12:
				kinds := []string{"Airdrop Hunter", "NFT Collector", "DeFi User", "Early Adopter"}
				t = ocLabelTruth{entity: kinds[rng.IntN(len(kinds))] + " " + wl.addr[2:8], walletType: "individual"}
			default:
				continue
			}
			t.addr, t.role = wl.addr, wl.role
			seen[wl.addr] = true
			truths = append(truths, t)
		}
	}
	// Label-only addresses: exchange deposit addresses and other tagged wallets that do
	// not trade in the generated window.
	cexes := []string{"Binance", "Coinbase", "Kraken", "OKX", "Bybit", "KuCoin"}
	for i := 0; i < 150+g.Scale.ChainWallets/4; i++ {
		t := ocLabelTruth{addr: ocHex(rng, 20), extra: true}
		if seen[t.addr] {
			continue
		}
		seen[t.addr] = true
		switch r := rng.IntN(20); {
		case r < 11:
			t.entity, t.walletType, t.role = cexes[rng.IntN(len(cexes))]+" Deposit", "cex", ocCEX
		case r < 12:
			t.entity, t.walletType, t.role = "Phishing Scammer "+t.addr[2:6], "individual", ocUser
			t.risk = []string{"exploit", "sanctioned", "mixer"}[rng.IntN(3)]
		case r < 16:
			t.entity, t.walletType, t.role = "Gnosis Safe "+t.addr[2:6], "individual", ocUser
		default:
			t.entity, t.walletType, t.role = "Fund Wallet "+t.addr[2:6], "fund", ocFund
		}
		truths = append(truths, t)
	}

	var out []ocLabelRow
	end := g.End
	for _, t := range truths {
		var srcs []int
		p := func(x float64) bool { return rng.Float64() < x }
		switch {
		case t.risk != "":
			srcs = []int{0}
			if p(0.6) {
				srcs = append(srcs, 2)
			}
			if p(0.5) {
				srcs = append(srcs, 3)
			}
		case t.extra:
			srcs = []int{2 + rng.IntN(3)}
		case t.role == ocCEX:
			for i, x := range []float64{0.25, 0.85, 0.6, 0.3, 0.4} {
				if p(x) {
					srcs = append(srcs, i)
				}
			}
		case t.role.hub() || t.role == ocFund:
			for i, x := range []float64{0.4, 0, 0.8, 0.4, 0.5} {
				if p(x) {
					srcs = append(srcs, i)
				}
			}
		default:
			for i, x := range []float64{0.1, 0, 0.9, 0.3, 0.2} {
				if p(x) {
					srcs = append(srcs, i)
				}
			}
		}
		if len(srcs) == 0 {
			srcs = []int{2}
		}
		for j, si := range srcs {
			r := ocLabelRow{address: t.addr, entity: t.entity, walletType: t.walletType, risk: t.risk,
				source: ocSources[si].id, confidence: ocConfidence(rng, si),
				observed: end.Add(-time.Duration(rng.Int64N(int64(400 * 24 * time.Hour)))).Truncate(time.Second)}
			if j > 0 && p(0.3) { // a lower-priority source that disagrees
				switch rng.IntN(4) {
				case 0:
					r.entity = ocAltEntity(rng, t.entity)
				case 1:
					r.walletType = ocAltType(t.walletType)
				case 2:
					r.risk = ""
					if t.risk == "" && rng.IntN(3) == 0 {
						r.risk = "mixer"
					}
				default:
					r.entity, r.walletType = ocAltEntity(rng, t.entity), ocAltType(t.walletType)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

func ocConfidence(rng *rand.Rand, src int) string {
	switch src {
	case 0, 1:
		return "high"
	case 2:
		if rng.IntN(10) < 7 {
			return "medium"
		}
		return "low"
	case 3:
		if rng.IntN(2) == 0 {
			return "low"
		}
		return "medium"
	}
	if rng.IntN(4) == 0 {
		return "high"
	}
	return "medium"
}

func ocAltEntity(rng *rand.Rand, e string) string {
	base := e
	if i := strings.LastIndexByte(e, ' '); i > 0 {
		base = e[:i]
	}
	switch rng.IntN(3) {
	case 0:
		return base + " (unverified)"
	case 1:
		return base + " Hot Wallet"
	}
	return "Unknown Entity"
}

func ocAltType(t string) string {
	switch t {
	case "cex":
		return "market_maker"
	case "market_maker":
		return "fund"
	case "fund":
		return "individual"
	case "individual":
		return "fund"
	case "dex":
		return "defi"
	case "defi":
		return "dex"
	}
	return "defi"
}

type ocENSRow struct {
	address, name string
	primary       bool
	registered    time.Time
}

var ocENSAdj = []string{"based", "lucky", "quiet", "giga", "tiny", "alpha", "moon", "degen", "cosmic", "brave",
	"frosty", "golden", "silent", "rapid", "zen", "wild", "lazy", "pixel", "crypto", "hodl"}
var ocENSNoun = []string{"whale", "ape", "fox", "otter", "panda", "wizard", "builder", "farmer", "trader", "maxi",
	"punk", "knight", "sailor", "miner", "yield", "owl", "tiger", "falcon", "koala", "hacker"}
var ocENSFirst = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
	"mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "zoe"}

// ocENS names some Ethereum wallets: funds and whales often, users rarely.
func ocENS(g *Generator, w *ocWorld) []ocENSRow {
	rng := g.RNG("onchain/ens")
	used := map[string]bool{}
	name := func() string {
		for {
			var s string
			switch rng.IntN(3) {
			case 0:
				s = ocENSFirst[rng.IntN(len(ocENSFirst))]
			case 1:
				s = ocENSAdj[rng.IntN(len(ocENSAdj))] + ocENSNoun[rng.IntN(len(ocENSNoun))]
			default:
				s = ocENSNoun[rng.IntN(len(ocENSNoun))] + "-" + ocENSAdj[rng.IntN(len(ocENSAdj))]
			}
			if rng.IntN(2) == 0 {
				s += fmt.Sprint(rng.IntN(1000))
			}
			s += ".eth"
			if !used[s] {
				used[s] = true
				return s
			}
		}
	}
	reg := func() time.Time {
		return g.End.Add(-time.Duration(rng.Int64N(int64(4 * 365 * 24 * time.Hour)))).Truncate(time.Second)
	}
	var out []ocENSRow
	seenEntity := map[int]bool{}
	extras := 0
	for _, wl := range w.chains[0].wallets {
		var pct int
		switch wl.role {
		case ocWhale:
			pct = 60
		case ocFund, ocMM:
			pct = 80
		case ocTrader:
			pct = 30
		case ocUser, ocDormant:
			pct = 10
		}
		if pct == 0 || rng.IntN(100) >= pct {
			continue
		}
		if wl.entity >= 0 {
			if seenEntity[wl.entity] {
				continue
			}
			seenEntity[wl.entity] = true
			n := strings.ToLower(strings.NewReplacer(" ", "", ".", "", ":", "").Replace(ocEntities[wl.entity].name)) + ".eth"
			if !used[n] {
				used[n] = true
				out = append(out, ocENSRow{wl.addr, n, true, reg()})
				continue
			}
		}
		primary := rng.IntN(30) > 0 // a few own names but set no reverse record
		out = append(out, ocENSRow{wl.addr, name(), primary, reg()})
		if rng.IntN(100) < 15 || (extras == 0 && primary && wl.role == ocWhale) {
			for k := 0; k < 1+rng.IntN(2); k++ {
				out = append(out, ocENSRow{wl.addr, name(), false, reg()})
				extras++
			}
		}
	}
	return out
}
