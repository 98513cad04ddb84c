package query

import (
	"context"
	"time"
)

// PredmktWalletFigures are a wallet's board figures in one category ("all" is every
// market), as the leaderboard computes them, with its rank there.
type PredmktWalletFigures struct {
	Category          string   `json:"category" doc:"all or one category; every figure is computed on that category's markets only"`
	Rank              int      `json:"rank" doc:"position by realized_pnl_usd (largest first, ties on address) among every wallet of the category's board, with no filter"`
	Wallets           int      `json:"wallets" doc:"wallets on the category's board"`
	RealizedPnLUSD    float64  `json:"realized_pnl_usd" doc:"lifetime realized PnL on validly resolved markets"`
	RealizedPnL24hUSD float64  `json:"realized_pnl_24h_usd" doc:"realized PnL of markets resolved in the 24 hours to the board's build"`
	RealizedPnL7dUSD  float64  `json:"realized_pnl_7d_usd"`
	RealizedPnL30dUSD float64  `json:"realized_pnl_30d_usd"`
	ResolvedMarkets   int64    `json:"resolved_markets" doc:"validly resolved markets traded (invalid resolutions excluded)"`
	HitRate           *float64 `json:"hit_rate" doc:"share of resolved dollar volume in markets where the wallet made money; null with no resolved volume"`
	HitRateCI         *float64 `json:"hit_rate_ci" doc:"half-width of the 95% Wilson interval of hit_rate; indicative only"`
	VolumeAllUSD      float64  `json:"volume_all_usd" doc:"lifetime buys plus sells"`
	Volume24hUSD      float64  `json:"volume_24h_usd"`
	Volume7dUSD       float64  `json:"volume_7d_usd"`
	Volume30dUSD      float64  `json:"volume_30d_usd"`
	TradesAll         int64    `json:"trades_all"`
	Trades24h         int64    `json:"trades_24h"`
	Trades7d          int64    `json:"trades_7d"`
	Trades30d         int64    `json:"trades_30d"`
	AvgTradeUSD       float64  `json:"avg_trade_usd" doc:"volume_all_usd / trades_all"`
	Markets           int64    `json:"markets" doc:"markets traded"`
	FirstSeen         string   `json:"first_seen" doc:"first fill (ISO-8601 UTC, ms)"`
	LastSeen          string   `json:"last_seen" doc:"last fill (ISO-8601 UTC, ms)"`
	Tags              []string `json:"tags" doc:"bot, whale, hot, cold on this category's figures"`
}

// PredmktWalletProfile is the body of /v1/predmkt/wallets/{address}.
type PredmktWalletProfile struct {
	Wallet      string                 `json:"wallet"`
	Pseudonym   string                 `json:"pseudonym"`
	DisplayName string                 `json:"display_name"`
	BoardHour   string                 `json:"board_hour" doc:"the hour of the board the figures come from (ISO-8601 UTC, ms)"`
	Rank        int                    `json:"rank" doc:"overall rank (the rank of the all entry)"`
	Tags        []string               `json:"tags" doc:"overall tags (those of the all entry)"`
	Overall     PredmktWalletFigures   `json:"overall" doc:"figures over every market (category all)"`
	Categories  []PredmktWalletFigures `json:"categories" doc:"one entry per category the wallet traded, in the order Crypto, Sports, Politics, Pop-Culture, Tech"`
}

// PredmktWallet answers /v1/predmkt/wallets/{address} from the hourly board;
// ErrNotFound when the wallet is not on it (no fill in the lake).
func (q *Queries) PredmktWallet(ctx context.Context, wallet string) (PredmktWalletProfile, error) {
	b, err := q.PredmktBoard(ctx)
	if err != nil {
		return PredmktWalletProfile{}, err
	}
	all, ok := b.Entry("all", wallet)
	if !ok {
		return PredmktWalletProfile{}, ErrNotFound
	}
	p := PredmktWalletProfile{Wallet: wallet, Pseudonym: all.Pseudonym, DisplayName: all.DisplayName,
		BoardHour: ISOMillis(b.Hour), Overall: b.figures("all", all), Categories: []PredmktWalletFigures{}}
	p.Rank, p.Tags = p.Overall.Rank, p.Overall.Tags
	for _, c := range PredmktCategories {
		if e, ok := b.Entry(c, wallet); ok {
			p.Categories = append(p.Categories, b.figures(c, e))
		}
	}
	return p, nil
}

// figures renders an entry with its rank in the category's realized_pnl order.
func (b *Board) figures(cat string, e *BoardEntry) PredmktWalletFigures {
	i := int32(b.index[cat][e.Wallet])
	rank := 0
	for pos, j := range b.order(cat, -1, "realized_pnl") {
		if j == i {
			rank = pos + 1
			break
		}
	}
	return PredmktWalletFigures{
		Category: cat, Rank: rank, Wallets: len(b.Cats[cat]),
		RealizedPnLUSD: e.PnL, RealizedPnL24hUSD: e.PnLWin[0], RealizedPnL7dUSD: e.PnLWin[1], RealizedPnL30dUSD: e.PnLWin[2],
		ResolvedMarkets: e.Resolved, HitRate: e.HitRate, HitRateCI: e.HitRateCI,
		VolumeAllUSD: e.Volume, Volume24hUSD: e.VolumeWin[0], Volume7dUSD: e.VolumeWin[1], Volume30dUSD: e.VolumeWin[2],
		TradesAll: e.Trades, Trades24h: e.TradesWin[0], Trades7d: e.TradesWin[1], Trades30d: e.TradesWin[2],
		AvgTradeUSD: e.AvgTradeUSD, Markets: e.Markets,
		FirstSeen: ISOMillis(time.UnixMilli(e.FirstTS)), LastSeen: ISOMillis(time.UnixMilli(e.LastTS)), Tags: e.Tags,
	}
}
