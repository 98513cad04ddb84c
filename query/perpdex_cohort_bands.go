package query

import (
	"math"
	"strconv"
	"strings"
)

// The cohort band tables. mdq owns them: the labels in perpdex_cohorts_hourly and
// perpdex_cohorts_current are computed with these (query/perpdex_cohorts_derived.go),
// the routes' cohort filters accept these slugs, and docs/PERPDEX.md documents them.

// CohortBand is one band. Slug is what the lake stores and routes filter on; Tag is the
// display tag, which may contain spaces where the slug has underscores.
type CohortBand struct {
	Slug, Tag string
}

// SizeBand is one account-value band: a wallet is in the first band whose Floor (USD)
// its account value reaches.
type SizeBand struct {
	CohortBand
	Floor float64
}

// PerpdexSizeBands label a wallet by its account value (perp equity) in USD.
var PerpdexSizeBands = []SizeBand{
	{CohortBand{"leviathan", "leviathan"}, 5_000_000},
	{CohortBand{"whale", "whale"}, 100_000},
	{CohortBand{"dolphin", "dolphin"}, 10_000},
	{CohortBand{"fish", "fish"}, 1_000},
	{CohortBand{"shrimp", "shrimp"}, math.Inf(-1)},
}

// PnlBand is one band of all-time PnL as a multiple of capital put in: a wallet is in
// the first band whose floor its multiple reaches. The floor is in half-multiples
// (Half2 = 2 x multiple) so that it compares exactly in integers; Strict bands need
// the multiple strictly above the floor.
type PnlBand struct {
	CohortBand
	Half2  int64
	Strict bool
	Any    bool // the last band: everything below
}

// PerpdexPnlBands: 10x smart made at least ten times its capital, 3x smart at least
// three times, profitable anything above zero, unprofitable lost less than half (a
// multiple above -0.5, zero included), rekt lost half or more.
var PerpdexPnlBands = []PnlBand{
	{CohortBand{"10x_smart", "10x smart"}, 20, false, false},
	{CohortBand{"3x_smart", "3x smart"}, 6, false, false},
	{CohortBand{"profitable", "profitable"}, 0, true, false},
	{CohortBand{"unprofitable", "unprofitable"}, -1, true, false},
	{CohortBand{"rekt", "rekt"}, 0, false, true},
}

// PerpdexPnlUnknown is the pnl band of a wallet with fewer than three fills before the
// snapshot, or no capital put in (no multiple to take).
var PerpdexPnlUnknown = CohortBand{"unknown", "unknown"}

// Style tags from the mean holding time of a wallet's completed trades.
const (
	PerpdexScalperMaxHold = 3_600_000_000      // microseconds: below one hour is a scalper
	PerpdexSwingMaxHold   = 12 * 3_600_000_000 // below twelve hours a swing trader; position otherwise
)

// StyleBand is one style tag: a wallet is in the first band whose bound its mean
// holding time is strictly below; MaxHoldUs 0 marks the last band (everything else).
type StyleBand struct {
	Tag       string
	MaxHoldUs int64
}

// PerpdexStyleBands tag a wallet by the mean holding time of its completed trades; a
// wallet without a completed trade has no tag (NULL).
var PerpdexStyleBands = []StyleBand{
	{"scalper", PerpdexScalperMaxHold},
	{"swing", PerpdexSwingMaxHold},
	{"position", 0},
}

// The labels are computed in DuckDB (sql/perpdex/cohort_*.sql) so that a partition is
// written straight to Parquet, but the bands stay defined here only: the SQL holds
// markers that are replaced, once at start, by CASE expressions built from the tables
// above out of placeholders, every floor, flag and slug bound as a parameter. Changing
// a band changes the bound values (or the number of WHEN branches), never SQL text
// written by hand.

// sqlBinder numbers the placeholders of a generated expression from first on and
// collects the values bound to them.
type sqlBinder struct {
	first int
	args  []any
}

// bind returns the next placeholder, cast to typ (a constant of this file), for v.
func (b *sqlBinder) bind(v any, typ string) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(b.first+len(b.args)-1) + "::" + typ
}

// perpdexSizeSQL is the size band of account_value: the first band whose floor it
// reaches, the last band when none does.
func perpdexSizeSQL(b *sqlBinder) string {
	var s strings.Builder
	s.WriteString("CASE")
	for _, band := range PerpdexSizeBands {
		s.WriteString(" WHEN account_value >= " + b.bind(band.Floor, "DOUBLE") + " THEN " + b.bind(band.Slug, "VARCHAR"))
	}
	s.WriteString(" ELSE " + b.bind(PerpdexSizeBands[len(PerpdexSizeBands)-1].Slug, "VARCHAR") + " END")
	return s.String()
}

// perpdexPnlSQL is the pnl band (its slug, or with tag its display tag) from
// three_fills, capital and pnl2 (micro-USD, pnl doubled): unknown under three fills or
// without capital, else the first band with Any, or pnl2 above Half2 x capital, or
// equal to it when the band is not Strict.
func perpdexPnlSQL(b *sqlBinder, tag bool) string {
	name := func(c CohortBand) string {
		if tag {
			return b.bind(c.Tag, "VARCHAR")
		}
		return b.bind(c.Slug, "VARCHAR")
	}
	var s strings.Builder
	s.WriteString("CASE WHEN NOT three_fills OR capital <= 0 THEN " + name(PerpdexPnlUnknown))
	for _, band := range PerpdexPnlBands {
		h := b.bind(band.Half2, "BIGINT")
		s.WriteString(" WHEN " + b.bind(band.Any, "BOOLEAN") + " OR pnl2 > " + h + " * capital OR (NOT " +
			b.bind(band.Strict, "BOOLEAN") + " AND pnl2 = " + h + " * capital) THEN " + name(band.CohortBand))
	}
	s.WriteString(" ELSE " + name(PerpdexPnlUnknown) + " END")
	return s.String()
}

// perpdexStyleSQL is the style tag from s.trades completed trades held s.held_us
// microseconds in total: the first band with held_us < trades x MaxHoldUs (exact in
// integers), the last band otherwise; NULL without a completed trade.
func perpdexStyleSQL(b *sqlBinder) string {
	var s strings.Builder
	s.WriteString("CASE")
	for _, band := range PerpdexStyleBands {
		s.WriteString(" WHEN s.trades > 0")
		if band.MaxHoldUs > 0 {
			s.WriteString(" AND s.held_us < s.trades * " + b.bind(band.MaxHoldUs, "BIGINT"))
		}
		s.WriteString(" THEN " + b.bind(band.Tag, "VARCHAR"))
	}
	s.WriteString(" END")
	return s.String()
}

// PerpdexCohortSlugs lists the accepted cohort slugs of an axis (size, pnl or the
// leaderboard's pnl_abs), in band order.
func PerpdexCohortSlugs(axis string) []string {
	var out []string
	switch axis {
	case "pnl":
		for _, b := range PerpdexPnlBands {
			out = append(out, b.Slug)
		}
		out = append(out, PerpdexPnlUnknown.Slug)
	case "pnl_abs":
		for _, b := range PerpdexPnlAbsBands {
			out = append(out, b.Slug)
		}
	default:
		for _, b := range PerpdexSizeBands {
			out = append(out, b.Slug)
		}
	}
	return out
}
