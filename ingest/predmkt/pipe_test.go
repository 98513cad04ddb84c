package predmkt

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mdq/ingest"
)

// tapeRun is what reading one capture did: the rows emitted, each line's error, and the
// tape's counters and metadata afterwards.
type tapeRun struct {
	Events  []Event
	Errors  []string
	Read    int64
	Skipped map[string]int64
	Meta    Meta
	Books   []string
}

func (r *tapeRun) finish(tp *Tape) {
	r.Read, r.Skipped, r.Meta = tp.Read, tp.Skipped, tp.Meta
	for _, b := range tp.BookStates() {
		r.Books = append(r.Books, string(b))
	}
}

// serialRun reads a capture the way the loader did before decodeLines: one goroutine
// reads, decodes and applies each line (Tape.Line, Tape.Frame for a document).
func serialRun(t *testing.T, path string) tapeRun {
	t.Helper()
	r, err := ingest.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tp, run := NewTape(), tapeRun{}
	emit := func(e *Event) { run.Events = append(run.Events, *e) }
	err = captureLines(r, path, func(line int, b []byte, doc bool) error {
		var err error
		if doc {
			err = tp.Frame(b, 0, emit)
		} else {
			err = tp.Line(b, emit)
		}
		if err != nil {
			run.Errors = append(run.Errors, fmt.Sprintf("%d: %v", line, err))
		}
		return nil
	})
	if err != nil {
		run.Errors = append(run.Errors, "read: "+err.Error())
	}
	run.finish(tp)
	return run
}

// pipeRun reads it as the loader does now: decoded on one goroutine, applied on this.
func pipeRun(t *testing.T, path string) tapeRun {
	t.Helper()
	r, err := ingest.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tp, run := NewTape(), tapeRun{}
	emit := func(e *Event) { run.Events = append(run.Events, *e) }
	err = decodeLines(r, path, tp.names, func(d *decodedLine) error {
		err := d.err
		if err == nil {
			err = tp.applyFrame(d.msgs, d.local, emit)
		}
		if err != nil {
			run.Errors = append(run.Errors, fmt.Sprintf("%d: %v", d.line, err))
		}
		return nil
	})
	if err != nil {
		run.Errors = append(run.Errors, "read: "+err.Error())
	}
	run.finish(tp)
	return run
}

// TestDecodeLinesAsSerial: the pipelined reading of a capture (decodeLines, then
// applyFrame in order) emits the same rows, reports the same bad lines and leaves the
// same tape state as the serial Tape.Line it replaced, on the fixtures, the samples, a
// generated capture of more lines than the pipeline holds in flight (with bad lines,
// array frames, unknown types, new_market and market_resolved messages, lines without
// a receive time), a pretty-printed document and a truncated gzip file.
func TestDecodeLinesAsSerial(t *testing.T) {
	dir := t.TempDir()
	var gen strings.Builder
	for i := 0; i < 5*pipeBatch+17; i++ {
		tok := 1_000_000 + i%7
		ts := 1773050400000 + int64(i)*10
		switch i % 11 {
		case 0:
			fmt.Fprintf(&gen, `%d {"event_type":"book","asset_id":"%d","market":"0x01","timestamp":"%d","bids":[{"price":"0.4%d","size":"10"},{"price":"0.3","size":"5"}],"asks":[{"price":"0.6","size":"7"}]}`+"\n", ts+1, tok, ts, i%10)
		case 1:
			fmt.Fprintf(&gen, `%d [{"event_type":"last_trade_price","asset_id":"%d","market":"0x01","timestamp":"%d","price":"0.6","side":"BUY","size":"2"},{"event_type":"tick_size_change","asset_id":"%d","market":"0x01","timestamp":"%d","new_tick_size":"0.001"}]`+"\n", ts+1, tok, ts, tok, ts)
		case 2:
			fmt.Fprintf(&gen, `{"event_type":"price_change","asset_id":"%d","market":"0x01","timestamp":"%d","changes":[{"price":"0.45","side":"BUY","size":"3"}]}`+"\n", tok, ts)
		case 3:
			fmt.Fprintf(&gen, `%d {"event_type":"price_change","market":"0x01","timestamp":"%d","price_changes":[{"asset_id":"%d","price":"0.61","side":"SELL","size":"0","best_bid":"0.45","best_ask":"0.6"}]}`+"\n", ts+2, ts, tok)
		case 4:
			gen.WriteString(`{"event_type":"price_change","asset_id":"1","timestamp":` + "\n") // malformed
		case 5:
			fmt.Fprintf(&gen, `%d {"event_type":"mystery","asset_id":"%d","timestamp":"%d"}`+"\n", ts, tok, ts)
		case 6:
			fmt.Fprintf(&gen, `%d {"event_type":"new_market","id":"%d","question":"Q%d?","market":"0x%064x","slug":"q-%d","assets_ids":["%d","%d"],"outcomes":["Yes","No"],"timestamp":"%d"}`+"\n", ts, i, i, i, i, 2_000_000+i, 3_000_000+i, ts)
		case 7:
			fmt.Fprintf(&gen, `%d {"event_type":"last_trade_price","asset_id":"%d","timestamp":"%d","price":"1.5","side":"BUY","size":"1"}`+"\n", ts, tok, ts) // bad price? kept as the tape decides
		case 8:
			fmt.Fprintf(&gen, "x%d {}\n", ts) // bad prefix
		case 9:
			fmt.Fprintf(&gen, `%d {"event_type":"status","status":"gap_start","asset_id":"%d","timestamp":"%d"}`+"\n", ts, tok, ts)
		default:
			fmt.Fprintf(&gen, `%d {"event_type":"best_bid_ask","asset_id":"%d","timestamp":"%d","best_bid":"0.4","best_ask":"0.6"}`+"\n", ts, tok, ts)
		}
	}
	capture := filepath.Join(dir, "capture.jsonl")
	writeTestFile(t, capture, []byte(gen.String()))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(gen.String())) //nolint:errcheck
	zw.Close()
	truncated := filepath.Join(dir, "capture.jsonl.gz")
	writeTestFile(t, truncated, z.Bytes()[:z.Len()*2/3])
	doc := filepath.Join(dir, "doc.json")
	writeTestFile(t, doc, []byte("[\n  {\"event_type\": \"book\", \"asset_id\": \"5\", \"market\": \"0x01\", \"timestamp\": \"1773050400000\",\n"+
		"   \"bids\": [{\"price\": \"0.4\", \"size\": \"1\"}], \"asks\": []},\n  {\"event_type\": \"price_change\"}\n]\n"))

	files := []string{capture, truncated, doc}
	for _, pattern := range []string{"testdata/tape_*.jsonl", "../../../shared/samples/predmkt/ws_*.json"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			a, b := serialRun(t, f), pipeRun(t, f)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("serial and pipelined reading differ:\nserial %+v\npipe   %+v", a, b)
			}
			if f == capture && (len(a.Events) < 500 || len(a.Errors) < 100) {
				t.Errorf("the generated capture gave %d rows and %d bad lines: not the mix meant", len(a.Events), len(a.Errors))
			}
		})
	}
}

func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
