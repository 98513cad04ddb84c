package cli_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
)

// The point-in-time property: the body a route serves from the full lake at clock T
// equals, byte for byte, the body it serves from `mdq lake cut --at T` at clock T. The
// full lake is one copy of the tiny lake shared by the tests of this file, published
// to its end first (derived tables, as a lake a server keeps is: a store at a past
// clock then finds tables published after its clock, which is what it must not show);
// stores are opened once per (lake, clock) and warmed as mdq serve warms them at start.

var pit = struct {
	sync.Mutex
	full   string
	stores map[string]*query.Queries
}{stores: map[string]*query.Queries{}}

// pitLog collects what the stores and handlers of the property test log (errors behind
// a 503, failed background publications), shown when a comparison fails.
var pitLog lockedBuffer

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns what was logged since the last take.
func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

func pitLogger(attrs ...any) *slog.Logger {
	return slog.New(slog.NewTextHandler(&pitLog, &slog.HandlerOptions{Level: slog.LevelWarn})).With(attrs...)
}

// pitFull is the shared copy of the tiny lake the full-lake stores read.
func pitFull(t *testing.T) string {
	t.Helper()
	pit.Lock()
	defer pit.Unlock()
	if pit.full == "" {
		// Not t.TempDir: the copy outlives the test that made it (stores stay open).
		dst, err := os.MkdirTemp("", "mdq-pit-full-")
		if err != nil {
			t.Fatal(err)
		}
		src := testlake.Tiny(t)
		err = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		pit.full = dst
		pit.Unlock()
		// Published to the lake's end, as mdq serve keeps it (and as every test of the
		// file expects: the order the tests run in must not matter).
		pitWarm(t, pitStore(t, dst, testlake.End))
		pit.Lock()
	}
	return pit.full
}

// pitWarm publishes and builds what mdq serve's refresher does at start (the same
// warmers, in the same order) and waits for the background cohort publication, so that
// a comparison never races a publication.
func pitWarm(t *testing.T, q *query.Queries) {
	t.Helper()
	ctx := query.AsBuild(context.Background())
	for _, w := range []func(context.Context) error{q.WarmPredmkt, q.PerpdexCohortsWarm, q.PerpdexWarm, q.OnchainWarm} {
		if err := w(ctx); err != nil {
			t.Fatalf("warm %s: %v", q.Dir(), err)
		}
	}
	<-q.PerpdexCohortsIdle()
}

// pitStore returns the store over dir with its clock pinned at at (kept for the binary:
// stores are closed when the process exits).
func pitStore(t *testing.T, dir string, at time.Time) *query.Queries {
	t.Helper()
	pit.Lock()
	defer pit.Unlock()
	k := dir + "|" + at.UTC().Format(time.RFC3339Nano)
	if q, ok := pit.stores[k]; ok {
		return q
	}
	// A long query timeout: on a loaded machine a board build must not turn into a 503
	// on one side only.
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return at }, NoGoLimit: true, Timeout: 10 * time.Minute,
		Memory: 1 << 30, Logger: pitLogger("store", filepath.Base(dir), "clock", at.UTC().Format(time.RFC3339Nano))})
	if err != nil {
		t.Fatal(err)
	}
	pit.stores[k] = q
	return q
}

