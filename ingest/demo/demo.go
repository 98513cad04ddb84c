// Package demo generates a deterministic, realistic lake for all three areas, in the
// same schemas the real ingest writes. The same seed, scale and end time always give
// the same rows.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"mdq/archive"
	"mdq/lake"
)

// Scale sizes a demo lake.
type Scale struct {
	Name string
	Days int // days of history ending at End

	// Prediction market.
	PredWallets    int // trading wallets
	PredMarkets    int // markets (families included)
	PredTradesDay  int // wallet fills per day, roughly
	PredTapePerDay int // tape events per day, roughly (book + price_change + trade + ...)

	// Perpetuals venue.
	PerpWallets  int
	PerpFillsDay int // user fills per day, roughly

	// On-chain.
	ChainWallets    int // wallets per chain
	ChainTokens     int // ERC-20 tokens per chain (plus the native coin)
	TransfersPerDay int // transfers per chain per day, roughly
}

// Scales are the named sizes. tiny is for tests (a few MB, seconds), small for
// make run, medium for benchmarks, large for scale tests.
var Scales = map[string]Scale{
	"tiny": {Name: "tiny", Days: 10,
		PredWallets: 160, PredMarkets: 70, PredTradesDay: 1_500, PredTapePerDay: 12_000,
		PerpWallets: 120, PerpFillsDay: 1_500,
		ChainWallets: 200, ChainTokens: 12, TransfersPerDay: 1_500},
	"small": {Name: "small", Days: 30,
		PredWallets: 1_500, PredMarkets: 300, PredTradesDay: 12_000, PredTapePerDay: 60_000,
		PerpWallets: 800, PerpFillsDay: 10_000,
		ChainWallets: 1_500, ChainTokens: 40, TransfersPerDay: 10_000},
	"medium": {Name: "medium", Days: 45,
		PredWallets: 20_000, PredMarkets: 2_000, PredTradesDay: 60_000, PredTapePerDay: 230_000,
		PerpWallets: 8_000, PerpFillsDay: 50_000,
		ChainWallets: 20_000, ChainTokens: 150, TransfersPerDay: 25_000},
	"large": {Name: "large", Days: 90,
		PredWallets: 100_000, PredMarkets: 8_000, PredTradesDay: 300_000, PredTapePerDay: 1_200_000,
		PerpWallets: 40_000, PerpFillsDay: 250_000,
		ChainWallets: 100_000, ChainTokens: 400, TransfersPerDay: 120_000},
}

// Options configure one run.
type Options struct {
	Dir      string
	Scale    string
	Seed     uint64
	End      time.Time // last instant of history; truncated to the minute
	Force    bool
	Progress Progress
}

// Progress receives coarse progress: total steps up front, then one call per step.
type Progress interface {
	Start(total int)
	Step(name string)
	Done()
}

type nopProgress struct{}

func (nopProgress) Start(int)   {}
func (nopProgress) Step(string) {}
func (nopProgress) Done()       {}

