//go:build unix

package query

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time the process has used so far (DuckDB's
// threads included): the warm steps' and the board benchmarks' CPU figures, which a
// shared machine's load does not inflate as it does wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
