package demo

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"mdq/lake"
)

type ocCountProgress struct{ n atomic.Int64 }

func (p *ocCountProgress) Start(int)   {}
func (p *ocCountProgress) Step(string) { p.n.Add(1) }
func (p *ocCountProgress) Done()       {}

var ocTestEnd = time.Date(2026, 10, 20, 13, 37, 0, 0, time.UTC)

// ocGenerate builds a Generator as Run does and runs only the on-chain part.
func ocGenerate(t *testing.T, dir string) *Generator {
	t.Helper()
	sc := Scales["tiny"]
	prog := &ocCountProgress{}
	opt := Options{Dir: dir, Scale: "tiny", Seed: 7, End: ocTestEnd, Progress: prog}
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	g := &Generator{Opt: opt, Scale: sc, End: ocTestEnd, Start: ocTestEnd.Add(-time.Duration(sc.Days) * 24 * time.Hour), W: w}
	if err := genOnchain(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if got, want := prog.n.Load(), int64(len(g.Days())+1); got != want {
		t.Fatalf("progress steps: got %d, want %d", got, want)
	}
	return g
}

func ocOpen(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, tb := range []*lake.Table{lake.OnchainTransfers, lake.OnchainTokens, lake.OnchainPrices, lake.OnchainLabels,
		lake.OnchainLabelSources, lake.OnchainENS, lake.OnchainBalances} {
		glob := filepath.Join(dir, filepath.FromSlash(tb.Glob()))
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet(%s, hive_partitioning=%t)",
			tb.Name, lake.QuoteString(glob), len(tb.Partitions) > 0)
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func ocInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return n
}

func TestOnchainDemo(t *testing.T) {
	dir := t.TempDir()
	g := ocGenerate(t, dir)
	db := ocOpen(t, dir)
	end := g.End

	total := ocInt(t, db, "SELECT count(*) FROM onchain_transfers")
	t.Logf("transfers: %d", total)
	if total < 30_000 {
		t.Fatalf("too few transfers: %d", total)
	}

	t.Run("formats", func(t *testing.T) {
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE NOT regexp_full_match(from_address, '0x[0-9a-f]{40}')
			OR NOT regexp_full_match(to_address, '0x[0-9a-f]{40}') OR NOT regexp_full_match(token_address, '0x[0-9a-f]{40}')
			OR NOT regexp_full_match(tx_hash, '0x[0-9a-f]{64}') OR NOT regexp_full_match(value_raw, '[1-9][0-9]*')
			OR from_address = to_address`); n != 0 {
			t.Fatalf("%d malformed transfer rows", n)
		}
		// Block numbers increase with time per chain.
		if n := ocInt(t, db, `SELECT count(*) FROM (SELECT block_number, lag(block_number) OVER w AS pb, block_time, lag(block_time) OVER w AS pt
			FROM onchain_transfers WINDOW w AS (PARTITION BY chain ORDER BY block_time, log_index))
			WHERE pb IS NOT NULL AND (block_number < pb OR (block_number = pb) <> (block_time = pt))`); n != 0 {
			t.Fatalf("%d rows with block numbers out of step with time", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE block_time < ? OR block_time > ?`, g.Start, end); n != 0 {
			t.Fatalf("%d transfers outside the history", n)
		}
	})

	t.Run("amount", func(t *testing.T) {
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers x LEFT JOIN onchain_tokens k USING (chain, token_address)
			WHERE k.decimals IS NULL OR abs(x.amount - CAST(x.value_raw AS DOUBLE) / pow(10, k.decimals)) > 1e-12 * x.amount`); n != 0 {
			t.Fatalf("%d rows where amount != value_raw / 10^decimals", n)
		}
		// Exactly, in Go, for the high-precision rows.
		rows, err := db.Query(`SELECT x.value_raw, x.amount, k.decimals FROM onchain_transfers x JOIN onchain_tokens k USING (chain, token_address)
			WHERE length(x.value_raw) > 16`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var raw string
			var amt float64
			var dec int
			if err := rows.Scan(&raw, &amt, &dec); err != nil {
				t.Fatal(err)
			}
			r, _ := new(big.Int).SetString(raw, 10)
			want, _ := new(big.Rat).SetFrac(r, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil)).Float64()
			if amt != want {
				t.Fatalf("amount %v for %s at %d decimals, want %v", amt, raw, dec, want)
			}
			n++
		}
		if n == 0 {
			t.Fatal("no long raw values")
		}
		// Decimals as specified.
		for _, c := range []struct {
			chain, sym string
			dec        int
		}{{"ethereum", "USDC", 6}, {"ethereum", "USDT", 6}, {"base", "USDC", 6}, {"bsc", "USDC", 18}, {"bsc", "USDT", 18}, {"ethereum", "WBTC", 8}, {"ethereum", "WETH", 18}} {
			if d := ocInt(t, db, `SELECT decimals FROM onchain_tokens WHERE chain = ? AND symbol = ?`, c.chain, c.sym); int(d) != c.dec {
				t.Errorf("%s %s decimals %d, want %d", c.chain, c.sym, d, c.dec)
			}
		}
		if n := ocInt(t, db, `SELECT count(DISTINCT chain) FROM onchain_tokens WHERE asset_id IN ('usdc', 'usdt', 'weth')
			GROUP BY asset_id ORDER BY 1 LIMIT 1`); n != 3 {
			t.Errorf("USDC/USDT/WETH not on all three chains")
		}
	})

	t.Run("usd", func(t *testing.T) {
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers x LEFT JOIN onchain_prices p
			ON p.chain = x.chain AND p.token_address = x.token_address AND p.hour = date_trunc('hour', x.block_time)
			WHERE (x.usd IS NULL) <> (p.price_usd IS NULL) OR abs(x.usd - x.amount * p.price_usd) > 1e-9 * x.usd`); n != 0 {
			t.Fatalf("%d rows where usd != amount * hourly price", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE usd IS NULL`); n == 0 {
			t.Fatal("no unpriced transfers")
		}
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE usd >= 10000`); n < total/20 || n > total*2/5 {
			t.Fatalf("%d of %d transfers at >= 10k USD: min_usd would not filter meaningfully", n, total)
		}
		// Hourly prices cover the whole history.
		hours := int64(end.Truncate(time.Hour).Sub(g.Start.Truncate(time.Hour))/time.Hour) + 1
		if n := ocInt(t, db, `SELECT count(*) FROM (SELECT chain, token_address, count(*) n FROM onchain_prices GROUP BY ALL) WHERE n <> ?`, hours); n != 0 {
			t.Fatalf("%d tokens without a full hourly price series", n)
		}
	})

	t.Run("balances", func(t *testing.T) {
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_balances b JOIN onchain_tokens k USING (chain, token_address)
			WHERE NOT regexp_full_match(balance_raw, '[1-9][0-9]*') OR abs(balance - CAST(balance_raw AS DOUBLE) / pow(10, decimals)) > 1e-12 * balance
			OR as_of <> ?`, end); n != 0 {
			t.Fatalf("%d bad balance rows", n)
		}
		// The opening balances are not in the lake: they are the deterministic world the
		// generator starts from, rebuilt here from the same seed, scale and window. Replay
		// every transfer in order from them: no balance may go negative at any point, and
		// the end state must equal onchain_balances exactly.
		w := buildOnchainWorld(g)
		for _, c := range w.chains {
			addrIdx := map[string]int32{}
			for i, wl := range c.wallets {
				addrIdx[wl.addr] = int32(i)
			}
			tokIdx := map[string]int32{}
			for i, tk := range c.tokens {
				tokIdx[tk.addr] = int32(i)
			}
			bal := map[ocKey]*big.Int{}
			get := func(k ocKey) *big.Int {
				if bal[k] == nil {
					bal[k] = new(big.Int)
					if v := c.init[k]; v != nil {
						bal[k].Set(v)
					}
				}
				return bal[k]
			}
			rows, err := db.Query(`SELECT from_address, to_address, token_address, value_raw FROM onchain_transfers
				WHERE chain = ? ORDER BY block_time, log_index`, c.def.name)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var from, to, tok, raw string
				if err := rows.Scan(&from, &to, &tok, &raw); err != nil {
					t.Fatal(err)
				}
				v, _ := new(big.Int).SetString(raw, 10)
				fk, tk := ocKey{addrIdx[from], tokIdx[tok]}, ocKey{addrIdx[to], tokIdx[tok]}
				fb := get(fk)
				fb.Sub(fb, v)
				if fb.Sign() < 0 {
					t.Fatalf("%s: %s goes negative on token %s", c.def.name, from, tok)
				}
				get(tk).Add(get(tk), v)
			}
			rows.Close()
			for k := range c.init { // opening balances no transfer touched
				get(k)
			}
			got := map[string]string{}
			rows, err = db.Query(`SELECT address, token_address, balance_raw FROM onchain_balances WHERE chain = ?`, c.def.name)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var a, tok, raw string
				if err := rows.Scan(&a, &tok, &raw); err != nil {
					t.Fatal(err)
				}
				got[a+"/"+tok] = raw
			}
			rows.Close()
			nonzero := 0
			for k, v := range bal {
				key := c.wallets[k.w].addr + "/" + c.tokens[k.t].addr
				if v.Sign() == 0 {
					if _, ok := got[key]; ok {
						t.Fatalf("%s: zero balance %s written", c.def.name, key)
					}
					continue
				}
				nonzero++
				if got[key] != v.String() {
					t.Fatalf("%s: balance of %s is %q, opening + net transfers gives %s", c.def.name, key, got[key], v)
				}
			}
			if nonzero != len(got) {
				t.Fatalf("%s: %d balance rows, %d expected", c.def.name, len(got), nonzero)
			}
		}
	})

	t.Run("flash loans", func(t *testing.T) {
		// Same tx, same token, same raw amount out and back between the same pair.
		q := `SELECT count(*) FROM onchain_transfers a JOIN onchain_transfers b
			ON a.chain = b.chain AND a.tx_hash = b.tx_hash AND a.token_address = b.token_address AND a.value_raw = b.value_raw
			AND a.from_address = b.to_address AND a.to_address = b.from_address AND a.log_index < b.log_index
			JOIN onchain_labels l ON l.address = a.from_address AND l.entity IN ('Aave V3: Pool', 'Balancer: Vault', 'Venus: vUSDT')
			WHERE a.chain = ? AND a.usd > 100000 AND a.block_time > ?`
		for _, ch := range []string{"ethereum", "bsc", "base"} {
			if n := ocInt(t, db, q, ch, g.Start); n < 5 {
				t.Errorf("%s: %d flash-loan round trips", ch, n)
			}
		}
		if n := ocInt(t, db, q, "ethereum", end.Add(-24*time.Hour)); n < 1 {
			t.Errorf("no flash loan in the last 24h")
		}
	})

	t.Run("coverage", func(t *testing.T) {
		for _, ch := range []string{"ethereum", "bsc", "base"} {
			if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE chain = ? AND token_address = ?`, ch, ocZeroAddr); n < 100 {
				t.Errorf("%s: %d native transfers", ch, n)
			}
			if n := ocInt(t, db, `SELECT count(*) FROM onchain_tokens WHERE chain = ? AND token_address = ? AND symbol <> ''`, ch, ocZeroAddr); n != 1 {
				t.Errorf("%s: native coin missing from tokens", ch)
			}
			if n := ocInt(t, db, `SELECT count(*) FROM onchain_transfers WHERE chain = ? AND block_time > ?`, ch, end.Add(-time.Hour)); n < 5 {
				t.Errorf("%s: %d transfers in the last hour", ch, n)
			}
			if n := ocInt(t, db, `SELECT count(DISTINCT date_trunc('hour', block_time - INTERVAL 37 MINUTE)) FROM onchain_transfers
				WHERE chain = ? AND block_time > ?`, ch, end.Add(-24*time.Hour)); n < 24 {
				t.Errorf("%s: transfers in only %d of the last 24 hours", ch, n)
			}
			// Main tokens: at least 10 distinct buyers and sellers in the last 24h.
			if n := ocInt(t, db, `SELECT min(n) FROM (
				SELECT count(DISTINCT to_address) n FROM onchain_transfers x JOIN onchain_tokens k USING (chain, token_address)
				WHERE x.chain = ? AND k.asset_id IN ('usdc', 'usdt', 'weth') AND block_time > ? GROUP BY k.asset_id
				UNION ALL
				SELECT count(DISTINCT from_address) n FROM onchain_transfers x JOIN onchain_tokens k USING (chain, token_address)
				WHERE x.chain = ? AND k.asset_id IN ('usdc', 'usdt', 'weth') AND block_time > ? GROUP BY k.asset_id)`,
				ch, end.Add(-24*time.Hour), ch, end.Add(-24*time.Hour)); n < 10 {
				t.Errorf("%s: only %d distinct buyers or sellers of a main token in 24h", ch, n)
			}
		}
		// Wallets idle for the last 24h but active before, and wallets active in it.
		if n := ocInt(t, db, `WITH a AS (SELECT from_address AS w, block_time FROM onchain_transfers WHERE chain = 'ethereum'
			UNION ALL SELECT to_address, block_time FROM onchain_transfers WHERE chain = 'ethereum')
			SELECT count(*) FROM (SELECT w FROM a GROUP BY w HAVING max(block_time) < ? AND count(*) >= 3)`, end.Add(-24*time.Hour)); n < 10 {
			t.Errorf("only %d wallets idle for the last 24h", n)
		}
	})

	t.Run("trace", func(t *testing.T) {
		// Non-hub wallets with >= 10k USD edges to several counterparties that themselves
		// have >= 10k USD edges onward: 2-hop graphs.
		n := ocInt(t, db, `WITH e AS (
				SELECT DISTINCT from_address a, to_address b FROM onchain_transfers WHERE chain = 'ethereum' AND usd >= 10000
				UNION SELECT DISTINCT to_address, from_address FROM onchain_transfers WHERE chain = 'ethereum' AND usd >= 10000),
			deg AS (SELECT a, count(*) d FROM e GROUP BY a),
			hop AS (SELECT e.a, count(*) FILTER (WHERE deg.d >= 3) good FROM e JOIN deg ON deg.a = e.b GROUP BY e.a)
			SELECT count(*) FROM hop JOIN deg USING (a) LEFT JOIN onchain_labels l ON l.address = hop.a AND l.wallet_type IN ('cex', 'dex', 'defi', 'market_maker', 'bridge')
			WHERE l.address IS NULL AND deg.d >= 3 AND hop.good >= 2`)
		if n < 5 {
			t.Errorf("only %d wallets with a 2-hop >= 10k USD graph", n)
		}
	})

	t.Run("labels", func(t *testing.T) {
		if n := ocInt(t, db, `SELECT count(DISTINCT address) FROM onchain_labels`); n < 300 {
			t.Errorf("only %d labelled addresses", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM (SELECT address FROM onchain_labels GROUP BY address
			HAVING count(*) > 1 AND (count(DISTINCT entity) > 1 OR count(DISTINCT wallet_type) > 1))`); n < 10 {
			t.Errorf("only %d addresses with disagreeing sources", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_labels l LEFT JOIN onchain_label_sources s USING (source) WHERE s.priority IS NULL`); n != 0 {
			t.Errorf("%d labels with an unknown source", n)
		}
		if n := ocInt(t, db, `SELECT count(DISTINCT wallet_type) FROM onchain_labels WHERE wallet_type IN
			('cex', 'dex', 'defi', 'market_maker', 'bridge', 'fund', 'individual')`); n != 7 {
			t.Errorf("%d wallet types", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM onchain_labels WHERE risk_flag IN ('sanctioned', 'exploit')`); n < 2 {
			t.Errorf("%d risky labels", n)
		}
		if n := ocInt(t, db, `SELECT count(*) FROM (SELECT address FROM onchain_ens GROUP BY address HAVING count(*) > 1 AND sum(is_primary::INT) = 1)`); n < 1 {
			t.Errorf("no address with extra ENS names")
		}
		if n := ocInt(t, db, `SELECT count(*) FROM (SELECT address FROM onchain_ens GROUP BY address HAVING sum(is_primary::INT) > 1)`); n != 0 {
			t.Errorf("%d addresses with two primary names", n)
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		dir2 := t.TempDir()
		ocGenerate(t, dir2)
		db2 := ocOpen(t, dir2)
		for _, tb := range []string{"onchain_transfers", "onchain_tokens", "onchain_prices", "onchain_labels",
			"onchain_label_sources", "onchain_ens", "onchain_balances"} {
			q := "SELECT count(*)::VARCHAR || '/' || sum(hash(t)::HUGEINT)::VARCHAR FROM " + tb + " t"
			var a, b string
			if err := db.QueryRow(q).Scan(&a); err != nil {
				t.Fatal(err)
			}
			if err := db2.QueryRow(q).Scan(&b); err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("%s differs between runs: %s vs %s", tb, a, b)
			}
		}
	})
}

// TestOnchainWorldScales builds the static world (tokens, wallets, opening balances) of
// every named scale, without generating transfers.
func TestOnchainWorldScales(t *testing.T) {
	for _, name := range []string{"tiny", "small", "medium"} {
		sc := Scales[name]
		g := &Generator{Opt: Options{Seed: 1}, Scale: sc, End: ocTestEnd, Start: ocTestEnd.Add(-time.Duration(sc.Days) * 24 * time.Hour)}
		w := buildOnchainWorld(g)
		for _, c := range w.chains {
			if len(c.tokens) != sc.ChainTokens+1 {
				t.Errorf("%s %s: %d tokens, want %d", name, c.def.name, len(c.tokens), sc.ChainTokens+1)
			}
			if len(c.wallets) < sc.ChainWallets || len(c.lenders) == 0 {
				t.Errorf("%s %s: %d wallets, %d lenders", name, c.def.name, len(c.wallets), len(c.lenders))
			}
			seen := map[string]bool{}
			for _, tk := range c.tokens {
				if seen[tk.addr] || seen[tk.symbol] {
					t.Errorf("%s %s: duplicate token %s %s", name, c.def.name, tk.addr, tk.symbol)
				}
				seen[tk.addr], seen[tk.symbol] = true, true
			}
		}
	}
}
