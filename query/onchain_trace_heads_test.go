package query

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// TestTraceHeadsAreEachWalletsFirstPairs: trace_heads.sql returns, in file order, the
// first `width` rows of each wallet's run of a pair board (a wallet's pairs are
// contiguous, in rank order), checked against the plain walk of the file: wallets with
// no more, exactly and more than width pairs, spread over several row groups, and a
// width of 1.
func TestTraceHeadsAreEachWalletsFirstPairs(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// 300 wallets with 0 to 24 pairs each (i*7 mod 25), volumes falling along a run.
	type pair struct {
		w, c    string
		out, in float64
		n       int64
		vol     float64
	}
	var board []pair
	var values []string
	for i := range 300 {
		for j := range (i * 7) % 25 {
			p := pair{fmt.Sprintf("0x%040x", i), fmt.Sprintf("0x%040x", 1000+j), float64(100 - j), float64(j), int64(j + 1), float64(200 - j)}
			board = append(board, p)
			values = append(values, fmt.Sprintf("('%s', '%s', %v, %v, %d, %v, %d)", p.w, p.c, p.out, p.in, p.n, p.vol, len(board)))
		}
	}
	path := filepath.Join(t.TempDir(), "board.parquet")
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT wallet, counterparty, out_usd, in_usd, tx_count, volume
		FROM (VALUES %s) v(wallet, counterparty, out_usd, in_usd, tx_count, volume, k) ORDER BY k)
		TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 500)`, strings.Join(values, ", "), path)); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1, OnchainTraceMaxWidth} {
		var want []pair
		run := 0
		for i, p := range board {
			if i == 0 || board[i-1].w != p.w {
				run = 0
			}
			if run < width {
				want = append(want, p)
			}
			run++
		}
		rows, err := db.QueryContext(ctx, onchainTraceHeadsSQL, path, width)
		if err != nil {
			t.Fatal(err)
		}
		var got []pair
		for rows.Next() {
			var p pair
			if err := rows.Scan(&p.w, &p.c, &p.out, &p.in, &p.n, &p.vol); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		rows.Close()
		if len(want) < 250 {
			t.Fatalf("width %d: only %d head rows in the fixture", width, len(want))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("width %d: %d head rows, want %d (first difference shown by index)", width, len(got), len(want))
		}
	}
}
