package query

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// boardTables are the registry's hourly board tables (lake/tables_boards.go).
var boardTables = []*lake.Table{lake.PerpdexBoard, lake.OnchainScreenerBoard, lake.OnchainDiscoverBoard,
	lake.OnchainTracePairsBoard, lake.OnchainHoldersBoard, lake.OnchainTransfersBoard, lake.OnchainLabelsBoard,
	lake.PerpdexBuildersBoard}

// tapeDigestTables are the prediction-market tape index's per-file digests.
var tapeDigestTables = []*lake.Table{lake.PredmktTapeSpans, lake.PredmktTapeSnaps, lake.PredmktTapeMids, lake.PredmktTapeMinutes}

// allBoards is every hourly board value of the perpetuals and on-chain areas at the
// store's hour, as the routes read them (after OnchainWarm and PerpdexWarm built or
// loaded them).
type allBoards struct {
	Perpdex   map[string][]pdBoardEntry
	Builders  map[string]*pdBuildersData
	Screener  map[string][]screenerBoardRow
	Discover  map[string][]discoverBoardRow
	Trace     map[string]*tracePairs
	Holders   map[string]map[string][]TokenHolderRow
	Transfers map[string]map[string][]TokenTransferRow
	Labels    map[string]LabelRow
}

func readAllBoards(t *testing.T, q *Queries) allBoards {
	t.Helper()
	ctx := context.Background()
	if err := q.PerpdexWarm(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.OnchainWarm(ctx); err != nil {
		t.Fatal(err)
	}
	at := ocBoardHour(q.Now())
	b := allBoards{Perpdex: map[string][]pdBoardEntry{}, Builders: map[string]*pdBuildersData{}, Screener: map[string][]screenerBoardRow{},
		Discover: map[string][]discoverBoardRow{}, Trace: map[string]*tracePairs{},
		Holders: map[string]map[string][]TokenHolderRow{}, Transfers: map[string]map[string][]TokenTransferRow{}}
	for _, w := range PerpdexWindowNames {
		e, _, err := q.perpdexBoard(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		b.Perpdex[w] = e
		d, _, err := q.buildersData(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		b.Builders[w] = d
	}
	for _, chain := range OnchainChains {
		for _, w := range []string{"24h", "7d", "30d", "90d"} {
			for _, smart := range []bool{false, true} {
				rows, err := q.onchainScreenerBoard(ctx, chain, w, smart, at)
				if err != nil {
					t.Fatal(err)
				}
				b.Screener[chain+w+map[bool]string{true: "smart"}[smart]] = rows
			}
		}
		p, err := q.onchainTracePairs(ctx, chain, "30d")
		if err != nil {
			t.Fatal(err)
		}
		b.Trace[chain] = p
		v, _ := q.ext.Load(holdersBoardKey{})
		h, _, err := v.(*hourly[map[string][]TokenHolderRow]).get(ctx, q, chain, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Holders[chain] = h
		for _, period := range []string{"1h", "24h", "7d", "30d"} {
			v, _ := q.ext.Load(transfersBoardKey{})
			tr, _, err := v.(*hourly[map[string][]TokenTransferRow]).get(ctx, q, chain+"|"+period, at, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.Transfers[chain+period] = tr
		}
	}
	for _, chain := range []string{"ethereum", "bsc"} {
		for _, w := range []string{"24h", "7d", "30d", "90d", "all"} {
			v, _ := q.ext.Load(discoverBoardKey{})
			d, _, err := v.(*hourly[*discoverBoard]).get(ctx, q, chain+"|"+w, at, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.Discover[chain+w] = d.rows
		}
	}
	v, _ := q.ext.Load(labelsBoardKey{})
	l, _, err := v.(*hourly[map[string]LabelRow]).get(ctx, q, "30d", at, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Labels = l
	return b
}

// boardFiles maps every published board file under dir to its modification time.
func boardFiles(t *testing.T, dir string) map[string]time.Time {
	return derivedFiles(t, dir, boardTables)
}

// derivedFiles maps every file of tables under dir (paths relative to dir) to its
// modification time.
func derivedFiles(t *testing.T, dir string, tables []*lake.Table) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for _, tb := range tables {
		files, err := tb.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, f)
			out[rel] = st.ModTime()
		}
	}
	return out
}

// TestPublishedBoardsEqualComputed: the hourly boards a fresh process reads from the
// lake equal the ones computed from the raw tables, field for field; the second process
// reads them (no file is rewritten; each file has the registry's columns), a source file that changes makes the next process
// compute and publish them again, replacing the old version; a past as_of publishes
// nothing.
func TestPublishedBoardsEqualComputed(t *testing.T) {
	dir := testlake.Copy(t)
	now := testlake.Now().Add(-90 * time.Minute) // mid-lake hour, not the marker's end
	open := func() *Queries {
		q, err := Open(context.Background(), dir, Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	if n := len(boardFiles(t, dir)); n != 0 {
		t.Fatalf("the copied lake already holds %d board files", n)
	}
	computed := readAllBoards(t, open())
	files := boardFiles(t, dir)
	// 4 perpetuals windows x (4 wallet groups + 1 builders); 3 chains x (8 screener + 1
	// trace + 1 holders + 4 transfers); 2 chains x 5 discover; 1 labels.
	if want := 4*(len(perpdexBoardGroups)+1) + 3*14 + 10 + 1; len(files) != want {
		t.Fatalf("%d board files published, want %d", len(files), want)
	}
	hour := now.UTC().Truncate(time.Hour).Format("20060102T15") + "_"
	for f := range files {
		if !strings.Contains(f, "built="+hour) {
			t.Fatalf("%s: not built for hour %s", f, hour)
		}
	}

	checkBoardSchemas(t, open(), dir)
	loaded := readAllBoards(t, open())
	// The builders' venue volume is not a board (each process sums it, and DuckDB's
	// parallel sum of doubles can differ in the last bits between runs): compare it to
	// 1e-12 relative, the rest exactly.
	for w, d := range loaded.Builders {
		c := computed.Builders[w]
		if math.Abs(c.venue-d.venue) > 1e-12*math.Abs(c.venue) {
			t.Fatalf("builders %s: venue volume %v computed, %v loaded", w, c.venue, d.venue)
		}
		d.venue = c.venue
	}
	if !reflect.DeepEqual(computed, loaded) {
		for _, f := range reflect.VisibleFields(reflect.TypeOf(computed)) {
			if !reflect.DeepEqual(reflect.ValueOf(computed).FieldByIndex(f.Index).Interface(), reflect.ValueOf(loaded).FieldByIndex(f.Index).Interface()) {
				t.Errorf("%s: the board read from the lake differs from the computed one", f.Name)
			}
		}
		t.FailNow()
	}
	if again := boardFiles(t, dir); !reflect.DeepEqual(again, files) {
		t.Fatalf("a second process rewrote board files: %d before, %d after", len(files), len(again))
	}

	// A corrected fills file: the perpetuals boards are computed again and replace the
	// old version (one version per board); the on-chain ones are still read.
	fills, err := lake.PerpdexFills.Files(dir)
	if err != nil || len(fills) == 0 {
		t.Fatalf("fills files: %v %v", fills, err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(fills[0], later, later); err != nil {
		t.Fatal(err)
	}
	readAllBoards(t, open())
	after := boardFiles(t, dir)
	if len(after) != len(files) {
		t.Fatalf("%d board files after republication, want %d (old versions removed)", len(after), len(files))
	}
	for f, mt := range after {
		_, same := files[f]
		if strings.HasPrefix(f, "perpdex/") == same {
			t.Errorf("%s: perpetuals boards must be republished under a new name, on-chain ones kept", f)
		}
		if same && !mt.Equal(files[f]) {
			t.Errorf("%s: rewritten although its sources did not change", f)
		}
	}

	// A past as_of publishes the boards of its own hour beside the serving hour's (which
	// stay), equal to what a store at that clock computes; the next as_of in that hour
	// reads them (nothing rewritten).
	q := open()
	pastAt := now.Add(-5 * time.Hour)
	past := q.At(pastAt)
	asOf := func() ([]pdBoardEntry, []ScreenerRow) {
		e, _, err := past.perpdexBoard(context.Background(), "7d")
		if err != nil {
			t.Fatal(err)
		}
		s, err := past.OnchainScreener(context.Background(), OnchainScreenerParams{Chain: "ethereum", Window: "24h", Sort: "volume", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return e, s
	}
	e1, s1 := asOf()
	withPast := boardFiles(t, dir)
	pastHour := pastAt.UTC().Truncate(time.Hour).Format("20060102T15") + "_"
	added := 0
	for f := range withPast {
		if _, ok := after[f]; !ok {
			if !strings.Contains(f, "built="+pastHour) {
				t.Errorf("%s: published by the as_of, not of its hour", f)
			}
			added++
		}
	}
	for f := range after {
		if _, ok := withPast[f]; !ok {
			t.Errorf("%s: the serving hour's board was removed by a past as_of", f)
		}
	}
	if want := len(perpdexBoardGroups) + 1; added != want { // the 7d leaderboard's wallet groups and one screener board
		t.Fatalf("a past as_of published %d board files, want %d", added, want)
	}
	e2, s2 := asOf()
	if !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(s1, s2) {
		t.Fatal("the as_of board read back differs from the one computed")
	}
	if got := boardFiles(t, dir); !reflect.DeepEqual(got, withPast) {
		t.Fatal("a second as_of in the same hour rewrote board files")
	}
	atPast, err := Open(context.Background(), dir, Options{Now: func() time.Time { return pastAt }})
	if err != nil {
		t.Fatal(err)
	}
	defer atPast.Close()
	if e, _, err := atPast.perpdexBoard(context.Background(), "7d"); err != nil || !reflect.DeepEqual(e, e1) {
		t.Fatalf("a store at the as_of's clock serves another board (err %v)", err)
	}
}

// checkBoardSchemas: every board table's file has the registry's column names and
// types, in order (CopyResult names columns positionally and keeps the query's types,
// so a query that changed its columns, or a type Parquet cannot keep such as HUGEINT,
// is caught here).
func checkBoardSchemas(t *testing.T, q *Queries, dir string) {
	t.Helper()
	for _, tb := range boardTables {
		checkTableSchema(t, q, dir, tb)
	}
}

// checkTableSchema: the first file of derived table tb has the registry's columns.
func checkTableSchema(t *testing.T, q *Queries, dir string, tb *lake.Table) {
	t.Helper()
	files, err := tb.Files(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no file (%v)", tb.Name, err)
	}
	sort.Strings(files)
	rows, err := q.db.Query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet($1, hive_partitioning = false))", files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var n, typ string
		if err := rows.Scan(&n, &typ); err != nil {
			t.Fatal(err)
		}
		got = append(got, n+" "+typ)
	}
	rows.Close()
	var want []string
	for _, c := range tb.Columns {
		want = append(want, c.Name+" "+c.Type)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: file columns\n%v\nregistry\n%v", tb.Name, got, want)
	}
}

// tapeDigest is what the tape index derives from the files (without their os.FileInfo,
// whose access times differ between two reads).
type tapeDigest struct {
	Trades  map[string]tapeSpan
	Spans   map[string]tapeSpan
	Snaps   map[string]map[string][]tapeSnap
	Mids    map[string]map[string]tapeMid
	Minutes map[string]tapeMinutes
	LastMid map[string]tapeMid
}

func readTapeDigest(t *testing.T, q *Queries) tapeDigest {
	t.Helper()
	ix, err := q.predmktTape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := tapeDigest{Trades: map[string]tapeSpan{}, Spans: map[string]tapeSpan{}, Snaps: map[string]map[string][]tapeSnap{},
		Mids: map[string]map[string]tapeMid{}, Minutes: map[string]tapeMinutes{}, LastMid: ix.lastMid}
	for _, f := range ix.trades {
		d.Trades[f.path] = f.span
	}
	for _, f := range ix.books {
		d.Spans[f.path], d.Snaps[f.path], d.Mids[f.path], d.Minutes[f.path] = f.span, readSnapDigest(t, q, f.snapsPath), f.mids, f.minutes
	}
	return d
}

// readSnapDigest is a snapshot digest file's rows per token, in the file's order.
func readSnapDigest(t *testing.T, q *Queries, path string) map[string][]tapeSnap {
	t.Helper()
	rows, err := q.db.QueryContext(context.Background(), `SELECT token_id, ts, local_ts, seq, "row"
		FROM read_parquet($1, file_row_number = true, hive_partitioning = false) ORDER BY file_row_number`, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]tapeSnap{}
	for rows.Next() {
		var tok string
		var s tapeSnap
		if err := rows.Scan(&tok, &s.ts, &s.local, &s.seq, &s.row); err != nil {
			t.Fatal(err)
		}
		out[tok] = append(out[tok], s)
	}
	return out
}

func digestFiles(t *testing.T, dir string) map[string]time.Time {
	return derivedFiles(t, dir, tapeDigestTables)
}

// TestTapeDigestsEqualComputed: the prediction-market tape index a fresh process
// builds from the published per-file digests equals the one computed from the archive
// files; the second process writes nothing; a replaced archive file gets new digests
// (the old ones removed) and a removed one loses its digests.
func TestTapeDigestsEqualComputed(t *testing.T) {
	dir := testlake.Copy(t)
	open := func() *Queries {
		q, err := Open(context.Background(), dir, Options{Now: testlake.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	q := open()
	computed := readTapeDigest(t, q)
	files := digestFiles(t, dir)
	trades, _ := lake.PredmktTrades.Files(dir)
	books, _ := lake.PredmktBookEvents.Files(dir)
	if want := len(trades) + 4*len(books); len(files) != want || len(books) == 0 {
		t.Fatalf("%d digest files for %d trades and %d book files, want %d", len(files), len(trades), len(books), want)
	}
	for _, tb := range tapeDigestTables {
		checkTableSchema(t, q, dir, tb)
	}
	loaded := readTapeDigest(t, open())
	if !reflect.DeepEqual(computed, loaded) {
		t.Fatal("the tape index read from the digests differs from the one computed from the files")
	}
	if again := digestFiles(t, dir); !reflect.DeepEqual(again, files) {
		t.Fatal("a second process rewrote digests")
	}
	// Replace one book file (same rows, new version) and remove another.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(books[0], later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(books[len(books)-1]); err != nil {
		t.Fatal(err)
	}
	readTapeDigest(t, open())
	after := digestFiles(t, dir)
	if want := len(files) - 4; len(after) != want {
		t.Fatalf("%d digest files after a replace and a removal, want %d", len(after), want)
	}
	changed := 0
	for f := range after {
		if _, ok := files[f]; !ok {
			changed++
		}
	}
	if changed != 4 {
		t.Fatalf("%d new digest files for the replaced book file, want 4", changed)
	}
}
