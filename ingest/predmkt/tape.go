package predmkt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	// The tape is most of an ingest's work and most of that is decoding JSON:
	// go-json decodes the same structs as encoding/json, about twice as fast.
	fastjson "github.com/goccy/go-json"
)

// Event is one predmkt_book_events row (columns in the registry's order).
type Event struct {
	Type     string
	Token    string
	Ts       int64
	LocalTs  int64
	Seq      int64
	Side     string
	Price    float64
	Size     float64
	BestBid  float64
	BestAsk  float64
	Bids     string
	Asks     string
	Snapshot int32
	Status   string
}

// Date is the UTC date of the event's venue time: the partition it is stored in.
func (e *Event) Date() string { return time.UnixMilli(e.Ts).UTC().Format("2006-01-02") }

// Values returns the row in lake column order.
func (e *Event) Values() []any {
	return []any{e.Type, e.Token, e.Ts, e.LocalTs, e.Seq, e.Side, e.Price, e.Size, e.BestBid, e.BestAsk,
		e.Bids, e.Asks, e.Snapshot, e.Status}
}

// Status markers written by the recorder (and read back from its capture): the
// vocabulary of the lake's status column. gap_start and live_resume are the names
// issue 14 gives the markers of the archive's recorder.
const (
	StatusConnected  = "connected"   // a connection (re)opened and the subscription was sent
	StatusGapStart   = "gap_start"   // the stream dropped, went silent or overflowed: events may be missing from here
	StatusLiveResume = "live_resume" // the first book after a gap: the token is live again
)

// legacyStatus maps the names earlier recorders (and demo lakes) wrote onto today's,
// so an old capture ingests into the same vocabulary as a new one.
var legacyStatus = map[string]string{"gap": StatusGapStart, "resync": StatusLiveResume}

// numText is a number the feed sends as a JSON string ("0.51") or, in some
// messages, as a bare number; it keeps the text so the decimal is read exactly.
type numText string

func (n *numText) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		*n = numText(b[1 : len(b)-1]) // the common case, without a second decoder
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = numText(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*n = ""
		return nil
	}
	*n = numText(b)
	return nil
}

type wsLevel struct {
	Price numText `json:"price"`
	Size  numText `json:"size"`
}

type wsChange struct {
	AssetID string  `json:"asset_id"`
	Price   numText `json:"price"`
	Side    string  `json:"side"`
	Size    numText `json:"size"`
	BestBid numText `json:"best_bid"`
	BestAsk numText `json:"best_ask"`
}

// wsMsg is the union of the market channel's message types (and the recorder's
// status marker), decoded in one pass.
type wsMsg struct {
	EventType string     `json:"event_type"`
	AssetID   string     `json:"asset_id"`
	Market    string     `json:"market"`
	Timestamp numText    `json:"timestamp"`
	Bids      []wsLevel  `json:"bids"`
	Asks      []wsLevel  `json:"asks"`
	Buys      []wsLevel  `json:"buys"`  // the book's older field names
	Sells     []wsLevel  `json:"sells"` // (before bids/asks)
	Changes   []wsChange `json:"changes"`
	PChanges  []wsChange `json:"price_changes"`
	Price     numText    `json:"price"`
	Side      string     `json:"side"`
	Size      numText    `json:"size"`
	BestBid   numText    `json:"best_bid"`
	BestAsk   numText    `json:"best_ask"`
	NewTick   numText    `json:"new_tick_size"`
	// new_market, market_resolved
	Question       string   `json:"question"`
	Slug           string   `json:"slug"`
	ConditionID    string   `json:"condition_id"`
	AssetsIDs      []string `json:"assets_ids"`
	Outcomes       []string `json:"outcomes"`
	Tags           []string `json:"tags"`
	WinningAssetID string   `json:"winning_asset_id"`
	WinningOutcome string   `json:"winning_outcome"`
	EventMessage   *struct {
		Slug  string `json:"slug"`
		Title string `json:"title"`
	} `json:"event_message"`
	// the recorder's marker
	Status string `json:"status"`
	// book_state: the token's last sequence number when the segment began
	LastSeq numText `json:"last_seq"`
}

// level is one price level of the replayed book.
type level struct {
	size  int64   // fixed point
	price float64 // the price as stored
}

