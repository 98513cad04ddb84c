package query

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"mdq/lake"
)

// ocBands is where an hourly on-chain board that sums every wallet's history (discover,
// the screener's smart-money cohort, holders) reads it from: on a board hour of the
// serving date of the published onchain_wallet_bands, the bands (the whole days up to
// the version's newest legs date R, edgesPlan's through, summed per wallet, token and
// window band; for holders the same sums per token and wallet, onchain_holders_base),
// the edges (the legs of the days a window starts in, and of the serving date, dated
// up to R) and the legs dated after R; otherwise every leg (R noSplit, the bands, base
// and edges empty files). The board's SQL file takes R, the edges and the bands (or the
// base) as its last three arguments either way (sql/onchain/discover_all.sql says why
// the sums are the same).
type ocBands struct {
	r            string
	edges, bands []string
	base         []string // the chain's onchain_holders_base file (the holders board's)
	built        string   // the version read ("" for every leg)
}

func (b ocBands) args() []any { return []any{b.r, b.edges, b.bands} }

// holdersArgs are the last three arguments of sql/onchain/token_holders.sql, which
// reads the base in place of the bands.
func (b ocBands) holdersArgs() []any { return []any{b.r, b.edges, b.base} }

// gone reports whether a listed file of the version went away (a publication replaced
// the version while a query read it: the caller lists again).
func (b ocBands) gone() bool {
	return b.built != "" && anyGone(b.edges, b.bands, b.base)
}

// ocBandsFor lists the bands and edges of chain for board hour at. byEpoch is set for
// a board that tells apart the legs at or before the epoch (discover's window all
// starts there): the bands lump them with the older days, so a lake with such a leg up
// to R reads every leg.
func (q *Queries) ocBandsFor(chain string, at time.Time, byEpoch bool) (ocBands, error) {
	side, ok := q.walletEdgesSideFor(at)
	if ok && byEpoch {
		for _, v := range side.Days {
			if f := strings.Fields(v); len(f) != 3 || f[1] <= "1970-01-01" {
				ok = false
				break
			}
		}
	}
	// The version's holders base of the chain: a version holds one wherever it holds
	// bands of the chain; without it (no legs of the chain up to R), every leg.
	base, found := q.holdersBaseFile(side.Built, chain)
	ok = ok && found
	every := ocBands{r: noSplit}
	var keys [][2]string // none without a version to read: the empty files
	if ok {
		for _, b := range walletBuckets {
			keys = append(keys, [2]string{chain, b})
		}
	}
	var err error
	if every.edges, every.bands, err = q.edgesAndBands(side.Built, keys); err != nil {
		return ocBands{}, err
	}
	if ok {
		every.r, every.built, every.base = side.Through, side.Built, []string{base}
	} else {
		f, err := q.emptyFile(lake.OnchainHoldersBase, "built=_", "chain=_")
		if err != nil {
			return ocBands{}, &StoreError{Op: "onchain wallet files", Err: fmt.Errorf("empty %s file: %w", lake.OnchainHoldersBase.Name, err)}
		}
		every.base = []string{f}
	}
	return every, nil
}

// withOcBands runs run with the bands of chain for board hour at, once more with a
// fresh listing when it failed because the version it read was replaced under it.
func (q *Queries) withOcBands(chain string, at time.Time, byEpoch bool, run func(ocBands) error) error {
	for try := 0; ; try++ {
		b, err := q.ocBandsFor(chain, at, byEpoch)
		if err != nil {
			return err
		}
		if err = run(b); err == nil || try > 0 || !b.gone() {
			return err
		}
	}
}

// OnchainHistoryArgs are the last three arguments of sql/onchain/token_holders.sql for
// chain at board hour at, as the store passes them (ocBands): for benchmarks that run
// the SQL directly.
func (q *Queries) OnchainHistoryArgs(chain string, at time.Time) ([]any, error) {
	b, err := q.ocBandsFor(chain, at, false)
	return b.holdersArgs(), err
}

// holdersBaseFile is chain's onchain_holders_base file of version built, and whether it
// exists.
func (q *Queries) holdersBaseFile(built, chain string) (string, bool) {
	rel, err := lake.OnchainHoldersBase.Path(built, chain)
	if err != nil || built == "" {
		return "", false
	}
	f := filepath.Join(q.dir, filepath.FromSlash(rel))
	return f, fileExists(f)
}
