package query

import (
	"slices"
)

// The smart-money aggregates from the tape index's fills: the same rows
// smart_money_flows.sql and smart_money_buys.sql return (the cohort of the board's
// category, fills with ts in [from, now], inner join on the markets file, the category
// filter, exact micro-unit sums), computed in Go over the window's fills only.

// smartCohort is the cohort of one category of the board, as the SQL selects it from
// the board table: the stored (rounded) figures against SPEC's thresholds.
func smartCohort(b *Board, cat string) map[string]bool {
	out := map[string]bool{}
	for _, e := range b.Cats[cat] {
		if e.PnL >= 1000 && e.Resolved >= 5 && e.Volume >= 5000 {
			out[e.Wallet] = true
		}
	}
	return out
}

// smartScan calls f with each cohort fill of a market in the category (all: every
// market) with ts in [from, now], file by file; first reports whether the fill is the
// first of its (market, wallet) pair in the file, so distinct wallets are counted
// without hashing every fill.
func (ix *tapeIndex) smartScan(b *Board, cat string, from, now int64, f func(fl *tapeFills, i int, m *tapeMarket, first bool)) {
	cohort := smartCohort(b, cat)
	if len(cohort) == 0 {
		return
	}
	for _, tf := range ix.trades {
		if !tf.span.ok || tf.span.maxTS < from || tf.span.minTS > now {
			continue
		}
		fl := &tf.fills
		lo, _ := slices.BinarySearch(fl.ts, from)
		hi := len(fl.ts)
		if now < maxInt64 {
			hi, _ = slices.BinarySearch(fl.ts, now+1)
		}
		if hi <= lo {
			continue
		}
		// Per dictionary code: 1 in the cohort (or market kept), 2 not, 0 not yet known.
		inCohort := make([]uint8, len(fl.wallets))
		kept := make([]uint8, len(fl.conds))
		mkts := make([]tapeMarket, len(fl.conds))
		pairs := map[uint64]struct{}{}
		for i := lo; i < hi; i++ {
			w := fl.wallet[i]
			if inCohort[w] == 0 {
				inCohort[w] = 2
				if cohort[fl.wallets[w]] {
					inCohort[w] = 1
				}
			}
			if inCohort[w] != 1 {
				continue
			}
			c := fl.cond[i]
			if kept[c] == 0 {
				kept[c] = 2
				if m, ok := ix.markets[fl.conds[c]]; ok && (cat == "all" || m.category == cat) {
					kept[c], mkts[c] = 1, m
				}
			}
			if kept[c] != 1 {
				continue
			}
			k := uint64(c)<<32 | uint64(w)
			_, seen := pairs[k]
			if !seen {
				pairs[k] = struct{}{}
			}
			f(fl, i, &mkts[c], !seen)
		}
	}
}

// smartFlows is smart_money_flows.sql's rows from the index.
func (ix *tapeIndex) smartFlows(b *Board, cat string, from, now int64) []smartFlowAgg {
	type acc struct {
		a       smartFlowAgg
		wallets map[string]bool
	}
	byCond := map[string]*acc{}
	var cur *acc
	var curFile *tapeFills
	var curCode uint32
	ix.smartScan(b, cat, from, now, func(fl *tapeFills, i int, m *tapeMarket, first bool) {
		if cur == nil || curFile != fl || curCode != fl.cond[i] {
			cond := fl.conds[fl.cond[i]]
			cur = byCond[cond]
			if cur == nil {
				cur = &acc{a: smartFlowAgg{cond: cond, title: m.question, slug: m.slug, last: fl.ts[i]}, wallets: map[string]bool{}}
				if y, ok := ix.yes[cond]; ok {
					cur.a.yes = &y
				}
				byCond[cond] = cur
			}
			curFile, curCode = fl, fl.cond[i]
		}
		a := cur
		if first {
			a.wallets[fl.wallets[fl.wallet[i]]] = true
		}
		switch fl.side[i] {
		case fillBuy:
			a.a.buy += fl.usd[i]
		case fillSell:
			a.a.sell += fl.usd[i]
		}
		a.a.trades++
		a.a.last = max(a.a.last, fl.ts[i])
	})
	out := make([]smartFlowAgg, 0, len(byCond))
	for _, a := range byCond {
		a.a.wallets = int64(len(a.wallets))
		out = append(out, a.a)
	}
	return out
}

// smartBuys is smart_money_buys.sql's rows from the index.
func (ix *tapeIndex) smartBuys(b *Board, cat string, from, now int64) []smartSide {
	type key struct {
		cond    string
		outcome int32
	}
	type acc struct {
		s       smartSide
		wallets map[string]bool
	}
	by := map[key]*acc{}
	type local struct {
		fl   *tapeFills
		c, w uint32
		o    int32
	}
	accs := map[local]*acc{} // (file, market code, outcome) -> its accumulator
	seen := map[local]bool{} // (file, market code, wallet code, outcome) already counted
	ix.smartScan(b, cat, from, now, func(fl *tapeFills, i int, m *tapeMarket, _ bool) {
		if fl.side[i] != fillBuy {
			return
		}
		lk := local{fl, fl.cond[i], 0, fl.outcome[i]}
		a := accs[lk]
		if a == nil {
			k := key{fl.conds[fl.cond[i]], fl.outcome[i]}
			if a = by[k]; a == nil {
				a = &acc{s: smartSide{cond: k.cond, title: m.question, slug: m.slug, token: fl.toks[fl.token[i]], idx: int(k.outcome), last: fl.ts[i]},
					wallets: map[string]bool{}}
				by[k] = a
			}
			accs[lk] = a
		}
		if wk := (local{fl, fl.cond[i], fl.wallet[i], fl.outcome[i]}); !seen[wk] {
			seen[wk] = true
			a.wallets[fl.wallets[fl.wallet[i]]] = true
		}
		a.s.usd += fl.usd[i]
		a.s.size += fl.size[i]
		a.s.last = max(a.s.last, fl.ts[i])
	})
	out := make([]smartSide, 0, len(by))
	for _, a := range by {
		a.s.wallets = int64(len(a.wallets))
		out = append(out, a.s)
	}
	return out
}
