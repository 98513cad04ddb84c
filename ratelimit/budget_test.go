package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a fake clock tests move by hand.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC).Unix())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(c.t.Load(), 0).UTC() }
func (c *clock) Advance(d time.Duration) { c.t.Add(int64(d / time.Second)) }

// backend makes Counters that share state when called twice with the same test (two
// "processes" on one lake or one Redis).
type backend struct {
	name string
	open func(t *testing.T) func() Counters
}

func backends(t *testing.T) []backend {
	bs := []backend{{"sqlite", func(t *testing.T) func() Counters {
		dir := t.TempDir()
		return func() Counters {
			s, err := Open(dir) // a separate *sql.DB per "process"
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Counters()
		}
	}}}
	if url := redisURL(t); url != "" {
		bs = append(bs, backend{"redis", func(t *testing.T) func() Counters {
			prefix := fmt.Sprintf("mdq:test:%s:%d:", t.Name(), time.Now().UnixNano())
			return func() Counters {
				r, err := NewRedisCounters(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				r.prefix = prefix
				t.Cleanup(func() { r.Close() })
				return r
			}
		}})
	}
	return bs
}

var redisAddr struct {
	url  string
	done bool
}

// redisURL starts one redis-server for the test binary on 127.0.0.1 and a free
// port. Without redis-server the Redis cases are skipped, except under CI=true.
func redisURL(t *testing.T) string {
	t.Helper()
	if redisAddr.done {
		return redisAddr.url
	}
	redisAddr.done = true
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (CI=true requires it): apt-get install -y redis-server")
		}
		t.Log("redis-server not installed: skipping the Redis backend cases (apt-get install -y redis-server)")
		return ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	redisProc = cmd
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	for i := 0; i < 200; i++ {
		if r, err := NewRedisCounters(context.Background(), url); err == nil {
			r.Close()
			redisAddr.url = url
			return url
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("redis-server did not answer")
	return ""
}

var redisProc *exec.Cmd

func TestMain(m *testing.M) {
	code := m.Run()
	if redisProc != nil && redisProc.Process != nil {
		redisProc.Process.Kill() //nolint:errcheck
		redisProc.Wait()         //nolint:errcheck
	}
	os.Exit(code)
}

func newLimiter(c Counters, clk *clock, limit int) *Limiter {
	l := NewLimiter(c, nil, limit)
	l.Now = clk.Now
	return l
}

var alice = Principal{CredentialID: "aaaaaaaaaaaa", Kind: KindAPIKey, User: "alice"}

func TestBudgetExactLimit(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			l := newLimiter(b.open(t)(), clk, DefaultHourlyLimit)
			var d Decision
			for i := 1; i <= 20_000; i++ {
				d, _ = l.Spend(ctx, alice, 1)
				if !d.Allowed {
					t.Fatalf("request %d refused", i)
				}
				if i%5000 == 0 {
					clk.Advance(time.Second)
					if err := l.Sync(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			if d.Remaining != 0 || d.Limit != 20_000 {
				t.Fatalf("20,000th: remaining %d limit %d, want 0 and 20000", d.Remaining, d.Limit)
			}
			d, _ = l.Spend(ctx, alice, 1)
			if d.Allowed {
				t.Fatal("20,001st request admitted")
			}
			start := newClock().Now()
			if want := start.Add(time.Hour); !d.Reset.Equal(want) {
				t.Fatalf("reset %v, want %v (the oldest request leaves the window)", d.Reset, want)
			}
			if err := l.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if u := l.used(alice); u != 20_001 {
				t.Fatalf("used %d after a refused request, want 20001 (a refused request is counted)", u)
			}
		})
	}
}

func TestBudgetWindowSlides(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			t0 := clk.Now()
			l := newLimiter(b.open(t)(), clk, 3)
			spend := func(want bool) Decision {
				t.Helper()
				d, err := l.Spend(ctx, alice, 1)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed != want {
					t.Fatalf("at +%s: allowed %v, want %v", clk.Now().Sub(t0), d.Allowed, want)
				}
				return d
			}
			spend(true)
			spend(true)
			clk.Advance(30 * time.Minute)
			spend(true)
			l.Sync(ctx) //nolint:errcheck
			clk.Advance(time.Second)
			d := spend(false) // counted though refused
			if !d.Reset.Equal(t0.Add(time.Hour)) {
				t.Fatalf("reset %v, want %v", d.Reset, t0.Add(time.Hour))
			}
			// One second before the first two leave: still full.
			clk.Advance(30*time.Minute - 2*time.Second)
			spend(false)
			// At t0+1h the first two left; the refused ones still count: 1 + 2 refused + 1.
			clk.Advance(time.Second)
			if err := l.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			spend(false)
			// When the 30-minute request and both refusals leave, the window is empty.
			clk.Advance(time.Hour)
			d = spend(true)
			if d.Remaining != 2 {
				t.Fatalf("remaining %d, want 2", d.Remaining)
			}
		})
	}
}

