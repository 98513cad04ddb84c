package query

import (
	"context"
	"database/sql"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var onchainTokensBuildSQL = sqlfiles.MustRead("onchain/side_build_tokens.sql")

type sideKey struct{}

// onchainSideTables are the files a build of the side state reflects.
var onchainSideTables = []*lake.Table{lake.OnchainBalances, lake.OnchainPrices, lake.OnchainTokens}

// onchainSide makes sure the token metadata copy (onchain_tokens_mem: about a thousand
// rows, read by every transactions, transfers and compare request, so no request opens
// its Parquet file), the symbols map and the balances index (a new byte-bounded token
// cache) reflect the lake's balances, prices and token files (names, sizes and
// modification times): built on first use and again when a file was added, replaced or
// removed, as onchainLegs does for the legs, and kept apart from the legs so an hourly
// price or balance file does not rebuild the legs.
//
// The balances and prices are not copied: their files are written sorted (by holder
// and by token and hour, lake.OnchainBalances and lake.OnchainPrices), so a request
// reads the row group holding its holder or tokens from the Parquet. In-memory sorted
// copies of both took 5.7 s and 11 cpu-s at large (4.1 million balances, 2.6 million
// prices, 854 MB of DuckDB memory), paid by a fresh process's first request and by each
// board computation.
func (q *Queries) onchainSide(ctx context.Context) error {
	v, _ := q.ext.LoadOrStore(sideKey{}, &legsState{})
	st := v.(*legsState)
	return st.ensure(ctx, q, "onchain side tables", onchainSideTables,
		func(bctx context.Context) error {
			all, tokens := true, false
			for _, t := range onchainSideTables {
				files, err := t.Files(q.dir)
				if err != nil {
					return &StoreError{Op: "onchain side tables", Err: err}
				}
				// Without files the view is the empty typed view: a lake cut before the
				// first balance read answers with no balance rather than failing (point in
				// time).
				if len(files) == 0 {
					all = false
				} else if t == lake.OnchainTokens {
					tokens = true
				}
			}
			if _, err := q.db.ExecContext(bctx, onchainTokensBuildSQL); err != nil {
				return wrap(bctx, "onchain side tables", err)
			}
			syms, err := q.readSymbols(bctx, tokens)
			if err != nil {
				return err
			}
			st.syms.Store(syms)
			// The balances index needs all three tables; without one the route runs
			// its SQL, which fails as one reading the missing view did.
			// A new token cache per build: the cached tokens are the tables' rows.
			var bal *ocBalIndex
			if all {
				bal = q.newBalanceIndex()
			}
			st.bal.Store(bal)
			return nil
		})
}

// readSymbols reads every token's symbol from onchain_tokens_mem into a map keyed by
// (chain, token address), so compare labels its shared tokens without a query; nil when
// the lake has no token files (tokenSymbols then runs its SQL, which fails as before).
func (q *Queries) readSymbols(ctx context.Context, present bool) (*map[[2]string]string, error) {
	if !present {
		return nil, nil
	}
	rows, err := q.db.QueryContext(ctx, "SELECT chain, token_address, symbol FROM onchain_tokens_mem")
	if err != nil {
		return nil, wrap(ctx, "onchain side tables", err)
	}
	defer rows.Close()
	out := map[[2]string]string{}
	for rows.Next() {
		var c, a string
		var sym sql.NullString
		if err := rows.Scan(&c, &a, &sym); err != nil {
			return nil, wrap(ctx, "onchain side tables", err)
		}
		out[[2]string{c, a}] = sym.String
	}
	return &out, wrap(ctx, "onchain side tables", rows.Err())
}

// balanceIndex is the Go balances index of the last side-table build, for a request that
// has just called onchainSide; nil when none was built.
func (q *Queries) balanceIndex() *ocBalIndex {
	v, ok := q.ext.Load(sideKey{})
	if !ok {
		return nil
	}
	return v.(*legsState).bal.Load()
}

// symbols is the (chain, token) -> symbol map of the last side-table build; nil when
// none was built or the lake has no token files.
func (q *Queries) symbols() *map[[2]string]string {
	v, ok := q.ext.Load(sideKey{})
	if !ok {
		return nil
	}
	return v.(*legsState).syms.Load()
}
