package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
)

// emptyJSON reports whether a body holds no data: [] or {}, or an object whose arrays
// are all empty.
func emptyJSON(body string) bool {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return strings.TrimSpace(body) == ""
	}
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		if len(x) == 0 {
			return true
		}
		arrays, full := 0, 0
		for _, e := range x {
			if a, ok := e.([]any); ok {
				arrays++
				if len(a) > 0 {
					full++
				}
			}
		}
		return arrays > 0 && full == 0
	}
	return false
}

// TestDocsExamplesAreRealAndNonEmpty: every route's example on /docs is a 200 with
// data, run against the lake being served with ids picked from that lake.
func TestDocsExamplesAreRealAndNonEmpty(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	// Warm the derived state first, as serve does before the docs render: an example
	// must not be judged on a board still building under its 20 s bound.
	for _, warm := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
		if err := warm(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	api := &handlers.API{Q: q}
	for _, rt := range handlers.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		ex := api.RunExample(context.Background(), rt)
		switch {
		case ex.Missing != "":
			t.Errorf("%s: %s", rt.Path, ex.Missing)
		case ex.Status != 200:
			t.Errorf("%s %s: %d %.200s", rt.Path, ex.Request, ex.Status, ex.Body)
		case emptyJSON(ex.Body):
			t.Errorf("%s %s: empty %.200s", rt.Path, ex.Request, ex.Body)
		}
	}
}

// TestDocsUseTheServedAddress: the curl lines of /docs and servers of /openapi.json
// name the address the request reached; a Host that is not a plain host[:port] (it
// would be written into the page) falls back to the default.
func TestDocsUseTheServedAddress(t *testing.T) {
	api := &handlers.API{Q: openQueries(t, testlake.Tiny(t))}
	api.Mounts = api.SurfaceMounts()
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	base := srv.URL // http://127.0.0.1:<port>
	for _, p := range []string{"/docs", "/openapi.json"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte(base)) || bytes.Contains(body, []byte(handlers.DefaultBase)) {
			t.Errorf("%s does not name %s throughout", p, base)
		}
	}
	resp, _ := http.Get(srv.URL + "/openapi.json")
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	json.NewDecoder(resp.Body).Decode(&doc) //nolint:errcheck
	resp.Body.Close()
	if len(doc.Servers) != 1 || doc.Servers[0].URL != base {
		t.Fatalf("servers %+v, want %s", doc.Servers, base)
	}
	req := httptest.NewRequest("GET", "/docs", nil)
	req.Host = `evil"><script>x</script>`
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, req)
	if bytes.Contains(rec.Body.Bytes(), []byte("<script>x")) || !bytes.Contains(rec.Body.Bytes(), []byte(handlers.DefaultBase)) {
		t.Fatal("an odd Host reached the page")
	}
}
