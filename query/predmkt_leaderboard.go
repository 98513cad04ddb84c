package query

import (
	"cmp"
	"context"
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
	idx := make([]int32, len(es))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(x, y int32) int {
		if c := compareEntries(&es[x], &es[y], w, key); c != 0 {
			return c
		}
		return cmp.Compare(es[x].Wallet, es[y].Wallet)
	})
	b.orders.Store(ck, idx)
	return idx
}

// compareEntries orders two entries by key: negative when a ranks first. Entries hold
// rounded figures, so values that print equal tie, and ties go to the address.
func compareEntries(a, c *BoardEntry, w int, key string) int {
	desc := func(x, y float64) int { return cmp.Compare(y, x) }
	switch key {
	case "realized_pnl_asc":
		return cmp.Compare(a.PnL, c.PnL)
	case "realized_pnl_window", "realized_pnl_window_asc":
		x, _, _ := a.window(w)
		y, _, _ := c.window(w)
		if key == "realized_pnl_window_asc" {
			return cmp.Compare(x, y)
		}
		return desc(x, y)
	case "hit_rate":
		switch {
		case a.HitRate == nil && c.HitRate == nil:
			return 0
		case a.HitRate == nil:
			return 1
		case c.HitRate == nil:
			return -1
		}
		return desc(*a.HitRate, *c.HitRate)
	case "resolved":
		return cmp.Compare(c.Resolved, a.Resolved)
	case "volume_24h":
		_, x, _ := a.window(w)
		_, y, _ := c.window(w)
		return desc(x, y)
	case "trades_24h":
		_, _, x := a.window(w)
		_, _, y := c.window(w)
		return cmp.Compare(y, x)
	case "volume_all":
		return desc(a.Volume, c.Volume)
	case "trades_all":
		return cmp.Compare(c.Trades, a.Trades)
	case "markets":
		return cmp.Compare(c.Markets, a.Markets)
	case "last_seen":
		return cmp.Compare(c.LastTS, a.LastTS)
	default: // realized_pnl
		return desc(a.PnL, c.PnL)
	}
}
