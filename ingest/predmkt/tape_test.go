package predmkt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// run feeds lines to a fresh tape and returns the rows and the first error per line.
func run(t *testing.T, lines ...string) (*Tape, []Event, []error) {
	t.Helper()
	tp := NewTape()
	var evs []Event
	var errs []error
	for _, l := range lines {
		if err := tp.Line([]byte(l), func(e *Event) { evs = append(evs, *e) }); err != nil {
			errs = append(errs, err)
		}
	}
	return tp, evs, errs
}

// TestTapeRows: each message type becomes the rows docs/DATA.md describes, with seq
// per token in receive order and best bid/ask from the message or the replayed book.
func TestTapeRows(t *testing.T) {
	book := `100 {"event_type":"book","asset_id":"7","market":"0x01","timestamp":"90","bids":[{"price":"0.40","size":"100"},{"price":"0.45","size":"50"}],"asks":[{"price":"0.55","size":"80"},{"price":"0.50","size":"20"}]}`
	cases := []struct {
		name  string
		lines []string
		want  []Event
	}{
		{"book sorted best first, no best quotes on the snapshot row", []string{book},
			[]Event{{Type: "book", Token: "7", Ts: 90, LocalTs: 100, Seq: 100_000, Snapshot: 1,
				Bids: `[{"price":"0.45","size":"50"},{"price":"0.4","size":"100"}]`,
				Asks: `[{"price":"0.5","size":"20"},{"price":"0.55","size":"80"}]`}}},
		{"old price_change schema: best derived from the book", []string{book,
			`101 {"event_type":"price_change","asset_id":"7","timestamp":"91","changes":[{"price":"0.46","side":"BUY","size":"30"},{"price":"0.50","side":"SELL","size":"0"}]}`},
			[]Event{{}, {Type: "price_change", Token: "7", Ts: 91, LocalTs: 101, Seq: 101_000, Side: "BUY", Price: 0.46, Size: 30, BestBid: 0.46, BestAsk: 0.5},
				{Type: "price_change", Token: "7", Ts: 91, LocalTs: 101, Seq: 101_001, Side: "SELL", Price: 0.5, Size: 0, BestBid: 0.46, BestAsk: 0.55}}},
		{"2025-09 schema: best from the message wins", []string{book,
			`102 {"event_type":"price_change","market":"0x01","timestamp":"92","price_changes":[{"asset_id":"7","price":"0.47","side":"BUY","size":"1","best_bid":"0.47","best_ask":"0.49"}]}`},
			[]Event{{}, {Type: "price_change", Token: "7", Ts: 92, LocalTs: 102, Seq: 102_000, Side: "BUY", Price: 0.47, Size: 1, BestBid: 0.47, BestAsk: 0.49}}},
		{"trade takes the touch: a BUY of the whole best ask", []string{book,
			`103 {"event_type":"last_trade_price","asset_id":"7","timestamp":"93","price":"0.50","side":"BUY","size":"20"}`},
			[]Event{{}, {Type: "trade", Token: "7", Ts: 93, LocalTs: 103, Seq: 103_000, Side: "BUY", Price: 0.5, Size: 20, BestBid: 0.45, BestAsk: 0.55}}},
		{"a SELL trade partly takes the best bid", []string{book,
			`103 {"event_type":"last_trade_price","asset_id":"7","timestamp":"93","price":"0.45","side":"SELL","size":"49.5"}`},
			[]Event{{}, {Type: "trade", Token: "7", Ts: 93, LocalTs: 103, Seq: 103_000, Side: "SELL", Price: 0.45, Size: 49.5, BestBid: 0.45, BestAsk: 0.5}}},
		{"no snapshot yet: best is 0", []string{
			`{"event_type":"last_trade_price","asset_id":"7","timestamp":"93","price":"0.45","side":"SELL","size":"1"}`},
			[]Event{{Type: "trade", Token: "7", Ts: 93, LocalTs: 93, Seq: 93_000, Side: "SELL", Price: 0.45, Size: 1}}},
		{"tick size: price holds the new tick", []string{
			`{"event_type":"tick_size_change","asset_id":"7","timestamp":"94","new_tick_size":"0.001","old_tick_size":"0.01"}`},
			[]Event{{Type: "tick_size_change", Token: "7", Ts: 94, LocalTs: 94, Seq: 94_000, Price: 0.001}}},
		{"status marker: one row per token", []string{
			`95 {"event_type":"status","status":"gap_start","assets_ids":["7","8"],"timestamp":"95"}`},
			[]Event{{Type: "status", Token: "7", Ts: 95, LocalTs: 95, Seq: 95_000, Status: "gap_start"},
				{Type: "status", Token: "8", Ts: 95, LocalTs: 95, Seq: 95_000, Status: "gap_start"}}},
		{"status marker: an earlier recorder's gap and resync read as gap_start and live_resume", []string{
			`95 {"event_type":"status","status":"gap","assets_ids":["7"],"timestamp":"95"}`,
			`96 {"event_type":"status","status":"resync","asset_id":"7","timestamp":"96"}`,
			`97 {"event_type":"status","status":"live_resume","asset_id":"7","timestamp":"97"}`,
			`98 {"event_type":"status","status":"connected","asset_id":"7","timestamp":"98"}`},
			[]Event{{Type: "status", Token: "7", Ts: 95, LocalTs: 95, Seq: 95_000, Status: "gap_start"},
				{Type: "status", Token: "7", Ts: 96, LocalTs: 96, Seq: 96_000, Status: "live_resume"},
				{Type: "status", Token: "7", Ts: 97, LocalTs: 97, Seq: 97_000, Status: "live_resume"},
				{Type: "status", Token: "7", Ts: 98, LocalTs: 98, Seq: 98_000, Status: "connected"}}},
		{"array frame; seq per token; same ms counts up; earlier local_ts continues", []string{
			`200 [{"event_type":"tick_size_change","asset_id":"7","timestamp":"1","new_tick_size":"0.01"},{"event_type":"tick_size_change","asset_id":"8","timestamp":"1","new_tick_size":"0.01"},{"event_type":"tick_size_change","asset_id":"7","timestamp":"1","new_tick_size":"0.001"}]`,
			`199 {"event_type":"tick_size_change","asset_id":"7","timestamp":"1","new_tick_size":"0.01"}`},
			[]Event{{Type: "tick_size_change", Token: "7", Ts: 1, LocalTs: 200, Seq: 200_000, Price: 0.01},
				{Type: "tick_size_change", Token: "8", Ts: 1, LocalTs: 200, Seq: 200_000, Price: 0.01},
				{Type: "tick_size_change", Token: "7", Ts: 1, LocalTs: 200, Seq: 200_001, Price: 0.001},
				{Type: "tick_size_change", Token: "7", Ts: 1, LocalTs: 199, Seq: 200_002, Price: 0.01}}},
		{"unknown type and best_bid_ask: no rows", []string{
			`{"event_type":"surprise","asset_id":"7","timestamp":"1"}`,
			`{"event_type":"best_bid_ask","asset_id":"7","best_bid":"0.1","best_ask":"0.2","timestamp":"1"}`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, errs := run(t, c.lines...)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			// The first row of cases starting with the shared book is not compared.
			if len(c.want) > 0 && c.want[0].Type == "" {
				got, c.want = got[1:], c.want[1:]
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestTapeBadLines: a malformed line is an error, emits nothing and leaves the state
// (books, seq) as it was; an unknown type is counted, not an error.
func TestTapeBadLines(t *testing.T) {
	bad := []struct{ line, want string }{
		{`not json`, "neither a JSON object nor an array"},
		{`{"event_type":"book","asset_id":"7","timestamp":"1","bids":[{"price":"0.4x","size":"1"}],"asks":[]}`, "not a plain decimal"},
		{`{"event_type":"last_trade_price","asset_id":"7","timestamp":"1","price":"0.5","side":"HOLD","size":"1"}`, `side "HOLD"`},
		{`{"event_type":"price_change","asset_id":"7","timestamp":"1","changes":[]}`, "without changes"},
		{`{"event_type":"tick_size_change","asset_id":"0xabc","timestamp":"1","new_tick_size":"0.01"}`, "not decimal digits"},
		{`{"event_type":"book","asset_id":"7","bids":[],"asks":[]}`, "timestamp"},
		{`{"asset_id":"7","timestamp":"1"}`, "without event_type"},
		{`12x {"event_type":"book"}`, "receive time"},
		{`[{"event_type":"tick_size_change","asset_id":"7","timestamp":"5","new_tick_size":"0.01"},{"event_type":"tick_size_change","asset_id":"7","timestamp":"5","new_tick_size":"x"}]`, "message 2 of the frame"},
		{`{"event_type":"last_trade_price","asset_id":"7","timestamp":"1","price":"0.123456789","side":"BUY","size":"1"}`, "more than 8 decimal places"},
	}
	for _, b := range bad {
		tp, evs, errs := run(t, b.line)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), b.want) {
			t.Errorf("%s: errors %v, want one containing %q", b.line, errs, b.want)
		}
		if len(evs) != 0 || len(tp.tokens) != 0 || tp.Read != 0 {
			t.Errorf("%s: a rejected line changed something: %d rows, %d tokens", b.line, len(evs), len(tp.tokens))
		}
	}
	tp, evs, errs := run(t, `{"event_type":"surprise","timestamp":"1"}`)
	if len(errs) != 0 || len(evs) != 0 || tp.Skipped["unknown event_type surprise"] != 1 {
		t.Fatalf("unknown type: %v %v %v", errs, evs, tp.Skipped)
	}
}

// TestDecimal: exact decimals, to the float the lake stores.
func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		s   string
		fix int64
		f   float64
	}{{"0.51", 51_000_000, 0.51}, {"25.0", 2_500_000_000, 25}, {"3149725.72", 314972572_000_000, 3149725.72}, {"0.920", 92_000_000, 0.92}, {".5", 50_000_000, 0.5}, {"7", 700_000_000, 7}} {
		d, err := parseDecimal(c.s)
		if err != nil || d.fix != c.fix || d.f != c.f || fixFloat(d.fix) != c.f {
			t.Errorf("%s: %+v %v", c.s, d, err)
		}
	}
	for _, s := range []string{"", "-1", "1e-3", "0.5.1", ".", "NaN", "0x10"} {
		if _, err := parseDecimal(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// samples is the shared folder of real-format samples; tests reading it skip when
// it is absent.
func samples(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "samples", "predmkt")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/samples/predmkt: sample tests skipped")
	}
	return dir
}

func readSample(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join(samples(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSamplesMarketChannel: every market-channel sample parses into the rows written
// here by hand from the sample.
func TestSamplesMarketChannel(t *testing.T) {
	samples(t)
	tok := "71321045679252212594626385532706912750332728571942532289631379312455583992563"
	cases := []struct {
		file string
		want []Event
		skip string
	}{
		{"ws_market_price_change_msg.json", []Event{{Type: "price_change", Token: tok, Ts: 1703875201000, LocalTs: 1703875201000,
			Seq: 1703875201000000, Side: "BUY", Price: 0.51, Size: 150, BestBid: 0.51, BestAsk: 0.52}}, ""},
		{"ws_market_last_trade_msg.json", []Event{{Type: "trade", Token: tok, Ts: 1703875202000, LocalTs: 1703875202000,
			Seq: 1703875202000000, Side: "BUY", Price: 0.51, Size: 25}}, ""},
		{"ws_market_tick_size_msg.json", []Event{{Type: "tick_size_change", Token: tok, Ts: 1703875210000, LocalTs: 1703875210000,
			Seq: 1703875210000000, Price: 0.01}}, ""},
		{"ws_market_best_bid_ask_msg.json", nil, "best_bid_ask"},
		{"ws_market_new_market_msg.json", nil, ""},
		{"ws_market_resolved_msg.json", nil, ""},
	}
	for _, c := range cases {
		tp := NewTape()
		var got []Event
		if err := tp.Frame(readSample(t, c.file), 0, func(e *Event) { got = append(got, *e) }); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
		if c.skip != "" && tp.Skipped[c.skip] != 1 {
			t.Errorf("%s: skipped %v", c.file, tp.Skipped)
		}
	}
	// new_market: a partial market (no end date) with its two tokens; the unmapped
	// tag stays the category.
	tp := NewTape()
	if err := tp.Frame(readSample(t, "ws_market_new_market_msg.json"), 0, func(*Event) {}); err != nil {
		t.Fatal(err)
	}
	cond := "0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1"
	wantM := []Market{{Cond: cond, Question: "Will NVIDIA (NVDA) close above $240 end of January?", Slug: "nvda-above-240-on-january-30-2026",
		Category: "stocks", Created: time.UnixMilli(1766790415550).UTC(), Partial: true}}
	wantT := []Token{{"76043073756653678226373981964075571318267289248134717369284518995922789326425", cond, 0, "Yes"},
		{"31690934263385727664202099278545688007799199447969475608906331829650099442770", cond, 1, "No"}}
	if !reflect.DeepEqual(tp.Meta.Markets, wantM) || !reflect.DeepEqual(tp.Meta.Tokens, wantT) {
		t.Errorf("new_market:\n got %+v %+v\nwant %+v %+v", tp.Meta.Markets, tp.Meta.Tokens, wantM, wantT)
	}
	// market_resolved: the winner is the first asset (Yes).
	tp = NewTape()
	if err := tp.Frame(readSample(t, "ws_market_resolved_msg.json"), 0, func(*Event) {}); err != nil {
		t.Fatal(err)
	}
	if want := []Resolution{{Cond: cond, Ts: time.UnixMilli(1766790415550).UTC(), Winner: 0}}; !reflect.DeepEqual(tp.Meta.Resolutions, want) {
		t.Errorf("market_resolved: %+v", tp.Meta.Resolutions)
	}
}

// TestSampleBookSnapshot: the captured book (bids and asks sent worst first) is
// stored best first, every level kept, in shortest decimal text.
func TestSampleBookSnapshot(t *testing.T) {
	tp := NewTape()
	var got []Event
	if err := tp.Frame(readSample(t, "ws_book_snapshot_captured.json"), 0, func(e *Event) { got = append(got, *e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d rows", len(got))
	}
	e := got[0]
	wantBids := `[{"price":"0.07","size":"182528.55"},{"price":"0.06","size":"219685.67"},{"price":"0.05","size":"507106.18"},` +
		`{"price":"0.04","size":"171213.7"},{"price":"0.03","size":"37268.67"},{"price":"0.02","size":"70281.2"},{"price":"0.01","size":"3149725.72"}]`
	if e.Type != "book" || e.Token != "350977769852917329387037893294763093471844346281449484439085576212613048126" ||
		e.Ts != 1786604072222 || e.LocalTs != e.Ts || e.Seq != 1786604072222000 || e.Snapshot != 1 || e.Bids != wantBids {
		t.Fatalf("book row %+v", e)
	}
	if !strings.HasPrefix(e.Asks, `[{"price":"0.08","size":"228198.28"},{"price":"0.09","size":"153220.41"},`) ||
		!strings.HasSuffix(e.Asks, `{"price":"0.98","size":"17512.3"},{"price":"0.99","size":"156606.14"}]`) ||
		strings.Count(e.Asks, `"price"`) != 57 {
		t.Fatalf("asks %s", e.Asks)
	}
	// The replayed book has its touch at 0.07 / 0.08.
	if bb, ba := tp.tokens[e.Token].book.best(); bb != 0.07 || ba != 0.08 {
		t.Fatalf("best %v/%v", bb, ba)
	}
}

// TestSamplesGamma: the Gamma samples give the markets, tokens and categories written
// here by hand; the up/down market is a btc 5m family member.
func TestSamplesGamma(t *testing.T) {
	m := &Meta{}
	if err := m.Gamma(readSample(t, "gamma_market.json")); err != nil {
		t.Fatal(err)
	}
	cond := "0x78443f961b9a65869dcb39359de9960165c7e5cbad0904eac7f29cd77872a63b"
	want := Market{Cond: cond, Question: "Bitcoin Up or Down - March 12, 5:20AM-5:25AM ET", Slug: "btc-updown-5m-1773307200",
		Category: "Crypto", FamAsset: "btc", FamTenor: "5m",
		Created: time.Date(2026, 3, 11, 9, 27, 51, 140253000, time.UTC), End: time.Date(2026, 3, 12, 9, 25, 0, 0, time.UTC)}
	if len(m.Markets) != 1 || m.Markets[0] != want {
		t.Fatalf("market %+v\nwant %+v", m.Markets, want)
	}
	wantT := []Token{{"104239898038807136052399800151408521467737075933964991162589336683346093173875", cond, 0, "Up"},
		{"71183960810705820955071415844881728181970340514894896943812046065452395013351", cond, 1, "Down"}}
	if !reflect.DeepEqual(m.Tokens, wantT) || len(m.Resolutions) != 0 {
		t.Fatalf("tokens %+v resolutions %+v", m.Tokens, m.Resolutions)
	}
	ev := &Meta{}
	if err := ev.Gamma(readSample(t, "gamma_event.json")); err != nil {
		t.Fatal(err)
	}
	if len(ev.Markets) != 2 || len(ev.Tokens) != 4 || len(ev.Resolutions) != 0 {
		t.Fatalf("event: %d markets %d tokens %d resolutions", len(ev.Markets), len(ev.Tokens), len(ev.Resolutions))
	}
	for i, q := range []string{"Will Stephen A. Smith win the 2028 Democratic presidential nomination?", "Will Gretchen Whitmer win the 2028 Democratic presidential nomination?"} {
		mk := ev.Markets[i]
		if mk.Question != q || mk.Category != "Politics" || mk.FamAsset != "" || mk.Closed ||
			!mk.End.Equal(time.Date(2028, 11, 7, 0, 0, 0, 0, time.UTC)) || ev.Tokens[2*i].Outcome != "Yes" || ev.Tokens[2*i+1].Index != 1 {
			t.Errorf("event market %d: %+v", i, mk)
		}
	}
	if ev.Markets[0].Cond != "0xc8f1cf5d4f26e0fd9c8fe89f2a7b3263b902cf14fde7bfccef525753bb492e47" {
		t.Errorf("condition %s", ev.Markets[0].Cond)
	}
}

// TestGammaResolutions: the winner from settled outcome prices; 50/50 and a cancelled
// question are invalid; an open or unsettled market has no resolution.
func TestGammaResolutions(t *testing.T) {
	base := `{"conditionId":"0x` + strings.Repeat("ab", 32) + `","clobTokenIds":"[\"1\",\"2\"]","outcomes":"[\"Yes\",\"No\"]","endDate":"2026-01-02T00:00:00Z"`
	for _, c := range []struct {
		extra string
		want  []Resolution
	}{
		{`,"closed":true,"outcomePrices":"[\"1\",\"0\"]","closedTime":"2026-01-03 10:00:00+00"}`, []Resolution{{Ts: time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC), Winner: 0}}},
		{`,"closed":true,"outcomePrices":"[\"0\",\"1\"]"}`, []Resolution{{Ts: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Winner: 1}}},
		{`,"closed":true,"outcomePrices":"[\"0.5\",\"0.5\"]"}`, []Resolution{{Ts: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Invalid: true}}},
		{`,"closed":true,"outcomePrices":"[\"0\",\"0\"]","umaResolutionStatus":"cancelled"}`, []Resolution{{Ts: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Invalid: true}}},
		{`,"closed":true,"outcomePrices":"[\"0.98\",\"0.02\"]"}`, nil},
		{`,"closed":false,"outcomePrices":"[\"1\",\"0\"]"}`, nil},
	} {
		m := &Meta{}
		if err := m.Gamma([]byte(base + c.extra)); err != nil {
			t.Fatal(err)
		}
		for i := range c.want {
			c.want[i].Cond = "0x" + strings.Repeat("ab", 32)
		}
		if !reflect.DeepEqual(m.Resolutions, c.want) {
			t.Errorf("%s: %+v want %+v", c.extra, m.Resolutions, c.want)
		}
	}
}

// TestCategoryAndFamily: tag mapping onto SPEC's five categories; unmapped keeps its
// own; families from slug or series.
func TestCategoryAndFamily(t *testing.T) {
	for _, c := range []struct {
		tags      []string
		own, want string
	}{
		{[]string{"Earn 4%", "Politics"}, "", "Politics"}, {[]string{"NBA"}, "", "Sports"}, {[]string{"pop-culture"}, "", "Pop-Culture"},
		{[]string{"AI"}, "", "Tech"}, {[]string{"Bitcoin"}, "", "Crypto"}, {[]string{"stocks"}, "stocks", "stocks"}, {nil, "Weather", "Weather"},
		{nil, "sports", "Sports"},
	} {
		if got := Category(c.tags, c.own); got != c.want {
			t.Errorf("%v/%s: %s want %s", c.tags, c.own, got, c.want)
		}
	}
	for _, c := range []struct{ slug, title, series, rec, a, t string }{
		{"btc-updown-5m-1773307200", "", "", "", "btc", "5m"}, {"eth-updown-15m-1", "", "", "", "eth", "15m"},
		{"x", "Solana Up or Down - March 1, 5PM ET", "solana-up-or-down-hourly", "hourly", "sol", "1h"},
		{"bitcoin-up-or-down-march-1", "Bitcoin Up or Down on March 1?", "btc-up-or-down-daily", "daily", "btc", "1d"},
		{"will-a-win", "Will A win?", "", "", "", ""},
	} {
		if a, tn := Family(c.slug, c.title, c.series, c.rec); a != c.a || tn != c.t {
			t.Errorf("%s: %s/%s want %s/%s", c.slug, a, tn, c.a, c.t)
		}
	}
}

// TestBookStateSeeds: a book_state line (the recorder's, at the top of a segment)
// gives a token with no book its replayed book and makes no row; a token that has one
// keeps it; its last_seq raises the token's seq counter (never lowers it), so an event
// in the same millisecond as the previous segment's last one does not take that row's
// key; a token with rows but no book gets a line without bids and asks, which seeds
// no book; BookStates writes what it reads back.
func TestBookStateSeeds(t *testing.T) {
	state := `5 {"event_type":"book_state","asset_id":"7","last_seq":"6000","bids":[{"price":"0.45","size":"12.5"}],"asks":[{"price":"0.5","size":"3"}]}`
	trade := `6 {"event_type":"last_trade_price","asset_id":"7","timestamp":"6","price":"0.50","side":"BUY","size":"1"}`
	tp, evs, errs := run(t, state, trade)
	if len(errs) > 0 || len(evs) != 1 || evs[0].BestBid != 0.45 || evs[0].BestAsk != 0.5 {
		t.Fatalf("seeded: %v %+v", errs, evs)
	}
	if evs[0].Seq != 6001 {
		t.Errorf("seq after last_seq 6000 in the same millisecond: %d, want 6001", evs[0].Seq)
	}
	if got := string(tp.BookStates()[0]); got != `{"event_type":"book_state","asset_id":"7","last_seq":"6001","bids":[{"price":"0.45","size":"12.5"}],"asks":[{"price":"0.5","size":"2"}]}` {
		t.Fatalf("BookStates %s", got)
	}
	book := `4 {"event_type":"book","asset_id":"7","timestamp":"4","bids":[{"price":"0.30","size":"1"}],"asks":[{"price":"0.70","size":"1"}]}`
	_, evs, _ = run(t, book, state, trade)
	if len(evs) != 2 || evs[1].BestBid != 0.3 || evs[1].BestAsk != 0.7 {
		t.Fatalf("a token with a book must keep it: %+v", evs)
	}
	late := `9 {"event_type":"last_trade_price","asset_id":"7","timestamp":"9","price":"0.50","side":"BUY","size":"1"}`
	if _, evs, _ = run(t, late, state, trade); len(evs) != 2 || evs[1].Seq != 9001 {
		t.Errorf("a last_seq below the counter must not lower it: %+v", evs)
	}
	status := `3 {"event_type":"status","status":"connected","assets_ids":["8"],"timestamp":"3"}`
	tp, _, _ = run(t, status)
	got := tp.BookStates()
	if len(got) != 1 || string(got[0]) != `{"event_type":"book_state","asset_id":"8","last_seq":"3000"}` {
		t.Fatalf("a token with a row and no book: %q", got)
	}
	_, evs, errs = run(t, "3 "+string(got[0]), `3 {"event_type":"last_trade_price","asset_id":"8","timestamp":"3","price":"0.50","side":"BUY","size":"1"}`)
	if len(errs) > 0 || len(evs) != 1 || evs[0].Seq != 3001 || evs[0].BestBid != 0 || evs[0].BestAsk != 0 {
		t.Errorf("a book_state without levels seeds the seq and no book: %v %+v", errs, evs)
	}
	if _, _, errs = run(t, `3 {"event_type":"book_state","asset_id":"8","last_seq":"x"}`); len(errs) != 1 {
		t.Errorf("a bad last_seq must be rejected: %v", errs)
	}
}
