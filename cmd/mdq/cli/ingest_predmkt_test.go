package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"mdq/handlers"
	"mdq/query"
)

// The fixtures of ingest/predmkt, read here by the oracle as plain JSON.
var pmFixtureDir = filepath.Join("..", "..", "..", "ingest", "predmkt", "testdata")

func pmFixtures() []string {
	var out []string
	for _, f := range []string{"gamma_events.json", "gamma_market_btc.json", "tape_day1.jsonl", "tape_day2.jsonl", "fills.jsonl", "order_filled.jsonl"} {
		out = append(out, filepath.Join(pmFixtureDir, f))
	}
	return out
}

// pmMsg is one market-channel message as the oracle reads it: a plain map.
type pmMsg struct {
	local int64
	m     map[string]any
}

// pmOracleTape reads the capture fixtures line by line without the ingest package.
func pmOracleTape(t *testing.T) []pmMsg {
	var out []pmMsg
	for _, f := range []string{"tape_day1.jsonl", "tape_day2.jsonl"} {
		b, err := os.ReadFile(filepath.Join(pmFixtureDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			sp := strings.IndexByte(line, ' ')
			local, _ := strconv.ParseInt(line[:sp], 10, 64)
			var v any
			if err := json.Unmarshal([]byte(line[sp+1:]), &v); err != nil {
				t.Fatal(err)
			}
			if arr, ok := v.([]any); ok {
				for _, x := range arr {
					out = append(out, pmMsg{local, x.(map[string]any)})
				}
			} else {
				out = append(out, pmMsg{local, v.(map[string]any)})
			}
		}
	}
	return out
}

func pmNum(v any) float64 {
	switch x := v.(type) {
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	case float64:
		return x
	}
	return 0
}

type pmOracleFill struct {
	wallet, side, asset, cond, role string
	price, size                     float64
	sec                             int64
}

func pmOracleFills(t *testing.T) []pmOracleFill {
	var out []pmOracleFill
	b, _ := os.ReadFile(filepath.Join(pmFixtureDir, "fills.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		role, _ := m["role"].(string)
		if role == "" {
			role = "taker"
		}
		out = append(out, pmOracleFill{strings.ToLower(m["proxyWallet"].(string)), m["side"].(string), m["asset"].(string),
			m["conditionId"].(string), role, pmNum(m["price"]), pmNum(m["size"]), int64(pmNum(m["timestamp"]))})
	}
	// OrderFilled: the maker gives makerAmount of makerAsset; asset 0 is USDC (6 decimals).
	b, _ = os.ReadFile(filepath.Join(pmFixtureDir, "order_filled.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]string
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(m["taker"], "0x4bfb41d5b3570defd03c39a9a4d8de6bd8b8982e") {
			continue
		}
		ma, ta := pmNum(m["makerAmountFilled"])/1e6, pmNum(m["takerAmountFilled"])/1e6
		sec := int64(pmNum(m["timestamp"]))
		if m["makerAssetId"] == "0" {
			out = append(out, pmOracleFill{strings.ToLower(m["maker"]), "BUY", m["takerAssetId"], "", "maker", ma / ta, ta, sec},
				pmOracleFill{strings.ToLower(m["taker"]), "SELL", m["takerAssetId"], "", "taker", ma / ta, ta, sec})
		} else {
			out = append(out, pmOracleFill{strings.ToLower(m["maker"]), "SELL", m["makerAssetId"], "", "maker", ta / ma, ma, sec},
				pmOracleFill{strings.ToLower(m["taker"]), "BUY", m["makerAssetId"], "", "taker", ta / ma, ma, sec})
		}
	}
	return out
}

func pmGet(t *testing.T, base, path string, v any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
}

// TestIngestPredmktServesRoutes: `mdq ingest predmkt` of the fixtures into an empty
// directory makes a lake every /v1/predmkt route answers from over real HTTP on
// loopback, with figures equal to a plain-Go oracle over the raw fixture files: the
// tape (events), the book at a time (orderbook), candles (ohlcv) and realized PnL
// (leaderboard).
func TestIngestPredmktServesRoutes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	clock := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
	code, out, errs := run(t, append([]string{"ingest", "predmkt", "--data", dir, "--clock", clock.Format(time.RFC3339)}, pmFixtures()...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "predmkt: read 33, written 48, deduplicated 0, rejected 0") || !strings.Contains(out, "predmkt board for 2026-03-11T00:00:00Z") {
		t.Fatalf("output: %s", out)
	}
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	srv := httptest.NewServer((&handlers.API{Q: q}).Handler())
	defer srv.Close()
	tape := pmOracleTape(t)
	const tok = "1001"
	t0 := int64(1773050400000)

	// events: every row of the token in the window, in (local_ts, seq) order, types
	// and prices as the messages say.
	type oev struct {
		typ   string
		local int64
		price float64
	}
	var want []oev
	for _, m := range tape {
		typ, _ := m.m["event_type"].(string)
		switch typ {
		case "book", "last_trade_price", "tick_size_change":
			if m.m["asset_id"] == tok {
				p := pmNum(m.m["price"])
				if typ == "tick_size_change" {
					p = pmNum(m.m["new_tick_size"])
				}
				want = append(want, oev{map[string]string{"book": "book", "last_trade_price": "trade", "tick_size_change": "tick_size_change"}[typ], m.local, p})
			}
		case "price_change":
			chs, _ := m.m["price_changes"].([]any)
			if chs == nil {
				chs, _ = m.m["changes"].([]any)
			}
			for _, c := range chs {
				cm := c.(map[string]any)
				if a, ok := cm["asset_id"]; (ok && a == tok) || (!ok && m.m["asset_id"] == tok) {
					want = append(want, oev{"price_change", m.local, pmNum(cm["price"])})
				}
			}
		case "status":
			for _, a := range m.m["assets_ids"].([]any) {
				if a == tok {
					want = append(want, oev{"status", m.local, 0})
				}
			}
		}
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].local < want[j].local })
	var page struct {
		Events []struct {
			EventType string  `json:"event_type"`
			LocalTS   int64   `json:"local_ts"`
			Seq       int64   `json:"seq"`
			Price     float64 `json:"price"`
		} `json:"events"`
		HasMore bool `json:"has_more"`
	}
	pmGet(t, srv.URL, fmt.Sprintf("/v1/predmkt/events?token_id=%s&from_ms=%d&to_ms=%d", tok, t0, t0+86_400_000), &page)
	if len(page.Events) != len(want) || page.HasMore {
		t.Fatalf("events: %d rows, oracle %d", len(page.Events), len(want))
	}
	for i, e := range page.Events {
		if e.EventType != want[i].typ || e.LocalTS != want[i].local || e.Price != want[i].price || (i > 0 && e.Seq <= page.Events[i-1].Seq) {
			t.Errorf("event %d: %+v, oracle %+v", i, e, want[i])
		}
	}

	// orderbook at a time: the last book message at or before it, best first.
	at := t0 + 700_000
	var snap map[string]any
	for _, m := range tape {
		if m.m["event_type"] == "book" && m.m["asset_id"] == tok && int64(pmNum(m.m["timestamp"])) <= at {
			snap = m.m
		}
	}
	type orow struct {
		AsOf  int64   `json:"as_of_ts"`
		Side  string  `json:"side"`
		Level int     `json:"level"`
		Price float64 `json:"price"`
		Size  float64 `json:"size"`
	}
	var wantBook []orow
	for _, side := range []string{"bids", "asks"} {
		var lv []orow
		for _, l := range snap[side].([]any) {
			lm := l.(map[string]any)
			lv = append(lv, orow{int64(pmNum(snap["timestamp"])), strings.TrimSuffix(side, "s"), 0, pmNum(lm["price"]), pmNum(lm["size"])})
		}
		sort.Slice(lv, func(i, j int) bool { return (lv[i].Price > lv[j].Price) == (side == "bids") })
		for i := range lv {
			lv[i].Level = i + 1
		}
		wantBook = append(wantBook, lv...)
	}
	var book []orow
	pmGet(t, srv.URL, fmt.Sprintf("/v1/predmkt/orderbook?token_id=%s&ts=%d", tok, at), &book)
	if fmt.Sprint(book) != fmt.Sprint(wantBook) {
		t.Errorf("orderbook\n got %v\nwant %v", book, wantBook)
	}

	// ohlcv 1h: taker fills of the token per hour, ordered by time.
	fills := pmOracleFills(t)
	type bar struct {
		TS                             int64
		Open, High, Low, Close, Volume float64
		Trades                         int64
	}
	bars := map[int64]*bar{}
	var keys []int64
	for _, f := range fills {
		if f.asset != tok || f.role != "taker" {
			continue
		}
		h := f.sec * 1000 / 3_600_000 * 3_600_000
		b := bars[h]
		if b == nil {
			b = &bar{TS: h, Open: f.price, High: f.price, Low: f.price}
			bars[h] = b
			keys = append(keys, h)
		}
		b.High, b.Low, b.Close = math.Max(b.High, f.price), math.Min(b.Low, f.price), f.price
		b.Volume += f.size
		b.Trades++
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var wantBars []bar
	for _, k := range keys {
		wantBars = append(wantBars, *bars[k])
	}
	var gotBars []bar
	pmGet(t, srv.URL, "/v1/predmkt/ohlcv?token_id="+tok+"&interval=1h", &gotBars)
	if len(wantBars) != 3 || fmt.Sprint(gotBars) != fmt.Sprint(wantBars) {
		t.Errorf("ohlcv\n got %v\nwant %v", gotBars, wantBars)
	}

	// leaderboard: realized PnL per wallet on validly resolved markets (from the Gamma
	// fixture: M1 Yes won, M4 the second outcome won, M2 was 50/50 and pays nothing).
	winner := map[string]string{"1001": "win", "1002": "lose", "4001": "lose", "4002": "win"}
	pnl := map[string]float64{}
	for _, f := range fills {
		pnl[f.wallet] += 0 // every wallet that traded is listed
		w, ok := winner[f.asset]
		if !ok {
			continue
		}
		sign := 1.0
		if f.side == "BUY" {
			sign = -1
		}
		pnl[f.wallet] += sign * f.price * f.size
		if w == "win" {
			pnl[f.wallet] -= sign * f.size
		}
	}
	var board []struct {
		Wallet string  `json:"proxy_wallet"`
		PnL    float64 `json:"realized_pnl_usd"`
	}
	pmGet(t, srv.URL, "/v1/predmkt/leaderboard?min_resolved=0&limit=50", &board)
	if len(board) != len(pnl) {
		t.Errorf("leaderboard: %d wallets, oracle %d", len(board), len(pnl))
	}
	for _, r := range board {
		if want := math.Round(pnl[r.Wallet]*100) / 100; math.Abs(r.PnL-want) > 0.001 {
			t.Errorf("%s: realized PnL %v, oracle %v", r.Wallet, r.PnL, want)
		}
	}
	if len(board) > 0 && board[0].Wallet != "0x1111111111111111111111111111111111111111" {
		t.Errorf("top wallet %s", board[0].Wallet)
	}

	// Every other route of the area answers 200 on the ingested lake, with the
	// examples' ids swapped for the fixtures' (market M1, wallet W1, token 1001).
	subst := map[string]string{"condition_id": "0x" + strings.Repeat("a1", 32), "address": "0x" + strings.Repeat("1", 40),
		"token_id": tok, "token_ids": tok, "from_ms": fmt.Sprint(t0), "to_ms": fmt.Sprint(t0 + 3_600_000)}
	served := 0
	for _, rt := range handlers.Routes() {
		if rt.Area != "predmkt" || rt.Method != "GET" {
			continue
		}
		qv, _, _, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			t.Errorf("%s: no example for %s", rt.Path, missing)
			continue
		}
		path := rt.Path
		for _, p := range rt.Params {
			if v, ok := subst[p.Name]; ok {
				if p.In == "path" {
					path = strings.ReplaceAll(path, "{"+p.Name+"}", v)
				} else if qv.Has(p.Name) {
					qv.Set(p.Name, v)
				}
			}
		}
		resp, err := http.Get(srv.URL + path + "?" + qv.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s?%s: %d %s", path, qv.Encode(), resp.StatusCode, body)
		}
		served++
	}
	if served < 8 {
		t.Errorf("only %d predmkt routes served", served)
	}
}

// TestIngestPredmktBadFileExits: a corrupt file fails the command with FILE:LINE on
// stderr, the good file of the batch is written, and the exit code says so.
func TestIngestPredmktBadFileExits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`1773133200100 {"event_type":"book","asset_id":"1001","timestamp":"1773133200100","bids":[{"price":"0.4","size":"x"}],"asks":[]}`+"\n"), 0o644) //nolint:errcheck
	code, out, errs := run(t, "ingest", "predmkt", "--data", dir, "--clock", "2026-03-11T00:00:00Z", bad, filepath.Join(pmFixtureDir, "tape_day1.jsonl"))
	if code == 0 || !strings.Contains(errs, bad+":1: book bids: level 1 size:") || !strings.Contains(errs, "not written (malformed lines above): "+bad) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "rejected 1") {
		t.Fatalf("summary: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "archive", "venue=predmkt", "date=2026-03-09", "book_events.parquet")); err != nil {
		t.Fatalf("the good file was not written: %v", err)
	}
}

