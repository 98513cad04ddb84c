package ratelimit

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// JWTVerifier checks access tokens that an external OAuth 2.1 issuer (Keycloak, Auth0
// and the like) signed: RS256/384/512 or ES256/384 against the issuer's JWKS, the
// issuer, the audience, expiry and not-before. The JWKS is cached and refreshed every
// JWKSRefresh, and at once (at most every minRefetch) when a token names an unknown
// key id, so key rotation needs no restart. The sub claim is the user.
type JWTVerifier struct {
	Issuer   string
	Audience string // required in aud; empty accepts any audience
	JWKSURL  string
	Client   *http.Client
	Now      func() time.Time
	Leeway   time.Duration // clock skew allowed on exp and nbf

	JWKSRefresh time.Duration

	mu        sync.Mutex // guards the caches; never held across a network fetch
	fetchMu   sync.Mutex // one JWKS fetch at a time
	keys      map[string]crypto.PublicKey
	fetchedAt time.Time
	verified  map[[32]byte]cachedPrincipal
}

const minRefetch = 10 * time.Second

// NewJWTVerifier returns a verifier for issuer whose keys are at jwksURL.
func NewJWTVerifier(issuer, audience, jwksURL string) *JWTVerifier {
	return &JWTVerifier{
		Issuer: issuer, Audience: audience, JWKSURL: jwksURL,
		Client: &http.Client{Timeout: 10 * time.Second}, Now: time.Now,
		Leeway: 30 * time.Second, JWKSRefresh: 10 * time.Minute,
	}
}

type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

type jwtClaims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *float64        `json:"exp"`
	Nbf *float64        `json:"nbf"`
	Iat *float64        `json:"iat"`
	Jti string          `json:"jti"`
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: jwt: %s", ErrInvalidCredential, fmt.Sprintf(format, args...))
}

// Verify checks a compact JWS and returns the principal of its sub claim.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (Principal, error) {
	now := v.Now()
	th := sha256.Sum256([]byte(token))
	v.mu.Lock()
	if c, ok := v.verified[th]; ok && now.Before(c.until) {
		v.mu.Unlock()
		return c.p, nil
	}
	v.mu.Unlock()

	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Principal{}, invalid("not a compact JWS")
	}
	var hdr jwtHeader
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return Principal{}, invalid("header: %v", err)
	}
	if !acceptedAlg(hdr.Alg) {
		return Principal{}, invalid("algorithm %q not accepted", hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Principal{}, invalid("signature encoding")
	}
	// The claims are checked before the signature (nothing is trusted until the
	// signature holds): a token that is garbage, of another issuer or expired is 401
	// without reaching the issuer's JWKS, so an unreachable issuer cannot turn it into
	// a 503.
	var c jwtClaims
	if err := decodeSegment(parts[1], &c); err != nil {
		return Principal{}, invalid("claims: %v", err)
	}
	if c.Iss != v.Issuer {
		return Principal{}, invalid("issuer %q", c.Iss)
	}
	if v.Audience != "" && !audienceHas(c.Aud, v.Audience) {
		return Principal{}, invalid("audience")
	}
	if c.Exp == nil {
		return Principal{}, invalid("no exp")
	}
	exp, err := claimTime("exp", *c.Exp)
	if err != nil {
		return Principal{}, err
	}
	if !now.Before(exp.Add(v.Leeway)) {
		return Principal{}, invalid("expired")
	}
	if c.Nbf != nil {
		nbf, err := claimTime("nbf", *c.Nbf)
		if err != nil {
			return Principal{}, err
		}
		if now.Add(v.Leeway).Before(nbf) {
			return Principal{}, invalid("not yet valid")
		}
	}
	if c.Iat != nil {
		iat, err := claimTime("iat", *c.Iat)
		if err != nil {
			return Principal{}, err
		}
		if now.Add(v.Leeway).Before(iat) {
			return Principal{}, invalid("issued in the future")
		}
	}
	if c.Sub == "" {
		return Principal{}, invalid("no sub")
	}
	key, err := v.key(ctx, hdr.Kid)
	if err != nil {
		return Principal{}, err
	}
	if err := verifySig(hdr.Alg, key, []byte(parts[0]+"."+parts[1]), sig); err != nil {
		return Principal{}, err
	}
	id := c.Jti
	if id == "" {
		id = "sub:" + c.Sub
	}
	p := Principal{CredentialID: "jwt:" + id, Kind: KindOAuth, User: c.Sub}
	v.mu.Lock()
	if v.verified == nil || len(v.verified) >= 100_000 {
		v.verified = map[[32]byte]cachedPrincipal{}
	}
	v.verified[th] = cachedPrincipal{p: p, until: exp.Add(v.Leeway)}
	v.mu.Unlock()
	return p, nil
}

// maxClaimTime bounds NumericDate claims: seconds up to the year 9999. A larger value
// (1e300) does not fit an int64 and would convert to a negative time.
const maxClaimTime = 253402300799

// claimTime reads a NumericDate claim, refusing values outside [0, year 9999].
func claimTime(name string, f float64) (time.Time, error) {
	if !(f >= 0 && f <= maxClaimTime) { // also false for NaN
		return time.Time{}, invalid("%s %g out of range", name, f)
	}
	return time.Unix(int64(f), 0), nil
}

