package cli_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// The three lookahead defects of issue 12, each against an oracle computed from the raw
// rows up to the clock, at a clock in the middle of the lake (not on an hour).
var pitDefectClock = time.Date(2026, 11, 15, 13, 37, 12, 345_000_000, time.UTC)

// TestNoLookaheadPerpdexClosedTrades: at clock T a wallet's trades and its trade
// summary count only its fills up to T, and a trade still open at T (closed later) is
// served as it stood: open, its close_ts its latest fill up to T.
func TestNoLookaheadPerpdexClosedTrades(t *testing.T) {
	T := pitDefectClock
	q := pitStore(t, pitFull(t), T)
	db := q.DB()
	ctx := context.Background()
	// A wallet with a trade that opened before T and closed after it, in the full lake.
	if _, err := q.PublishPerpdexClosedTrades(ctx); err != nil {
		t.Fatal(err)
	}
	var wallet, asset string
	must(t, db.QueryRowContext(ctx, `SELECT wallet, asset FROM perpdex_closed_trades
		WHERE is_complete AND open_ts <= ?::TIMESTAMP AND close_ts > ?::TIMESTAMP ORDER BY wallet, asset LIMIT 1`, T, T).Scan(&wallet, &asset))
	// Oracle: the wallet's fills up to T, counted from the raw fills.
	var fillsToT, fills7d int64
	// A flip (Long > Short) closes one trade and opens the next: it counts in both.
	must(t, db.QueryRowContext(ctx, `SELECT count(*) + count(*) FILTER (WHERE start_position * (start_position + CASE WHEN side = 'B' THEN sz ELSE -sz END) < 0),
		count(*) FILTER (WHERE time >= ?::TIMESTAMP - INTERVAL 7 DAY)
		FROM perpdex_fills WHERE wallet = ? AND sz > 0 AND time <= ?::TIMESTAMP`, T, wallet, T).Scan(&fillsToT, &fills7d))

	code, body := serve(q, "GET", "/v1/perpdex/wallets/"+wallet+"/trades?limit=5000&start=2000-01-01")
	if code != 200 {
		t.Fatalf("trades: %d %s", code, body)
	}
	var page struct {
		Trades []struct {
			Asset      string `json:"asset"`
			CloseTS    string `json:"close_ts"`
			FillCount  int64  `json:"fill_count"`
			IsComplete bool   `json:"is_complete"`
		} `json:"trades"`
	}
	must(t, json.Unmarshal([]byte(body), &page))
	var fills int64
	openAtT := false
	for _, tr := range page.Trades {
		c, err := time.Parse(time.RFC3339Nano, tr.CloseTS)
		if err != nil {
			t.Fatal(err)
		}
		if c.After(T) {
			t.Errorf("trade of %s closes at %s, after the clock %s", tr.Asset, tr.CloseTS, T)
		}
		fills += tr.FillCount
		if tr.Asset == asset && !tr.IsComplete {
			openAtT = true
		}
	}
	if fills != fillsToT {
		t.Errorf("trades hold %d fills; the wallet has %d fill legs up to the clock", fills, fillsToT)
	}
	if !openAtT {
		t.Errorf("the %s trade open at the clock (closed later) is not served open", asset)
	}

	code, body = serve(q, "GET", "/v1/perpdex/wallets/"+wallet+"/trades/summary?window=7d")
	if code != 200 {
		t.Fatalf("summary: %d %s", code, body)
	}
	var sum struct {
		Overall struct {
			FillCount      int64 `json:"fill_count"`
			OpenTradeCount int64 `json:"open_trade_count"`
		} `json:"overall"`
	}
	must(t, json.Unmarshal([]byte(body), &sum))
	// Every fill of a trade touching the window counts, so the summary holds at least
	// the window's fills and never more than the wallet's fills up to T.
	if sum.Overall.FillCount < fills7d || sum.Overall.FillCount > fillsToT {
		t.Errorf("7d summary counts %d fills; the wallet has %d in the window and %d up to the clock", sum.Overall.FillCount, fills7d, fillsToT)
	}
	if sum.Overall.OpenTradeCount < 1 {
		t.Errorf("7d summary counts no open trade; the %s trade was open at the clock", asset)
	}
}

