package query

import (
	"container/list"
	"sort"
	"sync"
)

// Go-side caches under the memory budget (issue 11, bounded memory). A cache the store
// keeps across requests is a byteLRU: bounded by bytes, its limit a share of the Go
// part of --memory-limit (Budget.Go), registered by name so its use is reported
// (CacheReport) and tested against the budget. A whole-table copy is not allowed: what
// does not fit is evicted and read again from the lake (DuckDB, a few row groups).

// CacheShare is the part of the Go budget that the registered caches may hold together;
// the rest is request buffers, the HTTP server and the serving hour's boards.
const CacheShare = 0.4

// cacheShares splits CacheShare between the registered caches (by name).
var cacheShares = map[string]float64{
	// The large lake under load used 14 MB of this share's 300 MB (400 tokens).
	"onchain_balance_tokens": 0.15,
	// The busiest wallets' legs, about 25 bytes a leg: a hub of the large lake is 223,000
	// legs (5.6 MB); 0.7 of the share (708 MB of the default budget's 2.5 GB Go share)
	// holds all 495 of the large lake's wallets of 20,000 legs or more (the busiest 100
	// on ethereum among them), 27 million legs in 677 MB.
	hotLegsCache: 0.7,
	// One (hour, wallet) label is about 250 bytes; a liquidations page needs 100.
	hourLabelsCache: 0.05,
	// A whole day of the large lake's trades is 9 MB compact; a 48-hour window needs 3.
	smartDaysCache: 0.1,
}

// storeLRU is the store's byte-bounded LRU of the given name (a key of cacheShares),
// made and registered on first use; its limit is the name's share.
func storeLRU[K comparable, V any](q *Queries, name string) *byteLRU[K, V] {
	v, _ := q.ext.LoadOrStore(lruKey{name}, &lruState[K, V]{})
	st := v.(*lruState[K, V])
	st.once.Do(func() {
		st.lru = newByteLRU[K, V](name, q.cacheLimit(name))
		q.registerCache(name, st.lru)
	})
	return st.lru
}

// lruKey is the ext key of a storeLRU; lruState its value.
type lruKey struct{ name string }

type lruState[K comparable, V any] struct {
	once sync.Once
	lru  *byteLRU[K, V]
}

// cacheLimit is the byte limit of the named cache under this store's budget.
func (q *Queries) cacheLimit(name string) int64 {
	return int64(float64(q.budget.Go) * CacheShare * cacheShares[name])
}

// CacheUse is one registered cache's size and limit in bytes.
type CacheUse struct {
	Name      string `json:"name"`
	Bytes     int64  `json:"bytes"`
	Limit     int64  `json:"limit"`
	Entries   int    `json:"entries"`
	Evictions int64  `json:"evictions"`
}

type sizedCache interface{ use() CacheUse }

type cacheRegistry struct {
	mu     sync.Mutex
	caches map[string]sizedCache
}

// registerCache records c under its name, replacing the previous cache of that name (a
// cache rebuilt with its source tables).
func (q *Queries) registerCache(name string, c sizedCache) {
	q.caches.mu.Lock()
	defer q.caches.mu.Unlock()
	if q.caches.caches == nil {
		q.caches.caches = map[string]sizedCache{}
	}
	q.caches.caches[name] = c
}

// CacheReport lists the registered caches, by name.
func (q *Queries) CacheReport() []CacheUse {
	q.caches.mu.Lock()
	defer q.caches.mu.Unlock()
	out := make([]CacheUse, 0, len(q.caches.caches))
	for _, c := range q.caches.caches {
		out = append(out, c.use())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// byteLRU is a least-recently-used map bounded by the bytes its entries declare. An
// entry larger than the whole limit is not kept (the caller still uses its value).
type byteLRU[K comparable, V any] struct {
	name  string
	limit int64

	mu        sync.Mutex
	used      int64
	evictions int64
	order     *list.List // front: most recently used
	items     map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key  K
	val  V
	size int64
}

func newByteLRU[K comparable, V any](name string, limit int64) *byteLRU[K, V] {
	return &byteLRU[K, V]{name: name, limit: limit, order: list.New(), items: map[K]*list.Element{}}
}

func (c *byteLRU[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).val, true
	}
	var zero V
	return zero, false
}

func (c *byteLRU[K, V]) put(k K, v V, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.used -= e.Value.(*lruEntry[K, V]).size
		c.order.Remove(e)
		delete(c.items, k)
	}
	if size > c.limit {
		return
	}
	for c.used+size > c.limit {
		last := c.order.Back()
		le := last.Value.(*lruEntry[K, V])
		c.order.Remove(last)
		delete(c.items, le.key)
		c.used -= le.size
		c.evictions++
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v, size: size})
	c.used += size
}

// retain drops the entries whose key keep refuses.
func (c *byteLRU[K, V]) retain(keep func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if !keep(k) {
			c.used -= e.Value.(*lruEntry[K, V]).size
			c.order.Remove(e)
			delete(c.items, k)
		}
	}
}

func (c *byteLRU[K, V]) use() CacheUse {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheUse{Name: c.name, Bytes: c.used, Limit: c.limit, Entries: len(c.items), Evictions: c.evictions}
}
