package handlers_test

import (
	"bytes"
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mdq/cmd/mdq/cli"
	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// The cohort labels are computed by mdq (query/perpdex_cohorts_derived.go). These tests
// recompute them in plain Go from the raw accounts, ledger and fills rows, with band
// thresholds written out here from docs/PERPDEX.md rather than taken from the query
// package.

type pdLedgerRow struct {
	wallet, kind string
	time         time.Time
	usdc         float64
}

func pdReadLedger(t *testing.T, q *query.Queries) []pdLedgerRow {
	t.Helper()
	rows, err := q.DB().QueryContext(context.Background(), "SELECT wallet, kind, time, usdc FROM perpdex_ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pdLedgerRow
	for rows.Next() {
		var r pdLedgerRow
		if err := rows.Scan(&r.wallet, &r.kind, &r.time, &r.usdc); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// pdOracleCohort holds one wallet's labels at one snapshot.
type pdOracleCohort struct{ size, pnl, tag, style string }

// pdCohortOracle computes labels from raw rows.
type pdCohortOracle struct {
	ledger map[string][]pdLedgerRow
	fills  map[string][]time.Time
}

func newPdCohortOracle(ledger []pdLedgerRow, fills []pdFill) *pdCohortOracle {
	o := &pdCohortOracle{ledger: map[string][]pdLedgerRow{}, fills: map[string][]time.Time{}}
	for _, l := range ledger {
		o.ledger[l.wallet] = append(o.ledger[l.wallet], l)
	}
	for _, f := range fills {
		o.fills[f.wallet] = append(o.fills[f.wallet], f.time)
	}
	return o
}

func pdOracleSize(av float64) string {
	switch {
	case av >= 5_000_000:
		return "leviathan"
	case av >= 100_000:
		return "whale"
	case av >= 10_000:
		return "dolphin"
	case av >= 1_000:
		return "fish"
	}
	return "shrimp"
}

// label: ledger events and fills strictly before the snapshot count; amounts in
// integer cents and the account value in micro-dollars, as docs/PERPDEX.md defines.
func (o *pdCohortOracle) label(wallet string, at time.Time, av float64) pdOracleCohort {
	var capital, net int64
	for _, l := range o.ledger[wallet] {
		if !l.time.Before(at) {
			continue
		}
		c := int64(math.Round(l.usdc * 100))
		switch l.kind {
		case "deposit", "send_in":
			capital += c
			net += c
		case "withdraw", "send_out":
			net -= c
		}
	}
	n := 0
	for _, ft := range o.fills[wallet] {
		if ft.Before(at) {
			n++
		}
	}
	c := pdOracleCohort{size: pdOracleSize(av), pnl: "unknown", tag: "unknown"}
	if n < 3 || capital <= 0 {
		return c
	}
	pnl := int64(math.Round(av*1e6)) - net*10_000 // micro-USD
	cp := capital * 10_000
	switch {
	case pnl >= 10*cp:
		c.pnl, c.tag = "10x_smart", "10x smart"
	case pnl >= 3*cp:
		c.pnl, c.tag = "3x_smart", "3x smart"
	case pnl > 0:
		c.pnl, c.tag = "profitable", "profitable"
	case 2*pnl > -cp:
		c.pnl, c.tag = "unprofitable", "unprofitable"
	default:
		c.pnl, c.tag = "rekt", "rekt"
	}
	return c
}

// pdOracleStyles: mean holding time of each wallet's completed oracle trades closing
// before at: under an hour scalper, under twelve hours swing, else position.
func pdOracleStyles(fills []pdFill, at time.Time) map[string]string {
	sum, n := map[string]int64{}, map[string]int64{}
	for _, tr := range pdOracleTrades(fills) {
		if tr.complete && tr.close.Before(at) {
			sum[tr.wallet] += tr.close.Sub(tr.open).Microseconds()
			n[tr.wallet]++
		}
	}
	out := map[string]string{}
	for w, k := range n {
		switch mean := float64(sum[w]) / float64(k); {
		case mean < 3600e6:
			out[w] = "scalper"
		case mean < 12*3600e6:
			out[w] = "swing"
		default:
			out[w] = "position"
		}
	}
	return out
}

type pdCohortRow struct {
	hour                   time.Time
	wallet, size, pnl      string
	tag, style, computedAt string
}

func pdReadCohortTables(t *testing.T, q *query.Queries) (hourly map[[2]string]pdCohortRow, current map[string]pdCohortRow) {
	t.Helper()
	ctx := context.Background()
	hourly, current = map[[2]string]pdCohortRow{}, map[string]pdCohortRow{}
	rows, err := q.DB().QueryContext(ctx, "SELECT hour_ts, wallet, size_cohort, pnl_cohort FROM perpdex_cohorts_hourly")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r pdCohortRow
		if err := rows.Scan(&r.hour, &r.wallet, &r.size, &r.pnl); err != nil {
			t.Fatal(err)
		}
		k := [2]string{r.hour.UTC().Format(time.RFC3339), r.wallet}
		if _, dup := hourly[k]; dup {
			t.Fatalf("duplicate hourly label %v", k)
		}
		hourly[k] = r
	}
	rows.Close()
	rows, err = q.DB().QueryContext(ctx, "SELECT wallet, size_cohort, pnl_cohort, pnl_cohort_tag, style_cohort_tag, computed_at FROM perpdex_cohorts_current")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r pdCohortRow
		var style sql.NullString
		var at time.Time
		if err := rows.Scan(&r.wallet, &r.size, &r.pnl, &r.tag, &style, &at); err != nil {
			t.Fatal(err)
		}
		r.style, r.computedAt = style.String, at.UTC().Format(time.RFC3339)
		current[r.wallet] = r
	}
	return hourly, current
}

// pdCompareCohorts computes both tables with the oracle from q's raw rows at now and
// compares them row by row with what mdq published.
func pdCompareCohorts(t *testing.T, q *query.Queries, now time.Time) (hourly map[[2]string]pdCohortRow, current map[string]pdCohortRow) {
	t.Helper()
	fills := pdReadFills(t, q)
	o := newPdCohortOracle(pdReadLedger(t, q), fills)
	accts := pdReadAccounts(t, q)
	hourly, current = pdReadCohortTables(t, q)
	want := 0
	var newest time.Time
	for _, a := range accts {
		if !a.ts.After(now) && a.ts.After(newest) {
			newest = a.ts
		}
	}
	for _, a := range accts {
		at := a.ts.UTC()
		if at.Truncate(time.Hour).Equal(at) && !at.Before(query.PerpdexLabelStart) && !at.Add(time.Hour).After(now) {
			want++
			c := o.label(a.wallet, at, a.av)
			got, ok := hourly[[2]string{at.Format(time.RFC3339), a.wallet}]
			if !ok || got.size != c.size || got.pnl != c.pnl {
				t.Fatalf("hourly %s %s (av %v): mdq %+v (present %v), oracle %+v", at, a.wallet, a.av, got, ok, c)
			}
		}
	}
	if len(hourly) != want {
		t.Fatalf("hourly: mdq published %d labels, the oracle %d", len(hourly), want)
	}
	styles := pdOracleStyles(fills, newest)
	n := 0
	for _, a := range accts {
		if !a.ts.Equal(newest) {
			continue
		}
		n++
		c := o.label(a.wallet, newest, a.av)
		got, ok := current[a.wallet]
		if !ok || got.size != c.size || got.pnl != c.pnl || got.tag != c.tag || got.style != styles[a.wallet] ||
			got.computedAt != newest.UTC().Format(time.RFC3339) {
			t.Fatalf("current %s (av %v): mdq %+v (present %v), oracle %+v style %q", a.wallet, a.av, got, ok, c, styles[a.wallet])
		}
	}
	if len(current) != n {
		t.Fatalf("current: mdq %d wallets, the oracle %d", len(current), n)
	}
	return hourly, current
}

// TestPerpdexCohortsComputedAgainstOracle: both cohort tables of the tiny lake, as mdq
// publishes them on first use, equal a plain-Go computation from the raw accounts,
// ledger and fills (size from account value, pnl from PnL over capital put in,
// unknown under three fills, style from the mean holding time of closed trades),
// row by row; the hour in progress is not published.
func TestPerpdexCohortsComputedAgainstOracle(t *testing.T) {
	q, h := pdTiny(t)
	var page query.LiquidationsPage
	pdGetJSON(t, h, "/v1/perpdex/liquidations?limit=5000", &page) // publication on first use
	hourly, current := pdCompareCohorts(t, q, testlake.Now())
	// The liquidation route's three cases all occur in the tiny lake.
	basis := map[string]int{}
	for _, r := range page.Liquidations {
		b := "null"
		if r.PnlCohortBasis != nil {
			b = *r.PnlCohortBasis
		}
		basis[b]++
	}
	if basis["point_in_time"] == 0 || basis["current"] == 0 || basis["null"] == 0 {
		t.Errorf("liquidation label bases %v: want point_in_time, current and null rows", basis)
	}
	// The data exercise every kind of label and the null case.
	pnl, sizes, styles := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range hourly {
		pnl[r.pnl]++
		sizes[r.size]++
	}
	for _, r := range current {
		styles[r.style]++
	}
	for _, b := range []string{"10x_smart", "3x_smart", "profitable", "unprofitable", "unknown"} {
		if pnl[b] == 0 {
			t.Errorf("no hourly %s label: %v", b, pnl)
		}
	}
	if len(sizes) < 4 || styles["scalper"] == 0 || styles["swing"] == 0 || styles["position"] == 0 {
		t.Errorf("sizes %v styles %v", sizes, styles)
	}
	var maxHour time.Time
	for _, r := range hourly {
		if r.hour.After(maxHour) {
			maxHour = r.hour
		}
	}
	if !maxHour.Equal(testlake.Now().Add(-time.Hour)) {
		t.Errorf("newest published hour %v: the hour in progress (%v) must not be, the one before must", maxHour, testlake.Now())
	}
	var unlabelled int
	if err := q.DB().QueryRowContext(context.Background(), `SELECT count(DISTINCT wallet) FROM perpdex_fills
		WHERE wallet NOT IN (SELECT wallet FROM perpdex_cohorts_current) AND wallet NOT IN (SELECT wallet FROM perpdex_cohorts_hourly)`).Scan(&unlabelled); err != nil {
		t.Fatal(err)
	}
	if unlabelled < 2 {
		t.Errorf("%d traders in neither cohort table, want at least two", unlabelled)
	}
}

// TestPerpdexCohortsIncrementalEqualsFull: publishing up to an earlier clock and then
// incrementally to now (only the newest published date onward is rewritten) gives
// exactly the rows of one full publication at now; a second refresh does nothing.
func TestPerpdexCohortsIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	fresh := func() string {
		dir := testlake.Copy(t)
		for _, p := range []string{"perpdex/cohorts_hourly", "perpdex/cohorts_current"} {
			if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	open := func(dir string, now time.Time) *query.Queries {
		q, err := query.Open(ctx, dir, query.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	now := testlake.Now()
	early := now.Add(-30*time.Hour - 20*time.Minute)
	inc := fresh()
	b1, err := open(inc, early).RebuildPerpdexCohorts(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !b1.LastHour.Equal(early.Add(-time.Hour).Truncate(time.Hour)) || !b1.CurrentBuilt {
		t.Fatalf("early publication %+v", b1)
	}
	qi := open(inc, now)
	b2, err := qi.RebuildPerpdexCohorts(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(b2.HourlyDates) == 0 || b2.HourlyDates[0] != query.Date(b1.LastHour) || !b2.CurrentBuilt {
		t.Fatalf("incremental publication %+v after %+v: must start at the newest published date", b2, b1)
	}
	if b3, err := qi.RebuildPerpdexCohorts(ctx, false); err != nil || len(b3.HourlyDates) != 0 || b3.CurrentBuilt {
		t.Fatalf("a refresh with nothing due rewrote %+v (%v)", b3, err)
	}
	// A store whose clock is behind the lake leaves it as it is.
	if b4, err := open(inc, early).RebuildPerpdexCohorts(ctx, false); err != nil || len(b4.HourlyDates) != 0 || b4.CurrentBuilt {
		t.Fatalf("an earlier clock rewrote %+v (%v)", b4, err)
	}
	full := fresh()
	qf := open(full, now)
	if _, err := qf.RebuildPerpdexCohorts(ctx, true); err != nil {
		t.Fatal(err)
	}
	hi, ci := pdReadCohortTables(t, qi)
	hf, cf := pdReadCohortTables(t, qf)
	if len(hi) != len(hf) || len(ci) != len(cf) || len(hf) == 0 {
		t.Fatalf("incremental %d hourly / %d current, full %d / %d", len(hi), len(ci), len(hf), len(cf))
	}
	for k, r := range hf {
		if hi[k] != r {
			t.Fatalf("%v: incremental %+v, full %+v", k, hi[k], r)
		}
	}
	for k, r := range cf {
		if ci[k] != r {
			t.Fatalf("%v: incremental %+v, full %+v", k, ci[k], r)
		}
	}
	pdCompareCohorts(t, qi, now)
}

// TestPerpdexCohortsBandEdges: hand-built wallets at each band floor, with capital
// zero, with fewer than three fills (the third at the snapshot instant does not count
// yet), with a send received counted as capital and a withdrawal as a flow out, with
// no snapshot at all (in neither table: null cohorts), and holding times on each style
// boundary. Labels are read from the hourly table at 10:00 and today's table (12:00).
func TestPerpdexCohortsBandEdges(t *testing.T) {
	f := newPdFixture()
	at := func(h, m int) time.Time { return time.Date(2026, 11, 20, h, m, 0, 0, time.UTC) }
	day := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	deposit := func(w string, usd float64) {
		f.add(lake.PerpdexLedger, day, day, w, "deposit", usd, nil, "0xd1")
	}
	// three fills before 10:00: a 30-minute round trip and an open.
	threeFills := func(w string) {
		f.fill(day.Add(time.Hour), w, "BTC", "B", 100, 1, 0, 0, 0.1, "", false)
		f.fill(day.Add(90*time.Minute), w, "BTC", "A", 101, 1, 1, 1, 0.1, "", false)
		f.fill(day.Add(2*time.Hour), w, "ETH", "B", 100, 1, 0, 0, 0.1, "", false)
	}
	snap := func(w string, av float64) {
		for h := 9; h <= 12; h++ {
			f.add(lake.PerpdexAccounts, at(h, 0), at(h, 0), w, av, 0.0, 0.0)
		}
	}
	type want struct {
		size, pnl, style string
	}
	cases := map[string]want{}
	wallet := func(i int, av float64, w want) string {
		a := pdW(200 + i)
		snap(a, av)
		cases[a] = w
		return a
	}
	// Size floors (capital 1,000,000 so the pnl band stays unprofitable or better).
	for i, c := range []struct {
		av   float64
		size string
	}{{5_000_000, "leviathan"}, {4_999_999.99, "whale"}, {100_000, "whale"}, {99_999.99, "dolphin"},
		{10_000, "dolphin"}, {9_999.99, "fish"}, {1_000, "fish"}, {999.99, "shrimp"}, {-5, "shrimp"}} {
		w := wallet(i, c.av, want{c.size, "", "scalper"})
		threeFills(w)
		deposit(w, 1_000)
	}
	// PnL floors on a capital of 1,000.
	for i, c := range []struct {
		av  float64
		pnl string
	}{{11_000, "10x_smart"}, {10_999.99, "3x_smart"}, {4_000, "3x_smart"}, {3_999.99, "profitable"},
		{1_000.01, "profitable"}, {1_000, "unprofitable"}, {500.01, "unprofitable"}, {500, "rekt"}, {0, "rekt"}} {
		w := wallet(20+i, c.av, want{"", c.pnl, "scalper"})
		threeFills(w)
		deposit(w, 1_000)
	}
	// Capital zero: fills but no deposit or send received.
	zero := wallet(40, 5_000, want{"fish", "unknown", "scalper"})
	threeFills(zero)
	// Two fills before 10:00 and the third exactly at 10:00: unknown at 10:00, known by
	// 12:00 (19,000 made on 1,000: 10x smart).
	few := wallet(41, 20_000, want{"dolphin", "unknown", "swing"})
	deposit(few, 1_000)
	f.fill(day.Add(time.Hour), few, "SOL", "B", 100, 1, 0, 0, 0.1, "", false)
	f.fill(day.Add(3*time.Hour), few, "SOL", "A", 100, 1, 1, 0, 0.1, "", false) // held exactly 2h: swing
	f.fill(at(10, 0), few, "SOL", "B", 100, 1, 0, 0, 0.1, "", false)
	// A send received is capital: 500 deposited + 500 received, account 3,000 -> PnL
	// 2,000 on 1,000 = 2x (profitable; 4x if the send were not capital).
	send := wallet(42, 3_000, want{"fish", "profitable", "scalper"})
	threeFills(send)
	deposit(send, 500)
	f.add(lake.PerpdexLedger, day, day.Add(time.Hour), send, "send_in", 500.0, pdW(299), "0xd2")
	f.add(lake.PerpdexLedger, day, day.Add(time.Hour), pdW(299), "send_out", 500.0, send, "0xd2")
	// A withdrawal is a flow out: 1,000 in, 500 out, account 3,500 -> PnL 3,000 = 3x.
	wd := wallet(43, 3_500, want{"fish", "3x_smart", "scalper"})
	threeFills(wd)
	deposit(wd, 1_000)
	f.add(lake.PerpdexLedger, day, day.Add(5*time.Hour), wd, "withdraw", 500.0, nil, "0xd3")
	// A deposit at exactly 10:00 counts after the 10:00 snapshot.
	late := wallet(44, 2_000, want{"fish", "profitable", "scalper"})
	threeFills(late)
	deposit(late, 1_000)
	f.add(lake.PerpdexLedger, at(10, 0), at(10, 0), late, "deposit", 1_500.0, nil, "0xd4")
	// Style boundaries: mean holding exactly one hour is swing, exactly twelve position.
	sw := wallet(45, 2_000, want{"fish", "profitable", "swing"})
	deposit(sw, 1_000)
	f.fill(day.Add(time.Hour), sw, "BTC", "B", 100, 1, 0, 0, 0.1, "", false)
	f.fill(day.Add(90*time.Minute), sw, "BTC", "A", 100, 1, 1, 0, 0.1, "", false)
	f.fill(day.Add(2*time.Hour), sw, "ETH", "B", 100, 1, 0, 0, 0.1, "", false)
	f.fill(day.Add(3*time.Hour+30*time.Minute), sw, "ETH", "A", 100, 1, 1, 0, 0.1, "", false) // 30 min + 90 min: mean 1h
	pos := wallet(46, 2_000, want{"fish", "profitable", "position"})
	deposit(pos, 1_000)
	f.fill(day.Add(time.Hour), pos, "BTC", "B", 100, 1, 0, 0, 0.1, "", false)
	f.fill(day.Add(13*time.Hour), pos, "BTC", "A", 100, 1, 1, 0, 0.1, "", false)
	f.fill(day.Add(14*time.Hour), pos, "ETH", "B", 100, 1, 0, 0, 0.1, "", false) // still open
	// No snapshot at all: fills and a deposit only.
	ghost := pdW(250)
	threeFills(ghost)
	deposit(ghost, 1_000)

	q := openQueries(t, f.write(t))
	h := (&handlers.API{Q: q}).Handler()
	var ov query.WalletOverview
	pdGetJSON(t, h, "/v1/perpdex/wallets/"+ghost, &ov) // publication on first use
	if ov.Cohorts.SizeCohort != nil || ov.Cohorts.PnlCohort != nil || ov.Cohorts.StyleCohortTag != nil {
		t.Fatalf("a wallet without a snapshot is labelled: %+v", ov.Cohorts)
	}
	hourly, current := pdReadCohortTables(t, q)
	ten := at(10, 0).Format(time.RFC3339)
	for w, c := range cases {
		hr, ok := hourly[[2]string{ten, w}]
		cur, ok2 := current[w]
		if !ok || !ok2 {
			t.Fatalf("%s: not labelled (hourly %v, current %v)", w, ok, ok2)
		}
		if c.size != "" && hr.size != c.size || c.pnl != "" && hr.pnl != c.pnl || cur.style != c.style {
			t.Errorf("%s: hourly %+v, current %+v, want %+v", w, hr, cur, c)
		}
		if cur.computedAt != at(12, 0).Format(time.RFC3339) {
			t.Errorf("%s: computed_at %s", w, cur.computedAt)
		}
	}
	if current[few].pnl != "10x_smart" || current[late].pnl != "unprofitable" {
		t.Errorf("by 12:00 the third fill and the late deposit count: few %+v late %+v", current[few], current[late])
	}
	for k := range hourly {
		if k[1] == ghost || k[0] == at(12, 0).Format(time.RFC3339) {
			t.Fatalf("published %v: no snapshot, or the hour in progress", k)
		}
	}
	hours := map[string]bool{}
	for k := range hourly {
		hours[k[0]] = true
	}
	keys := make([]string, 0, len(hours))
	for k := range hours {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) != 3 || keys[0] != at(9, 0).Format(time.RFC3339) || keys[2] != at(11, 0).Format(time.RFC3339) {
		t.Errorf("published hours %v, want 09:00 to 11:00 (12:00 in progress)", keys)
	}
}

// TestPerpdexCohortsRequestNeverWaitsForPublication: on a lake that holds labels, a
// request in an hour whose labels are due is answered at once from what the lake holds
// (the due hour still on today's labels) while the publication it set off runs in the
// background, even when that publication cannot proceed; once it lands, the next
// request reads the new hour's point-in-time labels and both tables equal the oracle.
func TestPerpdexCohortsRequestNeverWaitsForPublication(t *testing.T) {
	ctx := context.Background()
	dir := testlake.Copy(t)
	for _, p := range []string{"perpdex/cohorts_hourly", "perpdex/cohorts_current"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	now := testlake.Now()
	due := now.Add(-time.Hour) // published by a store at now, not by one an hour earlier
	open := func(at time.Time) *query.Queries {
		q, err := query.Open(ctx, dir, query.Options{Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	if b, err := open(due).RebuildPerpdexCohorts(ctx, false); err != nil || !b.LastHour.Equal(due.Add(-time.Hour)) {
		t.Fatalf("publication an hour earlier: %+v %v", b, err)
	}
	q := open(now)
	h := (&handlers.API{Q: q}).Handler()
	// basis returns the label basis of each coin's row of hour at on the size axis.
	basis := func(at time.Time) map[string]bool {
		var page query.CohortsPage
		pdGetJSON(t, h, "/v1/perpdex/cohorts?limit=5000&start="+at.Format(time.RFC3339)+"&end="+at.Add(time.Minute).Format(time.RFC3339), &page)
		out := map[string]bool{}
		for _, r := range page.Rows {
			if strings.HasPrefix(r.TS, at.Format("2006-01-02T15:04:05")) {
				out[r.LabelBasis] = true
			}
		}
		return out
	}
	published := func() (hour, computed time.Time) {
		t.Helper()
		if err := q.DB().QueryRowContext(ctx, "SELECT (SELECT max(hour_ts) FROM perpdex_cohorts_hourly), (SELECT max(computed_at) FROM perpdex_cohorts_current)").Scan(&hour, &computed); err != nil {
			t.Fatal(err)
		}
		return hour.UTC(), computed.UTC()
	}

	// Hold every publication on this lake. Were the request to wait for its own, the
	// watchdog would free it after a minute and the test fail.
	var once sync.Once
	hold := query.HoldPerpdexCohorts(dir)
	release := func() { once.Do(hold) }
	defer release()
	var waited atomic.Bool
	watchdog := time.AfterFunc(time.Minute, func() { waited.Store(true); release() })
	before := basis(due)
	if !watchdog.Stop() || waited.Load() {
		t.Fatal("a request waited for the cohort publication")
	}
	if before["point_in_time"] || !before["current"] {
		t.Fatalf("hour %s before its publication: label bases %v, want today's labels only", due, before)
	}
	if prev := basis(due.Add(-time.Hour)); !prev["point_in_time"] {
		t.Fatalf("the published hour before: label bases %v", prev)
	}
	if hour, computed := published(); !hour.Equal(due.Add(-time.Hour)) || computed.After(due) {
		t.Fatalf("published while held: hour %s, today's labels from %s", hour, computed)
	}

	// Free the publication and wait (bounded) for the one the request started.
	release()
	select {
	case <-q.PerpdexCohortsIdle():
	case <-time.After(2 * time.Minute):
		t.Fatal("the background publication did not finish")
	}
	if hour, computed := published(); !hour.Equal(due) || !computed.Equal(now) {
		t.Fatalf("after the background publication: hour %s, today's labels from %s", hour, computed)
	}
	if after := basis(due); !after["point_in_time"] {
		t.Fatalf("hour %s after its publication: label bases %v", due, after)
	}
	pdCompareCohorts(t, q, now)
}

// TestPerpdexCohortsPublishedByDemo: `mdq demo` leaves a complete lake: both cohort
// tables are published at the demo's end, so a store at that clock has nothing left
// to publish, and they equal the oracle.
func TestPerpdexCohortsPublishedByDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a tiny lake")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"demo", "--data", dir, "--scale", "tiny", "--seed", strconv.Itoa(testlake.Seed), "--end", testlake.End.Format(time.RFC3339)}
	if code := cli.Do(args, strings.NewReader(""), &out, &errb, "test"); code != 0 {
		t.Fatalf("mdq demo: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "perpdex cohorts: ") {
		t.Errorf("mdq demo output does not report the cohort publication: %s", out.String())
	}
	q, err := query.Open(ctx, dir, query.Options{Now: testlake.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if b, err := q.RebuildPerpdexCohorts(ctx, false); err != nil || len(b.HourlyDates) != 0 || b.CurrentBuilt {
		t.Fatalf("after mdq demo a publication still wrote %+v (%v)", b, err)
	}
	pdCompareCohorts(t, q, testlake.Now())
	// Every file has exactly the registry's columns and types (docs/DATA.md).
	for _, tb := range []*lake.Table{lake.PerpdexCohortsHourly, lake.PerpdexCohortsCurrent} {
		files, _ := tb.Files(dir)
		if len(files) == 0 {
			t.Fatalf("%s: no file", tb.Name)
		}
		var want []string
		for _, c := range tb.Columns {
			want = append(want, c.Name+" "+c.Type)
		}
		for _, f := range files {
			var got []string
			rows, err := q.DB().QueryContext(ctx, "SELECT column_name || ' ' || column_type FROM (DESCRIBE SELECT * FROM read_parquet($1, hive_partitioning = false))", f)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					t.Fatal(err)
				}
				got = append(got, c)
			}
			rows.Close()
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("%s: columns %v, registry %v", f, got, want)
			}
		}
	}
}
