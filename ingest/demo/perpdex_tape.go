package demo

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// tapes builds the day's archive: per coin, an L2 book snapshot every 5 minutes around
// the price path and one trade event per trade, in the tape schema, plus the public
// trade tape (perpdex_trades) carrying the same seq and local_ts as its tape event.
func (s *perpdexSim) tapes() (book, trades [][]any) {
	r := s.rBk
	type item struct {
		ts   int64
		kind int // 0 book, 1 trade
		idx  int
	}
	perCoin := make([][]item, s.nc)
	for i, t := range s.trades {
		perCoin[t.coin] = append(perCoin[t.coin], item{t.ms, 1, i})
	}
	first := (s.loMs + 299_999) / 300_000 * 300_000
	for c := range s.nc {
		for slot := first; slot < s.hiMs; slot += 300_000 {
			ts := min(slot+r.Int64N(1500), s.hiMs-1)
			perCoin[c] = append(perCoin[c], item{ts, 0, 0})
		}
	}
	for c, items := range perCoin {
		sort.SliceStable(items, func(i, j int) bool {
			if items[i].ts != items[j].ts {
				return items[i].ts < items[j].ts
			}
			return items[i].kind < items[j].kind
		})
		coin := perpdexCoins[c]
		var local int64
		for _, it := range items {
			s.seq[c]++
			local = max(local, it.ts+1+r.Int64N(40))
			m := min(int((it.ts-s.dayMs)/60_000), 1440)
			mid := s.path[c][m]
			tick := perpdexTick(mid)
			bb := perpdexSig(math.Floor(mid/tick) * tick)
			ba := perpdexSig(bb + tick)
			if it.kind == 1 {
				t := &s.trades[it.idx]
				t.seq, t.localTS = s.seq[c], local
				side, tside := "SELL", "A"
				if t.buy {
					side, tside = "BUY", "B"
				}
				if t.px < bb {
					bb = t.px
				}
				if t.px > ba {
					ba = t.px
				}
				book = append(book, []any{"trade", coin.Name, t.ms, local, s.seq[c], side, t.px, t.sz, bb, ba, "", "", int32(0), ""})
				trades = append(trades, []any{coin.Name, t.ms, local, s.seq[c], tside, t.px, t.sz, t.hash, t.tid, t.buyer, t.seller})
				continue
			}
			bids := perpdexLevels(r, bb, -tick, mid, coin.SzDec)
			asks := perpdexLevels(r, ba, tick, mid, coin.SzDec)
			book = append(book, []any{"book", coin.Name, it.ts, local, s.seq[c], "", 0.0, 0.0, bb, ba, bids, asks, int32(1), ""})
		}
	}
	return book, trades
}

// perpdexLevels renders ten price levels from best outward as JSON text,
// [{"price":"...","size":"..."},...], each level worth roughly 20k USD.
func perpdexLevels(r interface {
	Float64() float64
	NormFloat64() float64
	IntN(int) int
}, best, step, mid float64, dec int) string {
	var b strings.Builder
	b.WriteByte('[')
	px := best
	minSz := math.Pow10(-dec)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
			px += step * float64(1+r.IntN(3))
		}
		sz := math.Max(perpdexRound(20_000*math.Exp(r.NormFloat64())/mid, dec), minSz)
		b.WriteString(`{"price":"`)
		b.WriteString(strconv.FormatFloat(perpdexSig(px), 'f', -1, 64))
		b.WriteString(`","size":"`)
		b.WriteString(strconv.FormatFloat(sz, 'f', -1, 64))
		b.WriteString(`"}`)
	}
	b.WriteByte(']')
	return b.String()
}
