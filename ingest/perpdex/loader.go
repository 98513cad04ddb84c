// Package perpdex loads the perpetuals venue's own formats into the lake: the node's
// fill files (node_fills_by_block JSON lines, plain or LZ4), and the info API's
// answers (userFills, clearinghouseState, spotClearinghouseState, delegations,
// userFunding, userNonFundingLedgerUpdates, meta / metaAndAssetCtxs, l2Book,
// recentTrades, candleSnapshot, and the websocket messages that carry the same
// payloads). The public
// tape (perpdex_trades) is derived from the merged fills, one row per trade id, so it
// never disagrees with them. The recorder (record.go) polls a running info endpoint.
package perpdex

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"mdq/ingest"
	"mdq/internal/duckconn"
	"mdq/lake"
)

// Kinds are the input kinds `mdq ingest perpdex --kind` accepts.
var Kinds = []string{"node-fills", "fills", "clearinghouse", "spot-clearinghouse", "delegations", "funding", "ledger", "meta", "l2book", "trades", "candles"}

// Keys are the dedupe keys of each table this loader writes: a re-ingest, an
// overlapping file or a repeated poll replaces rows instead of adding them.
var Keys = map[*lake.Table][]string{
	lake.PerpdexFills:        {"tid", "wallet"},
	lake.PerpdexTrades:       {"tid"},
	lake.PerpdexBookEvents:   {"event_type", "token_id", "ts", "seq"},
	lake.PerpdexFunding:      {"time", "wallet", "coin"},
	lake.PerpdexLedger:       {"hash", "wallet", "kind"},
	lake.PerpdexPositions:    {"snapshot_ts", "wallet", "coin"},
	lake.PerpdexAccounts:     {"snapshot_ts", "wallet"},
	lake.PerpdexHypeBalances: {"wallet", "source"},
	lake.PerpdexMarks:        {"time", "coin"},
	lake.PerpdexCandles:      {"time", "coin", "interval"},
	lake.PerpdexFundingRates: {"time", "coin", "source"},
	lake.PerpdexVenueStats:   {"ts"},
}

// mergeOrder: fills first (the tape is derived from the merged fills).
var mergeOrder = []*lake.Table{lake.PerpdexFills, lake.PerpdexFunding, lake.PerpdexLedger, lake.PerpdexPositions,
	lake.PerpdexAccounts, lake.PerpdexMarks, lake.PerpdexCandles,
	lake.PerpdexFundingRates, lake.PerpdexBookEvents}

//go:embed trades_from_fills.sql
var tradesFromFillsSQL string

//go:embed venue_stats.sql
var venueStatsSQL string

// noTape stands for a date without a stored tape in trades_from_fills.sql.
const noTape = "(SELECT NULL::BIGINT AS tid, NULL::BIGINT AS local_ts, NULL::BIGINT AS seq WHERE false)"

// noPositions stands for a date without a positions file in venue_stats.sql.
const noPositions = "(SELECT NULL::TIMESTAMP AS snapshot_ts, NULL::VARCHAR AS wallet, NULL::DOUBLE AS szi, " +
	"NULL::DOUBLE AS unrealized_pnl, NULL::DOUBLE AS position_value WHERE false)"

// Options are the command line's choices for a batch of files.
type Options struct {
	Kind    string    // "" to guess each file's kind from its content
	User    string    // the user API answers were fetched for ("" : from the file name)
	At      time.Time // when snapshots without a time field were fetched (zero: from the file name)
	SkipBad bool      // store a file's good records even when some are malformed
	Stdin   io.Reader // for "-"
}

// Loader stages a batch of files and merges them into the lake.
type Loader struct {
	stage   *ingest.Stage
	row     [21]ingest.Val // the fill being staged, reused (no allocation per value)
	day     int64          // the UTC day of date (stageFills)
	date    string
	opts    Options
	sum     ingest.Summary
	dates   map[string]bool // dates whose tape must be derived again
	snaps   map[string]bool // dates whose venue statistics must be computed again
	hype    map[[2]string][]any
	Errors  []error // malformed records, FILE:LINE: reason
	Tables  map[string]ingest.MergeStats
	derived int64
	// stageTape: derive the tape through the stage and its merge on every date (the
	// path before WriteNew; the tests compare the two).
	stageTape bool
}

