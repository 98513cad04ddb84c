package query

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"sort"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletIndexTxSQL = sqlfiles.MustRead("onchain/wallet_index_tx.sql")

// ocTxCols are the columns wallets/{address}/transactions lists beside the index's
// integers, one entry per leg at the leg's place: the transaction hash as its 32 bytes
// (byte order is the order of the lower-case hex the SQL compares), block number, log
// index, amount and whether the transfer was priced; about 53 bytes a leg. With them the
// route pages a wallet's legs in Go like the other per-wallet routes, instead of a
// DuckDB query per request.
type ocTxCols struct {
	hash   [][32]byte
	block  []int64
	logi   []int32
	amount []float64
	priced []bool
}

// readTxCols reads the transactions columns of all n legs in rowid chunks. It returns
// nil (the route then runs its SQL) for a hash that is not 0x and 64 lower-case hex
// digits or a log index beyond int32. The hash comes as four integers, not a string:
// a string per leg was 0.5 GB of garbage on the medium lake, which raised the peak.
func (q *Queries) readTxCols(ctx context.Context, n int64) (*ocTxCols, error) {
	const op = "onchain wallet index"
	t := &ocTxCols{hash: make([][32]byte, n), block: make([]int64, n), logi: make([]int32, n),
		amount: make([]float64, n), priced: make([]bool, n)}
	seen := make([]bool, n)
	for lo := int64(0); lo < n; lo += ocIndexChunk {
		fit, err := t.read(ctx, q, lo, min(lo+ocIndexChunk, n), seen)
		if err != nil {
			return nil, wrap(ctx, op, err)
		}
		if !fit {
			return nil, nil
		}
		// The driver boxes every value it hands over; collecting each chunk's garbage
		// before the next keeps the heap (and the process's peak) near the live index.
		runtime.GC()
	}
	for _, ok := range seen {
		if !ok {
			return nil, nil
		}
	}
	return t, nil
}

func (t *ocTxCols) read(ctx context.Context, q *Queries, lo, hi int64, seen []bool) (bool, error) {
	rows, err := q.db.QueryContext(ctx, onchainWalletIndexTxSQL, lo, hi)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var (
		r, block, logi int64
		h              [4]sql.Null[uint64]
		ok             sql.NullBool
		amount         sql.NullFloat64
		priced         bool
	)
	for rows.Next() {
		if err := rows.Scan(&r, &h[0], &h[1], &h[2], &h[3], &ok, &block, &logi, &amount, &priced); err != nil {
			return false, err
		}
		if r < lo || r >= hi || seen[r] || !amount.Valid || logi != int64(int32(logi)) || !ok.Valid || !ok.Bool {
			return false, nil
		}
		for k, w := range h {
			if !w.Valid {
				return false, nil
			}
			binary.BigEndian.PutUint64(t.hash[r][8*k:], w.V)
		}
		seen[r] = true
		t.block[r], t.logi[r], t.amount[r], t.priced[r] = block, int32(logi), amount.Float64, priced
	}
	return true, rows.Err()
}

// txHash decodes a 0x-prefixed lower-case 64-digit hex hash (a cursor's) into dst.
func txHash(dst *[32]byte, s string) bool {
	if len(s) != 66 || s[:2] != "0x" {
		return false
	}
	for i := 2; i < 66; i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst[:], []byte(s[2:]))
	return err == nil
}

