package query

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mdq/internal/testlake"
)

// memSnapOracle is the in-memory snapshot index /orderbook used before the keys were
// left in the published digests: every digest row read into a per-token run in the
// digest's order, the last key at or before ts per file, the later key across files
// (the first file listed on equal keys). The lookup against the digest files must pick
// exactly what it picked.
func memSnapOracle(t *testing.T, q *Queries, ix *tapeIndex, token string, ts int64) (*tapeBookFile, tapeSnap, bool) {
	t.Helper()
	var f *tapeBookFile
	var s tapeSnap
	ok := false
	for _, bf := range ix.books {
		rows, err := q.db.QueryContext(context.Background(), `SELECT ts, local_ts, seq, "row" FROM read_parquet($1, file_row_number = true, hive_partitioning = false)
			WHERE token_id = $2 ORDER BY file_row_number`, bf.snapsPath, token)
		if err != nil {
			t.Fatal(err)
		}
		var ss []tapeSnap
		for rows.Next() {
			var x tapeSnap
			if err := rows.Scan(&x.ts, &x.local, &x.seq, &x.row); err != nil {
				t.Fatal(err)
			}
			ss = append(ss, x)
		}
		rows.Close()
		i, _ := slices.BinarySearchFunc(ss, ts, func(s tapeSnap, t int64) int {
			if s.ts <= t {
				return -1
			}
			return 1
		})
		if i == 0 {
			continue
		}
		if c := ss[i-1]; !ok || snapAfter(c, s) {
			f, s, ok = bf, c, true
		}
	}
	return f, s, ok
}

// TestTapeSnapshotFromDigestsMatchesMemoryIndex: on the tiny lake, at every snapshot's
// ts, a millisecond before, before the tape and after it, and for a token without
// snapshots, the digest lookup picks the file and row the in-memory index picked.
func TestTapeSnapshotFromDigestsMatchesMemoryIndex(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	ix, err := q.predmktTape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := q.db.QueryContext(ctx, "SELECT token_id, ts FROM predmkt_book_events WHERE event_type = 'book' ORDER BY hash(token_id, ts) LIMIT 150")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		tok string
		ts  int64
	}
	probes := []probe{{"no-such-token", math.MaxInt64}}
	for rows.Next() {
		var p probe
		if err := rows.Scan(&p.tok, &p.ts); err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p, probe{p.tok, p.ts - 1}, probe{p.tok, p.ts + 1}, probe{p.tok, 0}, probe{p.tok, math.MaxInt64})
	}
	rows.Close()
	if len(probes) < 100 {
		t.Fatalf("tiny lake holds %d probes", len(probes))
	}
	for _, p := range probes {
		f, s, ok, err := q.tapeSnapshot(ctx, ix, p.tok, p.ts)
		if err != nil {
			t.Fatal(err)
		}
		wf, ws, wok := memSnapOracle(t, q, ix, p.tok, p.ts)
		if ok != wok || s != ws || f != wf {
			t.Fatalf("%s at %d: digests (%v %+v), memory (%v %+v)", p.tok, p.ts, ok, s, wok, ws)
		}
	}
}

// TestTapeSnapshotFromDigestsEdgeCases: hand-written digests for what the tiny lake
// does not hold: equal keys within a file (the last row in digest order), equal keys
// across files (the first file listed), a file whose rows end before the best key (not
// read, same answer) and a file starting after ts.
func TestTapeSnapshotFromDigestsEdgeCases(t *testing.T) {
	q := openTapeLake(t, testlake.Tiny(t), testlake.Now())
	ctx := context.Background()
	dir := t.TempDir()
	digest := func(name string, rows string) string {
		p := filepath.Join(dir, name)
		sqlText := fmt.Sprintf(`COPY (SELECT * FROM (VALUES %s) v(token_id, ts, local_ts, seq, "row")) TO '%s' (FORMAT parquet)`, rows, p)
		if _, err := q.db.ExecContext(ctx, sqlText); err != nil {
			t.Fatal(err)
		}
		return p
	}
	book := func(name, rows string, minTS, maxTS int64) *tapeBookFile {
		return &tapeBookFile{tapeFile: tapeFile{path: name}, span: tapeSpan{ok: true, minTS: minTS, maxTS: maxTS}, snapsPath: digest(name, rows)}
	}
	a := book("a.parquet", "('X', 10, 11, 1, 0), ('X', 20, 21, 1, 1), ('X', 20, 21, 1, 2), ('Y', 5, 6, 1, 3)", 5, 20)
	b := book("b.parquet", "('X', 20, 21, 1, 7), ('X', 30, 31, 1, 8)", 20, 30)
	c := book("c.parquet", "('X', 3, 4, 1, 9)", 3, 3)
	d := book("d.parquet", "('X', 100, 101, 1, 5)", 100, 100)
	ix := &tapeIndex{books: []*tapeBookFile{a, b, c, d}}
	for _, tc := range []struct {
		tok string
		ts  int64
	}{{"X", 25}, {"X", 20}, {"X", 19}, {"X", 30}, {"X", 9}, {"X", 2}, {"X", 1000}, {"Y", 5}, {"Y", 4}, {"Z", 50}} {
		f, s, ok, err := q.tapeSnapshot(ctx, ix, tc.tok, tc.ts)
		if err != nil {
			t.Fatal(err)
		}
		wf, ws, wok := memSnapOracle(t, q, ix, tc.tok, tc.ts)
		if ok != wok || s != ws || f != wf {
			t.Errorf("%s at %d: digests (%v %+v %v), memory (%v %+v %v)", tc.tok, tc.ts, ok, s, f, wok, ws, wf)
		}
	}
	// The pinned picks: equal keys in a file take its last row, across files the first.
	if f, s, _, _ := q.tapeSnapshot(ctx, ix, "X", 20); f != a || s.row != 2 {
		t.Errorf("X at 20: %v row %d, want a.parquet row 2", f.path, s.row)
	}
}

// TestOrderbookAnswersWhenDigestsGone: a request holding an index whose snapshot digests
// were removed since (a newer index pruned them) answers from orderbook.sql over the
// tape, the same snapshot, rather than failing.
func TestOrderbookAnswersWhenDigestsGone(t *testing.T) {
	q := openTapeLake(t, testlake.Copy(t), testlake.Now())
	ctx := context.Background()
	ix, err := q.predmktTape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok := tapeStrings(t, q, "SELECT token_id FROM predmkt_book_events WHERE event_type = 'book' GROUP BY 1 ORDER BY 1 LIMIT 1")[0]
	for _, f := range ix.books {
		if err := os.Remove(f.snapsPath); err != nil {
			t.Fatal(err)
		}
	}
	ts, bids, asks, found, err := q.orderbookSnapshot(ctx, PredmktOrderbookParams{TokenID: tok, TS: math.MaxInt64, Depth: 25})
	if err != nil {
		t.Fatal(err)
	}
	wts, wb, wa, wfound := orderbookFromSQL(t, q, tok, math.MaxInt64)
	if !found || found != wfound || ts != wts || bids.String != wb || asks.String != wa {
		t.Fatalf("without digests (%v %d), SQL (%v %d)", found, ts, wfound, wts)
	}
}