// book is the state the stream implies for one token: the last snapshot with every
// later delta and trade applied, in fixed point. The touch is cached (hb, la; -1 when
// unknown) and recomputed only when its level goes.
type book struct {
	bids, asks map[int64]level
	hb, la     int64
	stale      bool
}

func (b *book) best() (bb, ba float64) {
	if b.stale {
		b.hb, b.la = -1, -1
		for p := range b.bids {
			if p > b.hb {
				b.hb = p
			}
		}
		for p := range b.asks {
			if b.la < 0 || p < b.la {
				b.la = p
			}
		}
		b.stale = false
	}
	if b.hb >= 0 {
		bb = b.bids[b.hb].price
	}
	if b.la >= 0 {
		ba = b.asks[b.la].price
	}
	return bb, ba
}

// set puts a level (size 0 removes it) and keeps the cached touch right.
func (b *book) set(bid bool, p int64, l level) {
	side := b.asks
	if bid {
		side = b.bids
	}
	if l.size <= 0 {
		if _, ok := side[p]; ok {
			delete(side, p)
			if (bid && p == b.hb) || (!bid && p == b.la) {
				b.stale = true
			}
		}
		return
	}
	side[p] = l
	if b.stale {
		return
	}
	if bid && p > b.hb {
		b.hb = p
	}
	if !bid && (b.la < 0 || p < b.la) {
		b.la = p
	}
}

type tokenState struct {
	book    *book // nil until the first snapshot of the run
	lastLts int64
	lastSeq int64
}

// Tape turns market-channel frames into tape rows. It keeps, per token, the book the
// stream implies (so best bid and ask can be derived where a message carries none)
// and the sequence counter. Sequence numbers are derived from receive time: the first
// event of a token in a millisecond of local_ts gets local_ts*1000, the next ones of
// that millisecond count up from it (and a local_ts earlier than the token's last one
// continues from the last seq), so seq increases per token in receive order and the
// same capture ingested twice, or inside a larger overlapping one, numbers its events
// the same way.
type Tape struct {
	tokens  map[string]*tokenState
	Meta    Meta
	Skipped map[string]int64  // messages understood but not stored, by reason
	Read    int64             // messages read
	names   map[string]string // asset ids as strings, shared by the events (fastwire.go)
}

// NewTape returns an empty tape.
func NewTape() *Tape {
	return &Tape{tokens: map[string]*tokenState{}, Skipped: map[string]int64{}, names: map[string]string{}}
}

func (t *Tape) state(tok string) *tokenState {
	s := t.tokens[tok]
	if s == nil {
		s = &tokenState{}
		t.tokens[tok] = s
	}
	return s
}

func (t *Tape) nextSeq(s *tokenState, lts int64) int64 {
	seq := max(lts*1000, s.lastSeq+1)
	s.lastSeq, s.lastLts = seq, lts
	return seq
}

// splitPrefix separates the recorder's receive-time prefix ("<epoch ms> " or a tab)
// from the frame; local is 0 when the line has none.
func splitPrefix(b []byte) (local int64, frame []byte, err error) {
	b = bytes.TrimSpace(b)
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, b, nil
	}
	if i == len(b) || (b[i] != ' ' && b[i] != '\t') {
		return 0, nil, errors.New("a line is a JSON frame, optionally after a receive time in epoch ms and a space")
	}
	local, err = strconv.ParseInt(string(b[:i]), 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("receive time %q: %v", b[:i], err)
	}
	return local, bytes.TrimSpace(b[i:]), nil
}

// Line parses one line of a capture (an optional receive time, then one frame: a
// message object or an array of them) and calls emit for each tape row. A line that
// is not valid is an error and emits nothing; a message of an unknown type is counted
// in Skipped.
func (t *Tape) Line(b []byte, emit func(*Event)) error {
	local, frame, err := splitPrefix(b)
	if err != nil {
		return err
	}
	return t.Frame(frame, local, emit)
}

// Frame parses one received frame (object or array) received at local (epoch ms; 0:
// unknown, the venue time stands in for it).
func (t *Tape) Frame(frame []byte, local int64, emit func(*Event)) error {
	msgs, err := decodeFrame(frame, t.names)
	if err != nil {
		return err
	}
	return t.applyFrame(msgs, local, emit)
}

