package query

// The Go balances index as it was before issue 11's bounded memory (every balance row
// and price in the heap), kept here as the oracle the byte-bounded
// path is held to: the same answer, field for field.

import (
	"context"
	"database/sql"
	"sort"
	"time"
)

const (
	memBalPricesSQL = `SELECT chain, token_address, epoch_us(hour), price_usd FROM onchain_prices
		WHERE hour IS NOT NULL AND price_usd IS NOT NULL ORDER BY chain, token_address, hour`
	memBalRowsSQL = `SELECT chain, address, token_address, balance, epoch_us(as_of) FROM onchain_balances
		ORDER BY chain, address, token_address`
	memBalTokensSQL = `SELECT chain, token_address, symbol, name, decimals FROM onchain_tokens_mem`
)

// memBalIndex is the Go index behind wallets/{address}/balances, built with the side
// tables (same files, same signature) and replaced with them: per chain, each holder's
// balance rows as one run of flat columns, and per token its metadata and its hourly
// prices in time order. A request finds the holder's run with one map probe and each
// token's latest price at or before now with one binary search, so its work is the
// wallet's own balances: wallet_balances.sql instead filtered the whole price table of
// the chain for every request (arg_max over every hour of each held token).
type memBalIndex struct {
	chains map[string]*memBalChain
}

type memBalChain struct {
	holder map[string][2]int32 // address -> its rows [lo, hi), in token order
	tok    []int32             // row -> token id
	bal    []float64
	asOf   []int64 // epoch microseconds
	toks   []memBalToken
}

// memBalToken is one token of a chain: its metadata (known false: the LEFT JOIN found
// no metadata row) and its hourly prices, hours ascending.
type memBalToken struct {
	addr     string
	known    bool
	sym      string
	name     *string
	decimals *int64
	hours    []int64
	px       []float64
}

func (c *memBalChain) token(ids map[string]int32, addr string) int32 {
	if id, ok := ids[addr]; ok {
		return id
	}
	id := int32(len(c.toks))
	c.toks = append(c.toks, memBalToken{addr: addr})
	ids[addr] = id
	return id
}

// buildMemBalanceIndex reads the balances, prices and tokens into a memBalIndex. It returns
// errIndexUnfit for rows the index cannot answer exactly as the SQL does (a NULL
// balance or read time, a token listed twice in the metadata, two prices for one
// hour); the route then answers from its SQL.
func (q *Queries) buildMemBalanceIndex(ctx context.Context) (*memBalIndex, error) {
	const op = "onchain balances index"
	x := &memBalIndex{chains: map[string]*memBalChain{}}
	ids := map[string]map[string]int32{}
	chain := func(c string) (*memBalChain, map[string]int32) {
		ch := x.chains[c]
		if ch == nil {
			ch = &memBalChain{holder: map[string][2]int32{}}
			x.chains[c] = ch
			ids[c] = map[string]int32{}
		}
		return ch, ids[c]
	}
	rows, err := q.db.QueryContext(ctx, memBalTokensSQL)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	for rows.Next() {
		var c, a string
		var sym, name sql.NullString
		var dec sql.NullInt64
		if err := rows.Scan(&c, &a, &sym, &name, &dec); err != nil {
			rows.Close()
			return nil, wrap(ctx, op, err)
		}
		ch, m := chain(c)
		t := &ch.toks[ch.token(m, a)]
		if t.known {
			rows.Close()
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		t.known, t.sym, t.name = true, sym.String, nullStr(name)
		if dec.Valid {
			v := dec.Int64
			t.decimals = &v
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	rows, err = q.db.QueryContext(ctx, memBalPricesSQL)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	for rows.Next() {
		var c, a string
		var h int64
		var p float64
		if err := rows.Scan(&c, &a, &h, &p); err != nil {
			rows.Close()
			return nil, wrap(ctx, op, err)
		}
		ch, m := chain(c)
		t := &ch.toks[ch.token(m, a)]
		if n := len(t.hours); n > 0 && t.hours[n-1] >= h {
			rows.Close()
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		t.hours, t.px = append(t.hours, h), append(t.px, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	rows, err = q.db.QueryContext(ctx, memBalRowsSQL)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c, a, tk string
		var bal sql.NullFloat64
		var asOf sql.NullInt64
		if err := rows.Scan(&c, &a, &tk, &bal, &asOf); err != nil {
			return nil, wrap(ctx, op, err)
		}
		if !bal.Valid || !asOf.Valid {
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		ch, m := chain(c)
		i := int32(len(ch.tok))
		r, ok := ch.holder[a]
		if !ok {
			r = [2]int32{i, i}
		} else if r[1] != i { // rows come in holder runs
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		r[1] = i + 1
		ch.holder[a] = r
		ch.tok = append(ch.tok, ch.token(m, tk))
		ch.bal = append(ch.bal, bal.Float64)
		ch.asOf = append(ch.asOf, asOf.Int64)
	}
	return x, wrap(ctx, op, rows.Err())
}

// balances answers wallet_balances.sql from the index: each balance with its token's
// latest price at hour <= until (epoch us), value = balance * price in float64 as the
// SQL's DOUBLE product, kept when the value (0 when unpriced) is at least minUSD,
// largest value first with unpriced rows last, ties on token address.
func (x *memBalIndex) balances(chain, address string, until int64, minUSD float64) []Balance {
	items := []Balance{}
	ch := x.chains[chain]
	if ch == nil {
		return items
	}
	r, ok := ch.holder[address]
	if !ok {
		return items
	}
	type row struct {
		i      int32
		priced bool
		price  float64
		value  float64
	}
	rs := make([]row, 0, r[1]-r[0])
	for i := r[0]; i < r[1]; i++ {
		if ch.asOf[i] > until {
			continue // read after the clock: not yet known (point in time)
		}
		t := &ch.toks[ch.tok[i]]
		k := sort.Search(len(t.hours), func(j int) bool { return t.hours[j] > until })
		g := row{i: i}
		if k > 0 {
			g.priced, g.price = true, t.px[k-1]
			g.value = ch.bal[i] * g.price
		}
		if g.value >= minUSD { // an unpriced balance counts as 0 USD
			rs = append(rs, g)
		}
	}
	sort.SliceStable(rs, func(a, b int) bool {
		ra, rb := rs[a], rs[b]
		if ra.priced != rb.priced {
			return ra.priced
		}
		if ra.priced && ra.value != rb.value {
			return ra.value > rb.value
		}
		return ch.toks[ch.tok[ra.i]].addr < ch.toks[ch.tok[rb.i]].addr
	})
	for _, g := range rs {
		t := &ch.toks[ch.tok[g.i]]
		b := Balance{TokenAddress: t.addr, Balance: ch.bal[g.i],
			AsOf: time.UnixMicro(ch.asOf[g.i]).UTC().Format(time.RFC3339)}
		if t.known { // copies, so no response shares the index's memory
			b.Symbol = t.sym
			if t.name != nil {
				n := *t.name
				b.Name = &n
			}
			if t.decimals != nil {
				d := *t.decimals
				b.Decimals = &d
			}
		}
		if g.priced {
			p, v := g.price, usd(g.value)
			b.PriceUSD, b.ValueUSD = &p, &v
		}
		items = append(items, b)
	}
	return items
}
