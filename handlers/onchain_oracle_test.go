package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"testing"
	"time"

	"mdq/query"
)

// Plain-Go oracles of the on-chain analytics, computed from raw rows read with simple
// SELECTs. Nothing here shares code with the query package.

type ocRaw struct {
	chain, token, from, to string
	t                      time.Time
	amount, usd            float64
	priced                 bool
}

type ocLabelRaw struct {
	entity, walletType, confidence, risk string
	priority                             int
}

type ocWorld struct {
	raw    []ocRaw
	labels map[string]ocLabelRaw // cascade winner per address
	tokens map[[2]string]ocTokenRaw
}

type ocTokenRaw struct{ symbol, name, asset string }

func ocLoad(t *testing.T, q *query.Queries) *ocWorld {
	t.Helper()
	ctx := context.Background()
	w := &ocWorld{labels: map[string]ocLabelRaw{}, tokens: map[[2]string]ocTokenRaw{}}
	rows, err := q.DB().QueryContext(ctx, "SELECT chain, block_time, token_address, from_address, to_address, amount, usd FROM onchain_transfers")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r ocRaw
		var u sql.NullFloat64
		if err := rows.Scan(&r.chain, &r.t, &r.token, &r.from, &r.to, &r.amount, &u); err != nil {
			t.Fatal(err)
		}
		r.usd, r.priced = u.Float64, u.Valid
		w.raw = append(w.raw, r)
	}
	rows.Close()
	rows, err = q.DB().QueryContext(ctx, "SELECT l.address, l.entity, l.wallet_type, l.confidence, l.risk_flag, s.priority FROM onchain_labels l, onchain_label_sources s WHERE l.source = s.source")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		var l ocLabelRaw
		if err := rows.Scan(&a, &l.entity, &l.walletType, &l.confidence, &l.risk, &l.priority); err != nil {
			t.Fatal(err)
		}
		if old, ok := w.labels[a]; !ok || l.priority < old.priority {
			w.labels[a] = l
		}
	}
	rows.Close()
	rows, err = q.DB().QueryContext(ctx, "SELECT chain, token_address, symbol, name, asset_id FROM onchain_tokens")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, a string
		var k ocTokenRaw
		if err := rows.Scan(&c, &a, &k.symbol, &k.name, &k.asset); err != nil {
			t.Fatal(err)
		}
		w.tokens[[2]string{c, a}] = k
	}
	rows.Close()
	return w
}

// near compares money with a cent of rounding slack plus relative float noise.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.011+1e-9*math.Abs(b) }

func (w *ocWorld) isVenue(a string) bool {
	l, ok := w.labels[a]
	if !ok {
		return false
	}
	switch l.walletType {
	case "cex", "dex", "defi", "market_maker", "bridge":
		return true
	}
	return false
}

// ---- token transfers -----------------------------------------------------------------

func oracleTransfers(w *ocWorld, token, chain, tab string, now time.Time, period time.Duration) []query.TokenTransferRow {
	const zero = "0x0000000000000000000000000000000000000000"
	targets := map[[2]string]bool{}
	if chain != "all" {
		targets[[2]string{chain, token}] = true
	} else {
		known := false
		for k, v := range w.tokens {
			if k[1] == token {
				known = true
				for k2, v2 := range w.tokens {
					if v2.asset == v.asset {
						targets[k2] = true
					}
				}
			}
		}
		if !known {
			for _, c := range []string{"ethereum", "bsc", "base"} {
				targets[[2]string{c, token}] = true
			}
		}
	}
	type acc struct {
		b, s, bu, su float64
		chains       map[string]bool
	}
	m := map[string]*acc{}
	get := func(a string) *acc {
		if m[a] == nil {
			m[a] = &acc{chains: map[string]bool{}}
		}
		return m[a]
	}
	if token != zero {
		for _, r := range w.raw {
			if !targets[[2]string{r.chain, r.token}] || !r.t.After(now.Add(-period)) || r.t.After(now) {
				continue
			}
			in, out := get(r.to), get(r.from)
			in.b += r.amount
			in.bu += r.usd
			in.chains[r.chain] = true
			out.s += r.amount
			out.su += r.usd
			out.chains[r.chain] = true
		}
	}
	var rows []query.TokenTransferRow
	for a, x := range m {
		side := x.s
		if tab == "bought" {
			side = x.b
		}
		if a == zero || side <= 0 {
			continue
		}
		r := query.TokenTransferRow{Address: a, Bought: x.b, Sold: x.s, NetTokens: x.b - x.s, USDSpent: x.bu, USDReceived: x.su, NetUSD: x.su - x.bu}
		for _, c := range []string{"ethereum", "bsc", "base"} {
			if x.chains[c] {
				r.Chains = append(r.Chains, map[string]string{"ethereum": "eth", "bsc": "bsc", "base": "base"}[c])
			}
		}
		if l, ok := w.labels[a]; ok {
			e := l.entity
			r.Title = &e
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		ki, kj := rows[i].Sold, rows[j].Sold
		if tab == "bought" {
			ki, kj = rows[i].Bought, rows[j].Bought
		}
		if ki != kj {
			return ki > kj
		}
		return rows[i].Address < rows[j].Address
	})
	if len(rows) > 10 {
		rows = rows[:10]
	}
	return rows
}

