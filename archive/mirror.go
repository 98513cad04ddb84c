package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mdq/lake"
)

// MirrorOptions configure Mirror.
type MirrorOptions struct {
	From     string   // base URL of a remote mdq (http://host:8080)
	Key      string   // API key sent as X-API-Key
	DataDir  string   // local lake; files land under DataDir/archive
	Include  []string // path.Match globs on paths relative to /archive/; empty: all
	Parallel int      // concurrent downloads; 0: 4
	Retries  int      // resumed attempts per file after a cut transfer; 0: 5
	Client   *http.Client

	// Progress, when set, is told the total bytes to fetch once, then every chunk.
	OnTotal func(files int, bytes int64)
	OnBytes func(n int64)
	OnFile  func(path, status string) // status: skipped, downloaded, failed
}

// MirrorResult counts what a run did.
type MirrorResult struct {
	Files      int   // files selected
	Skipped    int   // already present and identical
	Downloaded int   // fetched (in whole or resumed)
	Resumed    int   // downloads that continued a partial file with a Range request
	Bytes      int64 // bytes received
	// Remaining are the selected files not in place when the run ended (failed, not
	// started, or cut by an interrupt), sorted.
	Remaining []string
	// Unmatched are the --include globs that selected no file of the manifest.
	Unmatched []string
}

// ErrUnauthorized is the remote refusing the key (401 or 403): the run stops at the
// first such answer, since every other file would be refused the same way.
var ErrUnauthorized = errors.New("the remote archive refused the key")

// NormalizeBase turns host:port (or a bare host) into http://host:port; a URL with a
// scheme is kept. Trailing slashes are dropped.
func NormalizeBase(from string) string {
	from = strings.TrimRight(strings.TrimSpace(from), "/")
	if !strings.Contains(from, "://") {
		from = "http://" + from
	}
	return from
}

// stateFile remembers, per mirrored file, the size, mtime and hash it was verified at,
// so a second run need not re-hash unchanged multi-GiB files.
const stateFile = ".mirror-state.json"

type fileState struct {
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	Modified string `json:"modified"`
}

