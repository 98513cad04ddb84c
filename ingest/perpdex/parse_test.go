package perpdex

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"mdq/lake"
)

const samples = "../../../shared/samples/perpdex"

// parsed is what reading one file gives, without a lake.
type parsed struct {
	rows    []Row
	skipped []string
	errs    []string
}

func parseFile(t *testing.T, path, kind string, fc fileCtx) parsed {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p parsed
	err = readFile(f, filepath.Base(path), kind, &fc, func(line int, rec *record, perr error) error {
		if perr != nil {
			p.errs = append(p.errs, perr.Error())
			return nil
		}
		p.rows = append(p.rows, rec.rows...)
		for i := range rec.fills {
			p.rows = append(p.rows, Row{lake.PerpdexFills, rec.fills[i].Date(), rec.fills[i].Row()})
		}
		p.skipped = append(p.skipped, rec.skipped...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func needSamples(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(samples); err != nil {
		t.Skipf("real-format samples not present (%s): skipped", samples)
	}
}

func ms(v int64) time.Time  { return time.UnixMilli(v).UTC() }
func fp(v float64) *float64 { return &v }

// TestSamplesParseIntoExpectedRows: every real-format sample, its kind guessed from
// the content, gives the hand-written rows (numbers from the strings exactly).
func TestSamplesParseIntoExpectedRows(t *testing.T) {
	needSamples(t)
	const liq = "0x360878d351f05975e25f1807a27895e1e5e004fb"
	const other = "0x00000000000000000000000000000000000000aa"
	at := ms(1784050800000)
	liqFill := func(wallet string, isLiq bool) Row {
		f := Fill{Time: ms(1781528065899), Wallet: wallet, Coin: "BTC", Side: "A", Px: 66653.0, Sz: 0.001,
			Dir: "Open Short", StartPosition: -0.0213, ClosedPnl: 0, Fee: 0.009997, FeeToken: "USDC", Crossed: false,
			Hash: "0xe29fd267b4d2c6f0e41904231bbec90000daea4d4fd5e5c286687dba73d6a0db", Tid: 745210434703679, Oid: 55030848197}
		if isLiq {
			f.Liquidation, f.LiqMarkPx = true, fp(66607.0)
		}
		return Row{lake.PerpdexFills, "2026-06-15", f.Row()}
	}
	bookTs := int64(1761786491067)
	for _, c := range []struct {
		file    string
		user    string
		kind    string // the kind the content must be guessed as
		rows    []Row
		skipped []string
	}{
		{"ws_user_fill_liquidation.json", liq, "fills", []Row{liqFill(liq, true)}, nil},
		{"ws_user_fill_liquidation.json", other, "fills", []Row{liqFill(other, false)}, nil},
		{"http_clearinghouse_state.json", other, "clearinghouse", []Row{
			{lake.PerpdexAccounts, "2026-07-14", []any{at, other, 10246.125, 9845.0, 1969.0}},
			{lake.PerpdexPositions, "2026-07-14", []any{at, other, "BTC", 0.1, 98450.0, 9845.0 / 0.1, 5.0, 80000.0, 246.125, 9845.0}},
		}, nil},
		{"http_spot_clearinghouse_state.json", other, "spot-clearinghouse", []Row{
			{lake.PerpdexHypeBalances, "", []any{other, "spot", 5.2, at}},
		}, nil},
		{"http_funding_history.json", "", "funding", []Row{
			{lake.PerpdexFundingRates, "2026-02-01", []any{ms(1769908800000), "BTC", "history", 0.0000125, 0.00029005}},
			{lake.PerpdexFundingRates, "2026-02-01", []any{ms(1769912400000), "BTC", "history", -0.0000081, -0.000125}},
			{lake.PerpdexFundingRates, "2026-02-01", []any{ms(1769916000000), "BTC", "history", 0.0000033, nil}},
		}, nil},
		{"http_meta_perp_sample.json", "", "meta", nil, []string{"meta without asset contexts"}},
		{"http_l2_book_btc.json", "", "l2book", []Row{
			{lake.PerpdexBookEvents, "2025-10-30", []any{"book", "BTC", bookTs, at.UnixMilli(), bookTs, "", 0.0, 0.0, 110427.0, 110428.0,
				`[{"price":"110427.0","size":"4.11882"},{"price":"110426.0","size":"0.31694"},{"price":"110425.0","size":"1.30796"},{"price":"110424.0","size":"0.28581"},{"price":"110423.0","size":"3.07847"}]`,
				`[{"price":"110428.0","size":"3.72573"},{"price":"110430.0","size":"0.03586"},{"price":"110431.0","size":"1.35809"},{"price":"110432.0","size":"1.35805"},{"price":"110433.0","size":"1.27191"}]`,
				int32(1), ""}},
		}, nil},
	} {
		t.Run(c.file+"/"+c.kind, func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(samples, c.file))
			if got := guessKind(b); got != c.kind {
				t.Fatalf("guessed kind %q, want %q", got, c.kind)
			}
			p := parseFile(t, filepath.Join(samples, c.file), "", fileCtx{user: c.user, at: at})
			if len(p.errs) > 0 {
				t.Fatalf("errors: %v", p.errs)
			}
			if !reflect.DeepEqual(p.rows, c.rows) {
				t.Fatalf("rows\n got %v\nwant %v", p.rows, c.rows)
			}
			if !reflect.DeepEqual(p.skipped, c.skipped) {
				t.Fatalf("skipped %v, want %v", p.skipped, c.skipped)
			}
		})
	}
	t.Run("http_recent_trades_btc.json", func(t *testing.T) {
		p := parseFile(t, filepath.Join(samples, "http_recent_trades_btc.json"), "", fileCtx{})
		want := []Row{}
		for _, tr := range []struct {
			side, px      string
			pxv, szv      float64
			ts, tid       int64
			buyer, seller string
			h             string
		}{
			{"A", "", 104320.0, 0.015, 1769916002000, 300003, "0xbuyer3", "0xseller3", "3"},
			{"B", "", 104310.5, 0.02, 1769916001000, 300002, "0xbuyer2", "0xseller2", "2"},
			{"A", "", 104300.0, 0.005, 1769916000000, 300001, "0xbuyer1", "0xseller1", "1"},
		} {
			h := "0x" + strings.Repeat("0", 63) + tr.h
			side := map[string]string{"A": "SELL", "B": "BUY"}[tr.side]
			want = append(want,
				Row{lake.PerpdexTrades, "2026-02-01", []any{"BTC", tr.ts, tr.ts, tr.tid, tr.side, tr.pxv, tr.szv, h, tr.tid, tr.buyer, tr.seller}},
				Row{lake.PerpdexBookEvents, "2026-02-01", []any{"trade", "BTC", tr.ts, tr.ts, tr.tid, side, tr.pxv, tr.szv, 0.0, 0.0, "", "", int32(0), ""}})
		}
		if len(p.errs) > 0 || !reflect.DeepEqual(p.rows, want) {
			t.Fatalf("errors %v\nrows\n got %v\nwant %v", p.errs, p.rows, want)
		}
	})
}

// TestNodeFillFixture: the node fixture's blocks give one row per [user, fill] with the
// builder dex split out, builder fields, deployer fee, the liquidation on the
// liquidated user's fill only, and spot fills skipped.
func TestNodeFillFixture(t *testing.T) {
	p := parseFile(t, "testdata/node_fills.jsonl", "", fileCtx{})
	if len(p.errs) > 0 {
		t.Fatal(p.errs)
	}
	if !reflect.DeepEqual(p.skipped, []string{"spot fill"}) {
		t.Fatalf("skipped %v", p.skipped)
	}
	if len(p.rows) != 8 {
		t.Fatalf("%d rows, want 8", len(p.rows))
	}
	b := "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	w := func(d byte) string { return "0x" + strings.Repeat(string(d), 40) }
	first := Fill{Time: ms(1775037600100), Wallet: w('1'), Coin: "BTC", Side: "B", Px: 80000, Sz: 0.5, Dir: "Open Long",
		Fee: 20, FeeToken: "USDC", Builder: &b, BuilderFee: fp(2), Crossed: true,
		Hash: "0xaa00000000000000000000000000000000000000000000000000000000000001", Tid: 1001, Oid: 9001}
	tsla := Fill{Time: ms(1775073600250), Wallet: w('3'), Coin: "xyz:TSLA", Dex: "xyz", Side: "B", Px: 250.5, Sz: 10,
		Dir: "Open Long", Fee: 2.2545, FeeToken: "USDC", Builder: &b, BuilderFee: fp(1), DeployerFee: fp(0.5), Crossed: true,
		Hash: "0xaa00000000000000000000000000000000000000000000000000000000000003", Tid: 1003, Oid: 9005}
	liq := Fill{Time: ms(1775099700000), Wallet: w('4'), Coin: "ETH", Side: "A", Px: 1800, Sz: 2, Dir: "Close Long",
		StartPosition: 2, ClosedPnl: -400, Fee: 1.62, FeeToken: "USDC", Crossed: true,
		Hash: "0xaa00000000000000000000000000000000000000000000000000000000000005", Tid: 1004, Oid: 9008,
		Liquidation: true, LiqMarkPx: fp(1795.5)}
	for i, want := range map[int]Row{
		0: {lake.PerpdexFills, "2026-04-01", first.Row()},
		4: {lake.PerpdexFills, "2026-04-01", tsla.Row()},
		6: {lake.PerpdexFills, "2026-04-02", liq.Row()},
	} {
		if !reflect.DeepEqual(p.rows[i], want) {
			t.Errorf("row %d\n got %v\nwant %v", i, p.rows[i], want)
		}
	}
	if got := p.rows[7].Vals; got[1] != w('2') || got[19] != false || got[20] != nil {
		t.Errorf("the liquidator's fill must not be a liquidation: %v", got)
	}
}

// TestDecimalsAreExact: decimal strings convert to the nearest double, as a number or
// a string; malformed ones are rejected; 64-bit ids never pass through a double.
func TestDecimalsAreExact(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{`"0.1"`, 0.1, false}, {`"66653.0"`, 66653, false}, {`"-0.0213"`, -0.0213, false},
		{`"1e-7"`, 1e-7, false}, {`5`, 5, false}, {`"0.30000000000000004"`, 0.30000000000000004, false},
		{`"0x10"`, 0, true}, {`"NaN"`, 0, true}, {`"inf"`, 0, true}, {`"1_000"`, 0, true}, {`""`, 0, true},
		{`"1e400"`, 0, true}, {`"."`, 0, true},
	} {
		var n num
		err := n.UnmarshalJSON([]byte(c.in))
		if (err != nil) != c.bad || (!c.bad && n.v != c.want) {
			t.Errorf("%s: got %v, %v; want %v (bad %v)", c.in, n.v, err, c.want, c.bad)
		}
	}
	var id integer
	if err := id.UnmarshalJSON([]byte("745210434703679123")); err != nil || id.v != 745210434703679123 {
		t.Fatalf("id %d %v", id.v, err)
	}
}

// TestMalformedFillLines: a missing required field or a bad number rejects the line
// with a reason; an unknown field is ignored.
func TestMalformedFillLines(t *testing.T) {
	good := `{"coin":"BTC","px":"1.5","sz":"2","side":"B","time":1775037600100,"startPosition":"0","dir":"Open Long","closedPnl":"0","hash":"0x01","oid":1,"crossed":true,"fee":"0.1","tid":7,"somethingNew":[1,2]}`
	for _, c := range []struct {
		name, line, want string
	}{
		{"ok", `{"block_number":1,"events":[["0xAB",` + good + `]]}`, ""},
		{"no tid", `{"block_number":1,"events":[["0xab",` + strings.Replace(good, `,"tid":7`, "", 1) + `]]}`, `missing required field "tid"`},
		{"bad px", `{"block_number":1,"events":[["0xab",` + strings.Replace(good, `"1.5"`, `"1,5"`, 1) + `]]}`, "not a decimal number"},
		{"bad side", `{"block_number":1,"events":[["0xab",` + strings.Replace(good, `"side":"B"`, `"side":"X"`, 1) + `]]}`, `side "X"`},
		{"no events", `{"block_number":1}`, "no events"},
		{"short event", `{"block_number":1,"events":[["0xab"]]}`, "want [user, fill]"},
		{"truncated", `{"block_number":1,"events":[["0xab",`, "unexpected end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fills, _, err := ParseNodeLine([]byte(c.line))
			if c.want == "" {
				if err != nil || len(fills) != 1 || fills[0].Wallet != "0xab" {
					t.Fatalf("%v %v", fills, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestFastPathAgreesWithReference: the hand scanner for node lines gives exactly the
// rows encoding/json gives, and gives up (leaving the reference decoder to read or
// reject the line) on what it does not handle: escapes, malformed input.
func TestFastPathAgreesWithReference(t *testing.T) {
	lines := readLines(t, "testdata/node_fills.jsonl")
	extra := []struct {
		line     string
		fastOK   bool
		slowFail bool
	}{
		{strings.Replace(lines[0], `"coin":"BTC"`, `"coin":"B\u0054C"`, 1), false, false},
		{strings.Replace(lines[0], `"px":"80000.0"`, `"px":80000.0`, 1), true, false},
		{strings.Replace(lines[0], `"crossed":true`, `"crossed":"yes"`, 1), false, true},
		{strings.Replace(lines[0], `"tid":1001`, `"tid":1001.5`, 1), false, true},
		{lines[0] + "x", false, true},
		{`{"block_number":1,"events":[]}`, true, false},
		{`{"events":[["0xab",{"coin":"BTC","liquidation":null,"px":"1","sz":"1","side":"A","time":1,"startPosition":"0","dir":"d","closedPnl":"0","hash":"0x1","oid":1,"crossed":false,"fee":"0","tid":1}]]}`, true, false},
	}
	for _, l := range lines {
		extra = append(extra, struct {
			line     string
			fastOK   bool
			slowFail bool
		}{l, true, false})
	}
	for i, c := range extra {
		ff, fs, ok := fastNodeLine([]byte(c.line), nil)
		sf, ss, err := parseNodeLineSlow([]byte(c.line))
		if ok != c.fastOK || (err != nil) != c.slowFail {
			t.Errorf("case %d: fast ok %v (want %v), slow error %v (want failure %v)", i, ok, c.fastOK, err, c.slowFail)
			continue
		}
		if ok && (!reflect.DeepEqual(ff, sf) || fs != ss) {
			t.Errorf("case %d: fast %v %d, reference %v %d", i, ff, fs, sf, ss)
		}
	}
}

// TestWebsocketDump: a dump of websocket messages (JSON lines) gives the fills of the
// user messages, takes the user from userFills messages, and counts the control
// messages as skipped.
func TestWebsocketDump(t *testing.T) {
	needSamples(t)
	liq, err := os.ReadFile(filepath.Join(samples, "ws_user_fill_liquidation.json"))
	if err != nil {
		t.Fatal(err)
	}
	const u = "0x00000000000000000000000000000000000000cd"
	userFills := strings.Replace(strings.TrimSpace(string(liq)), `{"channel":"user","data":{`, `{"channel":"userFills","data":{"isSnapshot":true,"user":"0x`+strings.ToUpper(u[2:])+`",`, 1)
	dump := `{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"userFills","user":"` + u + `"}}}` + "\n" +
		userFills + "\n" + `{"channel":"pong"}` + "\n"
	f := filepath.Join(t.TempDir(), "ws.jsonl")
	if err := os.WriteFile(f, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	p := parseFile(t, f, "fills", fileCtx{})
	if len(p.errs) > 0 || len(p.rows) != 1 || p.rows[0].Vals[1] != u {
		t.Fatalf("errors %v rows %v", p.errs, p.rows)
	}
	if !reflect.DeepEqual(p.skipped, []string{"websocket subscriptionResponse message", "websocket pong message"}) {
		t.Fatalf("skipped %v", p.skipped)
	}
}

// TestCandles: a candleSnapshot answer (its kind guessed from the content) gives one
// perpdex_candles row per closed candle, numbers exact; a candle still open when the
// answer was fetched is skipped; a websocket candle message is read the same way;
// missing or inconsistent fields reject the element.
func TestCandles(t *testing.T) {
	at := ms(1775210400000)
	p := parseFile(t, "testdata/candles_BTC_1h_1775210400000.json", "", fileCtx{at: at})
	if len(p.errs) > 0 {
		t.Fatal(p.errs)
	}
	row := func(start, end int64, o, h, l, c, v float64, n int64) Row {
		return Row{lake.PerpdexCandles, ms(start).Format(time.DateOnly), []any{ms(start), "BTC", "1h", ms(end), o, h, l, c, v, n}}
	}
	want := []Row{
		row(1775034000000, 1775037599999, 79800, 80010, 79750, 80000, 3.25, 12),
		row(1775037600000, 1775041199999, 80000, 80100.5, 79900, 80050, 12.5, 40),
		row(1775044800000, 1775048399999, 82000, 82000, 82000, 82000, 0.5, 1),
	}
	if !reflect.DeepEqual(p.rows, want) {
		t.Errorf("rows\n got %v\nwant %v", p.rows, want)
	}
	if !reflect.DeepEqual(p.skipped, []string{"candle not closed when fetched"}) {
		t.Errorf("skipped %v", p.skipped)
	}
	// Without a fetch time every candle is stored (the open one too: a later answer
	// replaces it on its key).
	if p := parseFile(t, "testdata/candles_BTC_1h_1775210400000.json", "candles", fileCtx{}); len(p.rows) != 4 || len(p.skipped) != 0 {
		t.Errorf("without a fetch time: %d rows, skipped %v", len(p.rows), p.skipped)
	}

	dir := t.TempDir()
	good := `{"t":1775034000000,"T":1775034059999,"s":"ETH","i":"1m","o":"1800.5","c":"1801","h":"1801.25","l":"1800","v":"0.1","n":3}`
	for _, c := range []struct{ name, body, err string }{
		{"ws", `{"channel":"candle","data":` + good + `}`, ""},
		{"no n", strings.Replace(good, `,"n":3`, "", 1), `missing required field "n"`},
		{"T before t", strings.Replace(good, `"T":1775034059999`, `"T":1775033999999`, 1), "before it starts"},
		{"high below close", strings.Replace(good, `"h":"1801.25"`, `"h":"1800.9"`, 1), "out of order"},
		{"bad number", strings.Replace(good, `"v":"0.1"`, `"v":"0,1"`, 1), "not a decimal"},
	} {
		f := filepath.Join(dir, c.name+".json")
		if err := os.WriteFile(f, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		p := parseFile(t, f, "candles", fileCtx{})
		if c.err == "" {
			if len(p.errs) > 0 || len(p.rows) != 1 || p.rows[0].Vals[2] != "1m" || p.rows[0].Vals[4] != 1800.5 || p.rows[0].Vals[9] != int64(3) {
				t.Errorf("%s: %v %v", c.name, p.rows, p.errs)
			}
			continue
		}
		if len(p.errs) != 1 || !strings.Contains(p.errs[0], c.err) {
			t.Errorf("%s: errors %v, want %q", c.name, p.errs, c.err)
		}
	}
}
