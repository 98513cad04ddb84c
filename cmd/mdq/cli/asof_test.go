package cli_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
)

// TestAsOfEveryRoute walks the route table: every /v1 route takes as_of; a past as_of
// answers exactly what a store whose clock is as_of answers (same status and body),
// with X-MDQ-As-Of naming it; as_of later than the serving clock is 400 naming both
// times; without as_of the header names the serving clock.
func TestAsOfEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every route at two clocks")
	}
	serving := testlake.End
	past := time.Date(2026, 11, 18, 21, 23, 45, 678_000_000, time.UTC)
	full := pitFull(t)
	qs, qp := pitStore(t, full, serving), pitStore(t, full, past)
	hs := (&handlers.API{Q: qs}).Handler()
	get := func(target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		hs.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		return rec
	}
	withQ := func(target, k, v string) string {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		return target + sep + k + "=" + url.QueryEscape(v)
	}
	compared := 0
	for _, rt := range handlers.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		found := false
		for _, p := range rt.Params {
			found = found || p.Name == "as_of"
		}
		if !found {
			t.Errorf("%s: no as_of parameter", rt.Path)
			continue
		}
		if rt.Method != "GET" || rt.Path == "/v1/usage" {
			continue // usage answers about the caller; POST routes are walked by their GET twins
		}
		_, _, target, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			t.Errorf("%s: no example", rt.Path)
			continue
		}
		// Without as_of: the serving clock.
		if rec := get(target); rec.Header().Get(handlers.AsOfHeader) != "2026-11-20T12:00:00.000Z" {
			t.Errorf("%s: %s %q without as_of, want the serving clock", target, handlers.AsOfHeader, rec.Header().Get(handlers.AsOfHeader))
		}
		// A past as_of, in both accepted forms, equals the store at that clock.
		pc, pb := serve(qp, "GET", target)
		for _, v := range []string{past.Format(time.RFC3339Nano), "1795037025678"} {
			rec := get(withQ(target, "as_of", v))
			if rec.Code != pc || rec.Body.String() != pb {
				t.Errorf("%s as_of=%s: %d %.300s\n  store at that clock: %d %.300s", target, v, rec.Code, rec.Body.String(), pc, pb)
				continue
			}
			if got := rec.Header().Get(handlers.AsOfHeader); got != "2026-11-18T21:23:45.678Z" {
				t.Errorf("%s as_of=%s: %s %q", target, v, handlers.AsOfHeader, got)
			}
			compared++
		}
		// Later than the serving clock: 400 naming both.
		rec := get(withQ(target, "as_of", "2026-11-20T12:00:00.001Z"))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "as_of 2026-11-20T12:00:00.001Z is later than the serving clock 2026-11-20T12:00:00.000Z") {
			t.Errorf("%s future as_of: %d %s", target, rec.Code, rec.Body.String())
		}
		if rec := get(withQ(target, "as_of", "yesterday")); rec.Code != 400 || !strings.Contains(rec.Body.String(), `as_of \"yesterday\" is not epoch milliseconds or an RFC 3339 time`) {
			t.Errorf("%s malformed as_of: %d %s", target, rec.Code, rec.Body.String())
		}
	}
	t.Logf("%d as_of requests equal the store at that clock", compared)
	if compared < 80 {
		t.Errorf("only %d compared", compared)
	}
}

// TestAsOfCLI: `mdq query ... --as_of` prints the body REST serves with as_of, and a
// future --as_of is the same 400.
func TestAsOfCLI(t *testing.T) {
	dir := pitFull(t)
	tok := "68783291989961754191311255821197966179714110417478218772409060504263891222377"
	q := pitStore(t, dir, testlake.End)
	_, body := serve(q, "GET", "/v1/predmkt/ohlcv?token_id="+tok+"&interval=1h&as_of=2026-11-15T13:37:12.345Z")
	code, out, errs := run(t, "query", "predmkt", "ohlcv", "--token_id", tok, "--interval", "1h", "--as_of", "2026-11-15T13:37:12.345Z",
		"--data", dir, "--clock", testlake.End.Format(time.RFC3339))
	if code != 0 || out != body {
		t.Fatalf("exit %d %s\nCLI  %.300q\nREST %.300q", code, errs, out, body)
	}
	code, _, errs = run(t, "query", "predmkt", "ohlcv", "--token_id", tok, "--interval", "1h", "--as_of", "2026-11-21T00:00:00Z",
		"--data", dir, "--clock", testlake.End.Format(time.RFC3339))
	if code == 0 || !strings.Contains(errs, "400: as_of 2026-11-21T00:00:00.000Z is later than the serving clock 2026-11-20T12:00:00.000Z") {
		t.Fatalf("future as_of: exit %d %s", code, errs)
	}
}
