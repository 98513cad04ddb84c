package ratelimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestJWTTimeClaimsOutOfRange: exp, nbf and iat of 1e300 (which wrap to a negative
// int64 when converted) and negative values are refused, as are iat in the future.
func TestJWTTimeClaimsOutOfRange(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	is := newIssuer(t)
	v := NewJWTVerifier("https://issuer.test/realms/mdq", "mdq", is.srv.URL)
	v.Now = clk.Now
	now := clk.Now().Unix()
	claims := func(k string, val any) map[string]any {
		m := map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": "mdq", "sub": "carol", "exp": now + 600, "jti": k}
		m[k] = val
		return m
	}
	if _, err := v.Verify(ctx, is.sign(t, "RS256", "r1", claims("nbf", now-60))); err != nil {
		t.Fatalf("a sane nbf: %v", err)
	}
	for _, tc := range []struct {
		rule  string
		claim string
		val   any
	}{
		{"nbf of 1e300 is refused", "nbf", 1e300},
		{"iat of 1e300 is refused", "iat", 1e300},
		{"exp of 1e300 is refused", "exp", 1e300},
		{"a negative nbf is refused", "nbf", -1e300},
		{"iat an hour ahead is refused", "iat", now + 3600},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := v.Verify(ctx, is.sign(t, "RS256", "r1", claims(tc.claim, tc.val)))
			if !errors.Is(err, ErrInvalidCredential) {
				t.Fatalf("err = %v, want invalid credential", err)
			}
		})
	}
}

// TestJWTGarbageIs401WhenJWKSDown: with the issuer unreachable, a token that is not
// the issuer's (garbage, another issuer, expired) is still an invalid credential (401),
// not a store failure (503).
func TestJWTGarbageIs401WhenJWKSDown(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	is := newIssuer(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // nothing listens: every fetch fails
	v := NewJWTVerifier("https://issuer.test/realms/mdq", "mdq", dead.URL)
	v.Now = clk.Now
	now := clk.Now().Unix()
	for name, tok := range map[string]string{
		"garbage":        "abc.def.ghi",
		"unsigned json":  b64([]byte(`{"alg":"RS256","kid":"r1"}`)) + "." + b64([]byte(`{}`)) + "." + b64([]byte("sig")),
		"another issuer": is.sign(t, "RS256", "r1", map[string]any{"iss": "https://evil.test", "aud": "mdq", "sub": "x", "exp": now + 600}),
		"expired":        is.sign(t, "RS256", "r1", map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": "mdq", "sub": "x", "exp": now - 3600}),
		"alg none":       is.sign(t, "none", "r1", map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": "mdq", "sub": "x", "exp": now + 600}),
	} {
		if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrInvalidCredential) {
			t.Errorf("%s: err = %v, want invalid credential", name, err)
		}
	}
	// A token that only the issuer's keys can judge is a store failure while they
	// cannot be fetched: accepting or refusing it would both be a guess.
	tok := is.sign(t, "RS256", "r1", map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": "mdq", "sub": "x", "exp": now + 600})
	if _, err := v.Verify(ctx, tok); err == nil || errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("issuer's token with the JWKS down: err = %v, want a fetch failure", err)
	}
}

// TestJWKSFetchDoesNotStallCachedKeys: while a JWKS fetch for an unknown key id hangs
// on a slow issuer, a token signed by a cached key verifies without waiting for it.
func TestJWKSFetchDoesNotStallCachedKeys(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	is := newIssuer(t)
	var hold atomic.Bool
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() {
			entered <- struct{}{}
			<-release
		}
		resp, err := http.Get(is.srv.URL)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body) //nolint:errcheck
	}))
	defer slow.Close()
	defer close(release)
	v := NewJWTVerifier("https://issuer.test/realms/mdq", "mdq", slow.URL)
	v.Now = clk.Now
	v.Client = &http.Client{} // no timeout: the slow fetch lasts until released
	now := clk.Now().Unix()
	tok := func(kid, jti string) string {
		return is.sign(t, "RS256", kid, map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": "mdq", "sub": "carol", "exp": now + 3600, "jti": jti})
	}
	if _, err := v.Verify(ctx, tok("r1", "first")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(minRefetch)
	hold.Store(true)
	go v.Verify(ctx, tok("r9", "unknown-kid")) //nolint:errcheck // hangs in the fetch until released
	<-entered
	done := make(chan error, 1)
	go func() { _, err := v.Verify(ctx, tok("r1", "second")); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cached key: %v", err)
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a speed target
		t.Fatal("a token with a cached key waited behind another request's JWKS fetch")
	}
}
