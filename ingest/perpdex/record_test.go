package perpdex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeInfo serves the info API from generated fixtures on loopback: fills of trades
// between the users up to its clock, hourly funding, ledger deposits, snapshots and
// marks. It answers 429 and 500 at times, pages fills at pageLimit, and can cancel the
// recorder's context after a given request to play a restart mid-run.
type fakeInfo struct {
	mu        sync.Mutex
	users     []string
	t0, now   time.Time
	pageLimit int
	requests  int
	faults    int
	cancelAt  int
	cancel    func()
	fromZero  int // userFillsByTime requests from time 0 (a recorder without a checkpoint)
	noFaults  bool
	badFills  map[string]bool // users whose next fills answer holds a malformed fill
	newest    bool            // a full fills answer holds the newest fills of the range (else the oldest)
}

type fakeFill struct {
	user string
	tid  int64
	ms   int64
	buy  bool
}

// fills is every fill up to the clock: trade k at t0 + k·2min between users k%n
// (buyer) and (k+1)%n (seller).
func (f *fakeInfo) fills() []fakeFill {
	var out []fakeFill
	n := len(f.users)
	for k := 0; ; k++ {
		ms := f.t0.Add(time.Duration(k) * 2 * time.Minute).UnixMilli()
		if ms > f.now.UnixMilli() {
			return out
		}
		out = append(out, fakeFill{f.users[k%n], int64(1000 + k), ms, true}, fakeFill{f.users[(k+1)%n], int64(1000 + k), ms, false})
	}
}