// Mirror copies a remote archive: it reads the remote manifest, downloads what is
// missing or changed (resuming partial files with a Range request and If-Range),
// verifies size and SHA-256, and renames each file into place atomically. Running it
// again catches up. The remote manifest is written last when every file is present.
func Mirror(ctx context.Context, opt MirrorOptions) (MirrorResult, error) {
	var res MirrorResult
	if opt.Parallel <= 0 {
		opt.Parallel = 4
	}
	if opt.Retries <= 0 {
		opt.Retries = 5
	}
	if opt.Client == nil {
		opt.Client = &http.Client{}
	}
	base := NormalizeBase(opt.From)
	for _, g := range opt.Include {
		if _, err := path.Match(g, ""); err != nil {
			return res, fmt.Errorf("--include %q: %w", g, err)
		}
	}
	dir := Root(opt.DataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}

	// Read the remote manifest.
	rawManifest, m, err := fetchManifest(ctx, opt.Client, base, opt.Key)
	if err != nil {
		return res, err
	}
	var todo []Entry
	hit := map[string]bool{}
	for _, list := range [][]Entry{m.Files, m.Families, m.Samples} {
		for _, e := range list {
			if _, err := cleanRel(e.Path); err != nil {
				return res, fmt.Errorf("remote manifest names a bad path %q", e.Path)
			}
			if len(opt.Include) == 0 {
				todo = append(todo, e)
				continue
			}
			matched := false
			for _, g := range opt.Include {
				if included(e.Path, []string{g}) {
					hit[g], matched = true, true
				}
			}
			if matched {
				todo = append(todo, e)
			}
		}
	}
	for _, g := range opt.Include {
		if !hit[g] {
			res.Unmatched = append(res.Unmatched, g)
		}
	}
	res.Files = len(todo)

	state := map[string]fileState{}
	if b, err := os.ReadFile(filepath.Join(dir, stateFile)); err == nil {
		json.Unmarshal(b, &state) //nolint:errcheck // a bad state file only costs re-hashing
	}
	var stateMu sync.Mutex

	// Decide what to fetch.
	var fetch []Entry
	var total int64
	for _, e := range todo {
		local := filepath.Join(dir, filepath.FromSlash(e.Path))
		st, err := os.Stat(local)
		if err == nil && st.Size() == e.Bytes {
			mod := st.ModTime().UTC().Format(time.RFC3339Nano)
			s, ok := state[e.Path]
			if ok && s.Bytes == e.Bytes && s.Modified == mod && s.SHA256 == e.SHA256 {
				res.Skipped++
				report(opt.OnFile, e.Path, "skipped")
				continue
			}
			if sum, err := HashFile(local); err == nil && sum == e.SHA256 {
				state[e.Path] = fileState{Bytes: e.Bytes, SHA256: sum, Modified: mod}
				res.Skipped++
				report(opt.OnFile, e.Path, "skipped")
				continue
			}
		}
		fetch = append(fetch, e)
		total += e.Bytes
	}
	if opt.OnTotal != nil {
		opt.OnTotal(len(fetch), total)
	}

	// Download with bounded parallelism.
	var received atomic.Int64
	onBytes := func(n int64) {
		received.Add(n)
		if opt.OnBytes != nil {
			opt.OnBytes(n)
		}
	}
	sem := make(chan struct{}, opt.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var denied error // the first 401/403: the run stops with it alone
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	done := map[string]bool{}
	for _, e := range fetch {
		sem <- struct{}{}
		if dctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func(e Entry) {
			defer wg.Done()
			defer func() { <-sem }()
			resumed, err := download(dctx, opt, base, dir, e, onBytes)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				switch {
				case errors.Is(err, ErrUnauthorized):
					if denied == nil {
						denied = err
						stop()
					}
				case dctx.Err() != nil && errors.Is(err, context.Canceled):
					// cut by the refusal or an interrupt: listed in Remaining, not failed
				default:
					errs = append(errs, fmt.Errorf("%s: %w", e.Path, err))
					report(opt.OnFile, e.Path, "failed")
				}
				return
			}
			done[e.Path] = true
			res.Downloaded++
			if resumed {
				res.Resumed++
			}
			report(opt.OnFile, e.Path, "downloaded")
			if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Path))); err == nil {
				stateMu.Lock()
				state[e.Path] = fileState{Bytes: e.Bytes, SHA256: e.SHA256, Modified: st.ModTime().UTC().Format(time.RFC3339Nano)}
				stateMu.Unlock()
			}
		}(e)
	}
	wg.Wait()
	res.Bytes = received.Load()
	for _, e := range fetch {
		if !done[e.Path] {
			res.Remaining = append(res.Remaining, e.Path)
		}
	}
	sort.Strings(res.Remaining)
	if denied != nil {
		errs = []error{denied}
	} else if ctx.Err() != nil {
		errs = []error{ctx.Err()} // interrupted: one error, not one per cut file
	}

	if b, err := json.MarshalIndent(state, "", " "); err == nil {
		if err := lake.WriteFileAtomic(filepath.Join(dir, stateFile), b); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && len(opt.Include) == 0 {
		// A complete mirror serves the remote manifest as is.
		if err := lake.WriteFileAtomic(filepath.Join(dir, ManifestFile), rawManifest); err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

func report(f func(string, string), p, s string) {
	if f != nil {
		f(p, s)
	}
}

func included(p string, globs []string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, p); ok {
			return true
		}
		// A glob without a slash matches at any depth by file name or first segments.
		if ok, _ := path.Match(g, path.Base(p)); ok && !strings.Contains(g, "/") {
			return true
		}
		if strings.HasPrefix(p, strings.TrimSuffix(g, "/")+"/") {
			return true
		}
	}
	return false
}

