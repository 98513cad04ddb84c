package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mdq/handlers"
	"mdq/query"
)

func init() {
	extraCommands = append(extraCommands, newRebuildCmd)
	serveHooks = append(serveHooks, boardRefresher)
}

// newRebuildCmd builds `mdq rebuild`: publish the derived tables due now (on-chain
// legs, closed trades, the hourly boards of every area, the perpetuals cohort labels not
// yet published) to the lake, so a server started in the same hour serves them without
// recomputing.
func newRebuildCmd(cfg *Config) *cobra.Command {
	var clock, level string
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Publish the derived tables due now (legs, closed trades, hourly boards of every area, cohort labels) into the lake",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			now, err := clockFunc(clock)
			if err != nil {
				return err
			}
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
			}
			// debug shows each warm step's wall and CPU time.
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lv}))
			q, err := query.Open(cmd.Context(), cfg.Data, cfg.storeOptions(query.Options{Now: now, Logger: log, PublishOnly: true}))
			if err != nil {
				return err
			}
			defer q.Close()
			return publishDerived(cmd.Context(), q, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&clock, "clock", "", "build for this RFC3339 time instead of now (as serve --clock)")
	cmd.Flags().StringVar(&level, "log-level", rebuildLogLevel(), "debug, info, warn or error (env MDQ_LOG_LEVEL); debug logs each warm step's wall and CPU time")
	return cmd
}

