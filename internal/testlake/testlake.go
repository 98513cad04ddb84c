// Package testlake gives tests one tiny demo lake per test binary, generated once.
package testlake

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"mdq/ingest/demo"
)

// Seed and End pin the tiny lake; Now is the clock tests pin the store to.
const Seed = 7

// End is the last instant of the tiny lake's history.
var End = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// Now is the clock reading tests use (the end of history).
func Now() time.Time { return End }

var (
	once sync.Once
	dir  string
	err  error
)

// Tiny returns the directory of the shared tiny lake. Tests must not modify it; copy
// it (Copy) to change files.
func Tiny(tb testing.TB) string {
	tb.Helper()
	once.Do(func() {
		dir, err = os.MkdirTemp("", "mdq-tiny-")
		if err != nil {
			return
		}
		_, err = demo.Run(context.Background(), demo.Options{Dir: dir, Scale: "tiny", Seed: Seed, End: End})
	})
	if err != nil {
		tb.Fatalf("tiny lake: %v", err)
	}
	return dir
}

// Copy copies the tiny lake into a fresh temporary directory the test may modify.
func Copy(tb testing.TB) string {
	tb.Helper()
	src := Tiny(tb)
	dst := tb.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}

// Bench returns the lake benchmarks run on: $MDQ_BENCH_LAKE (make bench points it at
// the medium demo lake) or, when unset, the tiny lake.
func Bench(tb testing.TB) string {
	if d := os.Getenv("MDQ_BENCH_LAKE"); d != "" {
		return d
	}
	return Tiny(tb)
}

// BenchNow is the clock benchmarks pin: the end recorded in the bench lake's marker.
func BenchNow(tb testing.TB) time.Time {
	dir := Bench(tb)
	b, err := os.ReadFile(filepath.Join(dir, "lake.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		End time.Time `json:"end"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m.End
}
