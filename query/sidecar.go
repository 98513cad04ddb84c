package query

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"mdq/lake"
)

// A sidecar records, per partition of a derived table, what it was computed from (the
// source file's signature, and whatever else the table needs), so a publication
// recomputes only the partitions whose source changed. The legs, the per-day tables
// and the perpetuals' partial sums keep one each, as JSON beside their files.

// readSidecar reads the sidecar at path. A missing one is empty (nothing published
// yet); so is a damaged one, which only costs a full republication.
func readSidecar[V any](path string) (map[string]V, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]V{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]V{}
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]V{}, nil
	}
	return out, nil
}

// writeSidecar replaces the sidecar at path atomically (temp, fsync, rename), so a
// publication cancelled between two partitions leaves the previous record whole.
func writeSidecar(path string, m any) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return lake.WriteFileAtomic(path, append(b, '\n'))
}

// removePartitionFile removes the file of t's partition with the given partition
// values (a source partition gone), and its directory when that is left empty.
func removePartitionFile(dir string, t *lake.Table, values ...string) error {
	rel, err := t.Path(values...)
	if err != nil {
		return err
	}
	f := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	os.Remove(filepath.Dir(f)) //nolint:errcheck // the partition's directory, when empty
	return nil
}
