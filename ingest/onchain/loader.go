package onchain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mdq/ingest"
	"mdq/internal/duckconn"
	"mdq/lake"
)

// Transfer is one decoded transfer, before decimals, time and price are applied.
type Transfer struct {
	Block    uint64
	TxHash   string // lower-case
	LogIndex int32  // the log's index in its block; -1 for a transaction's own native value
	Token    string // lower-case; ZeroAddress for the native coin
	From, To string // lower-case
	Value    Value
}

// Token is one token's metadata. Decimals is -1 when the contract declares none
// (decimals() reverts): its amounts are then the raw integer and the tokens row says
// decimals 0, so what is stored stays consistent. Symbol, name and logo are stored as
// given ("" when unknown: the routes read them as text); an unknown asset id is NULL,
// which links the contract to no other chain.
type Token struct {
	Address                   string
	Symbol, Name, Logo, Asset string
	Decimals                  int
}

// MetaFunc reads a token's metadata from its contract (eth_call).
type MetaFunc func(ctx context.Context, token string) (Token, error)

// Loader turns transfers of one chain into staged rows of onchain_transfers (with
// block time, decimals and USD at the block's hour applied) and stages the tokens and
// prices they need; Commit merges everything into the lake. Until Commit nothing in
// the lake changes.
type Loader struct {
	Chain string
	Root  string
	Meta  MetaFunc // nil: a token without metadata is an error naming it
	Sum   ingest.Summary
	// Native makes a JSON-RPC load (LoadRPC, the follower) read the native-coin value
	// of every transaction too: one full block per block of the range, plus receipts
	// (native.go). Off by default: it costs a call per block.
	Native bool
	// Traces (with Native) reads the native coin from the node's trace API instead of
	// the transactions: internal value transfers too (traces.go). A block of the range
	// with transactions costs a trace call instead of its receipts.
	Traces bool

	stage   *ingest.Stage
	blocks  map[uint64]int64  // block number → unix seconds
	tokens  map[string]*Token // known metadata: the lake's, the files', the contracts'
	staged  map[string]bool   // tokens to write (new or changed)
	prices  map[string]map[int64]float64
	missing blockSet         // transfers whose block has no timestamp
	unknown map[string]int64 // transfers of tokens without metadata, by token
	ntr     int64
	day     int64     // the UTC day of the last transfer staged (unix days)
	part    [2]string // its partition values: chain, date
}

type blockSet struct {
	n      int64
	lo, hi uint64
}

func (b *blockSet) add(n uint64) {
	if b.n == 0 || n < b.lo {
		b.lo = n
	}
	if b.n == 0 || n > b.hi {
		b.hi = n
	}
	b.n++
}

// mergeKeys are the tables a loader merges, in order, with their keys.
var mergeKeys = []struct {
	t   *lake.Table
	key []string
}{
	{lake.OnchainTransfers, []string{"tx_hash", "log_index"}},
	{lake.OnchainTokens, []string{"chain", "token_address"}},
	{lake.OnchainPrices, []string{"token_address", "hour"}},
	{lake.OnchainLabels, []string{"address", "source"}},
	{lake.OnchainLabelSources, []string{"source"}},
	{lake.OnchainENS, []string{"address", "name"}},
}

