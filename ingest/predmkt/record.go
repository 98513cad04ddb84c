package predmkt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// RecorderConfig configures Record.
type RecorderConfig struct {
	Root       string   // the lake
	CaptureDir string   // where capture segments are kept (default <Root>/capture/predmkt)
	WS         string   // market channel URL (wss://.../ws/market)
	Assets     []string // outcome tokens to subscribe to

	Ping      time.Duration // keep-alive PING period (default 10 s)
	Silence   time.Duration // no frame (not even PONG) for this long is a gap (default 30 s)
	Rotate    time.Duration // segment length: flushed to the lake at each boundary (default 1 h, on the hour)
	Buffer    int           // frames held between the socket and the disk (default 65,536)
	BackoffLo time.Duration // first reconnect delay (default 500 ms), doubled per failure
	BackoffHi time.Duration // reconnect delay cap (default 30 s)

	// Flushed is called after each segment is in the lake (the CLI refreshes the
	// archive manifest and derived tables there); Log gets one line per event of note.
	Flushed func(ctx context.Context, segment string, res *Result) error
	Log     io.Writer
	Now     func() time.Time

	writeGate func() // tests: called before each write, to act a slow disk
}

// Recorder captures the market channel: frames go from the socket to a bounded
// buffer to the current capture segment (`<receive ms> <frame>` lines, the format
// `mdq ingest predmkt` reads), and each closed segment is ingested into the lake by
// the same loader as `mdq ingest`, so ingesting the capture later gives the same rows.
type Recorder struct {
	cfg      RecorderConfig
	items    chan item2
	received atomic.Int64 // frames received from the socket
	written  atomic.Int64 // lines written to segments
	dropped  atomic.Int64 // frames lost to a full buffer
	dropAt   int64        // receive time of the first frame lost since the last gap marker (reader only)
	bad      atomic.Int64 // frames that were not JSON (not written)
	conns    atomic.Int64 // connections opened

	flushMu  sync.Mutex
	segments []string // segments flushed, in order
	flushErr error
}

// item2 is one line for the capture: a received frame or a status marker.
type item2 struct {
	local  int64
	frame  []byte
	status string
}

