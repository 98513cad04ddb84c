package handlers_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdq/archive"
	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/ratelimit"
)

// TestPrometheusMetrics: /metrics counts requests per route pattern (not raw path),
// method and status, observes latency, counts budget refusals and archive bytes sent,
// and reports each area's derived-state age; the real credential store and limiter
// decide the refusals.
func TestPrometheusMetrics(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Tiny(t)
	q := openQueries(t, dir)
	store, err := ratelimit.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, key, err := store.CreateKey(ctx, "alice", "metrics")
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.NewLimiter(store.Counters(), store, 3)
	api := &handlers.API{Q: q, Auth: store, Budget: lim, Metrics: handlers.NewMetrics(q)}
	api.Mounts = []handlers.Mount{
		{Prefix: "/metrics", Handler: api.Metrics.Handler()},
		{Prefix: "/archive/", Handler: archive.Handler(archive.Options{Dir: archive.Root(dir)}), Auth: true, Public: archive.IsPublic},
	}
	q.MarkWarm("predmkt", testlake.Now().Add(-90*time.Minute), nil) // board hour 10:00, clock 12:00
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	call := func(path string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
		return resp.StatusCode
	}
	const wallet = "0x21f839801b99033064425928f998dbf97ccfe7ed"
	codes := []int{
		call("/v1/predmkt/wallets/" + wallet + "/positions"),
		call("/v1/predmkt/wallets/0x0000000000000000000000000000000000000001/positions"),
		call("/v1/predmkt/wallets/" + wallet + "/positions"),
		call("/v1/predmkt/wallets/" + wallet + "/positions"), // the 4th of a limit of 3
	}
	if codes[3] != 429 {
		t.Fatalf("codes %v, want the 4th refused", codes)
	}
	manifest, err := os.ReadFile(filepath.Join(archive.Root(dir), archive.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if code := call("/archive/manifest.json"); code != 200 {
		t.Fatalf("manifest %d", code)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`mdq_http_requests_total{method="GET",route="/v1/predmkt/wallets/{address}/positions",status="200"} 3`,
		`mdq_http_requests_total{method="GET",route="/v1/predmkt/wallets/{address}/positions",status="429"} 1`,
		`mdq_http_requests_total{method="GET",route="/archive/",status="200"} 1`,
		`mdq_http_request_duration_seconds_count{route="/v1/predmkt/wallets/{address}/positions"} 4`,
		`mdq_budget_refusals_total 1`,
		`mdq_archive_bytes_total ` + itoa(len(manifest)),
		`mdq_derived_age_seconds{area="predmkt"} 7200`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, wallet) {
		t.Error("/metrics carries a raw path")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestAccessLogVolume: --access-log all writes every request, off none, errors only
// status 400 and above, and a share samples the rest while errors are always written.
func TestAccessLogVolume(t *testing.T) {
	q := openQueries(t, testlake.Tiny(t))
	for _, tc := range []struct {
		flag            string
		minOK, maxOK    int // of 200 successful requests
		errorsPerFourty int
	}{
		{"all", 200, 200, 40}, {"off", 0, 0, 0}, {"errors", 0, 0, 40}, {"0.25", 20, 90, 40},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			pol, err := handlers.ParseAccessLog(tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			h := (&handlers.API{Q: q, Log: slog.New(slog.NewJSONHandler(&buf, nil)), AccessLog: pol}).Handler()
			for i := 0; i < 200; i++ {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
			}
			for i := 0; i < 40; i++ {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/nope", nil))
			}
			ok := strings.Count(buf.String(), `"status":200`)
			bad := strings.Count(buf.String(), `"status":404`)
			if ok < tc.minOK || ok > tc.maxOK || bad != tc.errorsPerFourty {
				t.Fatalf("logged %d of 200 successes and %d of 40 errors", ok, bad)
			}
		})
	}
	for _, bad := range []string{"0", "1.5", "some", "-1"} {
		if _, err := handlers.ParseAccessLog(bad); err == nil {
			t.Errorf("--access-log %s accepted", bad)
		}
	}
}
