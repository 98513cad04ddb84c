package query

import (
	"context"
	"runtime"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestGoStateAccountedUnderBudget: after a server's warm of every area on the tiny lake,
// every per-store Go structure is accounted in bytes (the report names the boards, the
// tape index, the on-chain state and the token cache), the estimate is of the order of
// the heap the warm grew (runtime.MemStats), and the total stays within the Go share of
// the smallest budget the store accepts (256 MB).
func TestGoStateAccountedUnderBudget(t *testing.T) {
	ctx := context.Background()
	now := testlake.Now()
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapInuse)
	}
	q, err := Open(ctx, testlake.Copy(t), Options{Now: func() time.Time { return now }, Memory: 256 << 20, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	before := heap()
	for _, warm := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
		if err := warm(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.OnchainWalletBalances(ctx, "ethereum", "0x00000000000000000000000000000000000000ff", 1); err != nil {
		t.Fatal(err)
	}
	grew := heap() - before
	rep := q.GoStateReport()
	names := map[string]int64{}
	for _, u := range rep {
		names[u.Name] = u.Bytes
		t.Logf("%-22s %10d bytes", u.Name, u.Bytes)
	}
	for _, want := range []string{"tapeKey", "boardKey", "sideKey", "legsKey", "screenerBoardKey", "pdBoardStateKey"} {
		if names[want] <= 0 {
			t.Errorf("%s not accounted: %+v", want, rep)
		}
	}
	total := q.GoStateBytes()
	t.Logf("accounted %d bytes, heap grew %d, Go budget %d", total, grew, q.budget.Go)
	if total < grew/4 || total > 4*grew+(1<<20) {
		t.Errorf("accounted %d bytes for a heap that grew %d: the estimate is off", total, grew)
	}
	if total > q.budget.Go {
		t.Errorf("Go-side state %d bytes over the Go budget %d", total, q.budget.Go)
	}
}