// NewRecorder checks cfg and fills its defaults.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if cfg.WS == "" {
		return nil, errors.New("--ws is required")
	}
	if len(cfg.Assets) == 0 {
		return nil, errors.New("no asset to subscribe to")
	}
	for _, a := range cfg.Assets {
		if err := checkToken(a); err != nil {
			return nil, err
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Ping, 10*time.Second)
	def(&cfg.Silence, 30*time.Second)
	def(&cfg.Rotate, time.Hour)
	def(&cfg.BackoffLo, 500*time.Millisecond)
	def(&cfg.BackoffHi, 30*time.Second)
	if cfg.Buffer <= 0 {
		cfg.Buffer = 65536
	}
	if cfg.CaptureDir == "" {
		cfg.CaptureDir = filepath.Join(cfg.Root, "capture", "predmkt")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if err := os.MkdirAll(cfg.CaptureDir, 0o755); err != nil {
		return nil, err
	}
	return &Recorder{cfg: cfg, items: make(chan item2, cfg.Buffer)}, nil
}

// Stats are the recorder's counters.
type Stats struct{ Received, Written, Dropped, Bad, Connections int64 }

// Stats returns the counters so far.
func (r *Recorder) Stats() Stats {
	return Stats{r.received.Load(), r.written.Load(), r.dropped.Load(), r.bad.Load(), r.conns.Load()}
}

// Segments returns the segments flushed so far.
func (r *Recorder) Segments() []string {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return append([]string(nil), r.segments...)
}

func (r *Recorder) logf(format string, a ...any) {
	fmt.Fprintf(r.cfg.Log, "record predmkt: "+format+"\n", a...)
}

// Run records until ctx ends (SIGTERM), then writes what was received, flushes the
// last segment and returns. A flush error is returned after everything is written.
func (r *Recorder) Run(ctx context.Context) error {
	segs := make(chan string, 1024)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.flusher(segs) }()
	writeErr := make(chan error, 1)
	go func() { defer wg.Done(); writeErr <- r.writer(segs) }()
	r.reader(ctx)
	if r.dropAt != 0 {
		r.items <- item2{local: r.dropAt, status: StatusGapStart} // the writer is draining: this cannot stall
	}
	close(r.items) // the reader is the only sender
	err := <-writeErr
	wg.Wait()
	if err != nil {
		return err
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.flushErr
}

// enqueue hands an item to the writer without ever blocking the socket: a full
// buffer drops the frame and remembers when; the next item that fits is preceded by a
// gap marker at that time (so the marker sits after what was received before the loss).
func (r *Recorder) enqueue(it item2) {
	if r.dropAt != 0 {
		select {
		case r.items <- item2{local: r.dropAt, status: StatusGapStart}:
			r.dropAt = 0
		default:
			r.dropped.Add(1)
			return
		}
	}
	select {
	case r.items <- it:
	default:
		r.dropped.Add(1)
		r.dropAt = it.local
	}
}

// reader connects, subscribes, pings and reads until ctx ends, reconnecting with
// capped exponential backoff; a drop or a silence is a gap.
func (r *Recorder) reader(ctx context.Context) {
	backoff := r.cfg.BackoffLo
	for ctx.Err() == nil {
		got, err := r.session(ctx)
		now := r.cfg.Now().UnixMilli()
		if ctx.Err() != nil {
			return
		}
		if r.conns.Load() > 0 && got >= 0 {
			r.enqueue(item2{local: now, status: StatusGapStart})
		}
		r.logf("stream lost (%v); reconnecting in %s", err, backoff)
		if got > 0 {
			backoff = r.cfg.BackoffLo // the connection worked: start over
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if got <= 0 {
			backoff = min(backoff*2, r.cfg.BackoffHi)
		}
	}
}

// session runs one connection; it returns the frames read (-1 when it never
// connected) and why it ended.
func (r *Recorder) session(ctx context.Context) (int64, error) {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := dialer.DialContext(ctx, r.cfg.WS, http.Header{})
	if err != nil {
		return -1, err
	}
	defer conn.Close()
	sub, _ := json.Marshal(map[string]any{"assets_ids": r.cfg.Assets, "type": "market"})
	if err := conn.WriteMessage(websocket.TextMessage, sub); err != nil {
		return 0, err
	}
	r.conns.Add(1)
	r.enqueue(item2{local: r.cfg.Now().UnixMilli(), status: StatusConnected})
	r.logf("connected to %s, %d assets", r.cfg.WS, len(r.cfg.Assets))
	// Closing the connection is how the pinger and ctx stop a blocked read.
	done := make(chan struct{})
	defer close(done)
	var wmu sync.Mutex
	go func() {
		t := time.NewTicker(r.cfg.Ping)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				conn.Close()
				return
			case <-t.C:
				wmu.Lock()
				conn.SetWriteDeadline(time.Now().Add(r.cfg.Ping)) //nolint:errcheck
				err := conn.WriteMessage(websocket.TextMessage, []byte("PING"))
				wmu.Unlock()
				if err != nil {
					conn.Close()
					return
				}
			}
		}
	}()
	var n int64
	for {
		conn.SetReadDeadline(time.Now().Add(r.cfg.Silence)) //nolint:errcheck
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return n, err
		}
		local := r.cfg.Now().UnixMilli()
		msg = bytes.TrimSpace(msg)
		if len(msg) == 0 || (msg[0] != '{' && msg[0] != '[') {
			continue // PONG and other keep-alive text
		}
		n++
		r.received.Add(1)
		r.enqueue(item2{local: local, frame: msg})
	}
}

