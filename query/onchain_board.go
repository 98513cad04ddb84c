package query

import (
	"context"
	"sync"
	"time"
)

// ocHourly caches one value per key (a chain and window) for the current board hour,
// built in the background: when the hour turns, the previous hour's value is served
// while the new one builds, so no request waits for an hourly rebuild. Only the first
// request for a key (before OnchainWarm built it), one after the store sat idle for
// more than an hour, or one after the lake's transfer or label files changed waits for
// a build. A value is tied to the legs it was built from (their file signature).
type ocHourly[T any] struct {
	name    string // for the log
	mu      sync.Mutex
	cur     map[string]ocHourVal[T]
	pending map[string]*ocHourBuild[T]
}

type ocHourVal[T any] struct {
	at  time.Time
	sig string
	v   T
}

type ocHourBuild[T any] struct {
	at   time.Time
	sig  string
	done chan struct{}
	v    T
	err  error
}

func newOcHourly[T any](name string) *ocHourly[T] {
	return &ocHourly[T]{name: name, cur: map[string]ocHourVal[T]{}, pending: map[string]*ocHourBuild[T]{}}
}

// ocBoardHour is the hour a board answering at now is as of: the start of now's hour.
func ocBoardHour(now time.Time) time.Time { return now.UTC().Truncate(time.Hour) }

// get returns key's value for hour at (or the previous hour's while at's builds).
func (h *ocHourly[T]) get(ctx context.Context, q *Queries, key string, at time.Time,
	build func(ctx context.Context, at time.Time) (T, error)) (T, error) {
	sig := q.onchainSig()
	h.mu.Lock()
	cur, ok := h.cur[key]
	if ok && cur.sig == sig && cur.at.Equal(at) {
		h.mu.Unlock()
		return cur.v, nil
	}
	bl := h.pending[key]
	if bl == nil || !bl.at.Equal(at) || bl.sig != sig {
		bl = &ocHourBuild[T]{at: at, sig: sig, done: make(chan struct{})}
		h.pending[key] = bl
		// The build is not the request's: it outlives a cancelled request.
		go h.run(context.WithoutCancel(ctx), q, key, bl, build)
	}
	h.mu.Unlock()
	if ok && cur.sig == sig && cur.at.Equal(at.Add(-time.Hour)) {
		return cur.v, nil
	}
	select {
	case <-bl.done:
		return bl.v, bl.err
	case <-ctx.Done():
		var zero T
		return zero, wrap(ctx, h.name, ctx.Err())
	}
}

func (h *ocHourly[T]) run(ctx context.Context, q *Queries, key string, bl *ocHourBuild[T],
	build func(ctx context.Context, at time.Time) (T, error)) {
	defer close(bl.done)
	bctx, cancel := context.WithTimeout(ctx, OnchainLegsBuildTimeout)
	defer cancel()
	bl.v, bl.err = build(bctx, bl.at)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending[key] == bl {
		delete(h.pending, key)
	}
	if bl.err != nil {
		q.log.Error(h.name+" build", "key", key, "hour", bl.at, "err", bl.err)
		return
	}
	if cur, ok := h.cur[key]; !ok || cur.sig != bl.sig || !bl.at.Before(cur.at) {
		h.cur[key] = ocHourVal[T]{bl.at, bl.sig, bl.v}
	}
}

// onchainSig is the file signature the in-memory legs were last built from ("" before
// the first build).
func (q *Queries) onchainSig() string {
	v, _ := q.ext.LoadOrStore(legsKey{}, &legsState{})
	if s := v.(*legsState).sig.Load(); s != nil {
		return *s
	}
	return ""
}

// OnchainWarm builds the in-memory legs, the side tables and the current hour's
// boards: every screener board (chain, window, smart_money_only), every discover board
// (ethereum and bsc, each window), the 30d trace pair board of each chain (trace's
// default window), the holders board and the four transfers boards of each chain, and
// the labels board. Call it at start and at each hour turn so requests never wait for
// a build (a request for a board not built yet builds it, waiting once).
func (q *Queries) OnchainWarm(ctx context.Context) error {
	if err := q.onchainLegs(ctx); err != nil {
		return err
	}
	if err := q.onchainSide(ctx); err != nil {
		return err
	}
	at := ocBoardHour(q.Now())
	for _, chain := range OnchainChains {
		for _, w := range []string{"24h", "7d", "30d", "90d"} {
			for _, smart := range []bool{false, true} {
				if _, err := q.onchainScreenerBoard(ctx, chain, w, smart, at); err != nil {
					return err
				}
			}
		}
	}
	for _, chain := range []string{"ethereum", "bsc"} {
		for _, w := range []string{"24h", "7d", "30d", "90d", "all"} {
			if _, err := q.OnchainDiscover(ctx, OnchainDiscoverParams{Chain: chain, Window: w, Sort: "volume", Order: "desc", Size: 1}); err != nil {
				return err
			}
		}
	}
	for _, chain := range OnchainChains {
		if _, err := q.onchainTracePairs(ctx, chain, "30d"); err != nil {
			return err
		}
	}
	for _, chain := range OnchainChains {
		if _, err := q.OnchainTokenHolders(ctx, chain, OnchainZeroAddress, 1); err != nil {
			return err
		}
		for _, period := range []string{"1h", "24h", "7d", "30d"} {
			if _, err := q.tokenTransfersFromBoard(ctx, OnchainTokenTransfersParams{
				Token: OnchainZeroAddress, Chain: chain, Period: period, Tab: "sold"}); err != nil {
				return err
			}
		}
	}
	_, err := q.OnchainLabelsBatch(ctx, []string{OnchainZeroAddress})
	return err
}
