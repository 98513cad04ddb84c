package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
	sqlfiles "mdq/sql"
)

// Benchmarks of the on-chain routes on testlake.Bench (the medium demo lake under make
// bench): each route end to end through HTTP beside the same SQL file run directly on
// q.DB() with the same arguments, both reporting p99 in ms.

type ocBench struct {
	q    *query.Queries
	h    http.Handler
	now  time.Time
	us   func(time.Duration) int64 // epoch us of now minus d
	tok  string                    // busiest ERC-20 on ethereum
	hubs []string                  // busiest wallets on ethereum
	addr []string                  // 100 wallets, for labels/batch
}

func ocBenchStore(b *testing.B) *ocBench {
	b.Helper()
	now := testlake.BenchNow(b)
	// ServeStale as mdq serve opens its store: requests answer while the once-a-second
	// freshness checks run aside.
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return now }, ServeStale: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	s := &ocBench{q: q, h: benchAPI(q).Handler(), now: now,
		us: func(d time.Duration) int64 { return now.Add(-d).UnixMicro() }}
	ctx := context.Background()
	if err := q.DB().QueryRowContext(ctx, `SELECT token_address FROM onchain_transfers WHERE chain = 'ethereum'
		AND token_address <> '0x0000000000000000000000000000000000000000' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`).Scan(&s.tok); err != nil {
		b.Fatal(err)
	}
	rows, err := q.DB().QueryContext(ctx, `SELECT a FROM (SELECT from_address AS a FROM onchain_transfers WHERE chain = 'ethereum'
		UNION ALL SELECT to_address FROM onchain_transfers WHERE chain = 'ethereum') GROUP BY a ORDER BY count(*) DESC, a LIMIT 100`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var a string
		rows.Scan(&a) //nolint:errcheck
		s.addr = append(s.addr, a)
	}
	rows.Close()
	s.hubs = s.addr[:10]
	// Build the store-local legs table (once per store, ~15 s on the medium lake) before
	// timing, as a server does on its first on-chain request.
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/onchain/wallets/"+s.addr[0], nil))
	// The busiest wallets' legs in Go, as serve's first warm pass loads them.
	if err := q.WarmHotWallets(ctx); err != nil {
		b.Fatal(err)
	}
	for _, c := range q.CacheReport() {
		b.Logf("cache %s: %d entries, %d of %d bytes", c.Name, c.Entries, c.Bytes, c.Limit)
	}
	return s
}

// ocP99 runs f b.N times and reports the 99th-percentile latency in ms.
func ocP99(b *testing.B, f func(i int)) {
	b.ReportAllocs()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		f(i)
		lat = append(lat, time.Since(t))
		i++
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
	}
}

func (s *ocBench) http(b *testing.B, method, target string) {
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	if rec.Code != 200 {
		b.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
	}
}

func (s *ocBench) sql(b *testing.B, file string, args ...any) {
	rows, err := s.q.DB().QueryContext(context.Background(), sqlfiles.MustRead(file), args...)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
}

// split appends what the per-wallet SQL file takes last: the wallet segments' split
// dates (h, r) and the files listed for the wallet (args[1], or args[0] for wallet.sql;
// args[2] is compare's second wallet) on the chain args[0] (empty for wallet.sql).
func (s *ocBench) split(file, h, r string, args ...any) []any {
	chain, a, b := "", args[0].(string), ""
	if file != "onchain/wallet.sql" {
		chain, a = args[0].(string), args[1].(string)
	}
	if file == "onchain/wallet_compare.sql" {
		b = args[2].(string)
	}
	if h == "" {
		h, r = s.q.WalletLegsSplit()
	}
	tail, err := s.q.WalletSQLArgs(context.Background(), file, chain, a, b, h, r)
	if err != nil {
		panic(err)
	}
	return append(args, tail...)
}

// ocBenchRoute benchmarks one route over HTTP and its SQL directly.
func ocBenchRoute(b *testing.B, target func(s *ocBench, i int) (method, url string), file string, args func(s *ocBench, i int) []any) {
	s := ocBenchStore(b)
	// One untimed request first: it builds the hourly board the route reads, as
	// query.OnchainWarm does on a server before requests arrive.
	m, u := target(s, 0)
	s.http(b, m, u)
	b.Run("http", func(b *testing.B) {
		ocP99(b, func(i int) { m, u := target(s, i); s.http(b, m, u) })
	})
	b.Run("sql", func(b *testing.B) {
		ocP99(b, func(i int) { s.sql(b, file, args(s, i)...) })
	})
	if slices.Contains(walletLegsSQL, file) {
		// The same SQL reading every leg from the per-date onchain_legs files (split
		// dates before any day): the layout the per-wallet routes read before
		// onchain_wallet_legs.
		b.Run("sql_per_date", func(b *testing.B) {
			perDate = true
			defer func() { perDate = false }()
			ocP99(b, func(i int) { s.sql(b, file, args(s, i)...) })
		})
	}
}

