//go:build unix

package lake

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

// flock takes f's lock without waiting (EWOULDBLOCK when held in the other mode).
func flock(f *os.File, excl bool) error {
	how := syscall.LOCK_SH
	if excl {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unflock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) } //nolint:errcheck // closing the file drops it too
