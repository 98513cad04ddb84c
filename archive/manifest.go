package archive

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"mdq/internal/duckconn"
	"mdq/lake"
)

// SampleRows is the number of rows in each free sample: the first rows of the newest
// full-day file of each venue and stream.
const SampleRows = 1000

// Manifest is manifest.json: every archive file with row count, byte size and
// SHA-256, the free samples, and one block per venue in the shape existing archive
// clients parse. docs/ACCESS.md documents every field.
type Manifest struct {
	Version       int          `json:"version"`
	GeneratedAt   string       `json:"generated_at"`
	RangeRequests bool         `json:"range_requests"`
	Auth          Auth         `json:"auth"`
	Files         []Entry      `json:"files"`    // every (venue, date, file)
	Families      []Entry      `json:"families"` // every (asset, tenor, date)
	Samples       []Entry      `json:"samples"`
	Venues        []VenueBlock `json:"venues"`
	// Skipped lists files that could not be read as Parquet (path, bytes, modified):
	// left out of files and samples, logged, and re-examined when they change.
	Skipped []Entry `json:"skipped,omitempty"`
}

// Auth tells clients how to send the key.
type Auth struct {
	Scheme string `json:"scheme"`
	Header string `json:"header"`
}

// Entry is one archive file. Path is relative to /archive/.
type Entry struct {
	Path     string `json:"path"`
	Venue    string `json:"venue"`
	Asset    string `json:"asset,omitempty"`
	Tenor    string `json:"tenor,omitempty"`
	Date     string `json:"date,omitempty"`
	File     string `json:"file"`
	Stream   string `json:"stream"`
	Rows     int64  `json:"rows"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	Modified string `json:"modified"`         // RFC3339Nano, UTC
	Source   string `json:"source,omitempty"` // samples: the file the rows come from
}

// VenueBlock is the per-venue manifest older archive clients read.
type VenueBlock struct {
	Venue         string              `json:"venue"`
	GeneratedAt   string              `json:"generated_at"`
	Partitioning  string              `json:"partitioning"`
	Schema        map[string][]Column `json:"schema"` // file name → columns
	Auth          Auth                `json:"auth"`
	RangeRequests bool                `json:"range_requests"`
	FreeSample    map[string]string   `json:"free_sample"` // stream → path under /archive/
	Dates         []VenueDate         `json:"dates"`
}

// Column is one column of a file's schema.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// VenueDate lists one day's streams of a venue.
type VenueDate struct {
	Date    string                `json:"date"`
	Streams map[string]StreamStat `json:"streams"`
}

// StreamStat is a stream file's size.
type StreamStat struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// ReadManifest reads manifest.json of the archive at dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	return &m, nil
}

// found is one data file of the archive as listed on disk.
type found struct {
	Entry
	abs string
	mod time.Time
}

// list walks the archive for venue=<v>/date=<d>/<f>.parquet and
// venue=<v>/asset=<a>/tenor=<t>/date=<d>/<f>.parquet, skipping hidden files and samples.
func list(dir string) (files, families []found, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == SamplesDir || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") || !strings.HasSuffix(d.Name(), ".parquet") {
			return nil
		}
		segs := strings.Split(rel, "/")
		kv := map[string]string{}
		for _, s := range segs[:len(segs)-1] {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil
			}
			kv[k] = v
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := found{abs: p, mod: info.ModTime().UTC(), Entry: Entry{
			Path: rel, Venue: kv["venue"], Asset: kv["asset"], Tenor: kv["tenor"], Date: kv["date"],
			File: d.Name(), Stream: strings.TrimSuffix(d.Name(), ".parquet"),
			Bytes: info.Size(), Modified: info.ModTime().UTC().Format(time.RFC3339Nano),
		}}
		switch {
		case len(segs) == 3 && e.Venue != "" && e.Date != "":
			files = append(files, e)
		case len(segs) == 5 && e.Venue != "" && e.Asset != "" && e.Tenor != "" && e.Date != "":
			families = append(families, e)
		}
		return nil
	})
	return files, families, err
}

// Refresh regenerates the free samples and manifest.json of the lake at dataDir when
// archive files changed since the manifest was written (added, removed, resized or
// touched). Hashes and row counts of unchanged files are reused from the previous
// manifest, so a refresh after a new day costs one pass over the new files. Both are
// written atomically; readers see the old or the new manifest, never a mix.
func Refresh(ctx context.Context, dataDir string) error {
	_, err := RefreshDir(ctx, Root(dataDir))
	return err
}

// RefreshDir is Refresh on an archive directory; it reports whether it wrote.
func RefreshDir(ctx context.Context, dir string) (bool, error) {
	files, families, err := list(dir)
	if err != nil {
		return false, err
	}
	old, _ := ReadManifest(dir)
	prev := map[string]Entry{}
	if old != nil {
		for _, list := range [][]Entry{old.Files, old.Families, old.Samples} {
			for _, e := range list {
				prev[e.Path] = e
			}
		}
		if unchanged(old, files, families) && samplesPresent(dir, old) {
			return false, nil
		}
	}
	m := &Manifest{Version: 1, GeneratedAt: time.Now().UTC().Format(time.RFC3339), RangeRequests: true,
		Auth: Auth{Scheme: "header", Header: "X-API-Key"}}
	// A file that cannot be read is skipped and logged, not fatal: one corrupt file
	// must not freeze the manifest (old sizes and hashes, new files never listed).
	fill := func(fs []found) ([]found, error) {
		out := make([]found, 0, len(fs))
		for _, f := range fs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if p, ok := prev[f.Path]; ok && p.Bytes == f.Bytes && p.Modified == f.Modified && p.SHA256 != "" {
				f.Rows, f.SHA256 = p.Rows, p.SHA256
			} else if f.Rows, f.SHA256, err = describe(f.abs); err != nil {
				slog.Warn("archive: file skipped from the manifest", "file", f.Path, "err", err.Error())
				m.Skipped = append(m.Skipped, Entry{Path: f.Path, Venue: f.Venue, File: f.File, Stream: f.Stream,
					Date: f.Date, Bytes: f.Bytes, Modified: f.Modified})
				continue
			}
			out = append(out, f)
		}
		return out, nil
	}
	if files, err = fill(files); err != nil {
		return false, err
	}
	if families, err = fill(families); err != nil {
		return false, err
	}
	m.Files, m.Families = entries(files), entries(families)
	if m.Samples, err = writeSamples(ctx, dir, files, prev); err != nil {
		return false, err
	}
	m.Venues = venueBlocks(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return false, err
	}
	return true, lake.WriteFileAtomic(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

func entries(fs []found) []Entry {
	out := make([]Entry, len(fs))
	for i, f := range fs {
		out[i] = f.Entry
	}
	return out
}

// unchanged reports whether the files on disk are those the old manifest describes
// (listed or skipped) with the same sizes and times.
func unchanged(old *Manifest, files, families []found) bool {
	known := map[string]Entry{}
	for _, list := range [][]Entry{old.Files, old.Families, old.Skipped} {
		for _, e := range list {
			known[e.Path] = e
		}
	}
	if len(known) != len(files)+len(families) {
		return false
	}
	for _, fs := range [][]found{files, families} {
		for _, f := range fs {
			e, ok := known[f.Path]
			if !ok || e.Bytes != f.Bytes || e.Modified != f.Modified {
				return false
			}
		}
	}
	return true
}

func samplesPresent(dir string, m *Manifest) bool {
	for _, s := range m.Samples {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.Path)))
		if err != nil || st.Size() != s.Bytes {
			return false
		}
	}
	return true
}

// describe returns a Parquet file's row count (from its footer) and SHA-256.
func describe(p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, "", err
	}
	rows := pf.NumRows()
	sum, err := HashFile(p)
	return rows, sum, err
}

// HashFile returns the hex SHA-256 of a file.
func HashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeSamples writes samples/venue=<v>/<stream>.parquet: the first SampleRows rows of
// the newest complete-day file (with rows) of each venue and stream. A sample whose source is
// unchanged is kept.
func writeSamples(ctx context.Context, dir string, files []found, prev map[string]Entry) ([]Entry, error) {
	// The newest complete day is the newest date before the venue's last one (the day
	// still being written); among those, a file with rows. A venue with one day, or
	// without a complete day holding rows, falls back to its newest file with rows.
	last := map[string]string{}
	for _, f := range files {
		last[f.Venue] = max(last[f.Venue], f.Date)
	}
	rank := func(f found) int {
		switch {
		case f.Rows > 0 && f.Date < last[f.Venue]:
			return 2
		case f.Rows > 0:
			return 1
		}
		return 0
	}
	newest := map[[2]string]found{}
	for _, f := range files {
		k := [2]string{f.Venue, f.Stream}
		cur, ok := newest[k]
		if !ok || rank(f) > rank(cur) || rank(f) == rank(cur) && f.Date > cur.Date {
			newest[k] = f
		}
	}
	keys := make([][2]string, 0, len(newest))
	for k := range newest {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	var db *sql.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	var out []Entry
	for _, k := range keys {
		src := newest[k]
		rel := path.Join(SamplesDir, "venue="+k[0], src.File)
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if p, ok := prev[rel]; ok && p.Source == src.Path {
			if ps, ok := prev[src.Path]; ok && ps.Modified == src.Modified && ps.Bytes == src.Bytes {
				if st, err := os.Stat(abs); err == nil && st.Size() == p.Bytes {
					out = append(out, p)
					continue
				}
			}
		}
		if db == nil {
			var err error
			if db, err = duckconn.Open(""); err != nil {
				return nil, err
			}
			db.SetMaxOpenConns(1)
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, err
		}
		tmp, err := lake.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-")
		if err != nil {
			return nil, err
		}
		tmpName := tmp.Name()
		tmp.Close()
		// COPY takes no bound parameters; both paths are generated here and quoted.
		q := fmt.Sprintf("COPY (SELECT * FROM read_parquet(%s, hive_partitioning = false) LIMIT %d) TO %s (FORMAT parquet, COMPRESSION zstd)",
			lake.QuoteString(src.abs), SampleRows, lake.QuoteString(tmpName))
		if _, err := db.ExecContext(ctx, q); err != nil {
			os.Remove(tmpName)
			return nil, fmt.Errorf("sample %s: %w", rel, err)
		}
		if err := os.Rename(tmpName, abs); err != nil {
			os.Remove(tmpName)
			return nil, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, err
		}
		rows, sum, err := describe(abs)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Path: rel, Venue: k[0], File: src.File, Stream: src.Stream, Rows: rows, Bytes: st.Size(),
			SHA256: sum, Modified: st.ModTime().UTC().Format(time.RFC3339Nano), Source: src.Path})
	}
	return out, nil
}

// venueBlocks builds the per-venue blocks from the full-day files.
func venueBlocks(m *Manifest) []VenueBlock {
	byVenue := map[string]*VenueBlock{}
	dates := map[string]map[string]*VenueDate{}
	var names []string
	for _, e := range m.Files {
		b := byVenue[e.Venue]
		if b == nil {
			b = &VenueBlock{Venue: e.Venue, GeneratedAt: m.GeneratedAt,
				Partitioning: "venue=" + e.Venue + "/date=<YYYY-MM-DD>/<stream>.parquet",
				Schema:       map[string][]Column{}, Auth: m.Auth, RangeRequests: true, FreeSample: map[string]string{}}
			byVenue[e.Venue] = b
			dates[e.Venue] = map[string]*VenueDate{}
			names = append(names, e.Venue)
		}
		if _, ok := b.Schema[e.File]; !ok {
			b.Schema[e.File] = schemaOf(e.Venue, e.File)
		}
		d := dates[e.Venue][e.Date]
		if d == nil {
			d = &VenueDate{Date: e.Date, Streams: map[string]StreamStat{}}
			dates[e.Venue][e.Date] = d
		}
		d.Streams[e.Stream] = StreamStat{Rows: e.Rows, Bytes: e.Bytes}
	}
	for _, s := range m.Samples {
		if b := byVenue[s.Venue]; b != nil {
			b.FreeSample[s.Stream] = s.Path
		}
	}
	sort.Strings(names)
	out := make([]VenueBlock, 0, len(names))
	for _, v := range names {
		b := byVenue[v]
		for _, d := range dates[v] {
			b.Dates = append(b.Dates, *d)
		}
		sort.Slice(b.Dates, func(i, j int) bool { return b.Dates[i].Date < b.Dates[j].Date })
		out = append(out, *b)
	}
	return out
}

// schemaOf returns a file's columns from the lake registry.
func schemaOf(venue, file string) []Column {
	for _, t := range lake.Tables() {
		if t.Prefix == "archive/venue="+venue && len(t.Partitions) == 1 && t.Partitions[0] == "date" && t.File == file {
			out := make([]Column, len(t.Columns))
			for i, c := range t.Columns {
				out[i] = Column{Name: c.Name, Type: c.Type}
			}
			return out
		}
	}
	return []Column{}
}
