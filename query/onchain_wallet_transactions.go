package query

import (
	"container/heap"
	"context"
	"database/sql"
	"slices"
	"time"

	sqlfiles "mdq/sql"
)

var onchainWalletTransactionsSQL = sqlfiles.MustRead("onchain/wallet_transactions.sql")

// TxCursor is the keyset position of the last transaction served.
type TxCursor struct {
	BlockUS  int64  `json:"t"`
	LogIndex int64  `json:"l"`
	TxHash   string `json:"h"`
}

// OnchainWalletTransactionsParams are the inputs of OnchainWalletTransactions.
type OnchainWalletTransactionsParams struct {
	Chain, Address string
	Days           int
	Token          string // "" for every token
	MinUSD         float64
	After          *TxCursor
	Limit          int
}

// WalletTransaction is one transfer of /v1/onchain/wallets/{address}/transactions.
type WalletTransaction struct {
	TxHash       string   `json:"tx_hash"`
	BlockNumber  int64    `json:"block_number"`
	BlockTime    string   `json:"block_time" doc:"ISO-8601 UTC"`
	LogIndex     int64    `json:"log_index"`
	TokenAddress string   `json:"token_address" doc:"the zero address is the native coin"`
	Symbol       string   `json:"symbol" doc:"from token metadata; empty when unknown"`
	Direction    string   `json:"direction" doc:"in, out or self, from the wallet's side"`
	Counterparty string   `json:"counterparty" doc:"the other address of the transfer"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	Amount       float64  `json:"amount" doc:"whole tokens (decimals applied)"`
	USD          *float64 `json:"usd" doc:"USD at transfer time; null for an unpriced token"`
}

// WalletTransactions is the envelope of /v1/onchain/wallets/{address}/transactions.
type WalletTransactions struct {
	Wallet       string              `json:"wallet"`
	Transactions []WalletTransaction `json:"transactions"`
	NextCursor   *string             `json:"next_cursor" doc:"pass back as cursor with the same filters; null on the last page"`
}

// OnchainWalletTransactions returns up to Limit transfers newest first and the cursor
// key of the last one when more follow.
func (q *Queries) OnchainWalletTransactions(ctx context.Context, p OnchainWalletTransactionsParams) ([]WalletTransaction, *TxCursor, error) {
	if err := q.onchainSide(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := q.onchainLegsOnly(ctx); err != nil {
		return nil, nil, err
	}
	now := q.Now()
	since, until := micros(now.Add(-time.Duration(p.Days)*24*time.Hour)), micros(now)
	a, err := q.walletArgs(ctx, p.Address, p.Chain)
	if err != nil {
		return nil, nil, wrap(ctx, "onchain wallet transactions", err)
	}
	// A busy wallet's legs cached in Go (onchain_hot_legs.go) bound the page: the SQL
	// reads only the span that holds it, in one query.
	if h := q.hotLegsFor(p.Chain, p.Address, a); h != nil {
		from, to := h.txPageSpan(p, since, until)
		return q.onchainWalletTransactionsSQL(ctx, p, from, to, &a)
	}
	// A page of a busy wallet lies in its newest legs: the page is first asked of the
	// day before the newest time it can hold (the clock, or the cursor's time). Every
	// leg left out of that day is strictly older than every leg in it, and the order is
	// newest first, so when the day holds more than a page the page and its cursor are
	// the whole window's; otherwise the whole window is read.
	from := until
	if p.After != nil && p.After.BlockUS < from {
		from = p.After.BlockUS
	}
	if near := from - txNearWindow.Microseconds(); near > since {
		items, next, err := q.onchainWalletTransactionsSQL(ctx, p, near, until, &a)
		if err != nil || next != nil {
			return items, next, err
		}
	}
	return q.onchainWalletTransactionsSQL(ctx, p, since, until, &a)
}

// txNearWindow is the span a transactions page is first asked of.
const txNearWindow = 24 * time.Hour

// txPageSpan narrows the window (since, until] of a transactions page to a span that
// holds the whole page, from the wallet's cached legs: the page and its cursor over
// the span are the window's. The page is the p.Limit+1 first legs (one more tells
// whether a next page follows) in the SQL's order, block time newest first, that the
// SQL keeps. The span ends at the cursor's time (no leg after the cursor is later)
// and starts just before the p.Limit+1-th newest leg that the SQL surely keeps: every
// leg left out is older than those, so none of them is on the page. A leg counts only
// when every filter surely keeps it: a leg at the cursor's very time may come before
// the cursor (by log index and hash, which the entry does not hold), and a USD value
// within rounding of min_usd may fall either side of DuckDB's comparison; leaving such
// legs uncounted widens the span, it never cuts the page. When fewer legs surely count
// the span is the whole window.
func (h *hotLegs) txPageSpan(p OnchainWalletTransactionsParams, since, until int64) (from, to int64) {
	to = until
	if p.After != nil && p.After.BlockUS < to {
		to = p.After.BlockUS
	}
	tok := -1
	if p.Token != "" {
		tok = slices.Index(h.toks, p.Token)
		if tok < 0 {
			return since, to
		}
	}
	floor := p.MinUSD*1e6*(1+1e-12) + 1 // micro-dollars surely at or above min_usd
	// The n newest counted times, in a min-heap: top[0] is the n-th newest so far.
	n := p.Limit + 1
	top := make(minTimes, 0, n)
	for i, at := range h.at {
		t := h.time(i)
		if t <= since || t > until || p.After != nil && t >= p.After.BlockUS ||
			h.flag[i]&(hotSelf|hotSend) == hotSelf|hotSend || // listed from its receiving leg
			tok >= 0 && int(h.tok[i]) != tok ||
			p.MinUSD > 0 && float64(h.usd[i]) < floor || h.usd[i] < 0 {
			continue
		}
		switch {
		case len(top) < n:
			heap.Push(&top, at)
		case at > top[0]:
			top[0] = at
			heap.Fix(&top, 0)
		}
	}
	if len(top) < n {
		return since, to
	}
	return int64(top[0])*1_000_000 - 1, to
}

// minTimes is a min-heap of block times (epoch seconds) for container/heap.
type minTimes []uint32

func (m minTimes) Len() int           { return len(m) }
func (m minTimes) Less(i, j int) bool { return m[i] < m[j] }
func (m minTimes) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *minTimes) Push(x any)        { *m = append(*m, x.(uint32)) }
func (m *minTimes) Pop() any {
	old := *m
	x := old[len(old)-1]
	*m = old[:len(old)-1]
	return x
}

// onchainWalletTransactionsSQL answers from wallet_transactions.sql over the window
// (since, until], reading the files listed (nil: listed here).
func (q *Queries) onchainWalletTransactionsSQL(ctx context.Context, p OnchainWalletTransactionsParams, since, until int64, listed *walletArgs) ([]WalletTransaction, *TxCursor, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	var c TxCursor
	if p.After != nil {
		c = *p.After
	}
	rows, err := q.queryWallet(ctx, onchainWalletTransactionsSQL, listedFirst(listed, func() (walletArgs, error) { return q.walletArgs(ctx, p.Address, p.Chain) }),
		walletArgs.legsTail, p.Chain, p.Address, since, until, p.Token, p.MinUSD,
		p.After != nil, c.BlockUS, c.LogIndex, c.TxHash, p.Limit+1)
	if err != nil {
		return nil, nil, wrap(ctx, "onchain wallet transactions", err)
	}
	defer rows.Close()
	items := []WalletTransaction{}
	var keys []TxCursor
	for rows.Next() {
		var r WalletTransaction
		var bt int64
		var u sql.NullFloat64
		if err := rows.Scan(&r.TxHash, &r.BlockNumber, &bt, &r.LogIndex, &r.TokenAddress, &r.Symbol, &r.From, &r.To, &r.Amount, &u); err != nil {
			return nil, nil, wrap(ctx, "onchain wallet transactions", err)
		}
		r.BlockTime = time.UnixMicro(bt).UTC().Format(time.RFC3339)
		switch {
		case r.From == r.To:
			r.Direction, r.Counterparty = "self", r.To
		case r.To == p.Address:
			r.Direction, r.Counterparty = "in", r.From
		default:
			r.Direction, r.Counterparty = "out", r.To
		}
		if u.Valid {
			v := usd(u.Float64)
			r.USD = &v
		}
		items = append(items, r)
		keys = append(keys, TxCursor{BlockUS: bt, LogIndex: r.LogIndex, TxHash: r.TxHash})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, wrap(ctx, "onchain wallet transactions", err)
	}
	if len(items) > p.Limit {
		return items[:p.Limit], &keys[p.Limit-1], nil
	}
	return items, nil, nil
}