// decodeFrame is the stateless half of Frame: the frame's messages, decoded. It
// touches nothing but names (the interned asset ids), so a loader can run it on
// another goroutine than the one applying the messages (pipe.go). The messages hold
// no reference to frame.
func decodeFrame(frame []byte, names map[string]string) ([]wsMsg, error) {
	msgs, fast := fastFrame(frame, names)
	switch {
	case fast:
	case len(frame) > 0 && frame[0] == '[':
		msgs = nil
		if err := fastjson.Unmarshal(frame, &msgs); err != nil {
			return nil, fmt.Errorf("frame is not a JSON array of messages: %v", err)
		}
	case len(frame) > 0 && frame[0] == '{':
		msgs = make([]wsMsg, 1)
		if err := fastjson.Unmarshal(frame, &msgs[0]); err != nil {
			return nil, fmt.Errorf("frame is not a JSON message: %v", err)
		}
	default:
		return nil, errors.New("frame is neither a JSON object nor an array")
	}
	return msgs, nil
}

// applyFrame is the stateful half of Frame: it validates the decoded messages of one
// frame received at local, and only when all are valid applies them to the per-token
// state and emits their rows.
func (t *Tape) applyFrame(msgs []wsMsg, local int64, emit func(*Event)) error {
	// Validate every message before emitting any, so a bad line emits nothing.
	evs := make([]item, 0, len(msgs))
	metaMark := t.Meta.mark()
	for i := range msgs {
		out, err := t.message(&msgs[i], local)
		if err != nil {
			t.Meta.reset(metaMark)
			if len(msgs) > 1 {
				return fmt.Errorf("message %d of the frame: %v", i+1, err)
			}
			return err
		}
		evs = append(evs, out...)
	}
	t.Read += int64(len(msgs))
	// Only now touch the per-token state (books, seq): a rejected line changes nothing.
	for _, it := range evs {
		if it.seed != "" {
			t.seed(it)
			continue
		}
		t.apply(it)
		emit(it.e)
	}
	return nil
}

// item is one row with what apply needs beyond it: the snapshot's levels, or the
// level, trade and best quotes of a delta.
type item struct {
	e       *Event
	pb      *pendingBook
	q       *pendingQuote
	seed    string // book_state: the token whose replayed book it carries (no row)
	lastSeq int64  // book_state: the token's last seq when the segment began (0: none)
}

type pendingBook struct {
	bids, asks []parsedLevel
}

type parsedLevel struct {
	p, s decimal
}

