package query

import (
	"context"
	"math"
	"slices"
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
	ck := cat + "|" + key
	if key == "realized_pnl_window" || key == "realized_pnl_window_asc" || key == "volume_24h" || key == "trades_24h" {
		ck += "|" + string(rune('0'+w+1))
	}
	if v, ok := b.orders.Load(ck); ok {
		return v.([]int32)
	}
	es := b.Cats[cat]
	// Each entry's sort value as one float64 (ascending; every figure is a rounded
	// float or an integer below 2^53, so the conversion is exact), then the index: the
	// entries are sorted by wallet (finish), so the index breaks ties as the address
	// does, and the comparison does no per-pair dispatch on the key.
	keyed := make([]sortKey, len(es))
	for i := range es {
		keyed[i] = sortKey{entrySortValue(&es[i], w, key), int32(i)}
	}
	slices.SortFunc(keyed, func(x, y sortKey) int {
		if x.v < y.v {
			return -1
		}
		if x.v > y.v {
			return 1
		}
		return int(x.i - y.i)
	})
	idx := make([]int32, len(es))
	for i, k := range keyed {
		idx[i] = k.i
	}
	b.orders.Store(ck, idx)
	return idx
}

type sortKey struct {
	v float64
	i int32
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
