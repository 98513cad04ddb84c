package query

import (
	"context"
	"os"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainTracePairsSQL = sqlfiles.MustRead("onchain/trace_pairs.sql")
	onchainTraceHopSQL   = sqlfiles.MustRead("onchain/trace_hop.sql")
)

// OnchainTraceParams are the inputs of OnchainTrace.
type OnchainTraceParams struct {
	Root   string
	Chain  string
	Depth  int     // 1 to 5
	Width  int     // 1 to 10
	Window string  // 24h, 7d, 30d, 90d or all
	MinUSD float64 // pair volume floor
}

// TraceNode is a wallet of a TraceGraph.
type TraceNode struct {
	Address        string  `json:"address"`
	Depth          int     `json:"depth" doc:"hops from the root (0 for the root): the hop at which the wallet was first named"`
	Label          string  `json:"label" doc:"label entity from the label cascade; empty when unlabelled"`
	WalletType     string  `json:"wallet_type" doc:"label wallet type; empty when unlabelled"`
	TotalVolumeUSD float64 `json:"total_volume_usd" doc:"the sum of volume_usd of this node's edges in this graph only"`
}

// TraceEdge is one relationship of a TraceGraph: one per unordered pair of wallets.
type TraceEdge struct {
	From      string  `json:"from" doc:"the wallet of the pair expanded first (not the sender)"`
	To        string  `json:"to"`
	VolumeUSD float64 `json:"volume_usd" doc:"out_usd plus in_usd"`
	OutUSD    float64 `json:"out_usd" doc:"USD from 'from' to 'to' in the window"`
	InUSD     float64 `json:"in_usd" doc:"USD from 'to' to 'from' in the window"`
	TxCount   int64   `json:"tx_count" doc:"transfers between the pair, both ways"`
}

// TraceStats summarises a TraceGraph.
type TraceStats struct {
	NodeCount       int `json:"node_count"`
	EdgeCount       int `json:"edge_count" doc:"relationships (unordered pairs)"`
	MaxDepthReached int `json:"max_depth_reached"`
}

// TraceGraph is /v1/onchain/wallets/{address}/trace.
type TraceGraph struct {
	Root   string      `json:"root"`
	Depth  int         `json:"depth" doc:"applied depth (1 to 5)"`
	Width  int         `json:"width" doc:"applied width (1 to 10)"`
	Window string      `json:"window" doc:"the window read (a misspelled one reads 30d)"`
	MinUSD float64     `json:"min_usd" doc:"the resolved pair-volume floor"`
	Nodes  []TraceNode `json:"nodes"`
	Edges  []TraceEdge `json:"edges"`
	Stats  TraceStats  `json:"stats"`
}

// TraceCounterparty is one ranked counterparty of an expanded wallet.
type TraceCounterparty struct {
	Address       string
	OutUSD, InUSD float64 // from the expanded wallet's side
	TxCount       int64
}

// The pair board of (chain, window) for the hour is a published Parquet file
// (lake.OnchainTracePairsBoard, rows sorted by wallet): a hop reads its frontier's rows
// from it per request, so the board (every pair of the window: hundreds of megabytes
// on a large lake) never sits in the Go heap; the hourly cache keeps the file's path.

type tracePairsKey struct{}

// onchainTracePairs returns the path of the published pair board of (chain, window)
// for the serving hour, publishing it first when it is not.
func (q *Queries) onchainTracePairs(ctx context.Context, chain, window string) (string, error) {
	v, _ := q.ext.LoadOrStore(tracePairsKey{}, newOcHourly[string]("onchain trace pairs"))
	h := v.(*hourly[string])
	return h.value(ctx, q, chain+"|"+window, ocBoardHour(q.Now()),
		func(ctx context.Context, at time.Time) (string, error) {
			return q.buildTracePairs(ctx, chain, window, at)
		})
}

func (q *Queries) buildTracePairs(ctx context.Context, chain, window string, at time.Time) (string, error) {
	since, until := windowBounds(at, window)
	sig, err := filesSignature(q.dir, legsBoardSources...)
	if err != nil {
		return "", &StoreError{Op: "onchain trace", Err: err}
	}
	path, err := q.derivedFile(ctx, lake.OnchainTracePairsBoard, chain+"."+window, boardBuilt(at, sig), BoardHoursKept,
		nil, onchainTracePairsSQL, chain, since, until)
	return path, wrap(ctx, "onchain trace", err)
}

// tracePairsHop reads, from the pair board file, each frontier wallet's first width
// pairs clearing minUSD, best first.
func (q *Queries) tracePairsHop(ctx context.Context, path string, minUSD float64, width int, frontier []string) (map[string][]TraceCounterparty, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, onchainTraceHopSQL, path, frontier, minUSD, width)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]TraceCounterparty{}
	for rows.Next() {
		var x string
		var c TraceCounterparty
		if err := rows.Scan(&x, &c.Address, &c.OutUSD, &c.InUSD, &c.TxCount); err != nil {
			return nil, err
		}
		out[x] = append(out[x], c)
	}
	return out, rows.Err()
}

