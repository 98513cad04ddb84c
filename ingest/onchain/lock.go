//go:build unix

package onchain

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockLake takes the lake's on-chain write lock (.ingest/onchain.lock, an exclusive
// flock), waiting for it: an ingest and a follower (or two ingests) writing the same
// lake would otherwise both read a partition and the second write would drop the
// first's rows. tokens.parquet and the label files are shared by every chain, so the
// lock is one per lake, not per chain. Readers never take it (files are replaced by
// rename).
func lockLake(root string) (func(), error) {
	dir := filepath.Join(root, ".ingest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "onchain.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck
		f.Close()
	}, nil
}
