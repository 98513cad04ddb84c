package query

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mdq/lake"
)

// walletArgs are the last arguments of a per-wallet SQL file: the split dates and the
// files the wallet_legs and wallet_days macros read. Listing the files here (a stat of
// the wallet's bucket's segment files and a read of each chain's legs directory, well
// under a millisecond) replaces the views' globs, which DuckDB expands at every read of
// a query: on the medium lake a hub's one-day read took 38 to 50 ms through the views
// and 8 to 10 ms through the same files listed (TestOnchainWalletLegsEqualPerDateLegs
// compares every per-wallet SQL file reading them with the SQL before the segments).
type walletArgs struct {
	h, r  string
	legs  []string // the wallet's bucket's onchain_wallet_legs segment files
	days  []string // the same for onchain_wallet_days
	today []string // the onchain_legs files dated after r
	other []string // compare: the other wallet's legs segment files
	edges []string // the summary: its bucket's onchain_wallet_edges files (walletEdgeFiles)
	bands []string // and its onchain_wallet_bands files

	chains []string // the chains listed
}

// legsTail and daysTail are the last arguments of the SQL files reading wallet_legs
// only (h, r, legs, today) and both macros (h, r, legs, days, today).
func (a walletArgs) legsTail() []any { return []any{a.h, a.r, a.legs, a.today} }
func (a walletArgs) daysTail() []any { return []any{a.h, a.r, a.legs, a.days, a.today} }

// edgesTail is the last arguments of wallet_edges.sql: r, the edges, bands and
// today's legs files.
func (a walletArgs) edgesTail() []any { return []any{a.r, a.edges, a.bands, a.today} }

// walletArgs lists the files of wallet address on chain (empty for every chain) at the
// last published split.
func (q *Queries) walletArgs(ctx context.Context, address, chain string) (walletArgs, error) {
	h, r := q.walletSplit()
	return q.walletArgsAt(ctx, q.dir, address, chain, h, r)
}

