package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	sqlfiles "mdq/sql"
)

var (
	onchainWalletIndexSQL     = sqlfiles.MustRead("onchain/wallet_index_build.sql")
	onchainWalletIndexDictSQL = sqlfiles.MustRead("onchain/wallet_index_dict.sql")
	onchainWalletIndexKeysSQL = sqlfiles.MustRead("onchain/wallet_index_keys.sql")
	onchainWalletIndexNames   = sqlfiles.MustRead("onchain/wallet_index_names.sql")
)

// ocIndexKeyLimit bounds the sum of |USD| (micro-dollars) of one (chain, wallet)'s
// legs for the Go index to answer it: 10^12 USD, so any sum a route forms (up to three
// chains' totals plus each other) stays below 2^63 and the int64 arithmetic is exact.
// A wallet beyond it is answered by the route's SQL (DECIMAL sums).
const ocIndexKeyLimit = 1_000_000_000_000 * 1_000_000

// Leg flags.
const (
	ocLegIn   = 1 // the wallet received (dir 1); else it sent
	ocLegSelf = 2 // a self-transfer (both legs carry it)
)

// ocIndex is the Go per-wallet index of the legs: every leg of onchain_legs_mem as
// integers in flat columns, grouped by (chain, wallet) and sorted by time within a
// group, so a per-wallet route finds the wallet's window with two binary searches and
// sums its legs in Go: the work is the wallet's own legs in the window, with no SQL
// planning and no row-group scan, whatever the chain's size. It is built with the legs
// (same files, same signature) and replaced with them.
//
// Measured against the alternative of per-(wallet, day, counterparty, token) aggregates
// on the medium demo lake: the 100 busiest ethereum wallets have 585 k legs in 30 days
// and 579 k distinct (wallet, day, counterparty, token, direction) groups, so daily
// aggregates would not shrink what a request reads (and would still need the raw legs
// of a partial first day); see docs/ONCHAIN.md.
type ocIndex struct {
	addrs   []string // address id -> address; ids are in byte order of the addresses
	addrID  map[string]int32
	tokens  []string // token id -> token address
	chainID map[string]int
	nAddr   int
	span    []int  // key (chain id * nAddr + wallet id) -> its legs are [span[k], span[k+1])
	exact   []bool // key -> its legs' |USD| sum is under ocIndexKeyLimit

	ts  []int64 // block time, epoch microseconds
	usd []int64 // USD at transfer time, micro-dollars (0 when unpriced)
	cp  []int32
	tok []int32
	fl  []uint8 // ocLegIn, ocLegSelf

	tx *ocTxCols // transactions' columns; nil: that route runs its SQL

	scratch sync.Pool // *ocScratch
}

// legs returns the leg range of (chain, address) with block time in (since, until], and
// whether the index can answer it exactly (false: ask the SQL). An address or chain the
// legs never saw has an empty range.
func (x *ocIndex) legs(chain, address string, since, until int64) (lo, hi int, ok bool) {
	c, okc := x.chainID[chain]
	w, oka := x.addrID[address]
	if !okc || !oka {
		return 0, 0, true
	}
	k := c*x.nAddr + int(w)
	if !x.exact[k] {
		return 0, 0, false
	}
	a, b := x.span[k], x.span[k+1]
	ts := x.ts[a:b]
	lo = a + sort.Search(len(ts), func(i int) bool { return ts[i] > since })
	hi = a + sort.Search(len(ts), func(i int) bool { return ts[i] > until })
	return lo, hi, true
}

// ocScratch is per-request working memory sized to the index's address count: a dense
// slot per counterparty id, reset through the list of ids touched, so grouping a
// wallet's legs by counterparty costs an array access per leg instead of a map probe.
type ocScratch struct {
	slot    []int32 // address id -> 1 + position in the request's aggregate list; 0 = none
	touched []int32
	cps     []ocCpAgg // counterparties' buffers, reused across requests
	pairs   []uint64
	cmp     []ocCmpAgg // compare's counterparty buffer
}

// ocCmpAgg is one shared-list key's sums (a counterparty or token) in a compare request.
type ocCmpAgg struct {
	key            int32
	au, bu, an, bn int64
}

