//go:build !linux

package query

// physicalMemory is unknown off Linux; DefaultMemoryLimit then uses 4 GiB.
func physicalMemory() int64 { return 0 }
