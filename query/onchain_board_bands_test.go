package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cohortSelect is a cohort SQL file's query without its INSERT.
func cohortSelect(text string) string {
	sel := strings.TrimPrefix(text[strings.Index(text, "INSERT INTO"):], "INSERT INTO onchain_cohort_mem")
	return strings.TrimRight(strings.TrimSpace(sel), ";")
}

// checkHistoryBoards compares, for every chain at board hour at, the smart-money cohort
// and the holders board read as the store reads them (ocBandsFor: from the wallet
// bands on a board hour of their serving date, every leg otherwise; the holders base for
// the holders board, at its cap and at smaller ones) with the queries they replaced,
// which read every leg (testdata/onchain_*_before.sql), row for row (floats by their
// bits). It reports whether the bands were read, and fails when every
// cohort and board is empty (the check would prove nothing).
func checkHistoryBoards(t *testing.T, q *Queries, what string, at time.Time) (bands bool) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := q.onchainSide(context.Background()); err != nil { // the balances the holders board joins
		t.Fatal(err)
	}
	cohortBefore, holdersBefore := cohortSelect(read("onchain_smart_cohort_before.sql")), read("onchain_token_holders_before.sql")
	total := 0
	for _, chain := range OnchainChains {
		b, err := q.ocBandsFor(chain, at, false)
		if err != nil {
			t.Fatal(err)
		}
		bands = bands || b.built != ""
		ctx := fmt.Sprintf("%s at %s, %s (bands %q)", what, at.Format(time.RFC3339), chain, b.built)
		got := queryRows(t, q.db, "SELECT address FROM ("+cohortSelect(onchainSmartCohortSQL)+") ORDER BY address",
			append([]any{chain, micros(at), OnchainSmartMoneyPnL}, b.args()...)...)
		want := queryRows(t, q.db, "SELECT address FROM ("+cohortBefore+") ORDER BY address", chain, micros(at), OnchainSmartMoneyPnL)
		sameBoard(t, ctx+": smart-money cohort", got, want)
		total += len(want)
		// The board's cap, and caps that leave most of a token's pairs out of its head:
		// the base is read for each token's head and the pairs the hour's legs touch.
		for _, limit := range []int{OnchainTokenHoldersCap, 5, 2, 1} {
			got = queryRows(t, q.db, onchainTokenHoldersSQL, append([]any{chain, micros(at), limit}, b.holdersArgs()...)...)
			want = queryRows(t, q.db, holdersBefore, chain, micros(at), limit)
			sameBoard(t, fmt.Sprintf("%s: holders board of %d a token", ctx, limit), got, want)
			total += len(want)
		}
	}
	if total == 0 {
		t.Fatalf("%s at %s: every cohort and holders board empty", what, at.Format(time.RFC3339))
	}
	return bands
}

// TestOnchainBandsOtherLayoutRewritten: wallet segments written by another layout of the
// segment, edges or bands queries (the sidecar names it) are removed and written again
// whole by the next publication, with edges and bands of the new layout, and the boards
// that read the bands then equal the queries over every leg.
func TestOnchainBandsOtherLayoutRewritten(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	side, err := readWalletLegsSide(q.dir)
	if err != nil || side.History == "" || side.Layout != walletLayout {
		t.Fatalf("the first publication's sidecar: %+v %v", side, err)
	}
	side.Layout = "other"
	if err := writeWalletLegsSide(q.dir, side); err != nil {
		t.Fatal(err)
	}
	p, err := q.PublishOnchainLegs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hist := 0
	for _, w := range p.Wallet.Written {
		if strings.HasSuffix(w, "/segment=history") {
			hist++
		}
	}
	if !p.Wallet.Compacted || hist != len(sourceChains(side.Sources)) || p.Wallet.Edges == "" {
		t.Fatalf("another layout's segments not written again whole: %+v", p.Wallet)
	}
	if side, err := readWalletLegsSide(q.dir); err != nil || side.Layout != walletLayout {
		t.Fatalf("sidecar after the rewrite: %+v %v", side, err)
	}
	at := ocBoardHour(q.Now())
	if !checkHistoryBoards(t, q, "after another layout", at) {
		t.Fatalf("the boards at %s did not read the bands", at)
	}
}

// TestOnchainBandsPartlyPriced: tokens priced on some transfers and not on others (a
// price missing for some hours). The demo lake prices a token always or never, so a
// third of the ethereum transfers lose their USD here first. The cohort counts only
// the priced legs' amounts and discover's PnL needs every leg priced; from the bands
// both equal the queries over every leg.
func TestOnchainBandsPartlyPriced(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(q.dir, "onchain", "transfers", "chain=ethereum", "*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("ethereum transfers files: %v %v", files, err)
	}
	for _, f := range files {
		tmp := f + ".tmp.parquet"
		if _, err := q.db.Exec(fmt.Sprintf(`COPY (SELECT * REPLACE (CASE WHEN log_index %% 3 = 0 THEN NULL ELSE usd END AS usd)
			FROM read_parquet('%s')) TO '%s' (FORMAT parquet)`, f, tmp)); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.onchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	var mixed int
	if err := q.db.QueryRow(`SELECT count(*) FROM (SELECT wallet, token FROM onchain_legs WHERE chain = 'ethereum'
		GROUP BY ALL HAVING bool_or(priced) AND NOT bool_and(priced) AND count(*) FILTER (WHERE dir = 1) > 0 AND count(*) FILTER (WHERE dir = -1) > 0)`).Scan(&mixed); err != nil || mixed < 20 {
		t.Fatalf("(wallet, token) pairs with priced and unpriced legs both ways: %d %v", mixed, err)
	}
	at := ocBoardHour(q.Now())
	checkFamilies(t, q, "partly priced", at)
	if !checkHistoryBoards(t, q, "partly priced", at) {
		t.Fatalf("the boards at %s did not read the bands", at)
	}
}
