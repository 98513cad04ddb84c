package lake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// The lake's use lock is a flock on the lake's directory itself. Every store holds it
// shared while open (query.Open to Close: serve, rebuild, query, sql, ingest); `mdq
// demo`, which empties the table directories and writes them again, holds it
// exclusively for its whole run. So a demo refuses a lake another process uses, and a
// store refuses a lake a demo is writing, each with ErrLakeInUse, instead of one
// removing files under the other. The directory rather than a file in it: nothing is
// added to the lake, a read-only lake can be locked too, and a hard-linked copy of a
// lake (cp -al, as the one-more-day benchmark makes) is a directory of its own, where a
// lock file would be the same inode in both.

// ErrLakeInUse is returned when the lock is held in the other mode by another process.
var ErrLakeInUse = errors.New("lake in use")

// held is one process's hold on a lake's lock: one open file (flock is per open file)
// shared by every holder of the same mode in the process.
type held struct {
	f    *os.File
	excl bool
	n    int
}

var locks = struct {
	sync.Mutex
	m map[string]*held
}{m: map[string]*held{}}

// LockShared takes dir's lock shared, without waiting, and returns its release. In a
// process holding the lock exclusively (a demo publishing what it generated) it is a
// no-op.
func LockShared(dir string) (func(), error) { return lock(dir, false) }

// LockExclusive takes dir's lock exclusively, without waiting, creating dir; nested
// holds in one process share it.
func LockExclusive(dir string) (func(), error) { return lock(dir, true) }

func lock(dir string, excl bool) (func(), error) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	locks.Lock()
	defer locks.Unlock()
	if h := locks.m[key]; h != nil {
		if excl && !h.excl {
			return nil, fmt.Errorf("%w: %s is open in this process", ErrLakeInUse, dir)
		}
		h.n++
		return release(key, h), nil
	}
	if excl {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f, excl); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			if excl {
				return nil, fmt.Errorf("%w: another mdq process (serve, rebuild, query, ingest or demo) has %s open; stop it first", ErrLakeInUse, dir)
			}
			return nil, fmt.Errorf("%w: mdq demo is writing %s; wait for it to end", ErrLakeInUse, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	h := &held{f: f, excl: excl, n: 1}
	locks.m[key] = h
	return release(key, h), nil
}

// release drops one hold of h; the last one unlocks and closes the file.
func release(key string, h *held) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			locks.Lock()
			defer locks.Unlock()
			h.n--
			if h.n == 0 {
				unflock(h.f)
				h.f.Close()
				delete(locks.m, key)
			}
		})
	}
}
