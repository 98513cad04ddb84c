package query

import (
	"context"
	"database/sql"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// onchainSide lists each side table with its source and build SQL.
var onchainSide = []struct {
	src   *lake.Table
	table string
	build string
}{
	{lake.OnchainBalances, "onchain_balances_mem", sqlfiles.MustRead("onchain/side_build.sql")},
	{lake.OnchainPrices, "onchain_prices_mem", sqlfiles.MustRead("onchain/side_build_prices.sql")},
	{lake.OnchainTokens, "onchain_tokens_mem", sqlfiles.MustRead("onchain/side_build_tokens.sql")},
}

type sideKey struct{}

// onchainSide makes sure onchain_balances_mem, onchain_prices_mem and
// onchain_tokens_mem reflect the lake's balances, prices and token files (names, sizes
// and modification times), building them on first use and rebuilding them when a file
// was added, replaced or removed, as onchainLegs does for the legs. They are small
// (a second or two to build) and kept apart from the legs so an hourly price or balance
// file does not rebuild the legs.
func (q *Queries) onchainSide(ctx context.Context) error {
	v, _ := q.ext.LoadOrStore(sideKey{}, &legsState{})
	st := v.(*legsState)
	return st.ensure(ctx, q, "onchain side tables", []*lake.Table{lake.OnchainBalances, lake.OnchainPrices, lake.OnchainTokens},
		func(bctx context.Context) error {
			all := true
			for _, t := range onchainSide {
				files, err := t.src.Files(q.dir)
				if err != nil {
					return &StoreError{Op: "onchain side tables", Err: err}
				}
				// Without files the source view is the empty typed view: the copy is
				// empty too, so a lake cut before the first balance read answers with
				// no balance rather than failing (point in time).
				if len(files) == 0 {
					all = false
				}
				if _, err := q.db.ExecContext(bctx, t.build); err != nil {
					return wrap(bctx, "onchain side tables", err)
				}
				if t.src == lake.OnchainTokens {
					syms, err := q.readSymbols(bctx, len(files) > 0)
					if err != nil {
						return err
					}
					st.syms.Store(syms)
				}
			}
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
