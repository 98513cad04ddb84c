package query

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var onchainDiscoverSQL = sqlfiles.MustRead("onchain/discover.sql")

// OnchainDiscoverParams are the inputs of OnchainDiscover.
type OnchainDiscoverParams struct {
	Chain  string // ethereum or bsc
	Window string // 24h, 7d, 30d, 90d or all
	Sort   string // volume, inflow, outflow, net_flow, tx_count or pnl
	Order  string // asc or desc
	Size   int
}

// DiscoverRow is one wallet of /v1/onchain/wallets/discover.
type DiscoverRow struct {
	Address          string  `json:"address"`
	Volume           float64 `json:"volume" doc:"inflow plus outflow, USD in the window"`
	Inflow           float64 `json:"inflow" doc:"USD at transfer time received in the window"`
	Outflow          float64 `json:"outflow" doc:"USD at transfer time sent in the window"`
	NetFlow          float64 `json:"net_flow" doc:"inflow minus outflow"`
	TxCount          int64   `json:"tx_count" doc:"transfers sent or received in the window"`
	TokensTraded     int64   `json:"tokens_traded" doc:"distinct tokens moved in the window"`
	TokensProfitable int64   `json:"tokens_profitable" doc:"tokens whose realized PnL in the window is above zero"`
	FirstSeen        *string `json:"first_seen" doc:"first transfer on this chain (YYYY-MM-DD); /wallets/{address} spans every chain"`
	LastActive       *string `json:"last_active" doc:"last transfer on this chain"`
	RealizedPnL      float64 `json:"realized_pnl" doc:"sum over tokens bought and sold in the window of min(bought, sold) x (average sell price - average buy price), USD"`
	PnLAvailable     int64   `json:"pnl_available" doc:"1: realized_pnl was computed (always 1 on listed rows)"`
}

// Discover is the envelope of /v1/onchain/wallets/discover.
type Discover struct {
	Wallets []DiscoverRow `json:"wallets"`
	Total   int64         `json:"total" doc:"wallets in the matching population (pnl_available), not the row count"`
}

// discoverBoardRow is one wallet of an hourly discover board, with its sort keys (the
// exact figures rounded to the cent).
type discoverBoardRow struct {
	DiscoverRow
	inKey, outKey, netKey, pnlKey, volKey float64
}

type discoverBoardKey struct{}

// OnchainDiscover ranks the wallets of one chain whose realized PnL is available. It
// reads the hourly board of (chain, window), as of the start of the store clock's
// hour, and ranks and cuts it here.
func (q *Queries) OnchainDiscover(ctx context.Context, p OnchainDiscoverParams) (Discover, error) {
	out := Discover{Wallets: []DiscoverRow{}}
	if err := q.onchainLegs(ctx); err != nil {
		return out, err
	}
	v, _ := q.ext.LoadOrStore(discoverBoardKey{}, newOcHourly[*discoverBoard]("onchain discover board"))
	h := v.(*hourly[*discoverBoard])
	board, err := h.value(ctx, q, p.Chain+"|"+p.Window, ocBoardHour(q.Now()),
		func(ctx context.Context, at time.Time) (*discoverBoard, error) {
			return q.buildDiscoverBoard(ctx, p.Chain, p.Window, at)
		})
	if err != nil {
		return out, err
	}
	rank := board.ranked(p.Sort, p.Order)
	for _, r := range rank[:min(len(rank), p.Size)] {
		out.Wallets = append(out.Wallets, board.rows[r].DiscoverRow)
	}
	out.Total = int64(len(board.rows))
	return out, nil
}

// discoverBoard is one hourly discover board with its rankings, each sorted once on
// first use.
type discoverBoard struct {
	rows   []discoverBoardRow
	mu     sync.Mutex
	orders map[string][]int32 // sort|order -> row indexes, best first
}

// discoverSorts are the route's sort keys (handlers/onchain.go).
var discoverSorts = []string{"volume", "inflow", "outflow", "net_flow", "tx_count", "pnl"}

func (b *discoverBoard) ranked(sortBy, order string) []int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rankedLocked(sortBy, order)
}

