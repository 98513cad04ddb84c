package demo

import (
	"fmt"
	"sort"
	"time"

	"mdq/lake"
)

// perpdexVaultMeta describes the vaults of the simulated venue. The market-maker and
// liquidator wallets (pwMM, pwHLP) are the venue's two vaults; their trading is in the
// fills and snapshots like any user's, and this is the metadata the venue publishes
// beside it. DaysBefore places the creation before the earliest fill of the lake.
var perpdexVaultMeta = []struct {
	Kind        int
	Name, Type  string
	DaysBefore  int
	Description string
}{
	{pwMM, "Venue Liquidity Provider", "market_making", 60,
		"Quotes both sides of every listed perpetual and is the default counterparty of takers; earns the spread and maker rebates, pays funding on its inventory."},
	{pwHLP, "Liquidator", "liquidation", 45,
		"Takes over the positions of liquidated accounts at the mark and unwinds them; funded by the venue, earns the liquidation discount."},
}

// writePerpdexVaults writes the perpdex_vaults table from the simulated wallets. It
// draws from its own RNG stream, so it changes no other table.
func writePerpdexVaults(s *perpdexSim) error {
	r := s.g.RNG("perpdex/vaults")
	first := s.g.Start
	if perpdexPrehistoryFrom.Before(first) {
		first = perpdexPrehistoryFrom
	}
	first = first.Truncate(24 * time.Hour)
	var rows [][]any
	for _, v := range perpdexVaultMeta {
		w := -1
		for i := range s.w {
			if s.w[i].Kind == v.Kind {
				w = i
				break
			}
		}
		if w < 0 {
			return fmt.Errorf("perpdex vaults: no wallet of kind %s", v.Type)
		}
		leader := fmt.Sprintf("0x%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32())
		created := first.AddDate(0, 0, -v.DaysBefore).Add(time.Duration(r.IntN(86_400)) * time.Second)
		rows = append(rows, []any{s.w[w].Addr, v.Name, v.Type, leader, created, v.Description})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(string) < rows[j][0].(string) })
	return s.write(lake.PerpdexVaults, nil, rows)
}
