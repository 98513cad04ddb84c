//go:build unix

package handlers_test

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time the process has used (the benchmarks'
// cpu_ms/op).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
