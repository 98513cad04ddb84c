package query

import (
	"context"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainTracePairsSQL = sqlfiles.MustRead("onchain/trace_pairs.sql")
	onchainTraceHeadsSQL = sqlfiles.MustRead("onchain/trace_heads.sql")
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

// OnchainTraceMaxWidth is the largest width a hop takes (the route clamps to it).
const OnchainTraceMaxWidth = 10

// tracePairs is what a hop can read of the hourly pair board of one (chain, window):
// each wallet's first OnchainTraceMaxWidth pairs in rank order (a hop takes a prefix of
// them), addresses interned to ids, in one flat slice. The board is published cut to
// those heads (trace_pairs.sql; before 2026-11-28 it held every pair of the window,
// which trace_heads.sql still cuts while reading). Reading the hops per request from the
// file instead costs a scan of most of its row groups per hop (a frontier's wallets are
// spread over the whole wallet order): 0.8 s for depth 5 width 10 on the medium lake,
// against 250 ms allowed.
type tracePairs struct {
	ids   map[string]int32
	names []string
	off   []int32 // wallet id -> its pairs are ents[off[2*id]:off[2*id+1]]
	ents  []tracePairEnt
}

type tracePairEnt struct {
	cp          int32
	n           int64
	out, in, vv float64
}

type tracePairsKey struct{}

func (q *Queries) onchainTracePairs(ctx context.Context, chain, window string) (*tracePairs, error) {
	v, _ := q.ext.LoadOrStore(tracePairsKey{}, newOcHourly[*tracePairs]("onchain trace pairs"))
	h := v.(*hourly[*tracePairs])
	return h.value(ctx, q, chain+"|"+window, ocBoardHour(q.Now()),
		func(ctx context.Context, at time.Time) (*tracePairs, error) {
			return q.buildTracePairs(ctx, chain, window, at)
		})
}

// tracePairsFile returns the published pair board of (chain, window) for hour at,
// publishing it first when it is not.
func (q *Queries) tracePairsFile(ctx context.Context, chain, window string, at time.Time) (string, error) {
	since, until := windowBounds(at, window)
	sig, err := filesSignature(q.dir, traceBoardSources...)
	if err != nil {
		return "", &StoreError{Op: "onchain trace", Err: err}
	}
	return q.derivedFile(ctx, lake.OnchainTracePairsBoard, chain+"."+window, boardBuilt(at, sig), BoardHoursKept,
		nil, onchainTracePairsSQL, chain, since, until, OnchainTraceMaxWidth)
}

func (q *Queries) buildTracePairs(ctx context.Context, chain, window string, at time.Time) (*tracePairs, error) {
	path, err := q.tracePairsFile(ctx, chain, window, at)
	if err != nil {
		return nil, wrap(ctx, "onchain trace", err)
	}
	if q.publishOnly {
		return &tracePairs{ids: map[string]int32{}}, nil
	}
	return q.loadTracePairs(ctx, path)
}

// loadTracePairs reads the heads of the rankings of the pair board file at path.
func (q *Queries) loadTracePairs(ctx context.Context, path string) (*tracePairs, error) {
	q.boardReads.Add(1)
	rows, err := q.db.QueryContext(ctx, onchainTraceHeadsSQL, path, OnchainTraceMaxWidth)
	if err != nil {
		return nil, wrap(ctx, "onchain trace", err)
	}
	defer rows.Close()
	p := &tracePairs{ids: map[string]int32{}}
	id := func(a string) int32 {
		if i, ok := p.ids[a]; ok {
			return i
		}
		i := int32(len(p.names))
		p.ids[a] = i
		p.names = append(p.names, a)
		return i
	}
	var walletOf []int32 // per entry, in row order (grouped by wallet)
	for rows.Next() {
		var x, c string
		var e tracePairEnt
		if err := rows.Scan(&x, &c, &e.out, &e.in, &e.n, &e.vv); err != nil {
			return nil, wrap(ctx, "onchain trace", err)
		}
		walletOf = append(walletOf, id(x))
		e.cp = id(c)
		p.ents = append(p.ents, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "onchain trace", err)
	}
	// Rows arrive grouped by wallet: record where each wallet's run starts and ends.
	p.off = make([]int32, 2*len(p.names))
	for i := range p.off {
		p.off[i] = -1
	}
	for i, w := range walletOf {
		if p.off[2*w] < 0 {
			p.off[2*w] = int32(i)
		}
		p.off[2*w+1] = int32(i + 1)
	}
	return p, nil
}

// hop returns x's first width (at most OnchainTraceMaxWidth) pairs clearing minUSD.
func (p *tracePairs) hop(x string, minUSD float64, width int) []TraceCounterparty {
	w, ok := p.ids[x]
	if !ok || p.off[2*w] < 0 {
		return nil
	}
	var out []TraceCounterparty
	for _, e := range p.ents[p.off[2*w]:p.off[2*w+1]] {
		if len(out) >= width || e.vv < minUSD {
			break
		}
		out = append(out, TraceCounterparty{Address: p.names[e.cp], OutUSD: e.out, InUSD: e.in, TxCount: e.n})
	}
	return out
}

// OnchainTraceHop returns, for each wallet of frontier, its top-width counterparties
// (width at most OnchainTraceMaxWidth) clearing minUSD, best first, from the hourly pair
// board of (chain, window).
func (q *Queries) OnchainTraceHop(ctx context.Context, chain, window string, minUSD float64, width int, frontier []string) (map[string][]TraceCounterparty, error) {
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	p, err := q.onchainTracePairs(ctx, chain, window)
	if err != nil {
		return nil, err
	}
	out := map[string][]TraceCounterparty{}
	for _, x := range frontier {
		if l := p.hop(x, minUSD, width); l != nil {
			out[x] = l
		}
	}
	return out, nil
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
