package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHourlyLimit is SPEC §8's budget: requests per rolling hour per credential.
const DefaultHourlyLimit = 20_000

// Window is the rolling window of the budget.
const Window = time.Hour

// Bucket is the count of one budget counter in one second (epoch seconds).
type Bucket struct {
	Sec int64
	N   int64
}

// Counters is the shared store behind the per-process counts: SQLite on one machine,
// Redis across machines. Sync adds push (this process's counts since its last
// successful Sync) and returns, for each key of pull, every bucket of all processes
// with Sec > since, ascending.
type Counters interface {
	Sync(ctx context.Context, push map[string][]Bucket, pull []string, since int64) (map[string][]Bucket, error)
	// Reserve atomically adds up to n to key's bucket sec, no more than keeps the
	// window's total (buckets with Sec > since) at most capacity, and returns what it
	// granted and the window's buckets after it.
	Reserve(ctx context.Context, key string, sec, since, n, capacity int64) (int64, []Bucket, error)
	// Peers records process id as alive at now and returns how many processes were
	// alive within peerTTL seconds (this one included).
	Peers(ctx context.Context, id string, now int64) (int, error)
	Close() error
}

// peerTTL is how long a process counts as serving after its last Sync (seconds).
const peerTTL = 5

// Ledger keeps what the budget logs but never enforces: credits and archive downloads.
type Ledger interface {
	AddCredits(ctx context.Context, rows []CreditRow) error
	AddDownloads(ctx context.Context, rows []Download) error
	Credits(ctx context.Context, credentialID, day string) (today, total int64, err error)
}

// CreditRow is credits logged by one credential on one route and UTC day.
type CreditRow struct {
	CredentialID, User, Day, Route string
	Credits, Calls                 int64
}

// Download records one archive response: who, what, how many bytes and which range.
type Download struct {
	Time         time.Time
	CredentialID string // empty for anonymous reads of manifest.json and samples
	Kind         string
	User         string
	Path         string
	Bytes        int64
	Range        string // the Range header as sent; empty for a whole file
	Status       int
}

// Limiter enforces the sliding-hour budget in memory, per process, with no store
// write on the request path. Each counter holds, per second, the requests of every
// process as of the last Sync (shared) plus this process's requests not yet synced
// (local); a request is admitted when shared+local, counting itself, is at most the
// limit. Run calls Sync on a short interval; a failed Sync keeps the last known shared
// counts and retries the local ones next time.
type Limiter struct {
	Limit  int
	Now    func() time.Time
	Log    *slog.Logger
	store  Counters
	ledger Ledger

	id    string       // this process, for Peers
	peers atomic.Int64 // processes serving on the store, as of the last Sync

	mu        sync.Mutex
	counters  map[string]*counter
	credits   map[creditKey]*CreditRow
	downloads []Download

	syncMu sync.Mutex
}

type creditKey struct{ cred, day, route string }

type counter struct {
	shared    []Bucket // all processes, as of the last Sync; ascending
	sharedSum int64
	local     []Bucket // this process, not yet in shared; ascending
	localSum  int64
	loaded    bool
	lastUse   int64
	lease     int64 // units reserved in the store and not yet admitted (several processes)
	leaseSec  int64 // the oldest second a unit of lease was reserved in

	reserveFailed bool // the last Reserve failed: this request falls back to local counting
}

// NewLimiter returns a limiter over store; ledger may be nil.
func NewLimiter(store Counters, ledger Ledger, limit int) *Limiter {
	if limit <= 0 {
		limit = DefaultHourlyLimit
	}
	var id [8]byte
	rand.Read(id[:]) //nolint:errcheck
	return &Limiter{Limit: limit, Now: time.Now, store: store, ledger: ledger, id: hex.EncodeToString(id[:]),
		counters: map[string]*counter{}, credits: map[creditKey]*CreditRow{}}
}

func (l *Limiter) logger() *slog.Logger {
	if l.Log == nil {
		return slog.Default()
	}
	return l.Log
}

var windowSecs = int64(Window / time.Second)

