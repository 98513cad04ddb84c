package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// Per-day derived tables (lake/tables_markets_derived.go): one partition per source
// date partition, published incrementally like the on-chain legs (a sidecar of the
// source files' signatures; a changed source recomputes its date, a removed one removes
// it). A request never trusts a stale partition: it plans, per source date, whether the
// published partition may stand in for the raw rows (published from the very file now
// in the lake, and wholly on one side of every cut the request makes) or the raw file
// must be read, so answers are the full scan's whatever the publication's progress.

// dayTable is one per-day derived table and how it is computed from its source.
type dayTable struct {
	name       string
	src, dst   *lake.Table
	publishSQL string // $1 the source file
	spanSQL    string // "" or: $1 the written file -> (first, last) epoch ms kept in the sidecar
}

var (
	predmktMarketDays = &dayTable{name: "predmkt market days", src: lake.PredmktTrades, dst: lake.PredmktMarketDays,
		publishSQL: sqlfiles.MustRead("predmkt/market_days_publish.sql"),
		spanSQL:    "SELECT min(first_ts), max(last_ts) FROM read_parquet($1, hive_partitioning = false)"}
	predmktMarketHours = &dayTable{name: "predmkt market hours", src: lake.PredmktTrades, dst: lake.PredmktMarketHours,
		publishSQL: sqlfiles.MustRead("predmkt/market_hours_publish.sql"),
		spanSQL:    "SELECT min(first_ts), max(last_ts) FROM read_parquet($1, hive_partitioning = false)"}
	predmktMarketFills = &dayTable{name: "predmkt market fills", src: lake.PredmktTrades, dst: lake.PredmktMarketFills,
		publishSQL: sqlfiles.MustRead("predmkt/market_fills_publish.sql"),
		spanSQL:    "SELECT min(ts), max(ts) FROM read_parquet($1, hive_partitioning = false)"}
	perpdexLiquidationDays = &dayTable{name: "perpdex liquidations", src: lake.PerpdexFills, dst: lake.PerpdexLiquidations,
		publishSQL: sqlfiles.MustRead("perpdex/liquidations_publish.sql"),
		spanSQL:    "SELECT min(epoch_us(time)), max(epoch_us(time)) FROM read_parquet($1, hive_partitioning = false)"}
	predmktWalletDays = &dayTable{name: "predmkt wallet days", src: lake.PredmktTrades, dst: lake.PredmktWalletDays,
		publishSQL: sqlfiles.MustRead("predmkt/wallet_days_publish.sql"),
		spanSQL:    "SELECT min(first_ts), max(last_ts) FROM read_parquet($1, hive_partitioning = false)"}
	dayTables = []*dayTable{predmktMarketDays, predmktMarketHours, predmktMarketFills, perpdexLiquidationDays, predmktWalletDays}
)

// daySource is the sidecar entry of one published date: the source file's signature
// and, where the table keeps it, the span of the source rows it summarises.
type daySource struct {
	Sig   string `json:"sig"`
	Rows  int64  `json:"rows"`
	First int64  `json:"first,omitempty"` // spanSQL: epoch ms (market days), epoch µs (liquidations)
	Last  int64  `json:"last,omitempty"`
	Span  bool   `json:"span,omitempty"` // First and Last were recorded (an entry without them is not trusted)
}

func (d *dayTable) sidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(d.dst.Prefix), "_sources.json")
}

var dayLocks sync.Map // lake dir + table -> *sync.Mutex

// DayPublication is what one publication of a per-day table did.
type DayPublication struct {
	Table      string
	Partitions int      // date partitions of the source
	Written    []string // dates recomputed
	Removed    []string // dates whose source disappeared
	Took       time.Duration
}

