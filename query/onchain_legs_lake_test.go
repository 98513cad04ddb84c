package query_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// legsContent is an order-free digest of every published legs partition of both
// tables, and of the onchain_wallet_edges and _bands files of the version its sidecar names
// (keyed without the version, which names the sources' file signatures):
// partition -> "rows:hash".
func legsContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	for _, tb := range []*lake.Table{lake.OnchainLegs, lake.OnchainLegsByToken} {
		files, err := tb.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			var n int64
			var h string
			if err := db.QueryRow("SELECT count(*), CAST(coalesce(sum(hash(r)::HUGEINT), 0) AS VARCHAR) FROM read_parquet("+lake.QuoteString(f)+") r").Scan(&n, &h); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			rel, _ := filepath.Rel(dir, f)
			out[filepath.ToSlash(rel)] = fmt.Sprintf("%d:%s", n, h)
		}
	}
	var side struct{ Built string }
	if b, err := os.ReadFile(filepath.Join(dir, "onchain", "wallet_edges", "_edges.json")); err == nil {
		if err := json.Unmarshal(b, &side); err != nil || side.Built == "" {
			t.Fatalf("edges sidecar %q: %v", b, err)
		}
		var files []string
		for _, tb := range []*lake.Table{lake.OnchainWalletEdges, lake.OnchainWalletBands} {
			fs, err := tb.Files(dir)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fs...)
		}
		for _, f := range files {
			if !strings.Contains(filepath.ToSlash(f), "/built="+side.Built+"/") {
				continue
			}
			var n int64
			var h string
			if err := db.QueryRow("SELECT count(*), CAST(coalesce(sum(hash(r)::HUGEINT), 0) AS VARCHAR) FROM read_parquet("+lake.QuoteString(f)+", hive_partitioning = false) r").Scan(&n, &h); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[filepath.Base(f)+"/"+filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+filepath.Base(filepath.Dir(f))] = fmt.Sprintf("%d:%s", n, h)
		}
	}
	return out
}

func openStore(t *testing.T, dir string) *query.Queries {
	t.Helper()
	q, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func transferFile(t *testing.T, dir, chain, date string) string {
	t.Helper()
	rel, err := lake.OnchainTransfers.Path(chain, date)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// correctFile replaces a transfers partition with a corrected version (every third row
// dropped, the USD of the rest changed), as a re-ingest of a fixed export would.
func correctFile(t *testing.T, file string) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tmp := file + ".fix"
	if _, err := db.Exec("COPY (SELECT * REPLACE (usd * 1.5 AS usd) FROM read_parquet(" + lake.QuoteString(file) + ") WHERE log_index % 3 <> 0) TO " + lake.QuoteString(tmp) + " (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute) // a different modification time whatever the clock's resolution
	os.Chtimes(file, future, future)
}

// fullRebuild copies dir's lake without its published legs and publishes them whole.
func fullRebuild(t *testing.T, dir string) map[string]string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, "onchain/legs") || strings.HasPrefix(rel, ".tmp") {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	q := openStore(t, dst)
	if _, err := q.PublishOnchainLegs(context.Background()); err != nil {
		t.Fatal(err)
	}
	return legsContent(t, dst)
}

func equalContent(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d partitions, full rebuild %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %s is %s, full rebuild %s", what, k, got[k], v)
		}
	}
}

// TestOnchainLegsIncrementalEqualsFull: after a sequence of incremental publications (a
// day removed, the same day arriving late, a day replaced by a corrected file), the
// published legs equal a full rebuild of the same transfers, and each publication
// recomputed only the partitions whose source changed.
func TestOnchainLegsIncrementalEqualsFull(t *testing.T) {
	dir := testlake.Copy(t)
	ctx := context.Background()
	q := openStore(t, dir)
	first, err := q.PublishOnchainLegs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Written) != first.Partitions || first.Partitions < 20 {
		t.Fatalf("first publication: %+v", first)
	}
	if again, err := q.PublishOnchainLegs(ctx); err != nil || len(again.Written)+len(again.Removed) != 0 {
		t.Fatalf("nothing due, yet: %+v %v", again, err)
	}
	equalContent(t, "first publication", legsContent(t, dir), fullRebuild(t, dir))

	late := transferFile(t, dir, "ethereum", "2026-11-15")
	held := filepath.Join(t.TempDir(), "late.parquet")
	if err := os.Rename(late, held); err != nil {
		t.Fatal(err)
	}
	p, err := q.PublishOnchainLegs(ctx)
	if err != nil || len(p.Written) != 0 || !slices.Equal(p.Removed, []string{"chain=ethereum/date=2026-11-15"}) {
		t.Fatalf("day removed: %+v %v", p, err)
	}
	equalContent(t, "day removed", legsContent(t, dir), fullRebuild(t, dir))

	if err := os.Rename(held, late); err != nil { // the day arrives late
		t.Fatal(err)
	}
	correctFile(t, transferFile(t, dir, "bsc", "2026-11-18")) // and a corrected file
	p, err = q.PublishOnchainLegs(ctx)
	if err != nil || !slices.Equal(p.Written, []string{"chain=bsc/date=2026-11-18", "chain=ethereum/date=2026-11-15"}) || len(p.Removed) != 0 {
		t.Fatalf("late and corrected days: %+v %v", p, err)
	}
	equalContent(t, "late and corrected days", legsContent(t, dir), fullRebuild(t, dir))
}

// TestOnchainLegsCancelledPublicationKeepsPrevious: a publication cancelled at random
// points leaves every legs file either as it was or completely rewritten (never a
// partial or temporary file), and the next publication completes it to the full
// rebuild.
func TestOnchainLegsCancelledPublicationKeepsPrevious(t *testing.T) {
	dir := testlake.Copy(t)
	q := openStore(t, dir)
	if _, err := q.PublishOnchainLegs(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := legsContent(t, dir)
	for _, day := range []string{"2026-11-12", "2026-11-13", "2026-11-14", "2026-11-16", "2026-11-17"} {
		correctFile(t, transferFile(t, dir, "base", day))
	}
	after := fullRebuild(t, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	cancelled := 0
	for i := 0; i < 8; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(400))*time.Millisecond)
		_, err := q.PublishOnchainLegs(ctx)
		cancel()
		if err != nil {
			cancelled++
		}
		got := legsContent(t, dir)
		for k, v := range got {
			if v != before[k] && v != after[k] {
				t.Fatalf("round %d: %s is neither the previous nor the new publication", i, k)
			}
		}
		filepath.Walk(filepath.Join(dir, "onchain"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.Contains(filepath.Base(p), ".tmp-") {
				t.Fatalf("round %d: temporary file left: %s", i, p)
			}
			return nil
		})
		if err == nil {
			// Completed: make the next round cancel a fresh publication again.
			for _, day := range []string{"2026-11-12", "2026-11-16"} {
				correctFile(t, transferFile(t, dir, "base", day))
			}
			before = got
			after = fullRebuild(t, dir)
		}
	}
	if cancelled == 0 {
		t.Fatal("no publication was cancelled; the test did not test cancellation")
	}
	if _, err := q.PublishOnchainLegs(context.Background()); err != nil {
		t.Fatal(err)
	}
	equalContent(t, "after cancellations", legsContent(t, dir), fullRebuild(t, dir))
}
