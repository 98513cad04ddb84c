package predmkt

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"mdq/lake"
)

// wsServer is a local market channel on 127.0.0.1: each connection plays the next
// script. It checks the subscription and answers PING with PONG unless frozen.
type wsServer struct {
	t       *testing.T
	srv     *httptest.Server
	conns   atomic.Int32
	scripts []func(c *websocket.Conn)
	subs    chan string
	wg      sync.WaitGroup
}

func newWSServer(t *testing.T, scripts ...func(c *websocket.Conn)) *wsServer {
	s := &wsServer{t: t, scripts: scripts, subs: make(chan string, 16)}
	up := websocket.Upgrader{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		s.wg.Add(1)
		defer s.wg.Done()
		defer c.Close()
		_, sub, err := c.ReadMessage()
		if err != nil {
			return
		}
		s.subs <- string(sub)
		i := int(s.conns.Add(1)) - 1
		if i < len(s.scripts) {
			s.scripts[i](c)
		} else {
			pong(c)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *wsServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") }

// pong answers keep-alives until the client goes.
func pong(c *websocket.Conn) {
	for {
		_, m, err := c.ReadMessage()
		if err != nil {
			return
		}
		if string(m) == "PING" {
			c.WriteMessage(websocket.TextMessage, []byte("PONG")) //nolint:errcheck
		}
	}
}

// freeze reads and ignores everything (no PONG): a stream that went silent without
// closing.
func freeze(c *websocket.Conn) {
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
	}
}

func send(c *websocket.Conn, frames ...string) {
	for _, f := range frames {
		c.WriteMessage(websocket.TextMessage, []byte(f)) //nolint:errcheck
	}
}

func bookMsg(tok string, ts int64) string {
	return fmt.Sprintf(`{"event_type":"book","asset_id":"%s","market":"0x01","timestamp":"%d","bids":[{"price":"0.40","size":"10"}],"asks":[{"price":"0.60","size":"10"}]}`, tok, ts)
}

func tradeMsg(tok string, ts int64) string {
	return fmt.Sprintf(`{"event_type":"last_trade_price","asset_id":"%s","market":"0x01","timestamp":"%d","price":"0.60","side":"BUY","size":"1"}`, tok, ts)
}

func pcMsg(tok string, ts int64) string {
	return fmt.Sprintf(`{"event_type":"price_change","market":"0x01","timestamp":"%d","price_changes":[{"asset_id":"%s","price":"0.41","side":"BUY","size":"5","best_bid":"0.41","best_ask":"0.6"}]}`, ts, tok)
}

// waitFor polls cond for at most 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// tapeTypes lists a token's rows in tape order as "type" or "status:<marker>".
func tapeTypes(t *testing.T, dir, tok string) []string {
	t.Helper()
	files, _ := lake.PredmktBookEvents.Files(dir)
	if len(files) == 0 {
		return nil
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	rows, err := db.Query(`SELECT event_type, status FROM read_parquet(?) WHERE token_id = ? ORDER BY local_ts, seq`, files, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ, st string
		rows.Scan(&typ, &st) //nolint:errcheck
		if st != "" {
			typ += ":" + st
		}
		out = append(out, typ)
	}
	return out
}

// TestRecorderReplay: against a local server that replays a capture, drops the
// connection, freezes without closing, sends a malformed frame, an array frame and a
// pretty-printed one: the lake holds the rows, with connected, gap_start and live_resume markers
// where they belong; SIGTERM (ctx cancelled) mid-stream loses nothing received; and
// ingesting the recorder's capture later gives the same rows.
func TestRecorderReplay(t *testing.T) {
	const ts = 1773050400000
	srv := newWSServer(t,
		func(c *websocket.Conn) { // replays, with a malformed frame, then drops
			send(c, "["+bookMsg("1001", ts)+","+bookMsg("1002", ts)+"]", pcMsg("1001", ts+1), "{oops", tradeMsg("1001", ts+2))
		},
		func(c *websocket.Conn) { // resumes, then freezes without closing
			send(c, bookMsg("1001", ts+10), tradeMsg("1001", ts+11))
			freeze(c)
		},
		func(c *websocket.Conn) { // live again: a pretty-printed frame, then keeps alive
			send(c, strings.Replace(bookMsg("1001", ts+20), ",", ",\n  ", -1), bookMsg("1002", ts+20), pcMsg("1001", ts+21))
			pong(c)
		},
	)
	dir := t.TempDir()
	var flushed atomic.Int32
	rec, err := NewRecorder(RecorderConfig{Root: dir, WS: srv.url(), Assets: []string{"1001", "1002"},
		Ping: 50 * time.Millisecond, Silence: 400 * time.Millisecond, BackoffLo: 20 * time.Millisecond, BackoffHi: 100 * time.Millisecond,
		Flushed: func(context.Context, string, *Result) error { flushed.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	waitFor(t, "9 frames over 3 connections", func() bool { s := rec.Stats(); return s.Received == 9 && s.Connections == 3 })
	cancel() // SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("recorder did not stop")
	}
	for i := 0; i < 3; i++ { // every connection re-subscribes
		if sub := <-srv.subs; !strings.Contains(sub, `"assets_ids":["1001","1002"]`) || !strings.Contains(sub, `"type":"market"`) {
			t.Errorf("subscription %d: %s", i+1, sub)
		}
	}
	if s := rec.Stats(); s.Bad != 1 || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
	want1001 := []string{"status:connected", "book", "price_change", "trade", "status:gap_start",
		"status:connected", "status:live_resume", "book", "trade", "status:gap_start",
		"status:connected", "status:live_resume", "book", "price_change"}
	want1002 := []string{"status:connected", "book", "status:gap_start", "status:connected", "status:gap_start",
		"status:connected", "status:live_resume", "book"}
	if got := tapeTypes(t, dir, "1001"); fmt.Sprint(got) != fmt.Sprint(want1001) {
		t.Errorf("1001 tape\n got %v\nwant %v", got, want1001)
	}
	if got := tapeTypes(t, dir, "1002"); fmt.Sprint(got) != fmt.Sprint(want1002) {
		t.Errorf("1002 tape\n got %v\nwant %v", got, want1002)
	}
	segs := rec.Segments()
	if len(segs) == 0 || int(flushed.Load()) != len(segs) {
		t.Fatalf("segments %v, flushed %d", segs, flushed.Load())
	}
	// The capture, ingested later by mdq ingest's loader, gives the same rows.
	later := t.TempDir()
	ingestOK(t, later, segs, Options{})
	if a, b := tableRows(t, dir, lake.PredmktBookEvents), tableRows(t, later, lake.PredmktBookEvents); fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 22 {
		t.Errorf("capture ingested later differs (%d rows vs %d)", len(b), len(a))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "capture", "predmkt", "market-*.jsonl")); len(m) != len(segs) {
		t.Errorf("capture files %v", m)
	}
}

// TestRecorderOverflow: a disk slower than the stream never blocks the socket: the
// bounded buffer overflows, the frames lost are counted and a gap is recorded at the
// first loss, and the recorder carries on.
func TestRecorderOverflow(t *testing.T) {
	const ts = 1773050400000
	const n = 50
	srv := newWSServer(t, func(c *websocket.Conn) {
		send(c, bookMsg("1001", ts))
		for i := 1; i < n; i++ {
			send(c, tradeMsg("1001", ts+int64(i)))
		}
		pong(c)
	})
	gate := make(chan struct{})
	var once sync.Once
	dir := t.TempDir()
	rec, err := NewRecorder(RecorderConfig{Root: dir, WS: srv.url(), Assets: []string{"1001"}, Buffer: 4,
		Ping: 50 * time.Millisecond, Silence: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec.cfg.writeGate = func() { <-gate } // the disk stalls until every frame has arrived
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	waitFor(t, "every frame received", func() bool { return rec.Stats().Received == n })
	once.Do(func() { close(gate) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := rec.Stats()
	if s.Dropped == 0 || s.Dropped+s.Written < n {
		t.Fatalf("stats %+v", s)
	}
	got := tapeTypes(t, dir, "1001")
	gaps := 0
	for _, g := range got {
		if g == "status:gap_start" {
			gaps++
		}
	}
	if gaps != 1 || int64(len(got)) != s.Written {
		t.Errorf("tape %v (written %d)", got, s.Written)
	}
}

// TestRecorderRotation: segments close on the rotate boundary and are flushed one by
// one; each begins with the replayed books (book_state), so the lake the flushes made,
// the capture ingested later in one run, and the segments ingested one at a time all
// hold the same rows, best quotes included.
func TestRecorderRotation(t *testing.T) {
	const ts = 1773050400000
	srv := newWSServer(t, func(c *websocket.Conn) {
		send(c, strings.Replace(bookMsg("1001", ts), `"0.60","size":"10"`, `"0.60","size":"1000"`, 1))
		for i := 1; i <= 40; i++ {
			send(c, tradeMsg("1001", ts+int64(i)))
			time.Sleep(15 * time.Millisecond)
		}
		pong(c)
	})
	dir := t.TempDir()
	rec, err := NewRecorder(RecorderConfig{Root: dir, WS: srv.url(), Assets: []string{"1001"},
		Ping: 50 * time.Millisecond, Silence: 2 * time.Second, Rotate: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	waitFor(t, "41 frames", func() bool { return rec.Stats().Received == 41 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	segs := rec.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	want := tableRows(t, dir, lake.PredmktBookEvents)
	if len(want) != 42 {
		t.Fatalf("%d rows", len(want))
	}
	for _, r := range want {
		// every trade takes 1 share off 1,000 at 0.60: the ask stays 0.6 and the bid 0.4
		if strings.HasPrefix(r, "trade|") && !strings.Contains(r, "|0.4|0.6|") {
			t.Errorf("trade without its replayed best quotes: %s", r)
		}
	}
	whole, oneByOne := t.TempDir(), t.TempDir()
	ingestOK(t, whole, segs, Options{})
	for _, s := range segs {
		ingestOK(t, oneByOne, []string{s}, Options{})
	}
	if a, b := tableRows(t, whole, lake.PredmktBookEvents), tableRows(t, oneByOne, lake.PredmktBookEvents); fmt.Sprint(a) != fmt.Sprint(want) || fmt.Sprint(b) != fmt.Sprint(want) {
		t.Errorf("recorder, whole capture and segment by segment differ")
	}
}

// TestRecorderSplitMillisecond: when the writer closes a segment on the clock while
// frames received in the same millisecond as its last line are still queued (a busy
// disk), the next segment starts in that millisecond. Its book_state line carries the
// token's last seq, so ingesting the segments one at a time numbers the events as the
// whole capture does; without it the book took the status row's key and replaced it
// (the CI failure of TestRecorderRotation, 41 rows of 42). Such a segment takes the
// next free name, after the first in name order (it used to stop the recorder with
// "file exists").
func TestRecorderSplitMillisecond(t *testing.T) {
	const ts = 1773050400050
	dir := t.TempDir()
	rec, err := NewRecorder(RecorderConfig{Root: dir, WS: "ws://127.0.0.1:1", Assets: []string{"1001"},
		Rotate: 100 * time.Millisecond, Now: func() time.Time { return time.UnixMilli(ts + 1000) }})
	if err != nil {
		t.Fatal(err)
	}
	rec.items <- item2{local: ts, status: StatusConnected}
	rec.items <- item2{local: ts, frame: []byte(bookMsg("1001", ts))}
	rec.items <- item2{local: ts, frame: []byte(tradeMsg("1001", ts))}
	close(rec.items)
	segs := make(chan string, 8)
	if err := rec.writer(segs); err != nil {
		t.Fatal(err)
	}
	var files []string
	for s := range segs {
		files = append(files, s)
	}
	if len(files) != 3 || !sort.StringsAreSorted(files) {
		t.Fatalf("the clock closes a segment after each line, named in order: %q", files)
	}
	whole, oneByOne := t.TempDir(), t.TempDir()
	ingestOK(t, whole, files, Options{})
	for _, f := range files {
		ingestOK(t, oneByOne, []string{f}, Options{})
	}
	a, b := tableRows(t, whole, lake.PredmktBookEvents), tableRows(t, oneByOne, lake.PredmktBookEvents)
	if len(a) != 3 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("whole capture:\n%s\nsegment by segment:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}