// TestRecordPredmktSIGTERM: `mdq record predmkt` (a real process) records a local
// market channel on 127.0.0.1 that streams without pause; SIGTERM mid-stream flushes
// every frame received into the lake (the frames it reports equal the tape rows) and
// exits 0.
func TestRecordPredmktSIGTERM(t *testing.T) {
	up := websocket.Upgrader{}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
		go func() { // answer keep-alives
			for {
				_, m, err := c.ReadMessage()
				if err != nil {
					return
				}
				_ = m
			}
		}()
		ts := int64(1773050400000)
		c.WriteMessage(websocket.TextMessage, []byte(`{"event_type":"book","asset_id":"1001","market":"0x01","timestamp":"`+fmt.Sprint(ts)+`","bids":[{"price":"0.4","size":"1000000"}],"asks":[{"price":"0.6","size":"1000000"}]}`)) //nolint:errcheck
		for i := 1; i < 200_000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			msg := fmt.Sprintf(`{"event_type":"last_trade_price","asset_id":"1001","market":"0x01","timestamp":"%d","price":"0.6","side":"BUY","size":"1"}`, ts+int64(i))
			if c.WriteMessage(websocket.TextMessage, []byte(msg)) != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}))
	defer srv.Close()
	defer close(stop)
	dir := filepath.Join(t.TempDir(), "lake")
	var stderr strings.Builder
	cmd := exec.Command(mdqBinary(t), "record", "predmkt", "--data", dir, "--ws", "ws"+strings.TrimPrefix(srv.URL, "http"), "--markets", "1001")
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck
	// Wait for a few hundred lines in the capture, then SIGTERM.
	for i := 0; ; i++ {
		m, _ := filepath.Glob(filepath.Join(dir, "capture", "predmkt", "market-*.jsonl"))
		if len(m) > 0 {
			if b, _ := os.ReadFile(m[0]); strings.Count(string(b), "\n") > 300 {
				break
			}
		}
		if i > 3000 {
			t.Fatalf("no capture: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("recorder did not stop on SIGTERM")
	}
	var conns, received, written, lost, bad int64
	line := stdout.String()[strings.LastIndex(stdout.String(), "record predmkt:"):]
	if _, err := fmt.Sscanf(line, "record predmkt: %d connections, %d frames received, %d lines written, %d lost to a full buffer, %d malformed",
		&conns, &received, &written, &lost, &bad); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	q, err := query.Open(context.Background(), dir, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var rows, status int64
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT count(*) FILTER (WHERE event_type <> 'status'), count(*) FILTER (WHERE event_type = 'status') FROM predmkt_book_events").Scan(&rows, &status); err != nil {
		t.Fatal(err)
	}
	if received < 300 || rows != received || lost != 0 || status != 1 || written != received+1 {
		t.Fatalf("received %d, lost %d, written %d; lake holds %d tape rows and %d status rows\n%s", received, lost, written, rows, status, stderr.String())
	}
}
