package query

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"time"

	sqlfiles "mdq/sql"
)

// Shared pieces of the on-chain queries: windows, chains, the label cascade's result
// and small conversions. Every window is measured back from the store clock q.Now().

// OnchainZeroAddress is the native coin's token address (not a contract).
const OnchainZeroAddress = "0x0000000000000000000000000000000000000000"

// OnchainChains are the chains of the lake, in display order.
var OnchainChains = []string{"ethereum", "bsc", "base"}

// onchainShort maps a chain to its short name in TokenTransferRow.chains.
var onchainShort = map[string]string{"ethereum": "eth", "bsc": "bsc", "base": "base"}

// OnchainWindows maps each rolling window name to its length; "all" is 0 (no lower bound).
var OnchainWindows = map[string]time.Duration{
	"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour, "all": 0,
}

// micros is t as epoch microseconds, the form every on-chain query binds times in
// (make_timestamp($n) on the SQL side), so no driver time-zone conversion applies.
func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

// windowBounds returns the (since, until] bounds of a rolling window ending at now, as
// epoch microseconds; "all" starts at the epoch.
func windowBounds(now time.Time, window string) (since, until int64) {
	d := OnchainWindows[window]
	if d == 0 {
		return 0, micros(now)
	}
	return micros(now.Add(-d)), micros(now)
}

// usd rounds a dollar figure to the cent.
func usd(x float64) float64 { return Round(x, 2) }

// tokens rounds a whole-token amount to 8 places (float noise of the sums only).
func tokens(x float64) float64 { return Round(x, 8) }

// nullStr turns a nullable column into a pointer.
func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

// dateOf formats a nullable timestamp as YYYY-MM-DD.
func dateOf(t sql.NullTime) *string {
	if !t.Valid {
		return nil
	}
	d := Date(t.Time)
	return &d
}

// csv joins addresses for the SQL side's string_split($n, ','): addresses are
// validated hex, so they never hold a comma.
func csv(addrs []string) string { return strings.Join(addrs, ",") }

// finite maps NaN and infinities (never expected) to 0 so JSON encoding cannot fail.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Label is an address's resolved label: the row of the source with the lowest
// priority number (the label cascade).
type Label struct {
	Entity     string
	WalletType string
	Confidence string
	RiskFlag   string
	Source     string
}

var onchainLabelsSQL = sqlfiles.MustRead("onchain/labels.sql")

// OnchainLabels resolves the label cascade for addrs (lower-case) as it stood at at
// (labels observed after it do not count) from the cascade the legs build read into
// memory; unlabelled addresses are absent from the map.
func (q *Queries) OnchainLabels(ctx context.Context, addrs []string, at time.Time) (map[string]Label, error) {
	out := map[string]Label{}
	if len(addrs) == 0 {
		return out, nil
	}
	if err := q.onchainLegs(ctx); err != nil {
		return nil, err
	}
	v, _ := q.ext.Load(legsKey{})
	all := *v.(*legsState).labels.Load()
	for _, a := range addrs {
		if l, ok := all.at(a, at); ok {
			out[a] = l
		}
	}
	return out, nil
}