// serve answers one request in-process: status and body.
func serve(q *query.Queries, method, target string) (int, string) {
	h := (&handlers.API{Q: q, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, rec.Body.String()
}

// pitDiff returns both bodies around their first difference (the start and 300 bytes
// either side), so a failure shows what differs, not only the common head.
func pitDiff(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	cut := func(s string) string {
		lo, hi := max(i-300, 0), min(i+300, len(s))
		out := s[lo:hi]
		if lo > 0 {
			out = fmt.Sprintf("%.120s ...[at byte %d]... %s", s, i, out)
		}
		return out
	}
	return cut(a), cut(b)
}

// pitServe is serve with the handler's log kept in pitLog.
func pitServe(q *query.Queries, method, target string) (int, string) {
	h := (&handlers.API{Q: q, Log: pitLogger("request", target)}).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, rec.Body.String()
}

// pitClock is one clock of the property test, named by the case it stands for.
type pitClock struct {
	name string
	at   time.Time
}

// pitClocks picks the clocks the issue names from the tiny lake itself.
func pitClocks(t *testing.T) []pitClock {
	t.Helper()
	q := pitStore(t, testlake.Tiny(t), testlake.End)
	db := q.DB()
	var eventMs, resMs, firstMs int64
	// A prediction-market fill in the middle of the lake, not on an hour: T is one
	// millisecond after it.
	must(t, db.QueryRowContext(context.Background(), `SELECT ts FROM predmkt_trades
		WHERE ts BETWEEN epoch_ms(TIMESTAMP '2026-11-16 10:00:00') AND epoch_ms(TIMESTAMP '2026-11-16 11:00:00')
		  AND ts % 3600000 > 600000 ORDER BY ts LIMIT 1`).Scan(&eventMs))
	// A market resolution in the second half of the lake: exactly on it.
	must(t, db.QueryRowContext(context.Background(), `SELECT epoch_ms(resolved_ts) FROM predmkt_resolutions
		WHERE resolved_ts BETWEEN TIMESTAMP '2026-11-17 00:00:00' AND TIMESTAMP '2026-11-19 00:00:00'
		  AND epoch_ms(resolved_ts) % 3600000 <> 0 ORDER BY resolved_ts LIMIT 1`).Scan(&resMs))
	must(t, db.QueryRowContext(context.Background(), `SELECT min(ts) FROM predmkt_trades`).Scan(&firstMs))
	return []pitClock{
		{"mid-day, mid-hour", time.Date(2026, 11, 15, 13, 37, 12, 345_000_000, time.UTC)},
		{"one millisecond after an event", time.UnixMilli(eventMs + 1).UTC()},
		{"exactly on an event, at a resolution time", time.UnixMilli(resMs).UTC()},
		{"before the first event", time.UnixMilli(firstMs).UTC().Add(-40 * 24 * time.Hour)},
		{"after the last event", testlake.End.Add(90 * time.Minute)},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pitPicks are ids a test picks from the lake, by route area and parameter name, used
// besides each route's examples.
func pitPicks(t *testing.T) map[string]string {
	t.Helper()
	db := pitStore(t, testlake.Tiny(t), testlake.End).DB()
	picks := map[string]string{}
	for key, q := range map[string]string{
		"perpdex address":       `SELECT wallet FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"perpdex coin":          `SELECT coin FROM perpdex_fills GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"perpdex builder":       `SELECT builder FROM perpdex_fills WHERE builder IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"predmkt address":       `SELECT wallet FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"predmkt wallet":        `SELECT wallet FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"predmkt token_id":      `SELECT token_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"predmkt condition_id":  `SELECT condition_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"onchain address":       `SELECT from_address FROM onchain_transfers GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
		"onchain token_address": `SELECT token_address FROM onchain_transfers GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
	} {
		var v string
		if err := db.QueryRowContext(context.Background(), q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		picks[key] = v
	}
	return picks
}

// pitTargets returns every request of the property test for one route: its example,
// and the example with each picked id in place of the example's.
func pitTargets(rt *handlers.Route, picks map[string]string) []string {
	q, vars, target, missing := handlers.ExampleQuery(rt)
	if missing != "" {
		return nil
	}
	out := []string{target}
	for _, p := range rt.Params {
		v, ok := picks[rt.Area+" "+p.Name]
		if !ok || strings.HasPrefix(rt.Path, "/v1/perpdex/vaults/") {
			continue
		}
		path := rt.Path
		nq := url.Values{}
		for k, vs := range q {
			nq[k] = vs
		}
		for k, x := range vars {
			if k == p.Name {
				x = v
			}
			path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(x))
		}
		if p.In != "path" {
			nq.Set(p.Name, v)
		}
		if enc := nq.Encode(); enc != "" {
			path += "?" + enc
		}
		out = append(out, path)
	}
	return out
}

// pitExempt lists the routes the property does not hold for, each with its SPEC
// reason (docs/POINT_IN_TIME.md repeats them). Liquidations and HYPE holders are not
// exempt: their "today's label" (SPEC LiquidationRow, HolderRow: lookahead by design)
// is today as of the clock, the labels of the newest snapshot at or before it, the
// same from the full lake and from its cut.
var pitExempt = map[string]string{
	"/v1/usage": "answers about the caller's own requests (SPEC §4.3), not about the lake",
	"/healthz":  "liveness, no data",
}

// TestPointInTimeEveryRoute is the property test: at every clock of pitClocks, every
// route of the table with its example and picked parameters serves the same status and
// body from the full lake as from the lake cut at that clock.
func TestPointInTimeEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts the lake at five clocks")
	}
	clocks := pitClocks(t)
	picks := pitPicks(t)
	full := pitFull(t)
	for _, c := range clocks {
		t.Run(c.name, func(t *testing.T) {
			cutDir := cutAt(t, c.at)
			qf, qc := pitStore(t, full, c.at), pitStore(t, cutDir, c.at)
			pitWarm(t, qf)
			pitWarm(t, qc)
			compared := 0
			for _, rt := range handlers.Routes() {
				if _, ok := pitExempt[rt.Path]; ok {
					continue
				}
				// MDQ_PIT_ROUTE narrows a run to the routes whose path contains it (to
				// chase one difference).
				if only := os.Getenv("MDQ_PIT_ROUTE"); only != "" && !strings.Contains(rt.Path, only) {
					continue
				}
				targets := pitTargets(rt, picks)
				if len(targets) == 0 {
					t.Errorf("%s: no example to run", rt.Path)
				}
				for _, target := range targets {
					fc, fb := pitServe(qf, rt.Method, target)
					cc, cb := pitServe(qc, rt.Method, target)
					if fc != cc || fb != cb {
						fd, cd := pitDiff(fb, cb)
						t.Errorf("%s at %s: full lake %d %s\n  cut %d %s\n  log: %s", target, c.at.Format(time.RFC3339Nano), fc, fd, cc, cd, pitLog.take())
						continue
					}
					compared++
				}
			}
			if l := pitLog.take(); l != "" {
				t.Logf("logged: %s", l)
			}
			t.Logf("%s (%s): %d requests equal", c.name, c.at.Format(time.RFC3339Nano), compared)
		})
	}
}