func (f *fakeInfo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.cancel != nil && f.requests == f.cancelAt {
		f.cancel() // the recorder is stopped while this request is in flight
	}
	switch {
	case f.noFaults:
	case f.requests%7 == 0:
		f.faults++
		w.Header().Set("Retry-After", "0")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case f.requests%11 == 0:
		f.faults++
		http.Error(w, "oops", http.StatusInternalServerError)
		return
	}
	var req struct {
		Type      string `json:"type"`
		User      string `json:"user"`
		StartTime int64  `json:"startTime"`
		EndTime   int64  `json:"endTime"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	now := f.now.UnixMilli()
	var out any
	switch req.Type {
	case "userFillsByTime":
		if req.StartTime == 0 {
			f.fromZero++
		}
		var page []map[string]any
		if f.badFills[req.User] {
			delete(f.badFills, req.User)
			page = append(page, map[string]any{"coin": "BTC", "time": f.t0.UnixMilli()}) // no px, sz, tid...
		}
		all := f.fills()
		if f.newest {
			sort.SliceStable(all, func(i, j int) bool { return all[i].ms > all[j].ms })
		}
		for _, x := range all {
			if x.user != req.User || x.ms < req.StartTime || x.ms > req.EndTime {
				continue
			}
			side, dir := "A", "Open Short"
			if x.buy {
				side, dir = "B", "Open Long"
			}
			page = append(page, map[string]any{"coin": "BTC", "px": "80000.5", "sz": "0.01", "side": side, "time": x.ms,
				"startPosition": "0.0", "dir": dir, "closedPnl": "0.0", "hash": fmt.Sprintf("0x%064x", x.tid), "oid": x.tid * 10,
				"crossed": x.buy, "fee": "0.1", "tid": x.tid, "feeToken": "USDC"})
			if len(page) == f.pageLimit {
				break
			}
		}
		out = page
	case "userFunding":
		var els []map[string]any
		for h := f.t0.Truncate(time.Hour).Add(time.Hour); h.UnixMilli() <= now; h = h.Add(time.Hour) {
			if h.UnixMilli() >= req.StartTime {
				els = append(els, map[string]any{"time": h.UnixMilli(), "hash": "0x" + strings.Repeat("0", 64),
					"delta": map[string]any{"type": "funding", "coin": "BTC", "usdc": "-0.01", "szi": "0.01", "fundingRate": "0.0000125"}})
			}
		}
		out = els
	case "userNonFundingLedgerUpdates":
		out = []map[string]any{{"time": f.t0.UnixMilli(), "hash": "0x" + strings.Repeat("d", 64),
			"delta": map[string]any{"type": "deposit", "usdc": "1000.0"}}}
	case "clearinghouseState":
		out = map[string]any{"assetPositions": []any{}, "time": now,
			"marginSummary": map[string]any{"accountValue": "1000.0", "totalNtlPos": "0.0", "totalMarginUsed": "0.0"}}
	case "spotClearinghouseState":
		out = map[string]any{"balances": []any{map[string]any{"coin": "HYPE", "token": 150, "total": "3.5", "hold": "0"}}}
	case "delegations":
		out = []any{}
	case "metaAndAssetCtxs":
		out = []any{map[string]any{"universe": []any{map[string]any{"name": "BTC"}}}, []any{map[string]any{"markPx": "80001.0"}}}
	default:
		http.Error(w, "unknown type", 400)
		return
	}
	json.NewEncoder(w).Encode(out) //nolint:errcheck
}

func (f *fakeInfo) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// TestRecorderResumesWithoutGapOrDuplicate: the recorder polls a local info server
// that answers 429 and 500 at times and pages fills, is stopped mid-round and started
// again (a new recorder on the same lake), and polls again later: the lake then holds
// every fill the server had, once, and every funding payment once, with the tape
// derived from those fills.
func TestRecorderResumesWithoutGapOrDuplicate(t *testing.T) {
	for _, newest := range []bool{false, true} {
		t.Run(fmt.Sprintf("full answers hold the newest fills %v", newest), func(t *testing.T) { recorderRestart(t, newest) })
	}
}

func recorderRestart(t *testing.T, newestFirst bool) {
	users := []string{"0x" + strings.Repeat("a", 40), "0x" + strings.Repeat("b", 40), "0x" + strings.Repeat("c", 40)}
	t0 := time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)
	fake := &fakeInfo{users: users, t0: t0, now: t0.Add(50 * time.Minute), pageLimit: 5, newest: newestFirst}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	root := t.TempDir()
	newRec := func() *Recorder {
		return &Recorder{Root: root, Info: srv.URL + "/info", Users: users, RPM: 600_000, PageLimit: 5,
			Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
			Now: func() time.Time { fake.mu.Lock(); defer fake.mu.Unlock(); return fake.now }}
	}
	ctx := context.Background()
	if _, err := newRec().Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	zero := fake.fromZero
	// Later, crossing midnight: stopped mid-round, then restarted.
	cctx, cancel := context.WithCancel(ctx)
	fake.set(func() { fake.now = t0.Add(150 * time.Minute); fake.cancelAt = fake.requests + 9; fake.cancel = cancel })
	if _, err := newRec().Cycle(cctx); err == nil {
		t.Fatal("a cycle stopped mid-round must say so")
	}
	fake.set(func() { fake.cancel = nil })
	if _, err := newRec().Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	fake.set(func() { fake.now = t0.Add(190 * time.Minute) })
	rec := newRec()
	if _, err := rec.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	if fake.faults == 0 || rec.Retries == 0 {
		t.Fatal("the server never answered 429 or 500: the test proves nothing about retries")
	}

	if zero < len(users) || fake.fromZero != zero {
		t.Fatalf("fill requests from time 0: %d in the first run, %d in all: the restarts did not resume", zero, fake.fromZero)
	}
	t.Logf("%d requests, %d answered 429 or 500 and retried", fake.requests, fake.faults)

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var want []string
	fake.set(func() {
		for _, x := range fake.fills() {
			want = append(want, fmt.Sprintf("%d %s", x.tid, x.user))
		}
	})
	sort.Strings(want)
	got := strs(t, db, "SELECT tid::VARCHAR || ' ' || wallet FROM read_parquet('"+root+"/perpdex/fills/*/*.parquet') ORDER BY 1")
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("fills: %d rows, want %d\nmissing or extra around: %v", len(got), len(want), diff(got, want))
	}
	if days := strs(t, db, "SELECT DISTINCT strftime(time, '%Y-%m-%d') FROM read_parquet('"+root+"/perpdex/fills/*/*.parquet') ORDER BY 1"); len(days) != 2 {
		t.Fatalf("fills must span two days: %v", days)
	}
	trades := strs(t, db, "SELECT count(*)::VARCHAR || ' ' || count(DISTINCT tid)::VARCHAR || ' ' || count(buyer)::VARCHAR || ' ' || count(seller)::VARCHAR FROM read_parquet('"+root+"/archive/venue=perpdex/*/trades.parquet')")
	if n := len(want) / 2; trades[0] != fmt.Sprintf("%d %d %d %d", n, n, n, n) {
		t.Fatalf("tape: %s, want %d trades with both sides", trades[0], n)
	}
	// Funding: hours 23:00, 00:00 and 01:00 for each user, once.
	fund := strs(t, db, "SELECT count(*)::VARCHAR || ' ' || count(DISTINCT (time, wallet))::VARCHAR FROM read_parquet('"+root+"/perpdex/funding/*/*.parquet')")
	if fund[0] != "9 9" {
		t.Fatalf("funding rows, distinct: %s, want 9 9", fund[0])
	}
	// One snapshot round per hour reached: 22:00 (first run), 00:00 (the restart), 01:00.
	acc := strs(t, db, "SELECT count(*)::VARCHAR FROM read_parquet('"+root+"/perpdex/accounts/*/*.parquet')")
	if acc[0] != "9" {
		t.Fatalf("account snapshots %s, want 9", acc[0])
	}
	cp, err := LoadCheckpoint(root)
	if err != nil || cp.Users[users[0]].Fills == 0 || !cp.SnapshotHour.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("checkpoint %+v %v", cp, err)
	}
}

func strs(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func diff(got, want []string) []string {
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	for _, w := range want {
		seen[w]--
	}
	var out []string
	for k, v := range seen {
		if v != 0 {
			out = append(out, fmt.Sprintf("%s:%+d", k, v))
		}
	}
	sort.Strings(out)
	return out
}

// TestRecorderMalformedAnswerKeepsResumePoint: a fills answer with a malformed fill is
// reported and not stored, and its user's resume point stays, so the next round asks
// for the same span again and the lake ends with every fill.
func TestRecorderMalformedAnswerKeepsResumePoint(t *testing.T) {
	users := []string{"0x" + strings.Repeat("a", 40), "0x" + strings.Repeat("b", 40)}
	t0 := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	fake := &fakeInfo{users: users, t0: t0, now: t0.Add(30 * time.Minute), pageLimit: 100, noFaults: true,
		badFills: map[string]bool{users[0]: true}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	root := t.TempDir()
	var log strings.Builder
	rec := &Recorder{Root: root, Info: srv.URL, Users: users, RPM: 600_000, Log: &log,
		Now: func() time.Time { return fake.now }}
	if _, err := rec.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `missing required field "px"`) {
		t.Fatalf("log: %s", log.String())
	}
	cp, _ := LoadCheckpoint(root)
	if cp.Users[users[0]].Fills != 0 || cp.Users[users[1]].Fills == 0 {
		t.Fatalf("checkpoint after a malformed answer: %+v %+v", cp.Users[users[0]], cp.Users[users[1]])
	}
	if _, err := rec.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	got := strs(t, db, "SELECT count(*)::VARCHAR FROM read_parquet('"+root+"/perpdex/fills/*/*.parquet')")
	if want := fmt.Sprint(len(fake.fills())); got[0] != want {
		t.Fatalf("%s fills stored, want %s", got[0], want)
	}
}