// writer appends items to the current segment, marks gaps (buffer overflow) and
// resyncs (the first book of each token after a gap), and rotates segments at each
// Rotate boundary, handing closed segments to the flusher.
func (r *Recorder) writer(segs chan<- string) error {
	defer close(segs)
	var (
		f       *os.File
		w       *bufio.Writer
		name    string
		segEnd  int64
		pending = map[string]bool{} // tokens waiting for their first book after a gap
		buf     []byte
		gapped  bool
		tape    = NewTape() // replays the books and seq, for the book_state lines of each segment
	)
	closeSeg := func() error {
		if f == nil {
			return nil
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		segs <- name
		f = nil
		return nil
	}
	open := func(local int64) error {
		rot := r.cfg.Rotate.Milliseconds()
		start := local / rot * rot
		segEnd = start + rot
		base := filepath.Join(r.cfg.CaptureDir, fmt.Sprintf("market-%s-%d",
			time.UnixMilli(start).UTC().Format("20060102T150405"), local))
		// A segment closed on the clock while lines of its last millisecond were still
		// queued is followed by one that begins in the same millisecond: it takes the
		// next free "_N" name, which sorts after the first ('_' after '.').
		var err error
		for n := 0; ; n++ {
			name = base + ".jsonl"
			if n > 0 {
				name = fmt.Sprintf("%s_%d.jsonl", base, n)
			}
			f, err = os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if !errors.Is(err, fs.ErrExist) {
				break
			}
		}
		if err != nil {
			return err
		}
		w = bufio.NewWriterSize(f, 1<<20)
		return nil
	}
	line := func(local int64, frame []byte) error {
		if f != nil && local >= segEnd {
			if err := closeSeg(); err != nil {
				return err
			}
		}
		if f == nil {
			if err := open(local); err != nil {
				return err
			}
			// The books replayed so far, so this segment ingested alone derives the
			// same best quotes as the whole capture (see Tape.seed).
			for _, st := range tape.BookStates() {
				buf = strconv.AppendInt(buf[:0], local, 10)
				buf = append(buf, ' ')
				buf = append(buf, st...)
				buf = append(buf, '\n')
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
		if r.cfg.writeGate != nil {
			r.cfg.writeGate()
		}
		buf = strconv.AppendInt(buf[:0], local, 10)
		buf = append(buf, ' ')
		buf = append(buf, frame...)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
		r.written.Add(1)
		return nil
	}
	marker := func(local int64, status string, assets []string) error {
		b, _ := json.Marshal(map[string]any{"event_type": "status", "status": status, "assets_ids": assets,
			"timestamp": strconv.FormatInt(local, 10)})
		if err := line(local, b); err != nil {
			return err
		}
		// Status rows take seq numbers too: the tape counts them for the next
		// segment's book_state lines.
		tape.Frame(b, local, func(*Event) {}) //nolint:errcheck // a marker the recorder wrote is valid
		return nil
	}
	gap := func(local int64) error {
		for _, a := range r.cfg.Assets {
			pending[a] = true
		}
		gapped = true
		return marker(local, StatusGapStart, r.cfg.Assets)
	}
	for it := range r.items {
		var err error
		switch it.status {
		case StatusGapStart:
			err = gap(it.local)
		case StatusConnected:
			err = marker(it.local, StatusConnected, r.cfg.Assets)
		default:
			if json.Valid(it.frame) {
				if gapped && len(pending) > 0 && bytes.Contains(it.frame, []byte(`"book"`)) {
					for _, a := range bookAssets(it.frame) {
						if pending[a] {
							delete(pending, a)
							if err = marker(it.local, StatusLiveResume, []string{a}); err != nil {
								return err
							}
						}
					}
				}
				fr := compact(it.frame)
				if err = line(it.local, fr); err == nil {
					tape.Frame(fr, it.local, func(*Event) {}) //nolint:errcheck // a bad line changes no book, here as in ingest
				}
			} else {
				r.bad.Add(1)
				r.logf("malformed frame dropped: %.80q", it.frame)
			}
		}
		if err != nil {
			return err
		}
		if len(r.items) == 0 && w != nil {
			// Idle: hand the lines to the OS, so a crash loses as little as possible.
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if f != nil && r.cfg.Now().UnixMilli() >= segEnd {
			if err := closeSeg(); err != nil {
				return err
			}
		}
	}
	return closeSeg()
}

// compact removes insignificant whitespace, so a frame is one line.
func compact(b []byte) []byte {
	if !bytes.ContainsAny(b, "\n\r") {
		return b
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// bookAssets lists the asset ids of the book messages of a frame.
func bookAssets(frame []byte) []string {
	type m struct {
		EventType string `json:"event_type"`
		AssetID   string `json:"asset_id"`
	}
	var ms []m
	if frame[0] == '[' {
		json.Unmarshal(frame, &ms) //nolint:errcheck
	} else {
		var one m
		if json.Unmarshal(frame, &one) == nil {
			ms = []m{one}
		}
	}
	var out []string
	for _, x := range ms {
		if x.EventType == "book" {
			out = append(out, x.AssetID)
		}
	}
	return out
}

// flusher ingests each closed segment into the lake, in order, with the loader of
// `mdq ingest` (malformed lines skipped and logged: a live stream must not lose an hour
// to one bad message). It runs apart from the writer so a slow merge never stalls the
// stream.
func (r *Recorder) flusher(segs <-chan string) {
	for seg := range segs {
		ctx := context.Background() // a flush started is finished, even after SIGTERM
		res, err := Ingest(ctx, r.cfg.Root, []string{seg}, Options{Kind: KindMarketChannel, SkipBad: true})
		if err == nil && r.cfg.Flushed != nil {
			err = r.cfg.Flushed(ctx, seg, res)
		}
		r.flushMu.Lock()
		if err != nil {
			r.flushErr = errors.Join(r.flushErr, fmt.Errorf("flush %s: %w", seg, err))
		} else {
			r.segments = append(r.segments, seg)
		}
		r.flushMu.Unlock()
		if err != nil {
			r.logf("flush %s failed: %v (the segment is kept; ingest it with mdq ingest predmkt)", filepath.Base(seg), err)
			continue
		}
		for _, b := range res.Bad {
			r.logf("skipped %v", b)
		}
		r.logf("flushed %s: %s", filepath.Base(seg), res.Summary.String())
	}
}
