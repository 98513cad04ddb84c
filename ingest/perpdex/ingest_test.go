package perpdex

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"

	"mdq/ingest"
	"mdq/lake"
)

var fixtureNow = time.Date(2026, 4, 4, 0, 0, 0, 0, time.UTC)

// load runs one batch into root and returns its summary and the per-file errors.
func load(t *testing.T, root string, opts Options, files ...string) (ingest.Summary, []error) {
	t.Helper()
	sum, rejected, l := loadWith(t, root, opts, nil, files...)
	var errs []error
	for _, r := range rejected {
		errs = append(errs, r.err)
	}
	return sum, append(errs, l.Errors...)
}

// rejectedFile is a file a batch rejected for a malformed line.
type rejectedFile struct {
	file string
	err  error
}

// loadWith runs one batch into root through a stage and loader that setup (when not
// nil) adjusts first, failing the test on any error but a file's malformed line; it
// returns the summary, the rejected files and the loader. The tests' load variants
// (tape path, Arrow budget) are this with one setting each.
func loadWith(t *testing.T, root string, opts Options, setup func(*ingest.Stage, *Loader), files ...string) (ingest.Summary, []rejectedFile, *Loader) {
	t.Helper()
	ctx := context.Background()
	st, err := ingest.NewStage(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := NewLoader(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(st, l)
	}
	var rejected []rejectedFile
	for _, f := range files {
		if err := l.File(ctx, f); err != nil {
			var le *ingest.LineError
			if !errors.As(err, &le) {
				t.Fatalf("%s: %v", f, err)
			}
			rejected = append(rejected, rejectedFile{f, err})
		}
	}
	sum, err := l.Finish(ctx, fixtureNow)
	if err != nil {
		t.Fatal(err)
	}
	return sum, rejected, l
}

// dump is every row of every perpdex table in the lake as text, sorted: two lakes with
// the same dump hold the same data.
func dump(t *testing.T, root string) map[string][]string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	for t2 := range Keys {
		files, err := t2.Files(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rows, err := db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM read_parquet(?, hive_partitioning = false)", f)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				parts := make([]string, len(vals))
				for i, v := range vals {
					parts[i] = v.String
					if !v.Valid {
						parts[i] = "NULL"
					}
				}
				rel, _ := filepath.Rel(root, f)
				out[t2.Name] = append(out[t2.Name], filepath.Dir(rel)+"|"+strings.Join(parts, "|"))
			}
			rows.Close()
		}
		sort.Strings(out[t2.Name])
	}
	return out
}

func fixtures() []string {
	return []string{
		"testdata/node_fills.jsonl",
		"testdata/user_fills_0x1111111111111111111111111111111111111111.json",
		"testdata/clearinghouse_0x1111111111111111111111111111111111111111.json",
		"testdata/funding_0x1111111111111111111111111111111111111111.json",
		"testdata/ledger_0x1111111111111111111111111111111111111111.json",
		"testdata/meta_and_ctxs_1775210400000.json",
		"testdata/delegations_0x1111111111111111111111111111111111111111_1775210400000.json",
		"testdata/candles_BTC_1h_1775210400000.json",
		"testdata/funding_history_BTC.json",
	}
}

