package perpdex

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"mdq/lake"
)

// Row is one row for a lake table: its UTC date partition ("" for an unpartitioned
// table) and its values in the table's column order.
type Row struct {
	Table *lake.Table
	Date  string
	Vals  []any
}

func dated(t *lake.Table, at time.Time, vals ...any) Row {
	d := ""
	if len(t.Partitions) > 0 {
		d = at.UTC().Format(time.DateOnly)
	}
	return Row{t, d, vals}
}

// record is what one input record (a line, or an element of an answer) gives: rows,
// and records understood but not stored, by reason.
type record struct {
	rows []Row
	// fills are perpdex_fills rows of a node file, kept as fills: the loader stages
	// them as Vals (no interface per value), and they are most of an ingest.
	fills   []Fill
	skipped []string
}

func (r *record) add(t *lake.Table, at time.Time, vals ...any) {
	r.rows = append(r.rows, dated(t, at, vals...))
}

func (r *record) skip(reason string) { r.skipped = append(r.skipped, reason) }

// fileCtx is what a record's meaning depends on beyond its own text: the user the
// answer was fetched for and the time it was fetched (snapshots).
type fileCtx struct {
	user string
	at   time.Time
}

func (c *fileCtx) needUser() (string, error) {
	if c.user == "" {
		return "", errNoUser
	}
	return c.user, nil
}

// snapshotTime is the answer's own time field when it has one, else the fetch time of
// the file (--time, or an epoch-ms field of the file name).
func (c *fileCtx) snapshotTime(own integer) (time.Time, error) {
	if own.set {
		return time.UnixMilli(own.v).UTC(), nil
	}
	if c.at.IsZero() {
		return time.Time{}, errors.New("no snapshot time: the answer has no time field; pass --time or put the epoch milliseconds in the file name")
	}
	return c.at, nil
}

// clearinghouseState is the info API's clearinghouseState answer.
type clearinghouseState struct {
	AssetPositions *[]struct {
		Position struct {
			Coin     str `json:"coin"`
			EntryPx  num `json:"entryPx"`
			Leverage *struct {
				Type  str `json:"type"`
				Value num `json:"value"`
			} `json:"leverage"`
			LiquidationPx num `json:"liquidationPx"`
			PositionValue num `json:"positionValue"`
			Szi           num `json:"szi"`
			UnrealizedPnl num `json:"unrealizedPnl"`
		} `json:"position"`
	} `json:"assetPositions"`
	MarginSummary *struct {
		AccountValue    num `json:"accountValue"`
		TotalMarginUsed num `json:"totalMarginUsed"`
		TotalNtlPos     num `json:"totalNtlPos"`
	} `json:"marginSummary"`
	Time integer `json:"time"`
}

// parseClearinghouse gives one perpdex_accounts row and one perpdex_positions row per
// open position. The mark is positionValue / |szi| (the answer has no mark field); a
// null liquidationPx (a position that cannot be liquidated) is stored as 0.0.
func parseClearinghouse(b []byte, c *fileCtx, out *record) error {
	var s clearinghouseState
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s.MarginSummary == nil || s.AssetPositions == nil {
		return errors.New("not a clearinghouseState answer: no marginSummary or assetPositions")
	}
	user, err := c.needUser()
	if err != nil {
		return err
	}
	at, err := c.snapshotTime(s.Time)
	if err != nil {
		return err
	}
	m := s.MarginSummary
	if err := missing("marginSummary.accountValue", m.AccountValue, "marginSummary.totalNtlPos", m.TotalNtlPos,
		"marginSummary.totalMarginUsed", m.TotalMarginUsed); err != nil {
		return err
	}
	out.add(lake.PerpdexAccounts, at, at, user, m.AccountValue.v, m.TotalNtlPos.v, m.TotalMarginUsed.v)
	for i, ap := range *s.AssetPositions {
		p := ap.Position
		if err := missing("coin", p.Coin, "szi", p.Szi, "entryPx", p.EntryPx, "positionValue", p.PositionValue,
			"unrealizedPnl", p.UnrealizedPnl); err != nil {
			return fmt.Errorf("assetPositions[%d]: %w", i, err)
		}
		if p.Leverage == nil || !p.Leverage.Value.ok() {
			return fmt.Errorf("assetPositions[%d]: missing required field \"leverage.value\"", i)
		}
		if p.Szi.v == 0 {
			continue // not open
		}
		liq := 0.0
		if p.LiquidationPx.ok() {
			liq = p.LiquidationPx.v
		}
		mark := p.PositionValue.v / math.Abs(p.Szi.v)
		out.add(lake.PerpdexPositions, at, at, user, p.Coin.v, p.Szi.v, p.EntryPx.v, mark, p.Leverage.Value.v,
			liq, p.UnrealizedPnl.v, p.PositionValue.v)
	}
	return nil
}

// parseSpotClearinghouse gives the wallet's HYPE spot balance (total, hold included),
// 0 when it holds none, so a sold balance is not left standing.
func parseSpotClearinghouse(b []byte, c *fileCtx, out *record) error {
	var s struct {
		Balances *[]struct {
			Coin  str `json:"coin"`
			Total num `json:"total"`
		} `json:"balances"`
		Time integer `json:"time"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s.Balances == nil {
		return errors.New("not a spotClearinghouseState answer: no balances")
	}
	user, err := c.needUser()
	if err != nil {
		return err
	}
	at, err := c.snapshotTime(s.Time)
	if err != nil {
		return err
	}
	hype := 0.0
	for i, bal := range *s.Balances {
		if err := missing("coin", bal.Coin, "total", bal.Total); err != nil {
			return fmt.Errorf("balances[%d]: %w", i, err)
		}
		if bal.Coin.v == "HYPE" {
			hype += bal.Total.v
		}
	}
	out.add(lake.PerpdexHypeBalances, at, user, "spot", hype, at)
	return nil
}

// parseDelegations gives the wallet's staked HYPE: the sum of its delegations.
func parseDelegations(b []byte, c *fileCtx, out *record) error {
	var ds []struct {
		Validator str `json:"validator"`
		Amount    num `json:"amount"`
	}
	if err := json.Unmarshal(b, &ds); err != nil {
		return err
	}
	user, err := c.needUser()
	if err != nil {
		return err
	}
	at, err := c.snapshotTime(integer{})
	if err != nil {
		return err
	}
	total := 0.0
	for i, d := range ds {
		if err := missing("validator", d.Validator, "amount", d.Amount); err != nil {
			return fmt.Errorf("delegations[%d]: %w", i, err)
		}
		total += d.Amount.v
	}
	out.add(lake.PerpdexHypeBalances, at, user, "staked", total, at)
	return nil
}

func lower(s string) string { return strings.ToLower(s) }
