package handlers_test

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"
	"time"

	"mdq/query"
)

// The independent oracle: plain Go over raw rows read with simple SELECTs.

type rawFill struct {
	wallet, cond, token, side string
	outcome                   int
	price, size, usd          float64
	ts                        int64
}

type rawRes struct {
	ts      int64
	winner  sql.NullInt64
	invalid bool
}

type pmRaw struct {
	fills    []rawFill
	category map[string]string // condition_id -> category
	title    map[string][2]string
	yesToken map[string]string
	res      map[string]rawRes
	profile  map[string][2]string
}

func readPmRaw(t *testing.T, q *query.Queries) *pmRaw {
	t.Helper()
	ctx := context.Background()
	db := q.DB()
	r := &pmRaw{category: map[string]string{}, title: map[string][2]string{}, yesToken: map[string]string{},
		res: map[string]rawRes{}, profile: map[string][2]string{}}
	scan := func(query string, each func(*sql.Rows) error) {
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scan("SELECT wallet, condition_id, token_id, side, outcome_index, price, size, usd, ts FROM predmkt_trades", func(rs *sql.Rows) error {
		var f rawFill
		err := rs.Scan(&f.wallet, &f.cond, &f.token, &f.side, &f.outcome, &f.price, &f.size, &f.usd, &f.ts)
		r.fills = append(r.fills, f)
		return err
	})
	scan("SELECT condition_id, category, question, slug FROM predmkt_markets", func(rs *sql.Rows) error {
		var c, cat, q, s string
		err := rs.Scan(&c, &cat, &q, &s)
		r.category[c], r.title[c] = cat, [2]string{q, s}
		return err
	})
	scan("SELECT condition_id, token_id FROM predmkt_tokens WHERE outcome_index = 0", func(rs *sql.Rows) error {
		var c, tok string
		err := rs.Scan(&c, &tok)
		r.yesToken[c] = tok
		return err
	})
	scan("SELECT condition_id, resolved_ts, winning_index, invalid FROM predmkt_resolutions", func(rs *sql.Rows) error {
		var c string
		var ts time.Time
		var x rawRes
		err := rs.Scan(&c, &ts, &x.winner, &x.invalid)
		x.ts = ts.UnixMilli()
		r.res[c] = x
		return err
	})
	scan("SELECT wallet, pseudonym, display_name FROM predmkt_profiles", func(rs *sql.Rows) error {
		var w, p, d string
		err := rs.Scan(&w, &p, &d)
		r.profile[w] = [2]string{p, d}
		return err
	})
	return r
}

// oracleEntry is the oracle's unrounded board entry.
type oracleEntry struct {
	wallet                 string
	pnl                    int64 // micro-USD, summed exactly
	pnlWin, volWin         [3]int64
	tradesWin              [3]int64
	resolved, trades, mkts int64
	resVol, winVol, vol    int64
	first, last            int64
	hitRate, hitCI, avgUSD *float64
	rPnL, rVol, rAvg       float64
	rPnLWin, rVolWin       [3]float64
	tags                   []string
	pseudonym, displayName string
}

var oracleWindows = [3]int64{86_400_000, 604_800_000, 2_592_000_000}

// oracleBoard computes every (category, wallet) entry from the raw rows.
func oracleBoard(r *pmRaw, now int64) map[string]map[string]*oracleEntry {
	type wm struct {
		vol, cash  int64
		net        [2]int64
		n          int64
		first, lst int64
	}
	per := map[[2]string]*wm{} // (wallet, cond)
	board := map[string]map[string]*oracleEntry{}
	get := func(cat, w string) *oracleEntry {
		if board[cat] == nil {
			board[cat] = map[string]*oracleEntry{}
		}
		e := board[cat][w]
		if e == nil {
			e = &oracleEntry{wallet: w, first: math.MaxInt64, last: math.MinInt64}
			p := r.profile[w]
			e.pseudonym, e.displayName = p[0], p[1]
			board[cat][w] = e
		}
		return e
	}
	for _, f := range r.fills {
		cat, ok := r.category[f.cond]
		if !ok {
			continue
		}
		k := [2]string{f.wallet, f.cond}
		m := per[k]
		if m == nil {
			m = &wm{first: math.MaxInt64, lst: math.MinInt64}
			per[k] = m
		}
		usd, size := int64(math.Round(f.usd*1e6)), int64(math.Round(f.size*1e6))
		m.vol += usd
		m.n++
		if f.side == "SELL" {
			m.cash += usd
			m.net[f.outcome] -= size
		} else {
			m.cash -= usd
			m.net[f.outcome] += size
		}
		m.first, m.lst = min(m.first, f.ts), max(m.lst, f.ts)
		for _, c := range []string{"all", cat} {
			e := get(c, f.wallet)
			for i, w := range oracleWindows {
				if f.ts >= now-w && f.ts <= now {
					e.volWin[i] += usd
					e.tradesWin[i]++
				}
			}
		}
	}
	for k, m := range per {
		cat := r.category[k[1]]
		res, hasRes := r.res[k[1]]
		settled := hasRes && !res.invalid && res.winner.Valid
		var pnl int64
		if settled {
			pnl = m.cash + m.net[res.winner.Int64]
		}
		for _, c := range []string{"all", cat} {
			e := get(c, k[0])
			e.vol += m.vol
			e.trades += m.n
			e.mkts++
			e.first, e.last = min(e.first, m.first), max(e.last, m.lst)
			if settled {
				e.pnl += pnl
				e.resolved++
				e.resVol += m.vol
				if pnl >= 5000 { // at least half a cent
					e.winVol += m.vol
				}
				for i, w := range oracleWindows {
					if res.ts >= now-w && res.ts <= now {
						e.pnlWin[i] += pnl
					}
				}
			}
		}
	}
	for _, es := range board {
		for _, e := range es {
			cents := func(u int64) float64 { return query.Round(float64(u)/1e6, 2) }
			e.rPnL, e.rVol = cents(e.pnl), cents(e.vol)
			for i := range 3 {
				e.rPnLWin[i], e.rVolWin[i] = cents(e.pnlWin[i]), cents(e.volWin[i])
			}
			e.rAvg = query.Round(float64(e.vol)/1e6/float64(e.trades), 2)
			if e.resVol > 0 {
				p := float64(e.winVol) / float64(e.resVol)
				// Wilson score interval, written out independently of the query package.
				z := 1.959963984540054
				n := float64(e.resolved)
				hw := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / (1 + z*z/n)
				h, c := query.Round(p, 6), query.Round(hw, 6)
				e.hitRate, e.hitCI = &h, &c
			}
			e.tags = []string{}
			if e.trades >= 100 && e.rAvg < 20 {
				e.tags = append(e.tags, "bot")
			}
			if e.rVol >= 100000 {
				e.tags = append(e.tags, "whale")
			}
			if e.resolved >= 5 && e.rPnL >= 1000 {
				e.tags = append(e.tags, "hot")
			}
			if e.resolved >= 5 && e.rPnL <= -1000 {
				e.tags = append(e.tags, "cold")
			}
		}
	}
	return board
}

// oracleLeaderboard pages the oracle board as the route must.
func oracleLeaderboard(board map[string]map[string]*oracleEntry, p query.PredmktLeaderboardParams) []query.WalletBoardRow {
	wi := map[string]int{"24h": 0, "7d": 1, "30d": 2, "all": -1}[p.Window]
	win := func(e *oracleEntry) (float64, float64, int64) {
		if wi < 0 {
			return e.rPnL, e.rVol, e.trades
		}
		return e.rPnLWin[wi], e.rVolWin[wi], e.tradesWin[wi]
	}
	var es []*oracleEntry
	for _, e := range board[p.Category] {
		if e.resolved >= p.MinResolved && e.rVol >= p.MinVolumeUSD && e.rAvg >= p.MinAvgUSD {
			es = append(es, e)
		}
	}
	key := func(e *oracleEntry) float64 { // larger ranks first
		pnlW, volW, nW := win(e)
		switch p.Sort {
		case "realized_pnl_asc":
			return -e.rPnL
		case "realized_pnl_window":
			return pnlW
		case "realized_pnl_window_asc":
			return -pnlW
		case "hit_rate":
			if e.hitRate == nil {
				return math.Inf(-1)
			}
			return *e.hitRate
		case "resolved":
			return float64(e.resolved)
		case "volume_24h":
			return volW
		case "trades_24h":
			return float64(nW)
		case "volume_all":
			return e.rVol
		case "trades_all":
			return float64(e.trades)
		case "markets":
			return float64(e.mkts)
		case "last_seen":
			return float64(e.last)
		}
		return e.rPnL
	}
	slices.SortFunc(es, func(a, b *oracleEntry) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.wallet, b.wallet)
	})
	out := []query.WalletBoardRow{}
	for i, e := range es {
		if i < p.Offset {
			continue
		}
		if len(out) == p.Limit {
			break
		}
		pnlW, volW, nW := win(e)
		out = append(out, query.WalletBoardRow{
			Rank: i + 1, ProxyWallet: e.wallet, Pseudonym: e.pseudonym, DisplayName: e.displayName,
			RealizedPnLUSD: e.rPnL, RealizedPnLWindowUSD: pnlW, ResolvedMarkets: e.resolved,
			HitRate: e.hitRate, HitRateCI: e.hitCI, VolumeAllUSD: e.rVol, VolumeWindowUSD: volW,
			TradesAll: e.trades, TradesWindow: nW, AvgTradeUSD: e.rAvg, Markets: e.mkts,
			FirstSeen: query.ISOMillis(time.UnixMilli(e.first)), LastSeen: query.ISOMillis(time.UnixMilli(e.last)),
			Tags: e.tags,
		})
	}
	return out
}

// oracleCohort is the smart-money cohort of a category.
func oracleCohort(board map[string]map[string]*oracleEntry, cat string) map[string]bool {
	out := map[string]bool{}
	for w, e := range board[cat] {
		if e.rPnL >= 1000 && e.resolved >= 5 && e.rVol >= 5000 {
			out[w] = true
		}
	}
	return out
}
