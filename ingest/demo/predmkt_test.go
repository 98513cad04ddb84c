package demo

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"mdq/lake"
)

var pmTestEnd = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

const pmTestSeed = 7

type pmCountProgress struct {
	mu    sync.Mutex
	steps map[string]int
}

func (p *pmCountProgress) Start(int) {}
func (p *pmCountProgress) Done()     {}
func (p *pmCountProgress) Step(name string) {
	p.mu.Lock()
	p.steps[name]++
	p.mu.Unlock()
}

// pmGenerate runs only the prediction-market generator into dir, as Run would.
func pmGenerate(t testing.TB, dir, scale string, seed uint64, end time.Time) (*Generator, int) {
	t.Helper()
	sc := Scales[scale]
	end = end.UTC().Truncate(time.Minute)
	w, err := lake.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := &pmCountProgress{steps: map[string]int{}}
	g := &Generator{Opt: Options{Dir: dir, Scale: scale, Seed: seed, End: end, Progress: p}, Scale: sc,
		End: end, Start: end.Add(-time.Duration(sc.Days) * 24 * time.Hour), W: w}
	if err := genPredmkt(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return g, p.steps["predmkt"]
}

func pmGlob(dir string, t *lake.Table) string {
	return lake.QuoteString(filepath.Join(dir, filepath.FromSlash(t.Glob())))
}

// pmFileHashes returns per file (relative path) the row count and a sum of row hashes.
func pmFileHashes(t *testing.T, db *sql.DB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range []*lake.Table{lake.PredmktMarkets, lake.PredmktTokens, lake.PredmktResolutions, lake.PredmktProfiles,
		lake.PredmktTrades, lake.PredmktBookEvents, lake.PredmktFamilyBookEvents} {
		files, err := tb.Files(dir)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", tb.Name, err)
		}
		for _, f := range files {
			var n int64
			var h string
			if err := db.QueryRow(`SELECT count(*), coalesce(sum(hash(x)::HUGEINT), 0)::VARCHAR FROM read_parquet(?) x`, f).Scan(&n, &h); err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, f)
			out[rel] = fmt.Sprintf("%d/%s", n, h)
		}
	}
	return out
}

