package query

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// TestWalletSummaryReadsEdgesOnTheirDay: with the lake's edges published, a summary whose
// clock is on their serving date reads them (wallet_edges.sql) and answers exactly as the
// summary reading the segments (wallet.sql) does; a clock on another date, edges of
// other sources, or no edges at all, and the summary reads the segments. (checkWalletEdges
// in TestOnchainWalletLegsEqualPerDateLegs compares the two SQL files at clocks across the
// day, after every kind of publication.)
func TestWalletSummaryReadsEdgesOnTheirDay(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	open := func(now time.Time) *Queries {
		q, err := Open(ctx, dir, Options{Now: func() time.Time { return now }, NoGoLimit: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	q := open(testlake.Now())
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	_, r := q.walletSplit()
	day := testlake.Now().UTC().Format(time.DateOnly)
	through := testlake.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	if d, th := q.WalletEdges(); d != day || th != through || r >= day {
		t.Fatalf("edges published for %q through %q, split to %s; the lake's clock is on %s", d, th, r, day)
	}
	reads := func(now time.Time) bool {
		_, ok := q.walletEdgesSideFor(now)
		return ok
	}
	if !reads(testlake.Now()) {
		t.Fatal("a summary on the edges' serving date does not read them")
	}
	for _, tb := range []*lake.Table{lake.OnchainWalletEdges, lake.OnchainWalletBands} {
		if files, err := tb.Files(dir); err != nil || len(files) < 3 {
			t.Fatalf("%s: %d files (%v)", tb.Name, len(files), err)
		}
	}
	var wallets []string
	rows, err := q.db.QueryContext(ctx, `SELECT wallet FROM onchain_legs GROUP BY wallet ORDER BY count(*) DESC, wallet LIMIT 6`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		rows.Scan(&w) //nolint:errcheck
		wallets = append(wallets, w)
	}
	rows.Close()
	wallets = append(wallets, "0x0000000000000000000000000000000000000001") // never seen
	sidecar := filepath.Join(dir, filepath.FromSlash(walletEdgesFile))
	for _, w := range wallets {
		got, err := q.OnchainWallet(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		// The same store without the sidecar reads the segments.
		if err := os.Rename(sidecar, sidecar+".off"); err != nil {
			t.Fatal(err)
		}
		if reads(testlake.Now()) {
			t.Fatal("edges read without their sidecar")
		}
		want, err := q.OnchainWallet(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(sidecar+".off", sidecar); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: through the edges\n%+v\nthrough the segments\n%+v", w, got, want)
		}
		if w == wallets[0] && got.W7d.TxCount == 0 {
			t.Fatalf("%s: the busiest wallet has no transfers in 7 days: the comparison compares nothing", w)
		}
	}
	// Another date, other sources: the segments.
	if reads(testlake.Now().AddDate(0, 0, -1)) || reads(testlake.Now().AddDate(0, 0, 1)) {
		t.Fatal("edges read on another date than theirs")
	}
	b, err := os.ReadFile(sidecar)
	if err != nil {
		t.Fatal(err)
	}
	var side walletEdgesSide
	if err := json.Unmarshal(b, &side); err != nil {
		t.Fatal(err)
	}
	for _, other := range []walletEdgesSide{{Built: side.Built, Day: side.Day, Through: side.Through, Tag: "000000000000"},
		{Built: side.Built, Day: side.Day, Through: r, Tag: side.Tag}} {
		o, _ := json.Marshal(other)
		if err := os.WriteFile(sidecar, o, 0o644); err != nil {
			t.Fatal(err)
		}
		if reads(testlake.Now()) {
			t.Fatalf("edges read with the sidecar %s", o)
		}
	}
	if err := os.WriteFile(sidecar, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !reads(testlake.Now()) {
		t.Fatal("edges not read with their sidecar back")
	}
}
