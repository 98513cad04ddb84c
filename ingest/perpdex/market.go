package perpdex

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mdq/lake"
)

// parseMeta reads a meta answer ({universe}) or a metaAndAssetCtxs answer
// ([{universe}, [ctx, ...]], contexts in universe order): one perpdex_marks row per
// coin with a mark, and one perpdex_funding_rates row (source asset_ctx) per coin with
// a funding rate, at the fetch time. A bare meta answer has no prices: it is
// understood and skipped.
func parseMeta(b []byte, c *fileCtx, out *record) error {
	type universe struct {
		Universe *[]struct {
			Name str `json:"name"`
		} `json:"universe"`
	}
	var u universe
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &u); err != nil {
			return err
		}
		if u.Universe == nil {
			return errors.New("not a meta answer: no universe")
		}
		out.skip("meta without asset contexts")
		return nil
	}
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("metaAndAssetCtxs: want [meta, contexts], got %d elements", len(pair))
	}
	if err := json.Unmarshal(pair[0], &u); err != nil {
		return fmt.Errorf("meta: %w", err)
	}
	if u.Universe == nil {
		return errors.New("metaAndAssetCtxs: meta has no universe")
	}
	var ctxs []struct {
		MarkPx  num `json:"markPx"`
		Funding num `json:"funding"`
		Premium num `json:"premium"`
	}
	if err := json.Unmarshal(pair[1], &ctxs); err != nil {
		return fmt.Errorf("asset contexts: %w", err)
	}
	if len(ctxs) != len(*u.Universe) {
		return fmt.Errorf("metaAndAssetCtxs: %d coins but %d contexts", len(*u.Universe), len(ctxs))
	}
	at, err := c.snapshotTime(integer{})
	if err != nil {
		return err
	}
	for i, coin := range *u.Universe {
		if !coin.Name.set {
			return fmt.Errorf("universe[%d]: missing required field \"name\"", i)
		}
		if ctxs[i].Funding.ok() {
			out.add(lake.PerpdexFundingRates, at, at, coin.Name.v, "asset_ctx", ctxs[i].Funding.v, ctxs[i].Premium.orNil())
		}
		if !ctxs[i].MarkPx.ok() {
			out.skip("coin without a mark")
			continue
		}
		out.add(lake.PerpdexMarks, at, at, coin.Name.v, ctxs[i].MarkPx.v)
	}
	return nil
}

type level struct {
	Px str `json:"px"`
	Sz str `json:"sz"`
}

// parseL2Book reads an l2Book answer: one perpdex_book_events snapshot row (event
// book, token_id the coin, seq the venue time), levels best first as the tape's JSON
// text with the venue's own decimal strings.
func parseL2Book(b []byte, c *fileCtx, out *record) error {
	var s struct {
		Coin   str        `json:"coin"`
		Levels *[][]level `json:"levels"`
		Time   integer    `json:"time"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s.Levels == nil {
		return errors.New("not an l2Book answer: no levels")
	}
	if err := missing("coin", s.Coin, "time", s.Time); err != nil {
		return err
	}
	if len(*s.Levels) != 2 {
		return fmt.Errorf("levels: want [bids, asks], got %d sides", len(*s.Levels))
	}
	side := func(ls []level, name string) (string, float64, error) {
		var sb strings.Builder
		sb.WriteByte('[')
		best := 0.0
		for i, l := range ls {
			var px, sz num
			if err := px.UnmarshalJSON([]byte(l.Px.v)); err != nil || !l.Px.set {
				return "", 0, fmt.Errorf("%s[%d].px: %q is not a decimal", name, i, l.Px.v)
			}
			if err := sz.UnmarshalJSON([]byte(l.Sz.v)); err != nil || !l.Sz.set {
				return "", 0, fmt.Errorf("%s[%d].sz: %q is not a decimal", name, i, l.Sz.v)
			}
			if i == 0 {
				best = px.v
			} else {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"price":%q,"size":%q}`, l.Px.v, l.Sz.v)
		}
		sb.WriteByte(']')
		return sb.String(), best, nil
	}
	bids, bb, err := side((*s.Levels)[0], "bids")
	if err != nil {
		return err
	}
	asks, ba, err := side((*s.Levels)[1], "asks")
	if err != nil {
		return err
	}
	at := time.UnixMilli(s.Time.v).UTC()
	local := s.Time.v
	if !c.at.IsZero() {
		local = c.at.UnixMilli()
	}
	out.add(lake.PerpdexBookEvents, at, "book", s.Coin.v, s.Time.v, local, s.Time.v, "", 0.0, 0.0, bb, ba,
		bids, asks, int32(1), "")
	return nil
}

