package predmkt

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"time"

	"mdq/ingest"
	"mdq/internal/duckconn"
	"mdq/lake"
)

// The input kinds of `mdq ingest predmkt --kind`.
const (
	KindMarketChannel = "market-channel"
	KindGamma         = "gamma"
	KindFills         = "fills"
	KindOrderFilled   = "order-filled"
)

// Kinds lists the kinds, in the order a run processes them: metadata first (so the
// tape knows which tokens belong to crypto up/down families), then the tape, then the
// fills (matched to the tape's trade events).
var Kinds = []string{KindGamma, KindMarketChannel, KindFills, KindOrderFilled}

// Dedupe keys per table: re-ingesting a row with the same key replaces it (the newer
// ingest wins), so the same file twice changes nothing and overlapping files merge.
var (
	keyEvents      = []string{"token_id", "seq"}
	keyTrades      = []string{"trade_id"}
	keyMarkets     = []string{"condition_id"}
	keyTokens      = []string{"token_id"}
	keyResolutions = []string{"condition_id"}
	keyProfiles    = []string{"wallet"}
)

// Options tunes a run.
type Options struct {
	Kind    string    // one of Kinds; empty guesses each file's kind from its content
	SkipBad bool      // store the good lines of a file with bad ones (else the file is rejected whole)
	Stdin   io.Reader // for the file name "-"
	// FileDone is called after each file (for a progress display).
	FileDone func(file string)
}

// Result is what a run did: the summary, the rejected lines (FILE:LINE: reason) and
// the files whose rows were not written because of them.
type Result struct {
	Summary  ingest.Summary
	Bad      []error
	Rejected []string
}

// Loader stages the rows of one run.
type Loader struct {
	root  string
	stage *ingest.Stage
	row   [14]ingest.Val // the tape row being staged, reused (no allocation per value)
	db    *sql.DB        // reads the lake's current metadata and tape (matching fills)

	tape     *Tape
	markets  map[string]Market // this run's markets, full rows winning over partial ones
	lakeCond map[string]bool   // conditions the lake already holds
	tokens   map[string]Token  // token -> market and outcome (lake and this run)
	family   map[string][2]string
	profiles map[string][2]string
	fills    []fill
	res      *Result

	pendingTokens []Token      // token rows to stage
	pendingRes    []Resolution // resolution rows to stage
	runTrades     []Event      // this run's tape trades, for matching fills
	keepTrades    bool         // the run has fills to match

	day   int64 // the UTC day (unix days) of the last event staged, and its date
	dayOK bool
	date  string
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Ingest loads files (or "-" for stdin) into the lake at root and returns what it did.
// A file with a malformed line is not written (unless opt.SkipBad) while the others
// are; err is set only when the run itself failed (nothing then is written).
func Ingest(ctx context.Context, root string, files []string, opt Options) (*Result, error) {
	if opt.Kind != "" && !validKind(opt.Kind) {
		return nil, fmt.Errorf("unknown --kind %q: market-channel, gamma, fills or order-filled", opt.Kind)
	}
	l, err := NewLoader(ctx, root)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	// Spool stdin to a file, so it can be read twice like any file (validate, then stage).
	inputs := make([]input, 0, len(files))
	for _, f := range files {
		in := input{name: f, path: f}
		if f == "-" {
			p, err := spool(root, opt.Stdin)
			if err != nil {
				return nil, err
			}
			defer os.Remove(p)
			in.path = p
		}
		in.kind = opt.Kind
		if in.kind == "" {
			if in.kind, err = guessKind(in.path); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
		}
		inputs = append(inputs, in)
	}
	order := map[string]int{}
	for i, k := range Kinds {
		order[k] = i
	}
	sort.SliceStable(inputs, func(i, j int) bool { return order[inputs[i].kind] < order[inputs[j].kind] })
	for _, in := range inputs {
		l.keepTrades = l.keepTrades || in.kind == KindFills || in.kind == KindOrderFilled
	}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := l.File(in, opt.SkipBad); err != nil {
			return nil, err
		}
		if opt.FileDone != nil {
			opt.FileDone(in.name)
		}
	}
	if err := l.Commit(ctx); err != nil {
		return nil, err
	}
	return l.res, nil
}