// TestIngestFixturesIntoEmptyLake: every fixture lands in its table with the expected
// rows; the tape is one row per trade id with buyer and seller from the fills; the
// summary counts what was read, written and skipped; the directory becomes a lake.
func TestIngestFixturesIntoEmptyLake(t *testing.T) {
	root := t.TempDir()
	sum, errs := load(t, root, Options{}, fixtures()...)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := lake.Check(root); err != nil {
		t.Fatalf("not a lake after ingest: %v", err)
	}
	d := dump(t, root)
	counts := map[string]int{}
	for k, v := range d {
		counts[k] = len(v)
	}
	want := map[string]int{"perpdex_fills": 10, "perpdex_trades": 6, "perpdex_funding": 2, "perpdex_ledger": 5,
		"perpdex_positions": 2, "perpdex_accounts": 1, "perpdex_marks": 2, "perpdex_hype_balances": 1,
		"perpdex_venue_stats": 1, "perpdex_candles": 3, "perpdex_funding_rates": 5}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d rows, want %d\n%v", k, counts[k], n, d[k])
		}
	}
	w1, w2, w4 := "0x"+strings.Repeat("1", 40), "0x"+strings.Repeat("2", 40), "0x"+strings.Repeat("4", 40)
	for _, wantRow := range []struct{ table, row string }{
		{"perpdex_trades", "archive/venue=perpdex/date=2026-04-01|BTC|1775037600100|1775037600100|1001|B|80000.0|0.5|0xaa00000000000000000000000000000000000000000000000000000000000001|1001|" + w1 + "|" + w2},
		{"perpdex_trades", "archive/venue=perpdex/date=2026-04-01|BTC|1775046600000|1775046600000|1002|A|82000.0|0.5|0xaa00000000000000000000000000000000000000000000000000000000000002|1002|" + w2 + "|" + w1},
		{"perpdex_trades", "archive/venue=perpdex/date=2026-04-03|ETH|1775199600000|1775199600000|2001|B|1900.0|1.0|0xab00000000000000000000000000000000000000000000000000000000000001|2001|NULL|" + w1},
		{"perpdex_fills", "perpdex/fills/date=2026-04-02|2026-04-02 03:15:00|" + w4 + "|ETH||A|1800.0|2.0|Close Long|2.0|-400.0|1.62|USDC|NULL|NULL|NULL|true|0xaa00000000000000000000000000000000000000000000000000000000000005|1004|9008|true|1795.5"},
		{"perpdex_positions", "perpdex/positions/date=2026-04-03|2026-04-03 10:00:00|" + w1 + "|BTC|0.1|81000.0|81200.0|10.0|0.0|20.0|8120.0"},
		{"perpdex_positions", "perpdex/positions/date=2026-04-03|2026-04-03 10:00:00|" + w1 + "|xyz:TSLA|-10.0|250.0|260.0|3.0|320.5|-100.0|2600.0"},
		{"perpdex_ledger", "perpdex/ledger/date=2026-04-01|2026-04-01 09:00:00|" + w1 + "|send_out|250.0|" + w2 + "|0xcc00000000000000000000000000000000000000000000000000000000000002"},
		{"perpdex_ledger", "perpdex/ledger/date=2026-04-01|2026-04-01 10:06:40|" + w1 + "|send_out|500.0|0x9999999999999999999999999999999999999999|0xcc00000000000000000000000000000000000000000000000000000000000004"},
		{"perpdex_ledger", "perpdex/ledger/date=2026-04-01|2026-04-01 09:50:00|" + w1 + "|send_in|100.0|" + w2 + "|0xcc00000000000000000000000000000000000000000000000000000000000003"},
		{"perpdex_marks", "perpdex/marks/date=2026-04-03|2026-04-03 10:00:00|HYPE|31.25"},
		{"perpdex_funding_rates", "perpdex/funding_rates/date=2026-04-03|2026-04-03 09:00:00|BTC|history|1e-05|8e-05"},
		{"perpdex_funding_rates", "perpdex/funding_rates/date=2026-04-03|2026-04-03 10:00:00|BTC|history|1.25e-05|NULL"},
		{"perpdex_funding_rates", "perpdex/funding_rates/date=2026-04-03|2026-04-03 10:00:00|OLD|asset_ctx|0.0|NULL"},
		{"perpdex_candles", "perpdex/candles/date=2026-04-01|2026-04-01 10:00:00|BTC|1h|2026-04-01 10:59:59.999|80000.0|80100.5|79900.0|80050.0|12.5|40"},
		{"perpdex_hype_balances", "perpdex/hype_balances|" + w1 + "|staked|150.75|2026-04-03 10:00:00"},
		{"perpdex_venue_stats", "perpdex/venue_stats|2026-04-03 10:00:00|5020.5|1|2|1|1|10720.0|8120.0|2600.0|1"},
		{"perpdex_accounts", "perpdex/accounts/date=2026-04-03|2026-04-03 10:00:00|" + w1 + "|5020.5|10720.0|1062.0"},
	} {
		found := false
		for _, r := range d[wantRow.table] {
			found = found || r == wantRow.row
		}
		if !found {
			t.Errorf("%s: no row %s\nhave %s", wantRow.table, wantRow.row, strings.Join(d[wantRow.table], "\n"))
		}
	}
	wantSkip := map[string]int64{"spot fill": 1, "ledger kind accountClassTransfer": 1, "ledger spotTransfer of PURR": 1,
		"ledger kind someFutureKind": 1, "coin without a mark": 1, "candle not closed when fetched": 1}
	if !reflect.DeepEqual(sum.Skipped, wantSkip) {
		t.Errorf("skipped %v, want %v", sum.Skipped, wantSkip)
	}
	if sum.Rejected != 0 || sum.Deduplicated != 0 {
		t.Errorf("summary %s", sum.String())
	}
}