// OnchainTraceHop returns, for each wallet of frontier, its top-width counterparties
// clearing minUSD, best first, from the hourly pair board of (chain, window).
func (q *Queries) OnchainTraceHop(ctx context.Context, chain, window string, minUSD float64, width int, frontier []string) (map[string][]TraceCounterparty, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	path, err := q.onchainTracePairs(ctx, chain, window)
	if err != nil {
		return nil, err
	}
	out, err := q.tracePairsHop(ctx, path, minUSD, width, frontier)
	if err != nil && ctx.Err() == nil {
		if _, serr := os.Stat(path); serr != nil {
			// Another process published the board from newer sources and removed this
			// version since the path was cached: read (or publish) the current one.
			if path, err = q.buildTracePairs(ctx, chain, window, ocBoardHour(q.Now())); err == nil {
				out, err = q.tracePairsHop(ctx, path, minUSD, width, frontier)
			}
		}
	}
	return out, wrap(ctx, "onchain trace", err)
}

// OnchainTrace follows money outward from the root breadth-first: each hop expands
// every wallet of the current level, in the order they were named, to its top
// `width` counterparties by pair volume; a wallet is expanded once however many
// neighbours name it, and wallets first named at hop `depth` are not expanded. Each
// unordered pair is one edge whose `from` is the endpoint expanded first (an endpoint
// never expanded comes after every expanded one).
func (q *Queries) OnchainTrace(ctx context.Context, p OnchainTraceParams) (TraceGraph, error) {
	g := TraceGraph{Root: p.Root, Depth: p.Depth, Width: p.Width, Window: p.Window, MinUSD: p.MinUSD,
		Nodes: []TraceNode{{Address: p.Root}}, Edges: []TraceEdge{}}
	nodeIdx := map[string]int{p.Root: 0}
	expanded := map[string]int{} // wallet -> expansion order
	edgeIdx := map[[2]string]int{}
	level := []string{p.Root}
	for d := 0; d < p.Depth && len(level) > 0; d++ {
		hop, err := q.OnchainTraceHop(ctx, p.Chain, p.Window, p.MinUSD, p.Width, level)
		if err != nil {
			return g, err
		}
		var next []string
		for _, x := range level {
			expanded[x] = len(expanded)
			for _, c := range hop[x] {
				key := pairKey(x, c.Address)
				if _, ok := edgeIdx[key]; ok {
					continue
				}
				e := TraceEdge{From: x, To: c.Address, OutUSD: c.OutUSD, InUSD: c.InUSD, TxCount: c.TxCount}
				if _, ok := expanded[c.Address]; ok { // expanded before x
					e = TraceEdge{From: c.Address, To: x, OutUSD: c.InUSD, InUSD: c.OutUSD, TxCount: c.TxCount}
				}
				edgeIdx[key] = len(g.Edges)
				g.Edges = append(g.Edges, e)
				if _, ok := nodeIdx[c.Address]; !ok {
					nodeIdx[c.Address] = len(g.Nodes)
					g.Nodes = append(g.Nodes, TraceNode{Address: c.Address, Depth: d + 1})
					next = append(next, c.Address)
				}
			}
		}
		level = next
	}
	// Volumes: each edge adds to both of its nodes (unrounded, then rounded once).
	vol := make([]float64, len(g.Nodes))
	for i := range g.Edges {
		e := &g.Edges[i]
		v := e.OutUSD + e.InUSD
		vol[nodeIdx[e.From]] += v
		vol[nodeIdx[e.To]] += v
		e.VolumeUSD, e.OutUSD, e.InUSD = usd(v), usd(e.OutUSD), usd(e.InUSD)
	}
	addrs := make([]string, len(g.Nodes))
	for i := range g.Nodes {
		addrs[i] = g.Nodes[i].Address
		g.Nodes[i].TotalVolumeUSD = usd(vol[i])
		g.Stats.MaxDepthReached = max(g.Stats.MaxDepthReached, g.Nodes[i].Depth)
	}
	// Labels as the cascade stood at the board hour the pairs are built at.
	labels, err := q.OnchainLabels(ctx, addrs, ocBoardHour(q.Now()))
	if err != nil {
		return g, err
	}
	for i := range g.Nodes {
		if l, ok := labels[g.Nodes[i].Address]; ok {
			g.Nodes[i].Label, g.Nodes[i].WalletType = l.Entity, l.WalletType
		}
	}
	g.Stats.NodeCount, g.Stats.EdgeCount = len(g.Nodes), len(g.Edges)
	return g, nil
}

func pairKey(a, b string) [2]string {
	if a < b {
		return [2]string{a, b}
	}
	return [2]string{b, a}
}
