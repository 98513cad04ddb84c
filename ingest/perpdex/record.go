package perpdex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"mdq/ingest"
	"mdq/lake"
)

// Recorder keeps a lake current from a running info endpoint. Each cycle it fetches,
// for every listed user, the fills since its checkpoint (userFillsByTime, paged),
// funding payments and ledger updates since theirs; once per hour it also takes the
// users' clearinghouse, spot clearinghouse and delegations snapshots and the venue's
// marks (metaAndAssetCtxs). What a cycle fetched is merged like `mdq ingest perpdex`
// (deduplicated on the same keys, partitions replaced atomically), and only then are
// the checkpoints written (atomically, in the lake): a restart re-fetches from the
// last checkpoint, the overlap is deduplicated, so there is no gap and no duplicate.
type Recorder struct {
	Root  string   // lake directory
	Info  string   // the info endpoint URL (POST JSON)
	Users []string // addresses to follow

	RPM           int           // requests per minute at most (default 60: 1200 weight / 20 per request)
	PageLimit     int           // fills per userFillsByTime answer at which the span is split and asked again (default 2000)
	FlowPageLimit int           // the same for userFunding and ledger answers (default 500)
	MaxAttempts   int           // tries per request on 429 and 5xx (default 8)
	Backoff       time.Duration // first wait after 429 or 5xx, doubled each retry (default 1s; Retry-After wins)
	MaxBackoff    time.Duration // longest wait (default 60s)
	Client        *http.Client
	Now           func() time.Time
	Log           io.Writer

	// AfterFlush runs after each flush that wrote partitions (the archive manifest and
	// derived tables, as after an ingest).
	AfterFlush func(ctx context.Context) error

	mu       sync.Mutex
	last     time.Time // when the last request was sent (rate limit)
	Requests int64     // requests sent, retries included
	Retries  int64     // answers 429 or 5xx that were retried
}

// Checkpoint is what the recorder has fetched so far, kept in the lake so a restart
// resumes: per user, the time of the newest fill, funding payment and ledger update
// stored (the next request starts at that time, inclusive), and the hour of the last
// snapshot round.
type Checkpoint struct {
	Users        map[string]*UserCheckpoint `json:"users"`
	SnapshotHour time.Time                  `json:"snapshot_hour"`
}

// UserCheckpoint is one user's resume point (epoch milliseconds).
type UserCheckpoint struct {
	Fills   int64 `json:"fills"`
	Funding int64 `json:"funding"`
	Ledger  int64 `json:"ledger"`
}

// CheckpointFile is where the recorder keeps its checkpoint, relative to the lake.
const CheckpointFile = "perpdex/_record/checkpoint.json"

// LoadCheckpoint reads the checkpoint of the lake at root (empty when none).
func LoadCheckpoint(root string) (*Checkpoint, error) {
	cp := &Checkpoint{Users: map[string]*UserCheckpoint{}}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(CheckpointFile)))
	if errors.Is(err, os.ErrNotExist) {
		return cp, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, cp); err != nil {
		return nil, fmt.Errorf("%s: %w", CheckpointFile, err)
	}
	if cp.Users == nil {
		cp.Users = map[string]*UserCheckpoint{}
	}
	return cp, nil
}

