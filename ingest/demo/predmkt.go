package demo

import (
	"context"
	"fmt"
	"time"

	"mdq/lake"
)

// genPredmkt generates the prediction-market tables: day by day the tape
// (predmkt_book_events), the fills it implies (predmkt_trades, two rows per tape trade)
// and the family split of the tape (predmkt_family_book_events); then the markets,
// tokens, resolutions and profiles. Only one day of rows is held in memory at a time.
//
// Realized PnL in this data is meant to be read as: per wallet and market, sells minus
// buys in USD plus the net shares of the winning token (1 USD per share); an invalid
// resolution pays nothing. Market makers can hold short (minted) inventory, which the
// same formula covers.
func genPredmkt(ctx context.Context, g *Generator) error {
	w := newPmWorld(g)
	var day pmDay
	for di, d := range g.Days() {
		if err := ctx.Err(); err != nil {
			return err
		}
		lo := max(d.UnixMilli(), w.startMs)
		hi := min(d.UnixMilli()+pmDayMs, w.endMs+1)
		day.evs, day.fills = day.evs[:0], day.fills[:0]
		for _, m := range w.markets {
			w.genMarketDay(m, di, lo, hi, &day)
		}
		if err := w.writeDay(ctx, Date(d), &day); err != nil {
			return err
		}
		g.Step("predmkt")
	}
	if err := w.writeStatic(ctx); err != nil {
		return err
	}
	g.Step("predmkt")
	return nil
}

func (w *pmWorld) tokenOf(tok int32) (*pmMarket, int) { return w.markets[tok/2], int(tok % 2) }

func (w *pmWorld) appendEv(app lake.AppendFunc, ev *pmEv) error {
	m, k := w.tokenOf(ev.tok)
	snap := int32(0)
	if ev.typ == pmEvBook {
		snap = 1
	}
	return app(pmEvNames[ev.typ], m.tokens[k], ev.ts, ev.lts, ev.seq, pmSideNames[ev.side], ev.price, ev.size,
		ev.bb, ev.ba, ev.bids, ev.asks, snap, ev.status)
}

func pmMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pmIDs derives a fill's trade ids (taker, maker) and settlement hash from its token
// and seq, which are unique.
func (w *pmWorld) pmIDs(tok int32, seq int64) (taker, maker, tx string) {
	key := w.idSalt ^ (uint64(tok)<<40 | uint64(seq))
	h := [6]uint64{}
	x := key
	for i := range h {
		x = pmMix(x)
		h[i] = x
	}
	uuid := func(a, b uint64) string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xfff, 0x8000|(b>>48)&0x3fff, b&0xffffffffffff)
	}
	return uuid(h[0], h[1]), uuid(h[2], h[3]), fmt.Sprintf("0x%016x%016x%016x%016x", h[4], h[5], pmMix(h[4]), pmMix(h[5]))
}

func (w *pmWorld) writeDay(ctx context.Context, date string, d *pmDay) error {
	if _, err := w.g.W.Write(ctx, lake.PredmktBookEvents, []string{date}, func(app lake.AppendFunc) error {
		for i := range d.evs {
			if err := w.appendEv(app, &d.evs[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if _, err := w.g.W.Write(ctx, lake.PredmktTrades, []string{date}, func(app lake.AppendFunc) error {
		for i := range d.fills {
			f := &d.fills[i]
			m, k := w.tokenOf(f.tok)
			tid, mid, tx := w.pmIDs(f.tok, f.seq)
			usd := f.price * f.size
			makerSide := pmSideBuy
			if f.side == pmSideBuy {
				makerSide = pmSideSell
			}
			if err := app(tid, f.ts, f.lts, f.seq, m.tokens[k], m.cond, int32(k), w.wallets[f.taker].addr, "taker",
				pmSideNames[f.side], f.price, f.size, usd, tx); err != nil {
				return err
			}
			if err := app(mid, f.ts, f.lts, f.seq, m.tokens[k], m.cond, int32(k), w.wallets[f.maker].addr, "maker",
				pmSideNames[makerSide], f.price, f.size, usd, tx); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// The additive family layout: the family tokens' rows of the same day, per asset
	// and tenor.
	groups := make([][]int32, len(pmFamAssets)*len(pmFamTenors))
	for i := range d.evs {
		m, _ := w.tokenOf(d.evs[i].tok)
		if m.famAsset != "" {
			key := m.famKey()
			groups[key] = append(groups[key], int32(i))
		}
	}
	for key, idx := range groups {
		if len(idx) == 0 {
			continue
		}
		asset, tenor := pmFamAssets[key/len(pmFamTenors)], pmFamTenors[key%len(pmFamTenors)]
		if _, err := w.g.W.Write(ctx, lake.PredmktFamilyBookEvents, []string{asset, tenor, date}, func(app lake.AppendFunc) error {
			for _, i := range idx {
				if err := w.appendEv(app, &d.evs[i]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func (m *pmMarket) famKey() int {
	a, t := 0, 0
	for i, s := range pmFamAssets {
		if s == m.famAsset {
			a = i
		}
	}
	for i, s := range pmFamTenors {
		if s == m.famTenor {
			t = i
		}
	}
	return a*len(pmFamTenors) + t
}

func (w *pmWorld) writeStatic(ctx context.Context) error {
	ts := func(t time.Time) time.Time { return t.UTC() }
	if _, err := w.g.W.Write(ctx, lake.PredmktMarkets, nil, func(app lake.AppendFunc) error {
		for _, m := range w.markets {
			if err := app(m.cond, m.question, m.slug, pmCategories[m.cat], m.famAsset, m.famTenor,
				ts(m.created), ts(m.end), m.closed); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if _, err := w.g.W.Write(ctx, lake.PredmktTokens, nil, func(app lake.AppendFunc) error {
		for _, m := range w.markets {
			for k := 0; k < 2; k++ {
				if err := app(m.tokens[k], m.cond, int32(k), m.outcomes[k]); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if _, err := w.g.W.Write(ctx, lake.PredmktResolutions, nil, func(app lake.AppendFunc) error {
		for _, m := range w.markets {
			var err error
			switch {
			case m.resolvedTs.IsZero():
				continue
			case m.status == pmInvalid:
				err = app(m.cond, ts(m.resolvedTs), nil, true)
			default:
				err = app(m.cond, ts(m.resolvedTs), int32(m.winner), false)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	_, err := w.g.W.Write(ctx, lake.PredmktProfiles, nil, func(app lake.AppendFunc) error {
		for i := range w.wallets {
			wl := &w.wallets[i]
			if err := app(wl.addr, wl.pseudonym, wl.display); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}