func fetchManifest(ctx context.Context, c *http.Client, base, key string) ([]byte, *Manifest, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/archive/"+ManifestFile, nil)
	if err != nil {
		return nil, nil, err
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 512<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, nil, fmt.Errorf("%w (%s on the manifest)", ErrUnauthorized, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("manifest: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	return b, &m, nil
}

// partialMeta sits beside a partial file: which remote version it holds the start of.
type partialMeta struct {
	SHA256 string `json:"sha256"`
	ETag   string `json:"etag"`
}

// download fetches one file into a hidden .partial beside its target, resuming what
// an earlier attempt or run left, then verifies and renames it into place.
func download(ctx context.Context, opt MirrorOptions, base, dir string, e Entry, onBytes func(int64)) (resumed bool, err error) {
	final := filepath.Join(dir, filepath.FromSlash(e.Path))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return false, err
	}
	partial := filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".partial")
	metaPath := partial + ".json"
	var meta partialMeta
	if b, err := os.ReadFile(metaPath); err == nil {
		json.Unmarshal(b, &meta) //nolint:errcheck
	}
	if meta.SHA256 != e.SHA256 { // a partial of another version is useless
		os.Remove(partial)
		meta = partialMeta{SHA256: e.SHA256}
	}
	var lastErr error
	for attempt := 0; attempt <= opt.Retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return resumed, err
		}
		var off int64
		if st, err := os.Stat(partial); err == nil {
			off = st.Size()
		}
		if off > e.Bytes {
			os.Remove(partial)
			off = 0
		}
		if off == e.Bytes {
			break
		}
		r, err := fetchRange(ctx, opt, base, e, partial, &meta, metaPath, off, onBytes)
		resumed = resumed || r
		if err == nil {
			break
		}
		lastErr = err
		if errors.Is(err, errPermanent) || errors.Is(err, ErrUnauthorized) {
			return resumed, err
		}
	}
	st, err := os.Stat(partial)
	if err != nil || st.Size() != e.Bytes {
		if lastErr == nil {
			lastErr = fmt.Errorf("size mismatch")
		}
		return resumed, fmt.Errorf("incomplete after %d attempts: %w", opt.Retries+1, lastErr)
	}
	sum, err := HashFile(partial)
	if err != nil {
		return resumed, err
	}
	if sum != e.SHA256 {
		os.Remove(partial)
		os.Remove(metaPath)
		return resumed, fmt.Errorf("sha256 %s, manifest says %s: discarded, run again", sum, e.SHA256)
	}
	if err := syncPath(partial); err != nil {
		return resumed, err
	}
	if t, err := time.Parse(time.RFC3339Nano, e.Modified); err == nil {
		os.Chtimes(partial, t, t) //nolint:errcheck // keeps the remote manifest's validators true locally
	}
	if err := os.Rename(partial, final); err != nil {
		return resumed, err
	}
	os.Remove(metaPath)
	return resumed, nil
}

var errPermanent = errors.New("permanent")

// fetchRange appends to partial from off, or rewrites it from 0 when the server sends
// the whole file (If-Range failed: the remote file changed).
func fetchRange(ctx context.Context, opt MirrorOptions, base string, e Entry, partial string, meta *partialMeta, metaPath string, off int64, onBytes func(int64)) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/archive/"+e.Path, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-API-Key", opt.Key)
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
		if meta.ETag != "" {
			req.Header.Set("If-Range", meta.ETag)
		}
	}
	resp, err := opt.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE
	resumed := false
	switch resp.StatusCode {
	case http.StatusPartialContent:
		var start int64
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-", &start); err != nil || start != off {
			return false, fmt.Errorf("unexpected Content-Range %q for offset %d", resp.Header.Get("Content-Range"), off)
		}
		flags |= os.O_APPEND
		resumed = true
	case http.StatusOK:
		flags |= os.O_TRUNC
	case http.StatusUnauthorized, http.StatusForbidden:
		return false, fmt.Errorf("%w (%s)", ErrUnauthorized, resp.Status)
	case http.StatusNotFound:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, fmt.Errorf("%w: %s: %s", errPermanent, resp.Status, strings.TrimSpace(string(b)))
	case http.StatusRequestedRangeNotSatisfiable:
		os.Remove(partial) // the remote file shrank: start over
		return false, errors.New(resp.Status)
	default:
		return false, errors.New(resp.Status)
	}
	if et := resp.Header.Get("ETag"); et != "" && et != meta.ETag {
		meta.ETag = et
		if b, err := json.Marshal(meta); err == nil {
			lake.WriteFileAtomic(metaPath, b) //nolint:errcheck // without it a resume starts over
		}
	}
	f, err := os.OpenFile(partial, flags, 0o644)
	if err != nil {
		return resumed, err
	}
	_, cerr := io.Copy(f, &countingReader{r: resp.Body, on: onBytes})
	if err := f.Close(); err != nil && cerr == nil {
		cerr = err
	}
	return resumed, cerr
}

type countingReader struct {
	r  io.Reader
	on func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.on(int64(n))
	}
	return n, err
}

func syncPath(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
