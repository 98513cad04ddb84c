package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdq/ingest"
	"mdq/ingest/perpdex"
)

func init() {
	ingestCommands = append(ingestCommands, newIngestPerpdexCmd)
	recordCommands = append(recordCommands, newRecordPerpdexCmd)
}

// newRecordPerpdexCmd builds `mdq record perpdex`: a poller of the venue's info API
// (ingest/perpdex.Recorder).
func newRecordPerpdexCmd(cfg *Config) *cobra.Command {
	var info, usersFile, clock string
	var every time.Duration
	var rpm int
	var once bool
	cmd := &cobra.Command{
		Use:   "perpdex",
		Short: "Poll the perpetuals venue's info API for the listed users' fills, funding, ledger and hourly snapshots",
		Long: "Resumes from the checkpoint in the lake (" + perpdex.CheckpointFile + "); requests are spaced to --rpm and\n" +
			"retried with exponential backoff on 429 and 5xx; each round is merged atomically, also when stopped (SIGTERM).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if info == "" {
				return errors.New("--info URL is required (the venue's info endpoint)")
			}
			var users []string
			if usersFile != "" {
				b, err := os.ReadFile(usersFile)
				if err != nil {
					return err
				}
				for i, line := range strings.Split(string(b), "\n") {
					line = strings.TrimSpace(line)
					if line == "" || strings.HasPrefix(line, "#") {
						continue
					}
					if len(line) != 42 || !strings.HasPrefix(line, "0x") {
						return fmt.Errorf("%s:%d: %q is not a 0x address", usersFile, i+1, line)
					}
					users = append(users, strings.ToLower(line))
				}
			}
			if every <= 0 {
				return errors.New("--every must be positive")
			}
			now, err := clockFunc(clock)
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			rec := &perpdex.Recorder{Root: cfg.Data, Info: info, Users: users, RPM: rpm, Log: errw, Now: now}
			rec.AfterFlush = func(ctx context.Context) error { return afterIngest(ctx, cfg.Data, now, errw) }
			if once {
				sum, err := rec.Cycle(cmd.Context())
				fmt.Fprintf(cmd.OutOrStdout(), "perpdex: %s; %d requests, %d retried\n", sum.String(), rec.Requests, rec.Retries)
				return err
			}
			return rec.Run(cmd.Context(), every)
		},
	}
	cmd.Flags().StringVar(&info, "info", "", "info endpoint URL (POST JSON), e.g. http://127.0.0.1:3001/info")
	cmd.Flags().StringVar(&usersFile, "users", "", "file of user addresses to follow, one per line (# comments)")
	cmd.Flags().DurationVar(&every, "every", time.Minute, "time between polling rounds")
	cmd.Flags().IntVar(&rpm, "rpm", 60, "requests per minute at most (the venue allows 1200 weight a minute; most info requests weigh 20)")
	cmd.Flags().BoolVar(&once, "once", false, "run one round and exit")
	cmd.Flags().StringVar(&clock, "clock", "", "pin the recorder's clock to this RFC3339 time (snapshot stamps, request end times; for tests and replays)")
	return cmd
}

// newIngestPerpdexCmd builds `mdq ingest perpdex`: the venue's node fill files and
// info-API answers into the lake (docs/INGEST.md, section perpdex).
func newIngestPerpdexCmd(cfg *Config) *cobra.Command {
	var kind, user, at, clock string
	var skipBad bool
	cmd := &cobra.Command{
		Use:   "perpdex FILE...",
		Short: "Load the perpetuals venue's node fill files and info-API answers (idempotent)",
		Long: "Kinds: " + strings.Join(perpdex.Kinds, ", ") + " (guessed from the content when --kind is omitted).\n" +
			"FILE may be - for stdin; .lz4, .gz and .zst content is decompressed. API answers are for the user given\n" +
			"by --user or by a 0x address in the file name; snapshots without a time field are stamped with --time or\n" +
			"an epoch-milliseconds number in the file name.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			now, err := clockFunc(clock)
			if err != nil {
				return err
			}
			opts := perpdex.Options{Kind: kind, User: user, SkipBad: skipBad, Stdin: cfg.Stdin}
			if at != "" {
				t, err := parseInstant(at)
				if err != nil {
					return fmt.Errorf("--time %q: %w", at, err)
				}
				opts.At = t
			}
			stage, err := ingest.NewStage(cmd.Context(), cfg.Data)
			if err != nil {
				return err
			}
			defer stage.Close()
			ld, err := perpdex.NewLoader(stage, opts)
			if err != nil {
				return err
			}
			errw, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
			prog := newProgress(errw, "ingest perpdex")
			prog.Start(len(args))
			rejected := 0
			for _, f := range args {
				if err := ld.File(cmd.Context(), f); err != nil {
					var le *ingest.LineError
					var pe *fs.PathError
					switch {
					case errors.As(err, &le):
						fmt.Fprintf(errw, "%s (the file's rows are not written)\n", le)
					case errors.As(err, &pe):
						fmt.Fprintf(errw, "%s (skipped)\n", err) // unreadable: the rest of the batch goes on
					default:
						return err // the stage itself failed: nothing is written
					}
					rejected++
				}
				prog.Step(f)
			}
			prog.Done()
			for _, e := range ld.Errors {
				fmt.Fprintf(errw, "%s (skipped)\n", e)
			}
			sum, err := ld.Finish(cmd.Context(), now())
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "perpdex: %s; tape rows derived from fills %d\n", sum.String(), ld.Derived())
			if len(sum.Partitions) > 0 {
				if err := afterIngest(cmd.Context(), cfg.Data, now, out); err != nil {
					return err
				}
			}
			if rejected > 0 {
				return fmt.Errorf("%d of %d files rejected (see above); the others were ingested", rejected, len(args))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "input kind: "+strings.Join(perpdex.Kinds, ", ")+" (default: guessed from the content)")
	cmd.Flags().StringVar(&user, "user", "", "the user API answers were fetched for (default: the 0x address in the file name)")
	cmd.Flags().StringVar(&at, "time", "", "when snapshots without a time field were fetched: RFC3339 or epoch milliseconds (default: from the file name)")
	cmd.Flags().BoolVar(&skipBad, "skip-bad", false, "keep a file's good records when some are malformed (each bad one is still reported)")
	cmd.Flags().StringVar(&clock, "clock", "", "publish derived tables for this RFC3339 time instead of now")
	return cmd
}

// parseInstant reads RFC3339 or epoch milliseconds.
func parseInstant(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("want RFC3339 or epoch milliseconds")
	}
	return t.UTC(), nil
}
