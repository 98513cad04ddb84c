// Package cli holds the mdq commands. Do runs one command line with swappable I/O so
// tests drive the CLI in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"mdq/query"
)

// Config holds the flags shared by every command.
type Config struct {
	Data    string
	Version string
	Stdin   io.Reader
	// MemoryFlag is --memory-limit as given; Memory its value in bytes (0: the store's
	// default, a quarter of physical memory).
	MemoryFlag string
	Memory     int64
}

// Validate checks the shared flags.
func (c *Config) Validate() error {
	if c.Data == "" {
		return errors.New("--data must not be empty")
	}
	m, err := parseMemory(c.MemoryFlag)
	if err != nil {
		return err
	}
	c.Memory = m
	// The Go side of the budget holds from the first line of every command, not only
	// once a command opens a store: an ingest stages with the collector's target raised
	// (ingest/gc.go), and this soft limit is what keeps its heap within the budget.
	total := m
	if total <= 0 {
		total = query.DefaultMemoryLimit()
	}
	debug.SetMemoryLimit(total - int64(float64(total)*query.MemoryDuckDBShare))
	return nil
}

// Do runs mdq with args and returns the process exit code.
func Do(args []string, stdin io.Reader, stdout, stderr io.Writer, version string) int {
	root := NewRoot(version, stdin)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "mdq:", err)
		return 1
	}
	return 0
}

// NewRoot builds the command tree.
func NewRoot(version string, stdin io.Reader) *cobra.Command {
	cfg := &Config{Version: version, Stdin: stdin}
	root := &cobra.Command{
		Use:           "mdq",
		Short:         "Market-data query service over a local Parquet lake",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// Before any command's DuckDB work (the demo's and the ingests' writers
			// run before any store is opened, if one is).
			query.TuneAllocator(nil)
			return cfg.Validate()
		},
	}
	def := os.Getenv("MDQ_DATA")
	if def == "" {
		def = "./data"
	}
	root.PersistentFlags().StringVar(&cfg.Data, "data", def, "lake directory (env MDQ_DATA)")
	root.PersistentFlags().StringVar(&cfg.MemoryFlag, "memory-limit", os.Getenv("MDQ_MEMORY_LIMIT"),
		"memory budget of the process, e.g. 6GB, 512MB or 25% of physical memory (env MDQ_MEMORY_LIMIT; default 25%): DuckDB gets 60% and spills to <data>/.tmp beyond it, the Go heap the rest")
	root.AddCommand(
		newServeCmd(cfg),
		newQueryCmd(cfg),
		newSQLCmd(cfg),
		newDemoCmd(cfg),
	)
	for _, extra := range extraCommands {
		root.AddCommand(extra(cfg))
	}
	return root
}

// extraCommands lets each command file register itself (keys, tokens, mirror, ...)
// without editing the root.
var extraCommands []func(*Config) *cobra.Command
