package query

import (
	"context"
	"math"
	"time"
)

// LeaderboardSorts are the accepted sort keys of /v1/predmkt/leaderboard.
var LeaderboardSorts = []string{"realized_pnl", "realized_pnl_asc", "realized_pnl_window", "realized_pnl_window_asc",
	"hit_rate", "resolved", "volume_24h", "trades_24h", "volume_all", "trades_all", "markets", "last_seen"}

// PredmktLeaderboardParams are the inputs of PredmktLeaderboard.
type PredmktLeaderboardParams struct {
	Category     string // all or one category
	Window       string // 24h, 7d, 30d, all
	Sort         string // one of LeaderboardSorts
	MinResolved  int64
	MinVolumeUSD float64
	MinAvgUSD    float64
	Limit        int
	Offset       int
}

// WalletBoardRow is one row of /v1/predmkt/leaderboard.
type WalletBoardRow struct {
	Rank                 int      `json:"rank" doc:"position in the sorted, filtered board; continues across pages by offset"`
	ProxyWallet          string   `json:"proxy_wallet"`
	Pseudonym            string   `json:"pseudonym"`
	DisplayName          string   `json:"display_name"`
	RealizedPnLUSD       float64  `json:"realized_pnl_usd" doc:"lifetime realized PnL on validly resolved markets: sells minus buys plus 1 USD per winning share held"`
	RealizedPnLWindowUSD float64  `json:"realized_pnl_window_usd" doc:"realized PnL of markets that resolved inside window; lifetime when window=all"`
	ResolvedMarkets      int64    `json:"resolved_markets" doc:"validly resolved markets traded (invalid resolutions excluded)"`
	HitRate              *float64 `json:"hit_rate" doc:"share of resolved dollar volume in markets where the wallet made money; null with no resolved volume"`
	HitRateCI            *float64 `json:"hit_rate_ci" doc:"half-width of the 95% Wilson interval of hit_rate with n = resolved_markets; indicative only"`
	VolumeAllUSD         float64  `json:"volume_all_usd" doc:"lifetime buys plus sells"`
	VolumeWindowUSD      float64  `json:"volume_window_usd" doc:"buys plus sells inside window"`
	TradesAll            int64    `json:"trades_all"`
	TradesWindow         int64    `json:"trades_window"`
	AvgTradeUSD          float64  `json:"avg_trade_usd" doc:"volume_all_usd / trades_all"`
	Markets              int64    `json:"markets" doc:"lifetime markets traded"`
	FirstSeen            string   `json:"first_seen" doc:"first fill in the recorded tape (ISO-8601 UTC, ms)"`
	LastSeen             string   `json:"last_seen" doc:"last fill (ISO-8601 UTC, ms)"`
	Tags                 []string `json:"tags" doc:"bot, whale, hot, cold"`
}

// window returns the entry's windowed PnL, volume and trades (lifetime for "all").
func (e *BoardEntry) window(w int) (pnl, vol float64, trades int64) {
	if w < 0 {
		return e.PnL, e.Volume, e.Trades
	}
	return e.PnLWin[w], e.VolumeWin[w], e.TradesWin[w]
}

// PredmktLeaderboard pages the hourly board: filter, sort (ties on address), rank.
func (q *Queries) PredmktLeaderboard(ctx context.Context, p PredmktLeaderboardParams) ([]WalletBoardRow, error) {
	b, err := q.PredmktBoard(ctx)
	if err != nil {
		return nil, err
	}
	es := b.Cats[p.Category]
	w := windowIndex(p.Window)
	order := b.order(p.Category, w, p.Sort)
	out := []WalletBoardRow{}
	passed := 0
	for _, i := range order {
		e := &es[i]
		if e.Resolved < p.MinResolved || e.Volume < p.MinVolumeUSD || e.AvgTradeUSD < p.MinAvgUSD {
			continue
		}
		passed++
		if passed <= p.Offset {
			continue
		}
		pnl, vol, n := e.window(w)
		out = append(out, WalletBoardRow{
			Rank: passed, ProxyWallet: e.Wallet, Pseudonym: e.Pseudonym, DisplayName: e.DisplayName,
			RealizedPnLUSD: e.PnL, RealizedPnLWindowUSD: pnl, ResolvedMarkets: e.Resolved,
			HitRate: e.HitRate, HitRateCI: e.HitRateCI, VolumeAllUSD: e.Volume, VolumeWindowUSD: vol,
			TradesAll: e.Trades, TradesWindow: n, AvgTradeUSD: e.AvgTradeUSD, Markets: e.Markets,
			FirstSeen: ISOMillis(time.UnixMilli(e.FirstTS)), LastSeen: ISOMillis(time.UnixMilli(e.LastTS)),
			Tags: e.Tags,
		})
		if len(out) == p.Limit {
			break
		}
	}
	return out, nil
}