// NewLoader starts a batch on stage.
func NewLoader(stage *ingest.Stage, opts Options) (*Loader, error) {
	if opts.Kind != "" && !validKind(opts.Kind) {
		return nil, fmt.Errorf("--kind %q: use one of %v", opts.Kind, Kinds)
	}
	if opts.User != "" {
		if !addrRE.MatchString(opts.User) || len(opts.User) != 42 {
			return nil, fmt.Errorf("--user %q: want 0x and 40 hex digits", opts.User)
		}
		opts.User = lower(opts.User)
	}
	// The keys are declared up front so that a merge deduplicates staged rows only
	// when some share a key (ingest.Stage.Key).
	for t, key := range Keys {
		if err := stage.Key(t, key...); err != nil {
			return nil, err
		}
	}
	return &Loader{stage: stage, opts: opts, dates: map[string]bool{}, snaps: map[string]bool{}, hype: map[[2]string][]any{},
		Tables: map[string]ingest.MergeStats{}}, nil
}

func validKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

var (
	addrRE = regexp.MustCompile(`0x[0-9a-fA-F]{40}`)
	msRE   = regexp.MustCompile(`(?:^|[^0-9])(1[0-9]{12})(?:[^0-9]|$)`)
)

// fileState is one file's contribution, undone when the file is rejected.
type fileState struct {
	sum   ingest.Summary
	dates map[string]bool
	snaps map[string]bool
	hype  map[[2]string][]any
}

// File stages one input file. A malformed record rejects the file (its staged rows
// are dropped) and is returned as *ingest.LineError; with SkipBad the file's good
// records are kept and every bad one is listed in l.Errors. Other errors (an
// unreadable file) are returned as they are.
func (l *Loader) File(ctx context.Context, name string) error {
	r, err := ingest.Open(name, l.opts.Stdin)
	if err != nil {
		return err
	}
	defer r.Close()
	base := filepath.Base(name)
	fc := &fileCtx{user: l.opts.User, at: l.opts.At}
	if fc.user == "" {
		if m := addrRE.FindString(base); m != "" {
			fc.user = lower(m)
		}
	}
	if fc.at.IsZero() {
		if m := msRE.FindStringSubmatch(base); m != nil {
			ms, _ := strconv.ParseInt(m[1], 10, 64)
			fc.at = time.UnixMilli(ms).UTC()
		}
	}
	return l.load(ctx, r, name, l.opts.Kind, fc)
}

// Answer stages one info-API answer held in memory (the recorder's), of a known kind,
// fetched for user ("" for market data) at at. A malformed answer stages nothing.
func (l *Loader) Answer(ctx context.Context, name, kind, user string, at time.Time, body []byte) error {
	return l.load(ctx, bytes.NewReader(body), name, kind, &fileCtx{user: lower(user), at: at.UTC()})
}

func (l *Loader) load(ctx context.Context, r io.Reader, name, kind string, fc *fileCtx) error {
	sp := l.stage.Savepoint()
	fs := &fileState{dates: map[string]bool{}, snaps: map[string]bool{}, hype: map[[2]string][]any{}}
	var firstErr error
	onRecord := func(line int, rec *record, perr error) error {
		if perr != nil {
			le := &ingest.LineError{File: name, Line: line, Reason: perr.Error()}
			fs.sum.Rejected++
			if l.opts.SkipBad {
				l.Errors = append(l.Errors, le)
				return nil
			}
			firstErr = le
			return le
		}
		fs.sum.Read += int64(len(rec.rows) + len(rec.fills) + len(rec.skipped))
		for _, s := range rec.skipped {
			fs.sum.Skip(s)
		}
		if err := l.stageFills(rec.fills, fs); err != nil {
			return err
		}
		return l.stageRows(rec.rows, fs)
	}
	err := readFile(r, name, kind, fc, onRecord)
	if err == nil && firstErr == nil {
		l.commit(fs)
		return nil
	}
	if firstErr == nil {
		firstErr = err
		if _, ok := err.(*ingest.LineError); ok { //nolint:errorlint // Lines returns the type itself
			fs.sum.Rejected++
		}
	}
	if rerr := l.stage.RollbackTo(ctx, sp); rerr != nil {
		return rerr
	}
	l.sum.Rejected += fs.sum.Rejected
	l.sum.Read += fs.sum.Read
	return firstErr
}

