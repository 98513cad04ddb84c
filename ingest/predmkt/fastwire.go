package predmkt

import (
	"bytes"
	"unicode/utf8"
)

// The fast path for market-channel frames. Decoding JSON is most of a tape ingest's
// CPU, and nearly every frame is a book, price_change, last_trade_price or
// tick_size_change message of one plain shape. fastFrame scans such a frame by hand
// into the same wsMsg values the reference decoder gives; anything it is not sure
// of (an escape or control character in a string, text that is not UTF-8, a null, a
// key repeated, a key matching a field only case-insensitively, the fields of the
// rarer messages, an empty array frame, a malformed value) makes it give up (ok
// false), and Frame decodes the frame with go-json, which also reports what is
// wrong. The tests check that both agree on every sample and on mutated frames.

type wire struct {
	b    []byte
	i    int
	toks map[string]string // asset ids seen, so each is allocated once
}

func (w *wire) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *wire) eat(c byte) bool {
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == c {
		w.i++
		return true
	}
	return false
}

// raw reads a string without escapes or control characters, valid UTF-8, and
// returns its contents (a view of the frame).
func (w *wire) raw() ([]byte, bool) {
	w.ws()
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return nil, false
	}
	start := w.i + 1
	ascii := true
	for j := start; j < len(w.b); j++ {
		switch c := w.b[j]; {
		case c == '"':
			w.i = j + 1
			v := w.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str reads a string field; the common values are not allocated again.
func (w *wire) str() (string, bool) {
	v, ok := w.raw()
	if !ok {
		return "", false
	}
	switch string(v) {
	case "BUY":
		return "BUY", true
	case "SELL":
		return "SELL", true
	case "book":
		return "book", true
	case "price_change":
		return "price_change", true
	case "last_trade_price":
		return "last_trade_price", true
	case "tick_size_change":
		return "tick_size_change", true
	}
	return string(v), true
}

// token reads an asset id, allocated once per distinct id.
func (w *wire) token() (string, bool) {
	v, ok := w.raw()
	if !ok {
		return "", false
	}
	if s, ok := w.toks[string(v)]; ok {
		return s, true
	}
	s := string(v)
	if w.toks != nil {
		w.toks[s] = s
	}
	return s, true
}

// number reads a JSON number and returns its text.
func (w *wire) number() ([]byte, bool) {
	w.ws()
	start, j := w.i, w.i
	b := w.b
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false
		}
	}
	w.i = j
	return b[start:j], true
}

// num reads a numText: a string's contents or a bare number's text.
func (w *wire) num(n *numText) bool {
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == '"' {
		v, ok := w.raw()
		*n = numText(v)
		return ok
	}
	v, ok := w.number()
	*n = numText(v)
	return ok
}

// skip passes over any value (of a field wsMsg does not keep).
func (w *wire) skip(depth int) bool {
	w.ws()
	if w.i >= len(w.b) || depth > 64 {
		return false
	}
	switch c := w.b[w.i]; {
	case c == '"':
		_, ok := w.raw()
		return ok
	case c == '{':
		w.i++
		if w.eat('}') {
			return true
		}
		for {
			if _, ok := w.raw(); !ok || !w.eat(':') || !w.skip(depth+1) {
				return false
			}
			if w.eat('}') {
				return true
			}
			if !w.eat(',') {
				return false
			}
		}
	case c == '[':
		w.i++
		if w.eat(']') {
			return true
		}
		for {
			if !w.skip(depth + 1) {
				return false
			}
			if w.eat(']') {
				return true
			}
			if !w.eat(',') {
				return false
			}
		}
	case c == 't':
		return w.lit("true")
	case c == 'f':
		return w.lit("false")
	case c == 'n':
		return w.lit("null")
	}
	_, ok := w.number()
	return ok
}

func (w *wire) lit(s string) bool {
	if bytes.HasPrefix(w.b[w.i:], []byte(s)) {
		w.i += len(s)
		return true
	}
	return false
}

// object reads an object, calling field for each key (with the scanner at its
// value); field returns false to give up (the callers give up on a key given twice,
// keeping a bit per key already read).
func (w *wire) object(field func(key []byte) bool) bool {
	if !w.eat('{') {
		return false
	}
	if w.eat('}') {
		return true
	}
	for {
		k, ok := w.raw()
		if !ok || !w.eat(':') || !field(k) {
			return false
		}
		if w.eat('}') {
			return true
		}
		if !w.eat(',') {
			return false
		}
	}
}

// array reads an array of objects, calling elem for each; false on an empty or
// malformed one.
func (w *wire) array(elem func() bool) bool {
	if !w.eat('[') {
		return false
	}
	if w.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if w.eat(']') {
			return true
		}
		if !w.eat(',') {
			return false
		}
	}
}

