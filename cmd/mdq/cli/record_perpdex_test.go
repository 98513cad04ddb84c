package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRecordPerpdexOnce: `mdq record perpdex --once` polls a local info server (on
// loopback, answering from the perpdex fixtures) for the users of --users, merges the
// round into an empty directory and publishes derived tables; a second round resumes
// from the checkpoint (fills asked from the newest stored time) and writes nothing new.
func TestRecordPerpdexOnce(t *testing.T) {
	w1 := "0x" + strings.Repeat("1", 40)
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(perpdexFixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	answers := map[string][]byte{
		"userFillsByTime":             fixture("user_fills_" + w1 + ".json"),
		"userFunding":                 fixture("funding_" + w1 + ".json"),
		"userNonFundingLedgerUpdates": fixture("ledger_" + w1 + ".json"),
		"clearinghouseState":          fixture("clearinghouse_" + w1 + ".json"),
		"spotClearinghouseState":      []byte(`{"balances":[{"coin":"HYPE","token":150,"total":"7.25","hold":"0"}]}`),
		"delegations":                 fixture("delegations_" + w1 + "_1775210400000.json"),
		"metaAndAssetCtxs":            fixture("meta_and_ctxs_1775210400000.json"),
	}
	var mu sync.Mutex
	var starts []float64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(b, &req) != nil || (req["user"] != nil && req["user"] != w1) {
			http.Error(w, "bad request", 400)
			return
		}
		if req["type"] == "userFillsByTime" {
			mu.Lock()
			starts = append(starts, req["startTime"].(float64))
			mu.Unlock()
		}
		a, ok := answers[req["type"].(string)]
		if !ok {
			http.Error(w, "unknown type", 400)
			return
		}
		w.Write(a) //nolint:errcheck
	}))
	defer srv.Close()
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("# followed wallets\n"+w1+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lake")
	args := []string{"record", "perpdex", "--data", dir, "--info", srv.URL + "/info", "--users", users, "--once", "--rpm", "100000",
		"--clock", "2026-04-03T10:30:00Z"} // pinned: two rounds in one hour take one snapshot round
	code, out, errs := run(t, args...)
	if code != 0 || !strings.Contains(out, "rejected 0") || strings.Contains(out, "written 0,") {
		t.Fatalf("first round: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "perpdex/_record/checkpoint.json")); err != nil {
		t.Fatal("no checkpoint in the lake")
	}
	code, out, errs = run(t, args...)
	if code != 0 || !strings.Contains(out, "written 0,") {
		t.Fatalf("second round: exit %d\n%s\n%s", code, out, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	// The fixture's newest fill is at 1775206800000: the second round starts there.
	if len(starts) != 2 || starts[0] != 0 || starts[1] != 1775206800000 {
		t.Fatalf("fill requests started at %v", starts)
	}
	code, _, errs = run(t, "record", "perpdex", "--data", dir, "--users", users, "--once")
	if code == 0 || !strings.Contains(errs, "--info URL is required") {
		t.Fatalf("no --info: exit %d %s", code, errs)
	}
}