// message validates one message and returns its rows with everything but the book
// state applied (seq, derived best bid/ask are filled by apply).
func (t *Tape) message(m *wsMsg, local int64) ([]item, error) {
	ts, err := parseMs(m.Timestamp)
	if m.EventType != "" && m.EventType != "book_state" && err != nil {
		return nil, fmt.Errorf("%s: timestamp: %v", m.EventType, err)
	}
	lts := local
	if lts == 0 {
		lts = ts
	}
	switch m.EventType {
	case "book", "book_state":
		if err := checkToken(m.AssetID); err != nil {
			return nil, fmt.Errorf("%s: %v", m.EventType, err)
		}
		if m.EventType == "book_state" {
			it := item{seed: m.AssetID}
			if m.LastSeq != "" {
				n, err := strconv.ParseInt(string(m.LastSeq), 10, 64)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("book_state last_seq: %q is not a sequence number", m.LastSeq)
				}
				it.lastSeq = n
			}
			if m.Bids != nil || m.Asks != nil { // a token with rows but no book yet has neither
				it.pb = &pendingBook{}
				var err error
				if it.pb.bids, err = parseLevels(m.Bids); err != nil {
					return nil, fmt.Errorf("book_state bids: %v", err)
				}
				if it.pb.asks, err = parseLevels(m.Asks); err != nil {
					return nil, fmt.Errorf("book_state asks: %v", err)
				}
			}
			return []item{it}, nil
		}
		bids, asks := m.Bids, m.Asks
		if bids == nil && asks == nil {
			bids, asks = m.Buys, m.Sells
		}
		pb := &pendingBook{}
		var err error
		if pb.bids, err = parseLevels(bids); err != nil {
			return nil, fmt.Errorf("book bids: %v", err)
		}
		if pb.asks, err = parseLevels(asks); err != nil {
			return nil, fmt.Errorf("book asks: %v", err)
		}
		// Best first: bids by price descending, asks ascending (the venue sends both
		// worst first). Stable, so a level listed twice keeps its order.
		sort.SliceStable(pb.bids, func(i, j int) bool { return pb.bids[i].p.fix > pb.bids[j].p.fix })
		sort.SliceStable(pb.asks, func(i, j int) bool { return pb.asks[i].p.fix < pb.asks[j].p.fix })
		e := &Event{Type: "book", Token: m.AssetID, Ts: ts, LocalTs: lts, Snapshot: 1,
			Bids: levelsJSON(pb.bids), Asks: levelsJSON(pb.asks)}
		return []item{{e: e, pb: pb}}, nil
	case "price_change":
		changes := m.PChanges
		if changes == nil {
			// The older schema: one asset per message, changes without best quotes.
			changes = m.Changes
			for i := range changes {
				if changes[i].AssetID == "" {
					changes[i].AssetID = m.AssetID
				}
			}
		}
		if len(changes) == 0 {
			return nil, errors.New("price_change without changes")
		}
		out := make([]item, 0, len(changes))
		for i := range changes {
			c := &changes[i]
			if err := checkToken(c.AssetID); err != nil {
				return nil, fmt.Errorf("price_change %d: %v", i+1, err)
			}
			p, err := parseDecimal(string(c.Price))
			if err != nil {
				return nil, fmt.Errorf("price_change %d price: %v", i+1, err)
			}
			s, err := parseDecimal(string(c.Size))
			if err != nil {
				return nil, fmt.Errorf("price_change %d size: %v", i+1, err)
			}
			side, err := checkSide(c.Side)
			if err != nil {
				return nil, fmt.Errorf("price_change %d: %v", i+1, err)
			}
			e := &Event{Type: "price_change", Token: c.AssetID, Ts: ts, LocalTs: lts, Side: side, Price: p.f, Size: s.f}
			q := &pendingQuote{p: p, s: s, side: side}
			if q.bb, q.hasBB, err = optDecimal(c.BestBid); err != nil {
				return nil, fmt.Errorf("price_change %d best_bid: %v", i+1, err)
			}
			if q.ba, q.hasBA, err = optDecimal(c.BestAsk); err != nil {
				return nil, fmt.Errorf("price_change %d best_ask: %v", i+1, err)
			}
			out = append(out, item{e: e, q: q})
		}
		return out, nil
	case "last_trade_price":
		if err := checkToken(m.AssetID); err != nil {
			return nil, fmt.Errorf("last_trade_price: %v", err)
		}
		p, err := parseDecimal(string(m.Price))
		if err != nil {
			return nil, fmt.Errorf("last_trade_price price: %v", err)
		}
		s, err := parseDecimal(string(m.Size))
		if err != nil {
			return nil, fmt.Errorf("last_trade_price size: %v", err)
		}
		side, err := checkSide(m.Side)
		if err != nil {
			return nil, fmt.Errorf("last_trade_price: %v", err)
		}
		e := &Event{Type: "trade", Token: m.AssetID, Ts: ts, LocalTs: lts, Side: side, Price: p.f, Size: s.f}
		return []item{{e: e, q: &pendingQuote{p: p, s: s, side: side, trade: true}}}, nil
	case "tick_size_change":
		if err := checkToken(m.AssetID); err != nil {
			return nil, fmt.Errorf("tick_size_change: %v", err)
		}
		p, err := parseDecimal(string(m.NewTick))
		if err != nil {
			return nil, fmt.Errorf("tick_size_change new_tick_size: %v", err)
		}
		return []item{{e: &Event{Type: "tick_size_change", Token: m.AssetID, Ts: ts, LocalTs: lts, Price: p.f}}}, nil
	case "status":
		if m.Status == "" {
			return nil, errors.New("status marker without status")
		}
		status := m.Status
		if s, ok := legacyStatus[status]; ok {
			status = s
		}
		ids := m.AssetsIDs
		if m.AssetID != "" {
			ids = append([]string{m.AssetID}, ids...)
		}
		out := make([]item, 0, len(ids))
		for _, id := range ids {
			if err := checkToken(id); err != nil {
				return nil, fmt.Errorf("status: %v", err)
			}
			out = append(out, item{e: &Event{Type: "status", Token: id, Ts: ts, LocalTs: lts, Status: status}})
		}
		return out, nil
	case "new_market":
		if err := t.Meta.addNewMarket(m, ts); err != nil {
			return nil, fmt.Errorf("new_market: %v", err)
		}
		return nil, nil
	case "market_resolved":
		if err := t.Meta.addResolved(m, ts); err != nil {
			return nil, fmt.Errorf("market_resolved: %v", err)
		}
		return nil, nil
	case "best_bid_ask":
		// The lake has no row type for it: the best quotes it repeats are carried by
		// the price_change rows of the same instant.
		t.Skipped["best_bid_ask"]++
		return nil, nil
	case "":
		return nil, errors.New("message without event_type")
	default:
		t.Skipped["unknown event_type "+m.EventType]++
		return nil, nil
	}
}