// ---- realized PnL (discover, smart-money cohort) ----------------------------------------

type ocWT struct{ b, bu, s, su float64 }

// oraclePnL returns each wallet's realized PnL and profitable-token count over the
// rows kept by keep, and whether a PnL exists; only priced rows count.
func oraclePnL(rows []ocRaw, keep func(ocRaw) bool) (pnl map[string]float64, profitable map[string]int) {
	per := map[[2]string]*ocWT{}
	get := func(a, t string) *ocWT {
		k := [2]string{a, t}
		if per[k] == nil {
			per[k] = &ocWT{}
		}
		return per[k]
	}
	for _, r := range rows {
		if !keep(r) || !r.priced {
			continue
		}
		in, out := get(r.to, r.token), get(r.from, r.token)
		in.b += r.amount
		in.bu += r.usd
		out.s += r.amount
		out.su += r.usd
	}
	pnl, profitable = map[string]float64{}, map[string]int{}
	for k, x := range per {
		if x.b <= 0 || x.s <= 0 {
			continue
		}
		v := math.Min(x.b, x.s) * (x.su/x.s - x.bu/x.b)
		pnl[k[0]] += v
		if query.Round(v, 6) > 0 { // above zero to the micro-dollar, as the SQL's DECIMAL
			profitable[k[0]]++
		}
	}
	return pnl, profitable
}

// ---- wallet summary ------------------------------------------------------------------

func oracleWallet(w *ocWorld, addr string, now time.Time) map[string]query.WalletWindow {
	out := map[string]query.WalletWindow{}
	toks := map[[2]string]bool{}
	var first, last time.Time
	for _, r := range w.raw {
		if (r.from != addr && r.to != addr) || r.t.After(now) {
			continue
		}
		toks[[2]string{r.chain, r.token}] = true
		if first.IsZero() || r.t.Before(first) {
			first = r.t
		}
		if r.t.After(last) {
			last = r.t
		}
	}
	for name, d := range map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour, "all": 0} {
		var ww query.WalletWindow
		for _, r := range w.raw {
			if (r.from != addr && r.to != addr) || r.t.After(now) || (d > 0 && !r.t.After(now.Add(-d))) {
				continue
			}
			ww.TxCount++
			if r.to == addr {
				ww.TotalInflow += r.usd
			}
			if r.from == addr {
				ww.TotalOutflow += r.usd
			}
		}
		ww.TotalVolume, ww.NetFlow = ww.TotalInflow+ww.TotalOutflow, ww.TotalInflow-ww.TotalOutflow
		ww.TokensTraded = int64(len(toks))
		if !first.IsZero() {
			f, l := first.UTC().Format("2006-01-02"), last.UTC().Format("2006-01-02")
			ww.FirstSeen, ww.LastActive = &f, &l
		}
		out[name] = ww
	}
	return out
}

// ---- trace ---------------------------------------------------------------------------

type ocPair struct {
	out, in int64 // micro-dollars from the first address's side: integer sums are exact
	n       int64
}