func (l *Loader) commit(fs *fileState) {
	l.sum.Read += fs.sum.Read
	l.sum.Rejected += fs.sum.Rejected
	for k, n := range fs.sum.Skipped {
		for range n {
			l.sum.Skip(k)
		}
	}
	for d := range fs.dates {
		l.dates[d] = true
	}
	for d := range fs.snaps {
		l.snaps[d] = true
	}
	for k, v := range fs.hype {
		if old, ok := l.hype[k]; !ok || !old[3].(time.Time).After(v[3].(time.Time)) {
			l.hype[k] = v
		}
	}
}

func (l *Loader) stageRows(rows []Row, fs *fileState) error {
	for _, r := range rows {
		switch r.Table {
		case lake.PerpdexHypeBalances:
			k := [2]string{r.Vals[0].(string), r.Vals[1].(string)}
			if old, ok := fs.hype[k]; !ok || !old[3].(time.Time).After(r.Vals[3].(time.Time)) {
				fs.hype[k] = r.Vals
			}
			continue
		case lake.PerpdexFills, lake.PerpdexTrades:
			fs.dates[r.Date] = true
		case lake.PerpdexAccounts, lake.PerpdexPositions:
			fs.snaps[r.Date] = true
		}
		var part []string
		if r.Date != "" {
			part = []string{r.Date}
		}
		if err := l.stage.Append(r.Table, part, r.Vals...); err != nil {
			return err
		}
	}
	return nil
}

