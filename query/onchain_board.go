package query

import (
	"context"
	"time"
)

// newOcHourly is the on-chain boards' hourly cache: a value is tied to the legs it was
// built from (their file signature), so a changed transfer or label file rebuilds it,
// and one build is bounded like the legs' own.
func newOcHourly[T any](name string) *hourly[T] {
	return newHourly[T](name, (*Queries).onchainSig, OnchainLegsBuildTimeout)
}

// ocBoardHour is the hour a board answering at now is as of: the start of now's hour.
func ocBoardHour(now time.Time) time.Time { return now.UTC().Truncate(time.Hour) }

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
	step := q.warmSteps("onchain")
	// The legs first: only partitions whose transfers changed are recomputed.
	if _, err := q.PublishOnchainLegs(ctx); err != nil {
		return err
	}
	step("legs publication check")
	if q.publishOnly {
		// Every board published already: the label cascade and the side tables, which
		// only computing a board (or a request) reads, are not built.
		if ok, err := q.onchainPublished(ctx); err != nil || ok {
			return err
		}
	}
	if err := q.onchainLegs(ctx); err != nil {
		return err
	}
	step("label cascade")
	if err := q.onchainSide(ctx); err != nil {
		return err
	}
	step("side tables and balances index")
	at := ocBoardHour(q.Now())
	for _, chain := range OnchainChains {
		for _, w := range []string{"24h", "7d", "30d", "90d"} {
			for _, smart := range []bool{false, true} {
				if _, err := q.onchainScreenerBoard(ctx, chain, w, smart, at); warmed(err) != nil {
					return err
				}
			}
		}
	}
	step("screener boards")
	for _, chain := range []string{"ethereum", "bsc"} {
		for _, w := range []string{"24h", "7d", "30d", "90d", "all"} {
			if _, err := q.OnchainDiscover(ctx, OnchainDiscoverParams{Chain: chain, Window: w, Sort: "volume", Order: "desc", Size: 1}); warmed(err) != nil {
				return err
			}
		}
	}
	step("discover boards")
	for _, chain := range OnchainChains {
		if _, err := q.onchainTracePairs(ctx, chain, "30d"); warmed(err) != nil {
			return err
		}
	}
	step("trace pair boards")
	for _, chain := range OnchainChains {
		if _, err := q.OnchainTokenHolders(ctx, chain, OnchainZeroAddress, 1); warmed(err) != nil {
			return err
		}
		for _, period := range []string{"1h", "24h", "7d", "30d"} {
			if _, err := q.tokenTransfersFromBoard(ctx, OnchainTokenTransfersParams{
				Token: OnchainZeroAddress, Chain: chain, Period: period, Tab: "sold"}); warmed(err) != nil {
				return err
			}
		}
	}
	step("holders and transfers boards")
	_, err := q.OnchainLabelsBatch(ctx, []string{OnchainZeroAddress})
	step("labels board")
	return warmed(err)
}
