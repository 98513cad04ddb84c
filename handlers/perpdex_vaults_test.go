package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// Raw rows of one vault, read with plain SELECTs; the oracle computes in Go.
type vaultRaw struct {
	meta     query.VaultRow // metadata columns only
	created  time.Time
	fills    []vaultRawFill
	funding  []vaultRawFunding
	accounts []vaultRawAccount
	batch    time.Time // newest position snapshot batch, venue-wide, at or before now
	hasBatch bool
	pos      []query.VaultPosition
}

type vaultRawFill struct {
	at                     time.Time
	closedPnl, fee, px, sz float64
	crossed                bool
}

type vaultRawFunding struct {
	at   time.Time
	usdc float64
}

type vaultRawAccount struct {
	at time.Time
	av float64
}

func readVaultRaw(t *testing.T, q *query.Queries, now time.Time) []vaultRaw {
	t.Helper()
	ctx := context.Background()
	db := q.DB()
	rows, err := db.QueryContext(ctx, "SELECT vault, name, kind, leader, created_ts, description FROM perpdex_vaults")
	if err != nil {
		t.Fatal(err)
	}
	var out []vaultRaw
	for rows.Next() {
		var v vaultRaw
		if err := rows.Scan(&v.meta.Vault, &v.meta.Name, &v.meta.Kind, &v.meta.Leader, &v.created, &v.meta.Description); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	rows.Close()
	var batch *time.Time
	rows, err = db.QueryContext(ctx, "SELECT DISTINCT snapshot_ts FROM perpdex_positions")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ts time.Time
		if err := rows.Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if !ts.After(now) && (batch == nil || ts.After(*batch)) {
			b := ts
			batch = &b
		}
	}
	rows.Close()
	for i := range out {
		v := &out[i]
		rows, err := db.QueryContext(ctx, "SELECT time, closed_pnl, fee, px, sz, crossed FROM perpdex_fills WHERE wallet = $1", v.meta.Vault)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var f vaultRawFill
			if err := rows.Scan(&f.at, &f.closedPnl, &f.fee, &f.px, &f.sz, &f.crossed); err != nil {
				t.Fatal(err)
			}
			v.fills = append(v.fills, f)
		}
		rows.Close()
		rows, err = db.QueryContext(ctx, "SELECT time, usdc FROM perpdex_funding WHERE wallet = $1", v.meta.Vault)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var f vaultRawFunding
			if err := rows.Scan(&f.at, &f.usdc); err != nil {
				t.Fatal(err)
			}
			v.funding = append(v.funding, f)
		}
		rows.Close()
		rows, err = db.QueryContext(ctx, "SELECT snapshot_ts, account_value FROM perpdex_accounts WHERE wallet = $1", v.meta.Vault)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a vaultRawAccount
			if err := rows.Scan(&a.at, &a.av); err != nil {
				t.Fatal(err)
			}
			v.accounts = append(v.accounts, a)
		}
		rows.Close()
		if batch == nil {
			continue
		}
		v.batch, v.hasBatch = *batch, true
		rows, err = db.QueryContext(ctx, `SELECT snapshot_ts, coin, szi, entry_px, mark_px, leverage, liquidation_px, unrealized_pnl, position_value
			FROM perpdex_positions WHERE wallet = $1`, v.meta.Vault)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var ts time.Time
			var p query.VaultPosition
			var szi float64
			if err := rows.Scan(&ts, &p.Coin, &szi, &p.EntryPrice, &p.MarkPrice, &p.Leverage, &p.LiquidationPrice, &p.UnrealizedPnl, &p.SizeUsd); err != nil {
				t.Fatal(err)
			}
			if !ts.Equal(*batch) {
				continue
			}
			p.Side, p.SizeToken = "long", szi
			if szi < 0 {
				p.Side, p.SizeToken = "short", -szi
			}
			p.SizeUsd, p.UnrealizedPnl = query.Round(p.SizeUsd, 2), query.Round(p.UnrealizedPnl, 2)
			v.pos = append(v.pos, p)
		}
		rows.Close()
		sort.SliceStable(v.pos, func(i, j int) bool {
			if v.pos[i].SizeUsd != v.pos[j].SizeUsd {
				return v.pos[i].SizeUsd > v.pos[j].SizeUsd
			}
			return v.pos[i].Coin < v.pos[j].Coin
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].meta.Vault < out[j].meta.Vault })
	return out
}