// publishDerived publishes every derived table of the lake that is due at the store's
// clock (mdq rebuild, after an ingest, at the end of mdq demo) and prints one line per
// table family.
func publishDerived(ctx context.Context, q *query.Queries, out io.Writer) error {
	ctx = query.AsBuild(ctx)
	// The cost is split between what new raw days make due (the per-day tables, the
	// legs, closed trades, the tape digests, the cohort labels of new hours) and what a
	// new hour makes due whatever landed (the hour's boards and the serving state read
	// with them): a publication's last line gives both, so one more day can be read
	// against a full rebuild either way (make bench-oneday).
	var cost publishCost
	mark := cost.start()
	legs, err := q.PublishOnchainLegs(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "onchain legs: %d of %d partitions recomputed, %d removed, in %s\n",
		len(legs.Written), legs.Partitions, len(legs.Removed), legs.Took.Round(time.Millisecond))
	fmt.Fprintf(out, "onchain wallet legs: history to %s, recent to %s, compacted %v, %d segments rewritten, in %s\n",
		legs.Wallet.History, legs.Wallet.Recent, legs.Wallet.Compacted, len(legs.Wallet.Written), legs.Wallet.Took.Round(time.Millisecond))
	if legs.Wallet.Edges != "" {
		fmt.Fprintf(out, "onchain wallet edges: written for %s\n", legs.Wallet.Edges)
	}
	days, err := q.PublishDayTables(ctx)
	if err != nil {
		return err
	}
	for _, d := range days {
		fmt.Fprintf(out, "%s: %d of %d dates recomputed, %d removed, in %s\n",
			d.Table, len(d.Written), d.Partitions, len(d.Removed), d.Took.Round(time.Millisecond))
	}
	start := time.Now()
	wrote, err := q.PublishPerpdexClosedTrades(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "perpdex closed trades: republished %v in %s\n", wrote, time.Since(start).Round(time.Millisecond))
	daily, err := q.PublishPerpdexDaily(ctx)
	if err != nil {
		return err
	}
	for _, p := range daily {
		fmt.Fprintf(out, "%s: %d of %d dates recomputed, %d removed, in %s\n",
			p.Table, len(p.Written), p.Partitions, len(p.Removed), p.Took.Round(time.Millisecond))
	}
	mark = cost.add(&cost.days, mark)
	start = time.Now()
	b, computed, err := q.PublishPredmktBoard(ctx)
	if err != nil {
		return err
	}
	if b == nil {
		// A publish-only store leaves a published board in the lake.
		fmt.Fprintf(out, "predmkt board for %s: published already (%s)\n",
			q.Now().Truncate(time.Hour).Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	} else {
		how := "read back"
		if computed {
			how = "computed"
		}
		fmt.Fprintf(out, "predmkt board for %s: %d wallets (%d rows over all categories) %s in %s\n",
			b.Hour.Format(time.RFC3339), len(b.Cats["all"]), b.Rows(), how, time.Since(start).Round(time.Millisecond))
	}
	start = time.Now()
	wroteBoard, err := q.PublishMarketBoard(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "predmkt market board for %s: published %v in %s\n",
		q.Now().Truncate(time.Hour).Format(time.RFC3339), wroteBoard, time.Since(start).Round(time.Millisecond))
	mark = cost.add(&cost.hour, mark)
	// The tape index's per-file digests (published once per archive file version).
	start = time.Now()
	if err := q.WarmPredmkt(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "predmkt tape index digests in %s\n", time.Since(start).Round(time.Millisecond))
	// Perpetuals cohort labels: only what is not yet published (see RebuildPerpdexCohorts).
	c, err := rebuildCohorts(ctx, q)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, c)
	mark = cost.add(&cost.days, mark)
	// The hourly boards of the perpetuals and on-chain areas, published for the clock's
	// hour (a server started in that hour reads them instead of computing them).
	start = time.Now()
	if err := q.PerpdexWarm(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "perpdex boards for %s: leaderboards and builders in %s\n",
		query.PerpdexBoardTime(q.Now()).Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := q.OnchainWarm(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "onchain boards for %s: screener, discover, trace, holders, transfers, labels in %s\n",
		query.PerpdexBoardTime(q.Now()).Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	cost.add(&cost.hour, mark)
	fmt.Fprintf(out, "cost: days' tables %s (%.1f cpu-s), hour's boards %s (%.1f cpu-s)\n",
		cost.days.wall.Round(time.Millisecond), cost.days.cpu.Seconds(), cost.hour.wall.Round(time.Millisecond), cost.hour.cpu.Seconds())
	return nil
}

// publishCost sums a publication's wall and CPU time in two parts.
type publishCost struct{ days, hour costPart }

type costPart struct{ wall, cpu time.Duration }

type costMark struct {
	at  time.Time
	cpu time.Duration
}

func (c *publishCost) start() costMark { return costMark{time.Now(), query.ProcessCPU()} }

// add adds what passed since m to part and returns the mark of now.
func (c *publishCost) add(part *costPart, m costMark) costMark {
	now := c.start()
	part.wall += now.at.Sub(m.at)
	part.cpu += now.cpu - m.cpu
	return now
}

// rebuildCohorts publishes the perpetuals cohort labels not yet published, waiting for
// them, and describes what it wrote.
func rebuildCohorts(ctx context.Context, q *query.Queries) (string, error) {
	start := time.Now()
	c, err := q.RebuildPerpdexCohorts(ctx, false)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("perpdex cohorts: %d hourly rows in %d date partitions (through %s), today's labels %d rows, in %s",
		c.HourlyRows, len(c.HourlyDates), c.LastHour.Format(time.RFC3339), c.CurrentRows, time.Since(start).Round(time.Millisecond)), nil
}

// boardRefresher keeps the hourly boards current in a running server: it builds (or
// loads) the prediction-market board and tape index, the perpetuals leaderboard and
// builder boards, and the on-chain boards and in-memory transfer legs
// at start and checks every minute whether the store clock entered a new hour, so
// requests rarely pay for a rebuild.
func boardRefresher(ctx context.Context, _ *Config, _ *cobra.Command, api *handlers.API) (func(), error) {
	api.Mounts = append(api.Mounts, handlers.Mount{Prefix: "/readyz", Handler: readyHandler(api.Q)})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		// Ready as soon as the derived tables are current for the serving clock (on a
		// restart: the boards published, nothing to compute): the first pass below then
		// reads them into the hourly caches without holding /readyz back.
		at := api.Q.Now()
		if cur, err := api.Q.PublishedCurrent(query.AsBuild(ctx)); err != nil {
			if ctx.Err() != nil {
				return
			}
			if api.Log != nil {
				api.Log.Warn("derived tables check", "err", err)
			}
		} else {
			for _, area := range query.ReadyAreas {
				if cur[area] {
					api.Q.MarkWarm(area, at, nil)
				}
			}
			if api.Log != nil {
				api.Log.Debug("derived tables current", "areas", cur)
			}
		}
		for {
			// Three independent chains: the prediction-market board and its tape index
			// (ohlcv, orderbook, smart money, events); the perpetuals cohort labels, then
			// the perpetuals boards (which read the labels); the on-chain state. They run
			// one after the other, also in a first pass that only reads published state:
			// each area's boards read back into the serving hour's memory stack when read
			// side by side (the large lake's 6.25 GB peak beside a 2.8 GB steady state),
			// and /readyz does not wait for that pass (the areas are marked from the
			// published tables above). Each area's outcome feeds /readyz as soon as it is
			// known.
			type area struct {
				name string
				fn   func(context.Context) error
			}
			for _, chain := range [][]area{
				{{"predmkt", api.Q.WarmPredmkt}},
				{{"perpdex_cohorts", api.Q.PerpdexCohortsWarm}, {"perpdex", api.Q.PerpdexWarm}},
				{{"onchain", api.Q.OnchainWarm}},
				// Per-day tables (market list, liquidations): not a readiness area, since
				// their routes read the raw files of any date not yet published.
				{{"day_tables", api.Q.WarmDayTables}},
				// The busiest wallets' legs (a cache, last: loading them all takes about
				// 25 cpu-s at large when their files change, and nothing waits for it).
				{{"hot_wallets", api.Q.WarmHotWallets}},
			} {
				for _, w := range chain {
					at := api.Q.Now()
					start := time.Now()
					// A build, not a request: its queries get query.BuildTimeout (a board
					// of a large lake on a busy machine takes longer than a request may).
					err := w.fn(query.AsBuild(ctx))
					if ctx.Err() != nil {
						return
					}
					if api.Log != nil {
						api.Log.Debug("derived state warm", "area", w.name, "took", time.Since(start).Round(time.Millisecond))
					}
					api.Q.MarkWarm(w.name, at, err)
					if err != nil && api.Log != nil {
						api.Log.Error(w.name+" derived state", "err", err)
					}
				}
			}
			if ctx.Err() != nil {
				return
			}
			// The Go-side state (boards, tape index, caches) in bytes beside the Go share
			// of the budget; walking it costs CPU, so only when debug logging is on.
			if api.Log != nil && api.Log.Enabled(ctx, slog.LevelDebug) {
				// One walk (seconds of CPU at large: the two walks took 11 s), summed here.
				parts := api.Q.GoStateReport()
				var bytes int64
				for _, u := range parts {
					bytes += u.Bytes
				}
				api.Log.Debug("go-side state", "bytes", bytes, "go_budget", api.Q.Budget().Go,
					"parts", parts, "caches", api.Q.CacheReport())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// readyHandler answers /readyz: 200 once every area's derived state is current for the
// serving clock, 503 with the reason before (or when an area fails or falls behind).
// /healthz stays liveness. Public, like /healthz: a load balancer probes it without a key.
func readyHandler(q *query.Queries) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		rep := q.Ready()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !rep.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(rep) //nolint:errcheck
	})
}

// rebuildLogLevel is rebuild's default --log-level: $MDQ_LOG_LEVEL, else info.
func rebuildLogLevel() string {
	if l := os.Getenv("MDQ_LOG_LEVEL"); l != "" {
		return l
	}
	return "info"
}
