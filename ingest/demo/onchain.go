package demo

import (
	"context"
	"fmt"
	"sort"
	"time"

	"mdq/lake"
)

// genOnchain writes the on-chain tables: tokens, label sources, labels, ENS names and
// hourly prices first, then one transfers partition per chain and day (one progress step
// per day), then current balances (the final step).
//
// Shape: three chains (ethereum, bsc, base), each with the native coin at the zero
// address plus Scale.ChainTokens ERC-20s (USDC, USDT and WETH on all three, chain-only
// tokens, two unpriced tokens) and Scale.ChainWallets wallets: labelled exchanges,
// market makers, DEX routers and pools, DeFi protocols (lending pools that give flash
// loans), bridges, funds, exploiters, whales, active traders, MEV bots, dormant wallets
// and ordinary users. Non-hub wallets deal mostly with a few preferred hubs and peers.
// Balances start from a deterministic opening position (buildOnchainWorld) and every
// transfer is paid from what the sender holds, so the written balances equal the
// opening balances plus the net of the transfers and never go negative.
func genOnchain(ctx context.Context, g *Generator) error {
	w := buildOnchainWorld(g)
	if err := ocWriteStatic(ctx, g, w); err != nil {
		return err
	}
	states := make([]*ocState, len(w.chains))
	for i, c := range w.chains {
		states[i] = newOcState(g, w, c)
	}
	start, end := g.Start.Unix(), g.End.Unix()
	for d, day := range g.Days() {
		sp := ocSpan{from: max(day.Unix(), start), to: min(day.Unix()+86400, end+1)}
		for _, s := range states {
			if err := ctx.Err(); err != nil {
				return err
			}
			_, err := g.W.Write(ctx, lake.OnchainTransfers, []string{s.c.def.name, Date(day)}, func(app lake.AppendFunc) error {
				return s.genDay(g, d, sp, app)
			})
			if err != nil {
				return err
			}
		}
		g.Step("onchain")
	}
	for _, s := range states {
		if err := ocWriteBalances(ctx, g, s); err != nil {
			return err
		}
	}
	g.Step("onchain")
	return nil
}

func ocWriteStatic(ctx context.Context, g *Generator, w *ocWorld) error {
	_, err := g.W.Write(ctx, lake.OnchainTokens, nil, func(app lake.AppendFunc) error {
		for _, c := range w.chains {
			for _, t := range c.tokens {
				if err := app(c.def.name, t.addr, t.symbol, t.name, int32(t.decimals), t.logo, t.asset); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = g.W.Write(ctx, lake.OnchainLabelSources, nil, func(app lake.AppendFunc) error {
		for _, s := range ocSources {
			if err := app(s.id, s.name, s.kind, int32(s.priority), s.url); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = g.W.Write(ctx, lake.OnchainLabels, nil, func(app lake.AppendFunc) error {
		for _, r := range ocLabels(g, w) {
			if err := app(r.address, r.entity, r.walletType, r.confidence, r.risk, r.source, r.observed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = g.W.Write(ctx, lake.OnchainENS, nil, func(app lake.AppendFunc) error {
		for _, r := range ocENS(g, w) {
			if err := app(r.address, r.name, r.primary, r.registered); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range w.chains {
		_, err = g.W.Write(ctx, lake.OnchainPrices, []string{c.def.name}, func(app lake.AppendFunc) error {
			for _, t := range c.tokens {
				if !t.priced() {
					continue
				}
				for h := 0; h < w.hours; h++ {
					if err := app(t.addr, w.hour0.Add(time.Duration(h)*time.Hour), t.px[h]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ocWriteBalances writes every non-zero running balance of a chain as of g.End.
func ocWriteBalances(ctx context.Context, g *Generator, s *ocState) error {
	keys := make([]ocKey, 0, len(s.bal))
	for k, v := range s.bal {
		if v.Sign() != 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].w != keys[j].w {
			return keys[i].w < keys[j].w
		}
		return keys[i].t < keys[j].t
	})
	_, err := g.W.Write(ctx, lake.OnchainBalances, []string{s.c.def.name}, func(app lake.AppendFunc) error {
		for _, k := range keys {
			b := s.bal[k]
			t := s.c.tokens[k.t]
			if b.Sign() < 0 { // senders only pay what they hold
				return fmt.Errorf("onchain: negative balance %s of %s on %s", b, t.symbol, s.c.def.name)
			}
			if err := app(s.c.wallets[k.w].addr, t.addr, b.String(), ocAmount(b, t.decimals), g.End); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}
