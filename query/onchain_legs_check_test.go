package query

import (
	"context"
	"os"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// A server (ServeStale) answers on-chain requests without waiting for the legs'
// once-a-second freshness check: the check, a stat of every transfers partition and
// three sidecars, runs aside, and a changed transfers file is still found and
// published by it. The offline CLI (no ServeStale) checks before answering.
func TestServeStaleChecksLegsAside(t *testing.T) {
	for _, stale := range []bool{true, false} {
		t.Run(map[bool]string{true: "serve", false: "offline"}[stale], func(t *testing.T) {
			dir := testlake.Copy(t)
			q, err := Open(context.Background(), dir, Options{Now: testlake.Now, NoGoLimit: true, ServeStale: stale})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			ctx := context.Background()
			if err := q.onchainLegs(ctx); err != nil { // the first check answers before the request
				t.Fatal(err)
			}
			v, _ := q.ext.Load(legsKey{})
			st := v.(*legsState)
			if st.checked.Load() == 0 {
				t.Fatal("the first check did not record the legs as current")
			}
			// A transfers file changes; the next check is due; the check blocks until
			// released.
			files, err := lake.OnchainTransfers.Files(dir)
			if err != nil || len(files) == 0 {
				t.Fatal(files, err)
			}
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(files[len(files)-1], later, later); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			started := make(chan struct{}, 16)
			q.legsCheck = func() {
				select {
				case started <- struct{}{}:
				default:
				}
				<-release
			}
			st.checked.Store(1)
			done := make(chan error, 1)
			go func() { done <- q.onchainLegs(ctx) }()
			<-started
			if stale {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(20 * time.Second):
					close(release)
					t.Fatal("a request waited for the legs' freshness check")
				}
				// A second request while the check runs starts no other.
				if err := q.onchainLegs(ctx); err != nil {
					t.Fatal(err)
				}
				select {
				case <-started:
					t.Fatal("two checks ran at once")
				default:
				}
			} else {
				select {
				case <-done:
					t.Fatal("the offline store answered before its check")
				case <-time.After(200 * time.Millisecond):
				}
			}
			close(release)
			if !stale {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			// The change is published: by the check itself offline, by the publication
			// the background check started for a server (bounded wait).
			for i := 0; ; i++ {
				cur, err := q.onchainLegsCurrent()
				if err != nil {
					t.Fatal(err)
				}
				if cur {
					break
				}
				if i == 600 {
					t.Fatal("the changed transfers file was not published within a minute")
				}
				time.Sleep(100 * time.Millisecond)
				if err := q.onchainLegs(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
