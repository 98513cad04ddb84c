package query

import (
	"runtime/debug"
	"strings"
	"unsafe"
)

// eventsArena is the memory of one events page: its events and the bytes of their
// texts, reused by a later page once this one is encoded (EventsPage.Release). A
// 50,000-event page is about 25 MB of events and texts, and allocating it afresh for
// each request made the collector run every few pages; a request that allocated
// while the heap was marked assisted the marking and took two to five times as long.
// A page nobody releases is left to the collector as before.
type eventsArena struct {
	evs    []TapeEvent
	chunks [][]byte // texts, appended within each chunk's capacity (never moved)
	cur    int      // the chunk being filled
}

const (
	eventsChunk = 1 << 20 // bytes of texts a chunk holds
	// An arena past these sizes is not kept for reuse. A page of the route's cap fits:
	// 50,001 events and the minute past them the bounded read returns, in a slice
	// that may have doubled once (about 25 MB kept).
	eventsArenaMaxEvents = 160 << 10
	eventsArenaMaxChunks = 64
)

// eventsArenas keeps up to two released arenas (about 25 MB each for the large demo
// lake's 50,000-event page; release bounds them) for the next pages. A channel
// rather than a sync.Pool: a pool drops its items at the collector's cycles, and the
// page after that grew a new arena (and faulted its pages in) again: 99 MB allocated
// by that one request, which took 400 to 500 ms against about 100.
var eventsArenas = make(chan *eventsArena, 2)

func newEventsArena() *eventsArena {
	select {
	case a := <-eventsArenas:
		return a
	default:
		return &eventsArena{}
	}
}

// reset empties the arena for a new scan: the events and texts of the previous one
// must not be read any more.
func (a *eventsArena) reset(hint int) []TapeEvent {
	// No stale string keeps a large text alive. Past len(a.evs) the slice was cleared
	// by the reset before, or never written.
	clear(a.evs)
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
	if cap(a.evs) < hint {
		a.evs = make([]TapeEvent, 0, hint)
	}
	return a.evs[:0]
}

// text returns a copy of s held by the arena. A text of more than a quarter of a
// chunk gets an allocation of its own.
func (a *eventsArena) text(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > eventsChunk/4 {
		return strings.Clone(s)
	}
	for a.cur < len(a.chunks) && cap(a.chunks[a.cur])-len(a.chunks[a.cur]) < len(s) {
		a.cur++
	}
	if a.cur == len(a.chunks) {
		a.chunks = append(a.chunks, make([]byte, 0, eventsChunk))
	}
	c := a.chunks[a.cur]
	start := len(c)
	c = append(c, s...) // within capacity: the chunk's earlier texts stay where they are
	a.chunks[a.cur] = c
	return unsafe.String(&c[start], len(s))
}

// keep records the scan's events (their slice may have grown past the arena's).
func (a *eventsArena) keep(evs []TapeEvent) { a.evs = evs }

// release hands the arena back for reuse; one KeepForReuse refuses is left to the
// collector.
func (a *eventsArena) release() {
	if cap(a.evs) > eventsArenaMaxEvents || len(a.chunks) > eventsArenaMaxChunks {
		return
	}
	if !KeepForReuse(int64(cap(a.evs))*int64(unsafe.Sizeof(TapeEvent{})) + int64(len(a.chunks))*eventsChunk) {
		return
	}
	select {
	case eventsArenas <- a:
	default: // two kept already: this one is collected
	}
}

// Release hands the page's memory back for a later page to reuse. Call it once the
// page is encoded and nothing reads it any more (the REST handler, after copying the
// body into its buffer): its strings then change under any reader. A page never
// released is simply collected.
func (p EventsPage) Release() {
	if p.arena != nil {
		p.arena.release()
	}
}

// KeepForReuse reports whether a buffer of n bytes, kept across requests for reuse
// (an events page's arena, a large response body), stays within a sixteenth of the
// Go heap's limit (the store's share of --memory-limit): two of each kind kept stay
// within a quarter of it under any budget.
func KeepForReuse(n int64) bool { return n <= debug.SetMemoryLimit(-1)/16 }