// Marker is the content of lake.json.
type Marker struct {
	Kind      string    `json:"kind"` // demo or ingest
	Scale     string    `json:"scale"`
	Seed      uint64    `json:"seed"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Tables    []string  `json:"tables"`
	Generated string    `json:"generator"`
}

// Generator holds the state shared by the area generators.
type Generator struct {
	Opt   Options
	Scale Scale
	Start time.Time // first instant of history
	End   time.Time
	W     *lake.Writer

	mu    sync.Mutex
	steps int
}

// TableDirs are the top-level lake directories a forced run replaces.
var TableDirs = []string{"archive", "predmkt", "perpdex", "onchain"}

// Run generates the lake. It refuses a non-empty directory unless Force is set; with
// Force it first removes the lake marker (so an interrupted run leaves "no lake", not a
// mixed one) and the table directories, keeping any other files (credentials).
func Run(ctx context.Context, opt Options) (*Marker, error) {
	sc, ok := Scales[opt.Scale]
	if !ok {
		return nil, fmt.Errorf("unknown scale %q (use tiny, small, medium or large)", opt.Scale)
	}
	if opt.End.IsZero() {
		return nil, errors.New("end time is required")
	}
	if opt.Progress == nil {
		opt.Progress = nopProgress{}
	}
	if err := CheckDir(opt.Dir, opt.Force); err != nil {
		return nil, err
	}
	// Exclusive for the whole run: no other process may have the lake open while its
	// table directories are emptied and written again (lake.LockExclusive).
	unlock, err := lake.LockExclusive(opt.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := prepareDir(opt.Dir, opt.Force); err != nil {
		return nil, err
	}
	end := opt.End.UTC().Truncate(time.Minute)
	g := &Generator{Opt: opt, Scale: sc, End: end, Start: end.Add(-time.Duration(sc.Days) * 24 * time.Hour)}

	areas := []struct {
		name string
		fn   func(context.Context, *Generator) error
	}{
		{"predmkt", genPredmkt},
		{"perpdex", genPerpdex},
		{"onchain", genOnchain},
	}
	opt.Progress.Start(g.totalSteps())
	defer opt.Progress.Done()

	// The areas are independent: each gets its own writer and random stream, so running
	// them concurrently keeps the output deterministic.
	var wg sync.WaitGroup
	errs := make([]error, len(areas))
	for i, a := range areas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := lake.NewWriter(opt.Dir)
			if err != nil {
				errs[i] = err
				return
			}
			defer w.Close()
			ag := &Generator{Opt: opt, Scale: sc, End: g.End, Start: g.Start, W: w}
			if err := a.fn(ctx, ag); err != nil {
				errs[i] = fmt.Errorf("%s: %w", a.name, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	// The archive's manifest and samples describe the files just written.
	if err := archive.Refresh(ctx, opt.Dir); err != nil {
		return nil, fmt.Errorf("archive manifest: %w", err)
	}

	m := &Marker{Kind: "demo", Scale: sc.Name, Seed: opt.Seed, Start: g.Start, End: g.End, Generated: "mdq demo"}
	for _, t := range lake.Tables() {
		m.Tables = append(m.Tables, t.Name)
	}
	sort.Strings(m.Tables)
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := lake.WriteFileAtomic(filepath.Join(opt.Dir, lake.MarkerFile), append(b, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckDir refuses a non-empty directory unless force is set (before any lock is
// taken, so that the refusal is the same whoever has the directory open).
func CheckDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(entries) > 0 && !force {
		return fmt.Errorf("%s is not empty: pass --force to replace the lake in it", dir)
	}
	return nil
}

// prepareDir empties dir for a run CheckDir let through, under the lake's lock. It
// checks again: something may have been written into dir between that check and the
// lock.
func prepareDir(dir string, force bool) error {
	if err := CheckDir(dir, force); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, lake.MarkerFile)); err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, d := range TableDirs {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	return nil
}

// RNG returns a random stream for one named purpose, derived from the seed so that
// streams do not depend on the order in which areas or tables are generated.
func (g *Generator) RNG(purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(g.Opt.Seed, h.Sum64()))
}

// Days returns each UTC date of the history, oldest first.
func (g *Generator) Days() []time.Time {
	var out []time.Time
	for d := g.Start.Truncate(24 * time.Hour); !d.After(g.End); d = d.Add(24 * time.Hour) {
		out = append(out, d)
	}
	return out
}

// Step reports one finished unit of work.
func (g *Generator) Step(name string) { g.Opt.Progress.Step(name) }

// totalSteps is the number of Step calls a run makes: one per day per area for the
// day-partitioned tables, plus one per area for the rest.
func (g *Generator) totalSteps() int { return 3*len(g.Days()) + 3 }

// Date formats a partition date.
func Date(t time.Time) string { return t.UTC().Format("2006-01-02") }
