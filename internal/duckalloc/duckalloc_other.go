//go:build !linux || !cgo

package duckalloc

// Available reports whether DuckDB was linked with its bundled jemalloc: never here.
func Available() bool { return false }

// SetDecay answers ErrUnavailable: there is no jemalloc to tune.
func SetDecay(int64) error { return ErrUnavailable }

// Decay answers ErrUnavailable: there is no jemalloc to read.
func Decay(int) (dirty, muzzy int64, err error) { return 0, 0, ErrUnavailable }
