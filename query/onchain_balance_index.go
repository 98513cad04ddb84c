package query

import (
	"context"
	"database/sql"
	"sort"
	"time"

	sqlfiles "mdq/sql"
)

var (
	onchainBalWalletRowsSQL  = sqlfiles.MustRead("onchain/balances_wallet_rows.sql")
	onchainBalTokenPricesSQL = sqlfiles.MustRead("onchain/balances_token_prices.sql")
	onchainBalTokenMetaSQL   = sqlfiles.MustRead("onchain/balances_token_meta.sql")
)

// ocBalIndex answers wallets/{address}/balances for one build of the side state
// (onchainSide): a request reads its holder's rows from onchain_balances (each chain's
// file sorted by holder: one row group) and takes each held token's metadata and
// hourly prices from a byte-bounded LRU of tokens (registered as
// onchain_balance_tokens), reading the tokens it misses with two queries.
// wallet_balances.sql instead filtered the whole price table of the chain for every
// request (arg_max over every hour of each held token); the former Go index held every
// balance row and price in the heap (172 MB on the large demo lake), a whole-table copy
// the memory budget does not allow.
type ocBalIndex struct {
	toks *byteLRU[[2]string, *ocBalToken] // (chain, token address) -> token
}

// ocBalToken is one token of a chain: its metadata (known false: the LEFT JOIN found
// no metadata row) and its hourly prices, hours ascending. unfit: the token's rows are
// ones the Go path cannot answer exactly as the SQL does (listed twice in the metadata,
// two prices for one hour); a request holding it answers from the SQL.
type ocBalToken struct {
	addr     string
	known    bool
	unfit    bool
	sym      string
	name     *string
	decimals *int64
	hours    []int64
	px       []float64
}

// bytes is the heap the token holds, for the cache's bound.
func (t *ocBalToken) bytes() int64 {
	n := int64(128 + len(t.addr) + len(t.sym) + 16*cap(t.hours))
	if t.name != nil {
		n += int64(len(*t.name)) + 16
	}
	return n
}

func (q *Queries) newBalanceIndex() *ocBalIndex {
	x := &ocBalIndex{toks: newByteLRU[[2]string, *ocBalToken]("onchain_balance_tokens", q.cacheLimit("onchain_balance_tokens"))}
	q.registerCache("onchain_balance_tokens", x.toks)
	return x
}

// tokens returns the listed tokens of chain, reading those not cached.
func (q *Queries) balanceTokens(ctx context.Context, x *ocBalIndex, chain string, addrs []string) (map[string]*ocBalToken, error) {
	const op = "onchain wallet balances"
	out := make(map[string]*ocBalToken, len(addrs))
	var miss []string
	for _, a := range addrs {
		if t, ok := x.toks.get([2]string{chain, a}); ok {
			out[a] = t
		} else if out[a] == nil {
			out[a] = &ocBalToken{addr: a}
			miss = append(miss, a)
		}
	}
	if len(miss) == 0 {
		return out, nil
	}
	rows, err := q.db.QueryContext(ctx, onchainBalTokenMetaSQL, chain, miss)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	for rows.Next() {
		var a string
		var sym, name sql.NullString
		var dec sql.NullInt64
		if err := rows.Scan(&a, &sym, &name, &dec); err != nil {
			rows.Close()
			return nil, wrap(ctx, op, err)
		}
		t := out[a]
		if t.known {
			t.unfit = true
			continue
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
	rows, err = q.db.QueryContext(ctx, onchainBalTokenPricesSQL, chain, miss)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		var h int64
		var p float64
		if err := rows.Scan(&a, &h, &p); err != nil {
			return nil, wrap(ctx, op, err)
		}
		t := out[a]
		if n := len(t.hours); n > 0 && t.hours[n-1] >= h {
			t.unfit = true
			continue
		}
		t.hours, t.px = append(t.hours, h), append(t.px, p)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	for _, a := range miss {
		t := out[a]
		t.hours, t.px = t.hours[:len(t.hours):len(t.hours)], t.px[:len(t.px):len(t.px)]
		x.toks.put([2]string{chain, a}, t, t.bytes())
	}
	return out, nil
}

// balances answers wallet_balances.sql: each balance with its token's latest price at
// hour <= until (epoch us), value = balance * price in float64 as the SQL's DOUBLE
// product, kept when the value (0 when unpriced) is at least minUSD, largest value first
// with unpriced rows last, ties on token address. ok is false when the rows are ones
// only the SQL answers exactly (a NULL balance or read time, an unfit token).
func (q *Queries) balances(ctx context.Context, x *ocBalIndex, chain, address string, until int64, minUSD float64) (items []Balance, ok bool, err error) {
	const op = "onchain wallet balances"
	rows, err := q.db.QueryContext(ctx, onchainBalWalletRowsSQL, chain, address)
	if err != nil {
		return nil, false, wrap(ctx, op, err)
	}
	type row struct {
		tok    string
		bal    float64
		asOf   int64
		priced bool
		price  float64
		value  float64
	}
	var all []row
	var addrs []string
	for rows.Next() {
		var r row
		var bal sql.NullFloat64
		var asOf sql.NullInt64
		if err := rows.Scan(&r.tok, &bal, &asOf); err != nil {
			rows.Close()
			return nil, false, wrap(ctx, op, err)
		}
		if !bal.Valid || !asOf.Valid {
			rows.Close()
			return nil, false, nil
		}
		r.bal, r.asOf = bal.Float64, asOf.Int64
		all = append(all, r)
		addrs = append(addrs, r.tok)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, wrap(ctx, op, err)
	}
	toks, err := q.balanceTokens(ctx, x, chain, addrs)
	if err != nil {
		return nil, false, err
	}
	rs := make([]row, 0, len(all))
	for _, g := range all {
		t := toks[g.tok]
		if t.unfit {
			return nil, false, nil
		}
		if g.asOf > until {
			continue // read after the clock: not yet known (point in time)
		}
		k := sort.Search(len(t.hours), func(j int) bool { return t.hours[j] > until })
		if k > 0 {
			g.priced, g.price = true, t.px[k-1]
			g.value = g.bal * g.price
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
		return ra.tok < rb.tok
	})
	items = []Balance{}
	for _, g := range rs {
		t := toks[g.tok]
		b := Balance{TokenAddress: t.addr, Balance: g.bal, AsOf: time.UnixMicro(g.asOf).UTC().Format(time.RFC3339)}
		if t.known { // copies, so no response shares the cache's memory
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
	return items, true, nil
}
