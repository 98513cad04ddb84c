//go:build !unix

package lake

import (
	"errors"
	"os"
)

// Without flock the lock holds within this process only (its registry in lock.go).
var errWouldBlock = errors.New("would block")

func flock(*os.File, bool) error { return nil }

func unflock(*os.File) {}
