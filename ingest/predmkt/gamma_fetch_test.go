package predmkt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestFetchActive: --all-active lists a local Gamma API page by page (active, open
// markets only asked for), keeps the listing as a Gamma file that ingests into
// markets and tokens, and subscribes to every outcome token; TokensOf then resolves a
// condition id through the lake.
func TestFetchActive(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/markets" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		queries = append(queries, q.Encode())
		off, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		var page []map[string]any
		for i := off; i < min(off+limit, gammaPage+3); i++ {
			page = append(page, map[string]any{"conditionId": fmt.Sprintf("0x%064x", i+1), "question": fmt.Sprintf("Q%d?", i),
				"slug": fmt.Sprintf("q-%d", i), "outcomes": `["Yes","No"]`, "clobTokenIds": fmt.Sprintf(`["%d","%d"]`, 2*i+10, 2*i+11),
				"endDate": "2026-12-01T00:00:00Z", "closed": false, "active": true})
		}
		json.NewEncoder(w).Encode(page) //nolint:errcheck
	}))
	defer srv.Close()
	dir := t.TempDir()
	file, toks, err := FetchActive(context.Background(), srv.URL, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 2 || !strings.Contains(queries[0], "active=true") || !strings.Contains(queries[0], "closed=false") ||
		!strings.Contains(queries[1], "offset=500") {
		t.Fatalf("queries %v", queries)
	}
	if len(toks) != 2*(gammaPage+3) || toks[0] != "10" || toks[len(toks)-1] != strconv.Itoa(2*(gammaPage+2)+11) {
		t.Fatalf("%d tokens", len(toks))
	}
	res := ingestOK(t, dir, []string{file}, Options{})
	if res.Summary.Written != 3*(gammaPage+3) { // a market and its two tokens each
		t.Fatalf("ingest of the listing: %s", res.Summary.String())
	}
	got, err := TokensOf(context.Background(), dir, []string{"99", fmt.Sprintf("0x%064x", 2)})
	if err != nil || !reflect.DeepEqual(got, []string{"99", "12", "13"}) {
		t.Fatalf("TokensOf: %v %v", got, err)
	}
	if _, err := TokensOf(context.Background(), dir, []string{fmt.Sprintf("0x%064x", 99999)}); err == nil {
		t.Fatal("an unknown market resolved")
	}
}
