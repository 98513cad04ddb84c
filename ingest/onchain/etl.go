package onchain

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"mdq/ingest"
)

// ETL file kinds, recognised by their header row (so an export's own file names,
// partition folders and compression do not matter).
const (
	KindTransfers    = "token_transfers"
	KindBlocks       = "blocks"
	KindTokens       = "tokens"
	KindTransactions = "transactions"
	KindTraces       = "traces"
)

// ETLFile is one Ethereum-ETL export file and what it holds.
type ETLFile struct {
	Path string
	Kind string
	// Name and Line0 place the file's lines in what the operator gave: a section of a
	// concatenated export read from stdin (SplitETL) is named "-" and its lines are
	// numbered from the start of the stream. "" and 0 for a file of its own.
	Name  string
	Line0 int
}

// name is the file as messages name it.
func (f ETLFile) name() string {
	if f.Name != "" {
		return f.Name
	}
	return f.Path
}

// kindOf names an export by its columns.
func kindOf(cols map[string]int) string {
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := cols[n]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("token_address", "from_address", "to_address", "value", "transaction_hash", "log_index", "block_number"):
		return KindTransfers
	case has("hash", "from_address", "to_address", "value", "block_number", "block_timestamp"):
		return KindTransactions
	case has("transaction_hash", "from_address", "to_address", "value", "trace_type", "block_number"):
		return KindTraces
	case has("number", "timestamp"):
		return KindBlocks
	case has("address", "decimals"):
		return KindTokens
	}
	return ""
}

// FindETL lists the export files of paths (files, or folders searched recursively for
// *.csv, *.csv.gz, *.csv.zst, *.csv.lz4), each classified by its header. A file given
// by name that is not an export Ethereum-ETL writes is an error; in a folder such
// files are passed over.
func FindETL(paths []string) ([]ETLFile, error) {
	var out []ETLFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			k, err := classify(p)
			if err != nil {
				return nil, err
			}
			if k == "" {
				return nil, fmt.Errorf("%s:1: not an Ethereum-ETL token_transfers, blocks, tokens or transactions export (header not recognised)", p)
			}
			out = append(out, ETLFile{Path: p, Kind: k})
			continue
		}
		var names []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			n := d.Name()
			if !d.IsDir() && (strings.HasSuffix(n, ".csv") || strings.HasSuffix(n, ".csv.gz") || strings.HasSuffix(n, ".csv.zst") || strings.HasSuffix(n, ".csv.lz4")) {
				names = append(names, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, n := range names {
			k, err := classify(n)
			if err != nil {
				return nil, err
			}
			if k != "" {
				out = append(out, ETLFile{Path: n, Kind: k})
			}
		}
	}
	return out, nil
}

// SplitETL reads one concatenated export from r (Ethereum-ETL CSV files one after
// another, each beginning with its header row, as `cat blocks.csv
// token_transfers.csv` gives; compressed as a whole or not) and writes each section to
// a file of its own under dir, to be loaded as any export: a line that is a header
// Ethereum-ETL writes begins a section (no data row of these exports reads as one),
// and the first line must be one. The sections are named "-" in messages, their lines
// numbered from the start of the stream. The caller removes the files.
func SplitETL(r io.Reader, dir string) ([]ETLFile, error) {
	in, err := ingest.Open("-", r)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []ETLFile
	var f *os.File
	var w *bufio.Writer
	closeSection := func() error {
		if f == nil {
			return nil
		}
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		f = nil
		return err
	}
	fail := func(err error) ([]ETLFile, error) {
		closeSection() //nolint:errcheck // the files go anyway
		RemoveETL(out)
		return nil, err
	}
	br := bufio.NewReaderSize(in, 1<<20)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fail(fmt.Errorf("-:%d: %w", n, rerr))
		}
		if len(line) == 0 {
			break
		}
		if k := headerKind(string(line)); k != "" {
			if err := closeSection(); err != nil {
				return fail(err)
			}
			if f, err = os.CreateTemp(dir, "etl-stdin-*.csv"); err != nil {
				return fail(err)
			}
			w = bufio.NewWriterSize(f, 1<<20)
			out = append(out, ETLFile{Path: f.Name(), Kind: k, Name: "-", Line0: n - 1})
		} else if f == nil {
			return fail(fmt.Errorf("-:%d: not an Ethereum-ETL token_transfers, blocks, tokens, transactions or traces export (header not recognised)", n))
		}
		if _, err := w.Write(line); err != nil {
			return fail(err)
		}
		if rerr != nil {
			break
		}
	}
	if err := closeSection(); err != nil {
		return fail(err)
	}
	return out, nil
}

// RemoveETL removes the section files SplitETL wrote.
func RemoveETL(files []ETLFile) {
	for _, f := range files {
		if f.Name == "-" {
			os.Remove(f.Path)
		}
	}
}

