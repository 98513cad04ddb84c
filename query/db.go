// Package query runs the hand-written SQL of every route against one in-process DuckDB
// whose views read the lake's Parquet files: typed parameters in, typed rows out, one
// function per route. It never chooses an HTTP status.
package query

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"mdq/internal/duckalloc"
	"mdq/internal/duckconn"
	"mdq/lake"
	sqlfiles "mdq/sql"
)

// DBTX is what the query functions need from a database handle.
type DBTX interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Options tune a store.
type Options struct {
	Timeout time.Duration    // per query; 0 means 30s
	Now     func() time.Time // the one clock all window arithmetic uses; nil is the wall clock
	Conns   int              // pool size; 0 means the number of cores
	Logger  *slog.Logger
	// Memory is the process's memory budget (bytes): DuckDB gets MemoryDuckDBShare of it
	// (its memory_limit; beyond it DuckDB spills to TempDir), the Go heap the rest
	// (runtime/debug.SetMemoryLimit, a soft limit). 0 means DefaultMemoryLimit().
	Memory int64
	// TempDir is where DuckDB spills; "" means <lake>/.tmp/duckdb.
	TempDir string
	// Threads is DuckDB's worker threads; 0 means the number of cores.
	Threads int
	// ServeStale lets requests answer from the last published derived tables while a
	// newer publication runs in the background (mdq serve); otherwise a store brings
	// them up to date before answering (the offline CLI).
	ServeStale bool
	// PublishOnly opens a store that publishes derived tables and serves nothing (mdq
	// rebuild, the end of mdq demo, an ingest, a lake cut): a board it finds published or
	// has just published is not read back into the Go-side serving state, which only a
	// server's requests would read (on the large lake, an hour whose boards are published
	// already costs 0.2 cpu-s instead of 40, one that computes them about 15% less;
	// docs/PERFORMANCE.md).
	// Its routes answer ErrPublishOnly: a board it built is not kept, nor served empty.
	PublishOnly bool
	// NoGoLimit leaves the Go heap limit alone (tests that open several stores).
	NoGoLimit bool
}

// Queries owns the in-process DuckDB over one lake. Its shared state (the database,
// caches, background builds) is the embedded store; the clock is its own, so At can
// give a view of the same store answering at an earlier time (a request's as_of).
type Queries struct {
	*store
	now  func() time.Time
	asOf bool // a view made by At: builds for its time are not cached nor published
}

// store is the state every view of one store shares.
type store struct {
	db *sql.DB
	// walletDB is a second pool on the same database for the per-wallet SQL
	// (queryWallet), whose connections keep the Parquet footers they read
	// (footerCaching): see openPools.
	walletDB *sql.DB
	dir      string
	unlock   func() // releases the lake's lock, held shared while the store is open
	timeout  time.Duration
	log      *slog.Logger
	ext      sync.Map // per-store state of route files (in-memory caches), keyed by a type each file owns
	// ddl serialises the catalog statements requests may run (views recreated,
	// macros defined): two connections replacing the same entry at once fail one of
	// them with DuckDB's "Catalog write-write conflict", which a request would answer
	// as a 503.
	ddl sync.Mutex

	// life is cancelled by Close: every background build (hourly boards, derived-table
	// publication, indexes) runs under it, so closing the store stops them, and Close
	// waits for them (bounded) before closing the database.
	life   context.Context
	stop   context.CancelFunc
	bg     sync.WaitGroup
	budget Budget
	ready  readiness
	caches cacheRegistry // the Go-side caches bounded by bytes (cache_budget.go)

	serveStale bool
	// publishOnly: Options.PublishOnly.
	publishOnly bool
	// boardReads counts the hourly boards read into memory (a publish-only store reads
	// none).
	boardReads atomic.Int64
	legsCheck  func()   // tests: runs as each freshness check of the on-chain legs starts
	poolConns  int      // the pools' open and idle connection limits
	ownSpill   bool     // the spill directory is this store's own (removed at Close)
	viewHas    sync.Map // table name -> whether its view reads files (false: the empty typed view)
}

