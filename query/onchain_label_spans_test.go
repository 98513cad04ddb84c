package query_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// labelRow is one raw label row with its source's priority, for the oracle.
type labelRow struct {
	address, entity, walletType, confidence, risk, source string
	observed                                              *time.Time // nil: known always
	priority                                              int
}

// readLabelRows reads the lake's label rows joined to their sources (a row of an
// unknown source takes no part in the cascade).
func readLabelRows(t *testing.T, dir string) []labelRow {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT l.address, l.entity, l.wallet_type, l.confidence, coalesce(l.risk_flag, ''), l.source, l.observed_at, s.priority
		FROM read_parquet(?) l JOIN read_parquet(?) s USING (source)`,
		filepath.Join(dir, "onchain", "labels", "labels.parquet"), filepath.Join(dir, "onchain", "label_sources", "label_sources.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []labelRow
	for rows.Next() {
		var r labelRow
		var obs sql.NullTime
		if err := rows.Scan(&r.address, &r.entity, &r.walletType, &r.confidence, &r.risk, &r.source, &obs, &r.priority); err != nil {
			t.Fatal(err)
		}
		if obs.Valid {
			o := obs.Time.UTC()
			r.observed = &o
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// cascadeAt is the oracle: per address, among its rows observed at or before at (a row
// without observed_at always counts), the one of the lowest priority, then source.
func cascadeAt(rows []labelRow, at time.Time) map[string]query.Label {
	best := map[string]labelRow{}
	for _, r := range rows {
		if r.observed != nil && r.observed.After(at) {
			continue
		}
		b, ok := best[r.address]
		if !ok || r.priority < b.priority || (r.priority == b.priority && r.source < b.source) {
			best[r.address] = r
		}
	}
	out := make(map[string]query.Label, len(best))
	for a, r := range best {
		out[a] = query.Label{Entity: r.entity, WalletType: r.walletType, Confidence: r.confidence, RiskFlag: r.risk, Source: r.source}
	}
	return out
}

// TestLabelSpansEqualTheCascade: the published onchain_label_spans give, at every clock,
// the label the cascade picks from the raw rows (Go oracle above), for every labelled
// address: before the first observation, at each observation and just before it, and
// after the last. The lake's rows include picks replaced later by better-ranked rows.
func TestLabelSpansEqualTheCascade(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	raw := readLabelRows(t, dir)
	set := map[string]bool{}
	clocks := map[time.Time]bool{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC): true, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC): true}
	for _, r := range raw {
		set[r.address] = true
		if r.observed != nil {
			clocks[*r.observed] = true
			clocks[r.observed.Add(-time.Microsecond)] = true
		}
	}
	addrs := make([]string, 0, len(set))
	for a := range set {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	if len(addrs) < 10 || len(clocks) < 10 {
		t.Fatalf("the lake's labels exercise too little: %d addresses, %d clocks", len(addrs), len(clocks))
	}
	q := openStore(t, dir)
	final := cascadeAt(raw, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	changed := 0 // clocks at which some pick differs from the final one
	for at := range clocks {
		want := cascadeAt(raw, at)
		got, err := q.OnchainLabels(ctx, addrs, at)
		if err != nil {
			t.Fatal(err)
		}
		differs := false
		for _, a := range addrs {
			w, wok := want[a]
			g, gok := got[a]
			if wok != gok || w != g {
				t.Fatalf("label of %s at %s: %+v (%v), oracle %+v (%v)", a, at.Format(time.RFC3339Nano), g, gok, w, wok)
			}
			if f, ok := final[a]; wok && ok && f != w {
				differs = true
			}
		}
		if differs {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no clock where a pick differs from the final one: the lake does not exercise the spans")
	}
}

// TestLabelSpansPublishedOnce: the cascade's spans are a file of the lake, written by the
// first store that needs them; a later store (a fresh process) reads that file without
// writing it again; a corrected labels file makes the next store write it again with the
// correction; with the labels gone, the file goes and no label shows.
func TestLabelSpansPublishedOnce(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	rel, err := lake.OnchainLabelSpans.Path()
	if err != nil {
		t.Fatal(err)
	}
	spans := filepath.Join(dir, filepath.FromSlash(rel))
	os.Remove(spans) //nolint:errcheck // the copy's, if the tiny lake was published
	labels := filepath.Join(dir, "onchain", "labels", "labels.parquet")
	addr := labelledAddress(t, labels)
	late := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	lookup := func() (query.Label, bool) {
		t.Helper()
		q := openStore(t, dir)
		got, err := q.OnchainLabels(ctx, []string{addr}, late)
		if err != nil {
			t.Fatal(err)
		}
		q.Close()
		l, ok := got[addr]
		return l, ok
	}
	first, ok := lookup()
	if !ok {
		t.Fatalf("no label for %s", addr)
	}
	st1, err := os.Stat(spans)
	if err != nil {
		t.Fatalf("spans not published by the first store: %v", err)
	}
	if again, _ := lookup(); again != first {
		t.Fatalf("second store: %+v, first %+v", again, first)
	}
	if st2, err := os.Stat(spans); err != nil || !os.SameFile(st1, st2) || !st2.ModTime().Equal(st1.ModTime()) {
		t.Fatalf("a second store wrote the spans again (%v)", err)
	}

	// A corrected labels file: every entity of addr renamed.
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "labels.parquet")
	if _, err := db.Exec(`COPY (SELECT * REPLACE (CASE WHEN address = ? THEN entity || ' (corrected)' ELSE entity END AS entity)
		FROM read_parquet(?) ORDER BY address, source) TO '`+tmp+`' (FORMAT parquet)`, addr, labels); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Rename(tmp, labels); err != nil {
		t.Fatal(err)
	}
	if l, ok := lookup(); !ok || l.Entity != first.Entity+" (corrected)" {
		t.Fatalf("after the correction: %+v %v, want entity %q", l, ok, first.Entity+" (corrected)")
	}
	if st3, err := os.Stat(spans); err != nil || os.SameFile(st1, st3) {
		t.Fatalf("the spans were not written again after the correction (%v)", err)
	}

	if err := os.Remove(labels); err != nil {
		t.Fatal(err)
	}
	if l, ok := lookup(); ok {
		t.Fatalf("label %+v with no labels file", l)
	}
	if _, err := os.Stat(spans); !os.IsNotExist(err) {
		t.Fatalf("spans left with no labels file: %v", err)
	}
}
