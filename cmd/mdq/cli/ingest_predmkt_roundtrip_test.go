package cli_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

func fnum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// exportDemo writes the demo lake's prediction market in the venue's formats: Gamma
// markets (one JSON array), the tape as a market-channel capture (receive time, frame)
// and the fills as Data API records (timestamps in seconds, with role and id).
func exportDemo(t *testing.T, db *sql.DB, out string) []string {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Gamma.
	rows, err := db.Query(`SELECT m.condition_id, question, slug, category, created_ts, end_ts, closed,
		t0.token_id, t1.token_id, t0.outcome, t1.outcome, r.resolved_ts, r.winning_index, coalesce(r.invalid, false)
		FROM predmkt_markets m JOIN predmkt_tokens t0 ON t0.condition_id = m.condition_id AND t0.outcome_index = 0
		JOIN predmkt_tokens t1 ON t1.condition_id = m.condition_id AND t1.outcome_index = 1
		LEFT JOIN predmkt_resolutions r ON r.condition_id = m.condition_id ORDER BY 1`)
	must(err)
	var markets []map[string]any
	cond := map[string]string{}
	for rows.Next() {
		var c, q, slug, cat, tok0, tok1, o0, o1 string
		var created, end time.Time
		var closed, invalid bool
		var resolved sql.NullTime
		var win sql.NullInt32
		must(rows.Scan(&c, &q, &slug, &cat, &created, &end, &closed, &tok0, &tok1, &o0, &o1, &resolved, &win, &invalid))
		cond[tok0], cond[tok1] = c, c
		prices := []string{"0.5", "0.5"}
		if win.Valid {
			prices = []string{"0", "0"}
			prices[win.Int32] = "1"
		}
		mk := map[string]any{"conditionId": c, "question": q, "slug": slug, "createdAt": created.Format(time.RFC3339Nano),
			"endDate": end.Format(time.RFC3339Nano), "closed": closed, "active": !closed,
			"outcomes": `["` + o0 + `","` + o1 + `"]`, "clobTokenIds": `["` + tok0 + `","` + tok1 + `"]`,
			"outcomePrices": `["` + prices[0] + `","` + prices[1] + `"]`, "tags": []map[string]string{{"slug": strings.ToLower(cat), "label": cat}}}
		if resolved.Valid {
			mk["closedTime"] = resolved.Time.UTC().Format(time.RFC3339Nano)
		}
		markets = append(markets, mk)
	}
	rows.Close()
	b, _ := json.Marshal(markets)
	gamma := filepath.Join(out, "gamma.json")
	must(os.WriteFile(gamma, b, 0o644))

	// The tape, in receive order per token.
	tape := filepath.Join(out, "tape.jsonl")
	f, err := os.Create(tape)
	must(err)
	w := bufio.NewWriter(f)
	rows, err = db.Query(`SELECT event_type, token_id, ts, local_ts, side, price, size, best_bid, best_ask, bids, asks, status
		FROM predmkt_book_events ORDER BY local_ts, token_id, seq`)
	must(err)
	for rows.Next() {
		var typ, tok, side, bids, asks, status string
		var ts, lts int64
		var price, size, bb, ba float64
		must(rows.Scan(&typ, &tok, &ts, &lts, &side, &price, &size, &bb, &ba, &bids, &asks, &status))
		var msg string
		tsq := strconv.Quote(strconv.FormatInt(ts, 10))
		switch typ {
		case "book":
			msg = fmt.Sprintf(`{"event_type":"book","asset_id":"%s","market":"%s","timestamp":%s,"bids":%s,"asks":%s}`, tok, cond[tok], tsq, bids, asks)
		case "price_change":
			msg = fmt.Sprintf(`{"event_type":"price_change","market":"%s","timestamp":%s,"price_changes":[{"asset_id":"%s","price":"%s","side":"%s","size":"%s","best_bid":"%s","best_ask":"%s"}]}`,
				cond[tok], tsq, tok, fnum(price), side, fnum(size), fnum(bb), fnum(ba))
		case "trade":
			msg = fmt.Sprintf(`{"event_type":"last_trade_price","asset_id":"%s","market":"%s","timestamp":%s,"price":"%s","side":"%s","size":"%s"}`,
				tok, cond[tok], tsq, fnum(price), side, fnum(size))
		case "tick_size_change":
			msg = fmt.Sprintf(`{"event_type":"tick_size_change","asset_id":"%s","market":"%s","timestamp":%s,"new_tick_size":"%s"}`, tok, cond[tok], tsq, fnum(price))
		case "status":
			msg = fmt.Sprintf(`{"event_type":"status","status":"%s","assets_ids":["%s"],"timestamp":%s}`, status, tok, tsq)
		default:
			t.Fatalf("event type %s", typ)
		}
		fmt.Fprintf(w, "%d %s\n", lts, msg)
	}
	rows.Close()
	must(w.Flush())
	must(f.Close())

	// Fills.
	fills := filepath.Join(out, "fills.jsonl")
	f, err = os.Create(fills)
	must(err)
	w = bufio.NewWriter(f)
	rows, err = db.Query(`SELECT trade_id, ts, token_id, t.condition_id, outcome_index, t.wallet, role, side, price, size, tx_hash,
		coalesce(p.pseudonym, ''), coalesce(p.display_name, '')
		FROM predmkt_trades t LEFT JOIN predmkt_profiles p USING (wallet) ORDER BY ts, seq, role DESC`)
	must(err)
	for rows.Next() {
		var id, tok, c, wallet, role, side, tx, pseudo, name string
		var ts int64
		var oi int32
		var price, size float64
		must(rows.Scan(&id, &ts, &tok, &c, &oi, &wallet, &role, &side, &price, &size, &tx, &pseudo, &name))
		b, _ := json.Marshal(map[string]any{"proxyWallet": wallet, "side": side, "asset": tok, "conditionId": c,
			"size": json.Number(fnum(size)), "price": json.Number(fnum(price)), "timestamp": ts / 1000, "outcomeIndex": oi,
			"transactionHash": tx, "name": name, "pseudonym": pseudo, "role": role, "id": id})
		w.Write(append(b, '\n')) //nolint:errcheck
	}
	rows.Close()
	must(w.Flush())
	must(f.Close())
	return []string{gamma, tape, fills}
}

