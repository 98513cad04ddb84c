package query

import (
	"time"

	"context"

	sqlfiles "mdq/sql"
)

var onchainWalletCompareSQL = sqlfiles.MustRead("onchain/wallet_compare.sql")

// SharedCounterparty is an address both compared wallets dealt with.
type SharedCounterparty struct {
	Address    string  `json:"address"`
	Label      *string `json:"label" doc:"cascade label entity; null when unlabelled"`
	AVolumeUSD float64 `json:"a_volume_usd" doc:"USD between wallet_a and this address, both ways"`
	BVolumeUSD float64 `json:"b_volume_usd" doc:"USD between wallet_b and this address, both ways"`
	ATxCount   int64   `json:"a_tx_count"`
	BTxCount   int64   `json:"b_tx_count"`
}

// SharedToken is a token both compared wallets moved.
type SharedToken struct {
	TokenAddress string  `json:"token_address"`
	Symbol       string  `json:"symbol" doc:"from token metadata; empty when unknown"`
	AVolumeUSD   float64 `json:"a_volume_usd" doc:"USD of wallet_a's transfers of the token, both ways"`
	BVolumeUSD   float64 `json:"b_volume_usd"`
	ATxCount     int64   `json:"a_tx_count"`
	BTxCount     int64   `json:"b_tx_count"`
}

// DirectFlow is what the two compared wallets sent each other.
type DirectFlow struct {
	AToBUSD float64 `json:"a_to_b_usd"`
	BToAUSD float64 `json:"b_to_a_usd"`
	TxCount int64   `json:"tx_count"`
}

// WalletCompare is /v1/onchain/wallets/compare.
type WalletCompare struct {
	WalletA              string               `json:"wallet_a"`
	WalletB              string               `json:"wallet_b"`
	Chain                string               `json:"chain"`
	Window               string               `json:"window"`
	SharedCounterparties []SharedCounterparty `json:"shared_counterparties" doc:"ranked by a_volume_usd plus b_volume_usd"`
	SharedTokens         []SharedToken        `json:"shared_tokens" doc:"ranked by a_volume_usd plus b_volume_usd"`
	Direct               DirectFlow           `json:"direct"`
}

// OnchainWalletCompare returns what two wallets share on a chain over a window
// (wallet_compare.sql over both wallets' segments). Both lists rank on the exact sums,
// ties on address.
func (q *Queries) OnchainWalletCompare(ctx context.Context, chain, a, b, window string, limit int) (WalletCompare, error) {
	out := WalletCompare{WalletA: a, WalletB: b, Chain: chain, Window: window, SharedCounterparties: []SharedCounterparty{}, SharedTokens: []SharedToken{}}
	if err := q.onchainLegs(ctx); err != nil {
		return out, err
	}
	since, until := windowBounds(q.Now(), window)
	// Both wallets' legs cached in Go answer alike (onchain_hot_legs.go); the SQL reads
	// the files listed for the check.
	listed, err := q.compareArgs(ctx, chain, a, b)
	if err != nil {
		return out, wrap(ctx, "onchain wallet compare", err)
	}
	if ha := q.hotLegsFor(chain, a, listed.wallet(0)); ha != nil {
		if hb := q.hotLegsFor(chain, b, listed.wallet(1)); hb != nil {
			if res, ok := hotCompare(out, ha, hb, since, until, limit); ok {
				return q.finishCompare(ctx, res, time.UnixMicro(until))
			}
		}
	}
	return q.onchainWalletCompareSQL(ctx, out, since, until, limit, &listed)
}

// onchainWalletCompareSQL is OnchainWalletCompare by wallet_compare.sql, over the files
// listed (nil: listed here); out holds the request's echoed fields and empty lists.
func (q *Queries) onchainWalletCompareSQL(ctx context.Context, out WalletCompare, since, until int64, limit int, listed *walletArgs) (WalletCompare, error) {
	chain, a, b := out.Chain, out.WalletA, out.WalletB
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.queryWallet(ctx, onchainWalletCompareSQL, listedFirst(listed, func() (walletArgs, error) { return q.compareArgs(ctx, chain, a, b) }),
		walletArgs.compareTail, chain, a, b, since, until, limit)
	if err != nil {
		return out, wrap(ctx, "onchain wallet compare", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, key string
		var au, bu float64
		var an, bn int64
		if err := rows.Scan(&kind, &key, &au, &bu, &an, &bn); err != nil {
			return out, wrap(ctx, "onchain wallet compare", err)
		}
		switch kind {
		case "c":
			out.SharedCounterparties = append(out.SharedCounterparties, SharedCounterparty{Address: key, AVolumeUSD: usd(au), BVolumeUSD: usd(bu), ATxCount: an, BTxCount: bn})
		case "t":
			out.SharedTokens = append(out.SharedTokens, SharedToken{TokenAddress: key, AVolumeUSD: usd(au), BVolumeUSD: usd(bu), ATxCount: an, BTxCount: bn})
		default:
			out.Direct = DirectFlow{AToBUSD: usd(au), BToAUSD: usd(bu), TxCount: an}
		}
	}
	if err := rows.Err(); err != nil {
		return out, wrap(ctx, "onchain wallet compare", err)
	}
	return q.finishCompare(ctx, out, time.UnixMicro(until))
}

// finishCompare adds the shared counterparties' cascade labels and the shared tokens'
// symbols.
func (q *Queries) finishCompare(ctx context.Context, out WalletCompare, at time.Time) (WalletCompare, error) {
	labels := q.legsLabels()
	for i := range out.SharedCounterparties {
		if l, ok := labels.at(out.SharedCounterparties[i].Address, at); ok {
			e := l.Entity
			out.SharedCounterparties[i].Label = &e
		}
	}
	toks := make([]string, len(out.SharedTokens))
	for i, t := range out.SharedTokens {
		toks[i] = t.TokenAddress
	}
	syms, err := q.tokenSymbols(ctx, out.Chain, toks)
	if err != nil {
		return out, err
	}
	for i := range out.SharedTokens {
		out.SharedTokens[i].Symbol = syms[out.SharedTokens[i].TokenAddress]
	}
	return out, nil
}

var onchainTokenSymbolsSQL = sqlfiles.MustRead("onchain/token_symbols.sql")

// tokenSymbols maps token addresses of a chain to their symbols.
func (q *Queries) tokenSymbols(ctx context.Context, chain string, toks []string) (map[string]string, error) {
	if err := q.onchainSide(ctx); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(toks) == 0 {
		return out, nil
	}
	if v, ok := q.ext.Load(sideKey{}); ok {
		if m := v.(*legsState).syms.Load(); m != nil {
			for _, t := range toks {
				if s, ok := (*m)[[2]string{chain, t}]; ok {
					out[t] = s
				}
			}
			return out, nil
		}
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	rows, err := q.db.QueryContext(ctx, onchainTokenSymbolsSQL, chain, csv(toks))
	if err != nil {
		return nil, wrap(ctx, "onchain token symbols", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, s string
		if err := rows.Scan(&a, &s); err != nil {
			return nil, wrap(ctx, "onchain token symbols", err)
		}
		out[a] = s
	}
	return out, wrap(ctx, "onchain token symbols", rows.Err())
}