func newBook(pb *pendingBook) *book {
	bk := &book{bids: make(map[int64]level, len(pb.bids)), asks: make(map[int64]level, len(pb.asks)), stale: true}
	for _, l := range pb.bids {
		if _, dup := bk.bids[l.p.fix]; !dup && l.s.fix > 0 {
			bk.bids[l.p.fix] = level{l.s.fix, l.p.f}
		}
	}
	for _, l := range pb.asks {
		if _, dup := bk.asks[l.p.fix]; !dup && l.s.fix > 0 {
			bk.asks[l.p.fix] = level{l.s.fix, l.p.f}
		}
	}
	return bk
}

// seed applies a book_state line: the recorder writes, at the top of each capture
// segment, the book it replayed so far and the last sequence number for every token,
// so a segment ingested on its own derives the same best quotes and the same seq as
// the whole capture ingested in one run (without the seq, an event received in the
// same millisecond as the previous segment's last one would take that row's key and
// replace it). It only fills a token the run has no book for and never lowers the
// counter (in one run the state is already the same), and makes no row.
func (t *Tape) seed(it item) {
	s := t.state(it.seed)
	if s.book == nil && it.pb != nil {
		s.book = newBook(it.pb)
	}
	s.lastSeq = max(s.lastSeq, it.lastSeq)
}

// BookStates returns the book_state lines (without receive time) of every token with
// a replayed book or a row, sorted by token.
func (t *Tape) BookStates() [][]byte {
	toks := make([]string, 0, len(t.tokens))
	for k, s := range t.tokens {
		if s.book != nil || s.lastSeq != 0 {
			toks = append(toks, k)
		}
	}
	sort.Strings(toks)
	out := make([][]byte, 0, len(toks))
	for _, k := range toks {
		st := t.tokens[k]
		var b bytes.Buffer
		b.WriteString(`{"event_type":"book_state","asset_id":"` + k + `","last_seq":"` + strconv.FormatInt(st.lastSeq, 10) + `"`)
		if bk := st.book; bk != nil {
			b.WriteString(`,"bids":`)
			writeLevels(&b, bk.bids, true)
			b.WriteString(`,"asks":`)
			writeLevels(&b, bk.asks, false)
		}
		b.WriteString(`}`)
		out = append(out, b.Bytes())
	}
	return out
}

