package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"mdq/archive"
)

func init() { extraCommands = append(extraCommands, newMirrorCmd) }

func newMirrorCmd(cfg *Config) *cobra.Command {
	var from, key string
	var include []string
	var parallel, retries int
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Mirror a remote archive into --data: download what is missing or changed, resume cut transfers, verify SHA-256",
		Long: "Reads BASE_URL/archive/manifest.json, downloads every listed file (or those matching --include, " +
			"path.Match globs on paths such as venue=predmkt/date=2026-11-*/trades.parquet; a glob without a slash also " +
			"matches file names) that is missing locally or differs, resuming partial files with a Range request, " +
			"verifies size and SHA-256 and renames each file into place atomically. Run it again to catch up.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return fmt.Errorf("--from is required")
			}
			if key == "" {
				key = os.Getenv("MDQ_KEY") // a key on the command line ends up in shell history
			}
			from = archive.NormalizeBase(from)
			p := newByteProgress(cmd.ErrOrStderr())
			res, err := archive.Mirror(cmd.Context(), archive.MirrorOptions{
				From: from, Key: key, DataDir: cfg.Data, Include: include, Parallel: parallel, Retries: retries,
				OnTotal: p.start, OnBytes: p.add, OnFile: p.file,
			})
			p.done()
			errw := cmd.ErrOrStderr()
			for _, g := range res.Unmatched {
				fmt.Fprintf(errw, "mirror: warning: --include %q selects no file of the remote manifest\n", g)
			}
			if errors.Is(err, archive.ErrUnauthorized) {
				// One line, not one per file: every file would be refused alike.
				return fmt.Errorf("%w: pass a valid key with --key or MDQ_KEY", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mirror %s: %d files selected, %d already current, %d downloaded (%d resumed), %.1f MB received\n",
				from, res.Files, res.Skipped, res.Downloaded, res.Resumed, float64(res.Bytes)/1e6)
			if cmd.Context().Err() != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "mirror interrupted: %d downloaded, %d remain; run the same command again to resume\n",
					res.Downloaded, len(res.Remaining))
				for i, r := range res.Remaining {
					if i == 20 {
						fmt.Fprintf(cmd.OutOrStdout(), "  ... and %d more\n", len(res.Remaining)-20)
						break
					}
					fmt.Fprintf(cmd.OutOrStdout(), "  remaining: %s\n", r)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "base URL of the remote mdq, e.g. https://host:8080, or host:port (http)")
	cmd.Flags().StringVar(&key, "key", "", "API key for the remote archive (X-API-Key); default $MDQ_KEY")
	cmd.Flags().StringSliceVar(&include, "include", nil, "only paths matching this glob (repeatable)")
	cmd.Flags().IntVar(&parallel, "parallel", 4, "concurrent downloads")
	cmd.Flags().IntVar(&retries, "retries", 5, "resumed attempts per file after a cut transfer")
	return cmd
}

// byteProgress shows a byte bar on a terminal and plain lines otherwise.
type byteProgress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int64
	got   int64
	last  time.Time
}

func newByteProgress(w io.Writer) *byteProgress { return &byteProgress{w: w} }

func (p *byteProgress) start(files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = bytes
	if isTerminal(p.w) && bytes > 0 {
		p.bar = progressbar.DefaultBytes(bytes, fmt.Sprintf("mirror %d files", files))
		return
	}
	fmt.Fprintf(p.w, "mirror: %d files to fetch, %.1f MB\n", files, float64(bytes)/1e6)
}

func (p *byteProgress) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got += n
	if p.bar != nil {
		p.bar.Add64(n) //nolint:errcheck
		return
	}
	if time.Since(p.last) >= 2*time.Second {
		p.last = time.Now()
		fmt.Fprintf(p.w, "mirror: %.1f/%.1f MB\n", float64(p.got)/1e6, float64(p.total)/1e6)
	}
}

func (p *byteProgress) file(path, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil && status != "skipped" {
		fmt.Fprintf(p.w, "mirror: %s %s\n", status, path)
	}
}

func (p *byteProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish() //nolint:errcheck
	}
}
