package predmkt

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	fastjson "github.com/goccy/go-json"
)

// reference decodes a frame as Frame does without the fast path.
func reference(frame []byte) ([]wsMsg, error) {
	frame = bytes.TrimSpace(frame)
	if len(frame) > 0 && frame[0] == '[' {
		var msgs []wsMsg
		err := fastjson.Unmarshal(frame, &msgs)
		return msgs, err
	}
	msgs := make([]wsMsg, 1)
	err := fastjson.Unmarshal(frame, &msgs[0])
	return msgs, err
}

// agree checks the fast decoder against the reference on one frame: when it decodes
// the frame, the reference decodes it too, to the same values. It says whether the
// fast path took the frame.
func agree(t *testing.T, frame []byte) bool {
	t.Helper()
	got, ok := fastFrame(frame, map[string]string{})
	if !ok {
		return false
	}
	want, err := reference(frame)
	if err != nil {
		t.Errorf("fast path took a frame the reference refuses (%v):\n%s", err, frame)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fast path and reference differ on\n%s\nfast: %#v\nref:  %#v", frame, got, want)
	}
	return true
}

// frames are the market-channel frames of the fixtures, the shared samples (when
// present) and the benchmark's capture.
func frames(t *testing.T) [][]byte {
	var out [][]byte
	add := func(data []byte) {
		for _, l := range bytes.Split(data, []byte("\n")) {
			if _, f, err := splitPrefix(l); err == nil && len(f) > 0 && (f[0] == '{' || f[0] == '[') {
				out = append(out, append([]byte(nil), f...))
			}
		}
	}
	for _, f := range []string{"tape_day1.jsonl", "tape_day2.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		add(b)
	}
	dir := filepath.Join("..", "..", "..", "shared", "samples", "predmkt")
	if ms, _ := filepath.Glob(filepath.Join(dir, "ws_*.json")); len(ms) > 0 {
		for _, m := range ms {
			b, _ := os.ReadFile(m)
			var v any
			if fastjson.Unmarshal(b, &v) == nil {
				compact, _ := fastjson.Marshal(v)
				out = append(out, compact, b) // the pretty-printed document as well
			}
		}
	}
	return out
}

// TestFastWireAgreesWithReference: on every fixture and sample frame, and on the
// benchmark capture's kinds of frames, the hand scanner gives exactly what go-json
// gives (or leaves the frame to it); it takes the common frames.
func TestFastWireAgreesWithReference(t *testing.T) {
	fs := frames(t)
	fs = append(fs,
		[]byte(`{"event_type":"book","asset_id":"1000001","market":"0x01","timestamp":"1773050400000","hash":"ab","bids":[{"price":"0.01","size":"12.50"},{"price":".5","size":"1"}],"asks":[],"tick_size":"0.01"}`),
		[]byte(`{"event_type":"price_change","market":"0x01","timestamp":"1773050400000","price_changes":[{"asset_id":"1000002","price":"0.07","side":"BUY","size":"3000","hash":"x","best_bid":"0.48","best_ask":"0.52"},{"asset_id":"1000002","price":"0.55","side":"SELL","size":"0","hash":"y","best_bid":"0.48","best_ask":"0.52"}]}`),
		[]byte(`{"event_type":"last_trade_price","asset_id":"1000003","market":"0x01","timestamp":"1773050400001","price":"0.57","side":"BUY","size":"17.5","fee_rate_bps":"0"}`),
		[]byte(`[{"event_type":"last_trade_price","asset_id":"7","timestamp":1773050400001,"price":0.57,"side":"SELL","size":1e2},{"event_type":"tick_size_change","asset_id":"7","timestamp":"1","new_tick_size":"0.001","old_tick_size":"0.01","extra":{"a":[1,true,false,null,"x"]}}]`),
		[]byte(` {"event_type" : "price_change" , "asset_id":"9","changes":[{"price":"0.5","side":"BUY","size":"1"}],"timestamp":"5"} `),
		[]byte(`{"event_type":"book","asset_id":"9","timestamp":"5","buys":[{"price":"0.5","size":"1"}],"sells":[{"price":"0.6","size":"2"}]}`),
		[]byte(`{"event_type":"book","asset_id":"9","timestamp":"5","bids":[{"price":"0.5","size":"1"}],"market":"ünï"}`),
	)
	took := 0
	for _, f := range fs {
		if agree(t, f) {
			took++
		}
	}
	if took < len(fs)/2 {
		t.Errorf("the fast path took %d of %d frames", took, len(fs))
	}
}

// TestFastWireLeavesUnsureFramesToReference: escapes, control characters, text that
// is not UTF-8, nulls, repeated keys, keys matching only case-insensitively, the rarer
// messages' fields, an empty array frame and trailing text all go to the reference.
func TestFastWireLeavesUnsureFramesToReference(t *testing.T) {
	for _, f := range []string{
		`{"event_type":"book","asset_id":"1\u0030","timestamp":"5","bids":[],"asks":[]}`,
		`{"event_type":"book","asset_id":"10","timestamp":"5","bids":[],"asks":[],"market":"a` + "\t" + `b"}`,
		`{"event_type":"book","asset_id":"10","timestamp":"5","bids":[],"asks":[],"market":"` + "\xff" + `"}`,
		`{"event_type":"last_trade_price","asset_id":"10","timestamp":"5","price":null,"side":"BUY","size":"1"}`,
		`{"event_type":"last_trade_price","asset_id":"10","asset_id":"11","timestamp":"5","price":"1","side":"BUY","size":"1"}`,
		`{"event_type":"last_trade_price","Asset_ID":"10","timestamp":"5","price":"1","side":"BUY","size":"1"}`,
		`{"event_type":"price_change","price_changes":[{"asset_id":"1","PRICE":"0.5","side":"BUY","size":"1"}],"timestamp":"5"}`,
		`{"event_type":"status","asset_id":"10","timestamp":"5","status":"gap"}`,
		`{"event_type":"market_resolved","assets_ids":["1","2"],"winning_asset_id":"1","timestamp":"5"}`,
		`[]`,
		`{"event_type":"book","asset_id":"10","timestamp":"5"} x`,
		`{"event_type":"book","asset_id":10,"timestamp":"5"}`,
		`{"event_type":"book","asset_id":"10","timestamp":05}`,
	} {
		if _, ok := fastFrame([]byte(f), nil); ok {
			t.Errorf("fast path took %s", f)
		}
	}
}

// TestFastWireAgreesOnMutatedFrames: every frame with one byte deleted, doubled or
// replaced by a JSON delimiter: whenever the fast path takes the result, the
// reference decodes it to the same values.
func TestFastWireAgreesOnMutatedFrames(t *testing.T) {
	fs := frames(t)
	if len(fs) > 40 {
		fs = fs[:40]
	}
	subs := []byte(`"{}[],:\ 0-.eE`)
	for _, f := range fs {
		for i := range f {
			agree(t, append(append([]byte(nil), f[:i]...), f[i+1:]...))
			agree(t, append(append(append([]byte(nil), f[:i+1]...), f[i]), f[i+1:]...))
			for _, c := range subs {
				m := append([]byte(nil), f...)
				m[i] = c
				agree(t, m)
			}
		}
		if t.Failed() {
			t.Fatalf("first failing frame: %s", strings.TrimSpace(string(f)))
		}
	}
}
