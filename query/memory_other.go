//go:build !linux

package query

// physicalMemory is unknown off Linux; DefaultMemoryLimit then uses 4 GiB.
func physicalMemory() int64 { return 0 }

// processAlive is conservative off Linux: every spill directory is kept.
func processAlive(int) bool { return true }
