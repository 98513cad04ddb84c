//go:build !linux

package query

import "time"

// physicalMemory is unknown off Linux; DefaultMemoryLimit then uses 4 GiB.
func physicalMemory() int64 { return 0 }

// processAlive is conservative off Linux: every spill directory is kept.
func processAlive(int) bool { return true }

// processCPU is unknown off Linux (the warm steps' debug log then shows 0).
func processCPU() time.Duration { return 0 }