// perDate makes split give the split dates before any day (every leg from the per-date
// files) during the sql_per_date runs.
var perDate bool

func (s *ocBench) splitFor(file string, args ...any) []any {
	if perDate {
		return s.split(file, "0001-01-01", "0001-01-01", args...)
	}
	return s.split(file, "", "", args...)
}

// walletLegsSQL are the SQL files that read wallet_legs (their last arguments are the
// split dates and the files, from split).
var walletLegsSQL = []string{"onchain/wallet.sql", "onchain/wallet_transactions.sql", "onchain/wallet_counterparties.sql",
	"onchain/wallet_pnl.sql", "onchain/wallet_compare.sql"}

const day = 24 * time.Hour

func BenchmarkOnchainTokenTransfers(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", fmt.Sprintf("/v1/onchain/tokens/%s/transfers?period=7d&tab=%s", s.tok, []string{"bought", "sold"}[i%2])
	}, "onchain/token_transfers_board.sql", func(s *ocBench, i int) []any {
		// One chain: the route reads the hourly transfers board this SQL builds.
		return []any{"ethereum", s.us(7 * day), s.us(0), query.OnchainTransferRows}
	})
}

func BenchmarkOnchainScreener(b *testing.B) {
	sorts := []string{"volume", "net_inflow", "holders", "smart_inflow"}
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/tokens/screener?window=7d&sort=" + sorts[i%4]
	}, "onchain/screener.sql", func(s *ocBench, i int) []any {
		// The route reads the hourly board this SQL builds (the board hour is the bench
		// clock's hour; the board may have been read from the lake, so the cohort the SQL
		// reads is made here).
		if i == 0 {
			if err := s.q.PrepareScreenerSQL(context.Background(), "ethereum", s.now.Truncate(time.Hour)); err != nil {
				panic(err)
			}
		}
		return []any{"ethereum", s.now.AddDate(0, 0, -7).Format("2006-01-02"), s.us(0), false, query.OnchainSmartMoneyPnL}
	})
}

// BenchmarkOnchainWallet: the route reads the serving date's onchain_wallet_edges and
// onchain_wallet_bands when published (wallet_edges.sql, on the pool keeping footers);
// the SQL side runs wallet.sql, which defines the figures, over the wallet segments on
// the main pool (the route's fallback for any other clock).
func BenchmarkOnchainWallet(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)]
	}, "onchain/wallet.sql", func(s *ocBench, i int) []any { return s.splitFor("onchain/wallet.sql", s.addr[i%len(s.addr)], s.us(0)) })
}

func BenchmarkOnchainDiscover(b *testing.B) {
	sorts := []string{"volume", "inflow", "outflow", "net_flow", "tx_count", "pnl"}
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/discover?size=20&sort=" + sorts[i%6]
	}, "onchain/discover.sql", func(s *ocBench, i int) []any {
		// The route reads the hourly board this SQL builds.
		return []any{"ethereum", s.us(30 * day), s.us(0)}
	})
}

// BenchmarkOnchainTraceDepth5Width10: the heaviest shape; its SQL side builds the pair
// board the hops read.
func BenchmarkOnchainTraceDepth5Width10(b *testing.B) {
	s := ocBenchStore(b)
	s.http(b, "GET", "/v1/onchain/wallets/"+s.hubs[0]+"/trace") // builds the 30d pair board (untimed)
	b.Run("http", func(b *testing.B) {
		ocP99(b, func(i int) {
			s.http(b, "GET", fmt.Sprintf("/v1/onchain/wallets/%s/trace?depth=5&width=10", s.hubs[i%len(s.hubs)]))
		})
	})
	// The route reads the hourly pair board this SQL builds (one per chain and window).
	b.Run("sql", func(b *testing.B) {
		ocP99(b, func(i int) {
			s.sql(b, "onchain/trace_pairs.sql", "ethereum", s.us(30*day), s.us(0), query.OnchainTraceMaxWidth)
		})
	})
}

func BenchmarkOnchainLabelsBatch100(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "POST", "/v1/onchain/labels/batch?addresses=" + strings.Join(s.addr, ",")
	}, "onchain/labels_batch.sql", func(s *ocBench, i int) []any {
		// The route reads the hourly labels board this SQL builds.
		return []any{s.us(30 * day), s.us(0)}
	})
}

func BenchmarkOnchainTransactions(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)] + "/transactions"
	}, "onchain/wallet_transactions.sql", func(s *ocBench, i int) []any {
		return s.splitFor("onchain/wallet_transactions.sql", "ethereum", s.addr[i%len(s.addr)], s.us(30*day), s.us(0), "", 0.0, false, int64(0), int64(0), "", 101)
	})
}

