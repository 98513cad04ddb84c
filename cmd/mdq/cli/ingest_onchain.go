package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"mdq/ingest/onchain"
)

func init() {
	ingestCommands = append(ingestCommands, newIngestOnchainCmd)
}

type onchainIngestFlags struct {
	chain      string
	etl        []string
	rpc        string
	fromBlock  int64
	toBlock    int64
	prices     []string
	labels     []string
	sources    []string
	ens        []string
	balances   string
	skipBad    bool
	clock      string
	rangeStart uint64
	native     bool
	traces     bool
}

// newIngestOnchainCmd builds `mdq ingest onchain`: Ethereum-ETL exports, a JSON-RPC
// node's Transfer logs over a block range, price, label and ENS files, into the lake.
func newIngestOnchainCmd(cfg *Config) *cobra.Command {
	var f onchainIngestFlags
	cmd := &cobra.Command{
		Use:   "onchain",
		Short: "Load ERC-20 transfers (Ethereum-ETL exports or a JSON-RPC node), prices, labels and ENS names into the lake",
		Long: `Load on-chain data for one chain into the lake, idempotently: transfers are keyed by
(chain, tx_hash, log_index), and only the date partitions they touch are rewritten.

  --etl DIR|FILE      Ethereum-ETL token_transfers.csv with blocks.csv (timestamps),
                      tokens.csv (symbol, name, decimals) and transactions.csv (native
                      values); files are recognised by their header, folders searched.
                      "-" reads one concatenated export from stdin (the files one after
                      another, each with its header row; compressed or not).
  --rpc URL           a node's JSON-RPC endpoint: with --from-block/--to-block, the
                      Transfer logs of that range; with --etl, the metadata of tokens
                      the exports do not describe (eth_call decimals/symbol/name).
  --native            with --rpc and a block range, also the native-coin value of
                      every successful transaction (token 0x000...0, log_index -1):
                      each block is fetched whole, with its receipts
  --traces            with --native, read the native coin from the node's trace API
                      (trace_block, or Geth's debug_traceBlockByHash with callTracer):
                      internal value transfers too, log_index -1-k for a transaction's
                      k-th value-moving call, as Ethereum-ETL's traces.csv gives them
  --prices FILE       hourly USD prices (chain,token_address,hour,price_usd; CSV or JSON)
  --labels FILE       onchain_labels rows (CSV, the table's columns)
  --label-sources FILE, --ens FILE   the same for onchain_label_sources and onchain_ens
  --balances FILE     opening balances at the first ingested block (address,
                      token_address, balance_raw); balances are otherwise computed
                      from the ingested transfers alone

A malformed row is reported as FILE:LINE: reason and nothing is written, unless
--skip-bad (the row is then reported, counted and passed over).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngestOnchain(cmd.Context(), cfg, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.chain, "chain", "ethereum", "chain of the input: ethereum, bsc or base")
	fl.StringSliceVar(&f.etl, "etl", nil, "Ethereum-ETL export files or folders (repeatable)")
	fl.StringVar(&f.rpc, "rpc", "", "JSON-RPC endpoint of an EVM node")
	fl.Int64Var(&f.fromBlock, "from-block", -1, "first block to read from --rpc")
	fl.Int64Var(&f.toBlock, "to-block", -1, "last block to read from --rpc (inclusive)")
	fl.StringSliceVar(&f.prices, "prices", nil, "hourly price files (repeatable)")
	fl.StringSliceVar(&f.labels, "labels", nil, "label files (repeatable)")
	fl.StringSliceVar(&f.sources, "label-sources", nil, "label source files (repeatable)")
	fl.StringSliceVar(&f.ens, "ens", nil, "ENS files (repeatable)")
	fl.StringVar(&f.balances, "balances", "", "balances snapshot for the starting block (address,token_address,balance_raw), added to the transfers' balances")
	fl.BoolVar(&f.skipBad, "skip-bad", false, "pass over malformed rows (reported and counted) instead of failing")
	fl.StringVar(&f.clock, "clock", "", "publish derived tables for this RFC3339 time instead of now")
	fl.BoolVar(&f.native, "native", false, "with --rpc and a block range: read native-coin transfers too (a full block and its receipts per block)")
	fl.BoolVar(&f.traces, "traces", false, "with --native: read them from the node's trace API, internal value transfers included (a trace call per block with transactions, no receipts)")
	return cmd
}

func runIngestOnchain(ctx context.Context, cfg *Config, f onchainIngestFlags, out, errw io.Writer) error {
	if !onchain.ValidChain(f.chain) {
		return fmt.Errorf("--chain %q not supported (use ethereum, bsc, or base)", f.chain)
	}
	rangeGiven := f.fromBlock >= 0 || f.toBlock >= 0
	if rangeGiven && (f.rpc == "" || f.fromBlock < 0 || f.toBlock < f.fromBlock) {
		return errors.New("--from-block and --to-block go together, with --rpc, and --to-block must not be below --from-block")
	}
	if f.traces && !f.native {
		return errors.New("--traces reads native-coin transfers: give --native too")
	}
	if f.native && !rangeGiven {
		return errors.New("--native reads blocks over --rpc: give --from-block and --to-block")
	}
	if f.rpc != "" && !rangeGiven && len(f.etl) == 0 {
		return errors.New("--rpc needs --from-block and --to-block (or --etl, for token metadata)")
	}
	if len(f.etl) == 0 && !rangeGiven && len(f.prices)+len(f.labels)+len(f.sources)+len(f.ens) == 0 && f.balances == "" {
		return errors.New("nothing to ingest: give --etl, --rpc with a block range, --prices, --labels, --label-sources, --ens or --balances")
	}
	clock, err := clockFunc(f.clock)
	if err != nil {
		return err
	}
	var files []onchain.ETLFile
	if len(f.etl) > 0 {
		var paths []string
		stdin := false
		for _, p := range f.etl {
			if p != "-" {
				paths = append(paths, p)
			} else if stdin {
				return errors.New("--etl -: stdin can be given once")
			} else {
				stdin = true
			}
		}
		if len(paths) > 0 {
			if files, err = onchain.FindETL(paths); err != nil {
				return err
			}
		}
		if stdin {
			// Each section of the stream becomes a file of its own under the lake's
			// temporary folder, read like any export (tokens and blocks before transfers,
			// whatever the order of the stream), and removed after the run.
			sections, err := onchain.SplitETL(cfg.Stdin, filepath.Join(cfg.Data, ".tmp", "ingest"))
			if err != nil {
				return err
			}
			defer onchain.RemoveETL(sections)
			files = append(files, sections...)
		}
		if len(files) == 0 {
			return fmt.Errorf("--etl %v: no Ethereum-ETL export found", f.etl)
		}
	}
	start := time.Now()
	l, err := onchain.NewLoader(ctx, cfg.Data, f.chain)
	if err != nil {
		return err
	}
	defer l.Close()
	opt := onchain.Options{SkipBad: f.skipBad, Warn: errw}
	var client *onchain.Client
	if f.rpc != "" {
		client = onchain.NewClient(f.rpc)
		l.Meta, l.Native, l.Traces = client.TokenMeta, f.native, f.traces
	}
	for _, p := range f.prices {
		if err := onchain.LoadPrices(l, p, opt); err != nil {
			return err
		}
	}
	for _, p := range f.sources {
		if err := onchain.LoadLabelSources(l, p, opt); err != nil {
			return err
		}
	}
	for _, p := range f.labels {
		if err := onchain.LoadLabels(l, p, opt); err != nil {
			return err
		}
	}
	for _, p := range f.ens {
		if err := onchain.LoadENS(l, p, opt); err != nil {
			return err
		}
	}
	opening := int64(0)
	if f.balances != "" {
		if opening, err = onchain.LoadOpening(cfg.Data, f.chain, f.balances, opt); err != nil {
			return err
		}
		fmt.Fprintf(out, "onchain %s opening balances: %d rows\n", f.chain, opening)
	}
	if len(files) > 0 {
		prog := newProgress(errw, "onchain etl")
		prog.Start(len(files))
		opt.Progress = func(file string, rows int64) { prog.Step(file) }
		err := onchain.LoadETL(ctx, l, files, opt)
		prog.Done()
		if err != nil {
			return err
		}
	}
	if rangeGiven {
		rp := newRateProgress(errw, "onchain rpc", uint64(f.toBlock-f.fromBlock+1))
		err := onchain.LoadRPC(ctx, l, client, uint64(f.fromBlock), uint64(f.toBlock), func(done uint64) { rp.Set(done) })
		rp.Done()
		if err != nil {
			return err
		}
	}
	if err := l.Commit(ctx, clock()); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(out, "onchain %s: %s; %d transfers in %s (%.0f transfers/s)\n", f.chain, l.Sum.String(), l.Transfers(),
		took.Round(time.Millisecond), float64(l.Transfers())/max(took.Seconds(), 1e-9))
	if client != nil {
		fmt.Fprintf(out, "rpc: %d requests, %d calls\n", client.Requests(), client.Calls())
	}
	if len(l.Sum.Partitions) == 0 && opening == 0 {
		return nil
	}
	if l.Transfers() > 0 || opening > 0 {
		bs, err := onchain.PublishBalances(ctx, cfg.Data, f.chain)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "onchain %s balances: %d from the ingested transfers as of %s (%d negative, from before the first ingested block, left out)\n",
			f.chain, bs.Rows, bs.AsOf.Format(time.RFC3339), bs.Negative)
	}
	return afterIngest(ctx, cfg.Data, clock, out)
}

// rateProgress reports blocks done with blocks per second and an ETA: a bar on a
// terminal, a plain line at most every two seconds otherwise.
type rateProgress struct {
	w          io.Writer
	label      string
	total      uint64
	start      time.Time
	last       time.Time
	done       uint64
	terminal   bool
	lastLength int
}

func newRateProgress(w io.Writer, label string, total uint64) *rateProgress {
	return &rateProgress{w: w, label: label, total: total, start: time.Now(), terminal: isTerminal(w)}
}

func (p *rateProgress) Set(done uint64) {
	p.done = done
	if time.Since(p.last) < 2*time.Second && done < p.total {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Seconds()
	rate := float64(done) / max(el, 1e-9)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-done)/rate) * time.Second).Round(time.Second).String()
	}
	line := fmt.Sprintf("%s: %d/%d blocks, %.0f blocks/s, ETA %s", p.label, done, p.total, rate, eta)
	if p.terminal {
		fmt.Fprintf(p.w, "\r%-*s", p.lastLength, line)
		p.lastLength = len(line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *rateProgress) Done() {
	if p.terminal && p.lastLength > 0 {
		fmt.Fprintln(p.w)
	}
}

func init() {
	recordCommands = append(recordCommands, newRecordOnchainCmd)
}

// newRecordOnchainCmd builds `mdq record onchain`: follow a node's head, writing only
// blocks Confirmations deep, rewinding after a reorganisation, resuming from the
// checkpoint in the lake.
func newRecordOnchainCmd(cfg *Config) *cobra.Command {
	var (
		chain, rpc, clock string
		conf              uint64
		every             time.Duration
		from              int64
		maxBlocks         uint64
		once              bool
		native, traces    bool
		publishEvery      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "onchain",
		Short: "Follow an EVM node's head into the lake (confirmed blocks only; reorganisations rewound)",
		Long: `Follow a JSON-RPC node: every --every, write the ERC-20 transfers of blocks at least
--confirmations deep, check the hash of the last block written against the node and,
when a reorganisation replaced it, remove the transfers above the newest block both
agree on and rewrite them (the log says so). With --native the native-coin value of
every successful transaction is written too (each block fetched whole, with its
receipts); with --traces as well, from the node's trace API, internal value transfers
included (trace_block, or Geth's debug_traceBlockByHash). The checkpoint lives in the lake
(.ingest/onchain-<chain>.json); a restart resumes from it. RPC errors and rate limits
are retried with backoff; the checkpoint never passes a range that failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !onchain.ValidChain(chain) {
				return fmt.Errorf("--chain %q not supported (use ethereum, bsc, or base)", chain)
			}
			if rpc == "" {
				return errors.New("--rpc is required")
			}
			if traces && !native {
				return errors.New("--traces reads native-coin transfers: give --native too")
			}
			if every <= 0 {
				return errors.New("--every must be positive")
			}
			now, err := clockFunc(clock)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			f := &onchain.Follower{Root: cfg.Data, Chain: chain, Client: onchain.NewClient(rpc), Confirmations: conf,
				Start: from, MaxBlocks: maxBlocks, Native: native, Traces: traces, Log: cmd.ErrOrStderr(), Now: now, PublishEvery: publishEvery,
				After: func(ctx context.Context) error { return afterIngest(ctx, cfg.Data, now, out) }}
			if once {
				for {
					res, err := f.Step(cmd.Context())
					if err != nil {
						return err
					}
					if res.CaughtUp {
						fmt.Fprintf(out, "onchain %s: caught up at head %d (%d confirmations); rpc: %d requests, %d calls\n",
							chain, res.Head, conf, f.Client.Requests(), f.Client.Calls())
						return nil
					}
				}
			}
			return f.Run(cmd.Context(), every)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&chain, "chain", "ethereum", "chain: ethereum, bsc or base")
	fl.StringVar(&rpc, "rpc", "", "JSON-RPC endpoint of an EVM node")
	fl.Uint64Var(&conf, "confirmations", 12, "write only blocks at least this deep")
	fl.DurationVar(&every, "every", 12*time.Second, "poll interval once caught up")
	fl.Int64Var(&from, "from-block", -1, "first block when there is no checkpoint (default: the current confirmed head)")
	fl.Uint64Var(&maxBlocks, "max-blocks", 2000, "blocks per step at most")
	fl.BoolVar(&once, "once", false, "catch up to the confirmed head, then exit")
	fl.BoolVar(&native, "native", false, "read native-coin transfers too (a full block and its receipts per block)")
	fl.BoolVar(&traces, "traces", false, "with --native: read them from the node's trace API, internal value transfers included")
	fl.DurationVar(&publishEvery, "publish-every", 10*time.Minute, "while catching up, publish balances and derived tables at most this often (always at the head)")
	fl.StringVar(&clock, "clock", "", "publish derived tables for this RFC3339 time instead of now")
	return cmd
}