func TestBudgetPooledOAuth(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetClock(clk.Now)
	_, tok1, _ := s.IssueToken(ctx, "bob", time.Hour)
	_, tok2, _ := s.IssueToken(ctx, "bob", time.Hour)
	_, key1, _ := s.CreateKey(ctx, "bob", "a")
	_, key2, _ := s.CreateKey(ctx, "bob", "b")
	p1, err := s.Authenticate(ctx, "", tok1)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := s.Authenticate(ctx, "", tok2)
	k1, _ := s.Authenticate(ctx, key1, "")
	k2, _ := s.Authenticate(ctx, key2, "")
	if p1.BudgetKey() != p2.BudgetKey() || p1.CredentialID == p2.CredentialID {
		t.Fatalf("tokens of one user: %+v %+v", p1, p2)
	}
	l := newLimiter(s.Counters(), clk, 4)
	for i, p := range []Principal{p1, p2, p1, p2} {
		if d, _ := l.Spend(ctx, p, 1); !d.Allowed {
			t.Fatalf("pooled request %d refused", i+1)
		}
	}
	if d, _ := l.Spend(ctx, p2, 1); d.Allowed {
		t.Fatal("5th pooled request admitted: tokens of one user must share a counter")
	}
	// Each API key has its own counter, untouched by the pool and by each other.
	for i := 0; i < 4; i++ {
		if d, _ := l.Spend(ctx, k1, 1); !d.Allowed {
			t.Fatal("key 1 refused")
		}
	}
	if d, _ := l.Spend(ctx, k2, 1); !d.Allowed || d.Remaining != 3 {
		t.Fatalf("key 2: %+v", d)
	}
}

// TestBudgetTwoProcesses runs two limiters over one shared store, alternating bursts
// of 10 and syncing after each round. Tolerance: a process cannot see the other's
// requests since the other's last Sync, so the pair admits at most one burst (10)
// over the limit.
func TestBudgetTwoProcesses(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			open := b.open(t)
			a, bb := newLimiter(open(), clk, 1000), newLimiter(open(), clk, 1000)
			admitted := 0
			for round := 0; round < 200; round++ {
				for _, l := range []*Limiter{a, bb} {
					for i := 0; i < 10; i++ {
						if d, _ := l.Spend(ctx, alice, 1); d.Allowed {
							admitted++
						}
					}
				}
				if err := a.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				if err := bb.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				clk.Advance(time.Second)
			}
			a.Sync(ctx) //nolint:errcheck // a last read of b's last round
			if admitted < 1000 || admitted > 1010 {
				t.Fatalf("two processes admitted %d, want 1000 to 1010", admitted)
			}
			if ua, ub := a.used(alice), bb.used(alice); ua != 4000 || ub != 4000 {
				t.Fatalf("after sync both must see 4000 requests: %d and %d", ua, ub)
			}
		})
	}
}

func TestBudgetSurvivesRestart(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			open := b.open(t)
			l := newLimiter(open(), clk, 10)
			for i := 0; i < 7; i++ {
				l.Spend(ctx, alice, 1) //nolint:errcheck
			}
			if err := l.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			clk.Advance(10 * time.Second)
			l2 := newLimiter(open(), clk, 10)
			if d := l2.Peek(ctx, alice); d.Remaining != 3 {
				t.Fatalf("after restart remaining %d, want 3", d.Remaining)
			}
		})
	}
}

type flaky struct {
	Counters
	fail bool
}

func (f *flaky) Sync(ctx context.Context, push map[string][]Bucket, pull []string, since int64) (map[string][]Bucket, error) {
	if f.fail {
		return nil, errors.New("store down")
	}
	return f.Counters.Sync(ctx, push, pull, since)
}

func TestBudgetFailedRefreshKeepsCounts(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := newLimiter(s.Counters(), clk, 10)
	for i := 0; i < 6; i++ {
		other.Spend(ctx, alice, 1) //nolint:errcheck
	}
	other.Sync(ctx) //nolint:errcheck
	f := &flaky{Counters: s.Counters()}
	l := newLimiter(f, clk, 10)
	l.Spend(ctx, alice, 1) //nolint:errcheck
	f.fail = true
	if err := l.Sync(ctx); err == nil {
		t.Fatal("sync must report the failure")
	}
	// The last known shared count (6) and the unsynced local one still count.
	if d, _ := l.Spend(ctx, alice, 1); d.Remaining != 2 {
		t.Fatalf("remaining %d, want 2", d.Remaining)
	}
	f.fail = false
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	other.Sync(ctx) //nolint:errcheck
	if u := other.used(alice); u != 8 {
		t.Fatalf("local counts retried after the failure: other sees %d, want 8", u)
	}
}

func TestCreditsAndUsage(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := NewLimiter(s.Counters(), s, 100)
	l.Now = clk.Now
	l.Spend(ctx, alice, 1)               //nolint:errcheck
	l.LogCredits(ctx, alice, "/v1/x", 1) // unsynced
	l.LogCredits(ctx, alice, "/v1/y", 4)
	u, err := l.Usage(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if u.Used != 1 || u.Remaining != 99 || u.Credits.Today != 5 || u.Credits.Total != 5 || u.BudgetKey != "key:aaaaaaaaaaaa" {
		t.Fatalf("usage %+v", u)
	}
	l.RecordDownload(Download{CredentialID: alice.CredentialID, Path: "venue=predmkt/date=2026-11-19/trades.parquet", Bytes: 10, Range: "bytes=0-9", Status: 206})
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(24 * time.Hour)
	l.LogCredits(ctx, alice, "/v1/x", 1)
	u, _ = l.Usage(ctx, alice)
	if u.Credits.Today != 1 || u.Credits.Total != 6 || u.Used != 0 {
		t.Fatalf("next day usage %+v", u)
	}
	ds, err := s.Downloads(ctx)
	if err != nil || len(ds) != 1 || ds[0].Bytes != 10 || ds[0].Range != "bytes=0-9" {
		t.Fatalf("downloads %+v %v", ds, err)
	}
}