// sortAll ranks the board by every sort key, descending (the route's default order),
// when it is built: a first sort of a large board (76 k wallets for ethereum over 30
// days at large, 15 to 30 ms) was paid by the first request of each key in the hour,
// which is what the route's p99 measured. Ascending orders are derived from them on
// first use in one pass (asc).
func (b *discoverBoard) sortAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range discoverSorts {
		b.rankedLocked(s, "desc")
	}
}

func (b *discoverBoard) rankedLocked(sortBy, order string) []int32 {
	if r, ok := b.orders[sortBy+"|"+order]; ok {
		return r
	}
	var rank []int32
	if order == "asc" {
		rank = b.asc(b.rankedLocked(sortBy, "desc"), discoverKey(sortBy))
	}
	if rank == nil {
		rank = b.sorted(sortBy, order)
	}
	b.orders[sortBy+"|"+order] = rank
	return rank
}

// discoverKey is the ranking key of sortBy.
func discoverKey(sortBy string) func(r *discoverBoardRow) float64 {
	return func(r *discoverBoardRow) float64 {
		switch sortBy {
		case "inflow":
			return r.inKey
		case "outflow":
			return r.outKey
		case "net_flow":
			return r.netKey
		case "tx_count":
			return float64(r.TxCount)
		case "pnl":
			return r.pnlKey
		}
		return r.volKey
	}
}

// sorted sorts the board by sortBy in order, ties by address.
func (b *discoverBoard) sorted(sortBy, order string) []int32 {
	key := discoverKey(sortBy)
	sign := -1.0
	if order == "asc" {
		sign = 1
	}
	rank := make([]int32, len(b.rows))
	for i := range rank {
		rank[i] = int32(i)
	}
	slices.SortFunc(rank, func(i, j int32) int {
		a, c := &b.rows[i], &b.rows[j]
		if x := cmp.Compare(sign*key(a), sign*key(c)); x != 0 {
			return x
		}
		return strings.Compare(a.Address, c.Address)
	})
	return rank
}

// asc derives the ascending order of key from its descending one (both break ties by
// address, ascending): the descending order reversed, with each run of equal keys
// reversed back. nil when a key is NaN (whose place a sort decides differently), for
// the caller to sort.
func (b *discoverBoard) asc(desc []int32, key func(*discoverBoardRow) float64) []int32 {
	n := len(desc)
	out := make([]int32, n)
	for i, r := range desc {
		if math.IsNaN(key(&b.rows[r])) {
			return nil
		}
		out[n-1-i] = r
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && key(&b.rows[out[j]]) == key(&b.rows[out[i]]) {
			j++
		}
		slices.Reverse(out[i:j])
		i = j
	}
	return out
}

func (q *Queries) buildDiscoverBoard(ctx context.Context, chain, window string, at time.Time) (*discoverBoard, error) {
	since, until := windowBounds(at, window)
	rows, err := q.sourcedBoardRows(ctx, lake.OnchainDiscoverBoard, chain+"."+window, at, legsBoardSources,
		// The chain's five boards are computed in one pass (discover_all.sql), which
		// publishes them; discover.sql computes a board that pass could not publish.
		func(ctx context.Context) error {
			return q.boardFamily(ctx, discoverFamily, chain, chain+"."+window, at)
		},
		onchainDiscoverSQL, chain, since, until)
	if err != nil {
		return nil, wrap(ctx, "onchain discover", err)
	}
	defer rows.Close()
	board := []discoverBoardRow{}
	for rows.Next() {
		var r discoverBoardRow
		var first, last sql.NullTime
		if err := rows.Scan(&r.Address, &r.Inflow, &r.Outflow, &r.TxCount, &r.TokensTraded, &r.TokensProfitable,
			&first, &last, &r.RealizedPnL, &r.inKey, &r.outKey, &r.netKey, &r.pnlKey, &r.volKey); err != nil {
			return nil, wrap(ctx, "onchain discover", err)
		}
		r.Volume, r.NetFlow = usd(r.Inflow+r.Outflow), usd(r.Inflow-r.Outflow)
		r.Inflow, r.Outflow, r.RealizedPnL = usd(r.Inflow), usd(r.Outflow), usd(finite(r.RealizedPnL))
		r.FirstSeen, r.LastActive = dateOf(first), dateOf(last)
		r.PnLAvailable = 1
		board = append(board, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "onchain discover", err)
	}
	b := &discoverBoard{rows: board, orders: map[string][]int32{}}
	b.sortAll()
	return b, nil
}
