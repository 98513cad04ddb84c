package ratelimit

import (
	"context"
	"testing"
)

// TestBudgetSimultaneousBurstTwoProcesses: two processes on one store that know of
// each other (one Sync each) and then each take a whole limit's worth of requests with
// no Sync in between admit at most the limit together: each reserves in the store
// before admitting. Bound: at most one lease chunk per process (a hundredth of the
// limit) is reserved and not admitted.
func TestBudgetSimultaneousBurstTwoProcesses(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			open := b.open(t)
			const limit = 1000
			a, bb := newLimiter(open(), clk, limit), newLimiter(open(), clk, limit)
			for _, l := range []*Limiter{a, bb, a} { // a sees b on its second Sync
				if err := l.Sync(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if a.peers.Load() != 2 || bb.peers.Load() != 2 {
				t.Fatalf("peers %d and %d, want 2", a.peers.Load(), bb.peers.Load())
			}
			admitted := map[*Limiter]int{}
			for i := 0; i < limit; i++ {
				for _, l := range []*Limiter{a, bb} {
					if d, _ := l.Spend(ctx, alice, 1); d.Allowed {
						admitted[l]++
					}
				}
			}
			total := admitted[a] + admitted[bb]
			chunk := limit / leaseChunks
			if total > limit || total < limit-2*chunk {
				t.Fatalf("the pair admitted %d (%d + %d) of a %d limit, want %d to %d", total, admitted[a], admitted[bb], limit, limit-2*chunk, limit)
			}
			if admitted[a] == 0 || admitted[bb] == 0 {
				t.Fatalf("one process admitted nothing: %d and %d", admitted[a], admitted[bb])
			}
			t.Logf("%s: admitted %d + %d = %d of %d", b.name, admitted[a], admitted[bb], total, limit)
		})
	}
}

// TestBudgetOneProcessNeverReserves: alone on its store a process keeps the exact
// local semantics (no reservation, exactly Limit admitted).
func TestBudgetOneProcessNeverReserves(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := newLimiter(s.Counters(), clk, 50)
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if l.peers.Load() != 1 {
		t.Fatalf("peers %d, want 1", l.peers.Load())
	}
	n := 0
	for i := 0; i < 80; i++ {
		if d, _ := l.Spend(ctx, alice, 1); d.Allowed {
			n++
		}
	}
	if n != 50 {
		t.Fatalf("admitted %d, want 50", n)
	}
}