// expire drops buckets that left the window ending at sec: a request in second t
// counts until second t+3599 and leaves at t+3600.
func (c *counter) expire(sec int64) {
	cut := sec - windowSecs
	i := 0
	for i < len(c.shared) && c.shared[i].Sec <= cut {
		c.sharedSum -= c.shared[i].N
		i++
	}
	c.shared = c.shared[i:]
	j := 0
	for j < len(c.local) && c.local[j].Sec <= cut {
		c.localSum -= c.local[j].N
		j++
	}
	c.local = c.local[j:]
}

func (c *counter) add(sec, n int64) {
	if k := len(c.local); k > 0 && c.local[k-1].Sec >= sec {
		c.local[k-1].N += n // a clock that steps back counts in the newest bucket
	} else {
		c.local = append(c.local, Bucket{Sec: sec, N: n})
	}
	c.localSum += n
}

func (c *counter) setShared(b []Bucket, since int64) {
	c.shared = c.shared[:0]
	c.sharedSum = 0
	for _, x := range b {
		if x.Sec > since && x.N != 0 {
			c.shared = append(c.shared, x)
			c.sharedSum += x.N
		}
	}
}

// subtract removes pushed counts from local once the store holds them.
func (c *counter) subtract(pushed []Bucket) {
	for _, p := range pushed {
		for i := range c.local {
			if c.local[i].Sec == p.Sec {
				d := min(p.N, c.local[i].N)
				c.local[i].N -= d
				c.localSum -= d
				break
			}
		}
	}
	out := c.local[:0]
	for _, b := range c.local {
		if b.N != 0 {
			out = append(out, b)
		}
	}
	c.local = out
}

func (c *counter) oldest() (int64, bool) {
	switch {
	case len(c.shared) > 0 && len(c.local) > 0:
		return min(c.shared[0].Sec, c.local[0].Sec), true
	case len(c.shared) > 0:
		return c.shared[0].Sec, true
	case len(c.local) > 0:
		return c.local[0].Sec, true
	}
	return 0, false
}

func (l *Limiter) decision(c *counter, sec int64) Decision {
	used := c.sharedSum + c.localSum
	reset := sec + windowSecs
	if o, ok := c.oldest(); ok {
		reset = o + windowSecs
	}
	return Decision{
		Allowed:   used <= int64(l.Limit),
		Limit:     l.Limit,
		Remaining: int(max(int64(l.Limit)-used, 0)),
		Reset:     time.Unix(reset, 0).UTC(),
	}
}

// counterFor returns the key's counter, loading the key's window from the store the
// first time this process sees it (a read, once per key: counts survive a restart).
// It returns with l.mu held.
func (l *Limiter) counterFor(ctx context.Context, key string, sec int64) *counter {
	l.mu.Lock()
	c := l.counters[key]
	if c != nil && c.loaded {
		return c
	}
	l.mu.Unlock()
	since := sec - windowSecs
	got, err := l.store.Sync(ctx, nil, []string{key}, since)
	if err != nil {
		l.logger().Warn("budget load", "key", key, "err", err)
	}
	l.mu.Lock()
	c = l.counters[key]
	if c == nil {
		c = &counter{}
		l.counters[key] = c
	}
	if !c.loaded {
		if err == nil {
			c.setShared(got[key], since)
		}
		// On a failed load the key counts from zero here until the next Sync reads it.
		c.loaded = true
	}
	return c
}

// Spend counts units against p's budget, then compares: the request is counted
// before the comparison (so exactly Limit are admitted per window) and a refused
// request is itself counted.
//
// While more than one process serves on the store, each admits only units it reserved
// there first (Reserve, a chunk at a time): a simultaneous burst on two processes can
// then not admit the limit twice, since neither sees the other's unsynced counts.
func (l *Limiter) Spend(ctx context.Context, p Principal, units int) (Decision, error) {
	sec := l.Now().Unix()
	key := p.BudgetKey()
	c := l.counterFor(ctx, key, sec)
	defer l.mu.Unlock()
	c.expire(sec)
	c.lastUse = sec
	n := int64(units)
	if l.peers.Load() > 1 {
		if c.lease > 0 && c.leaseSec <= sec-windowSecs {
			c.lease = 0 // reserved so long ago that it left the window
		}
		if c.lease < n {
			c = l.reserve(ctx, key, c, sec, n)
		}
		if c.lease >= n {
			c.lease -= n
			if c.lease == 0 {
				c.leaseSec = 0
			}
			d := l.decision(c, sec)
			d.Allowed = true
			return d, nil
		}
		if c.reserveFailed {
			c.reserveFailed = false
			c.add(sec, n) // the store is unreachable: the local count decides, as with one process
			return l.decision(c, sec), nil
		}
		c.add(sec, n) // refused, and counted like every refused request
		d := l.decision(c, sec)
		d.Allowed = false
		return d, nil
	}
	c.add(sec, n)
	return l.decision(c, sec), nil
}

