package handlers_test

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
)

func docsServer(t *testing.T) (*httptest.Server, *handlers.API) {
	t.Helper()
	api := &handlers.API{Q: openQueries(t, testlake.Tiny(t)), Auth: oneKey{"sekrit"}}
	api.Mounts = api.SurfaceMounts()
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv, api
}

// TestDocsPageServedWithoutKeyListsEveryRoute: /docs is HTML rendered on the server
// (no script), needs no credential, and shows for every /v1 route its parameters, an
// example request and the example response the route really gives on the lake.
func TestDocsPageServedWithoutKeyListsEveryRoute(t *testing.T) {
	srv, api := docsServer(t)
	resp, err := http.Get(srv.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	page := string(body)
	if strings.Contains(page, "<script") {
		t.Error("the docs page carries a script")
	}
	for _, rt := range handlers.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		id := handlers.OperationID(rt)
		start := strings.Index(page, `<article id="`+id+`">`)
		if start < 0 {
			t.Errorf("%s %s: no section %s", rt.Method, rt.Path, id)
			continue
		}
		section := page[start:]
		section = html.UnescapeString(section[:strings.Index(section, "</article>")])
		for _, p := range rt.Params {
			if !strings.Contains(section, `<td class="n">`+p.Name+" ") {
				t.Errorf("%s: parameter %s not shown", rt.Path, p.Name)
			}
		}
		ex := api.RunExample(context.Background(), rt)
		// The page names the address it was fetched at.
		if !strings.Contains(section, strings.ReplaceAll(ex.Curl, handlers.DefaultBase, srv.URL)) {
			t.Errorf("%s: example request not shown", rt.Path)
		}
		if ex.Missing != "" {
			t.Logf("%s: %s", rt.Path, ex.Missing)
			continue
		}
		if !strings.Contains(section, ex.Body) {
			t.Errorf("%s: example response not shown", rt.Path)
		}
		if ex.Status != http.StatusOK {
			t.Logf("%s: example answers %d: %s", rt.Path, ex.Status, ex.Body)
		}
	}
}

// TestDocsExampleIsTheRealResponse: an example body is the REST body of the example
// request, arrays shortened to their first items.
func TestDocsExampleIsTheRealResponse(t *testing.T) {
	srv, api := docsServer(t)
	compared := 0
	for _, rt := range handlers.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") || rt.Stream != nil || rt.Path == "/v1/usage" {
			continue // usage answers about its caller: the example's is user docs
		}
		ex := api.RunExample(context.Background(), rt)
		if ex.Missing != "" || ex.Status != 200 {
			continue
		}
		req, _ := http.NewRequest(rt.Method, srv.URL+ex.Request, nil)
		req.Header.Set("X-API-Key", "sekrit")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, err := handlers.ShortenJSON(body, 3)
		if err != nil || resp.StatusCode != 200 || string(want) != ex.Body {
			t.Errorf("%s: example differs from REST %s (%d)\nexample: %.200s\nrest:    %.200s", rt.Path, ex.Request, resp.StatusCode, ex.Body, want)
		}
		compared++
	}
	if compared == 0 {
		t.Fatal("no route has a complete example")
	}
}

// TestDocsScreenshotInChromium renders /docs in headless Chromium (Debian's chromium)
// and checks the screenshot is a real, non-blank page. Without chromium it skips,
// except in CI (CI=true), where it fails.
func TestDocsScreenshotInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install -y chromium); CI must run the docs screenshot test")
		}
		t.Skip("chromium not installed: apt-get install -y chromium to run the docs screenshot test")
	}
	srv, api := docsServer(t)
	api.WarmDocs() // the page is ready before the browser asks
	dir := t.TempDir()
	shot := filepath.Join(dir, "docs.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1280,1800", "--screenshot="+shot, srv.URL+"/docs")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	img, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1800 {
		t.Fatalf("screenshot is %v", b)
	}
	// A rendered page has text, the dark example blocks and the method badges: many
	// distinct colours, a good share of them far from white.
	colours := map[uint32]bool{}
	dark := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
			if r+g+bl < 3*0x4000 {
				dark++
			}
		}
	}
	if len(colours) < 20 || dark < 500 {
		t.Fatalf("the screenshot looks blank: %d colours, %d dark samples", len(colours), dark)
	}
	if dst := os.Getenv("MDQ_DOCS_SCREENSHOT"); dst != "" {
		os.WriteFile(dst, f, 0o644) //nolint:errcheck
	}
}
