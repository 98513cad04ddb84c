package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
)

// ocFixture is a hand-built on-chain lake: a few transfers, tokens and labels.
type ocFixture struct {
	transfers []ocRaw
	tokens    [][7]any            // chain, address, symbol, name, decimals, logo, asset
	labels    [][7]any            // address, entity, wallet_type, confidence, risk_flag, source, observed_at
	balances  map[string][][5]any // chain -> address, token, balance_raw, balance, as_of
	prices    map[string][][3]any // chain -> token, hour, price
	ens       [][4]any            // address, name, is_primary, registered_at
}

func (f *ocFixture) balance(chain, addr, token string, bal float64) {
	if f.balances == nil {
		f.balances = map[string][][5]any{}
	}
	f.balances[chain] = append(f.balances[chain], [5]any{addr, token, "0", bal, testlake.Now()})
}

func (f *ocFixture) price(chain, token string, ago time.Duration, px float64) {
	if f.prices == nil {
		f.prices = map[string][][3]any{}
	}
	f.prices[chain] = append(f.prices[chain], [3]any{token, testlake.Now().Add(-ago).Truncate(time.Hour), px})
}

func (f *ocFixture) name(addr, name string, primary bool) {
	f.ens = append(f.ens, [4]any{addr, name, primary, testlake.Now().Add(-1000 * time.Hour)})
}

// ocAddr is a deterministic fixture address.
func ocAddr(i int) string { return fmt.Sprintf("0x%040x", 0xb000+i) }

// ocTok is a deterministic fixture token address.
func ocTok(i int) string { return fmt.Sprintf("0x%040x", 0x7000+i) }

// xfer adds one transfer on chain, ago before testlake.Now.
func (f *ocFixture) xfer(chain string, ago time.Duration, token, from, to string, amount float64, usd float64) {
	u := usd
	f.transfers = append(f.transfers, ocRaw{chain: chain, t: testlake.Now().Add(-ago).Truncate(time.Second), token: token,
		from: from, to: to, amount: amount, usd: u, priced: true})
}

func (f *ocFixture) token(chain, addr, symbol, name, asset string) {
	f.tokens = append(f.tokens, [7]any{chain, addr, symbol, name, int32(18), "https://logo.example/" + symbol + ".png", asset})
}

func (f *ocFixture) label(addr, entity, walletType, source string) {
	f.labels = append(f.labels, [7]any{addr, entity, walletType, "medium", "", source, testlake.Now().Add(-48 * time.Hour)})
}

// write puts the fixture into a fresh lake directory accepted by query.Open.
func (f *ocFixture) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	parts := map[[2]string][]ocRaw{}
	for _, r := range f.transfers {
		k := [2]string{r.chain, r.t.UTC().Format("2006-01-02")}
		parts[k] = append(parts[k], r)
	}
	keys := make([][2]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		rows := parts[k]
		_, err := w.Write(ctx, lake.OnchainTransfers, k[:], func(app lake.AppendFunc) error {
			for i, r := range rows {
				var usd any
				if r.priced {
					usd = r.usd
				}
				if err := app(int64(1000+i), r.t, fmt.Sprintf("0x%064x", i+1), int32(i), r.token, r.from, r.to,
					"0", r.amount, usd); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(ctx, lake.OnchainTokens, nil, func(app lake.AppendFunc) error {
		for _, r := range f.tokens {
			if err := app(r[:]...); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, lake.OnchainLabelSources, nil, func(app lake.AppendFunc) error {
		if err := app("manual", "Manual", "manual", int32(1), "https://labels.example/manual"); err != nil {
			return err
		}
		return app("community", "Community", "community", int32(4), "https://labels.example/community")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, lake.OnchainLabels, nil, func(app lake.AppendFunc) error {
		for _, r := range f.labels {
			if err := app(r[:]...); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for chain, rows := range f.balances {
		if _, err := w.Write(ctx, lake.OnchainBalances, []string{chain}, func(app lake.AppendFunc) error {
			for _, r := range rows {
				if err := app(r[:]...); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for chain, rows := range f.prices {
		if _, err := w.Write(ctx, lake.OnchainPrices, []string{chain}, func(app lake.AppendFunc) error {
			for _, r := range rows {
				if err := app(r[:]...); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(ctx, lake.OnchainENS, nil, func(app lake.AppendFunc) error {
		for _, r := range f.ens {
			if err := app(r[:]...); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := lake.WriteFileAtomic(filepath.Join(dir, lake.MarkerFile), []byte(`{"kind":"fixture"}`)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ocServe opens the fixture and returns its handler.
func (f *ocFixture) serve(t *testing.T) http.Handler {
	t.Helper()
	return (&handlers.API{Q: openQueries(t, f.write(t))}).Handler()
}
