package query

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	onchainTokenTransfersSQL      = sqlfiles.MustRead("onchain/token_transfers.sql")
	onchainTokenTransfersBoardSQL = sqlfiles.MustRead("onchain/token_transfers_board.sql")
)

// OnchainTransferRows is the fixed row count of the token transfers route.
const OnchainTransferRows = 10

// OnchainTokenTransfersParams are the inputs of OnchainTokenTransfers.
type OnchainTokenTransfersParams struct {
	Token  string // lower-case contract address
	Chain  string // ethereum, bsc, base or all
	Period string // 1h, 24h, 7d or 30d
	Tab    string // bought or sold
}

// TokenTransferRow is one row of /v1/onchain/tokens/{token_address}/transfers.
type TokenTransferRow struct {
	Address        string   `json:"address"`
	Bought         float64  `json:"bought" doc:"whole tokens received in the period (every inbound transfer)"`
	Sold           float64  `json:"sold" doc:"whole tokens sent in the period (every outbound transfer)"`
	NetTokens      float64  `json:"net_tokens" doc:"bought minus sold"`
	USDSpent       float64  `json:"usd_spent" doc:"USD value at transfer time of the tokens bought"`
	USDReceived    float64  `json:"usd_received" doc:"USD value at transfer time of the tokens sold"`
	NetUSD         float64  `json:"net_usd" doc:"usd_received minus usd_spent (opposite sign to net_tokens)"`
	Chains         []string `json:"chains" doc:"chains the row covers: eth, bsc, base"`
	Title          *string  `json:"title" doc:"label entity from the label cascade; null when unlabelled"`
	AddrShort      string   `json:"addr_short" doc:"display string"`
	BoughtFmt      string   `json:"bought_fmt" doc:"display string"`
	SoldFmt        string   `json:"sold_fmt" doc:"display string"`
	NetTokensFmt   string   `json:"net_tokens_fmt" doc:"display string"`
	USDSpentFmt    string   `json:"usd_spent_fmt" doc:"display string"`
	USDReceivedFmt string   `json:"usd_received_fmt" doc:"display string"`
	NetUSDFmt      string   `json:"net_usd_fmt" doc:"display string"`
	NetUSDRaw      float64  `json:"net_usd_raw" doc:"net_usd rounded to cents"`
	NetBarPct      float64  `json:"net_bar_pct" doc:"display bar width: |net_usd| as a percentage of the largest |net_usd| among the rows"`
}

// OnchainTokenTransfers returns the top wallets of one side (tab) of a token's
// transfers in the period: ten rows when at least ten wallets moved it on that side.
// The zero address (the native coin) is not a contract and has no rows.
func (q *Queries) OnchainTokenTransfers(ctx context.Context, p OnchainTokenTransfersParams) ([]TokenTransferRow, error) {
	if err := q.onchainSide(ctx); err != nil {
		return nil, err
	}
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	if p.Chain != "all" {
		return q.tokenTransfersFromBoard(ctx, p)
	}
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	since, until := windowBounds(q.Now(), p.Period)
	rows, err := q.db.QueryContext(ctx, onchainTokenTransfersSQL, p.Token, p.Chain, since, until, p.Tab, OnchainTransferRows)
	if err != nil {
		return nil, wrap(ctx, "onchain token transfers", err)
	}
	defer rows.Close()
	items, err := scanTransferRows(ctx, rows, nil)
	if err != nil {
		return nil, err
	}
	return finishTransferRows(items), nil
}