// reserve asks the store for a chunk of units (at least n) for key, with l.mu released
// during the call; it returns the key's counter with l.mu held again.
func (l *Limiter) reserve(ctx context.Context, key string, c *counter, sec, n int64) *counter {
	want := max(n, int64(l.Limit)/leaseChunks, 1) - c.lease
	// This process's unsynced counts are not in the store yet: they take capacity too.
	capacity := int64(l.Limit) - c.localSum
	since := sec - windowSecs
	l.mu.Unlock()
	granted, buckets, err := l.store.Reserve(ctx, key, sec, since, want, capacity)
	l.mu.Lock()
	if cur := l.counters[key]; cur != nil {
		c = cur
	} else {
		l.counters[key] = c
	}
	if err != nil {
		l.logger().Warn("budget reserve", "key", key, "err", err)
		c.reserveFailed = true
		return c
	}
	if granted > 0 {
		if c.lease == 0 {
			c.leaseSec = sec
		}
		c.lease += granted
	}
	c.setShared(buckets, since)
	c.expire(sec)
	return c
}

// leaseChunks: a reservation asks for a hundredth of the limit, so a process makes
// about a hundred store round trips per window at full use, and at most that much per
// process is reserved but not yet admitted.
const leaseChunks = 100

// Peek returns p's budget without spending.
func (l *Limiter) Peek(ctx context.Context, p Principal) Decision {
	sec := l.Now().Unix()
	c := l.counterFor(ctx, p.BudgetKey(), sec)
	defer l.mu.Unlock()
	c.expire(sec)
	return l.decision(c, sec)
}

// LogCredits records credits spent by p on route; they reach the ledger on the next
// Sync.
func (l *Limiter) LogCredits(_ context.Context, p Principal, route string, credits int) {
	day := l.Now().UTC().Format(time.DateOnly)
	k := creditKey{p.CredentialID, day, route}
	l.mu.Lock()
	r := l.credits[k]
	if r == nil {
		r = &CreditRow{CredentialID: p.CredentialID, User: p.User, Day: day, Route: route}
		l.credits[k] = r
	}
	r.Credits += int64(credits)
	r.Calls++
	l.mu.Unlock()
}

// RecordDownload records an archive download; it never spends budget.
func (l *Limiter) RecordDownload(d Download) {
	l.mu.Lock()
	if len(l.downloads) < 1_000_000 { // bounded while the ledger is unreachable
		l.downloads = append(l.downloads, d)
	}
	l.mu.Unlock()
}

// Usage is the body of GET /v1/usage: the caller's budget, what is left, when it
// resets, and credits spent.
type Usage struct {
	Credential    UsageCredential `json:"credential"`
	BudgetKey     string          `json:"budget_key" doc:"key:<key id> for an API key; user:<user> for OAuth tokens, pooled per user"`
	Limit         int             `json:"limit" doc:"requests per rolling hour"`
	Used          int             `json:"used" doc:"requests counted in the current window, this one included"`
	Remaining     int             `json:"remaining"`
	Reset         int64           `json:"reset" doc:"epoch seconds when the oldest counted request leaves the window"`
	ResetAt       string          `json:"reset_at" doc:"reset as RFC3339"`
	WindowSeconds int             `json:"window_seconds"`
	Credits       UsageCredits    `json:"credits"`
}

// UsageCredential names the caller.
type UsageCredential struct {
	ID   string `json:"id"`
	Kind string `json:"kind" doc:"api_key or oauth"`
	User string `json:"user"`
}

// UsageCredits are credits logged by this credential.
type UsageCredits struct {
	Today int64 `json:"today" doc:"UTC day"`
	Total int64 `json:"total"`
}

