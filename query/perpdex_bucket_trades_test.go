package query

import (
	"context"
	"reflect"
	"testing"
)

// TestPerpdexBucketTradesSameAsView: a wallet's trades read from its bucket's files are
// the rows the view over every bucket gives, for every wallet of the tiny lake and for
// wallets with no trades (one in a bucket, one outside every bucket).
func TestPerpdexBucketTradesSameAsView(t *testing.T) {
	q := pdBoardQueries(t)
	ctx := context.Background()
	rows, err := q.db.Query("SELECT DISTINCT wallet FROM perpdex_closed_trades ORDER BY wallet")
	if err != nil {
		t.Fatal(err)
	}
	var wallets []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		wallets = append(wallets, w)
	}
	rows.Close()
	if len(wallets) < 16 {
		t.Fatalf("%d wallets with trades", len(wallets))
	}
	wallets = append(wallets, "0x5000000000000000000000000000000000000000", "0xZZ", "")
	for _, w := range wallets {
		got, err := q.perpdexBucketTrades(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.perpdexWalletTradesRead(ctx, perpdexWalletTradesSQL, w)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %d trades from the bucket, %d from the view", w, len(got), len(want))
		}
	}
}
