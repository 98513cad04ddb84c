package query

import (
	"context"
	"time"

	sqlfiles "mdq/sql"
)

var onchainLabelProvenanceSQL = sqlfiles.MustRead("onchain/label_provenance.sql")

// LabelAssertion is one source's label row for an address.
type LabelAssertion struct {
	Source     string `json:"source" doc:"source id"`
	Name       string `json:"name" doc:"source display name"`
	Kind       string `json:"kind" doc:"manual, exchange_disclosure, heuristic or community"`
	Priority   int64  `json:"priority" doc:"cascade order, 1 first"`
	URL        string `json:"url" doc:"attribution link"`
	Entity     string `json:"entity"`
	WalletType string `json:"wallet_type"`
	Confidence string `json:"confidence"`
	RiskFlag   string `json:"risk_flag" doc:"empty string when clean"`
	ObservedAt string `json:"observed_at" doc:"when the source asserted it, ISO-8601 UTC"`
	Selected   bool   `json:"selected" doc:"true on the row the cascade resolves to"`
}

// ResolvedLabel is the label the cascade picks.
type ResolvedLabel struct {
	Entity     string `json:"entity"`
	WalletType string `json:"wallet_type"`
	Confidence string `json:"confidence"`
	RiskFlag   string `json:"risk_flag"`
	Source     string `json:"source"`
}

// LabelProvenance is /v1/onchain/labels/{address}/provenance.
type LabelProvenance struct {
	Address  string           `json:"address"`
	Resolved *ResolvedLabel   `json:"resolved" doc:"the cascade's label (lowest priority number); null when no source labels the address"`
	Sources  []LabelAssertion `json:"sources" doc:"every source's row, in cascade order"`
}

// OnchainLabelProvenance returns the label cascade of one address as it stood at the
// store clock: rows observed later are not shown.
func (q *Queries) OnchainLabelProvenance(ctx context.Context, address string) (LabelProvenance, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	out := LabelProvenance{Address: address, Sources: []LabelAssertion{}}
	rows, err := q.db.QueryContext(ctx, onchainLabelProvenanceSQL, address, q.Now())
	if err != nil {
		return out, wrap(ctx, "onchain label provenance", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r LabelAssertion
		var obs time.Time
		if err := rows.Scan(&r.Source, &r.Name, &r.Kind, &r.Priority, &r.URL, &r.Entity, &r.WalletType, &r.Confidence, &r.RiskFlag, &obs); err != nil {
			return out, wrap(ctx, "onchain label provenance", err)
		}
		r.ObservedAt = obs.UTC().Format(time.RFC3339)
		if len(out.Sources) == 0 {
			r.Selected = true
			out.Resolved = &ResolvedLabel{Entity: r.Entity, WalletType: r.WalletType, Confidence: r.Confidence, RiskFlag: r.RiskFlag, Source: r.Source}
		}
		out.Sources = append(out.Sources, r)
	}
	return out, wrap(ctx, "onchain label provenance", rows.Err())
}