func acceptedAlg(alg string) bool {
	switch alg {
	case "RS256", "RS384", "RS512", "ES256", "ES384":
		return true
	}
	return false
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == want {
				return true
			}
		}
	}
	return false
}

func verifySig(alg string, key crypto.PublicKey, signed, sig []byte) error {
	var h hash.Hash
	var ch crypto.Hash
	switch alg {
	case "RS256", "ES256":
		h, ch = sha256.New(), crypto.SHA256
	case "RS384", "ES384":
		h, ch = sha512.New384(), crypto.SHA384
	case "RS512":
		h, ch = sha512.New(), crypto.SHA512
	default:
		return invalid("algorithm %q not accepted", alg)
	}
	h.Write(signed)
	digest := h.Sum(nil)
	switch k := key.(type) {
	case *rsa.PublicKey:
		if !strings.HasPrefix(alg, "RS") {
			return invalid("algorithm %q does not match an RSA key", alg)
		}
		if rsa.VerifyPKCS1v15(k, ch, digest, sig) != nil {
			return invalid("bad signature")
		}
	case *ecdsa.PublicKey:
		if !strings.HasPrefix(alg, "ES") {
			return invalid("algorithm %q does not match an EC key", alg)
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return invalid("bad signature")
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(k, digest, r, s) {
			return invalid("bad signature")
		}
	default:
		return invalid("unsupported key")
	}
	return nil
}

// key returns the public key named kid, fetching the JWKS when it is stale or does
// not hold kid. The fetch runs without the cache lock: a slow issuer delays only the
// tokens that need the new keys; a token whose key is cached is served from the cache
// (stale or not) while another request refreshes it.
func (v *JWTVerifier) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	k, ok, stale, fetchedAt := v.cached(kid)
	if ok && !stale {
		return k, nil
	}
	now := v.Now()
	if !stale && now.Sub(fetchedAt) < minRefetch {
		return nil, invalid("unknown key id %q", kid) // refetched a moment ago
	}
	if ok {
		if !v.fetchMu.TryLock() {
			return k, nil // another request is refreshing; the cached key still holds
		}
	} else {
		v.fetchMu.Lock()
	}
	defer v.fetchMu.Unlock()
	// Another request may have fetched while this one waited.
	if k2, ok2, stale2, fetchedAt2 := v.cached(kid); ok2 && !stale2 {
		return k2, nil
	} else if !stale2 && fetchedAt2.After(fetchedAt) {
		return nil, invalid("unknown key id %q", kid)
	}
	keys, err := v.fetch(ctx)
	if err != nil {
		if ok { // a failed refresh keeps the cached keys
			return k, nil
		}
		return nil, fmt.Errorf("jwks %s: %w", v.JWKSURL, err)
	}
	v.mu.Lock()
	v.keys, v.fetchedAt = keys, now
	v.mu.Unlock()
	k, ok = pick(keys, kid)
	if !ok {
		return nil, invalid("unknown key id %q", kid)
	}
	return k, nil
}

// cached looks kid up in the key cache.
func (v *JWTVerifier) cached(kid string) (k crypto.PublicKey, ok, stale bool, fetchedAt time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok = pick(v.keys, kid)
	return k, ok, v.keys == nil || v.Now().Sub(v.fetchedAt) >= v.JWKSRefresh, v.fetchedAt
}

// pick finds kid in keys; a token without kid uses the only key of a one-key set.
func pick(keys map[string]crypto.PublicKey, kid string) (crypto.PublicKey, bool) {
	if kid == "" && len(keys) == 1 {
		for _, only := range keys {
			return only, true
		}
	}
	k, ok := keys[kid]
	return k, ok
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func (v *JWTVerifier) fetch(ctx context.Context) (map[string]crypto.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := v.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, err
	}
	out := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pk, err := parseJWK(k)
		if err != nil {
			continue // keys of other types are not ours to use
		}
		out[k.Kid] = pk
	}
	if len(out) == 0 {
		return nil, errors.New("no usable signing key")
	}
	return out, nil
}

func parseJWK(k jwk) (crypto.PublicKey, error) {
	b := func(s string) (*big.Int, error) {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		return new(big.Int).SetBytes(raw), nil
	}
	switch k.Kty {
	case "RSA":
		n, err := b(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b(k.E)
		if err != nil || !e.IsInt64() {
			return nil, errors.New("bad exponent")
		}
		if n.BitLen() < 2048 {
			return nil, errors.New("RSA key under 2048 bits")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return nil, errors.New("unsupported curve")
		}
		x, err := b(k.X)
		if err != nil {
			return nil, err
		}
		y, err := b(k.Y)
		if err != nil {
			return nil, err
		}
		if !curve.IsOnCurve(x, y) { //nolint:staticcheck // validating a JWK point
			return nil, errors.New("point not on curve")
		}
		return &ecdsa.PublicKey{Curve: curve, X: x, Y: y}, nil
	}
	return nil, errors.New("unsupported key type")
}
