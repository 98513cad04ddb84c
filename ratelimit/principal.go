// Package ratelimit holds credentials (API keys and OAuth access tokens, stored as
// hashes in SQLite) and the sliding-hour request budget each credential spends.
package ratelimit

import (
	"errors"
	"time"
)

// Principal is the caller a valid credential stands for.
type Principal struct {
	CredentialID string // key id, token id, or the JWT's jti/sub
	Kind         string // api_key or oauth
	User         string
}

// BudgetKey names the counter a principal spends: each API key has its own; all OAuth
// tokens of one user share one pooled counter.
func (p Principal) BudgetKey() string {
	if p.Kind == "oauth" {
		return "user:" + p.User
	}
	return "key:" + p.CredentialID
}

// Decision is the outcome of spending one unit of a budget.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Time // when the oldest counted request leaves the window
}

// ErrInvalidCredential reports a credential that is unknown, revoked, expired or
// malformed.
var ErrInvalidCredential = errors.New("invalid credential")
