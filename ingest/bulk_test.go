package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdq/internal/sqlrows"
	"mdq/lake"
)

// readRows reads every column of a partition file, ordered by the given columns.
func readRows(t *testing.T, file, order string) [][]any {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT * FROM read_parquet(" + lake.QuoteString(file) + ") ORDER BY " + order)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out, err := sqlrows.All(rows)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// same says whether a stored value is exactly the staged one: doubles bit for bit
// (NaN as NaN), times to the microsecond the lake keeps, integers whatever their width.
func same(staged, stored any) bool {
	switch s := staged.(type) {
	case nil:
		return stored == nil
	case float64:
		d, ok := stored.(float64)
		return ok && (math.Float64bits(s) == math.Float64bits(d) || math.IsNaN(s) && math.IsNaN(d))
	case time.Time:
		d, ok := stored.(time.Time)
		return ok && d.UnixMicro() == s.UnixMicro()
	case int:
		return fmt.Sprint(int64(s)) == fmt.Sprint(stored)
	case int32, int64:
		return fmt.Sprint(s) == fmt.Sprint(stored)
	}
	return staged == stored
}

// TestBulkStagingStoresValuesExactly: rows staged through the bulk CSV come back from
// the partition file exactly as appended: text with the CSV's own delimiters, quotes,
// line breaks, an empty string apart from NULL, a value longer than DuckDB's default
// CSV line limit; doubles bit for bit (shortest text, subnormals, signed zero, NaN,
// infinities); timestamps before 1970 and with nanoseconds (kept to the microsecond,
// as the appender does); integer extremes. Rows the CSV does not carry (a value of a Go
// type without a CSV form here) go through the appender in the same stage. The rows
// are staged as interfaces (Append), or as Vals (AppendVals) with the key declared,
// the appender's rows still as interfaces in the same batches.
func TestBulkStagingStoresValuesExactly(t *testing.T) {
	for _, typed := range []bool{false, true} {
		t.Run(map[bool]string{false: "Append", true: "AppendVals"}[typed], func(t *testing.T) { testBulkExact(t, typed) })
	}
}

// toVal is v as a Val.
func toVal(v any) Val {
	switch x := v.(type) {
	case string:
		return Text(x)
	case float64:
		return Float(x)
	case int64:
		return Int(x)
	case int32:
		return Int(int64(x))
	case bool:
		return Bool(x)
	case time.Time:
		return Time(x)
	case nil:
		return Null()
	}
	panic(fmt.Sprintf("no Val for %T", v))
}

func testBulkExact(t *testing.T, typed bool) {
	root := t.TempDir()
	ctx := context.Background()
	s, err := NewStage(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if typed {
		if err := s.Key(lake.PerpdexFills, "tid", "wallet"); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat(`{"price":"0.5","size":"1,000"},`, 100_000) // 3 MB in one value
	texts := []any{`a,b`, `say "hi", twice ""`, "line1\nline2\r\nline3\r", "", " padded ", "ünïcødé ✓", `\N`, "NULL", `"`, long, nil}
	floats := []any{0.1, 0.30000000000000004, 66653.0, 5e-324, 2.2250738585072014e-308, math.MaxFloat64, -math.MaxFloat64,
		math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e23, 123456789.12345678, nil}
	times := []time.Time{time.Date(2026, 4, 1, 12, 34, 56, 123456789, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2026, 4, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))}
	type row struct {
		part string
		vals []any
	}
	var rows []row
	n := max(len(texts), len(floats))
	for i := range n {
		tx := texts[i%len(texts)]
		fl := floats[i%len(floats)]
		var liq any
		if i%3 == 0 {
			liq = floats[(i+5)%len(floats)]
		}
		vals := []any{times[i%len(times)], fmt.Sprintf("0x%040x", i), tx, texts[(i+3)%len(texts)], "B", fl, floats[(i+1)%len(floats)],
			"Open Long", floats[(i+2)%len(floats)], -1.5, 0.021351, "USDC", texts[(i+7)%len(texts)], fl, nil, i%2 == 0,
			"0xhash", int64(math.MaxInt64 - i), int64(math.MinInt64 + i), i%4 == 0, liq}
		rows = append(rows, row{[]string{"2026-04-01", "2026-04-02"}[i%2], vals})
	}
	// Through the appender: text given as []byte, an integer as uint64.
	rows = append(rows,
		row{"2026-04-01", []any{times[0], "0xfallback1", []byte("bytes"), "", "A", 1.5, 2.5, "Open Short", 0.0, 0.0, 0.0, "USDC",
			nil, nil, nil, false, "0xh", int64(1), int64(2), false, nil}},
		row{"2026-04-02", []any{times[1], "0xfallback2", "ok", "", "A", 1.5, 2.5, "Open Short", 0.0, 0.0, 0.0, "USDC",
			nil, nil, nil, true, "0xh", uint64(7), int64(2), false, nil}})
	for i, r := range rows {
		if typed && i < n {
			tv := make([]Val, len(r.vals))
			for j, v := range r.vals {
				tv[j] = toVal(v)
			}
			if err := s.AppendVals(lake.PerpdexFills, []string{r.part}, tv...); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := s.Append(lake.PerpdexFills, []string{r.part}, r.vals...); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Staged(lake.PerpdexFills); got != int64(len(rows)) {
		t.Fatalf("staged %d rows, want %d", got, len(rows))
	}
	ms, err := s.Merge(ctx, lake.PerpdexFills, []string{"tid", "wallet"})
	if err != nil {
		t.Fatal(err)
	}
	if ms.Written != int64(len(rows)) || ms.Deduplicated != 0 || len(ms.Partitions) != 2 {
		t.Fatalf("merge: %+v", ms)
	}
	stored := map[string][]any{}
	for _, d := range []string{"2026-04-01", "2026-04-02"} {
		for _, r := range readRows(t, filepath.Join(root, "perpdex/fills/date="+d+"/fills.parquet"), "wallet") {
			stored[d+" "+r[1].(string)] = r
		}
	}
	if len(stored) != len(rows) {
		t.Fatalf("%d rows stored, want %d", len(stored), len(rows))
	}
	for _, r := range rows {
		got := stored[r.part+" "+r.vals[1].(string)]
		if got == nil {
			t.Fatalf("row %s missing from %s", r.vals[1], r.part)
		}
		for i, want := range r.vals {
			switch x := want.(type) {
			case uint64:
				want = int64(x)
			case []byte:
				want = string(x)
			}
			if !same(want, got[i]) {
				w, g := fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", got[i])
				t.Errorf("%s %s: staged %.80s, stored %.80s", r.vals[1], lake.PerpdexFills.Columns[i].Name, w, g)
			}
		}
	}
}

// TestMergeDedupesStagedAndReplacesStored: staged rows that share a key keep the
// latest; a staged row replaces the stored row with its key, a NULL key included
// (NULL matches NULL, as the key's PARTITION BY groups them); stored rows of other
// keys and other partitions are kept; the counts say what happened.
func TestMergeDedupesStagedAndReplacesStored(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	tb := lake.PredmktTrades // partitioned by date, key trade_id
	type tr struct {
		date, id string
		usd      float64
	}
	merge := func(rows ...tr) MergeStats {
		t.Helper()
		s, err := NewStage(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, r := range rows {
			var id any = r.id
			if r.id == "" {
				id = nil
			}
			if err := s.Append(tb, []string{r.date}, id, int64(1), int64(2), int64(3), "tok", "0xc", int32(0), "0xw",
				"taker", "BUY", 0.5, 2.0, r.usd, "0xtx"); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := s.Merge(ctx, tb, []string{"trade_id"})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	read := func(date string) map[string]float64 {
		out := map[string]float64{}
		for _, r := range readRows(t, filepath.Join(root, "archive/venue=predmkt/date="+date+"/trades.parquet"), "trade_id") {
			id, _ := r[0].(string)
			if r[0] == nil {
				id = "NULL"
			}
			if _, dup := out[id]; dup {
				t.Fatalf("%s: trade %s stored twice", date, id)
			}
			out[id] = r[12].(float64)
		}
		return out
	}
	ms := merge(tr{"2026-03-09", "a", 1}, tr{"2026-03-09", "b", 1}, tr{"2026-03-09", "a", 2}, tr{"2026-03-09", "", 1},
		tr{"2026-03-09", "", 2}, tr{"2026-03-10", "x", 1})
	if ms.Written != 4 || ms.Deduplicated != 2 {
		t.Fatalf("first merge: %+v", ms)
	}
	if got := read("2026-03-09"); fmt.Sprint(got) != fmt.Sprint(map[string]float64{"a": 2, "b": 1, "NULL": 2}) {
		t.Fatalf("first merge stored %v", got)
	}
	// Into the stored partition: b and NULL replaced (b twice in the batch: the later
	// wins), c added, a kept; the other day untouched.
	ms = merge(tr{"2026-03-09", "b", 5}, tr{"2026-03-09", "", 6}, tr{"2026-03-09", "b", 7}, tr{"2026-03-09", "c", 1})
	if ms.Written != 1 || ms.Deduplicated != 3 || len(ms.Partitions) != 1 {
		t.Fatalf("second merge: %+v", ms)
	}
	if got := read("2026-03-09"); fmt.Sprint(got) != fmt.Sprint(map[string]float64{"a": 2, "b": 7, "NULL": 6, "c": 1}) {
		t.Fatalf("second merge stored %v", got)
	}
	if got := read("2026-03-10"); fmt.Sprint(got) != fmt.Sprint(map[string]float64{"x": 1}) {
		t.Fatalf("other day %v", got)
	}
}

// TestBulkFilesReopenAndRollBack: with one bulk file open at a time, every row closes
// one file and reopens another (two tables interleaved, an appender row between
// them); a savepoint and a mark taken mid-way drop exactly the rows after them,
// whether those were in a closed file, an open one, or the staging table; what is
// merged is every other row.
func TestBulkFilesReopenAndRollBack(t *testing.T) {
	old := maxOpenParts
	maxOpenParts = 1
	defer func() { maxOpenParts = old }()
	root := t.TempDir()
	ctx := context.Background()
	s, err := NewStage(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	profile := func(i int) error {
		return s.Append(lake.PredmktProfiles, nil, fmt.Sprintf("0x%04d", i), "p", fmt.Sprintf("name, %d", i))
	}
	trade := func(i int) error {
		var id any = fmt.Sprintf("t%04d", i)
		if i == 150 {
			id = []byte("t0150") // through the appender
		}
		return s.Append(lake.PredmktTrades, []string{"2026-03-09"}, id, int64(i), int64(i), int64(i), "tok", "0xc", int32(0),
			"0xw", "taker", "BUY", 0.5, 2.0, 1.0, "0xtx")
	}
	add := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := profile(i); err != nil {
				t.Fatal(err)
			}
			if err := trade(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(0, 200)
	sp := s.Savepoint()
	add(200, 300)
	if err := s.RollbackTo(ctx, sp); err != nil {
		t.Fatal(err)
	}
	add(300, 400)
	mark := s.Mark()
	add(400, 450)
	if err := s.Rollback(ctx, mark); err != nil {
		t.Fatal(err)
	}
	add(450, 460)
	if s.Staged(lake.PredmktProfiles) != 310 || s.Staged(lake.PredmktTrades) != 310 {
		t.Fatalf("staged %d profiles, %d trades; want 310 each", s.Staged(lake.PredmktProfiles), s.Staged(lake.PredmktTrades))
	}
	for _, m := range []struct {
		t   *lake.Table
		key string
		rel string
	}{{lake.PredmktProfiles, "wallet", "predmkt/profiles/profiles.parquet"}, {lake.PredmktTrades, "trade_id", "archive/venue=predmkt/date=2026-03-09/trades.parquet"}} {
		ms, err := s.Merge(ctx, m.t, []string{m.key})
		if err != nil {
			t.Fatal(err)
		}
		if ms.Written != 310 {
			t.Fatalf("%s: %+v", m.t.Name, ms)
		}
		rows := readRows(t, filepath.Join(root, m.rel), m.key)
		var got []string
		for _, r := range rows {
			got = append(got, r[0].(string))
		}
		var want []string
		for i := range 460 {
			if i < 200 || (i >= 300 && i < 400) || i >= 450 {
				want = append(want, fmt.Sprintf(map[string]string{"wallet": "0x%04d", "trade_id": "t%04d"}[m.key], i))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s stored %v\nwant %v", m.t.Name, got, want)
		}
	}
	if rows := readRows(t, filepath.Join(root, "predmkt/profiles/profiles.parquet"), "wallet"); rows[0][2] != "name, 0" {
		t.Fatalf("profile %v", rows[0])
	}
}

// TestMergeAfterEverythingRolledBack: a table whose staged rows were all rolled back
// merges to nothing (no file, no error), partitioned or not.
func TestMergeAfterEverythingRolledBack(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s, err := NewStage(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mark := s.Mark()
	if err := s.Append(lake.PredmktProfiles, nil, "0xa", "p", "A"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(lake.PredmktTrades, []string{"2026-03-09"}, "t1", int64(1), int64(1), int64(1), "tok", "0xc", int32(0),
		"0xw", "taker", "BUY", 0.5, 2.0, 1.0, "0xtx"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rollback(ctx, mark); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		t   *lake.Table
		key string
	}{{lake.PredmktProfiles, "wallet"}, {lake.PredmktTrades, "trade_id"}} {
		ms, err := s.Merge(ctx, m.t, []string{m.key})
		if err != nil || ms.Written != 0 || len(ms.Partitions) != 0 {
			t.Fatalf("%s: %+v %v", m.t.Name, ms, err)
		}
	}
}

// TestAppendCopiesTheRow: the writer formats rows after Append returns, so Append
// copies them: a caller reusing one values slice and one partition array for every
// row (as the on-chain loader does with its partition) stores every row as given.
func TestAppendCopiesTheRow(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s, err := NewStage(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vals := make([]any, 14)
	var part [1]string
	for i := range 2000 {
		part[0] = []string{"2026-03-09", "2026-03-10"}[i/1000]
		copy(vals, []any{fmt.Sprintf("t%04d", i), int64(i), int64(i), int64(i), "tok", "0xc", int32(0), "0xw", "taker", "BUY",
			0.5, 2.0, float64(i), "0xtx"})
		if err := s.Append(lake.PredmktTrades, part[:], vals...); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := s.Merge(ctx, lake.PredmktTrades, []string{"trade_id"})
	if err != nil || ms.Written != 2000 {
		t.Fatalf("%+v %v", ms, err)
	}
	for d, date := range []string{"2026-03-09", "2026-03-10"} {
		rows := readRows(t, filepath.Join(root, "archive/venue=predmkt/date="+date+"/trades.parquet"), "trade_id")
		if len(rows) != 1000 {
			t.Fatalf("%s: %d rows", date, len(rows))
		}
		for j, r := range rows {
			i := d*1000 + j
			if r[0] != fmt.Sprintf("t%04d", i) || r[12] != float64(i) {
				t.Fatalf("%s row %d: %v", date, j, r)
			}
		}
	}
}