func (cp *Checkpoint) save(root string) error {
	path := filepath.Join(root, filepath.FromSlash(CheckpointFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(cp, "", "  ")
	return lake.WriteFileAtomic(path, append(b, '\n'))
}

func (r *Recorder) defaults() {
	if r.RPM <= 0 {
		r.RPM = 60
	}
	if r.PageLimit <= 0 {
		r.PageLimit = 2000
	}
	if r.FlowPageLimit <= 0 {
		r.FlowPageLimit = 500
	}
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 8
	}
	if r.Backoff <= 0 {
		r.Backoff = time.Second
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = time.Minute
	}
	if r.Client == nil {
		r.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
}

// Run polls every interval until ctx ends; the cycle in progress when ctx ends is
// flushed (what it fetched is written, with its checkpoints) before Run returns.
func (r *Recorder) Run(ctx context.Context, every time.Duration) error {
	for {
		sum, err := r.Cycle(ctx)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(r.Log, "record perpdex: cycle failed (will retry): %v\n", err)
		} else if err == nil {
			fmt.Fprintf(r.Log, "record perpdex: %s\n", sum.String())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// answer is one fetched answer waiting for the flush.
type answer struct {
	name, kind, user string
	at               time.Time
	body             []byte
}

// Cycle runs one polling round and flushes it. When ctx ends mid-round, what was
// fetched for completed requests is still flushed (on a fresh context) and their
// checkpoints saved; the rest is fetched by the next run.
func (r *Recorder) Cycle(ctx context.Context) (ingest.Summary, error) {
	r.defaults()
	cp, err := LoadCheckpoint(r.Root)
	if err != nil {
		return ingest.Summary{}, err
	}
	now := r.Now().UTC()
	var answers []answer
	next := &Checkpoint{Users: map[string]*UserCheckpoint{}, SnapshotHour: cp.SnapshotHour}
	for u, c := range cp.Users {
		cc := *c
		next.Users[u] = &cc
	}
	fetchErr := r.fetchAll(ctx, now, cp, next, &answers)
	// Flush whatever completed, even when the round was cut short.
	fctx := context.WithoutCancel(ctx)
	sum, rejected, err := r.flush(fctx, now, answers)
	if err != nil {
		return sum, err // checkpoints stay where they were: the round is fetched again
	}
	// A malformed answer was not stored: its user's resume point stays where it was,
	// so the next round asks for the same span again.
	for _, a := range rejected {
		old, nc := cp.Users[a.user], next.Users[a.user]
		if old == nil {
			old = &UserCheckpoint{}
		}
		switch a.kind {
		case "fills":
			nc.Fills = old.Fills
		case "funding":
			nc.Funding = old.Funding
		case "ledger":
			nc.Ledger = old.Ledger
		}
	}
	if err := next.save(r.Root); err != nil {
		return sum, err
	}
	if len(sum.Partitions) > 0 && r.AfterFlush != nil {
		if err := r.AfterFlush(fctx); err != nil {
			return sum, err
		}
	}
	return sum, fetchErr
}

func (r *Recorder) fetchAll(ctx context.Context, now time.Time, cp, next *Checkpoint, out *[]answer) error {
	nowMs := now.UnixMilli()
	for _, u := range r.Users {
		u = lower(u)
		c := next.Users[u]
		if c == nil {
			c = &UserCheckpoint{}
			next.Users[u] = c
		}
		for _, f := range []struct {
			typ, kind string
			limit     int
			at        *int64
			extra     map[string]any
		}{
			{"userFillsByTime", "fills", r.PageLimit, &c.Fills, map[string]any{"aggregateByTime": false}},
			{"userFunding", "funding", r.FlowPageLimit, &c.Funding, nil},
			{"userNonFundingLedgerUpdates", "ledger", r.FlowPageLimit, &c.Ledger, nil},
		} {
			pages, newest, err := r.span(ctx, f.typ, u, *f.at, nowMs, f.limit, f.extra)
			if err != nil {
				return err
			}
			for _, body := range pages {
				*out = append(*out, answer{f.typ + " " + u, f.kind, u, now, body})
			}
			*f.at = max(*f.at, newest)
		}
	}
	hour := now.Truncate(time.Hour)
	if !cp.SnapshotHour.Before(hour) {
		return nil
	}
	body, err := r.post(ctx, map[string]any{"type": "metaAndAssetCtxs"})
	if err != nil {
		return err
	}
	snaps := []answer{{"metaAndAssetCtxs", "meta", "", now, body}}
	for _, u := range r.Users {
		u = lower(u)
		for _, s := range []struct{ typ, kind string }{
			{"clearinghouseState", "clearinghouse"}, {"spotClearinghouseState", "spot-clearinghouse"}, {"delegations", "delegations"},
		} {
			body, err := r.post(ctx, map[string]any{"type": s.typ, "user": u})
			if err != nil {
				return err
			}
			snaps = append(snaps, answer{s.typ + " " + u, s.kind, u, now, body})
		}
	}
	// The hour counts as snapshotted only when every user's snapshot was fetched.
	*out = append(*out, snaps...)
	next.SnapshotHour = hour
	return nil
}

// span fetches everything of one user's time-ranged answer in [from, to]. The venue
// caps an answer (2000 fills); an answer holding limit elements covers [oldest,
// newest] of its elements, and the two remaining sub-spans [from, oldest] and [newest,
// to] are asked again (bounds inclusive: the overlap is deduplicated at the merge).
// This holds whichever end of the span the venue answers first, so no fill falls in a
// gap. A full answer within a single millisecond cannot be split further and is taken
// as it is.
func (r *Recorder) span(ctx context.Context, typ, user string, from, to int64, limit int, extra map[string]any) ([][]byte, int64, error) {
	type rng struct{ lo, hi int64 }
	todo := []rng{{from, to}}
	var pages [][]byte
	newest := from
	for n := 0; len(todo) > 0; n++ {
		if n > 100_000 {
			return nil, 0, fmt.Errorf("%s %s: paging does not converge", typ, user)
		}
		sp := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		req := map[string]any{"type": typ, "user": user, "startTime": sp.lo, "endTime": sp.hi}
		for k, v := range extra {
			req[k] = v
		}
		body, err := r.post(ctx, req)
		if err != nil {
			return nil, 0, err
		}
		els, oldest, latest, err := countTimes(body)
		if err != nil {
			return nil, 0, fmt.Errorf("%s %s: %w", typ, user, err)
		}
		pages = append(pages, body)
		if els > 0 {
			newest = max(newest, latest)
		}
		if els < limit || limit <= 0 {
			continue
		}
		switch {
		case sp.lo == sp.hi:
			// A full answer within one millisecond cannot be split: taken as it is.
		case oldest == sp.lo && latest == sp.hi:
			// The answer spans the whole range: what it left out shares a bound's time.
			todo = append(todo, rng{sp.hi, sp.hi}, rng{sp.lo, sp.lo})
		default:
			if latest < sp.hi {
				todo = append(todo, rng{max(latest, sp.lo+1), sp.hi})
			}
			if oldest > sp.lo {
				todo = append(todo, rng{sp.lo, min(oldest, sp.hi-1)})
			}
		}
	}
	return pages, newest, nil
}

// countTimes is the number of elements of an array answer and its oldest and newest
// "time".
func countTimes(body []byte) (n int, oldest, newest int64, err error) {
	var els []struct {
		Time integer `json:"time"`
	}
	if err := json.Unmarshal(body, &els); err != nil {
		return 0, 0, 0, fmt.Errorf("not a JSON array: %w", err)
	}
	for i, e := range els {
		if i == 0 || e.Time.v < oldest {
			oldest = e.Time.v
		}
		newest = max(newest, e.Time.v)
	}
	return len(els), oldest, newest, nil
}

// post sends one info request, spacing requests to RPM and retrying 429 and 5xx
// answers with exponential backoff (Retry-After, in seconds, when the server sends it).
func (r *Recorder) post(ctx context.Context, req map[string]any) ([]byte, error) {
	payload, _ := json.Marshal(req)
	wait := r.Backoff
	for attempt := 1; ; attempt++ {
		if err := r.pace(ctx); err != nil {
			return nil, err
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Info, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		r.mu.Lock()
		r.Requests++
		r.mu.Unlock()
		resp, err := r.Client.Do(hr)
		retry := false
		var body []byte
		if err == nil {
			body, err = io.ReadAll(io.LimitReader(resp.Body, 256<<20))
			resp.Body.Close()
			switch {
			case err != nil:
				retry = true
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
				retry = true
				err = fmt.Errorf("%s: %s", req["type"], resp.Status)
				if s, e := strconv.Atoi(resp.Header.Get("Retry-After")); e == nil && s >= 0 {
					wait = time.Duration(s) * time.Second
				}
			case resp.StatusCode != http.StatusOK:
				return nil, fmt.Errorf("%s: %s: %.200s", req["type"], resp.Status, body)
			default:
				return body, nil
			}
		} else {
			retry = ctx.Err() == nil
		}
		if !retry || attempt >= r.MaxAttempts {
			return nil, err
		}
		r.mu.Lock()
		r.Retries++
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, r.MaxBackoff)
	}
}

// pace waits until a minute / RPM has passed since the previous request.
func (r *Recorder) pace(ctx context.Context) error {
	gap := time.Minute / time.Duration(r.RPM)
	r.mu.Lock()
	at := r.last.Add(gap)
	now := time.Now()
	if at.Before(now) {
		at = now
	}
	r.last = at
	r.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(at)):
		return nil
	}
}

// flush merges a round's answers into the lake, each answer staged on its own (a
// malformed one is reported and skipped, the others are written).
func (r *Recorder) flush(ctx context.Context, now time.Time, answers []answer) (ingest.Summary, []answer, error) {
	if len(answers) == 0 {
		return ingest.Summary{}, nil, nil
	}
	stage, err := ingest.NewStage(ctx, r.Root)
	if err != nil {
		return ingest.Summary{}, nil, err
	}
	defer stage.Close()
	l, err := NewLoader(stage, Options{})
	if err != nil {
		return ingest.Summary{}, nil, err
	}
	var rejected []answer
	sort.SliceStable(answers, func(i, j int) bool { return answers[i].kind == "fills" && answers[j].kind != "fills" })
	for _, a := range answers {
		if err := l.Answer(ctx, a.name, a.kind, a.user, a.at, a.body); err != nil {
			fmt.Fprintf(r.Log, "record perpdex: %v (answer skipped)\n", err)
			rejected = append(rejected, a)
		}
	}
	sum, err := l.Finish(ctx, now)
	return sum, rejected, err
}
