package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdq/ingest/predmkt"
)

func init() {
	ingestCommands = append(ingestCommands, newIngestPredmktCmd)
}

// newIngestPredmktCmd builds `mdq ingest predmkt`: market-channel captures, Gamma
// metadata, Data API fills and OrderFilled logs into the lake (docs/INGEST.md).
func newIngestPredmktCmd(cfg *Config) *cobra.Command {
	var (
		kind, clock string
		skipBad     bool
	)
	cmd := &cobra.Command{
		Use:   "predmkt FILE...",
		Short: "Load prediction-market files (market channel, Gamma metadata, fills, OrderFilled logs); - is stdin",
		Long: "Load prediction-market files into the lake: market-channel captures (JSON lines, one frame a line,\n" +
			"optionally after the receive time in epoch ms), Gamma market/event JSON, Data API fill records and\n" +
			"OrderFilled logs (JSON lines). The kind is guessed from the content unless --kind is given; .gz, .zst\n" +
			"and .lz4 are read as such. Idempotent: the same file twice changes nothing. A file with a malformed\n" +
			"line is not written (the others are) unless --skip-bad.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			now, err := clockFunc(clock)
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			p := newProgress(errw, "ingest predmkt")
			p.Start(len(args))
			res, err := predmkt.Ingest(cmd.Context(), cfg.Data, args, predmkt.Options{
				Kind: kind, SkipBad: skipBad, Stdin: cfg.Stdin,
				FileDone: func(f string) { p.Step(f) },
			})
			p.Done()
			if err != nil {
				return err
			}
			for _, b := range res.Bad {
				fmt.Fprintln(errw, b)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "predmkt:", res.Summary.String())
			if len(res.Summary.Partitions) > 0 {
				if err := afterIngest(cmd.Context(), cfg.Data, now, out); err != nil {
					return err
				}
			}
			if len(res.Rejected) > 0 {
				return errors.New("not written (malformed lines above): " + strings.Join(res.Rejected, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "market-channel, gamma, fills or order-filled (default: guessed per file)")
	cmd.Flags().BoolVar(&skipBad, "skip-bad", false, "write the good lines of a file with malformed ones (reported) instead of rejecting the file")
	cmd.Flags().StringVar(&clock, "clock", "", "publish the derived tables for this RFC3339 time instead of now")
	return cmd
}

func init() {
	recordCommands = append(recordCommands, newRecordPredmktCmd)
}

// newRecordPredmktCmd builds `mdq record predmkt`: a live recorder of the market
// channel into capture segments, each flushed into the lake when it closes.
func newRecordPredmktCmd(cfg *Config) *cobra.Command {
	var (
		ws, markets, gamma, capture string
		allActive                   bool
		silence, rotate             time.Duration
		buffer                      int
	)
	cmd := &cobra.Command{
		Use:   "predmkt",
		Short: "Record the prediction market's websocket market channel into the lake (hourly flushes; SIGTERM flushes and stops)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			var assets []string
			var err error
			switch {
			case allActive && markets != "":
				return errors.New("--markets and --all-active exclude each other")
			case allActive:
				if gamma == "" {
					return errors.New("--all-active needs --gamma URL (the Gamma API base)")
				}
				dir := capture
				if dir == "" {
					dir = filepath.Join(cfg.Data, "capture", "predmkt")
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				file, toks, err := predmkt.FetchActive(ctx, gamma, dir)
				if err != nil {
					return err
				}
				res, err := predmkt.Ingest(ctx, cfg.Data, []string{file}, predmkt.Options{Kind: predmkt.KindGamma})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "record predmkt: %d active markets' metadata: %s\n", len(toks)/2, res.Summary.String())
				assets = toks
			case markets != "":
				if assets, err = predmkt.TokensOf(ctx, cfg.Data, strings.Split(markets, ",")); err != nil {
					return err
				}
			default:
				return errors.New("give --markets IDS or --all-active --gamma URL")
			}
			rec, err := predmkt.NewRecorder(predmkt.RecorderConfig{
				Root: cfg.Data, CaptureDir: capture, WS: ws, Assets: assets,
				Silence: silence, Rotate: rotate, Buffer: buffer, Log: cmd.ErrOrStderr(),
				Flushed: func(ctx context.Context, _ string, res *predmkt.Result) error {
					if len(res.Summary.Partitions) == 0 {
						return nil
					}
					return afterIngest(ctx, cfg.Data, nil, out)
				},
			})
			if err != nil {
				return err
			}
			err = rec.Run(ctx)
			s := rec.Stats()
			fmt.Fprintf(out, "record predmkt: %d connections, %d frames received, %d lines written, %d lost to a full buffer, %d malformed\n",
				s.Connections, s.Received, s.Written, s.Dropped, s.Bad)
			return err
		},
	}
	cmd.Flags().StringVar(&ws, "ws", "", "market channel websocket URL (e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market)")
	cmd.Flags().StringVar(&markets, "markets", "", "comma-separated outcome-token ids, or condition ids (0x...) already in the lake")
	cmd.Flags().BoolVar(&allActive, "all-active", false, "subscribe to every active market listed by --gamma")
	cmd.Flags().StringVar(&gamma, "gamma", "", "Gamma API base URL for --all-active (e.g. https://gamma-api.polymarket.com)")
	cmd.Flags().StringVar(&capture, "capture", "", "directory of the capture segments (default <data>/capture/predmkt)")
	cmd.Flags().DurationVar(&silence, "silence", 30*time.Second, "no frame for this long is a gap: reconnect")
	cmd.Flags().DurationVar(&rotate, "rotate", time.Hour, "segment length: each closed segment is flushed into the lake")
	cmd.Flags().IntVar(&buffer, "buffer", 65536, "frames held between the socket and the disk; beyond, frames are lost and a gap recorded")
	return cmd
}
