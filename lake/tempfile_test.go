package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"mdq/lake"
)

// TestWrittenFilesRespectUmask: Parquet files and atomically written files get 0666
// minus the umask (0644 under 022, 0640 under 027), not os.CreateTemp's 0600, so a web
// server or another user can serve the archive.
func TestWrittenFilesRespectUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o027, 0o640}} {
		old := syscall.Umask(tc.umask)
		dir := t.TempDir()
		w, err := lake.NewWriter(dir)
		if err != nil {
			syscall.Umask(old)
			t.Fatal(err)
		}
		_, err = w.Write(context.Background(), lake.PerpdexTrades, []string{"2026-11-19"}, func(add lake.AppendFunc) error {
			return add("BTC", int64(1), int64(2), int64(3), "B", 1.0, 1.0, "0x", int64(1), "0x", "0x")
		})
		w.Close()
		if err == nil {
			err = lake.WriteFileAtomic(filepath.Join(dir, "archive", "manifest.json"), []byte("{}\n"))
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"archive/venue=perpdex/date=2026-11-19/trades.parquet", "archive/manifest.json"} {
			st, err := os.Stat(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tc.want {
				t.Errorf("umask %03o: %s has mode %03o, want %03o", tc.umask, rel, st.Mode().Perm(), tc.want)
			}
		}
	}
}
