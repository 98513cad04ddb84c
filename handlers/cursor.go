package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"
)

// Keyset cursors are opaque to clients: base64url of a JSON object holding the key of
// the last row served and a fingerprint of the filter parameters that produced the
// page. Passing a cursor back with different filters is refused (400), since the key
// would be meaningless in another ordering or population.

type cursorBody struct {
	F string          `json:"f"` // filter fingerprint
	K json.RawMessage `json:"k"` // the last row's sort key
}

// Fingerprint hashes the named filter parameters of v (order-independent).
func Fingerprint(v Values, names ...string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, _ := json.Marshal(v.Raw(n))
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// EncodeCursor makes the cursor that resumes after key under fingerprint fp.
func EncodeCursor(fp string, key any) string {
	k, _ := json.Marshal(key)
	b, _ := json.Marshal(cursorBody{F: fp, K: k})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor into key. It returns a 400 error when the cursor is
// malformed or was made for different filter parameters.
func DecodeCursor(s, fp string, key any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	var c cursorBody
	if err != nil || json.Unmarshal(b, &c) != nil || len(c.K) == 0 {
		return badInput("cursor is malformed: pass nextCursor back unchanged")
	}
	if c.F != fp {
		return badInput("cursor was issued for different filter parameters: resend the same filters with it, or drop the cursor")
	}
	if err := json.Unmarshal(c.K, key); err != nil {
		return badInput("cursor is malformed: pass nextCursor back unchanged")
	}
	return nil
}

// CursorAfter decodes the request's cursor parameter, if any, into the key of the last
// row served, checking it was issued under the fingerprint fp.
func CursorAfter[K any](v Values, fp string) (*K, error) {
	c := v.Str("cursor")
	if c == "" {
		return nil, nil
	}
	var k K
	if err := DecodeCursor(c, fp, &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// NextCursor encodes the key of the last row served as nextCursor; nil (JSON null)
// on the last page.
func NextCursor[K any](fp string, k *K) *string {
	if k == nil {
		return nil
	}
	s := EncodeCursor(fp, k)
	return &s
}

// BadInput is the exported form of badInput for route runners in other files: a 400
// whose message reaches the client.
func BadInput(format string, args ...any) error { return badInput(format, args...) }
