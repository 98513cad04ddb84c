//go:build linux && cgo

package duckalloc

/*
#include <stddef.h>
#include <stdlib.h>
#include <sys/types.h>

// Weak: a DuckDB build without the bundled jemalloc (DuckDB bundles it on Linux only)
// leaves it NULL, so Available reports false instead of the link failing.
extern int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) __attribute__((weak));

static int mdq_have(void) { return duckdb_je_mallctl != NULL; }

static int mdq_set_ssize(const char *name, ssize_t v) {
	return duckdb_je_mallctl(name, NULL, NULL, &v, sizeof v);
}

static int mdq_get_ssize(const char *name, ssize_t *v) {
	size_t n = sizeof *v;
	return duckdb_je_mallctl(name, v, &n, NULL, 0);
}

static int mdq_get_unsigned(const char *name, unsigned *v) {
	size_t n = sizeof *v;
	return duckdb_je_mallctl(name, v, &n, NULL, 0);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	_ "github.com/duckdb/duckdb-go/v2" // links the library whose allocator this tunes
)

// Available reports whether DuckDB was linked with its bundled jemalloc.
func Available() bool { return C.mdq_have() != 0 }

// SetDecay sets how long jemalloc keeps pages DuckDB has freed before it hands them
// back to the kernel (its dirty and muzzy decay times, in milliseconds; -1 never):
// for the arenas that exist now and, as the default, for those made later, except the
// arena of huge allocations, which purges at once.
func SetDecay(ms int64) error {
	if !Available() {
		return ErrUnavailable
	}
	for _, name := range []string{"arenas.dirty_decay_ms", "arenas.muzzy_decay_ms"} {
		if err := setSsize(name, ms); err != nil {
			return err
		}
	}
	var n C.unsigned
	if err := ctl("arenas.narenas", func(c *C.char) C.int { return C.mdq_get_unsigned(c, &n) }); err != nil {
		return err
	}
	for i := 0; i < int(n); i++ {
		switch d, _, err := Decay(i); {
		case errors.Is(err, syscall.EFAULT):
			// Not initialised, no thread has used it yet: it takes the default set above
			// when one does.
			continue
		case err != nil:
			return err
		case d == 0:
			// An arena that purges at once: jemalloc's arena for huge allocations (from
			// 256 MB in DuckDB), made with decay 0 whatever the default, since such
			// allocations are few and seldom reused. It stays so.
			continue
		}
		for _, kind := range []string{"dirty", "muzzy"} {
			if err := setSsize(fmt.Sprintf("arena.%d.%s_decay_ms", i, kind), ms); err != nil {
				return err
			}
		}
	}
	return nil
}

// Decay returns the dirty and muzzy decay times of arena i (-1 for the default given
// to arenas made later).
func Decay(i int) (dirty, muzzy int64, err error) {
	prefix := "arenas."
	if i >= 0 {
		prefix = fmt.Sprintf("arena.%d.", i)
	}
	var d, m C.ssize_t
	if err := ctl(prefix+"dirty_decay_ms", func(c *C.char) C.int { return C.mdq_get_ssize(c, &d) }); err != nil {
		return 0, 0, err
	}
	if err := ctl(prefix+"muzzy_decay_ms", func(c *C.char) C.int { return C.mdq_get_ssize(c, &m) }); err != nil {
		return 0, 0, err
	}
	return int64(d), int64(m), nil
}

func setSsize(name string, v int64) error {
	return ctl(name, func(c *C.char) C.int { return C.mdq_set_ssize(c, C.ssize_t(v)) })
}

// ctl runs one mallctl call on name; a non-zero result is an errno.
func ctl(name string, call func(*C.char) C.int) error {
	if !Available() {
		return ErrUnavailable
	}
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	if r := call(c); r != 0 {
		return fmt.Errorf("duckalloc: mallctl %s: %w", name, syscall.Errno(r))
	}
	return nil
}
