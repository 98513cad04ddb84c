package ratelimit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDeletedAccessDBIsNoticed: access.db deleted (or replaced) under a running store
// is noticed by its inode and reopened: a key created in the new file authenticates,
// a key of the deleted file no longer does, and a revocation written now reaches the
// file other processes read.
func TestDeletedAccessDBIsNoticed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, oldKey, err := s.CreateKey(ctx, "alice", "old")
	if err != nil {
		t.Fatal(err)
	}
	if reopened, err := s.CheckFile(); err != nil || reopened {
		t.Fatalf("unchanged file: reopened=%v err=%v", reopened, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, DBFile+suffix))
	}
	// What `mdq keys create` does after the deletion: a new file at the path.
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, newKey, err := other.CreateKey(ctx, "bob", "new")
	if err != nil {
		t.Fatal(err)
	}
	if reopened, err := s.CheckFile(); err != nil || !reopened {
		t.Fatalf("deleted file not noticed: reopened=%v err=%v", reopened, err)
	}
	if p, err := s.Authenticate(ctx, newKey, ""); err != nil || p.User != "bob" {
		t.Fatalf("key of the new file: %+v %v", p, err)
	}
	if _, err := s.Authenticate(ctx, oldKey, ""); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("key of the deleted file: %v, want invalid", err)
	}
	if err := s.RevokeKey(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	other.mu.Lock()
	clear(other.cache)
	other.mu.Unlock()
	if _, err := other.Authenticate(ctx, newKey, ""); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("revocation did not reach the file at the path: %v", err)
	}
	other.Close()
}
