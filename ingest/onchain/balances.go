package onchain

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mdq/internal/duckconn"
	"mdq/lake"
)

// BalanceStats is what PublishBalances wrote.
type BalanceStats struct {
	Rows     int64     // balances written
	Negative int64     // (address, token) pairs left out: they spent more than the transfers brought
	AsOf     time.Time // the newest block time of the chain's transfers
}

// PublishBalances recomputes the chain's onchain_balances from every stored transfer
// of the chain: received minus sent per (address, token), summed exactly (value_raw is
// split into four 20-digit parts summed as HUGEINT by DuckDB, then joined with
// math/big), divided by the token's decimals. The balances are those accumulated from
// the first ingested block: a pair whose sum is negative (the address held tokens
// before that block) is left out and counted, as is every zero balance and the zero
// address (mints and burns). Opening balances given for the starting block
// (LoadOpening) are added first. as_of is the newest transfer's block time. The chain's
// balances file is replaced whole, atomically.
func PublishBalances(ctx context.Context, root, chain string) (BalanceStats, error) {
	var st BalanceStats
	glob := filepath.Join(root, "onchain", "transfers", "chain="+chain, "date=*", lake.OnchainTransfers.File)
	if m, _ := filepath.Glob(glob); len(m) == 0 {
		return st, nil
	}
	unlock, err := lockLake(root)
	if err != nil {
		return st, err
	}
	defer unlock()
	opening, err := readOpening(root, chain)
	if err != nil {
		return st, err
	}
	db, err := duckconn.Open("")
	if err != nil {
		return st, err
	}
	defer db.Close()
	decimals := map[string]int{}
	tf := filepath.Join(root, filepath.FromSlash(lake.OnchainTokens.Prefix), lake.OnchainTokens.File)
	if _, err := os.Stat(tf); err == nil {
		rows, err := db.QueryContext(ctx, "SELECT token_address, coalesce(decimals, 0) FROM read_parquet("+lake.QuoteString(tf)+") WHERE chain = ?", chain)
		if err != nil {
			return st, err
		}
		for rows.Next() {
			var a string
			var d int
			if err := rows.Scan(&a, &d); err != nil {
				rows.Close()
				return st, err
			}
			decimals[a] = d
		}
		rows.Close()
	}
	src := "read_parquet(" + lake.QuoteString(glob) + ")"
	if err := db.QueryRowContext(ctx, "SELECT max(block_time) FROM "+src).Scan(&st.AsOf); err != nil {
		return st, fmt.Errorf("balances of %s: %w", chain, err)
	}
	// The glob is generated from the operator's lake directory, quoted.
	q := `WITH legs AS (
	SELECT to_address AS address, token_address, lpad(value_raw, 80, '0') AS v, 1 AS sign FROM ` + src + `
	UNION ALL
	SELECT from_address, token_address, lpad(value_raw, 80, '0'), -1 FROM ` + src + `
)
SELECT address, token_address, sign,
	sum(CAST(substr(v, 1, 20) AS HUGEINT))::VARCHAR, sum(CAST(substr(v, 21, 20) AS HUGEINT))::VARCHAR,
	sum(CAST(substr(v, 41, 20) AS HUGEINT))::VARCHAR, sum(CAST(substr(v, 61, 20) AS HUGEINT))::VARCHAR
FROM legs WHERE address <> ? GROUP BY ALL`
	rows, err := db.QueryContext(ctx, q, ZeroAddress)
	if err != nil {
		return st, fmt.Errorf("balances of %s: %w", chain, err)
	}
	type key struct{ a, t string }
	bal := map[key]*big.Int{}
	e20 := new(big.Int).Exp(big.NewInt(10), big.NewInt(20), nil)
	for rows.Next() {
		var k key
		var sign int
		var parts [4]string
		if err := rows.Scan(&k.a, &k.t, &sign, &parts[0], &parts[1], &parts[2], &parts[3]); err != nil {
			rows.Close()
			return st, err
		}
		v := new(big.Int)
		for _, p := range parts {
			x, ok := new(big.Int).SetString(p, 10)
			if !ok {
				rows.Close()
				return st, fmt.Errorf("balances of %s: bad partial sum %q", chain, p)
			}
			v.Mul(v, e20).Add(v, x)
		}
		if sign < 0 {
			v.Neg(v)
		}
		if b := bal[k]; b != nil {
			b.Add(b, v)
		} else {
			bal[k] = v
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, err
	}
	for k, v := range opening {
		a, t, _ := strings.Cut(k, ",")
		if a == ZeroAddress {
			continue
		}
		if b := bal[key{a, t}]; b != nil {
			b.Add(b, v)
		} else {
			bal[key{a, t}] = new(big.Int).Set(v)
		}
	}
	keys := make([]key, 0, len(bal))
	for k, v := range bal {
		switch v.Sign() {
		case 1:
			keys = append(keys, k)
		case -1:
			st.Negative++
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].a != keys[j].a {
			return keys[i].a < keys[j].a
		}
		return keys[i].t < keys[j].t
	})
	w, err := lake.NewWriter(root)
	if err != nil {
		return st, err
	}
	defer w.Close()
	st.Rows, err = w.Write(ctx, lake.OnchainBalances, []string{chain}, func(app lake.AppendFunc) error {
		for _, k := range keys {
			v := ValueFromBig(bal[k])
			if err := app(k.a, k.t, v.String(), v.Amount(decimals[k.t]), st.AsOf); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