// NewLoader opens a loader for chain on the lake at root, reading the tokens and
// prices the lake already holds for that chain.
func NewLoader(ctx context.Context, root, chain string) (*Loader, error) {
	if !ValidChain(chain) {
		return nil, fmt.Errorf("chain %q not supported (use ethereum, bsc, or base)", chain)
	}
	st, err := ingest.NewStage(ctx, root)
	if err != nil {
		return nil, err
	}
	// The keys are declared up front so that a merge deduplicates staged rows only
	// when some share a key (ingest.Stage.Key).
	for _, m := range mergeKeys {
		if err := st.Key(m.t, m.key...); err != nil {
			st.Close()
			return nil, err
		}
	}
	l := &Loader{Chain: chain, Root: root, stage: st, blocks: map[uint64]int64{}, tokens: map[string]*Token{},
		staged: map[string]bool{}, prices: map[string]map[int64]float64{}, unknown: map[string]int64{}}
	if err := l.readLake(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return l, nil
}

// Close drops what was not committed.
func (l *Loader) Close() error {
	return l.stage.Close()
}

// readLake loads the chain's stored token metadata and prices (both small: one row per
// token, one per token and hour).
func (l *Loader) readLake(ctx context.Context) error {
	db, err := duckconn.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	tf := filepath.Join(l.Root, filepath.FromSlash(lake.OnchainTokens.Prefix), lake.OnchainTokens.File)
	if _, err := os.Stat(tf); err == nil {
		rows, err := db.QueryContext(ctx, "SELECT token_address, coalesce(symbol, ''), coalesce(name, ''), coalesce(decimals, -1), "+
			"coalesce(logo_url, ''), coalesce(asset_id, '') FROM read_parquet("+lake.QuoteString(tf)+") WHERE chain = ?", l.Chain)
		if err != nil {
			return fmt.Errorf("read %s: %w", tf, err)
		}
		for rows.Next() {
			var t Token
			if err := rows.Scan(&t.Address, &t.Symbol, &t.Name, &t.Decimals, &t.Logo, &t.Asset); err != nil {
				rows.Close()
				return err
			}
			l.tokens[t.Address] = &t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	rel, _ := lake.OnchainPrices.Path(l.Chain)
	pf := filepath.Join(l.Root, filepath.FromSlash(rel))
	if _, err := os.Stat(pf); err == nil {
		rows, err := db.QueryContext(ctx, "SELECT token_address, epoch(hour)::BIGINT, price_usd FROM read_parquet("+lake.QuoteString(pf)+")")
		if err != nil {
			return fmt.Errorf("read %s: %w", pf, err)
		}
		defer rows.Close()
		for rows.Next() {
			var tok string
			var h int64
			var p float64
			if err := rows.Scan(&tok, &h, &p); err != nil {
				return err
			}
			l.setPrice(tok, h, p)
		}
		return rows.Err()
	}
	return nil
}

func (l *Loader) setPrice(tok string, hour int64, p float64) {
	m := l.prices[tok]
	if m == nil {
		m = map[int64]float64{}
		l.prices[tok] = m
	}
	m[hour] = p
}

// SetBlockTime records a block's timestamp (unix seconds).
func (l *Loader) SetBlockTime(n uint64, unix int64) { l.blocks[n] = unix }

// BlockTime returns a recorded block timestamp.
func (l *Loader) BlockTime(n uint64) (int64, bool) {
	t, ok := l.blocks[n]
	return t, ok
}

// AddToken records metadata from an input file (tokens.csv): it replaces what the lake
// holds for the token except the logo and asset id, which the file does not carry.
func (l *Loader) AddToken(t Token) {
	if old := l.tokens[t.Address]; old != nil {
		if t.Logo == "" {
			t.Logo = old.Logo
		}
		if t.Asset == "" {
			t.Asset = old.Asset
		}
		if *old == t {
			return
		}
	}
	l.tokens[t.Address] = &t
	l.staged[t.Address] = true
}

// AddPrice stages one hourly price (hour is truncated to the hour) and uses it for this
// run's transfers when it is of the loader's chain.
func (l *Loader) AddPrice(chain, token string, hour time.Time, price float64) error {
	hour = hour.UTC().Truncate(time.Hour)
	if chain == l.Chain {
		l.setPrice(token, hour.Unix(), price)
	}
	return l.stage.Append(lake.OnchainPrices, []string{chain}, token, hour, price)
}

// Transfer stages one transfer. A transfer whose block has no timestamp, or whose
// token has no metadata and no way to read it, is counted and reported by Commit.
func (l *Loader) Transfer(ctx context.Context, tr Transfer) error {
	bt, ok := l.blocks[tr.Block]
	if !ok {
		l.missing.add(tr.Block)
		return nil
	}
	tok, err := l.token(ctx, tr.Token)
	if err != nil {
		return err
	}
	if tok == nil {
		l.unknown[tr.Token]++
		return nil
	}
	dec := max(tok.Decimals, 0)
	amt := tr.Value.Amount(dec)
	usd := ingest.Null()
	if p, ok := l.prices[tr.Token][bt-bt%3600]; ok {
		usd = ingest.Float(amt * p)
	}
	if d := floorDiv(bt, 86400); l.ntr == 0 || d != l.day {
		l.day, l.part = d, [2]string{l.Chain, time.Unix(bt, 0).UTC().Format("2006-01-02")}
	}
	l.ntr++
	// Vals, not interfaces: no allocation per value of the area's largest table.
	return l.stage.AppendVals(lake.OnchainTransfers, l.part[:], ingest.Int(int64(tr.Block)), ingest.Time(time.Unix(bt, 0)),
		ingest.Text(tr.TxHash), ingest.Int(int64(tr.LogIndex)), ingest.Text(tr.Token), ingest.Text(tr.From), ingest.Text(tr.To),
		ingest.Text(tr.Value.String()), ingest.Float(amt), usd)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// token returns the metadata of addr, reading it from the contract when a MetaFunc is
// set (once per token), nil when it is unknown.
func (l *Loader) token(ctx context.Context, addr string) (*Token, error) {
	if t := l.tokens[addr]; t != nil {
		return t, nil
	}
	if addr == ZeroAddress {
		t := nativeToken(l.Chain)
		l.tokens[addr] = &t
		l.staged[addr] = true
		return &t, nil
	}
	if l.Meta == nil {
		return nil, nil
	}
	t, err := l.Meta(ctx, addr)
	if err != nil {
		return nil, &RunError{fmt.Errorf("token %s metadata: %w", addr, err)}
	}
	t.Address = addr
	l.tokens[addr] = &t
	l.staged[addr] = true
	return &t, nil
}

// RunError is a failure of the run rather than of the input row being read (an RPC
// call that failed after its retries): it is never skipped as a bad row.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// nativeToken is the native coin's row, written when the lake has none.
func nativeToken(chain string) Token {
	switch chain {
	case "bsc":
		return Token{Address: ZeroAddress, Symbol: "BNB", Name: "BNB", Decimals: 18, Asset: "bnb"}
	default: // ethereum and base pay gas in ether
		return Token{Address: ZeroAddress, Symbol: "ETH", Name: "Ether", Decimals: 18, Asset: "eth"}
	}
}

// Transfers is how many transfers are staged.
func (l *Loader) Transfers() int64 { return l.ntr }

// Check reports what would make Commit refuse: transfers in blocks without a timestamp
// (naming the block range to export) and transfers of tokens without metadata.
func (l *Loader) Check() error {
	if l.missing.n > 0 {
		return fmt.Errorf("%d transfers are in blocks without a timestamp (blocks %d to %d): export blocks.csv for blocks %d-%d (ethereumetl export_blocks_and_transactions --start-block %d --end-block %d) and ingest it with the transfers",
			l.missing.n, l.missing.lo, l.missing.hi, l.missing.lo, l.missing.hi, l.missing.lo, l.missing.hi)
	}
	if len(l.unknown) > 0 {
		ks := make([]string, 0, len(l.unknown))
		for k := range l.unknown {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		more := ""
		if len(ks) > 5 {
			more = fmt.Sprintf(" and %d more", len(ks)-5)
			ks = ks[:5]
		}
		return fmt.Errorf("no decimals for token %s%s: give tokens.csv (ethereumetl export_tokens) or --rpc to read them from the contracts", strings.Join(ks, ", "), more)
	}
	return nil
}

// Commit checks the batch (Check) and merges the staged rows into the lake: transfers
// deduplicated on (chain, tx_hash, log_index), tokens on (chain, token_address),
// prices on (chain, token_address, hour), labels on (address, source), label sources
// on source, ENS names on (address, name). Only the partitions the rows touch are
// rewritten, each atomically.
func (l *Loader) Commit(ctx context.Context, now time.Time) error {
	if err := l.Check(); err != nil {
		return err
	}
	unlock, err := lockLake(l.Root)
	if err != nil {
		return err
	}
	defer unlock()
	addrs := make([]string, 0, len(l.staged))
	for a := range l.staged {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		t := l.tokens[a]
		if err := l.stage.Append(lake.OnchainTokens, nil, l.Chain, t.Address, t.Symbol, t.Name, int32(max(t.Decimals, 0)),
			t.Logo, nullStr(t.Asset)); err != nil {
			return err
		}
	}
	l.staged = map[string]bool{}
	for _, m := range mergeKeys {
		if l.stage.Staged(m.t) == 0 {
			continue
		}
		ms, err := l.stage.Merge(ctx, m.t, m.key)
		if err != nil {
			return err
		}
		if m.t == lake.OnchainTransfers {
			l.Sum.Add(ms)
		} else {
			l.Sum.Partitions = append(l.Sum.Partitions, ms.Partitions...)
		}
	}
	if len(l.Sum.Partitions) == 0 {
		return nil
	}
	return ingest.EnsureLake(l.Root, now)
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}
