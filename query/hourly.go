package query

import (
	"context"
	"errors"
	"sync"
	"time"
)

// hourly caches one value per key (a chain, a window...) for the current board hour,
// built in the background: when the hour turns, the previous hour's value is served
// while the new one builds, so no request waits for an hourly rebuild. Only the first
// request for a key (before the area's Warm built it), one after the store sat idle
// for more than an hour, or (with sig) one after the files the value was built from
// changed waits for a build. The on-chain boards and the perpetuals boards share it.
type hourly[T any] struct {
	name    string                // for the log
	sig     func(*Queries) string // signature of the files a value depends on; nil: none
	timeout time.Duration         // bound on one build; 0: the build's own
	mu      sync.Mutex
	cur     map[string]hourVal[T]
	pending map[string]*hourBuild[T]
	// past holds, per key, the value of the last past hour a request's as_of asked for
	// (bounded: one value per key beside the serving hour's), so repeated as_of
	// requests in one hour answer from memory like the serving hour's.
	past map[string]hourVal[T]
}

type hourVal[T any] struct {
	at  time.Time
	sig string
	v   T
}

type hourBuild[T any] struct {
	at   time.Time
	sig  string
	done chan struct{}
	v    T
	err  error
}

func newHourly[T any](name string, sig func(*Queries) string, timeout time.Duration) *hourly[T] {
	return &hourly[T]{name: name, sig: sig, timeout: timeout,
		cur: map[string]hourVal[T]{}, pending: map[string]*hourBuild[T]{}, past: map[string]hourVal[T]{}}
}

// get returns key's value for hour at (or the previous hour's while at's builds) and
// the hour it is as of.
func (h *hourly[T]) get(ctx context.Context, q *Queries, key string, at time.Time,
	build func(ctx context.Context, at time.Time) (T, error)) (T, time.Time, error) {
	var sig string
	if h.sig != nil {
		sig = h.sig(q)
	}
	h.mu.Lock()
	cur, ok := h.cur[key]
	if ok && cur.sig == sig && cur.at.Equal(at) {
		h.mu.Unlock()
		recordAsOf(ctx, cur.at)
		return cur.v, cur.at, nil
	}
	if q.asOf {
		// A request's as_of: the value of its own hour (never the previous hour's while
		// it builds): the last past hour asked for is kept beside the serving hour's
		// (never in its place), else it is built (or read from the lake) within the
		// request's budget.
		if p, ok := h.past[key]; ok && p.sig == sig && p.at.Equal(at) {
			h.mu.Unlock()
			recordAsOf(ctx, at)
			return p.v, at, nil
		}
		h.mu.Unlock()
		v, err := build(ctx, at)
		v, err = publishedOnly(q, v, err)
		if err == nil {
			recordAsOf(ctx, at)
			h.mu.Lock()
			h.past[key] = hourVal[T]{at, sig, v}
			h.mu.Unlock()
		}
		return v, at, err
	}
	bl := h.pending[key]
	if bl == nil || !bl.at.Equal(at) || bl.sig != sig {
		bl = &hourBuild[T]{at: at, sig: sig, done: make(chan struct{})}
		h.pending[key] = bl
		// The build is not the request's: it outlives a cancelled request, but not the
		// store (Close cancels it).
		q.background(func(life context.Context) { h.run(life, q, key, bl, build) })
	}
	h.mu.Unlock()
	if ok && cur.sig == sig && cur.at.Equal(at.Add(-time.Hour)) {
		recordAsOf(ctx, cur.at)
		return cur.v, cur.at, nil
	}
	select {
	case <-bl.done:
		if bl.err == nil {
			recordAsOf(ctx, bl.at)
		}
		return bl.v, bl.at, bl.err
	case <-ctx.Done():
		var zero T
		return zero, at, wrap(ctx, h.name, ctx.Err())
	}
}

// value is get without the hour, for callers whose figures do not report it.
func (h *hourly[T]) value(ctx context.Context, q *Queries, key string, at time.Time,
	build func(ctx context.Context, at time.Time) (T, error)) (T, error) {
	v, _, err := h.get(ctx, q, key, at, build)
	return v, err
}

func (h *hourly[T]) run(ctx context.Context, q *Queries, key string, bl *hourBuild[T],
	build func(ctx context.Context, at time.Time) (T, error)) {
	defer close(bl.done)
	ctx = asBuild(ctx)
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max(h.timeout, BuildTimeout))
		defer cancel()
	}
	bl.v, bl.err = build(ctx, bl.at)
	bl.v, bl.err = publishedOnly(q, bl.v, bl.err)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending[key] == bl {
		delete(h.pending, key)
	}
	if errors.Is(bl.err, ErrPublishOnly) {
		return // published; nothing to keep
	}
	if bl.err != nil {
		q.log.Error(h.name+" build", "key", key, "hour", bl.at, "err", bl.err)
		return
	}
	if cur, ok := h.cur[key]; !ok || cur.sig != bl.sig || !bl.at.Before(cur.at) {
		h.cur[key] = hourVal[T]{bl.at, bl.sig, bl.v}
	}
}

// ErrPublishOnly is what a route gets from a publish-only store
// (Options.PublishOnly): its board builds publish a board without reading the rows
// back, so the value a build returns is empty and must not be served as an answer. It
// is not kept either. The warms, which build boards only to publish them, take it as
// success (warmed).
var ErrPublishOnly = errors.New("a publish-only store answers no route (query.Options.PublishOnly)")

// publishedOnly turns a publish-only store's successful build into ErrPublishOnly.
func publishedOnly[T any](q *Queries, v T, err error) (T, error) {
	if err == nil && q.publishOnly {
		var zero T
		return zero, ErrPublishOnly
	}
	return v, err
}

// warmed is a warm's view of a board it asked for: in a publish-only store
// ErrPublishOnly means the board is published.
func warmed(err error) error {
	if errors.Is(err, ErrPublishOnly) {
		return nil
	}
	return err
}
