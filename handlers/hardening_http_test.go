package handlers_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
)

// TestHealthzNamesNoPath: /healthz needs no key, so it shows no location on disk.
func TestHealthzNamesNoPath(t *testing.T) {
	dir := testlake.Tiny(t)
	h := (&handlers.API{Q: openQueries(t, dir)}).Handler()
	code, body := get(t, h, "/healthz")
	if code != 200 || strings.Contains(string(body), dir) || strings.Contains(string(body), `"lake"`) {
		t.Fatalf("%d %s", code, body)
	}
}

// TestAbsoluteFormNotRedirectedToItsHost: a request whose target is absolute-form
// (GET http://elsewhere/...) and not clean is redirected to the clean path on this
// server, never to the host the target named.
func TestAbsoluteFormNotRedirectedToItsHost(t *testing.T) {
	srv := httptest.NewServer((&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler())
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET http://evil.example/v1//predmkt/leaderboard HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 == 3 && (strings.Contains(loc, "evil.example") || !strings.HasPrefix(loc, "/")) {
		t.Fatalf("%d Location %q: redirected off this server", resp.StatusCode, loc)
	}
	if resp.StatusCode/100 != 3 {
		t.Logf("answered %d without a redirect", resp.StatusCode)
	}
}
