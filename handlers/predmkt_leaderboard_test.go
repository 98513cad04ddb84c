package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/lake"
	"mdq/query"
)

// pmLakes are the lakes the oracle tests run on: the random fixture always, and a copy
// of the tiny demo lake once its generator writes prediction-market rows.
func pmLakes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"fixture": randomPmFixture(1).write(t)}
	tiny := testlake.Tiny(t)
	q := openQueries(t, tiny)
	var n int64
	if err := q.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM predmkt_trades").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		out["tiny"] = testlake.Copy(t) // the board is written into the lake
	}
	return out
}

func getJSON(t *testing.T, h http.Handler, target string, v any) {
	t.Helper()
	code, body := get(t, h, target)
	if code != 200 {
		t.Fatalf("%s: %d %s", target, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestPredmktLeaderboardAgainstOracle: every sort key, window and category, with and
// without filters, equals the plain-Go oracle row by row (realized PnL, window PnL,
// hit_rate and its Wilson half-width, volumes, trades, tags, rank).
func TestPredmktLeaderboardAgainstOracle(t *testing.T) {
	for name, dir := range pmLakes(t) {
		t.Run(name, func(t *testing.T) {
			q := openQueries(t, dir)
			h := (&handlers.API{Q: q}).Handler()
			board := oracleBoard(readPmRaw(t, q), testlake.Now().UnixMilli())
			if len(board["all"]) == 0 {
				t.Fatal("lake has no wallets")
			}
			nonEmpty := 0
			for _, cat := range append([]string{"all"}, query.PredmktCategories...) {
				for _, win := range []string{"all", "24h", "7d", "30d"} {
					for _, sort := range query.LeaderboardSorts {
						for _, f := range []struct {
							q            string
							minRes       int64
							minVol, minA float64
							limit, off   int
						}{
							{"&min_resolved=0&limit=50", 0, 0, 0, 50, 0},
							{"&min_resolved=3&min_volume_usd=1000&limit=7&offset=2", 3, 1000, 0, 7, 2},
							{"&min_avg_usd=20", 20, 0, 20, 20, 0},
						} {
							target := fmt.Sprintf("/v1/predmkt/leaderboard?category=%s&window=%s&sort=%s%s", cat, win, sort, f.q)
							var got []query.WalletBoardRow
							getJSON(t, h, target, &got)
							want := oracleLeaderboard(board, query.PredmktLeaderboardParams{Category: cat, Window: win, Sort: sort,
								MinResolved: f.minRes, MinVolumeUSD: f.minVol, MinAvgUSD: f.minA, Limit: f.limit, Offset: f.off})
							if len(got) != len(want) {
								t.Fatalf("%s: %d rows, oracle %d", target, len(got), len(want))
							}
							for i := range got {
								if g, w := jsonOf(got[i]), jsonOf(want[i]); g != w {
									t.Fatalf("%s row %d:\n got  %s\n want %s", target, i, g, w)
								}
							}
							if len(got) > 0 {
								nonEmpty++
							}
						}
					}
				}
			}
			if nonEmpty < 100 {
				t.Fatalf("only %d non-empty pages: the comparison proves little", nonEmpty)
			}
		})
	}
}

// edgeFixture holds the hand-built edge cases of the leaderboard:
//   - w1 and w2 trade identically (a tie on every sort key);
//   - w3 trades only an open market and an invalid one (no resolved volume);
//   - w4 wins one market and loses one;
//   - every wallet trades market 0, resolved YES an hour before now.
func edgeFixture() *pmFixture {
	now := testlake.Now()
	f := &pmFixture{profiles: map[string][2]string{pmWallet(1): {"Tied-One", "One"}}}
	won := f.addMarket("Sports", now.Add(-48*time.Hour), &pmRes{ts: now.Add(-time.Hour), winner: 0})
	lost := f.addMarket("Sports", now.Add(-48*time.Hour), &pmRes{ts: now.Add(-10 * 24 * time.Hour), winner: 1})
	open := f.addMarket("Tech", now.Add(-48*time.Hour), nil)
	void := f.addMarket("Tech", now.Add(-48*time.Hour), &pmRes{ts: now.Add(-2 * time.Hour), invalid: true, winner: -1})
	t0 := now.Add(-30 * time.Hour).UnixMilli()
	mm := pmWallet(9)
	for _, w := range []string{pmWallet(1), pmWallet(2)} {
		f.trade(t0, won, 0, w, mm, "BUY", 0.40, 100)   // +60
		f.trade(t0+1, lost, 0, w, mm, "BUY", 0.50, 20) // -10
	}
	f.trade(t0+2, open, 0, pmWallet(3), mm, "BUY", 0.5, 50)
	f.trade(t0+3, void, 1, pmWallet(3), mm, "BUY", 0.5, 50)
	f.trade(t0+4, won, 1, pmWallet(4), mm, "BUY", 0.30, 100) // -30
	f.trade(t0+5, lost, 1, pmWallet(4), mm, "BUY", 0.20, 50) // +40
	f.trade(t0+6, void, 0, pmWallet(4), mm, "SELL", 0.60, 10)
	return f
}

func lbRows(t *testing.T, h http.Handler, qs string) []query.WalletBoardRow {
	t.Helper()
	var rows []query.WalletBoardRow
	getJSON(t, h, "/v1/predmkt/leaderboard?"+qs, &rows)
	return rows
}

func findRow(rows []query.WalletBoardRow, w string) *query.WalletBoardRow {
	for i := range rows {
		if rows[i].ProxyWallet == w {
			return &rows[i]
		}
	}
	return nil
}

// TestPredmktLeaderboardRules: SPEC §2.2, §4.2, §7 and §8 rules of the leaderboard on
// hand-built edge cases.
func TestPredmktLeaderboardRules(t *testing.T) {
	q := openQueries(t, edgeFixture().write(t))
	h := (&handlers.API{Q: q}).Handler()
	all := lbRows(t, h, "min_resolved=0&limit=50")

	t.Run("hit_rate is null, never 0, with no resolved volume", func(t *testing.T) {
		r := findRow(all, pmWallet(3))
		if r == nil || r.HitRate != nil || r.HitRateCI != nil || r.ResolvedMarkets != 0 || r.RealizedPnLUSD != 0 {
			t.Fatalf("%+v", r)
		}
		code, body := get(t, h, "/v1/predmkt/leaderboard?min_resolved=0&limit=50")
		if code != 200 || !strings.Contains(string(body), `"hit_rate":null,"hit_rate_ci":null`) {
			t.Fatalf("null hit_rate not encoded as null: %s", body)
		}
	})
	t.Run("invalid resolution adds no PnL and no resolved market", func(t *testing.T) {
		r := findRow(all, pmWallet(4))
		// won market: -30; lost market (NO won): 50 shares at 0.20 -> +40; void: nothing.
		if r == nil || r.RealizedPnLUSD != 10 || r.ResolvedMarkets != 2 || r.Markets != 3 {
			t.Fatalf("%+v", r)
		}
		// hit_rate: the winning market's volume (10 USD) over resolved volume (30 + 10).
		if r.HitRate == nil || *r.HitRate != 0.25 {
			t.Fatalf("hit_rate %+v", r.HitRate)
		}
		// Wilson half-width at p=0.25, n=2.
		if want := query.Round(query.WilsonHalfWidth(0.25, 2), 6); r.HitRateCI == nil || *r.HitRateCI != want {
			t.Fatalf("hit_rate_ci %v, want %v", r.HitRateCI, want)
		}
	})
	t.Run("window PnL counts markets by resolution time", func(t *testing.T) {
		rows := lbRows(t, h, "min_resolved=0&window=24h&limit=50")
		r := findRow(rows, pmWallet(1))
		// Only the market resolved an hour ago is inside 24h: +60; the other resolved 10 days ago.
		if r == nil || r.RealizedPnLWindowUSD != 60 || r.RealizedPnLUSD != 50 {
			t.Fatalf("%+v", r)
		}
		r = findRow(lbRows(t, h, "min_resolved=0&window=all&limit=50"), pmWallet(1))
		if r.RealizedPnLWindowUSD != r.RealizedPnLUSD || r.VolumeWindowUSD != r.VolumeAllUSD || r.TradesWindow != r.TradesAll {
			t.Fatalf("window=all must equal lifetime: %+v", r)
		}
	})
	t.Run("ties on every sort key break on wallet address", func(t *testing.T) {
		for _, s := range query.LeaderboardSorts {
			rows := lbRows(t, h, "min_resolved=0&limit=50&sort="+s)
			i1, i2 := -1, -1
			for i, r := range rows {
				switch r.ProxyWallet {
				case pmWallet(1):
					i1 = i
				case pmWallet(2):
					i2 = i
				}
			}
			if i1 < 0 || i2 != i1+1 {
				t.Fatalf("sort=%s: tied wallets at %d and %d", s, i1, i2)
			}
		}
	})
	t.Run("rank continues across pages by offset", func(t *testing.T) {
		full := lbRows(t, h, "min_resolved=0&limit=50")
		page := lbRows(t, h, "min_resolved=0&limit=2&offset=2")
		if len(page) != 2 || page[0].Rank != 3 || page[0].ProxyWallet != full[2].ProxyWallet || page[1].Rank != 4 {
			t.Fatalf("page %+v", page)
		}
	})
	t.Run("empty array when nothing passes", func(t *testing.T) {
		for _, target := range []string{"/v1/predmkt/leaderboard", "/v1/predmkt/leaderboard?min_volume_usd=1e12", "/v1/predmkt/leaderboard?min_resolved=0&offset=1000"} {
			code, body := get(t, h, target)
			if code != 200 || strings.TrimSpace(string(body)) != "[]" {
				t.Fatalf("%s: %d %s", target, code, body)
			}
		}
	})
	t.Run("min_resolved min_volume_usd min_avg_usd filter on lifetime figures", func(t *testing.T) {
		for _, r := range lbRows(t, h, "min_resolved=2&limit=50") {
			if r.ResolvedMarkets < 2 {
				t.Fatalf("%+v", r)
			}
		}
		for _, r := range lbRows(t, h, "min_resolved=0&min_volume_usd=60&limit=50") {
			if r.VolumeAllUSD < 60 {
				t.Fatalf("%+v", r)
			}
		}
		rows := lbRows(t, h, "min_resolved=0&min_avg_usd=20&limit=50")
		for _, r := range rows {
			if r.AvgTradeUSD < 20 {
				t.Fatalf("%+v", r)
			}
		}
		if len(rows) == 0 || len(rows) == len(all) {
			t.Fatalf("min_avg_usd filtered %d of %d", len(all)-len(rows), len(all))
		}
	})
	t.Run("profile fields are returned, empty strings when absent", func(t *testing.T) {
		if r := findRow(all, pmWallet(1)); r.Pseudonym != "Tied-One" || r.DisplayName != "One" {
			t.Fatalf("%+v", r)
		}
		if r := findRow(all, pmWallet(3)); r.Pseudonym != "" || r.DisplayName != "" || r.Tags == nil {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("category recomputes every figure on that category", func(t *testing.T) {
		r := findRow(lbRows(t, h, "min_resolved=0&category=Tech&limit=50"), pmWallet(4))
		if r == nil || r.Markets != 1 || r.ResolvedMarkets != 0 || r.HitRate != nil || r.TradesAll != 1 || r.VolumeAllUSD != 6 {
			t.Fatalf("%+v", r)
		}
		if r := findRow(lbRows(t, h, "min_resolved=0&category=Crypto&limit=50"), pmWallet(4)); r != nil {
			t.Fatalf("wallet with no Crypto trades listed: %+v", r)
		}
	})
	for _, tc := range []struct{ rule, query, body string }{
		{"offset above 1000 is 400", "offset=1001", `{"error":"offset must be between 0 and 1000"}`},
		{"negative offset is 400", "offset=-1", `{"error":"offset must be between 0 and 1000"}`},
		{"unknown sort key is 400", "sort=pnl", `{"error":"sort must be one of ` + strings.Join(query.LeaderboardSorts, ", ") + `"}`},
		{"unknown query parameter is 400", "order=asc", `{"error":"unknown query parameter \"order\""}`},
		{"unknown category is 400", "category=Weather", `{"error":"category must be one of all, Crypto, Sports, Politics, Pop-Culture, Tech"}`},
		{"unknown window is 400", "window=1d", `{"error":"window must be one of 24h, 7d, 30d, all"}`},
		{"min_resolved above 4294967295 is 400", "min_resolved=4294967296", `{"error":"min_resolved must be between 0 and 4294967295"}`},
		{"min_volume_usd must be finite", "min_volume_usd=NaN", `{"error":"min_volume_usd must be a finite number"}`},
		{"min_avg_usd must be 0 or more", "min_avg_usd=-1", `{"error":"min_avg_usd must be at least 0"}`},
		{"limit must be positive", "limit=0", `{"error":"limit must be at least 1"}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, body := get(t, h, "/v1/predmkt/leaderboard?"+tc.query)
			if code != 400 || strings.TrimSpace(string(body)) != tc.body {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}

// TestPredmktLeaderboardLimitCappedAt50: limit above 50 is served at 50, not refused.
func TestPredmktLeaderboardLimitCappedAt50(t *testing.T) {
	q := openQueries(t, randomPmFixture(2).write(t))
	h := (&handlers.API{Q: q}).Handler()
	if n := len(lbRows(t, h, "min_resolved=0&limit=500")); n != 40 && n != 50 {
		t.Fatalf("limit=500 served %d rows", n)
	}
	if n := len(lbRows(t, h, "min_resolved=0&limit=500")); n > 50 {
		t.Fatalf("limit=500 served %d rows, cap is 50", n)
	}
	if n := len(lbRows(t, h, "min_resolved=0")); n != 20 {
		t.Fatalf("default limit served %d rows, want 20", n)
	}
}

// TestPredmktLeaderboardMinAvg20ExcludesBots: min_avg_usd=20 excludes every wallet
// tagged bot, and the fixture's bot is tagged.
func TestPredmktLeaderboardMinAvg20ExcludesBots(t *testing.T) {
	for name, dir := range pmLakes(t) {
		t.Run(name, func(t *testing.T) {
			q := openQueries(t, dir)
			h := (&handlers.API{Q: q}).Handler()
			bots := 0
			for _, r := range lbRows(t, h, "min_resolved=0&limit=50&sort=trades_all") {
				for _, tag := range r.Tags {
					if tag == "bot" {
						bots++
					}
				}
			}
			if bots == 0 {
				t.Fatal("no bot on the first page by trades: the rule is not exercised")
			}
			for off := 0; off <= 1000; off += 50 {
				rows := lbRows(t, h, fmt.Sprintf("min_resolved=0&min_avg_usd=20&limit=50&offset=%d", off))
				for _, r := range rows {
					for _, tag := range r.Tags {
						if tag == "bot" {
							t.Fatalf("bot listed with min_avg_usd=20: %+v", r)
						}
					}
				}
				if len(rows) < 50 {
					break
				}
			}
		})
	}
}

// TestPredmktBoardHourlyInLakeAndRebuild: the board is written to the lake as Parquet
// for the hour of the store clock; another process in the same hour serves the lake's
// board rather than recomputing; the next hour rebuilds it.
func TestPredmktBoardHourlyInLakeAndRebuild(t *testing.T) {
	dir := edgeFixture().write(t)
	var clock atomic.Int64
	clock.Store(testlake.Now().Add(10 * time.Minute).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	q1, err := query.Open(context.Background(), dir, query.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer q1.Close()
	b1, err := q1.PredmktBoard(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files, _ := lake.PredmktBoard.Files(dir)
	if len(files) != 1 || filepath.Base(files[0]) != "board.parquet" {
		t.Fatalf("board files %v", files)
	}
	var builtTS time.Time
	var n int64
	if err := q1.DB().QueryRowContext(context.Background(), "SELECT max(built_ts), count(*) FROM predmkt_board").Scan(&builtTS, &n); err != nil {
		t.Fatal(err)
	}
	if !builtTS.Equal(testlake.Now()) || n != int64(len(b1.Cats["all"])+len(b1.Cats["Sports"])+len(b1.Cats["Tech"])) {
		t.Fatalf("board in lake: built %v, %d rows", builtTS, n)
	}
	// Doctor the lake's board: a second store in the same hour must serve it as is.
	w, _ := lake.NewWriter(dir)
	built := strings.TrimPrefix(filepath.Base(filepath.Dir(files[0])), "built=")
	_, err = w.Write(context.Background(), lake.PredmktBoard, []string{built}, func(add lake.AppendFunc) error {
		return add("all", pmWallet(7), "", "", 123.45, 0.0, 0.0, 0.0, int64(30), nil, nil, 10.0, 0.0, 0.0, 0.0,
			int64(1), int64(0), int64(0), int64(0), 10.0, int64(1), int64(0), int64(0), testlake.Now())
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	q2, err := query.Open(context.Background(), dir, query.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	h2 := (&handlers.API{Q: q2}).Handler()
	rows := lbRows(t, h2, "")
	if len(rows) != 1 || rows[0].ProxyWallet != pmWallet(7) || rows[0].RealizedPnLUSD != 123.45 {
		t.Fatalf("same-hour store did not serve the lake's board: %+v", rows)
	}
	// The first store keeps its in-memory board for the hour.
	if b, _ := q1.PredmktBoard(context.Background()); b != b1 {
		t.Fatal("board not cached for the hour")
	}
	// Next hour: rebuilt from trades, replacing the doctored file.
	clock.Add(time.Hour.Milliseconds())
	rows = lbRows(t, h2, "min_resolved=0&limit=50")
	if findRow(rows, pmWallet(7)) != nil || findRow(rows, pmWallet(1)) == nil {
		t.Fatalf("next hour did not rebuild: %+v", rows)
	}
	if err := q2.DB().QueryRowContext(context.Background(), "SELECT max(built_ts) FROM predmkt_board").Scan(&builtTS); err != nil {
		t.Fatal(err)
	}
	if !builtTS.Equal(testlake.Now().Add(time.Hour)) {
		t.Fatalf("rebuilt board stamped %v", builtTS)
	}
}
