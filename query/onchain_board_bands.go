package query

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mdq/lake"
)

// ocBands is where an hourly on-chain board that sums every wallet's history (discover,
// the screener's smart-money cohort, holders) reads it from: on a board hour of the
// serving date of the published onchain_wallet_bands, the bands (the whole days up to
// the recent split R summed per wallet, token and window band), the edges (the legs of
// the days a window starts in, and of the serving date, dated up to R) and the legs
// dated after R; otherwise every leg (R noSplit, the bands and edges empty files). The
// board's SQL file takes R, the edges and the bands as its last three arguments either
// way (sql/onchain/discover_all.sql says why the sums are the same).
type ocBands struct {
	r            string
	edges, bands []string
	built        string // the version read ("" for every leg)
}

func (b ocBands) args() []any { return []any{b.r, b.edges, b.bands} }

// gone reports whether a listed file of the version went away (a publication replaced
// the version while a query read it: the caller lists again).
func (b ocBands) gone() bool {
	if b.built == "" {
		return false
	}
	for _, l := range [][]string{b.edges, b.bands} {
		for _, f := range l {
			if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
				return true
			}
		}
	}
	return false
}

// ocBandsFor lists the bands and edges of chain for board hour at. byEpoch is set for
// a board that tells apart the legs at or before the epoch (discover's window all
// starts there): the bands lump them with the older days, so a lake with such a leg up
// to R reads every leg.
func (q *Queries) ocBandsFor(chain string, at time.Time, byEpoch bool) (ocBands, error) {
	_, r, tag := q.walletSplitTagged()
	side, ok := q.walletEdgesSideFor(tag, at)
	if ok && byEpoch {
		for _, v := range side.Days {
			if f := strings.Fields(v); len(f) != 3 || f[1] <= "1970-01-01" {
				ok = false
				break
			}
		}
	}
	every := ocBands{r: noSplit}
	for _, x := range []struct {
		t    *lake.Table
		list *[]string
	}{{lake.OnchainWalletEdges, &every.edges}, {lake.OnchainWalletBands, &every.bands}} {
		var out []string
		for _, b := range walletBuckets {
			if !ok {
				break
			}
			rel, err := x.t.Path(side.Built, chain, b)
			if err != nil {
				return ocBands{}, err
			}
			if f := filepath.Join(q.dir, filepath.FromSlash(rel)); fileExists(f) {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			f, err := q.emptyFile(x.t, "built=_", "chain=_", "bucket=_")
			if err != nil {
				return ocBands{}, &StoreError{Op: "onchain wallet bands", Err: fmt.Errorf("empty %s file: %w", x.t.Name, err)}
			}
			out = []string{f}
		}
		*x.list = out
	}
	if ok {
		every.r, every.built = r, side.Built
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

// OnchainHistoryArgs are the last three arguments of sql/onchain/token_holders.sql and
// smart_cohort.sql for chain at board hour at, as the store passes them (ocBands): for
// benchmarks that run the SQL directly.
func (q *Queries) OnchainHistoryArgs(chain string, at time.Time) ([]any, error) {
	b, err := q.ocBandsFor(chain, at, false)
	return b.args(), err
}
