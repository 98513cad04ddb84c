package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdq/archive"
	"mdq/lake"
)

// Fixture writes a small archive with lake.Writer: perpdex trades for two days,
// perpdex book events for one, and one predmkt family file. rows sets the size.
func Fixture(t testing.TB, dir string, rows int) {
	t.Helper()
	ctx := context.Background()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, day := range []string{"2026-11-18", "2026-11-19"} {
		if _, err := w.Write(ctx, lake.PerpdexTrades, []string{day}, func(add lake.AppendFunc) error {
			for i := 0; i < rows; i++ {
				ts := int64(1763510400000 + i*37)
				if err := add("BTC", ts, ts+3, int64(i), "B", 90000.5+float64(i%100), 0.01*float64(i%7+1),
					fmt.Sprintf("0x%064x", i), int64(i), fmt.Sprintf("0x%040x", i), fmt.Sprintf("0x%040x", i+1)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	tape := func(add lake.AppendFunc) error {
		for i := 0; i < rows; i++ {
			ts := int64(1763510400000 + i*11)
			if err := add("price_change", "123456", ts, ts+2, int64(i), "BUY", 0.5, float64(i%50), 0.49, 0.51, "", "", 0, ""); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := w.Write(ctx, lake.PerpdexBookEvents, []string{"2026-11-19"}, tape); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, lake.PredmktFamilyBookEvents, []string{"btc", "15m", "2026-11-19"}, tape); err != nil {
		t.Fatal(err)
	}
}

func TestRefreshManifest(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	Fixture(t, data, 3000)
	dir := archive.Root(data)
	if err := archive.Refresh(ctx, data); err != nil {
		t.Fatal(err)
	}
	m, err := archive.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !m.RangeRequests || m.Auth.Header != "X-API-Key" || len(m.Files) != 3 || len(m.Families) != 1 || len(m.Samples) != 2 {
		t.Fatalf("manifest: range %v auth %+v files %d families %d samples %d", m.RangeRequests, m.Auth, len(m.Files), len(m.Families), len(m.Samples))
	}
	for _, e := range append(append(append([]archive.Entry{}, m.Files...), m.Families...), m.Samples...) {
		p := filepath.Join(dir, filepath.FromSlash(e.Path))
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sum, _ := archive.HashFile(p)
		if st.Size() != e.Bytes || sum != e.SHA256 {
			t.Fatalf("%s: bytes %d sha %s, manifest %d %s", e.Path, st.Size(), sum, e.Bytes, e.SHA256)
		}
	}
	f := m.Families[0]
	if f.Venue != "predmkt" || f.Asset != "btc" || f.Tenor != "15m" || f.Date != "2026-11-19" || f.Rows != 3000 {
		t.Fatalf("family %+v", f)
	}
	if s := m.Samples[0]; s.Rows != archive.SampleRows || !strings.HasPrefix(s.Path, "samples/venue=perpdex/") || s.Source == "" {
		t.Fatalf("sample %+v", s)
	}
	if len(m.Venues) != 1 {
		t.Fatalf("venues %+v", m.Venues)
	}
	v := m.Venues[0]
	if v.Venue != "perpdex" || !v.RangeRequests || v.Auth.Scheme != "header" || len(v.Dates) != 2 ||
		v.Dates[1].Streams["trades"].Rows != 3000 || v.Dates[1].Streams["book_events"].Bytes == 0 ||
		len(v.Schema["trades.parquet"]) != len(lake.PerpdexTrades.Columns) || v.FreeSample["trades"] == "" {
		t.Fatalf("venue block %+v", v)
	}

	// Nothing changed: no rewrite. A new partition: rewritten, old hashes reused.
	if wrote, err := archive.RefreshDir(ctx, dir); err != nil || wrote {
		t.Fatalf("unchanged archive rewritten: %v %v", wrote, err)
	}
	w, _ := lake.NewWriter(data)
	w.Write(ctx, lake.PerpdexTrades, []string{"2026-11-20"}, func(add lake.AppendFunc) error { //nolint:errcheck
		return add("ETH", int64(1), int64(2), int64(3), "A", 1.0, 1.0, "0x", int64(1), "0x", "0x")
	})
	w.Close()
	if wrote, err := archive.RefreshDir(ctx, dir); err != nil || !wrote {
		t.Fatalf("new partition not picked up: %v %v", wrote, err)
	}
	m2, _ := archive.ReadManifest(dir)
	// The new day is the venue's last (still being written): the sample stays on the
	// newest complete day.
	if len(m2.Files) != 4 || m2.Samples[1].Source != "venue=perpdex/date=2026-11-19/trades.parquet" {
		t.Fatalf("after a new day: %d files, samples %+v", len(m2.Files), m2.Samples)
	}
}

func newServer(t testing.TB, dir string) *httptest.Server {
	opt := archive.Options{Dir: dir}
	mux := http.NewServeMux()
	mux.Handle("/archive/", archive.Handler(opt))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestServeRanges(t *testing.T) {
	data := t.TempDir()
	Fixture(t, data, 3000)
	dir := archive.Root(data)
	rel := "venue=perpdex/date=2026-11-19/trades.parquet"
	want, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	size := len(want)
	srv := newServer(t, dir)
	url := srv.URL + "/archive/" + rel

	resp, body := get(t, url, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("Accept-Ranges") != "bytes" ||
		resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("full GET: %d %d bytes %v", resp.StatusCode, len(body), resp.Header)
	}
	etag := resp.Header.Get("ETag")

	resp, body = get(t, url, map[string]string{"Range": "bytes=100-199"})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[100:200]) || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 100-199/%d", size) {
		t.Fatalf("single range: %d %q", resp.StatusCode, resp.Header.Get("Content-Range"))
	}
	resp, body = get(t, url, map[string]string{"Range": "bytes=-10"})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[size-10:]) {
		t.Fatalf("suffix range: %d", resp.StatusCode)
	}
	resp, body = get(t, url, map[string]string{"Range": fmt.Sprintf("bytes=%d-", size/2)})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[size/2:]) {
		t.Fatalf("open range: %d", resp.StatusCode)
	}

	// Multiple ranges: multipart/byteranges, each part byte-exact.
	resp, body = get(t, url, map[string]string{"Range": "bytes=0-9,50-59"})
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != 206 || mt != "multipart/byteranges" {
		t.Fatalf("multi range: %d %s", resp.StatusCode, mt)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for _, r := range [][2]int{{0, 10}, {50, 60}} {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(part)
		if !bytes.Equal(got, want[r[0]:r[1]]) {
			t.Fatalf("part %v differs", r)
		}
	}

	// If-Range: the current ETag honours the range; a stale one sends the whole file.
	resp, body = get(t, url, map[string]string{"Range": "bytes=10-19", "If-Range": etag})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[10:20]) {
		t.Fatalf("If-Range current: %d", resp.StatusCode)
	}
	resp, body = get(t, url, map[string]string{"Range": "bytes=10-19", "If-Range": `"stale"`})
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("If-Range stale: %d", resp.StatusCode)
	}
	resp, _ = get(t, url, map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}

	// Unsatisfiable.
	for _, r := range []string{fmt.Sprintf("bytes=%d-", size), fmt.Sprintf("bytes=%d-%d", size+10, size+20)} {
		resp, _ = get(t, url, map[string]string{"Range": r})
		if resp.StatusCode != 416 || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
			t.Fatalf("%s: %d %q, want 416", r, resp.StatusCode, resp.Header.Get("Content-Range"))
		}
	}
	// HEAD and a method the archive refuses.
	hr, _ := http.Head(url)
	if hr.StatusCode != 200 || hr.ContentLength != int64(size) {
		t.Fatalf("HEAD: %d %d", hr.StatusCode, hr.ContentLength)
	}
	pr, _ := http.Post(url, "text/plain", strings.NewReader("x"))
	if pr.StatusCode != 405 {
		t.Fatalf("POST: %d", pr.StatusCode)
	}
}

func TestServeTraversal(t *testing.T) {
	data := t.TempDir()
	Fixture(t, data, 10)
	dir := archive.Root(data)
	secret := "TOP-SECRET-LAKE-FILE"
	os.WriteFile(filepath.Join(data, "secret.txt"), []byte(secret), 0o644)           //nolint:errcheck
	os.WriteFile(filepath.Join(dir, ".hidden.parquet.tmp-1"), []byte(secret), 0o644) //nolint:errcheck
	if err := os.Symlink(filepath.Join(data, "secret.txt"), filepath.Join(dir, "venue=perpdex", "link.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, dir)
	for _, p := range []string{
		"/archive/../secret.txt",
		"/archive/%2e%2e/secret.txt",
		"/archive/%2E%2E%2Fsecret.txt",
		"/archive/venue=perpdex/..%2f..%2fsecret.txt",
		"/archive/venue=perpdex/%2e%2e/%2e%2e/secret.txt",
		"/archive/..%5csecret.txt",
		"/archive/%252e%252e/secret.txt",
		"/archive//secret.txt",
		"/archive/./venue=perpdex/../../secret.txt",
		"/archive/venue=perpdex/link.parquet",
		"/archive/up/secret.txt",
		"/archive/.hidden.parquet.tmp-1",
		"/archive/venue=perpdex",
		"/archive/%00",
	} {
		// Send the path exactly as written: no client-side cleaning.
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(b), secret) {
			t.Fatalf("%s: %d %q: traversal not refused", p, resp.StatusCode, b)
		}
	}
	if archive.IsPublic("/archive/samples/../venue=perpdex/date=2026-11-19/trades.parquet") ||
		!archive.IsPublic("/archive/manifest.json") || !archive.IsPublic("/archive/samples/venue=x/trades.parquet") ||
		archive.IsPublic("/archive/samples") || archive.IsPublic("/archive/venue=x/manifest.json") {
		t.Fatal("IsPublic")
	}
}

func TestThrottlePaces(t *testing.T) {
	var slept time.Duration
	now := time.Unix(0, 0)
	tw := archive.NewThrottledWriterForTest(io.Discard, 100_000, func() time.Time { return now }, func(d time.Duration) {
		slept += d
		now = now.Add(d)
	})
	buf := make([]byte, 1_000_000)
	if n, err := tw.Write(buf); err != nil || n != len(buf) {
		t.Fatal(n, err)
	}
	if slept != 10*time.Second {
		t.Fatalf("1 MB at 100 kB/s slept %s, want 10s", slept)
	}
}

func BenchmarkArchiveThroughput(b *testing.B) {
	data := b.TempDir()
	dir := archive.Root(data)
	os.MkdirAll(filepath.Join(dir, "venue=bench", "date=2026-01-01"), 0o755) //nolint:errcheck
	const size = 256 << 20
	blob := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	p := filepath.Join(dir, "venue=bench", "date=2026-01-01", "trades.parquet")
	if err := os.WriteFile(p, blob, 0o644); err != nil {
		b.Fatal(err)
	}
	srv := newServer(b, dir)
	url := srv.URL + "/archive/venue=bench/date=2026-01-01/trades.parquet"
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != size {
			b.Fatalf("read %d", n)
		}
	}
}