// TestReingestIsIdempotent: the same batch again, and overlapping halves of the node
// file, change no row and write nothing new.
func TestReingestIsIdempotent(t *testing.T) {
	root := t.TempDir()
	load(t, root, Options{}, fixtures()...)
	before := dump(t, root)
	sum, errs := load(t, root, Options{}, fixtures()...)
	if len(errs) > 0 || sum.Written != 0 || sum.Deduplicated == 0 {
		t.Fatalf("repeat: %s %v", sum.String(), errs)
	}
	lines := readLines(t, "testdata/node_fills.jsonl")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, strings.Join(lines[:3], "\n"))
	writeFile(t, b, strings.Join(lines[1:], "\n"))
	if sum, errs := load(t, root, Options{}, a, b); len(errs) > 0 || sum.Written != 0 {
		t.Fatalf("overlap: %s %v", sum.String(), errs)
	}
	if after := dump(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("re-ingest changed the lake:\n%v\n%v", before, after)
	}
}

// TestLateDayAndLZ4: the second day first, then the first day from an LZ4 file, gives
// the lake one batch gives; the late day rewrites only its own partitions.
func TestLateDayAndLZ4(t *testing.T) {
	whole := t.TempDir()
	load(t, whole, Options{}, "testdata/node_fills.jsonl")
	lines := readLines(t, "testdata/node_fills.jsonl")
	dir := t.TempDir()
	day2, day1 := filepath.Join(dir, "day2.jsonl"), filepath.Join(dir, "day1.jsonl.lz4")
	writeFile(t, day2, lines[3])
	writeFile(t, day1, string(lz4Bytes(t, strings.Join(lines[:3], "\n")+"\n")))
	root := t.TempDir()
	load(t, root, Options{}, day2)
	p2 := filepath.Join(root, "perpdex/fills/date=2026-04-02/fills.parquet")
	st2, _ := os.Stat(p2)
	time.Sleep(10 * time.Millisecond)
	sum, errs := load(t, root, Options{}, day1)
	if len(errs) > 0 || sum.Written != 6+3 {
		t.Fatalf("late day: %s %v", sum.String(), errs)
	}
	for _, p := range sum.Partitions {
		if strings.Contains(p, "2026-04-02") {
			t.Errorf("the late day rewrote %s", p)
		}
	}
	if st, _ := os.Stat(p2); !st.ModTime().Equal(st2.ModTime()) {
		t.Error("the other day's fills file was rewritten")
	}
	if a, b := dump(t, whole), dump(t, root); !reflect.DeepEqual(a, b) {
		t.Fatalf("late day differs from one batch:\n%v\n%v", a, b)
	}
}