// TestNoLookaheadPredmktLeaderboard: at clock T the board (as of T's hour H) counts
// lifetime fills, volume and resolved markets up to H only.
func TestNoLookaheadPredmktLeaderboard(t *testing.T) {
	T := pitDefectClock
	H := T.Truncate(time.Hour)
	q := pitStore(t, pitFull(t), T)
	db := q.DB()
	ctx := context.Background()
	code, body := serve(q, "GET", "/v1/predmkt/leaderboard?sort=volume_all&min_resolved=0&limit=50")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var rows []struct {
		Wallet   string  `json:"proxy_wallet"`
		Trades   int64   `json:"trades_all"`
		Volume   float64 `json:"volume_all_usd"`
		Resolved int64   `json:"resolved_markets"`
		LastSeen string  `json:"last_seen"`
	}
	var env struct {
		Rows json.RawMessage `json:"leaderboard"`
	}
	if err := json.Unmarshal([]byte(body), &rows); err != nil {
		must(t, json.Unmarshal([]byte(body), &env))
		must(t, json.Unmarshal(env.Rows, &rows))
	}
	if len(rows) == 0 {
		t.Fatalf("empty board: %s", body)
	}
	for _, r := range rows {
		var n, res int64
		var vol float64
		must(t, db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(usd), 0) FROM predmkt_trades WHERE wallet = ? AND ts <= ?`,
			r.Wallet, H.UnixMilli()).Scan(&n, &vol))
		must(t, db.QueryRowContext(ctx, `SELECT count(DISTINCT t.condition_id) FROM predmkt_trades t
			JOIN predmkt_resolutions r ON r.condition_id = t.condition_id
			WHERE t.wallet = ? AND t.ts <= ? AND r.resolved_ts <= ?::TIMESTAMP AND NOT r.invalid AND r.winning_index IS NOT NULL`,
			r.Wallet, H.UnixMilli(), H).Scan(&res))
		if r.Trades != n || r.Resolved != res || abs(r.Volume-vol) > 0.011 {
			t.Errorf("%s: trades_all %d volume_all %.2f resolved %d; up to the board hour %s: %d, %.2f, %d",
				r.Wallet, r.Trades, r.Volume, r.Resolved, H, n, vol, res)
		}
		if ls, err := time.Parse(time.RFC3339Nano, r.LastSeen); err == nil && ls.After(H) {
			t.Errorf("%s: last_seen %s after the board hour", r.Wallet, r.LastSeen)
		}
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestNoLookaheadPredmktOHLCV: at clock T no bar starts after T, and the bar holding T
// counts the token's trades from its start up to T only.
func TestNoLookaheadPredmktOHLCV(t *testing.T) {
	T := pitDefectClock
	q := pitStore(t, pitFull(t), T)
	db := q.DB()
	ctx := context.Background()
	var tok string
	must(t, db.QueryRowContext(ctx, `SELECT token_id FROM predmkt_trades WHERE ts BETWEEN ? AND ?
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, T.Add(-time.Hour).UnixMilli(), T.Add(6*time.Hour).UnixMilli()).Scan(&tok))
	for _, path := range []string{"/v1/predmkt/ohlcv", "/v1/predmkt/ohlcv/export"} {
		code, body := serve(q, "GET", path+"?"+url.Values{"token_id": {tok}, "interval": {"1d"}}.Encode())
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		var bars []struct {
			TS     int64 `json:"ts"`
			Trades int64 `json:"trades"`
		}
		if path == "/v1/predmkt/ohlcv" {
			must(t, json.Unmarshal([]byte(body), &bars))
		} else {
			dec := json.NewDecoder(stringsReader(body))
			for dec.More() {
				var b struct {
					TS     int64 `json:"ts"`
					Trades int64 `json:"trades"`
				}
				must(t, dec.Decode(&b))
				bars = append(bars, b)
			}
		}
		if len(bars) == 0 {
			t.Fatalf("%s: no bar", path)
		}
		for _, b := range bars {
			if b.TS > T.UnixMilli() {
				t.Errorf("%s: bar at %d after the clock %d", path, b.TS, T.UnixMilli())
			}
		}
		last := bars[len(bars)-1]
		var n int64
		must(t, db.QueryRowContext(ctx, `SELECT count(*) FROM predmkt_trades WHERE token_id = ? AND role = 'taker' AND ts >= ? AND ts <= ?`,
			tok, last.TS, T.UnixMilli()).Scan(&n))
		if last.TS != T.Truncate(24*time.Hour).UnixMilli() || last.Trades != n {
			t.Errorf("%s: last bar %d with %d trades; the day of the clock has %d trades up to it", path, last.TS, last.Trades, n)
		}
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestNoLookaheadOnchainLabels: at clock T the label cascade counts only the label rows
// observed by T. For addresses whose winning row in the whole lake was observed after T,
// the labels batch (SQL over the cascade), the provenance route and the counterparties'
// labels (the cascade's Go index) show the pick among the rows observed by T (none when
// no row was), from a store at T and from a request with as_of T to a store at the
// lake's end alike.
func TestNoLookaheadOnchainLabels(t *testing.T) {
	T := pitDefectClock
	qT, qEnd := pitStore(t, pitFull(t), T), pitStore(t, pitFull(t), testlake.End)
	db := qT.DB()
	ctx := context.Background()
	asOf := "as_of=" + url.QueryEscape(T.Format(time.RFC3339Nano))
	// Oracle: for each address with a label row observed after T, the cascade's pick
	// among the rows observed by T (its entity; NULL when none was), and whether the
	// pick in the whole lake is a row observed after T (the lookahead case).
	rows, err := db.QueryContext(ctx, `WITH r AS (
			SELECT l.address, l.entity, l.observed_at, s.priority, l.source
			FROM onchain_labels l JOIN onchain_label_sources s USING (source))
		SELECT e.address, t.entity, e.obs > ?::TIMESTAMP
		FROM (SELECT address, first(observed_at ORDER BY priority, source) AS obs FROM r GROUP BY address) e
		LEFT JOIN (SELECT address, first(entity ORDER BY priority, source) AS entity FROM r
		           WHERE observed_at <= ?::TIMESTAMP GROUP BY address) t USING (address)
		WHERE e.address IN (SELECT address FROM r WHERE observed_at > ?::TIMESTAMP)
		ORDER BY e.address LIMIT 100`, T, T, T)
	must(t, err)
	oracle := map[string]*string{}
	var addrs []string
	changed := 0
	for rows.Next() {
		var a string
		var e *string
		var later bool
		must(t, rows.Scan(&a, &e, &later))
		oracle[a] = e
		// The addresses whose pick changes after T first (the provenance checks take
		// the first few).
		if later {
			addrs = append([]string{a}, addrs...)
			changed++
		} else {
			addrs = append(addrs, a)
		}
	}
	must(t, rows.Err())
	rows.Close()
	if changed == 0 {
		t.Fatalf("no address's label pick changes after T (of %d labelled after it): the lake does not exercise the case", len(addrs))
	}
	str := func(p *string) string {
		if p == nil {
			return "<none>"
		}
		return *p
	}

	// The labels batch, at T and as of T.
	target := "/v1/onchain/labels/batch?addresses=" + strings.Join(addrs, ",")
	code, body := serve(qT, "POST", target)
	if code != 200 {
		t.Fatalf("labels batch: %d %s", code, body)
	}
	if c, b := serve(qEnd, "POST", target+"&"+asOf); c != code || b != body {
		t.Errorf("labels batch as_of T differs from the store at T:\n  %.300s\n  %.300s", b, body)
	}
	var batch []struct {
		Wallet string  `json:"wallet"`
		Entity *string `json:"entity"`
		Found  bool    `json:"found"`
	}
	must(t, json.Unmarshal([]byte(body), &batch))
	for _, r := range batch {
		if want := oracle[r.Wallet]; str(r.Entity) != str(want) || r.Found != (want != nil) {
			t.Errorf("labels batch %s at T: entity %s found %v, want %s (rows observed by T only)", r.Wallet, str(r.Entity), r.Found, str(want))
		}
	}

	// Provenance: rows observed by T only, resolved to the oracle's pick.
	for _, a := range addrs[:min(len(addrs), 6)] {
		code, body := serve(qT, "GET", "/v1/onchain/labels/"+a+"/provenance")
		if code != 200 {
			t.Fatalf("provenance: %d %s", code, body)
		}
		if c, b := serve(qEnd, "GET", "/v1/onchain/labels/"+a+"/provenance?"+asOf); c != code || b != body {
			t.Errorf("provenance as_of T differs from the store at T:\n  %.300s\n  %.300s", b, body)
		}
		var p struct {
			Resolved *struct {
				Entity string `json:"entity"`
			} `json:"resolved"`
			Sources []struct {
				ObservedAt string `json:"observed_at"`
			} `json:"sources"`
		}
		must(t, json.Unmarshal([]byte(body), &p))
		var got *string
		if p.Resolved != nil {
			got = &p.Resolved.Entity
		}
		if str(got) != str(oracle[a]) {
			t.Errorf("provenance %s at T resolved to %s, want %s", a, str(got), str(oracle[a]))
		}
		for _, s := range p.Sources {
			if at, err := time.Parse(time.RFC3339, s.ObservedAt); err != nil || at.After(T) {
				t.Errorf("provenance %s at T lists a row observed at %s", a, s.ObservedAt)
			}
		}
	}

	// Counterparties (the Go index): wallets that moved USD with those addresses in
	// the 30 days up to T.
	prows, err := db.QueryContext(ctx, `SELECT from_address, to_address FROM onchain_transfers
		WHERE chain = 'ethereum' AND block_time <= ?::TIMESTAMP AND block_time > ?::TIMESTAMP - INTERVAL 30 DAY
		  AND usd > 0 AND list_contains(?::VARCHAR[], to_address)
		GROUP BY 1, 2 ORDER BY sum(usd) DESC, 1, 2 LIMIT 20`, T, T, addrs)
	must(t, err)
	type pair struct{ w, cp string }
	var pairs []pair
	for prows.Next() {
		var p pair
		must(t, prows.Scan(&p.w, &p.cp))
		pairs = append(pairs, p)
	}
	must(t, prows.Err())
	prows.Close()
	checked := 0
	for _, p := range pairs {
		target := "/v1/onchain/wallets/" + p.w + "/counterparties?chain=ethereum&window=30d&limit=50"
		code, body := serve(qT, "GET", target)
		if code != 200 {
			t.Fatalf("counterparties: %d %s", code, body)
		}
		if c, b := serve(qEnd, "GET", target+"&"+asOf); c != code || b != body {
			t.Errorf("counterparties as_of T differs from the store at T:\n  %.300s\n  %.300s", b, body)
		}
		var cps []struct {
			Address string  `json:"address"`
			Label   *string `json:"label"`
		}
		must(t, json.Unmarshal([]byte(body), &cps))
		for _, c := range cps {
			if c.Address != p.cp {
				continue
			}
			checked++
			if str(c.Label) != str(oracle[p.cp]) {
				t.Errorf("counterparty %s of %s at T labelled %s, want %s", p.cp, p.w, str(c.Label), str(oracle[p.cp]))
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no counterparty labelled after T found among %d pairs", len(pairs))
	}
	t.Logf("%d addresses labelled after T (%d whose pick changes), %d counterparties checked", len(addrs), changed, checked)
}

// TestNoLookaheadPerpdexCohortLabels: at clock T, today's cohort labels are those of the
// newest account snapshot S at or before T, not the lake's newest publication: on the
// wallet page (computed_at S), the leaderboard, the traders search and the
// flow-adjusted board (board hour H = S here). Oracle: the hourly labels the lake
// published for hour S (computed from the same snapshot by the same SQL), for wallets
// whose label at S differs from the lake's newest, from a store at T and from a request
// with as_of T to a store at the lake's end alike.
func TestNoLookaheadPerpdexCohortLabels(t *testing.T) {
	T := pitDefectClock
	qT, qEnd := pitStore(t, pitFull(t), T), pitStore(t, pitFull(t), testlake.End)
	db := qT.DB()
	ctx := context.Background()
	asOf := "as_of=" + url.QueryEscape(T.Format(time.RFC3339Nano))
	var S time.Time
	must(t, db.QueryRowContext(ctx, `SELECT max(snapshot_ts) FROM perpdex_accounts WHERE snapshot_ts <= ?::TIMESTAMP`, T).Scan(&S))
	S = S.UTC()
	if !S.Equal(T.Truncate(time.Hour)) {
		t.Fatalf("newest snapshot at T is %s, not T's hour: the oracle needs it on the hour", S)
	}
	type labels struct{ size, pnl string }
	oracle, newest := map[string]labels{}, map[string]labels{}
	for dst, q := range map[*map[string]labels]string{
		&oracle: `SELECT wallet, coalesce(size_cohort, ''), coalesce(pnl_cohort, '') FROM perpdex_cohorts_hourly WHERE hour_ts = ?::TIMESTAMP AND ? IS NOT NULL`,
		&newest: `SELECT wallet, coalesce(size_cohort, ''), coalesce(pnl_cohort, '') FROM perpdex_cohorts_current WHERE ?::TIMESTAMP IS NOT NULL AND ? IS NOT NULL`,
	} {
		rows, err := db.QueryContext(ctx, q, S, S)
		must(t, err)
		for rows.Next() {
			var w string
			var l labels
			must(t, rows.Scan(&w, &l.size, &l.pnl))
			(*dst)[w] = l
		}
		must(t, rows.Err())
		rows.Close()
	}
	if len(oracle) == 0 {
		t.Fatalf("no hourly labels published for %s", S)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	// get serves target from the store at T, checks as_of T on the lake's end store
	// serves the same, and decodes it.
	get := func(target string, v any) {
		t.Helper()
		code, body := serve(qT, "GET", target)
		if code != 200 {
			t.Fatalf("%s: %d %s", target, code, body)
		}
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		if c, b := serve(qEnd, "GET", target+sep+asOf); c != code || b != body {
			t.Errorf("%s as_of T differs from the store at T:\n  %.300s\n  %.300s", target, b, body)
		}
		must(t, json.Unmarshal([]byte(body), v))
	}
	sensitive := 0 // rows whose label at S differs from the lake's newest
	check := func(where, w string, size, pnl *string) {
		want, ok := oracle[w]
		if !ok {
			return
		}
		if newest[w] != want {
			sensitive++
		}
		if str(size) != want.size || str(pnl) != want.pnl {
			t.Errorf("%s %s at T: size %q pnl %q, want %q %q (labels of the snapshot %s)", where, w, str(size), str(pnl), want.size, want.pnl, S)
		}
	}
	var changed []string
	for w, l := range oracle {
		if n, ok := newest[w]; ok && n != l {
			changed = append(changed, w)
		}
	}
	slices.Sort(changed)
	if len(changed) == 0 {
		t.Fatal("no wallet's label changed between T and the lake's end: the lake does not exercise the case")
	}
	for _, w := range changed[:min(len(changed), 8)] {
		var page struct {
			Cohorts struct {
				Size       *string `json:"size_cohort"`
				Pnl        *string `json:"pnl_cohort"`
				ComputedAt *string `json:"computed_at"`
			} `json:"cohorts"`
		}
		get("/v1/perpdex/wallets/"+w, &page)
		check("wallet page", w, page.Cohorts.Size, page.Cohorts.Pnl)
		if at, err := time.Parse(time.RFC3339, str(page.Cohorts.ComputedAt)); err != nil || !at.Equal(S) {
			t.Errorf("wallet page %s at T: computed_at %q, want %s", w, str(page.Cohorts.ComputedAt), S.Format(time.RFC3339))
		}
	}
	for _, target := range []string{"/v1/perpdex/leaderboard?window=7d&limit=500", "/v1/perpdex/traders?window=7d&limit=500",
		"/v1/perpdex/leaderboard/flow-adjusted?window=7d&limit=500"} {
		var env struct {
			Traders []struct {
				Wallet string  `json:"wallet"`
				Size   *string `json:"size_cohort"`
				Pnl    *string `json:"pnl_cohort"`
			} `json:"traders"`
		}
		get(target, &env)
		if len(env.Traders) == 0 {
			t.Fatalf("%s: no rows", target)
		}
		for _, r := range env.Traders {
			check(target, r.Wallet, r.Size, r.Pnl)
		}
	}
	if sensitive == 0 {
		t.Fatal("no row checked has a label that changed after T")
	}
	t.Logf("%d wallets changed label after T; %d checked rows had", len(changed), sensitive)
}
