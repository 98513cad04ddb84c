package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mdq/lake/cut"
	"mdq/query"
)

func init() { extraCommands = append(extraCommands, newLakeCmd) }

// newLakeCmd builds `mdq lake`, the lake's own maintenance commands.
func newLakeCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{Use: "lake", Short: "Work on the lake itself (point-in-time copies)"}
	var at, out string
	c := &cobra.Command{
		Use:   "cut --at T --out DIR",
		Short: "Write a copy of the lake holding only what was known at T (every table; derived tables rebuilt for T)",
		Long: "Write a copy of the lake at --data holding only what was known at --at: every raw table filtered by the time\n" +
			"its rows became known (fill, trade and tape times, resolution times, snapshot and observation times),\n" +
			"then the derived tables rebuilt from those rows for the clock --at, as mdq rebuild --clock would. The copy\n" +
			"is written beside --out and renamed into place when complete; --out must be missing or empty.\n" +
			"Serving the copy with --clock T answers every route as serving the full lake with --clock T does.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if at == "" {
				return fmt.Errorf("--at is required (RFC3339, e.g. 2026-11-20T10:30:00Z)")
			}
			t, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				return fmt.Errorf("--at %q is not an RFC3339 time", at)
			}
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			return lakeCut(cmd.Context(), cfg, t, out, cmd.OutOrStdout())
		},
	}
	c.Flags().StringVar(&at, "at", "", "the instant to cut at (RFC3339, fractional seconds allowed)")
	c.Flags().StringVar(&out, "out", "", "the directory to write the copy to (missing or empty)")
	cmd.AddCommand(c)
	return cmd
}

// lakeCut writes the cut into a hidden temporary directory beside out, publishes the
// derived tables there with the store clock pinned at t, and renames it into place:
// out is either untouched or the complete copy.
func lakeCut(ctx context.Context, cfg *Config, t time.Time, out string, w io.Writer) error {
	if err := cut.CheckOut(cfg.Data, out); err != nil {
		return err
	}
	out = filepath.Clean(out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".cut-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp) //nolint:errcheck
		}
	}()
	start := time.Now()
	res, err := cut.Raw(ctx, cfg.Data, tmp, t)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(res.Rows))
	for n := range res.Rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "%s: %d rows\n", n, res.Rows[n])
	}
	at := t.UTC()
	spill, err := os.MkdirTemp("", "mdq-cut-spill-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(spill) //nolint:errcheck
	q, err := query.Open(ctx, tmp, cfg.storeOptions(query.Options{Now: func() time.Time { return at }, TempDir: spill, PublishOnly: true}))
	if err != nil {
		return err
	}
	err = publishDerived(ctx, q, w)
	q.Close()
	if err != nil {
		return fmt.Errorf("derived tables: %w", err)
	}
	os.RemoveAll(filepath.Join(tmp, ".tmp")) //nolint:errcheck
	// A missing or empty out: rename replaces an empty directory on POSIX; check again
	// in case something was written to it meanwhile.
	if err := cut.CheckOut(cfg.Data, out); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	done = true
	fmt.Fprintf(w, "lake cut at %s written to %s (%d files) in %s\n", at.Format(time.RFC3339Nano), out, res.Files,
		time.Since(start).Round(time.Millisecond))
	return nil
}