// parseTrade reads one element of a recentTrades answer (or a websocket trades
// message): a perpdex_trades row (seq the trade id; users are [buyer, seller]) and the
// trade event of the archive tape. Fills of the same trade id, when ingested, replace
// the tape row (see deriveTrades), so the two never disagree.
func parseTrade(b []byte, c *fileCtx, out *record) error {
	var t struct {
		Coin  str      `json:"coin"`
		Side  str      `json:"side"`
		Px    num      `json:"px"`
		Sz    num      `json:"sz"`
		Hash  str      `json:"hash"`
		Time  integer  `json:"time"`
		Tid   integer  `json:"tid"`
		Users []string `json:"users"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	if err := missing("coin", t.Coin, "side", t.Side, "px", t.Px, "sz", t.Sz, "hash", t.Hash, "time", t.Time,
		"tid", t.Tid); err != nil {
		return err
	}
	if t.Side.v != "B" && t.Side.v != "A" {
		return fmt.Errorf("side %q: want B or A", t.Side.v)
	}
	var buyer, seller any
	if len(t.Users) == 2 {
		buyer, seller = lower(t.Users[0]), lower(t.Users[1])
	} else if t.Users != nil {
		return fmt.Errorf("users: want [buyer, seller], got %d", len(t.Users))
	}
	at := time.UnixMilli(t.Time.v).UTC()
	local := t.Time.v
	if !c.at.IsZero() {
		local = c.at.UnixMilli()
	}
	tside := "SELL"
	if t.Side.v == "B" {
		tside = "BUY"
	}
	out.add(lake.PerpdexTrades, at, t.Coin.v, t.Time.v, local, t.Tid.v, t.Side.v, t.Px.v, t.Sz.v,
		lower(t.Hash.v), t.Tid.v, buyer, seller)
	out.add(lake.PerpdexBookEvents, at, "trade", t.Coin.v, t.Time.v, local, t.Tid.v, tside, t.Px.v, t.Sz.v,
		0.0, 0.0, "", "", int32(0), "")
	return nil
}

// parseCandle reads one element of a candleSnapshot answer (or the data of a websocket
// candle message): a perpdex_candles row. t is the bucket start, T its last
// millisecond, s the coin, i the interval, o/h/l/c prices and v the size traded as
// decimal strings, n the trade count. A candle that had not closed when the answer
// was fetched (T at or after the fetch time, when the file says when that was) is
// skipped: its figures are partial, and a later answer holds the closed candle.
func parseCandle(b []byte, c *fileCtx, out *record) error {
	var k struct {
		T     integer `json:"t"`
		Close integer `json:"T"`
		Coin  str     `json:"s"`
		Iv    str     `json:"i"`
		O     num     `json:"o"`
		H     num     `json:"h"`
		L     num     `json:"l"`
		C     num     `json:"c"`
		V     num     `json:"v"`
		N     integer `json:"n"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	if err := missing("t", k.T, "T", k.Close, "s", k.Coin, "i", k.Iv, "o", k.O, "h", k.H, "l", k.L, "c", k.C,
		"v", k.V, "n", k.N); err != nil {
		return err
	}
	if k.Close.v < k.T.v {
		return fmt.Errorf("candle ends (T %d) before it starts (t %d)", k.Close.v, k.T.v)
	}
	if k.L.v > k.H.v || k.O.v < k.L.v || k.O.v > k.H.v || k.C.v < k.L.v || k.C.v > k.H.v {
		return fmt.Errorf("candle prices out of order: o %v h %v l %v c %v", k.O.v, k.H.v, k.L.v, k.C.v)
	}
	if !c.at.IsZero() && k.Close.v >= c.at.UnixMilli() {
		out.skip("candle not closed when fetched")
		return nil
	}
	at := time.UnixMilli(k.T.v).UTC()
	out.add(lake.PerpdexCandles, at, at, k.Coin.v, k.Iv.v, time.UnixMilli(k.Close.v).UTC(),
		k.O.v, k.H.v, k.L.v, k.C.v, k.V.v, k.N.v)
	return nil
}