type input struct{ name, path, kind string }

func validKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// mergeKeys are the tables a loader merges, in order, with their keys.
var mergeKeys = []struct {
	t   *lake.Table
	key []string
}{
	{lake.PredmktMarkets, keyMarkets}, {lake.PredmktTokens, keyTokens}, {lake.PredmktResolutions, keyResolutions},
	{lake.PredmktProfiles, keyProfiles}, {lake.PredmktBookEvents, keyEvents},
	{lake.PredmktFamilyBookEvents, keyEvents}, {lake.PredmktTrades, keyTrades},
}

// NewLoader opens a loader on the lake at root (which need not exist yet).
func NewLoader(ctx context.Context, root string) (*Loader, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	st, err := ingest.NewStage(ctx, root)
	if err != nil {
		return nil, err
	}
	// The keys are declared up front so that a merge deduplicates staged rows only
	// when some share a key (ingest.Stage.Key).
	for _, tk := range mergeKeys {
		if err := st.Key(tk.t, tk.key...); err != nil {
			st.Close()
			return nil, err
		}
	}
	db, err := duckconn.Open("")
	if err != nil {
		st.Close()
		return nil, err
	}
	l := &Loader{root: root, stage: st, db: db, tape: NewTape(), markets: map[string]Market{},
		lakeCond: map[string]bool{}, tokens: map[string]Token{}, family: map[string][2]string{},
		profiles: map[string][2]string{}, res: &Result{}}
	if err := l.loadLake(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close releases the loader (staged rows not committed are dropped).
func (l *Loader) Close() error {
	l.db.Close()
	return l.stage.Close()
}

// loadLake reads what the lake already knows about markets and tokens: their
// families (for the additive tape layout) and outcome indexes (for fills).
func (l *Loader) loadLake(ctx context.Context) error {
	mf := filepath.Join(l.root, filepath.FromSlash(lake.PredmktMarkets.Prefix), lake.PredmktMarkets.File)
	tf := filepath.Join(l.root, filepath.FromSlash(lake.PredmktTokens.Prefix), lake.PredmktTokens.File)
	if _, err := os.Stat(mf); err == nil {
		rows, err := l.db.QueryContext(ctx, "SELECT condition_id, family_asset, family_tenor FROM read_parquet(?)", mf)
		if err != nil {
			return err
		}
		fam := map[string][2]string{}
		for rows.Next() {
			var c, a, t string
			if err := rows.Scan(&c, &a, &t); err != nil {
				rows.Close()
				return err
			}
			l.lakeCond[c] = true
			if a != "" {
				fam[c] = [2]string{a, t}
			}
		}
		rows.Close()
		if _, err := os.Stat(tf); err == nil {
			rows, err := l.db.QueryContext(ctx, "SELECT token_id, condition_id, outcome_index, outcome FROM read_parquet(?)", tf)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var t Token
				if err := rows.Scan(&t.ID, &t.Cond, &t.Index, &t.Outcome); err != nil {
					return err
				}
				l.tokens[t.ID] = t
				if f, ok := fam[t.Cond]; ok {
					l.family[t.ID] = f
				}
			}
			return rows.Err()
		}
	}
	return nil
}

// File reads one input in one pass. A bad line (unless skipBad) rejects the file:
// its staged rows are rolled back and everything else it touched (tape state,
// metadata, fills, counts) restored, and the file is read again only to list every
// bad line.
func (l *Loader) File(in input, skipBad bool) error {
	snap := l.snapshot()
	bad, err := l.read(in, false, skipBad)
	if err != nil {
		return err
	}
	if len(bad) > 0 && !skipBad {
		if err := l.stage.Rollback(context.Background(), snap.mark); err != nil {
			return err
		}
		l.restore(snap)
		if bad, err = l.read(in, true, false); err != nil {
			return err
		}
		l.res.Rejected = append(l.res.Rejected, in.name)
	}
	l.res.Bad = append(l.res.Bad, bad...)
	l.res.Summary.Rejected += int64(len(bad))
	return nil
}

// loaderSnap is what a file may change outside the stage, to undo a rejected file.
type loaderSnap struct {
	mark                       int64
	tape                       *Tape
	markets                    map[string]Market
	tokens                     map[string]Token
	family                     map[string][2]string
	profiles                   map[string][2]string
	fills, tokRows, res, trade int
	read                       int64
	skipped                    map[string]int64
}

func (l *Loader) snapshot() loaderSnap {
	return loaderSnap{mark: l.stage.Mark(), tape: l.tape.clone(), markets: maps.Clone(l.markets), tokens: maps.Clone(l.tokens),
		family: maps.Clone(l.family), profiles: maps.Clone(l.profiles), fills: len(l.fills), tokRows: len(l.pendingTokens),
		res: len(l.pendingRes), trade: len(l.runTrades), read: l.res.Summary.Read, skipped: maps.Clone(l.tape.Skipped)}
}

func (l *Loader) restore(s loaderSnap) {
	l.tape, l.markets, l.tokens, l.family, l.profiles = s.tape, s.markets, s.tokens, s.family, s.profiles
	l.tape.Skipped = s.skipped
	l.fills, l.pendingTokens, l.pendingRes, l.runTrades = l.fills[:s.fills], l.pendingTokens[:s.tokRows], l.pendingRes[:s.res], l.runTrades[:s.trade]
	l.res.Summary.Read = s.read
}

// errStop ends the reading of a file early (ingest.Lines passes a *LineError through
// as it is, so it is one).
var errStop = &ingest.LineError{Reason: "stop"}

// read parses one input. With validate, rows are parsed on scratch state and nothing
// is staged; it returns the bad lines (every one of them). Otherwise rows are staged;
// a bad line is skipped when skipBad (already excluded by validation otherwise).
func (l *Loader) read(in input, validate, skipBad bool) ([]error, error) {
	r, err := ingest.Open(in.path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var bad []error
	onBad := func(e error) error {
		bad = append(bad, e)
		if (len(bad) >= 1000 && validate) || (!validate && !skipBad) {
			return errStop // the file is rejected: File lists its bad lines
		}
		return nil
	}
	switch in.kind {
	case KindGamma:
		meta := &Meta{}
		err = jsonValues(r, in.name, func(line int, raw json.RawMessage) error {
			mark := meta.mark()
			if err := meta.Gamma(raw); err != nil {
				meta.reset(mark)
				return onBad(&ingest.LineError{File: in.name, Line: line, Reason: err.Error()})
			}
			if !validate {
				l.res.Summary.Read++
			}
			return nil
		})
		if !validate {
			l.addMeta(meta)
		}
	case KindMarketChannel:
		tape := l.tape
		if validate {
			tape = NewTape()
		}
		emit := func(e *Event) {}
		if !validate {
			emit = l.stageEvent
		}
		before := tape.Read
		// Lines are decoded on another goroutine (pipe.go) and applied here in order.
		err = decodeLines(r, in.name, tape.names, func(d *decodedLine) error {
			err := d.err
			if err == nil {
				err = tape.applyFrame(d.msgs, d.local, emit)
			}
			if err != nil {
				return onBad(&ingest.LineError{File: in.name, Line: d.line, Reason: err.Error()})
			}
			if !validate {
				l.foldMeta()
			}
			return nil
		})
		if !validate {
			l.res.Summary.Read += tape.Read - before
		}
	case KindFills, KindOrderFilled:
		err = ingest.Lines(r, in.name, func(line int, b []byte) error {
			fs, err := l.parseFill(in.kind, b, !validate)
			if err != nil {
				return onBad(&ingest.LineError{File: in.name, Line: line, Reason: err.Error()})
			}
			if !validate {
				l.res.Summary.Read++
				l.fills = append(l.fills, fs...)
			}
			return nil
		})
	default:
		return nil, fmt.Errorf("unknown kind %q", in.kind)
	}
	var le *ingest.LineError
	if errors.As(err, &le) {
		if le != errStop {
			// A read error (a truncated compressed file) rejects the file like a bad line.
			bad = append(bad, le)
		}
		err = nil
	}
	return bad, err
}

// vals puts the row in lake column order into row, as Values does without an
// interface per value (the loader stages it with AppendVals).
func (e *Event) vals(row *[14]ingest.Val) {
	*row = [14]ingest.Val{ingest.Text(e.Type), ingest.Text(e.Token), ingest.Int(e.Ts), ingest.Int(e.LocalTs), ingest.Int(e.Seq),
		ingest.Text(e.Side), ingest.Float(e.Price), ingest.Float(e.Size), ingest.Float(e.BestBid), ingest.Float(e.BestAsk),
		ingest.Text(e.Bids), ingest.Text(e.Asks), ingest.Int(int64(e.Snapshot)), ingest.Text(e.Status)}
}

// stageEvent stages one tape row (and its copy in the family layout).
func (l *Loader) stageEvent(e *Event) {
	// The date of the last event's day, kept: formatting a date per event was a
	// measurable share of staging.
	if d := floorDiv(e.Ts, 86_400_000); !l.dayOK || d != l.day {
		l.day, l.dayOK, l.date = d, true, e.Date()
	}
	date := l.date
	if e.Type == "trade" && l.keepTrades {
		l.runTrades = append(l.runTrades, *e)
	}
	e.vals(&l.row)
	if err := l.stage.AppendVals(lake.PredmktBookEvents, []string{date}, l.row[:]...); err != nil {
		panic(err) // the appender fails only on a programming error (wrong column count/type)
	}
	if f, ok := l.family[e.Token]; ok {
		if err := l.stage.AppendVals(lake.PredmktFamilyBookEvents, []string{f[0], f[1], date}, l.row[:]...); err != nil {
			panic(err)
		}
	}
}

// foldMeta takes the markets the tape announced (new_market, market_resolved) into the
// run's metadata.
func (l *Loader) foldMeta() {
	m := &l.tape.Meta
	if len(m.Markets)+len(m.Tokens)+len(m.Resolutions) == 0 {
		return
	}
	meta := &Meta{Markets: m.Markets, Tokens: m.Tokens, Resolutions: m.Resolutions}
	l.addMeta(meta)
	m.Markets, m.Tokens, m.Resolutions = nil, nil, nil
}

func (l *Loader) addMeta(m *Meta) {
	skip := map[string]bool{}
	for _, mk := range m.Markets {
		if mk.Partial {
			if _, ok := l.markets[mk.Cond]; ok || l.lakeCond[mk.Cond] {
				skip[mk.Cond] = true // a new_market never replaces a fuller row
				continue
			}
		}
		l.markets[mk.Cond] = mk
	}
	for _, t := range m.Tokens {
		if skip[t.Cond] {
			continue
		}
		l.tokens[t.ID] = t
		l.pendingTokens = append(l.pendingTokens, t)
	}
	for _, t := range m.Tokens {
		if mk, ok := l.markets[t.Cond]; ok && mk.FamAsset != "" {
			l.family[t.ID] = [2]string{mk.FamAsset, mk.FamTenor}
		}
	}
	l.pendingRes = append(l.pendingRes, m.Resolutions...)
}

// Commit stages the metadata, matches fills to the tape, merges every table into the
// lake and marks the lake. Nothing is written before this.
func (l *Loader) Commit(ctx context.Context) error {
	nullTime := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	conds := make([]string, 0, len(l.markets))
	for c := range l.markets {
		conds = append(conds, c)
	}
	sort.Strings(conds)
	for _, c := range conds {
		m := l.markets[c]
		if err := l.stage.Append(lake.PredmktMarkets, nil, m.Cond, m.Question, m.Slug, m.Category, m.FamAsset, m.FamTenor,
			nullTime(m.Created), nullTime(m.End), m.Closed); err != nil {
			return err
		}
	}
	for _, t := range l.pendingTokens {
		if err := l.stage.Append(lake.PredmktTokens, nil, t.ID, t.Cond, t.Index, t.Outcome); err != nil {
			return err
		}
	}
	for _, r := range l.pendingRes {
		var win any = r.Winner
		if r.Invalid {
			win = nil
		}
		if err := l.stage.Append(lake.PredmktResolutions, nil, r.Cond, nullTime(r.Ts), win, r.Invalid); err != nil {
			return err
		}
	}
	if err := l.stageFills(ctx); err != nil {
		return err
	}
	for _, tk := range mergeKeys {
		ms, err := l.stage.Merge(ctx, tk.t, tk.key)
		if err != nil {
			return fmt.Errorf("%s: %w", tk.t.Name, err)
		}
		if tk.t != lake.PredmktFamilyBookEvents {
			l.res.Summary.Add(ms) // the family layout repeats rows already counted
		} else {
			l.res.Summary.Partitions = append(l.res.Summary.Partitions, ms.Partitions...)
		}
	}
	for k, n := range l.tape.Skipped {
		if l.res.Summary.Skipped == nil {
			l.res.Summary.Skipped = map[string]int64{}
		}
		l.res.Summary.Skipped[k] += n
	}
	if len(l.res.Summary.Partitions) == 0 {
		return nil
	}
	return ingest.EnsureLake(l.root, time.Now())
}

// captureLines reads a market-channel capture: JSON lines (one frame a line,
// optionally after a receive time), or a pretty-printed JSON document (one message
// or an array of them, as the venue's documentation shows them), told apart by a
// first line that is only "{" or "[".
func captureLines(r io.Reader, file string, fn func(line int, b []byte, doc bool) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(4096)
	first := bytes.TrimSpace(head)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = bytes.TrimSpace(first[:i])
	}
	if bytes.Equal(first, []byte("{")) || bytes.Equal(first, []byte("[")) {
		return jsonValues(br, file, func(line int, raw json.RawMessage) error { return fn(line, raw, true) })
	}
	return ingest.Lines(br, file, func(line int, b []byte) error { return fn(line, b, false) })
}

// jsonValues decodes a stream of JSON values (one document, or JSON lines) and calls
// fn with each and the line it starts on.
func jsonValues(r io.Reader, file string, fn func(line int, raw json.RawMessage) error) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return &ingest.LineError{File: file, Line: 1, Reason: "read: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
	for {
		start := dec.InputOffset()
		// skip whitespace to find where the value starts
		for start < int64(len(data)) && (data[start] == ' ' || data[start] == '\n' || data[start] == '\r' || data[start] == '\t') {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return nil
		} else if err != nil {
			return &ingest.LineError{File: file, Line: lineAt(min(dec.InputOffset(), int64(len(data)))), Reason: "not JSON: " + err.Error()}
		}
		if err := fn(lineAt(start), raw); err != nil {
			return err
		}
	}
}

// guessKind tells an input's kind from its first kilobytes.
func guessKind(path string) (string, error) {
	r, err := ingest.Open(path, nil)
	if err != nil {
		return "", err
	}
	defer r.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	switch {
	case bytes.Contains(head, []byte(`"event_type"`)):
		return KindMarketChannel, nil
	case bytes.Contains(head, []byte(`"makerAssetId"`)):
		return KindOrderFilled, nil
	case bytes.Contains(head, []byte(`"proxyWallet"`)):
		return KindFills, nil
	case bytes.Contains(head, []byte(`"conditionId"`)) || bytes.Contains(head, []byte(`"clobTokenIds"`)):
		return KindGamma, nil
	case n == 0:
		return KindMarketChannel, nil // empty: nothing to read whatever the kind
	}
	return "", errors.New("cannot tell the kind from the content; pass --kind market-channel, gamma, fills or order-filled")
}

// spool copies stdin to a temporary file under the lake's .tmp.
func spool(root string, r io.Reader) (string, error) {
	if r == nil {
		r = os.Stdin
	}
	dir := filepath.Join(root, ".tmp", "ingest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "stdin-*")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}
