package handlers

import (
	"context"

	"mdq/query"
	"mdq/ratelimit"
)

// UsageReporter is what GET /v1/usage needs from the Budget: the caller's window and
// credits, without spending.
type UsageReporter interface {
	Usage(ctx context.Context, p ratelimit.Principal) (ratelimit.Usage, error)
}

// accessRoutes are the routes about the caller's own access (usage).
func accessRoutes() []*Route {
	return []*Route{{
		Method: "GET", Path: "/v1/usage", Area: "platform", StrictParams: true,
		Summary: "The caller's hourly budget, what is left, when it resets, and credits spent",
		Description: "Spends one unit like every /v1 call; the figures include this request. " +
			"API keys have their own counter; OAuth tokens of one user share a pooled counter (budget_key user:<user>).",
		Response: ratelimit.Usage{},
		Run:      usage,
	}}
}

func usage(ctx context.Context, _ *query.Queries, _ Values) (any, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return nil, badInput("no credential: /v1/usage reports the budget of the X-API-Key or Bearer token it is called with")
	}
	u := ratelimit.Usage{Credential: ratelimit.UsageCredential{ID: p.CredentialID, Kind: p.Kind, User: p.User}, BudgetKey: p.BudgetKey()}
	r, ok := BudgetFrom(ctx).(UsageReporter)
	if !ok {
		return u, nil
	}
	got, err := r.Usage(ctx, p)
	if err != nil {
		return nil, &query.StoreError{Op: "usage", Err: err}
	}
	return got, nil
}
