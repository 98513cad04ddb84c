package handlers_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// TestDataAsOfHeaderOnBoardRoutes: a route answered from an hourly board says how old
// its data is (the board hour) in X-MDQ-Data-As-Of; a route reading raw tables only
// sends no such header.
func TestDataAsOfHeaderOnBoardRoutes(t *testing.T) {
	clock := time.Date(2026, 11, 20, 11, 40, 0, 0, time.UTC)
	q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{Now: func() time.Time { return clock }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	h := benchAPI(q).Handler()
	for _, tc := range []struct {
		path string
		want string
	}{
		{"/v1/predmkt/leaderboard", "2026-11-20T11:00:00Z"},
		{"/v1/perpdex/leaderboard", "2026-11-20T11:00:00Z"},
		{"/v1/onchain/tokens/screener", "2026-11-20T11:00:00Z"},
		{"/v1/perpdex/stats", ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.path, rec.Code, rec.Body.String())
		}
		if got := rec.Header().Get(handlers.DataAsOfHeader); got != tc.want {
			t.Errorf("%s: %s %q, want %q", tc.path, handlers.DataAsOfHeader, got, tc.want)
		}
	}
}