// headerKind is the kind of export whose header line is line, "" when it is none.
func headerKind(line string) string {
	cols := map[string]int{}
	for i, c := range strings.Split(strings.TrimRight(line, "\r\n"), ",") {
		cols[strings.TrimSpace(strings.Trim(c, `"`))] = i
	}
	return kindOf(cols)
}

func classify(path string) (string, error) {
	f, err := ingest.Open(path, nil)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s:1: %w", path, err)
	}
	return headerKind(line), nil
}

// Options controls how bad input is handled.
type Options struct {
	// SkipBad passes over a malformed row (reporting it to Warn and counting it as
	// rejected) instead of failing the run.
	SkipBad bool
	Warn    io.Writer
	// Progress, when set, is called after each file with the rows read so far.
	Progress func(file string, rows int64)
}

// csvFile reads one export: fn gets each data row with its line number and a column
// lookup. Errors are FILE:LINE: reason.
func csvFile(file ETLFile, opt Options, sum *ingest.Summary, fn func(line int, col func(string) string) error) error {
	path := file.name()
	f, err := ingest.Open(file.Path, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return &ingest.LineError{File: path, Line: file.Line0 + 1, Reason: err.Error()}
	}
	idx := map[string]int{}
	for i, c := range header {
		idx[strings.TrimSpace(c)] = i
	}
	r.FieldsPerRecord = len(header)
	var rec []string
	col := func(name string) string {
		if i, ok := idx[name]; ok {
			return rec[i]
		}
		return ""
	}
	for {
		rec, err = r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line := 0
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return &ingest.LineError{File: path, Line: 0, Reason: err.Error()}
			}
			line = file.Line0 + pe.Line
			if opt.SkipBad && !errors.Is(pe.Err, csv.ErrQuote) && !errors.Is(pe.Err, csv.ErrBareQuote) {
				sum.Rejected++
				if opt.Warn != nil {
					fmt.Fprintf(opt.Warn, "%s:%d: %v (skipped)\n", path, line, pe.Err)
				}
				continue
			}
			return &ingest.LineError{File: path, Line: line, Reason: pe.Err.Error()}
		}
		line, _ = r.FieldPos(0)
		line += file.Line0
		sum.Read++
		if err := fn(line, col); err != nil {
			var re *RunError
			if errors.As(err, &re) {
				return re.Err // not the row's fault (an RPC call failed): never skipped
			}
			if opt.SkipBad {
				sum.Rejected++
				if opt.Warn != nil {
					fmt.Fprintf(opt.Warn, "%s:%d: %v (skipped)\n", path, line, err)
				}
				continue
			}
			return &ingest.LineError{File: path, Line: line, Reason: err.Error()}
		}
	}
}

