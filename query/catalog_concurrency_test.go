package query_test

import (
	"context"
	"sync"
	"testing"

	"mdq/internal/testlake"
	"mdq/query"
)

// TestConcurrentFirstRequestsDefineCatalogOnce: the first requests of a store define
// the per-wallet macros and may recreate the views; run at once from many connections
// they must not fail each other (DuckDB answers two connections replacing the same
// catalog entry with a "write-write conflict", which a request turned into a 503 at
// start under load).
func TestConcurrentFirstRequestsDefineCatalogOnce(t *testing.T) {
	dir := testlake.Copy(t)
	ctx := context.Background()
	opt := query.Options{Now: testlake.Now}
	q0, err := query.Open(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q0.PublishOnchainLegs(ctx); err != nil {
		t.Fatal(err)
	}
	var addr string
	if err := q0.DB().QueryRowContext(ctx, "SELECT from_address FROM onchain_transfers ORDER BY block_time LIMIT 1").Scan(&addr); err != nil {
		t.Fatal(err)
	}
	q0.Close()
	for round := 0; round < 6; round++ {
		q, err := query.Open(ctx, dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if i%4 == 3 {
					errs <- q.Reload(ctx)
					return
				}
				_, err := q.OnchainWallet(ctx, addr)
				errs <- err
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		q.Close()
	}
}
