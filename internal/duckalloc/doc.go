// Package duckalloc tunes the allocator DuckDB is linked with: the jemalloc that
// duckdb-go's static library bundles on Linux (its symbols prefixed duckdb_je_),
// through jemalloc's own control interface, mallctl. Elsewhere (or without cgo) DuckDB
// uses the system allocator and every call answers ErrUnavailable.
package duckalloc

import "errors"

// ErrUnavailable: DuckDB is not linked with its bundled jemalloc here.
var ErrUnavailable = errors.New("duckalloc: DuckDB is not linked with its bundled jemalloc")