// oracleTrace runs the breadth-first expansion with a FIFO queue over pair totals
// computed from the raw rows, then orients each edge by expansion order.
func oracleTrace(w *ocWorld, root, chain string, depth, width int, since, now time.Time, minUSD float64) query.TraceGraph {
	pairs := map[string]map[string]*ocPair{} // x -> c -> totals from x's side
	add := func(x, c string, out, in int64) {
		if pairs[x] == nil {
			pairs[x] = map[string]*ocPair{}
		}
		p := pairs[x][c]
		if p == nil {
			p = &ocPair{}
			pairs[x][c] = p
		}
		p.out += out
		p.in += in
		p.n++
	}
	for _, r := range w.raw {
		if r.chain != chain || !r.t.After(since) || r.t.After(now) || r.from == r.to {
			continue
		}
		u := int64(math.Round(r.usd * 1e6))
		add(r.from, r.to, u, 0)
		add(r.to, r.from, 0, u)
	}
	top := func(x string) []string {
		var cs []string
		for c, p := range pairs[x] {
			if float64(p.out+p.in)/1e6 >= minUSD {
				cs = append(cs, c)
			}
		}
		sort.Slice(cs, func(i, j int) bool {
			vi, vj := pairs[x][cs[i]].out+pairs[x][cs[i]].in, pairs[x][cs[j]].out+pairs[x][cs[j]].in
			if vi != vj {
				return vi > vj
			}
			return cs[i] < cs[j]
		})
		if len(cs) > width {
			cs = cs[:width]
		}
		return cs
	}
	depthOf := map[string]int{root: 0}
	nodes := []string{root}
	order := map[string]int{}
	type pe struct{ a, b string }
	var edges []pe
	have := map[[2]string]bool{}
	queue := []string{root}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if depthOf[x] >= depth {
			continue
		}
		order[x] = len(order)
		for _, c := range top(x) {
			k := [2]string{min(x, c), max(x, c)}
			if !have[k] {
				have[k] = true
				edges = append(edges, pe{x, c})
			}
			if _, ok := depthOf[c]; !ok {
				depthOf[c] = depthOf[x] + 1
				nodes = append(nodes, c)
				queue = append(queue, c)
			}
		}
	}
	rank := func(a string) int {
		if o, ok := order[a]; ok {
			return o
		}
		return math.MaxInt
	}
	g := query.TraceGraph{Root: root, Depth: depth, Width: width, MinUSD: minUSD}
	vol := map[string]float64{}
	for _, e := range edges {
		from, to := e.a, e.b
		if rank(e.b) < rank(e.a) {
			from, to = e.b, e.a
		}
		p := pairs[from][to]
		out, in := float64(p.out)/1e6, float64(p.in)/1e6
		g.Edges = append(g.Edges, query.TraceEdge{From: from, To: to, OutUSD: out, InUSD: in, VolumeUSD: out + in, TxCount: p.n})
		vol[from] += out + in
		vol[to] += out + in
	}
	for _, a := range nodes {
		n := query.TraceNode{Address: a, Depth: depthOf[a], TotalVolumeUSD: vol[a]}
		if l, ok := w.labels[a]; ok {
			n.Label, n.WalletType = l.entity, l.walletType
		}
		g.Nodes = append(g.Nodes, n)
		g.Stats.MaxDepthReached = max(g.Stats.MaxDepthReached, n.Depth)
	}
	g.Stats.NodeCount, g.Stats.EdgeCount = len(g.Nodes), len(g.Edges)
	return g
}

// compareTrace checks a served graph against the oracle's, in order.
func compareTrace(t *testing.T, name string, got, want query.TraceGraph) {
	t.Helper()
	if got.Stats != want.Stats || len(got.Nodes) != len(want.Nodes) || len(got.Edges) != len(want.Edges) {
		t.Fatalf("%s: stats %+v nodes %d edges %d; oracle %+v %d %d", name, got.Stats, len(got.Nodes), len(got.Edges), want.Stats, len(want.Nodes), len(want.Edges))
	}
	for i, n := range want.Nodes {
		g := got.Nodes[i]
		if g.Address != n.Address || g.Depth != n.Depth || g.Label != n.Label || g.WalletType != n.WalletType || !near(g.TotalVolumeUSD, n.TotalVolumeUSD) {
			t.Fatalf("%s node %d: %+v, oracle %+v", name, i, g, n)
		}
	}
	for i, e := range want.Edges {
		g := got.Edges[i]
		if g.From != e.From || g.To != e.To || g.TxCount != e.TxCount || !near(g.OutUSD, e.OutUSD) || !near(g.InUSD, e.InUSD) || !near(g.VolumeUSD, e.VolumeUSD) {
			t.Fatalf("%s edge %d: %+v, oracle %+v", name, i, g, e)
		}
	}
}

// ocGet serves target and decodes a 200 body into v.
func ocGet(t *testing.T, h http.Handler, target string, v any) {
	t.Helper()
	code, body := get(t, h, target)
	if code != 200 {
		t.Fatalf("%s: %d %s", target, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
}
