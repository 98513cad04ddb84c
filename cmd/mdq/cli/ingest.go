package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"mdq/archive"
	"mdq/query"
)

func init() {
	extraCommands = append(extraCommands, newIngestCmd, newRecordCmd)
}

// ingestCommands and recordCommands let each area's file register its
// `mdq ingest <area>` and `mdq record <area>` subcommand without editing this one.
var (
	ingestCommands []func(*Config) *cobra.Command
	recordCommands []func(*Config) *cobra.Command
)

func newIngestCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Load real data in the venues' public formats into the lake (idempotent)",
		Args:  cobra.NoArgs,
	}
	for _, c := range ingestCommands {
		cmd.AddCommand(c(cfg))
	}
	return cmd
}

func newRecordCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Keep the lake current from a live source (websocket, info API, JSON-RPC node)",
		Args:  cobra.NoArgs,
	}
	for _, c := range recordCommands {
		cmd.AddCommand(c(cfg))
	}
	return cmd
}

// afterIngest is what every ingest and recorder flush does once new partitions are in
// place: refresh the archive manifest (so new archive files are listed, with sizes and
// hashes) and publish the derived tables that depend on the data (the same work as
// `mdq rebuild`, at the wall clock unless clock is set). It prints one line per step.
func afterIngest(ctx context.Context, dir string, clock func() time.Time, out io.Writer) error {
	if err := archive.Refresh(ctx, dir); err != nil {
		return fmt.Errorf("archive manifest: %w", err)
	}
	if clock == nil {
		clock = time.Now
	}
	q, err := query.Open(ctx, dir, query.Options{Now: clock, PublishOnly: true})
	if err != nil {
		return err
	}
	defer q.Close()
	return publishDerived(ctx, q, out)
}
