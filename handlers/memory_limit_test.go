package handlers_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestSmallMemoryLimitAnswersEveryRoute: a store with a small memory budget (DuckDB's
// share far below what the boards and scans would like, so it spills to the lake's
// .tmp directory) answers every route of the table with its example parameters with
// the same status and body, byte for byte, as a store with the default budget. It
// runs on the tiny lake in `make test`; MDQ_MEMORY_TEST_LAKE (a lake directory, e.g.
// the medium demo lake), MDQ_MEMORY_TEST_CLOCK (RFC 3339, default the demo end) and
// MDQ_MEMORY_TEST_LIMIT (bytes, default 256 MiB, the smallest accepted; 1 GiB suits medium) run the same
// comparison on a larger lake (`make test-memory-limit`).
func TestSmallMemoryLimitAnswersEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every route twice")
	}
	dirA, dirB := os.Getenv("MDQ_MEMORY_TEST_LAKE"), ""
	clock := testlake.Now()
	limit := int64(256 << 20) // the smallest budget a store accepts
	if dirA == "" {
		dirA, dirB = testlake.Copy(t), testlake.Copy(t) // the stores write hourly boards into their lake
	} else {
		dirB = dirA
		if s := os.Getenv("MDQ_MEMORY_TEST_CLOCK"); s != "" {
			c, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatal(err)
			}
			clock = c
		}
	}
	if s := os.Getenv("MDQ_MEMORY_TEST_LIMIT"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		limit = n
	}
	now := func() time.Time { return clock }
	ctx := context.Background()
	big, err := query.Open(ctx, dirA, query.Options{Now: now, NoGoLimit: true, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	small, err := query.Open(ctx, dirB, query.Options{Now: now, NoGoLimit: true, Memory: limit, Threads: 1, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if got := small.Budget().DuckDB; got >= big.Budget().DuckDB {
		t.Fatalf("small store's DuckDB share %d is not below the default's %d", got, big.Budget().DuckDB)
	}
	srvBig := httptest.NewServer((&handlers.API{Q: big}).Handler())
	defer srvBig.Close()
	srvSmall := httptest.NewServer((&handlers.API{Q: small}).Handler())
	defer srvSmall.Close()
	get := func(base, method, target string) (int, []byte) {
		req, _ := http.NewRequest(method, base+target, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	compared, ok200 := 0, 0
	var slowBig, slowSmall time.Duration
	for _, rt := range handlers.Routes() {
		if rt.Area == "platform" || rt.Path == "/v1/usage" {
			continue // answers about the process or the caller, not the lake
		}
		_, _, target, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			t.Errorf("%s: no Example for %s", rt.Path, missing)
			continue
		}
		s := time.Now()
		codeB, bodyB := get(srvBig.URL, rt.Method, target)
		slowBig += time.Since(s)
		s = time.Now()
		codeS, bodyS := get(srvSmall.URL, rt.Method, target)
		slowSmall += time.Since(s)
		if codeB != codeS || !bytes.Equal(bodyB, bodyS) {
			t.Errorf("%s %s: default budget %d %.200q, small budget %d %.200q", rt.Method, target, codeB, bodyB, codeS, bodyS)
			continue
		}
		if codeB == 200 {
			ok200++
		}
		compared++
	}
	t.Logf("%d routes equal under a %d MiB budget (DuckDB %d MiB): %v with the default budget, %v with the small one",
		compared, limit>>20, small.Budget().DuckDB>>20, slowBig.Round(time.Millisecond), slowSmall.Round(time.Millisecond))
	if ok200 < 40 {
		t.Fatalf("only %d routes answered 200: the comparison proved little", ok200)
	}
}
