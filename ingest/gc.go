package ingest

import (
	"os"
	"runtime/debug"
	"sync"
)

// bulkGCPercent is the Go collector's target while a stage is open. A bulk load
// allocates fast (every parsed record, every staged value) and keeps little: at the
// default 100 the collector marks the live Arrow batches again every few milliseconds,
// about a tenth of a node-fills ingest's CPU. At 400 it runs a quarter as often; the
// heap is still held under the process's memory budget, because the soft limit
// (debug.SetMemoryLimit, set from --memory-limit before any command runs) makes the
// collector run whenever the heap nears it, whatever the percentage. GOGC set in the
// environment is the operator's choice and is left alone.
const bulkGCPercent = 400

var bulkGC struct {
	sync.Mutex
	open int // stages open
	prev int // the percentage before the first
}

// bulkGCStart raises the collector's target for an opening stage.
func bulkGCStart() {
	if os.Getenv("GOGC") != "" {
		return
	}
	bulkGC.Lock()
	defer bulkGC.Unlock()
	if bulkGC.open == 0 {
		bulkGC.prev = debug.SetGCPercent(bulkGCPercent)
	}
	bulkGC.open++
}

// bulkGCEnd restores it when the last stage closes.
func bulkGCEnd() {
	if os.Getenv("GOGC") != "" {
		return
	}
	bulkGC.Lock()
	defer bulkGC.Unlock()
	bulkGC.open--
	if bulkGC.open == 0 {
		debug.SetGCPercent(bulkGC.prev)
	}
}