// LoadETL reads Ethereum-ETL exports into l: tokens, block timestamps and
// transactions first (their native-coin values, as the zero token address with
// log_index -1; they also carry block timestamps), then token transfers, which need
// both. Nothing reaches the lake until l.Commit.
func LoadETL(ctx context.Context, l *Loader, files []ETLFile, opt Options) error {
	order := []string{KindTokens, KindBlocks, KindTransactions, KindTraces, KindTransfers}
	// Value-moving traces are numbered per transaction in file order (see etlTrace).
	traceSeq := map[string]int32{}
	for _, kind := range order {
		for _, f := range files {
			if f.Kind != kind {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			switch kind {
			case KindTokens:
				err = csvFile(f, opt, &l.Sum, func(_ int, col func(string) string) error { return etlToken(l, col) })
			case KindBlocks:
				err = csvFile(f, opt, &l.Sum, func(_ int, col func(string) string) error { return etlBlock(l, col) })
			case KindTransactions:
				err = csvFile(f, opt, &l.Sum, func(_ int, col func(string) string) error { return etlTransaction(ctx, l, col) })
			case KindTraces:
				err = csvFile(f, opt, &l.Sum, func(_ int, col func(string) string) error { return etlTrace(ctx, l, col, traceSeq) })
			case KindTransfers:
				err = csvFile(f, opt, &l.Sum, func(_ int, col func(string) string) error { return etlTransfer(ctx, l, col) })
			}
			if err != nil {
				return err
			}
			if opt.Progress != nil {
				opt.Progress(f.name(), l.Sum.Read)
			}
		}
	}
	return nil
}

func etlToken(l *Loader, col func(string) string) error {
	addr, err := Address(col("address"))
	if err != nil {
		return err
	}
	t := Token{Address: addr, Symbol: col("symbol"), Name: col("name"), Decimals: -1}
	if d := col("decimals"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 255 {
			return fmt.Errorf("bad decimals %q (want 0 to 255)", d)
		}
		t.Decimals = n
	}
	l.AddToken(t)
	return nil
}

func etlBlock(l *Loader, col func(string) string) error {
	n, err := strconv.ParseUint(col("number"), 10, 64)
	if err != nil {
		return fmt.Errorf("bad block number %q", col("number"))
	}
	ts, err := parseTimestamp(col("timestamp"))
	if err != nil {
		return err
	}
	l.SetBlockTime(n, ts)
	return nil
}

// parseTimestamp reads a block timestamp: unix seconds (blocks.csv) or the UTC text
// some exports write ("2015-08-07 03:30:33" or RFC 3339).
func parseTimestamp(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, fmt.Errorf("bad timestamp %q (want unix seconds or RFC 3339)", s)
}

func etlTransfer(ctx context.Context, l *Loader, col func(string) string) error {
	tr, err := etlTransferRow(col)
	if err != nil {
		return err
	}
	// Exports from the public BigQuery dataset carry the block time on each row.
	if s := col("block_timestamp"); s != "" {
		ts, err := parseTimestamp(s)
		if err != nil {
			return fmt.Errorf("block_timestamp: %w", err)
		}
		l.SetBlockTime(tr.Block, ts)
	}
	return l.Transfer(ctx, tr)
}

func etlTransferRow(col func(string) string) (Transfer, error) {
	var tr Transfer
	var err error
	if tr.Token, err = Address(col("token_address")); err != nil {
		return tr, fmt.Errorf("token_address: %w", err)
	}
	if tr.From, err = Address(col("from_address")); err != nil {
		return tr, fmt.Errorf("from_address: %w", err)
	}
	if tr.To, err = Address(col("to_address")); err != nil {
		return tr, fmt.Errorf("to_address: %w", err)
	}
	if tr.Value, err = ParseValue(col("value")); err != nil {
		return tr, err
	}
	if tr.TxHash, err = TxHash(col("transaction_hash")); err != nil {
		return tr, fmt.Errorf("transaction_hash: %w", err)
	}
	li, err := strconv.ParseInt(col("log_index"), 10, 32)
	if err != nil || li < 0 {
		return tr, fmt.Errorf("bad log_index %q", col("log_index"))
	}
	tr.LogIndex = int32(li)
	if tr.Block, err = strconv.ParseUint(col("block_number"), 10, 64); err != nil {
		return tr, fmt.Errorf("bad block_number %q", col("block_number"))
	}
	return tr, nil
}

// etlTransaction records the transaction's block timestamp and stages its native value
// (a failed transaction, receipt_status 0, moved nothing; a zero value is no transfer).
// A contract creation pays its value to the created contract.
func etlTransaction(ctx context.Context, l *Loader, col func(string) string) error {
	n, err := strconv.ParseUint(col("block_number"), 10, 64)
	if err != nil {
		return fmt.Errorf("bad block_number %q", col("block_number"))
	}
	ts, err := parseTimestamp(col("block_timestamp"))
	if err != nil {
		return err
	}
	l.SetBlockTime(n, ts)
	v, err := ParseValue(col("value"))
	if err != nil {
		return err
	}
	if v.IsZero() || col("receipt_status") == "0" {
		return nil
	}
	tr := Transfer{Block: n, LogIndex: -1, Token: ZeroAddress, Value: v}
	if tr.TxHash, err = TxHash(col("hash")); err != nil {
		return err
	}
	if tr.From, err = Address(col("from_address")); err != nil {
		return fmt.Errorf("from_address: %w", err)
	}
	to := col("to_address")
	if to == "" {
		to = col("receipt_contract_address")
	}
	if tr.To, err = Address(to); err != nil {
		return fmt.Errorf("to_address: %w", err)
	}
	return l.Transfer(ctx, tr)
}

// etlTrace stages a trace's native value. Only successful call and create traces that
// move value count (a delegatecall or staticcall moves none; block rewards have no
// transaction and are skipped, counted). The k-th value-moving trace of a transaction
// in file order (Ethereum-ETL writes them in trace_address order, the top-level call
// first) gets log_index -1-k: the top-level call is -1, the same key as the
// transaction's own value from transactions.csv, so giving both files stores it once.
func etlTrace(ctx context.Context, l *Loader, col func(string) string, seq map[string]int32) error {
	v, err := ParseValue(col("value"))
	if err != nil {
		return err
	}
	typ, call := col("trace_type"), col("call_type")
	if typ == "reward" || col("transaction_hash") == "" {
		l.Sum.Skip("trace without a transaction (reward)")
		return nil
	}
	if v.IsZero() || col("status") == "0" || (typ != "call" && typ != "create") ||
		call == "delegatecall" || call == "staticcall" || call == "callcode" {
		return nil
	}
	tr := Transfer{Token: ZeroAddress, Value: v}
	if tr.TxHash, err = TxHash(col("transaction_hash")); err != nil {
		return err
	}
	if tr.Block, err = strconv.ParseUint(col("block_number"), 10, 64); err != nil {
		return fmt.Errorf("bad block_number %q", col("block_number"))
	}
	if tr.From, err = Address(col("from_address")); err != nil {
		return fmt.Errorf("from_address: %w", err)
	}
	if tr.To, err = Address(col("to_address")); err != nil {
		return fmt.Errorf("to_address: %w", err)
	}
	k := seq[tr.TxHash]
	seq[tr.TxHash] = k + 1
	tr.LogIndex = -1 - k
	return l.Transfer(ctx, tr)
}