// TestBadInputChangesNothing: a truncated LZ4 file and a malformed line are reported as
// FILE:LINE and their files write nothing; the other file of the batch is ingested;
// with SkipBad the good lines of the bad file are kept.
func TestBadInputChangesNothing(t *testing.T) {
	lines := readLines(t, "testdata/node_fills.jsonl")
	dir := t.TempDir()
	full := lz4Bytes(t, strings.Join(lines, "\n")+"\n")
	trunc := filepath.Join(dir, "trunc.jsonl.lz4")
	writeFile(t, trunc, string(full[:len(full)*2/3]))
	bad := filepath.Join(dir, "bad.jsonl")
	writeFile(t, bad, lines[0]+"\n"+strings.Replace(lines[1], `"tid":1002`, `"tid":"x"`, 1)+"\n"+lines[2])
	good := filepath.Join(dir, "good.jsonl")
	writeFile(t, good, lines[3])

	root := t.TempDir()
	sum, errs := load(t, root, Options{}, trunc, bad, good)
	if len(errs) != 2 {
		t.Fatalf("errors %v", errs)
	}
	if !strings.HasPrefix(errs[0].Error(), trunc+":") {
		t.Errorf("truncated LZ4: %v", errs[0])
	}
	if want := bad + ":2: "; !strings.HasPrefix(errs[1].Error(), want) || !strings.Contains(errs[1].Error(), "not an integer") {
		t.Errorf("bad line: %v, want prefix %q", errs[1], want)
	}
	d := dump(t, root)
	if len(d["perpdex_fills"]) != 2 || len(d["perpdex_trades"]) != 1 || sum.Rejected != 2 {
		t.Fatalf("only good.jsonl's two fills must be stored: %v (%s)", d["perpdex_fills"], sum.String())
	}
	// Nothing at all from a batch of only bad files: no lake either.
	empty := t.TempDir()
	load(t, empty, Options{}, bad)
	if err := lake.Check(empty); err == nil {
		t.Fatal("a rejected batch made a lake")
	}
	if files, _ := lake.PerpdexFills.Files(empty); len(files) != 0 {
		t.Fatalf("a rejected file wrote %v", files)
	}
	// --skip-bad: the bad line is reported, lines 1 and 3 are kept.
	skip := t.TempDir()
	sum, errs = load(t, skip, Options{SkipBad: true}, bad)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), bad+":2: ") || sum.Rejected != 1 {
		t.Fatalf("skip-bad: %v %s", errs, sum.String())
	}
	if n := len(dump(t, skip)["perpdex_fills"]); n != 4 {
		t.Fatalf("skip-bad kept %d fills, want 4", n)
	}
}

// TestHypeBalanceNewestWins: an older reading ingested after a newer one does not
// replace it.
func TestHypeBalanceNewestWins(t *testing.T) {
	root := t.TempDir()
	f := "testdata/delegations_0x1111111111111111111111111111111111111111_1775210400000.json"
	load(t, root, Options{}, f)
	sum, _ := load(t, root, Options{At: ms(1775210400000 - 3600_000)}, f)
	if sum.Skipped["HYPE balance older than the stored one"] != 1 {
		t.Fatalf("summary %s", sum.String())
	}
	if got := dump(t, root)["perpdex_hype_balances"]; len(got) != 1 || !strings.HasSuffix(got[0], "2026-04-03 10:00:00") {
		t.Fatalf("%v", got)
	}
}

func readLines(t *testing.T, f string) []string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func writeFile(t *testing.T, f, s string) {
	t.Helper()
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lz4Bytes(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTapeKeepsRecordedTimes: a trade recorded live (recentTrades, local_ts the fetch
// time) and later ingested from fills keeps its recorded local_ts and seq; the rest of
// the row comes from the fills; trades without a recorded row get the venue time.
func TestTapeKeepsRecordedTimes(t *testing.T) {
	root := t.TempDir()
	w1, w2 := "0x"+strings.Repeat("1", 40), "0x"+strings.Repeat("2", 40)
	trades := filepath.Join(t.TempDir(), "trades.json")
	// Recorded with the users swapped: the fills are the truth for buyer and seller.
	writeFile(t, trades, `[{"coin":"BTC","side":"B","px":"80000.0","sz":"0.5","hash":"0xAA00000000000000000000000000000000000000000000000000000000000001","time":1775037600100,"tid":1001,"users":["`+w2+`","`+w1+`"]}]`)
	load(t, root, Options{At: ms(1775037600125)}, trades)
	load(t, root, Options{}, "testdata/node_fills.jsonl")
	got := dump(t, root)["perpdex_trades"]
	want := []string{
		"archive/venue=perpdex/date=2026-04-01|BTC|1775037600100|1775037600125|1001|B|80000.0|0.5|0xaa00000000000000000000000000000000000000000000000000000000000001|1001|" + w1 + "|" + w2,
		"archive/venue=perpdex/date=2026-04-01|BTC|1775046600000|1775046600000|1002|A|82000.0|0.5|0xaa00000000000000000000000000000000000000000000000000000000000002|1002|" + w2 + "|" + w1,
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no tape row %s\nhave %s", w, strings.Join(got, "\n"))
		}
	}
}