// BenchmarkOnchainTransactionsPage2: each wallet's second page, by the cursor of its
// first (asked once, untimed); the SQL side resumes after the same cursor.
func BenchmarkOnchainTransactionsPage2(b *testing.B) {
	var pages []string
	var cursors []query.TxCursor
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		if pages == nil {
			for _, a := range s.addr {
				first := "/v1/onchain/wallets/" + a + "/transactions"
				rec := httptest.NewRecorder()
				s.h.ServeHTTP(rec, httptest.NewRequest("GET", first, nil))
				var page struct {
					Rows []struct {
						BlockTime string `json:"block_time"`
						LogIndex  int64  `json:"log_index"`
						TxHash    string `json:"tx_hash"`
					} `json:"transactions"`
					Next *string `json:"next_cursor"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.Next == nil || len(page.Rows) == 0 {
					panic(fmt.Sprintf("%s: no second page: %d %s", first, rec.Code, rec.Body.String()))
				}
				last := page.Rows[len(page.Rows)-1]
				t, err := time.Parse(time.RFC3339, last.BlockTime)
				if err != nil {
					panic(err)
				}
				pages = append(pages, first+"?cursor="+url.QueryEscape(*page.Next))
				cursors = append(cursors, query.TxCursor{BlockUS: t.UnixMicro(), LogIndex: last.LogIndex, TxHash: last.TxHash})
			}
		}
		return "GET", pages[i%len(pages)]
	}, "onchain/wallet_transactions.sql", func(s *ocBench, i int) []any {
		c := cursors[i%len(cursors)]
		return s.splitFor("onchain/wallet_transactions.sql", "ethereum", s.addr[i%len(s.addr)], s.us(30*day), s.us(0), "", 0.0, true, c.BlockUS, c.LogIndex, c.TxHash, 101)
	})
}

func BenchmarkOnchainCounterparties(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)] + "/counterparties"
	}, "onchain/wallet_counterparties.sql", func(s *ocBench, i int) []any {
		return s.splitFor("onchain/wallet_counterparties.sql", "ethereum", s.addr[i%len(s.addr)], s.us(30*day), s.us(0), 50)
	})
}

func BenchmarkOnchainPnL(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)] + "/pnl"
	}, "onchain/wallet_pnl.sql", func(s *ocBench, i int) []any {
		return s.splitFor("onchain/wallet_pnl.sql", "ethereum", s.addr[i%len(s.addr)], s.now.AddDate(0, 0, -29).Format("2006-01-02"), s.us(0))
	})
}

func BenchmarkOnchainBalances(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)] + "/balances"
	}, "onchain/wallet_balances.sql", func(s *ocBench, i int) []any {
		return []any{"ethereum", s.addr[i%len(s.addr)], s.us(0), 1.0}
	})
}

func BenchmarkOnchainENS(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/wallets/" + s.addr[i%len(s.addr)] + "/ens"
	}, "onchain/wallet_ens.sql", func(s *ocBench, i int) []any { return []any{s.addr[i%len(s.addr)]} })
}

func BenchmarkOnchainCompare(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", fmt.Sprintf("/v1/onchain/wallets/compare?wallet_a=%s&wallet_b=%s", s.addr[i%50], s.addr[50+i%50])
	}, "onchain/wallet_compare.sql", func(s *ocBench, i int) []any {
		return s.splitFor("onchain/wallet_compare.sql", "ethereum", s.addr[i%50], s.addr[50+i%50], s.us(30*day), s.us(0), 50)
	})
}

func BenchmarkOnchainTokenSearch(b *testing.B) {
	qs := []string{"usd", "eth", "pepe", "coin", "wrapped"}
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/tokens/search?q=" + qs[i%len(qs)]
	}, "onchain/token_search.sql", func(s *ocBench, i int) []any { return []any{qs[i%len(qs)], "all", 10} })
}

func BenchmarkOnchainHolders(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/tokens/" + s.tok + "/holders"
	}, "onchain/token_holders.sql", func(s *ocBench, i int) []any {
		// The route reads the hourly holders board this SQL builds.
		h, err := s.q.OnchainHistoryArgs("ethereum", s.now.Truncate(time.Hour))
		if err != nil {
			panic(err)
		}
		return append([]any{"ethereum", s.us(0), query.OnchainTokenHoldersCap}, h...)
	})
}

func BenchmarkOnchainProvenance(b *testing.B) {
	ocBenchRoute(b, func(s *ocBench, i int) (string, string) {
		return "GET", "/v1/onchain/labels/" + s.addr[i%len(s.addr)] + "/provenance"
	}, "onchain/label_provenance.sql", func(s *ocBench, i int) []any { return []any{s.addr[i%len(s.addr)], s.now} })
}

// BenchmarkOnchainWarm times query.OnchainWarm on a fresh store: the legs, the side
// tables and every board it builds (what a server does at start and at each hour turn,
// the second time without the legs).
func BenchmarkOnchainWarm(b *testing.B) {
	now := testlake.BenchNow(b)
	for b.Loop() {
		q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		if err := q.OnchainWarm(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t).Seconds(), "warm_s")
		q.Close()
	}
}
