package query

import (
	"context"
	"sync"
	"time"
)

// pdHourly caches one value per key (a window) for the current board hour, built in
// the background: when the hour turns, the previous hour's value is served while the
// new one builds, so no request waits for an hourly rebuild. Only the first request
// for a key (before PerpdexWarm built it) or one after the store sat idle for more
// than an hour waits for a build. A value is served for at most the hour after its
// own (its figures say which hour they are as of).
type pdHourly[T any] struct {
	name    string // for the log
	mu      sync.Mutex
	cur     map[string]pdHourVal[T]
	pending map[string]*pdHourBuild[T]
}

type pdHourVal[T any] struct {
	at time.Time
	v  T
}

type pdHourBuild[T any] struct {
	at   time.Time
	done chan struct{}
	v    T
	err  error
}

func newPdHourly[T any](name string) *pdHourly[T] {
	return &pdHourly[T]{name: name, cur: map[string]pdHourVal[T]{}, pending: map[string]*pdHourBuild[T]{}}
}

// get returns key's value for hour at (or the previous hour's while at's builds) and
// the hour it is as of.
func (h *pdHourly[T]) get(ctx context.Context, q *Queries, key string, at time.Time,
	build func(ctx context.Context, at time.Time) (T, error)) (T, time.Time, error) {
	h.mu.Lock()
	cur, ok := h.cur[key]
	if ok && cur.at.Equal(at) {
		h.mu.Unlock()
		return cur.v, cur.at, nil
	}
	bl := h.pending[key]
	if bl == nil || !bl.at.Equal(at) {
		bl = &pdHourBuild[T]{at: at, done: make(chan struct{})}
		h.pending[key] = bl
		// The build is not the request's: it outlives a cancelled request.
		go h.run(context.WithoutCancel(ctx), q, key, bl, build)
	}
	h.mu.Unlock()
	if ok && cur.at.Equal(at.Add(-time.Hour)) {
		return cur.v, cur.at, nil
	}
	select {
	case <-bl.done:
		return bl.v, bl.at, bl.err
	case <-ctx.Done():
		var zero T
		return zero, at, wrap(ctx, h.name, ctx.Err())
	}
}

func (h *pdHourly[T]) run(ctx context.Context, q *Queries, key string, bl *pdHourBuild[T],
	build func(ctx context.Context, at time.Time) (T, error)) {
	defer close(bl.done)
	bl.v, bl.err = build(ctx, bl.at)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending[key] == bl {
		delete(h.pending, key)
	}
	if bl.err != nil {
		q.log.Error(h.name+" build", "key", key, "hour", bl.at, "err", bl.err)
		return
	}
	if cur, ok := h.cur[key]; !ok || !bl.at.Before(cur.at) {
		h.cur[key] = pdHourVal[T]{bl.at, bl.v}
	}
}
