package predmkt

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdq/lake"
)

func fixture(name string) string { return filepath.Join("testdata", name) }

var allFixtures = []string{fixture("tape_day1.jsonl"), fixture("tape_day2.jsonl"), fixture("gamma_events.json"),
	fixture("gamma_market_btc.json"), fixture("fills.jsonl"), fixture("order_filled.jsonl")}

func ingestOK(t *testing.T, dir string, files []string, opt Options) *Result {
	t.Helper()
	res, err := Ingest(context.Background(), dir, files, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bad) > 0 && !opt.SkipBad {
		t.Fatalf("bad lines: %v", res.Bad)
	}
	return res
}

// tableRows returns every row of a table in the lake, one line each, sorted: the
// content to compare lakes by.
func tableRows(t *testing.T, dir string, tb *lake.Table) []string {
	t.Helper()
	files, err := tb.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		return nil
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := strings.Join(tb.ColumnNames(), " || '|' || ")
	q := "SELECT " + strings.ReplaceAll(cols, "||", "::VARCHAR ||") + "::VARCHAR AS r FROM read_parquet(?, hive_partitioning = false) ORDER BY r"
	rows, err := db.Query("SELECT coalesce(r, 'NULL-ROW') FROM ("+q+")", files)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// predTables are the tables an ingest writes.
var predTables = []*lake.Table{lake.PredmktMarkets, lake.PredmktTokens, lake.PredmktResolutions, lake.PredmktProfiles,
	lake.PredmktTrades, lake.PredmktBookEvents, lake.PredmktFamilyBookEvents}

func lakeContent(t *testing.T, dir string) map[string][]string {
	out := map[string][]string{}
	for _, tb := range predTables {
		out[tb.Name] = tableRows(t, dir, tb)
	}
	return out
}

func fileHashes(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error { //nolint:errcheck
		if err == nil && strings.HasSuffix(p, ".parquet") {
			b, _ := os.ReadFile(p)
			out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	return out
}

// TestIngestFixtures: the fixtures give the rows expected of them: counts per table,
// fills matched to their tape trade events (ts, local_ts, seq), the fill without a
// tape event kept with seq 0, the family layout, lower-case wallets, profiles.
func TestIngestFixtures(t *testing.T) {
	dir := t.TempDir()
	res := ingestOK(t, dir, allFixtures, Options{})
	want := map[string]int{"predmkt_markets": 4, "predmkt_tokens": 8, "predmkt_resolutions": 3, "predmkt_profiles": 1,
		"predmkt_trades": 14, "predmkt_book_events": 18, "predmkt_family_book_events": 2}
	got := lakeContent(t, dir)
	for name, n := range want {
		if len(got[name]) != n {
			t.Errorf("%s: %d rows, want %d\n%s", name, len(got[name]), n, strings.Join(got[name], "\n"))
		}
	}
	if res.Summary.Written != 48 || res.Summary.Rejected != 0 || res.Summary.Skipped["unknown event_type foo"] != 1 ||
		res.Summary.Skipped["best_bid_ask"] != 1 || res.Summary.Skipped["OrderFilled with the exchange as taker"] != 1 ||
		res.Summary.Skipped["fills without a tape trade event (kept, seq 0)"] != 2 {
		t.Errorf("summary %s", res.Summary.String())
	}
	// Every fill of a tape trade carries the event's ts, local_ts and seq.
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	glob := func(tb *lake.Table) string { return filepath.Join(dir, filepath.FromSlash(tb.Glob())) }
	var unmatched, matched, total int
	if err := db.QueryRow(`SELECT count(*) FILTER (WHERE e.seq IS NULL AND t.seq <> 0),
		count(*) FILTER (WHERE e.seq IS NOT NULL), count(*)
		FROM read_parquet(?) t LEFT JOIN (SELECT * FROM read_parquet(?) WHERE event_type = 'trade') e
		ON e.token_id = t.token_id AND e.seq = t.seq AND e.ts = t.ts AND e.local_ts = t.local_ts AND e.price = t.price AND e.size = t.size`,
		glob(lake.PredmktTrades), glob(lake.PredmktBookEvents)).Scan(&unmatched, &matched, &total); err != nil {
		t.Fatal(err)
	}
	if unmatched != 0 || matched != 12 || total != 14 {
		t.Errorf("fills: %d with a seq but no event, %d matched of %d", unmatched, matched, total)
	}
	var seq0 int
	db.QueryRow(`SELECT count(*) FROM read_parquet(?) WHERE seq = 0 AND token_id = '4002' AND ts = local_ts AND ts = 1773050420000`, glob(lake.PredmktTrades)).Scan(&seq0) //nolint:errcheck
	if seq0 != 2 {
		t.Errorf("the fills without a tape event: %d rows with seq 0 at their own time", seq0)
	}
	for _, r := range got["predmkt_trades"] {
		if strings.Contains(r, "0xABAB") || strings.Contains(r, "0x4bFb") {
			t.Errorf("address not lower-cased: %s", r)
		}
	}
	for _, r := range got["predmkt_family_book_events"] {
		if !strings.Contains(r, "|3001|") {
			t.Errorf("family row of another token: %s", r)
		}
	}
	if files, _ := lake.PredmktFamilyBookEvents.Files(dir); len(files) != 1 || !strings.Contains(files[0], "asset=btc/tenor=15m/date=2026-03-09") {
		t.Errorf("family files %v", files)
	}
	if got["predmkt_profiles"][0] != "0x1111111111111111111111111111111111111111|Brave-Fox|alice" {
		t.Errorf("profiles %v", got["predmkt_profiles"])
	}
	if _, err := os.Stat(filepath.Join(dir, lake.MarkerFile)); err != nil {
		t.Errorf("no lake marker: %v", err)
	}
}

// TestIngestIdempotent: the same files twice change nothing (not a row, not a byte),
// and the second run reports every row as deduplicated.
func TestIngestIdempotent(t *testing.T) {
	dir := t.TempDir()
	ingestOK(t, dir, allFixtures, Options{})
	before, hashes := lakeContent(t, dir), fileHashes(t, dir)
	res := ingestOK(t, dir, allFixtures, Options{})
	if res.Summary.Written != 0 || res.Summary.Deduplicated != 48 {
		t.Errorf("second run: %s", res.Summary.String())
	}
	if after := lakeContent(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rows changed on re-ingest")
	}
	if after := fileHashes(t, dir); fmt.Sprint(after) != fmt.Sprint(hashes) {
		t.Errorf("files changed on re-ingest")
	}
}

func writeLines(t *testing.T, dir, name string, lines []string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fixtureLines(t *testing.T, name string) []string {
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestIngestOverlap: two captures that overlap merge into what the whole capture
// gives (the overlap's events get the same seq in both).
func TestIngestOverlap(t *testing.T) {
	lines := fixtureLines(t, "tape_day1.jsonl")
	tmp := t.TempDir()
	a := writeLines(t, tmp, "a.jsonl", lines[:8])
	b := writeLines(t, tmp, "b.jsonl", lines[4:])
	meta := []string{fixture("gamma_events.json"), fixture("gamma_market_btc.json")}
	split, whole := t.TempDir(), t.TempDir()
	ingestOK(t, split, append(meta, a), Options{})
	res := ingestOK(t, split, []string{b}, Options{})
	if res.Summary.Deduplicated == 0 {
		t.Errorf("overlap not deduplicated: %s", res.Summary.String())
	}
	ingestOK(t, whole, append(meta, fixture("tape_day1.jsonl")), Options{})
	if s, w := lakeContent(t, split), lakeContent(t, whole); fmt.Sprint(s) != fmt.Sprint(w) {
		t.Errorf("overlapping captures differ from the whole:\n%v\n%v", s["predmkt_book_events"], w["predmkt_book_events"])
	}
}

// TestIngestLateDay: a day arriving after a later one adds its partition and leaves
// the later day's files untouched.
func TestIngestLateDay(t *testing.T) {
	dir := t.TempDir()
	ingestOK(t, dir, []string{fixture("tape_day2.jsonl")}, Options{})
	day2 := filepath.Join(dir, "archive", "venue=predmkt", "date=2026-03-10", "book_events.parquet")
	h := fileHashes(t, dir)[day2]
	if h == "" {
		t.Fatal("no day-2 partition")
	}
	res := ingestOK(t, dir, []string{fixture("tape_day1.jsonl")}, Options{})
	for _, p := range res.Summary.Partitions {
		if strings.Contains(p, "2026-03-10") {
			t.Errorf("late day rewrote %s", p)
		}
	}
	if fileHashes(t, dir)[day2] != h {
		t.Errorf("day-2 file changed")
	}
	if n := len(tableRows(t, dir, lake.PredmktBookEvents)); n != 18 {
		t.Errorf("%d tape rows, want 18", n)
	}
}

// TestIngestBadFile: a corrupt file in a batch is reported FILE:LINE and not written;
// the other files are. With SkipBad its good lines are written.
func TestIngestBadFile(t *testing.T) {
	lines := fixtureLines(t, "tape_day2.jsonl")
	tmp := t.TempDir()
	bad := writeLines(t, tmp, "bad.jsonl", []string{lines[0], `1773133200100 {"event_type":"last_trade_price","asset_id":"1001","timestamp":"1773133200100","price":"zero","side":"BUY","size":"1"}`, lines[1]})
	dir := t.TempDir()
	res, err := Ingest(context.Background(), dir, []string{fixture("tape_day1.jsonl"), bad}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bad) != 1 || !strings.HasPrefix(res.Bad[0].Error(), bad+":2: last_trade_price price:") ||
		len(res.Rejected) != 1 || res.Rejected[0] != bad || res.Summary.Rejected != 1 {
		t.Fatalf("bad lines %v rejected %v", res.Bad, res.Rejected)
	}
	if files, _ := lake.PredmktBookEvents.Files(dir); len(files) != 1 || !strings.Contains(files[0], "2026-03-09") {
		t.Errorf("partitions %v: the bad file's day must not be written, the good file's must", files)
	}
	// A bad file alone on an empty directory leaves no lake.
	empty := t.TempDir()
	if _, err := Ingest(context.Background(), empty, []string{bad}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, lake.MarkerFile)); err == nil {
		t.Errorf("a rejected file made a lake")
	}
	// --skip-bad: the good lines are written, the bad one reported.
	res, err = Ingest(context.Background(), dir, []string{bad}, Options{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bad) != 1 || len(res.Rejected) != 0 || res.Summary.Written != 3 {
		t.Errorf("skip-bad: %v %s", res.Bad, res.Summary.String())
	}
}

// TestIngestCompressedAndStdin: gzip and stdin read the same rows as the plain file.
func TestIngestCompressedAndStdin(t *testing.T) {
	raw, _ := os.ReadFile(fixture("tape_day1.jsonl"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw) //nolint:errcheck
	zw.Close()
	p := filepath.Join(t.TempDir(), "capture.jsonl.gz")
	os.WriteFile(p, gz.Bytes(), 0o644) //nolint:errcheck
	plain, zipped, stdin := t.TempDir(), t.TempDir(), t.TempDir()
	ingestOK(t, plain, []string{fixture("tape_day1.jsonl")}, Options{})
	ingestOK(t, zipped, []string{p}, Options{})
	ingestOK(t, stdin, []string{"-"}, Options{Stdin: bytes.NewReader(raw), Kind: KindMarketChannel})
	want := fmt.Sprint(lakeContent(t, plain))
	if fmt.Sprint(lakeContent(t, zipped)) != want || fmt.Sprint(lakeContent(t, stdin)) != want {
		t.Errorf("gzip or stdin differ from the plain file")
	}
}

// TestGuessKind: each fixture's kind is told from its content.
func TestGuessKind(t *testing.T) {
	for f, want := range map[string]string{"tape_day1.jsonl": KindMarketChannel, "gamma_events.json": KindGamma,
		"gamma_market_btc.json": KindGamma, "fills.jsonl": KindFills, "order_filled.jsonl": KindOrderFilled} {
		if got, err := guessKind(fixture(f)); err != nil || got != want {
			t.Errorf("%s: %s %v", f, got, err)
		}
	}
}

// TestIngestManyBadLines: a file of bad lines is listed up to 1,000 of them, each a
// real FILE:LINE, and nothing is written.
func TestIngestManyBadLines(t *testing.T) {
	lines := make([]string, 1200)
	for i := range lines {
		lines[i] = `{"event_type":"tick_size_change","asset_id":"x","timestamp":"1"}`
	}
	bad := writeLines(t, t.TempDir(), "bad.jsonl", lines)
	dir := t.TempDir()
	res, err := Ingest(context.Background(), dir, []string{bad}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bad) != 1000 || res.Summary.Written != 0 || len(res.Rejected) != 1 {
		t.Fatalf("%d bad lines, %s", len(res.Bad), res.Summary.String())
	}
	for i, b := range res.Bad {
		if want := fmt.Sprintf("%s:%d: tick_size_change: asset_id", bad, i+1); !strings.HasPrefix(b.Error(), want) {
			t.Fatalf("bad line %d: %v", i, b)
		}
	}
}
