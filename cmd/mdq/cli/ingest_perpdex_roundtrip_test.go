package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// TestIngestPerpdexRoundTrip: the tiny demo lake's fills written out as node fill
// files (plain and LZ4, one block per fill time), its account and position snapshots
// as clearinghouseState answers, its funding and ledger as userFunding and
// userNonFundingLedgerUpdates answers, its hourly marks as metaAndAssetCtxs answers and
// its HYPE balances as spotClearinghouseState and delegations answers, ingested by
// `mdq ingest perpdex` into an empty directory, give the same rows (EXCEPT ALL both
// ways) in perpdex_fills, perpdex_funding, perpdex_ledger, perpdex_accounts,
// perpdex_marks and perpdex_hype_balances, the same positions (the mark,
// recomputed as positionValue / |szi|, within 1e-9 relative), a tape with the demo's
// trades (same tid, time, side, price, size, hash, buyer, seller), and the same bytes
// (status 200) on the thirteen /v1/perpdex routes that read only those tables.
func TestIngestPerpdexRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("exports and ingests the tiny lake")
	}
	src := testlake.Tiny(t)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := t.TempDir()
	glob := func(root string, tb *lake.Table) string { return filepath.Join(root, filepath.FromSlash(tb.Glob())) }
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var files []string

	// Fills → node files, one per date, LZ4 on odd days.
	rows, err := db.Query(`SELECT strftime("time", '%Y-%m-%d'), epoch_ms("time"), wallet, coin, side, px, sz, dir, start_position,
		closed_pnl, fee, fee_token, builder, builder_fee, deployer_fee, crossed, hash, tid, oid, liquidation, liq_mark_px
		FROM read_parquet(?) ORDER BY "time", tid, side`, glob(src, lake.PerpdexFills))
	if err != nil {
		t.Fatal(err)
	}
	byDate := map[string]*bytes.Buffer{}
	var dates []string
	var lastMs int64 = -1
	var block []any
	var cur *bytes.Buffer
	flush := func() {
		if len(block) == 0 {
			return
		}
		tm := time.UnixMilli(lastMs).UTC()
		line, _ := json.Marshal(map[string]any{"local_time": tm.Add(40 * time.Millisecond).Format("2006-01-02T15:04:05.000000000"),
			"block_time": tm.Format("2006-01-02T15:04:05.000000"), "block_number": lastMs, "events": block})
		cur.Write(line)
		cur.WriteByte('\n')
		block = nil
	}
	nFills := 0
	for rows.Next() {
		var date, wallet, coin, side, dir, feeToken, hash string
		var ms, tid, oid int64
		var px, sz, start, closed, fee float64
		var builder sql.NullString
		var bfee, dfee, liqMark sql.NullFloat64
		var crossed, liq bool
		if err := rows.Scan(&date, &ms, &wallet, &coin, &side, &px, &sz, &dir, &start, &closed, &fee, &feeToken, &builder,
			&bfee, &dfee, &crossed, &hash, &tid, &oid, &liq, &liqMark); err != nil {
			t.Fatal(err)
		}
		if ms != lastMs {
			flush()
			lastMs = ms
		}
		if byDate[date] == nil {
			byDate[date] = &bytes.Buffer{}
			dates = append(dates, date)
		}
		cur = byDate[date]
		f := map[string]any{"coin": coin, "px": num(px), "sz": num(sz), "side": side, "time": ms, "startPosition": num(start),
			"dir": dir, "closedPnl": num(closed), "hash": hash, "oid": oid, "crossed": crossed, "fee": num(fee), "tid": tid,
			"feeToken": feeToken, "cloid": nil}
		if builder.Valid {
			f["builder"], f["builderFee"] = builder.String, num(bfee.Float64)
		}
		if dfee.Valid {
			f["deployerFee"] = num(dfee.Float64)
		} else {
			f["deployerFee"] = nil
		}
		if liq {
			f["liquidation"] = map[string]any{"liquidatedUser": wallet, "markPx": num(liqMark.Float64), "method": "market"}
		}
		block = append(block, []any{wallet, f})
		nFills++
	}
	flush()
	rows.Close()
	for i, d := range dates {
		name := filepath.Join(out, "node_fills_"+d+".jsonl")
		b := byDate[d].Bytes()
		if i%2 == 1 {
			name += ".lz4"
			var z bytes.Buffer
			w := lz4.NewWriter(&z)
			w.Write(b) //nolint:errcheck
			w.Close()
			b = z.Bytes()
		}
		writeTestFile(t, name, b)
		files = append(files, name)
	}

	// Funding and ledger → one userFunding and one ledger answer per wallet.
	perWallet := func(q, prefix string, el func(r *sql.Rows) (string, any)) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string][]any{}
		for rows.Next() {
			w, v := el(rows)
			m[w] = append(m[w], v)
		}
		for w, els := range m {
			b, _ := json.Marshal(els)
			name := filepath.Join(out, prefix+"_"+w+".json")
			writeTestFile(t, name, b)
			files = append(files, name)
		}
	}
	perWallet(`SELECT wallet, epoch_ms("time"), coin, usdc, szi, funding_rate FROM read_parquet('`+glob(src, lake.PerpdexFunding)+`')`, "funding",
		func(r *sql.Rows) (string, any) {
			var w, coin string
			var ms int64
			var usdc, szi, rate float64
			if err := r.Scan(&w, &ms, &coin, &usdc, &szi, &rate); err != nil {
				t.Fatal(err)
			}
			return w, map[string]any{"time": ms, "hash": "0x" + strings.Repeat("0", 64), "delta": map[string]any{"type": "funding",
				"coin": coin, "usdc": num(usdc), "szi": num(szi), "fundingRate": num(rate), "nSamples": nil}}
		})
	perWallet(`SELECT wallet, epoch_ms("time"), kind, usdc, counterparty, hash FROM read_parquet('`+glob(src, lake.PerpdexLedger)+`')`, "ledger",
		func(r *sql.Rows) (string, any) {
			var w, kind, hash string
			var cp sql.NullString
			var ms int64
			var usdc float64
			if err := r.Scan(&w, &ms, &kind, &usdc, &cp, &hash); err != nil {
				t.Fatal(err)
			}
			d := map[string]any{"type": kind, "usdc": num(usdc)}
			switch kind {
			case "send_out":
				d = map[string]any{"type": "internalTransfer", "usdc": num(usdc), "user": w, "destination": cp.String, "fee": "0.0"}
			case "send_in":
				d = map[string]any{"type": "internalTransfer", "usdc": num(usdc), "user": cp.String, "destination": w, "fee": "0.0"}
			}
			return w, map[string]any{"time": ms, "hash": hash, "delta": d}
		})

	// Accounts with their positions → clearinghouseState answers, JSON lines per wallet.
	pos := map[string][]any{}
	prow, err := db.Query(`SELECT wallet, epoch_ms(snapshot_ts), coin, szi, entry_px, leverage, liquidation_px, unrealized_pnl, position_value
		FROM read_parquet(?) ORDER BY coin`, glob(src, lake.PerpdexPositions))
	if err != nil {
		t.Fatal(err)
	}
	for prow.Next() {
		var w, coin string
		var ms int64
		var szi, entry, lev, liq, upnl, val float64
		if err := prow.Scan(&w, &ms, &coin, &szi, &entry, &lev, &liq, &upnl, &val); err != nil {
			t.Fatal(err)
		}
		var liqPx any = num(liq)
		if liq == 0 {
			liqPx = nil // the venue sends null when there is none; ingest stores 0.0
		}
		k := w + fmt.Sprint(ms)
		pos[k] = append(pos[k], map[string]any{"type": "oneWay", "position": map[string]any{"coin": coin, "szi": num(szi),
			"entryPx": num(entry), "leverage": map[string]any{"type": "cross", "value": lev}, "liquidationPx": liqPx,
			"unrealizedPnl": num(upnl), "positionValue": num(val), "marginUsed": "0.0"}})
	}
	prow.Close()
	arow, err := db.Query(`SELECT wallet, epoch_ms(snapshot_ts), account_value, total_ntl_pos, margin_used FROM read_parquet(?) ORDER BY 1, 2`,
		glob(src, lake.PerpdexAccounts))
	if err != nil {
		t.Fatal(err)
	}
	chs := map[string]*bytes.Buffer{}
	for arow.Next() {
		var w string
		var ms int64
		var av, ntl, mu float64
		if err := arow.Scan(&w, &ms, &av, &ntl, &mu); err != nil {
			t.Fatal(err)
		}
		ps := pos[w+fmt.Sprint(ms)]
		if ps == nil {
			ps = []any{}
		}
		line, _ := json.Marshal(map[string]any{"assetPositions": ps, "time": ms, "withdrawable": "0.0",
			"marginSummary": map[string]any{"accountValue": num(av), "totalNtlPos": num(ntl), "totalMarginUsed": num(mu), "totalRawUsd": "0.0"}})
		if chs[w] == nil {
			chs[w] = &bytes.Buffer{}
		}
		chs[w].Write(line)
		chs[w].WriteByte('\n')
	}
	arow.Close()
	for w, b := range chs {
		name := filepath.Join(out, "clearinghouse_"+w+".jsonl")
		writeTestFile(t, name, b.Bytes())
		files = append(files, name)
	}

	// Hourly marks → one metaAndAssetCtxs answer per hour (the fetch time in the file
	// name; contexts without a funding field, as the demo has no venue rates).
	mrows, err := db.Query(`SELECT epoch_ms("time"), list(coin ORDER BY coin), list(mark_px ORDER BY coin) FROM read_parquet(?) GROUP BY 1`,
		glob(src, lake.PerpdexMarks))
	if err != nil {
		t.Fatal(err)
	}
	nMarks := 0
	for mrows.Next() {
		var ms int64
		var coins, pxs []any
		if err := mrows.Scan(&ms, &coins, &pxs); err != nil {
			t.Fatal(err)
		}
		universe, ctxs := make([]any, len(coins)), make([]any, len(coins))
		for i := range coins {
			universe[i] = map[string]any{"name": coins[i], "szDecimals": 2, "maxLeverage": 10}
			ctxs[i] = map[string]any{"markPx": num(pxs[i].(float64)), "openInterest": "0.0", "dayNtlVlm": "0.0"}
		}
		b, _ := json.Marshal([]any{map[string]any{"universe": universe}, ctxs})
		name := filepath.Join(out, fmt.Sprintf("meta_and_ctxs_%d.json", ms))
		writeTestFile(t, name, b)
		files = append(files, name)
		nMarks += len(coins)
	}
	mrows.Close()
	// HYPE balances → spotClearinghouseState and delegations answers, named after the
	// wallet and the reading time.
	hrows, err := db.Query(`SELECT wallet, source, amount, epoch_ms(as_of) FROM read_parquet(?)`, glob(src, lake.PerpdexHypeBalances))
	if err != nil {
		t.Fatal(err)
	}
	for hrows.Next() {
		var w, source string
		var amount float64
		var ms int64
		if err := hrows.Scan(&w, &source, &amount, &ms); err != nil {
			t.Fatal(err)
		}
		var b []byte
		if source == "spot" {
			b, _ = json.Marshal(map[string]any{"balances": []any{map[string]any{"coin": "HYPE", "token": 150, "total": num(amount), "hold": "0.0", "entryNtl": "0.0"}}})
		} else {
			b, _ = json.Marshal([]any{map[string]any{"validator": "0x" + strings.Repeat("5", 40), "amount": num(amount), "lockedUntilTimestamp": 0}})
		}
		name := filepath.Join(out, fmt.Sprintf("%s_%s_%d.json", map[string]string{"spot": "spot", "staked": "delegations"}[source], w, ms))
		writeTestFile(t, name, b)
		files = append(files, name)
	}
	hrows.Close()
	t.Logf("%d marks in hourly answers", nMarks)

	dst := filepath.Join(t.TempDir(), "lake")
	code, sout, serr := run(t, append([]string{"ingest", "perpdex", "--data", dst, "--clock", testlake.End.Format(time.RFC3339)}, files...)...)
	if code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%.2000s", code, sout, serr)
	}
	t.Logf("%d fills in %d node files; %s", nFills, len(dates), strings.SplitN(sout, "\n", 2)[0])

	except := func(name, cols, a, b, where string) {
		t.Helper()
		var n int64
		q := fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM read_parquet('%s') %s EXCEPT ALL SELECT %s FROM read_parquet('%s') %s)", cols, a, where, cols, b, where)
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows of %s not in %s", name, n, a, b)
		}
	}
	both := func(tb *lake.Table, cols, where string) {
		t.Helper()
		except(tb.Name, cols, glob(src, tb), glob(dst, tb), where)
		except(tb.Name, cols, glob(dst, tb), glob(src, tb), where)
	}
	both(lake.PerpdexFills, "*", "")
	both(lake.PerpdexFunding, "*", "")
	both(lake.PerpdexLedger, "*", "")
	both(lake.PerpdexAccounts, "*", "")
	both(lake.PerpdexMarks, "*", "")
	both(lake.PerpdexHypeBalances, "*", "")
	// Positions: the demo's rows at account snapshots (a clearinghouseState answer is
	// one account with its positions: the 5-minute batches of the final hour, and the
	// demo's wallets the snapshot feed never saw (positions without an account row),
	// have none).
	both(lake.PerpdexPositions, "snapshot_ts, wallet, coin, szi, entry_px, leverage, liquidation_px, unrealized_pnl, position_value",
		"WHERE (snapshot_ts, wallet) IN (SELECT (snapshot_ts, wallet) FROM read_parquet('"+glob(src, lake.PerpdexAccounts)+"'))")
	var bad int64
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s') a JOIN read_parquet('%s') b USING (snapshot_ts, wallet, coin)
		WHERE abs(a.mark_px - b.mark_px) > 1e-9 * abs(a.mark_px)`, glob(src, lake.PerpdexPositions), glob(dst, lake.PerpdexPositions))).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("positions: %d marks differ beyond 1e-9 (%v)", bad, err)
	}
	except("perpdex_trades", "coin, ts, side, px, sz, hash, tid, buyer, seller", glob(src, lake.PerpdexTrades), glob(dst, lake.PerpdexTrades), "")

	// Routes that read only the round-tripped tables answer the same bytes.
	now := func() time.Time { return testlake.End }
	serve := func(dir string) *httptest.Server {
		q, err := query.Open(context.Background(), dir, query.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		s := httptest.NewServer((&handlers.API{Q: q}).Handler())
		t.Cleanup(s.Close)
		return s
	}
	a, b := serve(src), serve(dst)
	body := func(base, target string) (int, []byte) {
		resp, err := http.Get(base + target)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		x, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, x
	}
	// The routes that read only round-tripped tables (fills, funding, ledger, accounts,
	// positions at account snapshots, marks, HYPE balances, and what mdq derives from
	// them). The others read tables the export does not carry (vaults, venue
	// statistics, positions of demo wallets without account snapshots) and are not
	// compared.
	want := map[string]bool{"/v1/perpdex/wallets/{address}/trades": true, "/v1/perpdex/wallets/{address}/trades/summary": true,
		"/v1/perpdex/builders": true, "/v1/perpdex/builders/stats": true, "/v1/perpdex/builders/{builder}": true,
		"/v1/perpdex/builders/{builder}/users": true, "/v1/perpdex/wallets/{address}/fills": true,
		"/v1/perpdex/wallets/{address}/ledger": true, "/v1/perpdex/wallets/{address}/funding": true,
		"/v1/perpdex/liquidations": true, "/v1/perpdex/wallets/{address}": true, "/v1/perpdex/wallets/{address}/positions": true,
		"/v1/perpdex/hype/holders": true}
	compared := 0
	for _, rt := range handlers.Routes() {
		if !want[rt.Path] {
			continue
		}
		_, _, target, missing := handlers.ExampleQuery(rt)
		if missing != "" {
			t.Errorf("%s: no example for %s", rt.Path, missing)
			continue
		}
		ca, ba := body(a.URL, target)
		cb, bb := body(b.URL, target)
		if ca != 200 || ca != cb || !bytes.Equal(ba, bb) {
			t.Errorf("%s: demo lake %d %.200s\ningested lake %d %.200s", target, ca, ba, cb, bb)
			continue
		}
		compared++
	}
	if compared != len(want) {
		t.Fatalf("%d of %d routes compared", compared, len(want))
	}
}

func writeTestFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