func writeLevels(b *bytes.Buffer, side map[int64]level, desc bool) {
	ps := make([]int64, 0, len(side))
	for p := range side {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return (ps[i] > ps[j]) == desc })
	b.WriteByte('[')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"price":"` + fixText(p) + `","size":"` + fixText(side[p].size) + `"}`)
	}
	b.WriteByte(']')
}

// fixText is a fixed-point value's exact decimal text ("0.52", "120", "0.00000001").
func fixText(v int64) string {
	s := strconv.FormatInt(v/fixScale, 10)
	if f := v % fixScale; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%08d", f), "0")
	}
	return s
}

type pendingQuote struct {
	p, s         decimal
	side         string
	trade        bool
	bb, ba       decimal
	hasBB, hasBA bool
}

// apply advances the token's state with e (book replaced, level set, trade taken
// from the book), assigns seq and fills best bid/ask: from the message when it
// carries them, otherwise from the replayed book (0 while the run has seen no snapshot
// of the token). Book rows carry no best quotes (their bids and asks hold the whole
// book), as in every lake.
func (t *Tape) apply(it item) {
	e := it.e
	s := t.state(e.Token)
	e.Seq = t.nextSeq(s, e.LocalTs)
	if pb := it.pb; pb != nil {
		s.book = newBook(pb)
		return
	}
	q := it.q
	if q == nil {
		return
	}
	if bk := s.book; bk != nil {
		if q.trade {
			// A BUY takes the asks, a SELL the bids; the venue's following
			// price_change (absolute level sizes) corrects any difference.
			bid := q.side == "SELL"
			side := bk.asks
			if bid {
				side = bk.bids
			}
			if l, ok := side[q.p.fix]; ok {
				l.size -= q.s.fix
				bk.set(bid, q.p.fix, l)
			}
		} else {
			bk.set(q.side == "BUY", q.p.fix, level{q.s.fix, q.p.f})
		}
		e.BestBid, e.BestAsk = bk.best()
	}
	if q.hasBB {
		e.BestBid = q.bb.f
	}
	if q.hasBA {
		e.BestAsk = q.ba.f
	}
}

func optDecimal(n numText) (decimal, bool, error) {
	if n == "" {
		return decimal{}, false, nil
	}
	d, err := parseDecimal(string(n))
	return d, err == nil, err
}

func parseLevels(ls []wsLevel) ([]parsedLevel, error) {
	out := make([]parsedLevel, len(ls))
	for i, l := range ls {
		p, err := parseDecimal(string(l.Price))
		if err != nil {
			return nil, fmt.Errorf("level %d price: %v", i+1, err)
		}
		s, err := parseDecimal(string(l.Size))
		if err != nil {
			return nil, fmt.Errorf("level %d size: %v", i+1, err)
		}
		out[i] = parsedLevel{p, s}
	}
	return out, nil
}

// levelsJSON writes levels as the lake stores them, each number in its shortest
// decimal form ("0.920" is "0.92"), as every lake writes it.
func levelsJSON(ls []parsedLevel) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"price":"`)
		b.WriteString(decText(l.p))
		b.WriteString(`","size":"`)
		b.WriteString(decText(l.s))
		b.WriteString(`"}`)
	}
	b.WriteByte(']')
	return b.String()
}

// decText is the shortest decimal text of d ("0.5", "120", "3149725.72").
func decText(d decimal) string { return strconv.FormatFloat(d.f, 'f', -1, 64) }

func parseMs(n numText) (int64, error) {
	if n == "" {
		return 0, errors.New("missing")
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not epoch milliseconds", string(n))
	}
	return v, nil
}

// parseSecOrMs reads the fills' times: epoch seconds as the venue publishes them
// (sec true), or milliseconds (13 digits and more).
func parseSecOrMs(n numText) (ms int64, sec bool, err error) {
	v, err := parseMs(n)
	if err != nil {
		return 0, false, err
	}
	if v < 100_000_000_000 {
		return v * 1000, true, nil
	}
	return v, false, nil
}

func checkToken(id string) error {
	if id == "" {
		return errors.New("missing asset_id")
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return fmt.Errorf("asset_id %q is not decimal digits", id)
		}
	}
	return nil
}

func checkSide(s string) (string, error) {
	switch strings.ToUpper(s) {
	case "BUY":
		return "BUY", nil
	case "SELL":
		return "SELL", nil
	}
	return "", fmt.Errorf("side %q is not BUY or SELL", s)
}

// clone copies the tape's per-token state (books included), so a rejected file's
// effect on it can be undone.
func (t *Tape) clone() *Tape {
	c := &Tape{tokens: make(map[string]*tokenState, len(t.tokens)), Meta: t.Meta, Skipped: t.Skipped, Read: t.Read, names: t.names}
	for k, s := range t.tokens {
		cs := *s
		if s.book != nil {
			b := *s.book
			b.bids, b.asks = maps.Clone(s.book.bids), maps.Clone(s.book.asks)
			cs.book = &b
		}
		c.tokens[k] = &cs
	}
	return c
}
