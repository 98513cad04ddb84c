package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"mdq/handlers"
	"mdq/query"
)

type serveFlags struct {
	addr         string
	clock        string
	queryTimeout time.Duration
	logLevel     string
	metrics      bool
	accessLog    string
}

func newServeCmd(cfg *Config) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the JSON API, the archive and the MCP endpoint over the lake",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			serveGC()
			return runServe(cmd.Context(), cfg, f, cmd)
		},
	}
	cmd.Flags().StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	cmd.Flags().StringVar(&f.clock, "clock", "", "pin \"now\" to this RFC3339 time (reproducible analysis and tests)")
	cmd.Flags().DurationVar(&f.queryTimeout, "query-timeout", 30*time.Second, "per-query timeout")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().BoolVar(&f.metrics, "metrics", true, "serve Prometheus metrics at /metrics (no key needed: counts and latencies per route, no paths or keys)")
	cmd.Flags().StringVar(&f.accessLog, "access-log", "all", "access log volume: all, off, errors (status >= 400), or a share of requests to log such as 0.1 (errors always logged)")
	for _, fh := range serveFlagHooks {
		fh(cmd)
	}
	return cmd
}

// serveFlagHooks let other files of this package declare the serve flags their
// serveHooks read.
var serveFlagHooks []func(cmd *cobra.Command)

// clockFunc returns the one clock all window arithmetic uses.
func clockFunc(pinned string) (func() time.Time, error) {
	if pinned == "" {
		return time.Now, nil
	}
	t, err := time.Parse(time.RFC3339, pinned)
	if err != nil {
		return nil, fmt.Errorf("--clock %q is not an RFC3339 time", pinned)
	}
	return func() time.Time { return t }, nil
}

func newLogger(cmd *cobra.Command, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lv})), nil
}

// serveHooks are extra wiring steps (credentials, budget, archive, MCP) that other
// files of this package register; each may add mounts or set fields of the API.
var serveHooks []func(ctx context.Context, cfg *Config, cmd *cobra.Command, api *handlers.API) (cleanup func(), err error)

func runServe(ctx context.Context, cfg *Config, f *serveFlags, cmd *cobra.Command) error {
	now, err := clockFunc(f.clock)
	if err != nil {
		return err
	}
	log, err := newLogger(cmd, f.logLevel)
	if err != nil {
		return err
	}
	q, err := query.Open(ctx, cfg.Data, cfg.storeOptions(query.Options{Timeout: f.queryTimeout, Now: now, Logger: log, ServeStale: true}))
	if err != nil {
		return err
	}
	defer q.Close()
	accessLog, err := handlers.ParseAccessLog(f.accessLog)
	if err != nil {
		return err
	}
	api := &handlers.API{Q: q, Log: log, AccessLog: accessLog}
	if f.metrics {
		api.Metrics = handlers.NewMetrics(q)
		api.Mounts = append(api.Mounts, handlers.Mount{Prefix: "/metrics", Handler: api.Metrics.Handler()})
	}
	for _, hook := range serveHooks {
		cleanup, err := hook(ctx, cfg, cmd, api)
		if err != nil {
			return err
		}
		if cleanup != nil {
			defer cleanup()
		}
	}

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	// inflight counts running handlers, so that shutdown can wait for the ones it cut
	// to write their access-log line.
	var inflight atomic.Int64 // a counter, not a WaitGroup: requests may start while shutdown waits
	h := api.Handler()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inflight.Add(1)
			defer inflight.Add(-1)
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: archive downloads and NDJSON exports stream for as long as the
		// client reads; queries are bounded by --query-timeout instead.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("serving", "addr", ln.Addr().String(), "data", cfg.Data)
	fmt.Fprintf(cmd.OutOrStdout(), "mdq serving on http://%s (data %s)\n", ln.Addr().String(), cfg.Data)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Shutdown ends within ShutdownGrace in every state: background builds stop at
	// once (their queries are interrupted; a cancelled publication leaves the previous
	// files), in-flight requests get the grace period, then long downloads and exports
	// are cut. Finishing that way is a clean exit (0): the access log has every request.
	log.Info("shutting down")
	q.Stop()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("grace period over; closing the connections still open", "err", err)
		srv.Close() //nolint:errcheck
		// The cut handlers see their connection closed (an archive download's pacing
		// wakes on it) and return; their access-log lines are written before exit.
		deadline := time.Now().Add(cutHandlersWait)
		for inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := inflight.Load(); n > 0 {
			log.Warn("handlers still running after the connections were closed", "handlers", n)
		}
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// cutHandlersWait bounds the wait for handlers cut at the end of the grace period.
const cutHandlersWait = 3 * time.Second

// ShutdownGrace is how long in-flight requests get after SIGTERM or SIGINT; with the
// stopping of background builds after it (query.CloseGrace bounds that, and they were
// cancelled at the signal) the process ends within about 15 s.
var ShutdownGrace = 10 * time.Second

// serveGCPercent is the Go collector's target while serving. The server's live Go heap
// is steady (about 0.9 GB at large: the hour's boards read back, the bounded caches),
// and at the default 100 the heap grows to twice that between collections. At 50 it
// stops at 1.5 times the live set, for a collector that costs 1 to 2% of the CPU at
// 100: under 16-connection load on the large lake the steady RSS fell from 3.3-3.5 GB
// to 2.9 GB and the peaks from 4.2-4.4 to 3.9-4.1 GB (docs/PERFORMANCE.md; the peaks
// that remain are bursts of DuckDB work, not the Go heap).
// GOGC set in the environment is the operator's choice and is left alone.
const serveGCPercent = 50

func serveGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}
