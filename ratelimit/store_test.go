package ratelimit

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeysAndTokens(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetClock(clk.Now)
	info, key, err := s.CreateKey(ctx, "alice", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "mdq_"+info.ID+"_") {
		t.Fatalf("key %q id %q", key, info.ID)
	}
	// Only the hash is stored.
	var stored []byte
	if err := s.DB().QueryRow(`SELECT hash FROM api_keys WHERE id = ?`, info.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256([]byte(key)); string(stored) != string(h[:]) {
		t.Fatal("stored value is not the key's SHA-256")
	}
	var n int
	s.DB().QueryRow(`SELECT count(*) FROM api_keys WHERE CAST(hash AS TEXT) LIKE ?`, "%"+key[20:30]+"%").Scan(&n) //nolint:errcheck
	if n != 0 {
		t.Fatal("key text found in the store")
	}

	p, err := s.Authenticate(ctx, key, "")
	if err != nil || p.User != "alice" || p.Kind != KindAPIKey || p.CredentialID != info.ID {
		t.Fatalf("authenticate: %+v %v", p, err)
	}
	for _, bad := range []string{"", "mdq_", "mdq_" + info.ID + "_x", key + "x", strings.Replace(key, "mdq_", "mdqt_", 1), "garbage"} {
		if _, err := s.Authenticate(ctx, bad, ""); !errors.Is(err, ErrInvalidCredential) {
			t.Fatalf("key %q: %v, want invalid", bad, err)
		}
	}
	// Either alone is enough; a bad key falls back to a good bearer.
	_, tok, err := s.IssueToken(ctx, "alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Authenticate(ctx, "mdq_bad", tok); err != nil || p.Kind != KindOAuth {
		t.Fatalf("bad key + good token: %+v %v", p, err)
	}
	// Revocation takes effect at once in this process.
	if err := s.RevokeKey(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, key, ""); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("revoked key: %v", err)
	}
	if err := s.RevokeKey(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	// Tokens expire.
	clk.Advance(time.Hour)
	if _, err := s.Authenticate(ctx, "", tok); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("expired token: %v", err)
	}
	keys, err := s.ListKeys(ctx, "alice")
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || keys[0].Label != "laptop" {
		t.Fatalf("list: %+v %v", keys, err)
	}
	// A revocation by another process is seen within the cache TTL.
	_, key2, _ := s.CreateKey(ctx, "alice", "")
	s.Authenticate(ctx, key2, "") //nolint:errcheck
	other, _ := Open(dir)
	defer other.Close()
	k2 := strings.Split(key2, "_")[1]
	if err := other.RevokeKey(ctx, k2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(authCacheTTL)
	if _, err := s.Authenticate(ctx, key2, ""); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("key revoked elsewhere still valid after the cache TTL: %v", err)
	}
}

func TestStoreUsesWAL(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q %v", mode, err)
	}
	var _ *sql.DB = s.DB()
}

// A local issuer: an RSA and an EC key served as a JWKS.
type issuer struct {
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	srv     *httptest.Server
	fetches atomic.Int32
	rotated atomic.Bool
	rsa2    *rsa.PrivateKey
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func newIssuer(t *testing.T) *issuer {
	is := &issuer{}
	var err error
	if is.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if is.rsa2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if is.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		rsaJWK := func(kid string, k *rsa.PrivateKey) map[string]string {
			return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
		}
		keys := []any{rsaJWK("r1", is.rsa), map[string]string{"kty": "EC", "kid": "e1", "crv": "P-256",
			"x": b64(is.ec.X.FillBytes(make([]byte, 32))), "y": b64(is.ec.Y.FillBytes(make([]byte, 32)))}}
		if is.rotated.Load() {
			keys = append(keys, rsaJWK("r2", is.rsa2))
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys}) //nolint:errcheck
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) sign(t *testing.T, alg, kid string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	signed := b64(h) + "." + b64(c)
	d := sha256.Sum256([]byte(signed))
	var sig []byte
	var err error
	switch {
	case alg == "RS256" && kid == "r2":
		sig, err = rsa.SignPKCS1v15(rand.Reader, is.rsa2, crypto.SHA256, d[:])
	case alg == "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, is.rsa, crypto.SHA256, d[:])
	case alg == "ES256":
		r, s, e := ecdsa.Sign(rand.Reader, is.ec, d[:])
		err = e
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	default:
		sig = []byte("x")
	}
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + b64(sig)
}

func TestJWTBearer(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	is := newIssuer(t)
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := NewJWTVerifier("https://issuer.test/realms/mdq", "mdq", is.srv.URL)
	v.Now = clk.Now
	s.SetJWTVerifier(v)
	now := clk.Now().Unix()
	good := map[string]any{"iss": "https://issuer.test/realms/mdq", "aud": []string{"account", "mdq"}, "sub": "carol", "exp": now + 600, "jti": "j1"}
	with := func(k string, val any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		if val == nil {
			delete(m, k)
		} else {
			m[k] = val
		}
		return m
	}
	for _, alg := range []string{"RS256", "ES256"} {
		kid := map[string]string{"RS256": "r1", "ES256": "e1"}[alg]
		p, err := s.Authenticate(ctx, "", is.sign(t, alg, kid, good))
		if err != nil || p.User != "carol" || p.Kind != KindOAuth || p.BudgetKey() != "user:carol" {
			t.Fatalf("%s: %+v %v", alg, p, err)
		}
	}
	bad := map[string]string{
		"issuer":   is.sign(t, "RS256", "r1", with("iss", "https://evil.test")),
		"audience": is.sign(t, "RS256", "r1", with("aud", "other")),
		"expired":  is.sign(t, "RS256", "r1", with("exp", now-3600)),
		"no exp":   is.sign(t, "RS256", "r1", with("exp", nil)),
		"no sub":   is.sign(t, "RS256", "r1", with("sub", nil)),
		"alg none": is.sign(t, "none", "r1", good),
		"HS256":    is.sign(t, "HS256", "r1", good),
		"alg/key":  is.sign(t, "ES256", "r1", good),
		"tampered": strings.Replace(is.sign(t, "RS256", "r1", good), ".", ".e30", 1),
	}
	for name, tok := range bad {
		if _, err := s.Authenticate(ctx, "", tok); !errors.Is(err, ErrInvalidCredential) {
			t.Fatalf("%s: %v, want invalid", name, err)
		}
	}
	// Key rotation: an unknown kid refetches the JWKS (at most every 10 s).
	before := is.fetches.Load()
	is.rotated.Store(true)
	clk.Advance(minRefetch)
	if p, err := s.Authenticate(ctx, "", is.sign(t, "RS256", "r2", with("jti", "j2"))); err != nil || p.User != "carol" {
		t.Fatalf("rotated key: %+v %v", p, err)
	}
	if is.fetches.Load() != before+1 {
		t.Fatalf("JWKS fetched %d times, want one refetch", is.fetches.Load()-before)
	}
}
