package query

import (
	"fmt"
	"os"
	"sync"
	"time"

	"mdq/lake"
)

// The request path of the per-day tables (the market list, the liquidations page) plans
// every request from the source's date partitions and the tables' sidecars. Listing and
// stating every partition per request grew with the lake (two listings and a stat of
// each trades file per market list page), so the listing is kept for at most
// dayFilesFresh, as the legs' freshness check is (legsCheckEvery), and a sidecar is
// parsed again only when its file's size or modification time changed (every
// publication rewrites it through a rename). A source file replaced within that second
// is seen at the next listing: until then the request is answered as the lake stood a
// moment before, never from a partition that does not match the listing it planned with.

const dayFilesFresh = time.Second

type dayFilesKey struct{}

type dayFilesCache struct {
	mu       sync.Mutex
	parts    map[string]cachedParts   // source table name -> listing
	sidecars map[string]cachedSidecar // sidecar path -> parsed content
}

type cachedParts struct {
	at    time.Time
	files map[string]dateFile
}

type cachedSidecar struct {
	sig string
	v   any // map[string]V as readSidecar[V] returned it; never modified
}

func (q *Queries) dayFiles() *dayFilesCache {
	v, _ := q.ext.LoadOrStore(dayFilesKey{}, &dayFilesCache{parts: map[string]cachedParts{}, sidecars: map[string]cachedSidecar{}})
	return v.(*dayFilesCache)
}

// cachedDatePartitions is datePartitions of t at most dayFilesFresh old. The map is
// shared: callers must not modify it.
func (q *Queries) cachedDatePartitions(t *lake.Table) (map[string]dateFile, error) {
	c := q.dayFiles()
	c.mu.Lock()
	p, ok := c.parts[t.Name]
	c.mu.Unlock()
	if ok && time.Since(p.at) < dayFilesFresh {
		return p.files, nil
	}
	at := time.Now()
	files, err := datePartitions(q.dir, t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.parts[t.Name] = cachedParts{at: at, files: files}
	c.mu.Unlock()
	return files, nil
}

// cachedSidecarOf is readSidecar[V](path), parsed again only when the file's size or
// modification time changed. The map is shared: callers must not modify it.
func cachedSidecarOf[V any](q *Queries, path string) (map[string]V, error) {
	sig := ""
	if st, err := os.Stat(path); err == nil {
		sig = fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())
	}
	c := q.dayFiles()
	c.mu.Lock()
	e, ok := c.sidecars[path]
	c.mu.Unlock()
	if ok && sig != "" && e.sig == sig {
		if m, ok := e.v.(map[string]V); ok {
			return m, nil
		}
	}
	m, err := readSidecar[V](path)
	if err != nil {
		return nil, err
	}
	if sig != "" {
		c.mu.Lock()
		c.sidecars[path] = cachedSidecar{sig: sig, v: m}
		c.mu.Unlock()
	}
	return m, nil
}
