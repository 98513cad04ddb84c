package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdq/ingest/demo"
	"mdq/lake"
	"mdq/query"
)

func newDemoCmd(cfg *Config) *cobra.Command {
	var scale, end string
	var seed uint64
	var force bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Write a deterministic demo lake (same seed and end: same rows)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			endT := time.Now().UTC().Truncate(time.Hour)
			if end != "" {
				t, err := time.Parse(time.RFC3339, end)
				if err != nil {
					return fmt.Errorf("--end %q is not an RFC3339 time", end)
				}
				endT = t
			}
			if _, ok := demo.Scales[scale]; !ok {
				return fmt.Errorf("--scale %q: use tiny, small, medium or large", scale)
			}
			if err := demo.CheckDir(cfg.Data, force); err != nil {
				return err
			}
			// Exclusive until the derived tables are published too (demo.Run takes it
			// again inside; the store opened below shares this hold).
			unlock, err := lake.LockExclusive(cfg.Data)
			if err != nil {
				return err
			}
			defer unlock()
			start := time.Now()
			m, err := demo.Run(cmd.Context(), demo.Options{
				Dir: cfg.Data, Scale: scale, Seed: seed, End: endT, Force: force,
				Progress: newProgress(cmd.ErrOrStderr(), "demo "+scale),
			})
			if err != nil {
				return err
			}
			// Every derived table, at the demo's end as the store clock, so that no serve
			// or query has to build them first.
			var derived strings.Builder
			q, err := query.Open(cmd.Context(), cfg.Data, cfg.storeOptions(query.Options{Now: func() time.Time { return m.End }, PublishOnly: true}))
			if err != nil {
				return err
			}
			err = publishDerived(cmd.Context(), q, &derived)
			q.Close()
			if err != nil {
				return fmt.Errorf("derived tables: %w", err)
			}
			size, _ := dirSize(cfg.Data)
			fmt.Fprintf(cmd.OutOrStdout(), "demo lake (%s, seed %d) %s to %s written to %s: %.1f MB in %s\n",
				m.Scale, m.Seed, m.Start.Format(time.RFC3339), m.End.Format(time.RFC3339), cfg.Data,
				float64(size)/1e6, time.Since(start).Round(100*time.Millisecond))
			fmt.Fprint(cmd.OutOrStdout(), derived.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&scale, "scale", "small", "tiny, small, medium or large")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().StringVar(&end, "end", "", "end of history, RFC3339 (default: now, truncated to the hour)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the lake in a non-empty directory")
	return cmd
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n, err
}