// lakeViews opens a DuckDB with one view per prediction-market table of the lake at dir.
func lakeViews(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, tb := range []*lake.Table{lake.PredmktMarkets, lake.PredmktTokens, lake.PredmktResolutions, lake.PredmktProfiles,
		lake.PredmktTrades, lake.PredmktBookEvents, lake.PredmktFamilyBookEvents} {
		// Test-built paths, quoted.
		q := "CREATE VIEW " + tb.Name + " AS SELECT * EXCLUDE (filename) FROM read_parquet(" +
			lake.QuoteString(filepath.Join(dir, filepath.FromSlash(tb.Glob()))) + ", hive_partitioning = false, filename = true)"
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// lakeTable returns a table's rows as sorted text lines; seq is replaced by its rank
// among the token's tape events (the demo numbers events 1, 2, 3...; ingest derives
// seq from receive time: both increase per token in the same order).
func lakeTable(t *testing.T, db *sql.DB, tb *lake.Table, where string) []string {
	t.Helper()
	var cols []string
	for _, c := range tb.ColumnNames() {
		if c == "seq" {
			c = "CASE WHEN x.seq = 0 THEN 0 ELSE (SELECT count(*) FROM predmkt_book_events e WHERE e.token_id = x.token_id AND e.seq <= x.seq) END"
		} else {
			c = "x." + c
		}
		cols = append(cols, "coalesce(("+c+")::VARCHAR, 'NULL')")
	}
	q := "SELECT r FROM (SELECT " + strings.Join(cols, " || '|' || ") + " AS r FROM " + tb.Name + " x) " + where + " ORDER BY r"
	rows, err := db.Query(q)
	return scanLines(t, rows, err)
}

func scanLines(t *testing.T, rows *sql.Rows, err error) []string {
	t.Helper()
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

// stripSeq removes the fields that carry seq (and cursors built from it) from a JSON
// body, for routes that return tape positions.
func stripSeq(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if k == "seq" || k == "next_cursor" || k == "nextCursor" {
				delete(x, k)
			} else {
				x[k] = stripSeq(x[k])
			}
		}
	case []any:
		for i := range x {
			x[i] = stripSeq(x[i])
		}
	}
	return v
}

// TestIngestPredmktRoundTrip: the demo lake's prediction market written out in the
// venue's formats and ingested into an empty lake gives the same rows (seq compared by
// rank within the token), and every /v1/predmkt route answers the same bytes on both
// lakes (bodies carrying seq compared without it).
func TestIngestPredmktRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests the tiny lake's tape")
	}
	demoDir := testlake.Tiny(t)
	dq, err := query.Open(context.Background(), demoDir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer dq.Close()
	demoDB := lakeViews(t, demoDir)
	files := exportDemo(t, demoDB, t.TempDir())
	dir := filepath.Join(t.TempDir(), "lake")
	code, out, errs := run(t, append([]string{"ingest", "predmkt", "--data", dir, "--clock", testlake.End.Format(time.RFC3339)}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	t.Log(strings.SplitN(out, "\n", 2)[0])
	ingDB := lakeViews(t, dir)
	for _, c := range []struct {
		tb    *lake.Table
		where string
	}{
		{lake.PredmktMarkets, ""}, {lake.PredmktTokens, ""}, {lake.PredmktResolutions, ""},
		{lake.PredmktProfiles, "WHERE r NOT LIKE '%||'"}, // profiles with no field are not published by fills
		{lake.PredmktBookEvents, ""}, {lake.PredmktFamilyBookEvents, ""}, {lake.PredmktTrades, ""},
	} {
		want, got := lakeTable(t, demoDB, c.tb, c.where), lakeTable(t, ingDB, c.tb, c.where)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			n := 0
			for i := 0; i < min(len(got), len(want)) && n < 3; i++ {
				if got[i] != want[i] {
					t.Errorf("%s row %d:\n got %s\nwant %s", c.tb.Name, i, got[i], want[i])
					n++
				}
			}
			t.Errorf("%s: %d rows, demo %d", c.tb.Name, len(got), len(want))
		}
	}
	iq, err := query.Open(context.Background(), dir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer iq.Close()
	a, b := httptest.NewServer((&handlers.API{Q: dq}).Handler()), httptest.NewServer((&handlers.API{Q: iq}).Handler())
	defer a.Close()
	defer b.Close()
	same, normalized := 0, 0
	for _, rt := range handlers.Routes() {
		if rt.Area != "predmkt" || rt.Method != "GET" {
			continue
		}
		_, _, target, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			continue
		}
		body := func(base string) (int, []byte) {
			resp, err := http.Get(base + target)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			bb, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, bb
		}
		sa, ba := body(a.URL)
		sb, bb := body(b.URL)
		if sa != sb {
			t.Errorf("%s: status %d on the demo lake, %d ingested", target, sa, sb)
			continue
		}
		if string(ba) == string(bb) {
			same++
			continue
		}
		var ja, jb any
		if json.Unmarshal(ba, &ja) == nil && json.Unmarshal(bb, &jb) == nil && reflect.DeepEqual(stripSeq(ja), stripSeq(jb)) {
			normalized++
			continue
		}
		t.Errorf("%s differs:\ndemo     %.400s\ningested %.400s", target, ba, bb)
	}
	t.Logf("%d routes byte for byte, %d equal but for seq", same, normalized)
	if same < 10 {
		t.Errorf("only %d routes compared byte for byte", same)
	}
}