// foldsTo says whether key names one of fields when compared the way encoding/json
// does (case-insensitively) without being spelled exactly like it: such a key is left
// to the reference decoder.
func foldsTo(key []byte, fields []string) bool {
	for _, f := range fields {
		if len(f) == len(key) && string(key) != f && bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}

var (
	levelFields  = []string{"price", "size"}
	changeFields = []string{"asset_id", "price", "side", "size", "best_bid", "best_ask"}
	// msgFields are wsMsg's keys; the ones after the first 16 belong to the rarer
	// messages and are left to the reference decoder.
	msgFields = []string{"event_type", "asset_id", "market", "timestamp", "bids", "asks", "buys", "sells", "changes",
		"price_changes", "price", "side", "size", "best_bid", "best_ask", "new_tick_size",
		"question", "slug", "condition_id", "assets_ids", "outcomes", "tags", "winning_asset_id", "winning_outcome",
		"event_message", "status", "last_seq"}
)

func (w *wire) levels(out *[]wsLevel) bool {
	ls := []wsLevel{}
	ok := w.array(func() bool {
		var l wsLevel
		var seen uint8
		ok := w.object(func(k []byte) bool {
			var bit uint8
			var ok bool
			switch string(k) {
			case "price":
				bit, ok = 1, w.num(&l.Price)
			case "size":
				bit, ok = 2, w.num(&l.Size)
			default:
				return !foldsTo(k, levelFields) && w.skip(0)
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			return ok
		})
		ls = append(ls, l)
		return ok
	})
	*out = ls
	return ok
}

func (w *wire) changes(out *[]wsChange) bool {
	cs := []wsChange{}
	ok := w.array(func() bool {
		var c wsChange
		var seen uint8
		ok := w.object(func(k []byte) bool {
			var bit uint8
			var ok bool
			switch string(k) {
			case "asset_id":
				c.AssetID, ok = w.token()
				bit = 1
			case "price":
				bit, ok = 2, w.num(&c.Price)
			case "side":
				c.Side, ok = w.str()
				bit = 4
			case "size":
				bit, ok = 8, w.num(&c.Size)
			case "best_bid":
				bit, ok = 16, w.num(&c.BestBid)
			case "best_ask":
				bit, ok = 32, w.num(&c.BestAsk)
			default:
				return !foldsTo(k, changeFields) && w.skip(0)
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			return ok
		})
		cs = append(cs, c)
		return ok
	})
	*out = cs
	return ok
}

// message reads one message object into m.
func (w *wire) message(m *wsMsg) bool {
	var seen uint32
	return w.object(func(k []byte) bool {
		var bit uint32
		var ok bool
		switch string(k) {
		case "event_type":
			m.EventType, ok = w.str()
			bit = 1 << 0
		case "asset_id":
			m.AssetID, ok = w.token()
			bit = 1 << 1
		case "market":
			m.Market, ok = w.str()
			bit = 1 << 2
		case "timestamp":
			bit, ok = 1<<3, w.num(&m.Timestamp)
		case "bids":
			bit, ok = 1<<4, w.levels(&m.Bids)
		case "asks":
			bit, ok = 1<<5, w.levels(&m.Asks)
		case "buys":
			bit, ok = 1<<6, w.levels(&m.Buys)
		case "sells":
			bit, ok = 1<<7, w.levels(&m.Sells)
		case "changes":
			bit, ok = 1<<8, w.changes(&m.Changes)
		case "price_changes":
			bit, ok = 1<<9, w.changes(&m.PChanges)
		case "price":
			bit, ok = 1<<10, w.num(&m.Price)
		case "side":
			m.Side, ok = w.str()
			bit = 1 << 11
		case "size":
			bit, ok = 1<<12, w.num(&m.Size)
		case "best_bid":
			bit, ok = 1<<13, w.num(&m.BestBid)
		case "best_ask":
			bit, ok = 1<<14, w.num(&m.BestAsk)
		case "new_tick_size":
			bit, ok = 1<<15, w.num(&m.NewTick)
		default:
			for _, f := range msgFields[16:] {
				if string(k) == f {
					return false
				}
			}
			return !foldsTo(k, msgFields) && w.skip(0)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
}

// fastFrame decodes a frame (one message object or a non-empty array of them) as
// the reference decoder would; ok false when it cannot be sure.
func fastFrame(frame []byte, toks map[string]string) (msgs []wsMsg, ok bool) {
	w := &wire{b: frame, toks: toks}
	w.ws()
	if w.i >= len(w.b) {
		return nil, false
	}
	if w.b[w.i] == '{' {
		msgs = make([]wsMsg, 1)
		ok = w.message(&msgs[0])
	} else {
		ok = w.array(func() bool {
			msgs = append(msgs, wsMsg{})
			return w.message(&msgs[len(msgs)-1])
		}) && len(msgs) > 0
	}
	w.ws()
	return msgs, ok && w.i == len(w.b)
}