// txCmp orders two legs of one block time as wallet_transactions.sql does after the
// time: log index, then transaction hash; negative when leg i comes before leg j in
// ascending order.
func (t *ocTxCols) cmp(i, j int) int {
	if t.logi[i] != t.logi[j] {
		if t.logi[i] < t.logi[j] {
			return -1
		}
		return 1
	}
	for k := range 32 {
		if t.hash[i][k] != t.hash[j][k] {
			if t.hash[i][k] < t.hash[j][k] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// transactions answers wallet_transactions.sql from the index: the wallet's legs in
// (since, until], newest first (time, log index, tx hash, all descending), strictly
// after the cursor, the sending leg of a self-transfer left out, the token filter and
// min_usd (an unpriced leg counts as 0) applied, up to limit rows and the cursor of the
// last one when more follow. syms maps (chain, token) to its symbol. ok false: ask the
// SQL.
func (x *ocIndex) transactions(p OnchainWalletTransactionsParams, since, until int64, syms map[[2]string]string) (items []WalletTransaction, next *TxCursor, ok bool) {
	t := x.tx
	if t == nil {
		return nil, nil, false
	}
	lo, hi, ok := x.legs(p.Chain, p.Address, since, until)
	if !ok {
		return nil, nil, false
	}
	items = []WalletTransaction{}
	tok := int32(-1)
	if p.Token != "" {
		k := sort.SearchStrings(x.tokens, p.Token)
		if k == len(x.tokens) || x.tokens[k] != p.Token {
			return items, nil, true // no leg of that token
		}
		tok = int32(k)
	}
	c := p.After
	var ch [32]byte
	if c != nil {
		// Legs after the cursor's time are already served; legs at its time are
		// compared on (log index, hash) below. A hash that does not decode compares
		// as the SQL's string would only by accident, so ask the SQL.
		if c.TxHash != "" && !txHash(&ch, c.TxHash) {
			return nil, nil, false
		}
		ts := x.ts[lo:hi]
		hi = lo + sort.Search(len(ts), func(i int) bool { return ts[i] > c.BlockUS })
	}
	keep := func(i int) bool {
		f := x.fl[i]
		if f&ocLegSelf != 0 && f&ocLegIn == 0 {
			return false // a self-transfer is listed once, from its receiving leg
		}
		if tok >= 0 && x.tok[i] != tok || micro(x.usd[i]) < p.MinUSD {
			return false
		}
		if c != nil && x.ts[i] == c.BlockUS {
			if int64(t.logi[i]) != c.LogIndex {
				return int64(t.logi[i]) < c.LogIndex
			}
			if c.TxHash == "" {
				return false // every hash sorts after ""
			}
			return string(t.hash[i][:]) < string(ch[:])
		}
		return true
	}
	// Walk newest first one block time at a time; a time's legs are sorted on (log
	// index, hash) descending, as the SQL's ORDER BY.
	page := make([]int, 0, p.Limit+1)
	for i := hi; i > lo && len(page) <= p.Limit; {
		g := i - 1
		for g > lo && x.ts[g-1] == x.ts[i-1] {
			g--
		}
		start := len(page)
		for j := i - 1; j >= g; j-- {
			if keep(j) {
				page = append(page, j)
			}
		}
		grp := page[start:]
		sort.Slice(grp, func(a, b int) bool { return t.cmp(grp[a], grp[b]) > 0 })
		i = g
	}
	more := len(page) > p.Limit
	page = page[:min(len(page), p.Limit)]
	for _, i := range page {
		r := WalletTransaction{TxHash: "0x" + hex.EncodeToString(t.hash[i][:]), BlockNumber: t.block[i],
			BlockTime: time.UnixMicro(x.ts[i]).UTC().Format(time.RFC3339), LogIndex: int64(t.logi[i]),
			TokenAddress: x.tokens[x.tok[i]], Symbol: syms[[2]string{p.Chain, x.tokens[x.tok[i]]}],
			Amount: t.amount[i]}
		cp := x.addrs[x.cp[i]]
		if x.fl[i]&ocLegIn != 0 {
			r.From, r.To = cp, p.Address
		} else {
			r.From, r.To = p.Address, cp
		}
		switch {
		case r.From == r.To:
			r.Direction, r.Counterparty = "self", r.To
		case r.To == p.Address:
			r.Direction, r.Counterparty = "in", r.From
		default:
			r.Direction, r.Counterparty = "out", r.To
		}
		if t.priced[i] {
			v := usd(micro(x.usd[i]))
			r.USD = &v
		}
		items = append(items, r)
	}
	if more && len(page) > 0 {
		i := page[len(page)-1]
		last := items[len(items)-1]
		next = &TxCursor{BlockUS: x.ts[i], LogIndex: last.LogIndex, TxHash: last.TxHash}
	}
	return items, next, true
}