// Budget is how a store split its memory budget.
type Budget struct {
	Total   int64 // bytes
	DuckDB  int64 // DuckDB's memory_limit
	Go      int64 // the Go heap's soft limit
	Threads int
	TempDir string
}

// MemoryDuckDBShare is DuckDB's share of the memory budget; the Go side (request
// buffers, bounded caches, the HTTP server) has the rest.
const MemoryDuckDBShare = 0.6

// DefaultMemoryLimit is a quarter of physical memory (SPEC-sized deployments share the
// machine with the OS page cache, which DuckDB's Parquet reads rely on).
func DefaultMemoryLimit() int64 {
	if n := physicalMemory(); n > 0 {
		return n / 4
	}
	return 4 << 30
}

// Open checks that dir holds a lake and builds one DuckDB view per lake table.
func Open(ctx context.Context, dir string, opt Options) (*Queries, error) {
	if err := lake.Check(dir); err != nil {
		return nil, err
	}
	// Held until Close: a demo must not empty the lake under the store (lake.LockShared).
	unlock, err := lake.LockShared(dir)
	if err != nil {
		return nil, err
	}
	q, err := open(ctx, dir, opt)
	if err != nil {
		unlock()
		return nil, err
	}
	q.unlock = unlock
	return q, nil
}

// open is Open once the lake's lock is held.
func open(ctx context.Context, dir string, opt Options) (*Queries, error) {
	b, err := planBudget(dir, opt)
	if err != nil {
		return nil, err
	}
	// The settings travel in the DSN so that every connection of the pool has them.
	// enable_external_file_cache off: DuckDB would keep a copy of the bytes of every
	// Parquet file it reads in its buffer pool, up to its memory limit, while the page
	// cache already holds them (TestDuckDBKeepsNoCopyOfLakeFiles).
	dsn := fmt.Sprintf("?memory_limit=%dMB&threads=%d&enable_external_file_cache=false&temp_directory=%s",
		b.DuckDB>>20, b.Threads, url.QueryEscape(b.TempDir))
	n := opt.Conns
	if n <= 0 {
		// One connection per core answers the cheap routes; more let a slow query (a
		// board build) not hold the cheap ones back. DuckDB shares its threads and
		// memory limit across connections, so this does not multiply either.
		n = 2 * runtime.NumCPU()
	}
	db, walletDB, err := openPools(dsn, n)
	if err != nil {
		return nil, err
	}
	if !opt.NoGoLimit {
		debug.SetMemoryLimit(b.Go)
	}
	q := &Queries{store: &store{db: db, walletDB: walletDB, dir: dir, timeout: opt.Timeout, log: opt.Logger, budget: b, serveStale: opt.ServeStale, publishOnly: opt.PublishOnly,
		poolConns: n, ownSpill: opt.TempDir == ""}, now: opt.Now}
	q.life, q.stop = context.WithCancel(context.Background())
	if q.timeout <= 0 {
		q.timeout = 30 * time.Second
	}
	if q.now == nil {
		q.now = time.Now
	}
	if q.log == nil {
		q.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	TuneAllocator(q.log)
	if err := q.Reload(ctx); err != nil {
		walletDB.Close()
		db.Close()
		return nil, err
	}
	// The macros that read no table, shared by several SQL files: defined once.
	if err := q.defineMacros(ctx); err != nil {
		walletDB.Close()
		db.Close()
		return nil, wrap(ctx, "open", err)
	}
	return q, nil
}

// defineMacros defines storeMacros, as every catalog statement, under q.ddl.
func (q *Queries) defineMacros(ctx context.Context) error {
	q.ddl.Lock()
	defer q.ddl.Unlock()
	for _, m := range storeMacros {
		if err := q.execDDL(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// storeMacros are defined when a store opens: pd_trade_sums (sql/perpdex/board.sql and
// trades_days.sql).
var storeMacros = []string{sqlfiles.MustRead("perpdex/trade_sums_macro.sql")}

// AllocatorDecay is how long the allocator DuckDB is linked with (its bundled
// jemalloc) keeps pages DuckDB has freed before handing them back to the kernel.
// jemalloc's default in DuckDB is 1 s, and it purges inline, on the thread that
// allocates next: under steady requests a request now and then paid for the purge
// (madvise) and then for faulting the same pages in again. With 10 s, pages freed by
// one request are reused by the next ones. Large lake, busiest 100 ethereum wallets,
// 200 requests, interleaved runs (go test ./handlers -bench
// 'BenchmarkOnchain(Wallet|Transactions|Compare)$/http' -benchtime 200x): p99
// 34.8-45.3 -> 29.2-30.1 ms (wallet), 29.7-36.3 -> 23.7-25.8 (transactions),
// 52.5-60.5 -> 46.1-49.1 (compare). Idle, the pages still go back within 10 s; what
// they can add to RSS meanwhile is at most the peak of what DuckDB allocated through
// jemalloc (its memory_limit bounds the buffer-managed part of that), and the large
// lake's peak RSS under load stayed under 4 GB (docs/PERFORMANCE.md).
const AllocatorDecay = 10 * time.Second

var allocatorOnce sync.Once

// TuneAllocator gives the allocator DuckDB is linked with AllocatorDecay, once per
// process. That allocator is the process's: every DuckDB database in it shares it (the
// store's, and those the lake writer, the ingest loaders and the archive manifest open
// for themselves), so the CLI calls this as it starts, and Open calls it for a store
// opened without the CLI. A tuning, not a requirement: without it DuckDB keeps
// jemalloc's 1 s, or the system allocator where it does not bundle jemalloc (not
// Linux). log nil: slog's default logger.
func TuneAllocator(log *slog.Logger) {
	allocatorOnce.Do(func() {
		if log == nil {
			log = slog.Default()
		}
		if err := duckalloc.SetDecay(AllocatorDecay.Milliseconds()); errors.Is(err, duckalloc.ErrUnavailable) {
			log.Debug("DuckDB's allocator is not its bundled jemalloc: not tuned")
		} else if err != nil {
			log.Warn("DuckDB's allocator keeps its default decay", "err", err)
		}
	})
}

// openPools opens one DuckDB database and two connection pools on it, n connections
// each: db for everything, and walletDB for the per-wallet SQL, whose connections keep
// the Parquet footers they read (DuckDB's parquet_metadata_cache, set per connection).
// A per-wallet request reads its wallet's bucket of the wallet-clustered tables five
// or six times (three chains each); parsing those footers (91 row groups of 13
// columns in one bucket's ethereum history at large) was a third of its time.
// The setting stays off elsewhere because DuckDB never evicts a kept footer: kept
// for every file the boards read, they came to 320 MB at large and would grow with
// each day's files, outside DuckDB's memory limit. The per-wallet SQL reads the 96
// files of the wallet tables (about 80 MB of footers in memory at large; they grow
// with the history segment, not with the number of files) and each date's legs
// files after the split, usually today's. A kept footer is used again only while
// the file has the same device, inode, size and modification time, and every
// publication writes a new file and renames it over the old one (a new inode), so
// a republished file is always read afresh (TestParquetMetadataCacheSeesAReplacedFile).
func openPools(dsn string, n int) (db, walletDB *sql.DB, err error) {
	c, err := duckconn.Connector(dsn, nil) // every connection in UTC (internal/duckconn)
	if err != nil {
		return nil, nil, err
	}
	db = sql.OpenDB(c) // closing db closes the connector, and so the database
	walletDB = sql.OpenDB(footerCaching{c})
	for _, p := range []*sql.DB{db, walletDB} {
		p.SetMaxOpenConns(n)
		p.SetMaxIdleConns(n)
	}
	return db, walletDB, nil
}

// footerCaching makes the connections of a pool keep Parquet footers. It does not
// close the connector: the pool db owns it (database/sql closes a connector that
// has a Close method).
type footerCaching struct{ c *duckdb.Connector }

func (f footerCaching) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := f.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.(driver.ExecerContext).ExecContext(ctx, "LOAD parquet; SET parquet_metadata_cache = true", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (f footerCaching) Driver() driver.Driver { return f.c.Driver() }

// planBudget splits opt.Memory between DuckDB and Go and prepares the spill directory.
func planBudget(dir string, opt Options) (Budget, error) {
	b := Budget{Total: opt.Memory, Threads: opt.Threads, TempDir: opt.TempDir}
	if b.Total <= 0 {
		b.Total = DefaultMemoryLimit()
	}
	if b.Total < 256<<20 {
		return b, fmt.Errorf("memory limit %d MB is below the 256 MB the store needs", b.Total>>20)
	}
	if b.Threads <= 0 {
		b.Threads = runtime.NumCPU()
	}
	if b.TempDir == "" {
		// One spill directory per store: DuckDB empties its temporary directory, so two
		// processes (serve and a rebuild) or two stores must not share one. Directories
		// left by processes that are gone are removed.
		root := filepath.Join(dir, ".tmp", "duckdb")
		removeStaleSpill(root)
		b.TempDir = filepath.Join(root, fmt.Sprintf("%d-%d", os.Getpid(), spillSeq.Add(1)))
	}
	if err := os.MkdirAll(b.TempDir, 0o755); err != nil {
		return b, fmt.Errorf("spill directory: %w", err)
	}
	b.DuckDB = int64(float64(b.Total) * MemoryDuckDBShare)
	b.Go = b.Total - b.DuckDB
	return b, nil
}

var spillSeq atomic.Int64

// removeStaleSpill removes the spill directories under root whose process is gone.
func removeStaleSpill(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n == os.Getpid() || processAlive(n) {
			continue
		}
		os.RemoveAll(filepath.Join(root, e.Name())) //nolint:errcheck
	}
}

// Budget returns how the store split its memory budget.
func (q *Queries) Budget() Budget { return q.budget }

// CloseGrace bounds how long Close waits for cancelled background builds.
var CloseGrace = 4 * time.Second

// Close stops every background build (their queries are interrupted) and releases
// the database. A cancelled publication leaves the previous files, never a partial one
// (the lake writer renames only complete files).
func (q *Queries) Close() error {
	q.stop()
	done := make(chan struct{})
	go func() { q.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(CloseGrace):
		q.log.Warn("background builds still running at close; closing the database under them")
	}
	q.walletDB.Close() //nolint:errcheck // its connections go with the database below
	err := q.db.Close()
	q.removeEmptyFiles()
	if q.ownSpill {
		os.RemoveAll(q.budget.TempDir) //nolint:errcheck
	}
	q.unlock()
	return err
}

// Stop cancels every background build without closing the database (a server that is
// shutting down still answers its in-flight requests). Close calls it too.
func (q *Queries) Stop() { q.stop() }

// background runs fn in a goroutine under the store's life context (cancelled by
// Close), tracked so that Close can wait for it. Builds that outlive the request that
// started them use it instead of context.WithoutCancel.
func (q *Queries) background(fn func(ctx context.Context)) {
	q.bg.Add(1)
	go func() {
		defer q.bg.Done()
		fn(q.life)
	}()
}

// detach is a context for work a request starts but does not own (a build others will
// wait for): it ignores the request's cancellation but ends with the store.
func (q *Queries) detach(context.Context) context.Context { return q.life }

// Life is the store's life context: cancelled when the store closes.
func (q *Queries) Life() context.Context { return q.life }

// Dir returns the lake directory.
func (q *Queries) Dir() string { return q.dir }

// Now returns the store's clock reading.
func (q *Queries) Now() time.Time { return q.now().UTC() }

// At returns a view of the store whose clock reads t (a request's as_of): the same
// database, views and caches, every window measured from t. Hourly boards and derived
// state of t's hour are read from the caches and the lake when they hold that hour and
// computed on demand otherwise, without replacing what the store serves at its own
// clock (At never publishes). Closing the view closes nothing; close the store.
func (q *Queries) At(t time.Time) *Queries {
	t = t.UTC()
	return &Queries{store: q.store, now: func() time.Time { return t }, asOf: true}
}

// IsAsOf reports whether q is a view made by At.
func (q *Queries) IsAsOf() bool { return q.asOf }

// DB exposes the handle for the analyst SQL console and benchmarks.
func (q *Queries) DB() DBTX { return q.db }

// Reload (re)creates the views, picking up tables whose first files appeared since.
// Globs are expanded by DuckDB at query time, so new partitions of a table that
// already had files are visible without a reload.
func (q *Queries) Reload(ctx context.Context) error {
	q.ddl.Lock()
	defer q.ddl.Unlock()
	for _, t := range lake.Tables() {
		ddl, has := viewDDL(q.dir, t)
		if err := q.execDDL(ctx, ddl); err != nil {
			return fmt.Errorf("view %s: %w", t.Name, err)
		}
		q.viewHas.Store(t.Name, has)
	}
	return nil
}

// execDDL runs a catalog statement (under q.ddl), again after a short wait when DuckDB
// reports a write-write conflict on the catalog entry: the store's own statements are
// serialised, but one that a cancelled context interrupted can leave its change
// uncommitted on its connection, and DuckDB refuses a second change of the same entry
// while that change is open. A connection back in the pool keeps an open change (and
// the pool hands it out again: TestCatalogStatementClosesAnIdleHolder), so such a
// holder can sit idle for good; TestOnchainLegsCancelledPublicationKeepsPrevious met
// the conflict after 155 ms, after 2.5 s and after 20 s of waits in CI runs (which
// statement left the change open there is not proven, and discarding the connection of
// an interrupted statement did not end them). So a catalog statement, once started, is
// no longer interrupted (execDDLOnce), the connection of one that failed with its
// context done is discarded, and on a conflict the idle connections are closed too
// before waiting (a holder this store did not make itself). Waits double from 5 ms up
// to 2 s each, 20 s in all. The statement is a replacement, so running it again is
// safe; a conflict that outlasts the waits fails the publication, which the next one
// (the serve refresher's next minute) runs again.
func (q *Queries) execDDL(ctx context.Context, stmt string) error {
	wait, waited := 5*time.Millisecond, time.Duration(0)
	for {
		err := q.execDDLOnce(ctx, stmt)
		if err == nil || waited >= 20*time.Second || ctx.Err() != nil || !strings.Contains(err.Error(), "write-write conflict") {
			return err
		}
		q.closeIdle()
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
		waited += wait
		wait = min(2*wait, 2*time.Second)
	}
}

// execDDLOnce runs stmt on a connection of its own. ctx is checked before the statement
// starts and not inside it: a catalog statement takes milliseconds, and one interrupted
// inside DuckDB is the one way this store is known to leave a change open (the
// conflicts TestOnchainLegsCancelledPublicationKeepsPrevious met in CI after its
// cancelled publications, which closing the interrupted statement's connection did not
// end), so a cancelled publication stops between statements instead. The connection is
// still discarded when the statement failed with ctx done.
func (q *Queries) execDDLOnce(ctx context.Context, stmt string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.ExecContext(context.WithoutCancel(ctx), stmt)
	if err != nil && ctx.Err() != nil {
		// database/sql closes a connection whose Raw callback reports it bad.
		conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // the error is the discard
	}
	return err
}

// closeIdle closes the idle connections of the store's main pool (it keeps its limits).
func (q *Queries) closeIdle() {
	q.db.SetMaxIdleConns(0)
	q.db.SetMaxIdleConns(q.poolConns)
}

// ensureView recreates the views when t's view was made before t had files and it has
// some now (a derived table another store or process published first).
func (q *Queries) ensureView(ctx context.Context, t *lake.Table) error {
	if has, _ := q.viewHas.Load(t.Name); has == true {
		return nil
	}
	files, err := t.Files(q.dir)
	if err != nil || len(files) == 0 {
		return err
	}
	return q.Reload(ctx)
}

// viewsStale reports whether the view of one of tables was made while the table had
// files and has none now, or the other way round (Reload makes them again).
func (q *Queries) viewsStale(tables []*lake.Table) (bool, error) {
	for _, t := range tables {
		files, err := t.Files(q.dir)
		if err != nil {
			return false, err
		}
		if has, ok := q.viewHas.Load(t.Name); !ok || has != any(len(files) > 0) {
			return true, nil
		}
	}
	return false, nil
}

// viewDDL builds the view of one table. DuckDB takes no bound parameters in DDL; the
// path comes from the operator's --data flag and the registry, and is quoted.
func viewDDL(dir string, t *lake.Table) (string, bool) {
	files, _ := t.Files(dir)
	name := lake.QuoteIdent(t.Name)
	if len(files) == 0 {
		// An empty, typed view: routes over a table with no data answer empty.
		cols := make([]string, 0, len(t.Columns)+len(t.Partitions))
		for _, c := range t.Columns {
			cols = append(cols, fmt.Sprintf("CAST(NULL AS %s) AS %s", c.Type, lake.QuoteIdent(c.Name)))
		}
		for _, p := range t.Partitions {
			cols = append(cols, fmt.Sprintf("CAST(NULL AS %s) AS %s", partitionType(p), lake.QuoteIdent(p)))
		}
		return "CREATE OR REPLACE VIEW " + name + " AS SELECT " + strings.Join(cols, ", ") + " WHERE false", false
	}
	glob := strings.TrimRight(dir, "/") + "/" + t.Glob()
	opts := ""
	if len(t.Partitions) > 0 || strings.Contains(t.Prefix, "=") {
		types := []string{}
		for _, p := range hiveKeys(t) {
			types = append(types, fmt.Sprintf("%s: %s", lake.QuoteString(p), partitionType(p)))
		}
		opts = ", hive_partitioning = true, hive_types = {" + strings.Join(types, ", ") + "}"
	}
	return "CREATE OR REPLACE VIEW " + name + " AS SELECT * FROM read_parquet(" + lake.QuoteString(glob) + opts + ")", true
}

// hiveKeys lists every key=value directory level of the table's path.
func hiveKeys(t *lake.Table) []string {
	var keys []string
	for _, seg := range strings.Split(t.Prefix, "/") {
		if k, _, ok := strings.Cut(seg, "="); ok {
			keys = append(keys, k)
		}
	}
	return append(keys, t.Partitions...)
}

func partitionType(key string) string {
	if key == "date" {
		return "DATE"
	}
	return "VARCHAR"
}

// ctx applies the per-query timeout; a background build's queries (see asBuild) get
// BuildTimeout instead, since a build serves every later request and on a large lake
// takes longer than a request may.
func (q *Queries) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	if parent.Value(buildKey{}) != nil {
		return context.WithTimeout(parent, max(q.timeout, BuildTimeout))
	}
	return context.WithTimeout(parent, q.timeout)
}

// BuildTimeout bounds each query of a background build (an hourly board, a publication).
var BuildTimeout = 15 * time.Minute

type buildKey struct{}

// asBuild marks ctx as a background build's: its queries get BuildTimeout.
func asBuild(ctx context.Context) context.Context { return context.WithValue(ctx, buildKey{}, true) }

// AsBuild marks ctx as a background build's (serve's refresher, rebuild, demo's
// publication): each of its queries gets BuildTimeout instead of the request timeout,
// so a board that takes longer than a request may on a large or loaded machine is
// finished instead of abandoned and restarted by the next attempt.
func AsBuild(ctx context.Context) context.Context { return asBuild(ctx) }

// ErrTimeout reports a query that ran past the per-query timeout.
var ErrTimeout = errors.New("query timed out")

// ErrNotFound reports a lookup of something the lake does not hold.
var ErrNotFound = errors.New("not found")

// StoreError is a failure of the store behind a route (a missing or corrupt file, a
// driver error). Callers answer 503 and log File and Err; the text never reaches
// a client.
type StoreError struct {
	Op   string
	File string // the lake file named by the driver, when it names one
	Err  error
}

func (e *StoreError) Error() string {
	if e.File != "" {
		return e.Op + ": " + e.File + ": " + e.Err.Error()
	}
	return e.Op + ": " + e.Err.Error()
}
func (e *StoreError) Unwrap() error { return e.Err }

var fileInErr = regexp.MustCompile(`(/[^\s"']+\.parquet)`)

// wrap classifies a driver error.
func wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, ErrTimeout)
	}
	if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%s: %w", op, context.Canceled)
	}
	se := &StoreError{Op: op, Err: err}
	if m := fileInErr.FindString(err.Error()); m != "" {
		se.File = m
	}
	return se
}

// Ping checks the database answers.
func (q *Queries) Ping(ctx context.Context) error {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	return wrap(ctx, "ping", q.db.PingContext(ctx))
}