// order returns the category's entries sorted for (window, sort), computed once per
// board: every later page is a scan of this permutation.
func (b *Board) order(cat string, w int, key string) []int32 {
	if w < 0 { // a window key over "all" ranks by the lifetime figure: the same order
		if k, ok := lifetimeSorts[key]; ok {
			key = k
		}
	}
	ck := cat + "|" + key
	if key == "realized_pnl_window" || key == "realized_pnl_window_asc" || key == "volume_24h" || key == "trades_24h" {
		ck += "|" + string(rune('0'+w+1))
	}
	if v, ok := b.orders.Load(ck); ok {
		return v.([]int32)
	}
	es := b.Cats[cat]
	// Each entry's sort value as one float64 (ascending; every figure is a rounded
	// float or an integer below 2^53, so the conversion is exact), radix-sorted: the sort
	// is stable and the entries are sorted by wallet (finish), so equal values keep the
	// address order, the tie-break of the board. A board sorts every (category, window,
	// sort) when it is built or read back, so this is most of a read back's Go time.
	keys := make([]uint64, len(es))
	for i := range es {
		keys[i] = sortBits(entrySortValue(&es[i], w, key))
	}
	idx := radixOrder(keys)
	b.orders.Store(ck, idx)
	return idx
}

// lifetimeSorts maps the window sort keys to the lifetime key they rank by when the
// window is "all" (entry.window(-1) is the lifetime figures).
var lifetimeSorts = map[string]string{"realized_pnl_window": "realized_pnl", "realized_pnl_window_asc": "realized_pnl_asc",
	"volume_24h": "volume_all", "trades_24h": "trades_all"}

// sortBits maps a float64 to a uint64 in the same order (negative zero as zero, equal
// to it as the float comparison has it).
func sortBits(v float64) uint64 {
	if v == 0 {
		v = 0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// radixOrder returns the indices of keys in ascending key order, equal keys in index
// order (a stable least-significant-byte radix sort; a byte all keys share is skipped).
func radixOrder(keys []uint64) []int32 {
	n := len(keys)
	idx, tmp := make([]int32, n), make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	var and, or uint64 = ^uint64(0), 0
	for _, k := range keys {
		and &= k
		or |= k
	}
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if (and>>shift)&0xff == (or>>shift)&0xff {
			continue // every key has the same byte here
		}
		count = [256]int{}
		for _, i := range idx {
			count[(keys[i]>>shift)&0xff]++
		}
		pos := 0
		for d := range count {
			c := count[d]
			count[d] = pos
			pos += c
		}
		for _, i := range idx {
			d := (keys[i] >> shift) & 0xff
			tmp[count[d]] = i
			count[d]++
		}
		idx, tmp = tmp, idx
	}
	return idx
}

// entrySortValue is the value an entry ranks by under key, smaller first: the
// descending keys are negated, and an entry without a hit rate ranks after all others
// (+Inf). compareEntries (the tests' oracle) states the same order pairwise.
func entrySortValue(e *BoardEntry, w int, key string) float64 {
	pnl, vol, trades := e.window(w)
	switch key {
	case "realized_pnl_asc":
		return e.PnL
	case "realized_pnl_window":
		return -pnl
	case "realized_pnl_window_asc":
		return pnl
	case "hit_rate":
		if e.HitRate == nil {
			return math.Inf(1)
		}
		return -*e.HitRate
	case "resolved":
		return -float64(e.Resolved)
	case "volume_24h":
		return -vol
	case "trades_24h":
		return -float64(trades)
	case "volume_all":
		return -e.Volume
	case "trades_all":
		return -float64(e.Trades)
	case "markets":
		return -float64(e.Markets)
	case "last_seen":
		return -float64(e.LastTS)
	default: // realized_pnl
		return -e.PnL
	}
}
