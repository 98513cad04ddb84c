package cli

import (
	"errors"
	"fmt"
	"strings"

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
