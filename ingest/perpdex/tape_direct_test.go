package perpdex

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"mdq/ingest"
	"mdq/lake"
)

// loadTape is load with the tape derived through the stage and its merge on every
// date (stageTape, the path before Stage.WriteNew) or written directly where it may be.
func loadTape(t *testing.T, root string, stageTape bool, opts Options, files ...string) string {
	t.Helper()
	sum, rejected, l := loadWith(t, root, opts, func(_ *ingest.Stage, l *Loader) { l.stageTape = stageTape }, files...)
	for _, r := range rejected {
		t.Fatalf("%s: %v", r.file, r.err)
	}
	return fmt.Sprintf("%s; derived %d; tables %v", sum.String(), l.derived, l.Tables)
}

// TestTapeWrittenDirectly: the tape written straight from the fills where no tape is
// stored and no API trade is staged for the date (Stage.WriteNew) is the tape the
// staged path writes, byte for byte, with the same summary; dates with a stored tape
// or staged trades take the staged path.
func TestTapeWrittenDirectly(t *testing.T) {
	dir := t.TempDir()
	// Two days of node fills, both sides of each trade, with a repeated block (staged
	// duplicates of (tid, wallet)) and a one-sided trade.
	var buf bytes.Buffer
	t0 := time.Date(2026, 4, 1, 20, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < 3000; i += 10 {
		line := fmt.Sprintf(`{"local_time":"x","block_time":"x","block_number":%d,"events":[`, i)
		for j := 0; j < 10; j++ {
			k := i + j
			if j > 0 {
				line += ","
			}
			side, coin := "B", []string{"BTC", "ETH", "xyz:TSLA"}[k%3]
			if k%2 == 1 {
				side = "A"
			}
			line += fmt.Sprintf(`["0x%040x",{"coin":"%s","px":"%d.5","sz":"0.0%d","side":"%s","time":%d,"startPosition":"0","dir":"Open","closedPnl":"0","hash":"0x%064x","oid":%d,"crossed":%v,"fee":"0.01","tid":%d}]`,
				k%37, coin, 100+k%7, 1+k%9, side, t0+int64(k)*60_000, k/2, k, k%4 == 0, 5000+k/2)
		}
		line += "]}\n"
		buf.WriteString(line)
		if i == 1500 {
			buf.WriteString(line)
		}
	}
	buf.WriteString(`{"local_time":"x","block_time":"x","block_number":9,"events":[["0x` + fmt.Sprintf("%040x", 99) +
		`",{"coin":"BTC","px":"1","sz":"1","side":"B","time":` + fmt.Sprint(t0) + `,"startPosition":"0","dir":"Open","closedPnl":"0","hash":"0x01","oid":1,"crossed":true,"fee":"0","tid":99999}]]}` + "\n")
	node := filepath.Join(dir, "node_fills.jsonl")
	writeFile(t, node, buf.String())
	trades := filepath.Join(dir, "trades.json")
	writeFile(t, trades, `[{"coin":"BTC","side":"B","px":"80000.0","sz":"0.5","hash":"0xAA00000000000000000000000000000000000000000000000000000000000009","time":1775037600100,"tid":777,"users":["0x`+fmt.Sprintf("%040x", 1)+`","0x`+fmt.Sprintf("%040x", 2)+`"]}]`)

	cases := []struct {
		name    string
		batches [][]string
		opts    Options
	}{
		{"fixtures", [][]string{fixtures()}, Options{}},
		{"two days of node fills", [][]string{{node}}, Options{}},
		{"API trades staged on a date", [][]string{{trades, "testdata/node_fills.jsonl"}}, Options{At: ms(1775037600125)}},
		{"tape stored by an earlier batch", [][]string{{"testdata/node_fills.jsonl"}, {node, "testdata/node_fills.jsonl"}}, Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			staged, direct := t.TempDir(), t.TempDir()
			for i, files := range c.batches {
				a := loadTape(t, staged, true, c.opts, files...)
				b := loadTape(t, direct, false, c.opts, files...)
				if a != b {
					t.Errorf("batch %d summary:\nstaged %s\ndirect %s", i, a, b)
				}
			}
			if a, b := dump(t, staged), dump(t, direct); !reflect.DeepEqual(a, b) {
				t.Errorf("lakes differ:\nstaged %v\ndirect %v", a, b)
			}
			files, err := lake.PerpdexTrades.Files(staged)
			if err != nil || len(files) == 0 {
				t.Fatalf("no tape: %v", err)
			}
			for _, f := range files {
				rel, _ := filepath.Rel(staged, f)
				a, errA := os.ReadFile(f)
				b, errB := os.ReadFile(filepath.Join(direct, rel))
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Errorf("%s: not the same bytes (%d, %d; %v %v)", rel, len(a), len(b), errA, errB)
				}
			}
		})
	}
}
