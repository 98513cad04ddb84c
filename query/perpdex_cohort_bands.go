package query

import "math"

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

// PerpdexSizeCohort returns the size band of an account value.
func PerpdexSizeCohort(accountValue float64) CohortBand {
	for _, b := range PerpdexSizeBands {
		if accountValue >= b.Floor {
			return b.CohortBand
		}
	}
	return PerpdexSizeBands[len(PerpdexSizeBands)-1].CohortBand
}

// PerpdexPnlCohort returns the pnl band. PnL is the account value minus the net capital
// flow in; both it and the capital are compared in integer micro-USD (the account
// value rounded to the micro-dollar, ledger sums in cents), so a band edge is exact.
func PerpdexPnlCohort(threeFills bool, capitalCents, netInCents int64, accountValue float64) CohortBand {
	if !threeFills || capitalCents <= 0 {
		return PerpdexPnlUnknown
	}
	capital := capitalCents * 10_000
	pnl2 := 2 * (int64(math.Round(accountValue*1e6)) - netInCents*10_000)
	for _, b := range PerpdexPnlBands {
		floor := b.Half2 * capital
		if b.Any || pnl2 > floor || (!b.Strict && pnl2 == floor) {
			return b.CohortBand
		}
	}
	return PerpdexPnlUnknown
}

// Style tags from the mean holding time of a wallet's completed trades.
const (
	PerpdexScalperMaxHold = 3_600_000_000      // microseconds: below one hour is a scalper
	PerpdexSwingMaxHold   = 12 * 3_600_000_000 // below twelve hours a swing trader; position otherwise
)

// PerpdexStyleCohort returns the style tag of trades completed trades held heldUs
// microseconds in total; "" (NULL) without a completed trade. The mean is compared
// exactly: heldUs < trades x bound.
func PerpdexStyleCohort(trades, heldUs int64) string {
	switch {
	case trades <= 0:
		return ""
	case heldUs < trades*PerpdexScalperMaxHold:
		return "scalper"
	case heldUs < trades*PerpdexSwingMaxHold:
		return "swing"
	default:
		return "position"
	}
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
