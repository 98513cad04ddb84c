package cli_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// cuts holds one `mdq lake cut` of the tiny lake per clock, shared by the tests of this
// binary (a cut rebuilds every derived table: seconds each).
var cuts = struct {
	sync.Mutex
	dirs map[time.Time]string
	root string
}{dirs: map[time.Time]string{}}

// cutAt returns the directory of `mdq lake cut --at at` of the tiny lake.
func cutAt(t *testing.T, at time.Time) string {
	t.Helper()
	cuts.Lock()
	defer cuts.Unlock()
	if d, ok := cuts.dirs[at]; ok {
		return d
	}
	if cuts.root == "" {
		r, err := os.MkdirTemp("", "mdq-cuts-")
		if err != nil {
			t.Fatal(err)
		}
		cuts.root = r
	}
	out := filepath.Join(cuts.root, at.UTC().Format("20060102T150405.000"))
	code, _, errs := run(t, "lake", "cut", "--data", testlake.Tiny(t), "--at", at.UTC().Format(time.RFC3339Nano), "--out", out)
	if code != 0 {
		t.Fatalf("lake cut at %s: %s", at, errs)
	}
	cuts.dirs[at] = out
	return out
}

// TestLakeCutBadInput: the cut refuses what it cannot do, clearly, and writes nothing.
func TestLakeCutBadInput(t *testing.T) {
	src := testlake.Tiny(t)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", t.TempDir() + "/x"}, "--at is required"},
		{[]string{"--at", "yesterday", "--out", t.TempDir() + "/x"}, `--at "yesterday" is not an RFC3339 time`},
		{[]string{"--at", "2026-11-17T00:00:00Z"}, "--out is required"},
		{[]string{"--at", "2026-11-17T00:00:00Z", "--out", full}, "output directory is not empty: " + full},
		{[]string{"--at", "2026-11-17T00:00:00Z", "--out", filepath.Join(src, "cut")}, "is inside the source lake"},
	} {
		code, _, errs := run(t, append([]string{"lake", "cut", "--data", src}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want an error with %q", c.args, code, errs, c.want)
		}
	}
	ents, _ := os.ReadDir(full)
	if len(ents) != 1 {
		t.Errorf("refused cut changed %s: %d entries", full, len(ents))
	}
	code, _, errs := run(t, "lake", "cut", "--data", t.TempDir(), "--at", "2026-11-17T00:00:00Z", "--out", t.TempDir()+"/y")
	if code == 0 || !strings.Contains(errs, "no lake at") {
		t.Errorf("cut of a non-lake: exit %d %q", code, errs)
	}
}

// TestLakeCutKeepsWhatWasKnown: every raw table of the cut holds exactly the source
// rows its rule keeps (counted over the source table's whole glob, not file by file
// as the cut reads it), nothing later; the derived tables are rebuilt for the cut's
// clock; the marker records the cut.
func TestLakeCutKeepsWhatWasKnown(t *testing.T) {
	at := time.Date(2026, 11, 17, 9, 37, 12, 345_000_000, time.UTC)
	src := testlake.Tiny(t)
	dir := cutAt(t, at)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The time column of each raw table, and whether it is epoch ms; "" is whole.
	timeCol := map[string]string{
		"predmkt_markets": "created_ts", "predmkt_resolutions": "resolved_ts", "predmkt_trades": "ts",
		"predmkt_book_events": "local_ts", "predmkt_family_book_events": "local_ts",
		"perpdex_fills": "time", "perpdex_trades": "local_ts", "perpdex_book_events": "local_ts",
		"perpdex_funding": "time", "perpdex_ledger": "time", "perpdex_positions": "snapshot_ts",
		"perpdex_accounts": "snapshot_ts", "perpdex_hype_balances": "as_of", "perpdex_marks": "time", "perpdex_candles": "close_time", "perpdex_funding_rates": "time",
		"perpdex_venue_stats": "ts", "perpdex_vaults": "created_ts", "onchain_transfers": "block_time",
		"onchain_prices": "hour", "onchain_labels": "observed_at", "onchain_ens": "registered_at", "onchain_balances": "as_of",
	}
	count := func(root string, tb *lake.Table, col string) (total, later int64) {
		files, err := tb.Files(root)
		if err != nil || len(files) == 0 {
			return 0, 0
		}
		list := "["
		for i, f := range files {
			if i > 0 {
				list += ","
			}
			list += lake.QuoteString(f)
		}
		list += "]"
		cond := "false"
		if col != "" {
			v := "epoch_ms(" + col + ")"
			if (col == "ts" && tb.Area == "predmkt") || col == "local_ts" {
				v = col
			}
			cond = v + " > " + itoa(at.UnixMilli())
			if col == "time" || col == "block_time" || col == "snapshot_ts" {
				cond = "epoch_us(" + col + ") > " + itoa(at.UnixMicro())
			}
		}
		if err := db.QueryRow("SELECT count(*), count(*) FILTER (WHERE "+cond+") FROM read_parquet("+list+", union_by_name = true)").Scan(&total, &later); err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		return total, later
	}
	kept := 0
	for _, tb := range lake.Tables() {
		if tb.Derived {
			continue
		}
		col := timeCol[tb.Name]
		srcTotal, srcLater := count(src, tb, col)
		gotTotal, gotLater := count(dir, tb, col)
		want := srcTotal - srcLater
		if tb.Name == "predmkt_tokens" {
			// Two tokens per market listed by then.
			var mk int64
			mk, _ = count(dir, lake.PredmktMarkets, "")
			want = 2 * mk
		}
		if gotTotal != want || gotLater != 0 {
			t.Errorf("%s: cut holds %d rows (%d after the cut), want %d of the source's %d", tb.Name, gotTotal, gotLater, want, srcTotal)
		}
		if srcLater > 0 && gotTotal > 0 {
			kept++
		}
	}
	if kept < 10 {
		t.Errorf("only %d tables both kept and dropped rows: the clock does not split the lake", kept)
	}
	// A market whose end is after the cut is not yet closed.
	var closedLater int64
	mk, _ := lake.PredmktMarkets.Files(dir)
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE closed AND epoch_ms(end_ts) > ?) FROM read_parquet(?)", at.UnixMilli(), mk[0]).Scan(&closedLater); err != nil {
		t.Fatal(err)
	}
	if closedLater != 0 {
		t.Errorf("%d markets closed before their end", closedLater)
	}
	// Derived tables were rebuilt for the cut's clock.
	var built time.Time
	bf, _ := lake.PredmktBoard.Files(dir)
	if len(bf) != 1 {
		t.Fatalf("board files: %v", bf)
	}
	if err := db.QueryRow("SELECT max(built_ts) FROM read_parquet(?)", bf[0]).Scan(&built); err != nil {
		t.Fatal(err)
	}
	if !built.Equal(at.Truncate(time.Hour)) {
		t.Errorf("board built for %s, want %s", built, at.Truncate(time.Hour))
	}
	for _, d := range []*lake.Table{lake.PerpdexClosedTrades, lake.OnchainLegs, lake.PerpdexCohortsCurrent} {
		if f, _ := d.Files(dir); len(f) == 0 {
			t.Errorf("derived %s not rebuilt", d.Name)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, lake.MarkerFile))
	if err != nil || !strings.Contains(string(b), `"cut_at": "2026-11-17T09:37:12.345Z"`) {
		t.Errorf("marker: %v %s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp")); err == nil {
		t.Errorf("the cut left its spill directory")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