// ocCpAgg is one counterparty's sums in a counterparties request.
type ocCpAgg struct {
	cp               int32
	out, in, n, toks int64
	first, last      int64
}

func (x *ocIndex) getScratch() *ocScratch {
	if s, ok := x.scratch.Get().(*ocScratch); ok {
		return s
	}
	return &ocScratch{slot: make([]int32, x.nAddr)}
}

func (x *ocIndex) putScratch(s *ocScratch) {
	for _, id := range s.touched {
		s.slot[id] = 0
	}
	s.touched = s.touched[:0]
	x.scratch.Put(s)
}

// errIndexUnfit reports legs the Go wallet index cannot hold: not in (chain, wallet,
// time) rowid order, or more addresses or tokens than its ids allow. The routes then
// answer from their SQL.
var errIndexUnfit = errors.New("legs unfit for the Go wallet index (rowid order or id range)")

// buildWalletIndex reads the legs (onchain_legs_mem, just built) into an ocIndex.
func (q *Queries) buildWalletIndex(ctx context.Context) (*ocIndex, error) {
	const op = "onchain wallet index"
	x := &ocIndex{addrID: map[string]int32{}, chainID: map[string]int{}}
	if _, err := q.db.ExecContext(ctx, onchainWalletIndexDictSQL); err != nil {
		return nil, wrap(ctx, op, err)
	}
	rows, err := q.db.QueryContext(ctx, onchainWalletIndexNames)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	var chains int
	for rows.Next() {
		var kind, v string
		if err := rows.Scan(&kind, &v); err != nil {
			rows.Close()
			return nil, wrap(ctx, op, err)
		}
		switch kind {
		case "a":
			x.addrID[v] = int32(len(x.addrs))
			x.addrs = append(x.addrs, v)
		case "t":
			x.tokens = append(x.tokens, v)
		case "c":
			x.chainID[v] = chains
			chains++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	if len(x.addrs) >= 1<<31 || len(x.tokens) >= 1<<30 {
		return nil, &StoreError{Op: op, Err: errIndexUnfit}
	}
	// Each (chain, wallet)'s rowid range; they must tile [0, n) in key order.
	x.nAddr = len(x.addrs)
	keys := chains * x.nAddr
	x.span = make([]int, keys+1)
	x.exact = make([]bool, keys)
	first := make([]int64, keys)
	rows, err = q.db.QueryContext(ctx, onchainWalletIndexKeysSQL)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	var n int64
	for rows.Next() {
		var c, w string
		var lo, hi, cnt int64
		if err := rows.Scan(&c, &w, &lo, &hi, &cnt); err != nil {
			rows.Close()
			return nil, wrap(ctx, op, err)
		}
		ci, ok1 := x.chainID[c]
		wi, ok2 := x.addrID[w]
		if !ok1 || !ok2 || hi-lo+1 != cnt {
			rows.Close()
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		k := ci*x.nAddr + int(wi)
		x.span[k+1], first[k] = int(cnt), lo
		n += cnt
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	for k := range keys {
		if x.span[k+1] > 0 && first[k] != int64(x.span[k]) {
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
		x.span[k+1] += x.span[k]
	}
	x.ts, x.usd = make([]int64, n), make([]int64, n)
	x.cp, x.tok, x.fl = make([]int32, n), make([]int32, n), make([]uint8, n)
	seen := make([]bool, n)
	var null []int64 // rowids of legs beyond the int64 range
	for lo := int64(0); lo < n; lo += ocIndexChunk {
		if err := x.readLegs(ctx, q, lo, min(lo+ocIndexChunk, n), seen, &null); err != nil {
			return nil, err
		}
	}
	for _, ok := range seen {
		if !ok {
			return nil, &StoreError{Op: op, Err: errIndexUnfit}
		}
	}
	// Every rowid came once (n rows, none twice); now each key's legs must be in time
	// order, and its |USD| sum under ocIndexKeyLimit for the int64 sums to be exact.
	for k := range keys {
		var abs int64
		for i := x.span[k]; i < x.span[k+1]; i++ {
			if i > x.span[k] && x.ts[i] < x.ts[i-1] {
				return nil, &StoreError{Op: op, Err: errIndexUnfit}
			}
			if abs < ocIndexKeyLimit {
				abs += max(x.usd[i], -x.usd[i])
			}
		}
		x.exact[k] = abs < ocIndexKeyLimit
	}
	for _, r := range null {
		k := sort.Search(keys, func(k int) bool { return x.span[k+1] > int(r) })
		x.exact[k] = false
	}
	if x.tx, err = q.readTxCols(ctx, n); err != nil {
		return nil, err
	}
	return x, nil
}

// ocIndexChunk is how many legs one read of the index build asks for.
const ocIndexChunk = 1 << 20

// readLegs reads the legs with rowid in [lo, hi) into their places in x.
func (x *ocIndex) readLegs(ctx context.Context, q *Queries, lo, hi int64, seen []bool, null *[]int64) error {
	const op = "onchain wallet index"
	rows, err := q.db.QueryContext(ctx, onchainWalletIndexSQL, lo, hi)
	if err != nil {
		return wrap(ctx, op, err)
	}
	defer rows.Close()
	var (
		r, ts, packed int64
		u             ocMicros
	)
	for rows.Next() {
		if err := rows.Scan(&r, &ts, &u, &packed); err != nil {
			return wrap(ctx, op, err)
		}
		if r < lo || r >= hi || seen[r] {
			return &StoreError{Op: op, Err: errIndexUnfit}
		}
		seen[r] = true
		if !u.ok {
			*null = append(*null, r)
		}
		x.ts[r], x.usd[r] = ts, u.v
		x.cp[r], x.tok[r], x.fl[r] = int32(packed>>32), int32(packed>>2)&(1<<30-1), uint8(packed&3)
	}
	return wrap(ctx, op, rows.Err())
}

// ocMicros scans a DECIMAL(18, 6) as its int64 of micro-dollars (exact); ok is false
// for NULL.
type ocMicros struct {
	v  int64
	ok bool
}

func (m *ocMicros) Scan(src any) error {
	switch d := src.(type) {
	case nil:
		m.v, m.ok = 0, false
	case duckdb.Decimal:
		if d.Scale != 6 || d.Value == nil || !d.Value.IsInt64() {
			return fmt.Errorf("usd: unexpected DECIMAL(%d, %d)", d.Width, d.Scale)
		}
		m.v, m.ok = d.Value.Int64(), true
	default:
		return fmt.Errorf("usd: unexpected %T", src)
	}
	return nil
}

// walletIndex is the Go index of the last legs build, for a request that has just
// called onchainLegs; nil when none was built.
func (q *Queries) walletIndex() *ocIndex {
	v, ok := q.ext.Load(legsKey{})
	if !ok {
		return nil
	}
	return v.(*legsState).index.Load()
}

// micro converts exact micro-dollars to dollars (the SQL's DECIMAL-to-DOUBLE cast).
func micro(v int64) float64 { return float64(v) / 1e6 }

// wallet computes WalletSummary for address at until (epoch us) from the index, as
// wallet.sql does: each leg falls in the narrowest window holding it (24h, 7d, 30d,
// 90d, else all), a window sums its band and the narrower ones. ok is false when a
// chain's legs of the wallet are beyond the index's exact range (ask the SQL).
func (x *ocIndex) wallet(address string, until int64) (out WalletSummary, ok bool) {
	w, seen := x.addrID[address]
	if !seen {
		return out, true
	}
	const h = int64(time.Hour / time.Microsecond)
	edges := [4]int64{until - 24*h, until - 7*24*h, until - 30*24*h, until - 90*24*h}
	var in, outv, n [5]int64
	var first, last int64
	any := false
	tokens := int64(0)
	bits := make([]uint64, (len(x.tokens)+63)/64)
	for c := range len(x.chainID) {
		k := c*x.nAddr + int(w)
		if !x.exact[k] {
			return out, false
		}
		a, b := x.span[k], x.span[k+1]
		ts := x.ts[a:b]
		hi := a + sort.Search(len(ts), func(i int) bool { return ts[i] > until })
		if hi == a {
			continue
		}
		clear(bits)
		for i := a; i < hi; i++ {
			t := x.ts[i]
			band := 4
			for j, e := range edges {
				if t > e {
					band = j
					break
				}
			}
			f := x.fl[i]
			if f&ocLegIn != 0 {
				in[band] += x.usd[i]
				n[band]++
			} else {
				outv[band] += x.usd[i]
				if f&ocLegSelf == 0 { // a self-transfer counts once (its inbound leg)
					n[band]++
				}
			}
			tk := x.tok[i]
			if bits[tk/64]&(1<<(tk%64)) == 0 {
				bits[tk/64] |= 1 << (tk % 64)
				tokens++
			}
		}
		if !any || x.ts[a] < first {
			first = x.ts[a]
		}
		if !any || x.ts[hi-1] > last {
			last = x.ts[hi-1]
		}
		any = true
	}
	var fs, la *string
	if any {
		f, l := Date(time.UnixMicro(first)), Date(time.UnixMicro(last))
		fs, la = &f, &l
	}
	var ci, co, cn int64
	for j, slot := range []*WalletWindow{&out.W24h, &out.W7d, &out.W30d, &out.W90d, &out.All} {
		ci, co, cn = ci+in[j], co+outv[j], cn+n[j]
		*slot = WalletWindow{TotalInflow: usd(micro(ci)), TotalOutflow: usd(micro(co)),
			TotalVolume: usd(micro(ci + co)), NetFlow: usd(micro(ci - co)), TxCount: cn,
			TokensTraded: tokens, FirstSeen: fs, LastActive: la}
	}
	return out, true
}

// counterparties ranks the wallet's counterparties on chain in (since, until] as
// wallet_counterparties.sql does (self-transfers left out; volume both ways, ties on
// address, which is id order), without labels. ok false: ask the SQL.
func (x *ocIndex) counterparties(chain, address string, since, until int64, limit int) ([]Counterparty, bool) {
	lo, hi, ok := x.legs(chain, address, since, until)
	if !ok {
		return nil, false
	}
	s := x.getScratch()
	defer x.putScratch(s)
	aggs := s.cps[:0]
	pairs := s.pairs[:0] // counterparty id << 32 | token id, one per leg
	for i := lo; i < hi; i++ {
		f := x.fl[i]
		if f&ocLegSelf != 0 {
			continue
		}
		cp := x.cp[i]
		j := s.slot[cp]
		if j == 0 {
			aggs = append(aggs, ocCpAgg{cp: cp, first: x.ts[i]})
			j = int32(len(aggs))
			s.slot[cp] = j
			s.touched = append(s.touched, cp)
		}
		g := &aggs[j-1]
		if f&ocLegIn != 0 {
			g.in += x.usd[i]
		} else {
			g.out += x.usd[i]
		}
		g.n++
		g.last = x.ts[i] // legs are in time order
		pairs = append(pairs, uint64(cp)<<32|uint64(x.tok[i]))
	}
	// Distinct tokens per counterparty: the sorted pairs, counted once each.
	slices.Sort(pairs)
	for i, p := range pairs {
		if i == 0 || p != pairs[i-1] {
			aggs[s.slot[int32(p>>32)]-1].toks++
		}
	}
	s.cps, s.pairs = aggs, pairs // the grown buffers go back to the pool
	sort.Slice(aggs, func(i, j int) bool {
		vi, vj := aggs[i].out+aggs[i].in, aggs[j].out+aggs[j].in
		return vi > vj || vi == vj && aggs[i].cp < aggs[j].cp
	})
	items := make([]Counterparty, 0, min(limit, len(aggs)))
	for _, g := range aggs[:min(limit, len(aggs))] {
		items = append(items, Counterparty{Address: x.addrs[g.cp], VolumeUSD: usd(micro(g.out + g.in)),
			OutUSD: usd(micro(g.out)), InUSD: usd(micro(g.in)), NetUSD: usd(micro(g.in - g.out)),
			TxCount: g.n, Tokens: g.toks,
			FirstTS: time.UnixMicro(g.first).UTC().Format(time.RFC3339), LastTS: time.UnixMicro(g.last).UTC().Format(time.RFC3339)})
	}
	return items, true
}

// compare fills the shared counterparties, shared tokens and direct flows of a and b on
// chain in (since, until] as wallet_compare.sql does (self-transfers left out; the two
// wallets are not their own shared counterparties; both lists ranked by a + b volume,
// ties on address), without labels and symbols. ok false: ask the SQL.
func (x *ocIndex) compare(out *WalletCompare, chain, a, b string, since, until int64, limit int) bool {
	loA, hiA, okA := x.legs(chain, a, since, until)
	loB, hiB, okB := x.legs(chain, b, since, until)
	if !okA || !okB {
		return false
	}
	id := func(addr string) int32 {
		if v, ok := x.addrID[addr]; ok {
			return v
		}
		return -1
	}
	aID, bID := id(a), id(b)
	type agg = ocCmpAgg
	s := x.getScratch()
	defer x.putScratch(s)
	cps, toks := s.cmp[:0], []agg(nil)
	tokSlot := map[int32]int{}
	side := func(lo, hi int, isA bool) {
		for i := lo; i < hi; i++ {
			f := x.fl[i]
			if f&ocLegSelf != 0 {
				continue
			}
			cp, u := x.cp[i], x.usd[i]
			j, ok := tokSlot[x.tok[i]]
			if !ok {
				toks = append(toks, agg{key: x.tok[i]})
				j = len(toks) - 1
				tokSlot[x.tok[i]] = j
			}
			if isA {
				toks[j].au += u
				toks[j].an++
			} else {
				toks[j].bu += u
				toks[j].bn++
			}
			if cp == aID || cp == bID { // the two wallets are not shared counterparties
				continue
			}
			c := s.slot[cp]
			if c == 0 {
				cps = append(cps, agg{key: cp})
				c = int32(len(cps))
				s.slot[cp] = c
				s.touched = append(s.touched, cp)
			}
			if isA {
				cps[c-1].au += u
				cps[c-1].an++
			} else {
				cps[c-1].bu += u
				cps[c-1].bn++
			}
		}
	}
	side(loA, hiA, true)
	if a == b {
		for i := range cps {
			cps[i].bu, cps[i].bn = cps[i].au, cps[i].an
		}
		for i := range toks {
			toks[i].bu, toks[i].bn = toks[i].au, toks[i].an
		}
	} else {
		side(loB, hiB, false)
	}
	// Direct flows, exactly: a's legs whose counterparty is b.
	var ab, ba, dn int64
	if a != b && bID >= 0 {
		for i := loA; i < hiA; i++ {
			if x.cp[i] != bID || x.fl[i]&ocLegSelf != 0 {
				continue
			}
			if x.fl[i]&ocLegIn != 0 {
				ba += x.usd[i]
			} else {
				ab += x.usd[i]
			}
			dn++
		}
	}
	out.Direct = DirectFlow{AToBUSD: usd(micro(ab)), BToAUSD: usd(micro(ba)), TxCount: dn}
	defer func() { s.cmp = cps[:0] }() // the grown buffer goes back to the pool
	rank := func(l []agg) []agg {
		kept := l[:0]
		for _, g := range l {
			if g.an > 0 && g.bn > 0 {
				kept = append(kept, g)
			}
		}
		sort.Slice(kept, func(i, j int) bool {
			vi, vj := kept[i].au+kept[i].bu, kept[j].au+kept[j].bu
			return vi > vj || vi == vj && kept[i].key < kept[j].key
		})
		return kept[:min(limit, len(kept))]
	}
	for _, g := range rank(cps) {
		out.SharedCounterparties = append(out.SharedCounterparties, SharedCounterparty{Address: x.addrs[g.key],
			AVolumeUSD: usd(micro(g.au)), BVolumeUSD: usd(micro(g.bu)), ATxCount: g.an, BTxCount: g.bn})
	}
	for _, g := range rank(toks) {
		out.SharedTokens = append(out.SharedTokens, SharedToken{TokenAddress: x.tokens[g.key],
			AVolumeUSD: usd(micro(g.au)), BVolumeUSD: usd(micro(g.bu)), ATxCount: g.an, BTxCount: g.bn})
	}
	return true
}