var vaultWindowDays = map[string]int{"1d": 1, "7d": 7, "30d": 30, "all": 0}

// vaultStart is the window's first instant; the zero time for all.
func vaultStart(window string, now time.Time) time.Time {
	if d := vaultWindowDays[window]; d > 0 {
		return now.Add(-time.Duration(d) * 24 * time.Hour)
	}
	return time.Time{}
}

func inWindow(at, start, now time.Time) bool { return !at.Before(start) && !at.After(now) }

// vaultOracle recomputes a vault's row and detail at clock now.
func vaultOracle(v vaultRaw, window string, now time.Time) query.VaultDetail {
	r := v.meta
	r.CreatedTS = query.ISOSeconds(v.created)
	start := vaultStart(window, now)
	pnl := map[string]int64{}
	var first time.Time
	dayMicro := map[string][2]int64{} // pnl, volume
	addPnl := func(at time.Time, u int64) {
		if at.After(now) {
			return
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		for w := range vaultWindowDays {
			if inWindow(at, vaultStart(w, now), now) {
				pnl[w] += u
			}
		}
		if inWindow(at, start, now) {
			k := query.Date(at)
			m := dayMicro[k]
			m[0] += u
			dayMicro[k] = m
		}
	}
	var vol, makerVol int64
	var last time.Time
	fillsPerDay := map[string]int64{}
	for _, f := range v.fills {
		addPnl(f.at, catMicro(f.closedPnl)-catMicro(f.fee))
		if !inWindow(f.at, start, now) {
			continue
		}
		n := catMicro(f.px * f.sz)
		vol += n
		if !f.crossed {
			makerVol += n
		}
		r.Fills++
		if f.at.After(last) {
			last = f.at
		}
		k := query.Date(f.at)
		m := dayMicro[k]
		m[1] += n
		dayMicro[k] = m
		fillsPerDay[k]++
	}
	for _, f := range v.funding {
		addPnl(f.at, catMicro(f.usdc))
	}
	r.Pnl1d, r.Pnl7d, r.Pnl30d, r.PnlAll = catCents(pnl["1d"]), catCents(pnl["7d"]), catCents(pnl["30d"]), catCents(pnl["all"])
	r.VolumeUsd = catCents(vol)
	if vol > 0 {
		m := query.Round(float64(makerVol)/float64(vol)*100, 4)
		r.MakerSharePct = &m
	}
	if !last.IsZero() {
		s := query.ISOMicros(last)
		r.LastFillTS = &s
	}
	var latest *vaultRawAccount
	var avSum, avN int64
	dayAV := map[string]vaultRawAccount{}
	for i := range v.accounts {
		a := v.accounts[i]
		if a.at.After(now) {
			continue
		}
		if latest == nil || a.at.After(latest.at) {
			latest = &v.accounts[i]
		}
		if inWindow(a.at, start, now) {
			avSum += catMicro(a.av)
			avN++
			k := query.Date(a.at)
			if d, ok := dayAV[k]; !ok || a.at.After(d.at) {
				dayAV[k] = a
			}
		}
	}
	if latest != nil {
		av, ts := query.Round(latest.av, 2), query.ISOSeconds(latest.at)
		r.AccountValue, r.AccountValueTS = &av, &ts
	}
	// APR: window PnL over the mean hourly account value, annualised.
	days := float64(vaultWindowDays[window])
	if window == "all" && !first.IsZero() {
		days = now.Sub(first).Hours() / 24
	}
	if avN > 0 && avSum > 0 && days > 0 {
		a := query.Round(float64(pnl[window])/(float64(avSum)/float64(avN))*365/days*100, 4)
		r.AprPct = &a
	}
	d := query.VaultDetail{Vault: r, Daily: []query.VaultDay{}, Positions: []query.VaultPosition{}}
	d.Window = query.VaultWindow{Window: window, End: query.ISOSeconds(now)}
	if window != "all" {
		s := query.ISOSeconds(start)
		d.Window.Start = &s
	}
	// Daily buckets: every date from the window's first (for all, the first active
	// date) to today's.
	from := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	if window == "all" {
		var firstDay string
		for k := range dayMicro {
			if firstDay == "" || k < firstDay {
				firstDay = k
			}
		}
		for k := range dayAV {
			if firstDay == "" || k < firstDay {
				firstDay = k
			}
		}
		if firstDay == "" {
			from = now.Add(time.Hour)
		} else {
			from, _ = time.Parse("2006-01-02", firstDay)
		}
	}
	var cum int64
	for t := from; !t.After(now); t = t.AddDate(0, 0, 1) {
		k := query.Date(t)
		m := dayMicro[k]
		cum += m[0]
		vd := query.VaultDay{Date: k, Pnl: catCents(m[0]), CumPnl: catCents(cum), VolumeUsd: catCents(m[1]), Fills: fillsPerDay[k]}
		if a, ok := dayAV[k]; ok {
			x := query.Round(a.av, 2)
			vd.AccountValue = &x
		}
		d.Daily = append(d.Daily, vd)
	}
	if v.hasBatch {
		s := query.ISOSeconds(v.batch)
		d.PositionsSnapshotTS = &s
		d.Positions = append(d.Positions, v.pos...)
	}
	return d
}

func vaultJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestPerpdexVaultsAgainstOracle: for every window, the list and every vault's detail
// (account value, PnL over 1d/7d/30d/all as closed_pnl - fee + funding, volume, fills,
// maker share, the APR formula, the daily series and the newest batch's positions)
// equal a plain-Go recomputation from the raw fills, funding, account and position
// rows, at the end of history and with the store clock pinned 36 hours earlier.
func TestPerpdexVaultsAgainstOracle(t *testing.T) {
	for _, back := range []time.Duration{0, 36 * time.Hour} {
		now := testlake.Now().Add(-back)
		q, err := query.Open(context.Background(), testlake.Tiny(t), query.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		h := (&handlers.API{Q: q}).Handler()
		raw := readVaultRaw(t, q, now)
		if len(raw) != 2 {
			t.Fatalf("%d vaults in the tiny lake, want the market maker and the liquidator", len(raw))
		}
		for _, w := range []string{"1d", "7d", "30d", "all"} {
			code, body := get(t, h, "/v1/perpdex/vaults?window="+w)
			if code != 200 {
				t.Fatalf("%s: %d %s", w, code, body)
			}
			got := catDecode[query.VaultsPage](t, body)
			want := query.VaultsPage{Vaults: []query.VaultRow{}}
			for _, v := range raw {
				d := vaultOracle(v, w, now)
				want.Window = d.Window
				want.Vaults = append(want.Vaults, d.Vault)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("clock %s window %s list:\n got  %s\n want %s", now, w, vaultJSON(got), vaultJSON(want))
			}
			for _, v := range raw {
				code, body := get(t, h, "/v1/perpdex/vaults/"+v.meta.Vault+"?window="+w)
				if code != 200 {
					t.Fatalf("%s %s: %d %s", v.meta.Vault, w, code, body)
				}
				got := catDecode[query.VaultDetail](t, body)
				want := vaultOracle(v, w, now)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("clock %s window %s vault %s:\n got  %s\n want %s", now, w, v.meta.Vault, vaultJSON(got), vaultJSON(want))
				}
				if got.Vault.Fills == 0 || got.Vault.AccountValue == nil || got.Vault.AprPct == nil || len(got.Daily) == 0 {
					t.Fatalf("clock %s window %s vault %s: the oracle compared empty figures: %s", now, w, v.meta.Vault, body)
				}
			}
		}
	}
}

// TestPerpdexVaultsRules: the default window is 30d; an unknown window, a malformed
// address and an unknown vault answer {"error": ...} with 400, 400 and 404; the daily
// PnL sums to the window's PnL; both vault kinds are listed.
func TestPerpdexVaultsRules(t *testing.T) {
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler()
	_, body := get(t, h, "/v1/perpdex/vaults")
	list := catDecode[query.VaultsPage](t, body)
	t.Run("default window is 30d", func(t *testing.T) {
		_, b30 := get(t, h, "/v1/perpdex/vaults?window=30d")
		if list.Window.Window != "30d" || string(body) != string(b30) {
			t.Fatalf("default %s\n30d %s", body, b30)
		}
	})
	t.Run("market_making and liquidation vaults", func(t *testing.T) {
		kinds := map[string]bool{}
		for _, v := range list.Vaults {
			kinds[v.Kind] = true
		}
		if !kinds["market_making"] || !kinds["liquidation"] || len(list.Vaults) != 2 {
			t.Fatalf("vaults %s", body)
		}
	})
	for _, tc := range []struct {
		name, target string
		code         int
		msg          string
	}{
		{"unknown window is 400", "/v1/perpdex/vaults?window=90d", 400, `"error":"window must be one of 1d, 7d, 30d, all"`},
		{"malformed address is 400", "/v1/perpdex/vaults/0x1234", 400, `"error":"address \"0x1234\" is not a 0x-prefixed 40-hex-digit vault address"`},
		{"unknown vault is 404", "/v1/perpdex/vaults/0x00000000000000000000000000000000000000aa", 404, `"error":"not found"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, h, tc.target)
			if code != tc.code || !strings.Contains(string(body), tc.msg) {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
	t.Run("daily pnl sums to the window pnl", func(t *testing.T) {
		for _, v := range list.Vaults {
			for _, w := range []string{"1d", "7d", "30d", "all"} {
				_, body := get(t, h, "/v1/perpdex/vaults/"+v.Vault+"?window="+w)
				d := catDecode[query.VaultDetail](t, body)
				want := map[string]float64{"1d": d.Vault.Pnl1d, "7d": d.Vault.Pnl7d, "30d": d.Vault.Pnl30d, "all": d.Vault.PnlAll}[w]
				if n := len(d.Daily); n == 0 || d.Daily[n-1].CumPnl != want {
					t.Fatalf("%s %s: daily %s, window pnl %v", v.Vault, w, vaultJSON(d.Daily), want)
				}
				if w == "30d" && len(d.Daily) != 31 {
					t.Fatalf("30d window has %d daily buckets, want 31", len(d.Daily))
				}
			}
		}
	})
	t.Run("an address upper-cased is the same vault", func(t *testing.T) {
		v := list.Vaults[0].Vault
		_, a := get(t, h, "/v1/perpdex/vaults/"+v)
		code, b := get(t, h, "/v1/perpdex/vaults/0x"+strings.ToUpper(v[2:]))
		if code != 200 || string(a) != string(b) {
			t.Fatalf("%d %s", code, b)
		}
	})
}

// TestPerpdexVaultsFixture: a hand-built lake with one vault: a vault with no account
// snapshot has null account_value and apr_pct; a window without fills has null
// maker_share_pct; a vault flat in the newest batch lists no position while
// positions_snapshot_ts names that batch; rows after the store clock never count;
// figures are exact by hand.
func TestPerpdexVaultsFixture(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	vault, other := "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"
	rows := map[*lake.Table]map[string][][]any{}
	add := func(tb *lake.Table, at time.Time, vals ...any) {
		if rows[tb] == nil {
			rows[tb] = map[string][][]any{}
		}
		part := ""
		if len(tb.Partitions) > 0 {
			part = query.Date(at)
		}
		rows[tb][part] = append(rows[tb][part], vals)
	}
	tid := int64(0)
	fill := func(at time.Time, px, sz, closed, fee float64, crossed bool) {
		tid++
		add(lake.PerpdexFills, at, at, vault, "BTC", "", "B", px, sz, "Open Long", 0.0, closed, fee, "USDC",
			nil, nil, nil, crossed, "0xabc", tid, tid, false, nil)
	}
	add(lake.PerpdexVaults, now, vault, "Fixture MM", "market_making", other, now.AddDate(0, -1, 0), "test vault")
	fill(now.Add(-2*time.Hour), 100, 2, 10, 1, false)  // pnl 9, notional 200, maker
	fill(now.Add(-50*time.Hour), 50, 2, -4, 0.5, true) // pnl -4.5, notional 100, taker
	fill(now.Add(time.Hour), 100, 5, 1000, 0, false)   // after the clock: never counts
	add(lake.PerpdexFunding, now.Add(-3*time.Hour), now.Add(-3*time.Hour), vault, "BTC", -1.25, 2.0, 0.0001)
	add(lake.PerpdexPositions, now.Add(-time.Hour), now.Add(-time.Hour), other, "BTC", 1.0, 100.0, 101.0, 5.0, 0.0, 1.0, 101.0)
	add(lake.PerpdexPositions, now.Add(-2*time.Hour), now.Add(-2*time.Hour), vault, "BTC", 2.0, 100.0, 101.0, 5.0, 0.0, 2.0, 202.0)
	dir := t.TempDir()
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for tb, parts := range rows {
		for part, rs := range parts {
			var pv []string
			if part != "" {
				pv = []string{part}
			}
			if _, err := w.Write(context.Background(), tb, pv, func(app lake.AppendFunc) error {
				for _, r := range rs {
					if err := app(r...); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	if err := lake.WriteFileAtomic(dir+"/lake.json", []byte(`{"kind":"fixture"}`)); err != nil {
		t.Fatal(err)
	}
	q, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	h := (&handlers.API{Q: q}).Handler()

	code, body := get(t, h, "/v1/perpdex/vaults/"+vault+"?window=1d")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	d := catDecode[query.VaultDetail](t, body)
	v := d.Vault
	// 1d: the maker fill (+9) and the funding (-1.25); 7d adds the taker fill (-4.5).
	if v.Pnl1d != 7.75 || v.Pnl7d != 3.25 || v.Pnl30d != 3.25 || v.PnlAll != 3.25 {
		t.Errorf("pnl %v %v %v %v, want 7.75 3.25 3.25 3.25", v.Pnl1d, v.Pnl7d, v.Pnl30d, v.PnlAll)
	}
	if v.VolumeUsd != 200 || v.Fills != 1 || v.MakerSharePct == nil || *v.MakerSharePct != 100 {
		t.Errorf("1d volume %v fills %d maker %v", v.VolumeUsd, v.Fills, v.MakerSharePct)
	}
	if v.AccountValue != nil || v.AccountValueTS != nil || v.AprPct != nil {
		t.Errorf("no snapshot: account_value %v apr %v, want null", v.AccountValue, v.AprPct)
	}
	if d.PositionsSnapshotTS == nil || *d.PositionsSnapshotTS != query.ISOSeconds(now.Add(-time.Hour)) || len(d.Positions) != 0 {
		t.Errorf("flat in the newest batch: %v %v", d.PositionsSnapshotTS, d.Positions)
	}
	if len(d.Daily) != 2 || d.Daily[0].Date != "2026-06-09" || d.Daily[1].Pnl != 7.75 || d.Daily[1].Fills != 1 || d.Daily[1].AccountValue != nil {
		t.Errorf("daily %s", vaultJSON(d.Daily))
	}

	_, body = get(t, h, "/v1/perpdex/vaults?window=7d")
	l := catDecode[query.VaultsPage](t, body)
	if len(l.Vaults) != 1 || l.Vaults[0].VolumeUsd != 300 || l.Vaults[0].Fills != 2 ||
		l.Vaults[0].MakerSharePct == nil || *l.Vaults[0].MakerSharePct != query.Round(200.0/300*100, 4) {
		t.Errorf("7d list %s", body)
	}

	// A store clock before every fill: no fill in any window.
	early := now.Add(-100 * time.Hour)
	q2, err := query.Open(context.Background(), dir, query.Options{Now: func() time.Time { return early }})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	_, body = get(t, (&handlers.API{Q: q2}).Handler(), "/v1/perpdex/vaults?window=1d")
	l = catDecode[query.VaultsPage](t, body)
	if v := l.Vaults[0]; v.Fills != 0 || v.MakerSharePct != nil || v.PnlAll != 0 || v.LastFillTS != nil {
		t.Errorf("before every fill: %s", body)
	}
	if code, _ := get(t, (&handlers.API{Q: q2}).Handler(), "/v1/perpdex/vaults/"+vault+"?window=all"); code != http.StatusOK {
		t.Errorf("all window before any activity: %d", code)
	}
}
