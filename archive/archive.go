// Package archive is the lake's bulk archive (SPEC §4.4): the file server under
// /archive (http.ServeContent: ranges, If-Range, ETag, Last-Modified; path traversal
// refused; a per-connection bandwidth ceiling), manifest.json and the free samples
// (Refresh), and the mirror client (Mirror).
package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"mdq/ratelimit"
)

// Dir is the archive's directory under the lake root.
const Dir = "archive"

// ManifestFile and SamplesDir are the parts of the archive readable without a key.
const (
	ManifestFile = "manifest.json"
	SamplesDir   = "samples"
)

// DefaultBandwidth is SPEC §8's per-connection ceiling, in bytes per second.
const DefaultBandwidth = 50_000_000

// Root returns the archive directory of the lake at dataDir.
func Root(dataDir string) string { return filepath.Join(dataDir, Dir) }

// IsPublic reports whether an /archive URL path needs no credential: manifest.json and
// everything under samples/. A path that is not clean is never public.
func IsPublic(urlPath string) bool {
	rel, ok := strings.CutPrefix(urlPath, "/archive/")
	if !ok {
		return false
	}
	if _, err := cleanRel(rel); err != nil {
		return false
	}
	return rel == ManifestFile || strings.HasPrefix(rel, SamplesDir+"/")
}

// cleanRel validates a path relative to the archive root: slash-separated, no empty,
// "." or ".." segment, no hidden names (temporary and partial files), no backslash or
// NUL. os.Root then refuses symlinks that leave the archive.
func cleanRel(rel string) (string, error) {
	if rel == "" || strings.ContainsAny(rel, "\\\x00") || path.Clean(rel) != rel || path.IsAbs(rel) {
		return "", errors.New("bad path")
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return "", errors.New("bad path")
		}
	}
	return rel, nil
}

// Options configure the file server.
type Options struct {
	Dir       string                                          // the archive root (Root(dataDir))
	Bandwidth int64                                           // bytes per second per connection; 0: no ceiling
	Principal func(*http.Request) (ratelimit.Principal, bool) // the caller, set by the API's auth
	Recorder  interface{ RecordDownload(ratelimit.Download) } // nil: downloads are not recorded
	Log       *slog.Logger
}

// Handler serves GET and HEAD /archive/<path>. Errors are JSON {"error": ...}.
func Handler(opt Options) http.Handler {
	return &server{opt: opt}
}

type server struct{ opt Options }

func writeErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Accept-Ranges")
	w.WriteHeader(status)
	// encoding/json, not %q: Go quoting writes \x01 for a control byte, which JSON
	// does not allow.
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Write(append(b, '\n')) //nolint:errcheck
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeErr(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on the archive")
		return
	}
	rel, ok := strings.CutPrefix(r.URL.Path, "/archive/")
	if !ok {
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}
	if _, err := cleanRel(rel); err != nil {
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}
	root, err := os.OpenRoot(s.opt.Dir)
	if err != nil {
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}
	defer root.Close()
	if linked(root, rel) {
		// A symlink inside the archive (os.Root only refuses those leading out) could
		// make a keyed file readable under the public samples/ prefix.
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && s.opt.Log != nil {
			s.opt.Log.Warn("archive open", "path", rel, "err", err)
		}
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeErr(w, http.StatusNotFound, "no archive file at "+r.URL.Path)
		return
	}

	h := w.Header()
	h.Set("ETag", ETag(st.Size(), st.ModTime()))
	h.Set("Accept-Ranges", "bytes")
	switch {
	case strings.HasSuffix(rel, ".parquet"):
		h.Set("Content-Type", "application/vnd.apache.parquet")
	case strings.HasSuffix(rel, ".json"):
		h.Set("Content-Type", "application/json")
	}
	if rel == ManifestFile {
		h.Set("Cache-Control", "no-cache")
	}
	cw := &countingWriter{ResponseWriter: w}
	var out http.ResponseWriter = cw
	if s.opt.Bandwidth > 0 {
		ctx := r.Context()
		// The pacing sleep ends when the connection does (client gone, server shutting
		// down), so a cut download returns at once instead of after its next slice.
		sleep := func(d time.Duration) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
		out = &throttledWriter{countingWriter: cw, rate: s.opt.Bandwidth, start: time.Now(), sleep: sleep, now: time.Now}
	}
	http.ServeContent(out, r, path.Base(rel), st.ModTime(), f)

	if s.opt.Recorder != nil {
		d := ratelimit.Download{Time: time.Now().UTC(), Path: rel, Bytes: cw.n, Range: r.Header.Get("Range"), Status: cw.status}
		if s.opt.Principal != nil {
			if p, ok := s.opt.Principal(r); ok {
				d.CredentialID, d.Kind, d.User = p.CredentialID, p.Kind, p.User
			}
		}
		s.opt.Recorder.RecordDownload(d)
	}
}

// linked reports whether rel or any directory on its way is a symbolic link (or cannot
// be examined): the archive holds only regular files and directories the lake writer made.
func linked(root *os.Root, rel string) bool {
	segs := strings.Split(rel, "/")
	for i := range segs {
		st, err := root.Lstat(filepath.FromSlash(strings.Join(segs[:i+1], "/")))
		if err != nil {
			return !errors.Is(err, fs.ErrNotExist)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// ETag is the archive's strong validator of a file: its size and modification time.
func ETag(size int64, mod time.Time) string {
	return fmt.Sprintf("\"%x-%x\"", size, mod.UnixNano())
}

type countingWriter struct {
	http.ResponseWriter
	n      int64
	status int
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// throttledWriter paces writes so that the bytes sent since start never run ahead of
// rate: it writes in slices of at most a twentieth of a second's worth and sleeps
// whenever it is early.
type throttledWriter struct {
	*countingWriter
	rate  int64
	start time.Time
	sent  int64
	sleep func(time.Duration)
	now   func() time.Time
}

func (t *throttledWriter) Write(p []byte) (int, error) {
	chunk := int(max(t.rate/20, 4096))
	written := 0
	for len(p) > 0 {
		n := min(len(p), chunk)
		m, err := t.countingWriter.Write(p[:n])
		written += m
		t.sent += int64(m)
		if err != nil {
			return written, err
		}
		p = p[n:]
		due := time.Duration(float64(t.sent) / float64(t.rate) * float64(time.Second))
		if early := due - t.now().Sub(t.start); early > 0 {
			t.sleep(early)
		}
	}
	return written, nil
}

var _ io.Writer = (*throttledWriter)(nil)