func TestPredmktTiny(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	var gA *Generator
	var stepsA, stepsB int
	var wg sync.WaitGroup
	wg.Add(2)
	t0 := time.Now()
	go func() { defer wg.Done(); gA, stepsA = pmGenerate(t, dirA, "tiny", pmTestSeed, pmTestEnd) }()
	go func() { defer wg.Done(); _, stepsB = pmGenerate(t, dirB, "tiny", pmTestSeed, pmTestEnd) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("two tiny predmkt generations in %v", time.Since(t0))
	if want := len(gA.Days()) + 1; stepsA != want || stepsB != want {
		t.Errorf("progress steps %d, %d; want %d", stepsA, stepsB, want)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	views := map[string]*lake.Table{"mk": lake.PredmktMarkets, "tk": lake.PredmktTokens, "rs": lake.PredmktResolutions,
		"pf": lake.PredmktProfiles, "tr": lake.PredmktTrades, "be": lake.PredmktBookEvents, "fb": lake.PredmktFamilyBookEvents}
	for name, tb := range views {
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet(%s, hive_partitioning = true)", name, pmGlob(dirA, tb))
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Deterministic", func(t *testing.T) {
		a, b := pmFileHashes(t, db, dirA), pmFileHashes(t, db, dirB)
		if len(a) != len(b) {
			t.Fatalf("file sets differ: %d vs %d files", len(a), len(b))
		}
		for f, h := range a {
			if b[f] != h {
				t.Errorf("%s: %s vs %s", f, h, b[f])
			}
		}
	})
	t.Run("TapeReplays", func(t *testing.T) { pmCheckTape(t, db) })
	t.Run("TradesMatchTape", func(t *testing.T) { pmCheckTrades(t, db) })
	t.Run("FamilyFiles", func(t *testing.T) { pmCheckFamilies(t, db) })
	t.Run("Markets", func(t *testing.T) { pmCheckMarkets(t, db, gA) })
	t.Run("Behaviours", func(t *testing.T) { pmCheckBehaviours(t, db, gA) })
}

func pmQueryInts(t *testing.T, db *sql.DB, q string, dst ...*int64) {
	t.Helper()
	args := make([]any, len(dst))
	for i := range dst {
		args[i] = dst[i]
	}
	if err := db.QueryRow(q).Scan(args...); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

type pmLevel struct {
	Price string `json:"price"`
	Size  string `json:"size"`
}

func pmCents(x float64) int64 { return int64(math.Round(x * 100)) }

// pmParseSide parses a snapshot side into price cents -> size hundredths, de-duplicating
// exact repeats; it reports whether there was a repeat and whether levels are best first.
func pmParseSide(t *testing.T, s string, bids bool) (map[int64]int64, bool) {
	var lv []pmLevel
	if err := json.Unmarshal([]byte(s), &lv); err != nil {
		t.Fatalf("bad book json %q: %v", s, err)
	}
	out := map[int64]int64{}
	dup := false
	var prev int64 = -1
	for _, l := range lv {
		var p, z float64
		fmt.Sscan(l.Price, &p)
		fmt.Sscan(l.Size, &z)
		pc, zc := pmCents(p), pmCents(z)
		if old, ok := out[pc]; ok {
			if old != zc {
				t.Fatalf("level %v repeated with different sizes", l)
			}
			dup = true
			continue
		}
		if prev >= 0 && ((bids && pc >= prev) || (!bids && pc <= prev)) {
			t.Fatalf("levels not best first: %s", s)
		}
		prev = pc
		out[pc] = zc
	}
	return out, dup
}

func pmBest(bids, asks map[int64]int64) (float64, float64) {
	var bb, ba int64 = 0, 100
	for p := range bids {
		bb = max(bb, p)
	}
	for p := range asks {
		ba = min(ba, p)
	}
	b, a := 0.0, 0.0
	if bb > 0 {
		b = float64(bb) / 100
	}
	if ba < 100 {
		a = float64(ba) / 100
	}
	return b, a
}

func pmCheckTape(t *testing.T, db *sql.DB) {
	rows, err := db.Query(`SELECT token_id, event_type, ts, local_ts, seq, side, price, size, best_bid, best_ask, bids, asks, is_snapshot, status
		FROM be ORDER BY token_id, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var (
		cur                           string
		bids, asks                    map[int64]int64
		lastSeq, lastTs, lastLts      int64
		nSnap, nCompared, nDup, nEmpt int
		nTick, nStatus, nTrade, nPC   int
		fails                         int
	)
	fail := func(format string, a ...any) {
		fails++
		if fails < 10 {
			t.Errorf(format, a...)
		}
	}
	for rows.Next() {
		var tok, typ, side, bj, aj, status string
		var ts, lts, seq int64
		var price, size, bb, ba float64
		var snap int32
		if err := rows.Scan(&tok, &typ, &ts, &lts, &seq, &side, &price, &size, &bb, &ba, &bj, &aj, &snap, &status); err != nil {
			t.Fatal(err)
		}
		if tok != cur {
			cur, bids, asks, lastSeq, lastTs, lastLts = tok, nil, nil, 0, 0, 0
		}
		if seq != lastSeq+1 {
			fail("%s: seq %d after %d", tok, seq, lastSeq)
		}
		if ts < lastTs || lts < lastLts || lts-ts < 1 || lts-ts > 40 {
			fail("%s seq %d: ts %d local_ts %d after %d/%d", tok, seq, ts, lts, lastTs, lastLts)
		}
		lastSeq, lastTs, lastLts = seq, ts, lts
		if bb > 0 && ba > 0 && bb >= ba {
			fail("%s seq %d: best_bid %v >= best_ask %v", tok, seq, bb, ba)
		}
		switch typ {
		case "book":
			nSnap++
			if snap != 1 || side != "" || price != 0 || size != 0 || status != "" {
				fail("%s seq %d: book event with populated fields", tok, seq)
			}
			nb, d1 := pmParseSide(t, bj, true)
			na, d2 := pmParseSide(t, aj, false)
			if d1 || d2 {
				nDup++
			}
			if len(nb) == 0 || len(na) == 0 {
				nEmpt++
			}
			if bids != nil {
				nCompared++
				if fmt.Sprint(nb) != fmt.Sprint(bids) || fmt.Sprint(na) != fmt.Sprint(asks) {
					fail("%s seq %d: snapshot differs from replay\nbids %v\nwant %v\nasks %v\nwant %v", tok, seq, nb, bids, na, asks)
				}
			}
			bids, asks = nb, na
			continue
		case "status":
			nStatus++
			if status == "" || price != 0 || size != 0 || side != "" || bb != 0 || ba != 0 || bj != "" {
				fail("%s seq %d: bad status event", tok, seq)
			}
			continue
		case "tick_size_change":
			nTick++
			if price != 0.01 && price != 0.001 || size != 0 || side != "" {
				fail("%s seq %d: bad tick_size_change %v", tok, seq, price)
			}
			continue
		}
		if snap != 0 || bj != "" || aj != "" || status != "" {
			fail("%s seq %d: %s with book fields", tok, seq, typ)
		}
		if bids == nil {
			fail("%s seq %d: %s before the first snapshot", tok, seq, typ)
			continue
		}
		p, z := pmCents(price), pmCents(size)
		book := bids
		if side == "SELL" {
			book = asks
		} else if side != "BUY" {
			fail("%s seq %d: side %q", tok, seq, side)
		}
		switch typ {
		case "price_change":
			nPC++
			if z == 0 {
				delete(book, p)
			} else {
				book[p] = z
			}
		case "trade":
			nTrade++
			// a BUY takes the asks, a SELL takes the bids
			book = asks
			if side == "SELL" {
				book = bids
			}
			if book[p] < z || z <= 0 {
				fail("%s seq %d: trade of %d at %d with %d resting", tok, seq, z, p, book[p])
			}
			book[p] -= z
			if book[p] == 0 {
				delete(book, p)
			}
		default:
			fail("unknown event type %q", typ)
		}
		if wb, wa := pmBest(bids, asks); wb != bb || wa != ba {
			fail("%s seq %d: best %v/%v, replay %v/%v", tok, seq, bb, ba, wb, wa)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("tape: %d snapshots (%d compared, %d with a repeated level, %d with an empty side), %d price_change, %d trade, %d tick_size_change, %d status",
		nSnap, nCompared, nDup, nEmpt, nPC, nTrade, nTick, nStatus)
	if nCompared < 100 || nDup == 0 || nEmpt == 0 || nTick == 0 || nStatus == 0 || nTrade == 0 {
		t.Errorf("tape lacks variety")
	}
}

func pmCheckTrades(t *testing.T, db *sql.DB) {
	var ev, rows, taker, maker, ids, self, badDate int64
	pmQueryInts(t, db, `WITH e AS (SELECT token_id, seq, ts, local_ts, side, price, size FROM be WHERE event_type = 'trade')
		SELECT (SELECT count(*) FROM e), (SELECT count(*) FROM tr),
		(SELECT count(*) FROM e JOIN tr USING (token_id, seq) WHERE tr.role = 'taker' AND tr.side = e.side AND tr.ts = e.ts
			AND tr.local_ts = e.local_ts AND tr.price = e.price AND tr.size = e.size AND tr.usd = tr.price * tr.size),
		(SELECT count(*) FROM e JOIN tr USING (token_id, seq) WHERE tr.role = 'maker' AND tr.side <> e.side AND tr.side IN ('BUY', 'SELL')
			AND tr.ts = e.ts AND tr.local_ts = e.local_ts AND tr.price = e.price AND tr.size = e.size AND tr.usd = tr.price * tr.size),
		(SELECT count(DISTINCT trade_id) FROM tr),
		(SELECT count(*) FROM tr a JOIN tr b USING (token_id, seq) WHERE a.role = 'taker' AND b.role = 'maker' AND (a.wallet = b.wallet OR a.tx_hash <> b.tx_hash)),
		(SELECT count(*) FROM tr WHERE strftime(make_timestamp(ts * 1000), '%Y-%m-%d') <> date::VARCHAR)
			+ (SELECT count(*) FROM be WHERE strftime(make_timestamp(ts * 1000), '%Y-%m-%d') <> date::VARCHAR)`,
		&ev, &rows, &taker, &maker, &ids, &self, &badDate)
	t.Logf("%d tape trades, %d trade rows", ev, rows)
	if ev == 0 || rows != 2*ev || taker != ev || maker != ev || ids != rows || self != 0 || badDate != 0 {
		t.Errorf("trade events %d rows %d taker %d maker %d ids %d self-trades %d misdated %d", ev, rows, taker, maker, ids, self, badDate)
	}
	var tok, cond int64
	pmQueryInts(t, db, `SELECT (SELECT count(*) FROM tr LEFT JOIN tk USING (token_id) WHERE tk.condition_id IS DISTINCT FROM tr.condition_id OR tk.outcome_index <> tr.outcome_index),
		(SELECT count(*) FROM be ANTI JOIN tk USING (token_id))`, &tok, &cond)
	if tok != 0 || cond != 0 {
		t.Errorf("%d trade rows with a wrong market or outcome, %d tape rows of unknown tokens", tok, cond)
	}
}

func pmCheckFamilies(t *testing.T, db *sql.DB) {
	var nFull, nFam, missing, extra, wrong int64
	cols := "event_type, token_id, ts, local_ts, seq, side, price, size, best_bid, best_ask, bids, asks, is_snapshot, status, date::VARCHAR"
	pmQueryInts(t, db, fmt.Sprintf(`WITH fullf AS (SELECT %[1]s FROM be JOIN tk USING (token_id) JOIN mk USING (condition_id) WHERE family_asset <> ''),
		fam AS (SELECT %[1]s FROM fb)
		SELECT (SELECT count(*) FROM fullf), (SELECT count(*) FROM fam),
		(SELECT count(*) FROM (SELECT * FROM fullf EXCEPT ALL SELECT * FROM fam)),
		(SELECT count(*) FROM (SELECT * FROM fam EXCEPT ALL SELECT * FROM fullf)),
		(SELECT count(*) FROM fb JOIN tk USING (token_id) JOIN mk USING (condition_id) WHERE mk.family_asset <> fb.asset OR mk.family_tenor <> fb.tenor)`, cols),
		&nFull, &nFam, &missing, &extra, &wrong)
	t.Logf("family rows: %d", nFam)
	if nFull == 0 || nFull != nFam || missing != 0 || extra != 0 || wrong != 0 {
		t.Errorf("family rows %d in full files, %d in family files, %d missing, %d extra, %d misfiled", nFull, nFam, missing, extra, wrong)
	}
}

func pmCheckMarkets(t *testing.T, db *sql.DB, g *Generator) {
	end := g.End.UnixMilli()
	var nm, badIDs, invalid, open, r24, r7d, rOld, famOpen, lateTape, badTok, profEmpty, profSet, famBad int64
	pmQueryInts(t, db, fmt.Sprintf(`SELECT (SELECT count(*) FROM mk),
		(SELECT count(*) FROM mk WHERE NOT regexp_full_match(condition_id, '0x[0-9a-f]{64}'))
			+ (SELECT count(*) FROM tk WHERE NOT regexp_full_match(token_id, '[1-9][0-9]{70,}')),
		(SELECT count(*) FROM rs WHERE invalid AND winning_index IS NULL),
		(SELECT count(DISTINCT category) FROM mk WHERE NOT closed AND family_asset = ''),
		(SELECT count(*) FROM rs WHERE NOT invalid AND epoch_ms(resolved_ts) > %[1]d - 86400000),
		(SELECT count(*) FROM rs WHERE NOT invalid AND epoch_ms(resolved_ts) BETWEEN %[1]d - 7 * 86400000 AND %[1]d - 86400000),
		(SELECT count(*) FROM rs WHERE NOT invalid AND epoch_ms(resolved_ts) < %[1]d - 7 * 86400000),
		(SELECT count(DISTINCT family_asset || family_tenor) FROM mk WHERE family_asset <> '' AND NOT closed),
		(SELECT count(*) FROM (SELECT token_id, min(ts) AS t0 FROM be GROUP BY token_id) WHERE t0 >= %[2]d),
		(SELECT count(*) FROM (SELECT condition_id, count(*) AS n, min(outcome_index) AS lo, max(outcome_index) AS hi FROM tk GROUP BY ALL) WHERE n <> 2 OR lo <> 0 OR hi <> 1),
		(SELECT count(*) FROM pf WHERE pseudonym = '' AND display_name = ''),
		(SELECT count(*) FROM pf WHERE pseudonym <> ''),
		(SELECT count(*) FROM mk JOIN tk USING (condition_id) WHERE family_asset <> '' AND (category <> 'Crypto' OR outcome NOT IN ('Up', 'Down')))`,
		end, g.Days()[0].Add(24*time.Hour).UnixMilli()),
		&nm, &badIDs, &invalid, &open, &r24, &r7d, &rOld, &famOpen, &lateTape, &badTok, &profEmpty, &profSet, &famBad)
	t.Logf("%d markets; resolved in last 24h %d, 1-7d %d, older %d; %d invalid; %d tokens whose tape starts after the first day",
		nm, r24, r7d, rOld, invalid, lateTape)
	if badIDs != 0 || invalid == 0 || open != 5 || r24 == 0 || r7d == 0 || rOld == 0 || famOpen != 9 || lateTape == 0 || badTok != 0 ||
		profEmpty == 0 || profSet == 0 || famBad != 0 {
		t.Errorf("market shape: badIDs %d invalid %d open categories %d r24 %d r7d %d rOld %d famOpen %d lateTape %d badTok %d profiles %d/%d famBad %d",
			badIDs, invalid, open, r24, r7d, rOld, famOpen, lateTape, badTok, profEmpty, profSet, famBad)
	}
}

// pmPnLView: realized PnL per wallet and valid resolved market (sells minus buys plus 1
// per net share of the winning outcome).
const pmPnLView = `CREATE OR REPLACE TEMP VIEW pnl AS
	SELECT tr.wallet, tr.condition_id, mk.category,
		sum(CASE WHEN tr.side = 'SELL' THEN tr.usd ELSE -tr.usd END)
		+ sum(CASE WHEN tr.outcome_index = rs.winning_index THEN CASE WHEN tr.side = 'BUY' THEN tr.size ELSE -tr.size END ELSE 0 END) AS pnl
	FROM tr JOIN rs USING (condition_id) JOIN mk USING (condition_id)
	WHERE NOT rs.invalid GROUP BY ALL`

func pmCheckBehaviours(t *testing.T, db *sql.DB, g *Generator) {
	if _, err := db.Exec(pmPnLView); err != nil {
		t.Fatal(err)
	}
	var bots, whales, hot, cold, broad int64
	pmQueryInts(t, db, `WITH w AS (SELECT wallet, count(*) AS n, sum(usd) AS vol, avg(usd) AS avg_usd FROM tr GROUP BY wallet),
		p AS (SELECT wallet, sum(pnl) AS pnl, count(*) AS nres FROM pnl GROUP BY wallet)
		SELECT count(*) FILTER (n >= 100 AND avg_usd < 20), count(*) FILTER (vol >= 100000),
			count(*) FILTER (pnl >= 1000 AND nres >= 5), count(*) FILTER (pnl <= -1000 AND nres >= 5), count(*) FILTER (nres >= 20)
		FROM w LEFT JOIN p USING (wallet)`, &bots, &whales, &hot, &cold, &broad)
	t.Logf("bots %d, whales %d, hot %d, cold %d, wallets with >= 20 resolved markets %d", bots, whales, hot, cold, broad)
	if bots < 3 || whales < 3 || hot < 3 || cold < 3 || broad < 15 {
		t.Errorf("behaviour counts too low")
	}
	rows, err := db.Query(fmt.Sprintf(`WITH cohort AS (
			SELECT category, wallet FROM (SELECT category, wallet, sum(pnl) AS pnl, count(*) AS nres FROM pnl GROUP BY ALL)
			JOIN (SELECT mk.category, tr.wallet, sum(usd) AS vol FROM tr JOIN mk USING (condition_id) GROUP BY ALL) USING (category, wallet)
			WHERE pnl >= 1000 AND nres >= 5 AND vol >= 5000),
		recent AS (SELECT mk.category, tr.* FROM tr JOIN mk USING (condition_id) WHERE NOT mk.closed AND tr.ts >= %d),
		mids AS (SELECT token_id, arg_max((best_bid + best_ask) / 2, seq) AS mid FROM be
			WHERE event_type IN ('price_change', 'trade') AND best_bid > 0 AND best_ask > 0 GROUP BY token_id),
		active AS (SELECT category, count(DISTINCT wallet) AS n FROM recent JOIN cohort USING (category, wallet) GROUP BY category),
		misp AS (SELECT category, count(*) AS n FROM (
			SELECT category, condition_id, token_id, sum(usd) AS value, sum(usd) / sum(size) AS avg_px, any_value(mid) AS mid
			FROM recent JOIN cohort USING (category, wallet) JOIN mids USING (token_id) WHERE side = 'BUY' GROUP BY ALL)
			WHERE value >= 500 AND mid - avg_px >= 0.03 GROUP BY category)
		SELECT c.category, coalesce((SELECT count(*) FROM cohort WHERE cohort.category = c.category), 0),
			coalesce(active.n, 0), coalesce(misp.n, 0)
		FROM (SELECT unnest(['Crypto', 'Sports', 'Politics', 'Pop-Culture', 'Tech']) AS category) c
		LEFT JOIN active USING (category) LEFT JOIN misp USING (category) ORDER BY 1`, g.End.UnixMilli()-86400000))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var cat string
		var cohort, active, misp int64
		if err := rows.Scan(&cat, &cohort, &active, &misp); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s: cohort %d, active in last 24h %d, mispriced markets %d", cat, cohort, active, misp))
		if active < 3 || misp < 1 {
			t.Errorf("%s: smart-money cohort %d, active %d, mispricings %d", cat, cohort, active, misp)
		}
	}
	sort.Strings(got)
	t.Log(strings.Join(got, "; "))
}