// PublishDayTables brings every per-day derived table up to date with its source,
// recomputing only the dates whose source file changed. Each file is written atomically
// and the sidecar after each date, so a cancelled publication leaves the previous files
// and the next one carries on.
func (q *Queries) PublishDayTables(ctx context.Context) ([]DayPublication, error) {
	var out []DayPublication
	for _, d := range dayTables {
		p, err := q.publishDays(ctx, d)
		if err != nil {
			return out, err
		}
		out = append(out, p)
		if d == predmktWalletDays {
			t, err := q.publishWalletTotals(ctx)
			if err != nil {
				return out, err
			}
			out = append(out, t)
		}
		if d == predmktMarketDays {
			t, err := q.publishMarketTotals(ctx)
			if err != nil {
				return out, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

var predmktMarketTotalsSQL = sqlfiles.MustRead("predmkt/market_totals_publish.sql")

// totalsSource is the sidecar entry of one predmkt_market_totals date: the chain of
// the trades files' signatures of every date up to it (chainSig) it was summed from,
// its rows and its last fill (epoch ms; 0 with none).
type totalsSource struct {
	Chain string `json:"chain"`
	Rows  int64  `json:"rows"`
	Last  int64  `json:"last"`
}

func totalsSidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(lake.PredmktMarketTotals.Prefix), "_sources.json")
}

// chainSig extends the signature chain of the dates before date by date's source.
func chainSig(prev, date, sig string) string {
	h := sha256.Sum256([]byte(prev + "|" + date + "=" + sig))
	return hex.EncodeToString(h[:16])
}

// chainsOf returns the keys of src in date order and, for each, the chain of sig over
// every date up to it (chainSig): what a chained fold's date was folded from.
func chainsOf[V any](src map[string]V, sig func(date string, v V) string) (dates []string, chains map[string]string) {
	dates = slices.Sorted(maps.Keys(src))
	chains = make(map[string]string, len(dates))
	chain := ""
	for _, d := range dates {
		chain = chainSig(chain, d, sig(d, src[d]))
		chains[d] = chain
	}
	return dates, chains
}

// publishMarketTotals brings predmkt_market_totals up to date with the published
// market days (a chainedFold over their dates): each date is the previous totals plus
// its day, one small file each, from the first date whose chain of source signatures
// changed (a new, late, corrected or removed day). A date left by its source is removed.
func (q *Queries) publishMarketTotals(ctx context.Context) (DayPublication, error) {
	const op = "predmkt market totals publication"
	start := time.Now()
	mu, _ := dayLocks.LoadOrStore(q.dir+"\x00"+lake.PredmktMarketTotals.Name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	days, err := readSidecar[daySource](predmktMarketDays.sidecar(q.dir))
	if err != nil {
		return DayPublication{}, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[totalsSource](totalsSidecar(q.dir))
	if err != nil {
		return DayPublication{}, &StoreError{Op: op, Err: err}
	}
	pub := DayPublication{Table: lake.PredmktMarketTotals.Name, Partitions: len(days)}
	dates, chains := chainsOf(days, func(_ string, e daySource) string { return e.Sig })
	// Each date's last fill: the newest of every day up to it.
	lastAt, last := make(map[string]int64, len(dates)), int64(0)
	for _, date := range dates {
		if e := days[date]; e.Rows > 0 && e.Last > last {
			last = e.Last
		}
		lastAt[date] = last
	}
	fold := chainedFold[totalsSource]{
		op: op, table: lake.PredmktMarketTotals, sidecar: totalsSidecar(q.dir),
		current: func(e totalsSource, chain string) bool { return e.Chain == chain },
		rows:    func(e totalsSource) int64 { return e.Rows },
		entry: func(date, chain string, n int64) totalsSource {
			return totalsSource{Chain: chain, Rows: n, Last: lastAt[date]}
		},
		// The views must match the files now: the days just published, and the totals
		// as they are (none at all, or some removed, since the views were made).
		reload: true,
		start:  foldQuery(q, lake.PredmktMarketTotals, predmktMarketTotalsSQL),
	}
	err = fold.publish(ctx, q, dates, chains, done, &pub)
	pub.Took = time.Since(start)
	return pub, err
}

// marketTotalsDate is the latest date whose published totals stand in for every trades
// date up to it at the clock whose 24-hour window starts at cut: summed from the very
// files now in the lake (the chain of the current signatures matches), and every fill
// in them before cut (so they count in the lifetime figures only). "" when none does.
func (q *Queries) marketTotalsDate(src map[string]dateFile, cut int64) (string, error) {
	done, err := cachedSidecarOf[totalsSource](q, totalsSidecar(q.dir))
	if err != nil || len(done) == 0 {
		return "", err
	}
	dates, chains := chainsOf(src, func(_ string, f dateFile) string { return f.sig })
	best := ""
	for _, date := range dates {
		t, ok := done[date]
		if !ok || t.Chain != chains[date] || t.Last >= cut {
			break
		}
		best = date
	}
	return best, nil
}

// WarmDayTables is PublishDayTables, then PublishMarketBoard, for the serve refresher.
func (q *Queries) WarmDayTables(ctx context.Context) error {
	if _, err := q.PublishDayTables(ctx); err != nil {
		return err
	}
	// The market list's board of the hour is summed from them.
	_, err := q.PublishMarketBoard(ctx)
	return err
}

func (q *Queries) publishDays(ctx context.Context, d *dayTable) (DayPublication, error) {
	op := d.name + " publication"
	start := time.Now()
	mu, _ := dayLocks.LoadOrStore(q.dir+"\x00"+d.dst.Name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	src, err := datePartitions(q.dir, d.src)
	if err != nil {
		return DayPublication{}, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[daySource](d.sidecar(q.dir))
	if err != nil {
		return DayPublication{}, &StoreError{Op: op, Err: err}
	}
	pub := DayPublication{Table: d.dst.Name, Partitions: len(src)}
	var todo, gone []string
	for date, f := range src {
		if done[date].Sig != f.sig {
			todo = append(todo, date)
		}
	}
	for date := range done {
		if _, ok := src[date]; !ok {
			gone = append(gone, date)
		}
	}
	sort.Strings(todo)
	sort.Strings(gone)
	for _, date := range gone {
		if err := removeDatePartition(q.dir, d.dst, date); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		delete(done, date)
		if err := writeSidecar(d.sidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Removed = append(pub.Removed, date)
	}
	for _, date := range todo {
		f := src[date]
		n, err := lake.CopyQuery(ctx, q.db, q.dir, d.dst, []string{date}, d.publishSQL, f.path)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		e := daySource{Sig: f.sig, Rows: n}
		if n == 0 { // no row: CopyQuery kept the old file, which no longer holds
			if err := removeDatePartition(q.dir, d.dst, date); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
		} else if d.spanSQL != "" {
			rel, _ := d.dst.Path(date)
			var first, last sql.NullInt64
			if err := q.db.QueryRowContext(ctx, d.spanSQL, filepath.Join(q.dir, filepath.FromSlash(rel))).Scan(&first, &last); err != nil {
				return pub, wrap(ctx, op, err)
			}
			e.First, e.Last, e.Span = first.Int64, last.Int64, true
		}
		done[date] = e
		if err := writeSidecar(d.sidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, date)
	}
	if err := q.ensureView(ctx, d.dst); err != nil { // the table's first files
		return pub, wrap(ctx, op, err)
	}
	pub.Took = time.Since(start)
	return pub, nil
}

// dayPlan splits the source's dates for one request: derived lists the dates whose
// published partition stands in for the raw rows (published from the file now in the
// lake, and use says its span fits the request), raw the dates read from the source.
// Dates skip says hold nothing the request counts are in neither. Both lists are
// comma-separated YYYY-MM-DD, as the SQL takes them.
func (q *Queries) dayPlan(d *dayTable, use, skip func(daySource) bool) (derived, raw string, err error) {
	pub, rs, err := q.dayEntries(d)
	if err != nil {
		return "", "", err
	}
	var ds []string
	for date, e := range pub {
		switch {
		case skip != nil && skip(e):
		case use == nil || use(e):
			ds = append(ds, date)
		default:
			rs = append(rs, date)
		}
	}
	sort.Strings(ds)
	sort.Strings(rs)
	return strings.Join(ds, ","), strings.Join(rs, ","), nil
}

// dayEntries returns the source dates whose published partition was computed from the
// file now in the lake (with their sidecar entries) and the other source dates. The
// listing and the sidecar are the request path's cached ones (day_files_cache.go).
func (q *Queries) dayEntries(d *dayTable) (pub map[string]daySource, raw []string, err error) {
	src, err := q.cachedDatePartitions(d.src)
	if err != nil {
		return nil, nil, err
	}
	done, err := cachedSidecarOf[daySource](q, d.sidecar(q.dir))
	if err != nil {
		return nil, nil, err
	}
	pub = map[string]daySource{}
	for date, f := range src {
		if e, ok := done[date]; ok && e.Sig == f.sig && (d.spanSQL == "" || e.Rows == 0 || e.Span) {
			pub[date] = e
		} else {
			raw = append(raw, date)
		}
	}
	return pub, raw, nil
}

type dateFile struct{ path, sig string }

// datePartitions maps each date partition of t (partitioned by date only) to its file
// and the file's signature (size and modification time).
func datePartitions(dir string, t *lake.Table) (map[string]dateFile, error) {
	files, err := t.Files(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]dateFile, len(files))
	for _, f := range files {
		date, ok := strings.CutPrefix(filepath.Base(filepath.Dir(f)), "date=")
		if !ok {
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // replaced under us; the next look sees the new one
			}
			return nil, err
		}
		out[date] = dateFile{path: f, sig: fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())}
	}
	return out, nil
}

func removeDatePartition(dir string, t *lake.Table, date string) error {
	return removePartitionFile(dir, t, date)
}