// scanTransferRows reads the rows of token_transfers.sql (with board set, those of
// token_transfers_board.sql, whose first two columns are the token and the tab, into
// board[token|tab]).
func scanTransferRows(ctx context.Context, rows *sql.Rows, board map[string][]TokenTransferRow) ([]TokenTransferRow, error) {
	items := []TokenTransferRow{}
	for rows.Next() {
		var r TokenTransferRow
		var chains, tok, tab string
		var title sql.NullString
		dest := []any{&r.Address, &r.Bought, &r.Sold, &r.USDSpent, &r.USDReceived, &chains, &title}
		if board != nil {
			dest = append([]any{&tok, &tab}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, wrap(ctx, "onchain token transfers", err)
		}
		r.NetTokens = tokens(r.Bought - r.Sold)
		r.NetUSD = usd(r.USDReceived - r.USDSpent)
		r.Bought, r.Sold = tokens(r.Bought), tokens(r.Sold)
		r.USDSpent, r.USDReceived = usd(r.USDSpent), usd(r.USDReceived)
		r.Title = nullStr(title)
		r.Chains = shortChains(chains)
		if board != nil {
			board[tok+"|"+tab] = append(board[tok+"|"+tab], r)
		} else {
			items = append(items, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "onchain token transfers", err)
	}
	return items, nil
}

type transfersBoardKey struct{}

// tokenTransfersFromBoard answers one chain from the hourly transfers board of (chain,
// period): every token's top rows of each tab as of the start of the store clock's hour.
func (q *Queries) tokenTransfersFromBoard(ctx context.Context, p OnchainTokenTransfersParams) ([]TokenTransferRow, error) {
	v, _ := q.ext.LoadOrStore(transfersBoardKey{}, newOcHourly[map[string][]TokenTransferRow]("onchain transfers board"))
	board, err := v.(*hourly[map[string][]TokenTransferRow]).value(ctx, q, p.Chain+"|"+p.Period, ocBoardHour(q.Now()),
		func(ctx context.Context, at time.Time) (map[string][]TokenTransferRow, error) {
			since, until := windowBounds(at, p.Period)
			rows, err := q.sourcedBoardRows(ctx, lake.OnchainTransfersBoard, p.Chain+"."+p.Period, at, transfersBoardSrcs,
				// The chain's four boards are computed in one pass
				// (token_transfers_board_all.sql), which publishes them;
				// token_transfers_board.sql computes a board that pass could not publish.
				func(ctx context.Context) error {
					return q.boardFamily(ctx, transfersFamily, p.Chain, p.Chain+"."+p.Period, at)
				},
				onchainTokenTransfersBoardSQL, p.Chain, since, until, OnchainTransferRows)
			if err != nil {
				return nil, wrap(ctx, "onchain token transfers", err)
			}
			defer rows.Close()
			board := map[string][]TokenTransferRow{}
			_, err = scanTransferRows(ctx, rows, board)
			return board, err
		})
	if err != nil {
		return nil, err
	}
	return finishTransferRows(append([]TokenTransferRow{}, board[p.Token+"|"+p.Tab]...)), nil
}

// finishTransferRows fills the display fields, which depend on the rows listed.
func finishTransferRows(items []TokenTransferRow) []TokenTransferRow {
	maxNet := 0.0
	for _, r := range items {
		maxNet = math.Max(maxNet, math.Abs(r.NetUSD))
	}
	for i := range items {
		r := &items[i]
		r.NetUSDRaw = usd(r.NetUSD)
		if maxNet > 0 {
			r.NetBarPct = Round(100*math.Abs(r.NetUSD)/maxNet, 1)
		}
		r.AddrShort = ShortAddr(r.Address)
		r.BoughtFmt, r.SoldFmt, r.NetTokensFmt = FmtCompact(r.Bought, ""), FmtCompact(r.Sold, ""), FmtCompact(r.NetTokens, "")
		r.USDSpentFmt, r.USDReceivedFmt, r.NetUSDFmt = FmtCompact(r.USDSpent, "$"), FmtCompact(r.USDReceived, "$"), FmtCompact(r.NetUSD, "$")
	}
	return items
}

// shortChains turns "base,ethereum" into the display order with short names.
func shortChains(list string) []string {
	out := []string{}
	for _, c := range OnchainChains {
		for _, s := range strings.Split(list, ",") {
			if s == c {
				out = append(out, onchainShort[c])
			}
		}
	}
	return out
}

// ShortAddr renders 0x1234…abcd.
func ShortAddr(a string) string {
	if len(a) < 10 {
		return a
	}
	return a[:6] + "…" + a[len(a)-4:]
}

// FmtCompact renders x with two decimals and a K, M or B suffix, prefixed by unit
// ("$" for USD) after the sign: -$1.23M.
func FmtCompact(x float64, unit string) string {
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	suffix := ""
	switch {
	case x >= 1e9:
		x, suffix = x/1e9, "B"
	case x >= 1e6:
		x, suffix = x/1e6, "M"
	case x >= 1e3:
		x, suffix = x/1e3, "K"
	}
	s := fmt.Sprintf("%.2f", x)
	if s == "0.00" {
		sign = ""
	}
	return sign + unit + s + suffix
}