// stageFills stages node-file fills as Vals.
func (l *Loader) stageFills(fills []Fill, fs *fileState) error {
	marked := ""
	for i := range fills {
		f := &fills[i]
		// The date of the last fill's day, kept: formatting a date per fill was a
		// measurable share of staging.
		if d := floorDiv(f.Time.UnixMilli(), 86_400_000); l.date == "" || d != l.day {
			l.day, l.date = d, f.Date()
		}
		if l.date != marked {
			fs.dates[l.date] = true // the file's dates, whose tape is derived again
			marked = l.date
		}
		f.vals(&l.row)
		if err := l.stage.AppendVals(lake.PerpdexFills, []string{l.date}, l.row[:]...); err != nil {
			return err
		}
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Finish merges the batch into the lake: every table on its key, then the public tape
// of every date whose fills or trades changed, derived again from the merged fills,
// then HYPE balances (the newest reading per wallet and source wins, stored or new).
// It makes dir a lake when it was not one and returns the closing summary.
func (l *Loader) Finish(ctx context.Context, now time.Time) (ingest.Summary, error) {
	merge := func(t *lake.Table) error {
		if l.stage.Staged(t) == 0 {
			return nil
		}
		ms, err := l.stage.Merge(ctx, t, Keys[t])
		if err != nil {
			return err
		}
		l.addStats(t, ms)
		return nil
	}
	for _, t := range mergeOrder {
		if err := merge(t); err != nil {
			return l.sum, err
		}
	}
	dates := make([]string, 0, len(l.dates))
	for d := range l.dates {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	for _, d := range dates {
		rel, err := lake.PerpdexFills.Path(d)
		if err != nil {
			return l.sum, err
		}
		file := filepath.Join(l.stage.Root(), filepath.FromSlash(rel))
		if _, err := os.Stat(file); err != nil {
			continue // trades only, no fills that day
		}
		tape, err := l.partFile(lake.PerpdexTrades, d)
		if err != nil {
			return l.sum, err
		}
		q, args := strings.Replace(tradesFromFillsSQL, "{{tape}}", noTape, 1), []any{file}
		if tape != "" {
			q, args = strings.Replace(tradesFromFillsSQL, "{{tape}}", "read_parquet(?)", 1), []any{file, tape}
		} else if !l.stageTape {
			// No stored tape and (WriteNew checks) no API trades staged for the date:
			// the derived rows, one per tid, are the partition, written without the
			// staging round trip.
			ms, done, err := l.stage.WriteNew(ctx, lake.PerpdexTrades, []string{d}, q, args...)
			if err != nil {
				return l.sum, fmt.Errorf("tape of %s from fills: %w", d, err)
			}
			if done {
				l.addStats(lake.PerpdexTrades, ms)
				l.derived += ms.Staged
				continue
			}
		}
		n, err := l.stage.AppendQuery(ctx, lake.PerpdexTrades, []string{d}, q, args...)
		if err != nil {
			return l.sum, fmt.Errorf("tape of %s from fills: %w", d, err)
		}
		l.derived += n
	}
	if err := merge(lake.PerpdexTrades); err != nil {
		return l.sum, err
	}
	if err := l.stageVenueStats(ctx); err != nil {
		return l.sum, err
	}
	if err := merge(lake.PerpdexVenueStats); err != nil {
		return l.sum, err
	}
	if err := l.stageHype(ctx); err != nil {
		return l.sum, err
	}
	if err := merge(lake.PerpdexHypeBalances); err != nil {
		return l.sum, err
	}
	if len(l.sum.Partitions) > 0 {
		if err := ingest.EnsureLake(l.stage.Root(), now); err != nil {
			return l.sum, err
		}
	}
	return l.sum, nil
}

func (l *Loader) addStats(t *lake.Table, ms ingest.MergeStats) {
	l.sum.Add(ms)
	prev := l.Tables[t.Name]
	prev.Staged += ms.Staged
	prev.Written += ms.Written
	prev.Deduplicated += ms.Deduplicated
	prev.Partitions = append(prev.Partitions, ms.Partitions...)
	l.Tables[t.Name] = prev
}

// stageVenueStats computes perpdex_venue_stats again for every date whose account or
// position snapshots changed (mdq computes the venue figures; no input carries them).
func (l *Loader) stageVenueStats(ctx context.Context) error {
	dates := make([]string, 0, len(l.snaps))
	for d := range l.snaps {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	for _, d := range dates {
		acc, err := l.partFile(lake.PerpdexAccounts, d)
		if err != nil || acc == "" {
			continue // positions without account snapshots: no equity to report
		}
		pos, err := l.partFile(lake.PerpdexPositions, d)
		if err != nil {
			return err
		}
		q, args := strings.Replace(venueStatsSQL, "{{positions}}", noPositions, 1), []any{acc}
		if pos != "" {
			q, args = strings.Replace(venueStatsSQL, "{{positions}}", "read_parquet(?)", 1), []any{acc, pos}
		}
		n, err := l.stage.AppendQuery(ctx, lake.PerpdexVenueStats, nil, q, args...)
		if err != nil {
			return fmt.Errorf("venue statistics of %s: %w", d, err)
		}
		l.derived += n
	}
	return nil
}

// partFile is the path of t's partition for date, "" when it does not exist.
func (l *Loader) partFile(t *lake.Table, date string) (string, error) {
	rel, err := t.Path(date)
	if err != nil {
		return "", err
	}
	file := filepath.Join(l.stage.Root(), filepath.FromSlash(rel))
	if _, err := os.Stat(file); err != nil {
		return "", nil
	}
	return file, nil
}

// Derived is how many rows Finish derived (tape rows from fills, venue statistics).
func (l *Loader) Derived() int64 { return l.derived }

// stageHype stages the balances read in this batch that are not older than the stored
// reading of the same wallet and source (an old file ingested late never replaces a
// newer balance).
func (l *Loader) stageHype(ctx context.Context) error {
	if len(l.hype) == 0 {
		return nil
	}
	rel, _ := lake.PerpdexHypeBalances.Path()
	file := filepath.Join(l.stage.Root(), filepath.FromSlash(rel))
	stored := map[[2]string]time.Time{}
	if _, err := os.Stat(file); err == nil {
		db, err := duckconn.Open("")
		if err != nil {
			return err
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, "SELECT wallet, source, as_of FROM read_parquet(?)", file)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k [2]string
			var at time.Time
			if err := rows.Scan(&k[0], &k[1], &at); err != nil {
				return err
			}
			stored[k] = at
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	keys := make([][2]string, 0, len(l.hype))
	for k := range l.hype {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		v := l.hype[k]
		if at, ok := stored[k]; ok && at.After(v[3].(time.Time)) {
			l.sum.Skip("HYPE balance older than the stored one")
			continue
		}
		if err := l.stage.Append(lake.PerpdexHypeBalances, nil, v...); err != nil {
			return err
		}
	}
	return nil
}

// readFile reads one input of kind ("" to guess) and calls on for each record with
// its line. Node fill files are read line by line (they are large); API answers are
// read whole: one JSON document, or JSON lines of documents.
func readFile(r io.Reader, name, kind string, fc *fileCtx, on func(int, *record, error) error) error {
	br, ok := r.(interface{ Peek(int) ([]byte, error) })
	if !ok {
		b := newPeeker(r)
		br, r = b, b
	}
	head, perr := br.Peek(64 << 10)
	if perr != nil && !errors.Is(perr, io.EOF) && !errors.Is(perr, bufio.ErrBufferFull) && len(head) == 0 {
		return &ingest.LineError{File: name, Line: 1, Reason: "read: " + perr.Error()}
	}
	if kind == "" {
		kind = guessKind(head)
		if kind == "" {
			if len(bytes.TrimSpace(head)) == 0 {
				return nil // empty input
			}
			return &ingest.LineError{File: name, Line: 1, Reason: "cannot tell what this file holds; pass --kind"}
		}
	}
	if kind == "node-fills" {
		return readNodeFills(r, name, on)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return &ingest.LineError{File: name, Line: 1, Reason: "read: " + err.Error()}
	}
	if json.Valid(data) {
		return readDocument(data, 1, kind, fc, on)
	}
	// JSON lines of documents.
	return ingest.Lines(bytes.NewReader(data), name, func(line int, b []byte) error {
		if !json.Valid(b) {
			return on(line, nil, errors.New("malformed JSON"))
		}
		return readDocument(b, line, kind, fc, on)
	})
}

// parsedLine is one node line, parsed ahead of staging.
type parsedLine struct {
	line int
	rec  *record
	err  error
}

// readNodeFills reads a node fill file: one goroutine reads and parses lines in
// batches while the caller stages the previous batch (parsing and staging cost about
// the same, and the machine has two cores). Records reach on in line order; when on
// returns an error the reader is stopped and that error returned.
func readNodeFills(r io.Reader, name string, on func(int, *record, error) error) error {
	const batch = 512
	ch := make(chan []parsedLine, 4)
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(ch)
		buf := make([]parsedLine, 0, batch)
		send := func() bool {
			select {
			case ch <- buf:
				buf = make([]parsedLine, 0, batch)
				return true
			case <-done:
				return false
			}
		}
		errStop := errors.New("stopped")
		err := ingest.Lines(r, name, func(line int, b []byte) error {
			fills, spot, err := ParseNodeLine(b)
			rec := &record{}
			if err == nil {
				rec.fills = fills
				for range spot {
					rec.skip("spot fill")
				}
			}
			buf = append(buf, parsedLine{line, rec, err})
			if len(buf) == batch && !send() {
				return errStop
			}
			return nil
		})
		// Read by the caller after the channel closes (the close orders it); when the
		// caller stopped the reader it returns its own error and ignores this one.
		readErr = err
		if len(buf) > 0 {
			send()
		}
	}()
	defer func() {
		close(done)
		for range ch { //nolint:revive // drain so the reader ends
		}
	}()
	for b := range ch {
		for _, p := range b {
			if err := on(p.line, p.rec, p.err); err != nil {
				return err
			}
		}
	}
	return readErr
}

// readDocument splits one JSON document into records: answers that are arrays give
// one record per element (numbered with the element's own line); the others are one
// record. Websocket messages ({channel, data}) are unwrapped.
func readDocument(doc []byte, line0 int, kind string, fc *fileCtx, on func(int, *record, error) error) error {
	doc = bytes.TrimSpace(doc)
	ctx := *fc
	if bytes.HasPrefix(doc, []byte("{")) {
		var ws struct {
			Channel *string         `json:"channel"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(doc, &ws) == nil && ws.Channel != nil {
			switch *ws.Channel {
			case "subscriptionResponse", "pong", "error":
				// A websocket dump holds the stream's control messages too.
				rec := &record{}
				rec.skip("websocket " + *ws.Channel + " message")
				return on(line0, rec, nil)
			}
		}
		if json.Unmarshal(doc, &ws) == nil && ws.Channel != nil && ws.Data != nil {
			doc = bytes.TrimSpace(ws.Data)
			var uf struct {
				User  string          `json:"user"`
				Fills json.RawMessage `json:"fills"`
			}
			if kind == "fills" && json.Unmarshal(doc, &uf) == nil && uf.Fills != nil {
				doc = uf.Fills
				if ctx.user == "" && uf.User != "" {
					ctx.user = lower(uf.User)
				}
			}
		}
	}
	parse := parsers[kind]
	if parse == nil {
		return fmt.Errorf("unknown kind %q", kind)
	}
	elements := kind == "fills" || kind == "funding" || kind == "ledger" || kind == "trades" || kind == "delegations" ||
		kind == "candles"
	if !elements || !bytes.HasPrefix(doc, []byte("[")) {
		rec := &record{}
		return on(line0, rec, parse(doc, &ctx, rec))
	}
	if kind == "delegations" {
		rec := &record{}
		return on(line0, rec, parse(doc, &ctx, rec))
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return on(line0, nil, err)
	}
	pos, line := 0, line0
	for dec.More() {
		start := int(dec.InputOffset())
		for start < len(doc) && (doc[start] == ',' || doc[start] == ' ' || doc[start] == '\n' || doc[start] == '\r' || doc[start] == '\t') {
			start++
		}
		line += bytes.Count(doc[pos:start], []byte("\n"))
		pos = start
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return on(line, nil, err)
		}
		rec := &record{}
		if err := on(line, rec, parse(el, &ctx, rec)); err != nil {
			return err
		}
	}
	return nil
}

var parsers = map[string]func([]byte, *fileCtx, *record) error{
	"fills":              parseAPIFill,
	"clearinghouse":      parseClearinghouse,
	"spot-clearinghouse": parseSpotClearinghouse,
	"delegations":        parseDelegations,
	"funding":            parseFunding,
	"ledger":             parseLedger,
	"meta":               parseMeta,
	"l2book":             parseL2Book,
	"trades":             parseTrade,
	"candles":            parseCandle,
}

// parseAPIFill reads one fill of a userFills answer (or websocket fills message): the
// user is the one the file was fetched for.
func parseAPIFill(b []byte, c *fileCtx, out *record) error {
	var r rawFill
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	user := c.user
	if user == "" && r.User.set {
		user = lower(r.User.v)
	}
	if user == "" {
		return errNoUser
	}
	f, err := r.fill(user)
	if errors.Is(err, errSpot) {
		out.skip("spot fill")
		return nil
	}
	if err != nil {
		return err
	}
	out.rows = append(out.rows, Row{lake.PerpdexFills, f.Date(), f.Row()})
	return nil
}

// guessKind tells the kind from the start of the content ("" when it cannot).
func guessKind(head []byte) string {
	head = bytes.TrimSpace(head)
	first := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 && json.Valid(head[:i]) {
		first = head[:i] // JSON lines: the first line is a document
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if !bytes.Contains(first, []byte(`"`+k+`"`)) {
				return false
			}
		}
		return true
	}
	switch {
	case len(first) == 0:
		return ""
	case has("events") && has("block_number"):
		return "node-fills"
	case has("assetPositions"):
		return "clearinghouse"
	case has("balances"):
		return "spot-clearinghouse"
	case has("universe"):
		return "meta"
	case has("levels"):
		return "l2book"
	case has("delta"):
		if bytes.Contains(first, []byte(`"type":"funding"`)) || bytes.Contains(first, []byte(`"type": "funding"`)) {
			return "funding"
		}
		return "ledger"
	case has("fundingRate", "premium"):
		return "funding"
	case has("oid", "tid"), has("fills"):
		return "fills"
	case has("tid"):
		return "trades"
	case has("validator", "amount"):
		return "delegations"
	case has("t", "T", "s", "i", "o", "c"):
		return "candles" // candleSnapshot: one-letter keys, t the bucket start and T its end
	}
	return ""
}

// Summary is the batch's summary so far.
func (l *Loader) Summary() ingest.Summary { return l.sum }

// peeker lets the kind be guessed from the head of a stream that is then read whole;
// a read error met while peeking (a truncated compressed file) is kept and returned
// once the peeked bytes are consumed.
type peeker struct {
	r   io.Reader
	buf []byte
	err error
}

func newPeeker(r io.Reader) *peeker { return &peeker{r: r} }

func (p *peeker) Peek(n int) ([]byte, error) {
	for len(p.buf) < n {
		b := make([]byte, n-len(p.buf))
		k, err := p.r.Read(b)
		p.buf = append(p.buf, b[:k]...)
		if err != nil {
			p.err = err
			return p.buf, err
		}
	}
	return p.buf[:n], nil
}

func (p *peeker) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.r.Read(b)
}