// Usage reports p's budget and credits without spending.
func (l *Limiter) Usage(ctx context.Context, p Principal) (Usage, error) {
	d := l.Peek(ctx, p)
	day := l.Now().UTC().Format(time.DateOnly)
	u := Usage{
		Credential: UsageCredential{ID: p.CredentialID, Kind: p.Kind, User: p.User},
		BudgetKey:  p.BudgetKey(), Limit: d.Limit, Used: d.Limit - d.Remaining, Remaining: d.Remaining,
		Reset: d.Reset.Unix(), ResetAt: d.Reset.UTC().Format(time.RFC3339), WindowSeconds: int(windowSecs),
	}
	if !d.Allowed || d.Remaining == 0 {
		u.Used = l.used(p)
	}
	if l.ledger != nil {
		today, total, err := l.ledger.Credits(ctx, p.CredentialID, day)
		if err != nil {
			return u, err
		}
		u.Credits.Today, u.Credits.Total = today, total
	}
	l.mu.Lock()
	for k, r := range l.credits {
		if k.cred == p.CredentialID {
			u.Credits.Total += r.Credits
			if k.day == day {
				u.Credits.Today += r.Credits
			}
		}
	}
	l.mu.Unlock()
	return u, nil
}

func (l *Limiter) used(p Principal) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.counters[p.BudgetKey()]; c != nil {
		return int(c.sharedSum + c.localSum)
	}
	return 0
}

// Sync merges this process's counts into the shared store and reads back every
// process's counts for the keys used here within the window; then it hands credits
// and downloads to the ledger. On failure the local counts stay local (retried next
// time) and the last known shared counts stay in force.
func (l *Limiter) Sync(ctx context.Context) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	sec := l.Now().Unix()
	since := sec - windowSecs

	l.mu.Lock()
	push := map[string][]Bucket{}
	var pull []string
	for k, c := range l.counters {
		c.expire(sec)
		if len(c.local) > 0 {
			push[k] = append([]Bucket(nil), c.local...)
		}
		if c.lastUse > since || len(c.shared) > 0 || len(c.local) > 0 {
			pull = append(pull, k)
		} else {
			delete(l.counters, k) // idle for a whole window: forget, reload on next use
		}
	}
	credits := make([]CreditRow, 0, len(l.credits))
	for _, r := range l.credits {
		credits = append(credits, *r)
	}
	clear(l.credits)
	downloads := l.downloads
	l.downloads = nil
	l.mu.Unlock()
	sort.Strings(pull)

	var errs []error
	if n, err := l.store.Peers(ctx, l.id, sec); err != nil {
		errs = append(errs, err)
	} else {
		l.peers.Store(int64(n))
	}
	got, err := l.store.Sync(ctx, push, pull, since)
	if err != nil {
		errs = append(errs, err)
	} else {
		l.mu.Lock()
		for k, pushed := range push {
			if c := l.counters[k]; c != nil {
				c.subtract(pushed)
			}
		}
		for _, k := range pull {
			if c := l.counters[k]; c != nil {
				c.setShared(got[k], since)
				c.loaded = true
			}
		}
		l.mu.Unlock()
	}

	if l.ledger != nil {
		if len(credits) > 0 {
			if err := l.ledger.AddCredits(ctx, credits); err != nil {
				errs = append(errs, err)
				l.mu.Lock()
				for _, r := range credits {
					k := creditKey{r.CredentialID, r.Day, r.Route}
					if cur := l.credits[k]; cur != nil {
						cur.Credits += r.Credits
						cur.Calls += r.Calls
					} else {
						rr := r
						l.credits[k] = &rr
					}
				}
				l.mu.Unlock()
			}
		}
		if len(downloads) > 0 {
			if err := l.ledger.AddDownloads(ctx, downloads); err != nil {
				errs = append(errs, err)
				l.mu.Lock()
				l.downloads = append(downloads, l.downloads...)
				l.mu.Unlock()
			}
		}
	}
	return errors.Join(errs...)
}

// Run syncs every interval until ctx ends, then syncs once more.
func (l *Limiter) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := l.Sync(fctx); err != nil {
				l.logger().Warn("budget sync", "err", err)
			}
			cancel()
			return
		case <-t.C:
			if err := l.Sync(ctx); err != nil && ctx.Err() == nil {
				l.logger().Warn("budget sync", "err", err)
			}
		}
	}
}