// walletArgsAt lists them at the split (h, r), the segments read from the lake at
// segDir (the lake itself but in a read-only measurement). A segment is listed only
// where the split gives it dates (history when h is a date, recent when r is after h);
// an empty list holds the store's empty file of the same columns, since read_parquet
// takes no empty list.
func (q *Queries) walletArgsAt(ctx context.Context, segDir, address, chain, h, r string) (walletArgs, error) {
	a := walletArgs{h: h, r: r}
	empty, err := q.walletEmptyFiles(ctx)
	if err != nil {
		return a, err
	}
	var chains []string
	if chain != "" {
		chains = []string{chain}
	} else {
		set := map[string]bool{}
		for _, d := range []string{filepath.Join(q.dir, filepath.FromSlash(lake.OnchainLegs.Prefix)),
			filepath.Join(segDir, filepath.FromSlash(lake.OnchainWalletLegs.Prefix)),
			filepath.Join(segDir, filepath.FromSlash(lake.OnchainWalletDays.Prefix))} {
			for _, c := range partitionValues(d, "chain") {
				set[c] = true
			}
		}
		for c := range set {
			chains = append(chains, c)
		}
		sort.Strings(chains)
	}
	a.chains = chains
	bucket := ""
	if len(address) > 2 {
		bucket = address[2:3]
	}
	hexBucket := false
	for _, b := range walletBuckets {
		hexBucket = hexBucket || b == bucket
	}
	segments := splitSegments(h, r)
	for _, c := range chains {
		if hexBucket && !strings.ContainsAny(c, `/\`) {
			for _, s := range segments {
				for _, x := range []struct {
					t    *lake.Table
					list *[]string
				}{{lake.OnchainWalletLegs, &a.legs}, {lake.OnchainWalletDays, &a.days}} {
					f := filepath.Join(segDir, filepath.FromSlash(x.t.Prefix), "chain="+c, "bucket="+bucket, "segment="+s, x.t.File)
					if _, err := os.Stat(f); err == nil {
						*x.list = append(*x.list, f)
					}
				}
			}
		}
	}
	if len(a.legs) == 0 {
		a.legs = []string{empty.legs}
	}
	if len(a.days) == 0 {
		a.days = []string{empty.days}
	}
	a.today, err = q.legsFilesAfter(ctx, chains, r)
	return a, err
}

// legsFilesAfter lists the onchain_legs files of chains dated after r (the store's
// empty file of the same columns when there is none).
func (q *Queries) legsFilesAfter(ctx context.Context, chains []string, r string) ([]string, error) {
	var out []string
	for _, c := range chains {
		dir := filepath.Join(q.dir, filepath.FromSlash(lake.OnchainLegs.Prefix), "chain="+c)
		for _, d := range partitionValues(dir, "date") {
			if d <= r {
				continue
			}
			f := filepath.Join(dir, "date="+d, lake.OnchainLegs.File)
			if _, err := os.Stat(f); err == nil {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		empty, err := q.walletEmptyFiles(ctx)
		if err != nil {
			return nil, err
		}
		out = []string{empty.today}
	}
	return out, nil
}

// splitSegments are the wallet segments the split (h, r) gives dates to: history when
// h is a date, recent when r is after h.
func splitSegments(h, r string) []string {
	var out []string
	if h != noSplit {
		out = append(out, "history")
	}
	if r > h {
		out = append(out, "recent")
	}
	return out
}

// partitionValues lists the values of the key=value subdirectories of dir, sorted.
func partitionValues(dir, key string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if v, ok := strings.CutPrefix(e.Name(), key+"="); ok && e.IsDir() {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// gone reports whether one of the listed files no longer exists.
func (a walletArgs) gone() bool {
	return anyGone(a.legs, a.days, a.today, a.other, a.edges, a.bands)
}

// anyGone reports whether a file of the lists no longer exists (a publication removed
// it while a query read it: the callers list again and run once more).
func anyGone(lists ...[]string) bool {
	for _, l := range lists {
		for _, f := range l {
			if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
				return true
			}
		}
	}
	return false
}

// walletEmpty are the store's empty files standing in for an empty list: zero rows,
// the columns (and hive keys) of a segment of each table and of a per-date legs file,
// under hive values no filter of the macros keeps (segment '_', date 0001-01-01).
type walletEmpty struct {
	legs, days, today string
}

func (q *Queries) walletEmptyFiles(context.Context) (walletEmpty, error) {
	var e walletEmpty
	seg := []string{"chain=_", "bucket=_", "segment=_"}
	for _, x := range []struct {
		t    *lake.Table
		hive []string
		path *string
	}{{lake.OnchainWalletLegs, seg, &e.legs}, {lake.OnchainWalletDays, seg, &e.days},
		{lake.OnchainLegs, []string{"chain=_", "date=0001-01-01"}, &e.today}} {
		f, err := q.emptyFile(x.t, x.hive...)
		if err != nil {
			return e, &StoreError{Op: "onchain wallet files", Err: err}
		}
		*x.path = f
	}
	return e, nil
}

// queryWallet runs a per-wallet SQL file with args followed by the wallet's files
// (tail picks them from the listing), listing them again and running once more when
// the first run failed because a listed file went away under it (a publication removed
// a segment or a day's legs file; a rewritten file keeps its path).
func (q *Queries) queryWallet(ctx context.Context, text string, list func() (walletArgs, error), tail func(walletArgs) []any, args ...any) (*sql.Rows, error) {
	return q.queryWalletPick(ctx, func(walletArgs) string { return text }, list, tail, args...)
}

// queryWalletPick is queryWallet with the SQL picked for each listing (the summary's
// depends on whether the edges apply).
func (q *Queries) queryWalletPick(ctx context.Context, text func(walletArgs) string, list func() (walletArgs, error), tail func(walletArgs) []any, args ...any) (*sql.Rows, error) {
	for try := 0; ; try++ {
		a, err := list()
		if err != nil {
			return nil, err
		}
		rows, err := q.walletDB.QueryContext(ctx, text(a), append(append([]any{}, args...), tail(a)...)...)
		if err == nil || try > 0 || ctx.Err() != nil || !a.gone() {
			return rows, err
		}
	}
}

// listedFirst is a queryWallet listing whose first call gives the files already listed
// (when there are) and whose later ones, after a file went away, list again.
func listedFirst(listed *walletArgs, list func() (walletArgs, error)) func() (walletArgs, error) {
	return func() (walletArgs, error) {
		if a := listed; a != nil {
			listed = nil
			return *a, nil
		}
		return list()
	}
}

// compareArgs lists the files of wallets a and b on chain (both at one split).
func (q *Queries) compareArgs(ctx context.Context, chain, a, b string) (walletArgs, error) {
	h, r := q.walletSplit()
	x, err := q.walletArgsAt(ctx, q.dir, a, chain, h, r)
	if err != nil {
		return x, err
	}
	y, err := q.walletArgsAt(ctx, q.dir, b, chain, h, r)
	x.other = y.legs
	return x, err
}

// wallet is the listing of one of the compared wallets (0 for a, 1 for b) as walletArgs
// lists a single wallet: b's legs are other; the split and the chain's legs after it
// are both's.
func (a walletArgs) wallet(i int) walletArgs {
	w := walletArgs{h: a.h, r: a.r, legs: a.legs, today: a.today}
	if i == 1 {
		w.legs = a.other
	}
	return w
}

// compareTail is the last arguments of wallet_compare.sql: h, r, a's legs segment
// files, b's, today's.
func (a walletArgs) compareTail() []any { return []any{a.h, a.r, a.legs, a.other, a.today} }

// WalletSQLArgs is the last arguments of the per-wallet SQL file (sql/onchain/<file>)
// for wallet a (and b, for wallet_compare.sql) on chain (empty for every chain) at the
// split (h, r): for the tests and benchmarks that run the files directly.
func (q *Queries) WalletSQLArgs(ctx context.Context, file, chain, a, b, h, r string) ([]any, error) {
	x, err := q.walletArgsAt(ctx, q.dir, a, chain, h, r)
	if err != nil {
		return nil, err
	}
	switch filepath.Base(file) {
	case "wallet.sql", "wallet_pnl.sql":
		return x.daysTail(), nil
	case "wallet_edges.sql": // the published edges, whichever split they are of
		e, err := readWalletEdgesSide(q.dir)
		if err != nil {
			return nil, err
		}
		if err := q.walletEdgeFiles(ctx, e, a, &x); err != nil {
			return nil, err
		}
		return x.edgesTail(), nil
	case "wallet_compare.sql":
		y, err := q.walletArgsAt(ctx, q.dir, b, chain, h, r)
		x.other = y.legs
		return x.compareTail(), err
	default:
		return x.legsTail(), nil
	}
}
