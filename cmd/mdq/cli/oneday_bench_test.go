package cli_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/lake"
)

// BenchmarkRebuildOneDay measures the publication of one more day against a full
// rebuild on MDQ_BENCH_LAKE (tiny by default; `make bench-oneday` runs it on the large
// scale lake), with the real binary on a copy of the lake made of hard links beside it
// (the same file system; a publication writes a new file and renames it over the old
// one, so the lake's own files are never written):
//   - full: every derived table removed, `mdq rebuild` at the lake's end;
//   - one day: the newest date's raw partitions moved aside, `mdq rebuild` at that
//     date's midnight (the lake before the day), the partitions put back, then the
//     measured `mdq rebuild` at an hour of that date whose boards no step computed.
//
// It reports each measured step's CPU (user and system time of the process), wall
// time and peak RSS, and the ratios one day / full; and each step's CPU split as its
// cost line gives it (the days' tables, the hour's boards), with the ratio of the days'
// tables alone (the hour's boards are due at every new hour whether a day landed or
// not, and both steps compute one hour's). The copy is removed at the end.
// MDQ_ONEDAY_LOG=<dir> runs each step with --log-level debug and writes its output
// (every table's and warm step's wall and CPU time) to <dir>/<clock>.log.
func BenchmarkRebuildOneDay(b *testing.B) {
	src := filepath.Clean(testlake.Bench(b))
	end := testlake.BenchNow(b).UTC()
	day := end.Format(time.DateOnly)
	// The hour of the day's publication: the one after the lake's end, or the one
	// before it when the end is the date's last hour (the full step computed the end's).
	hour := end.Truncate(time.Hour).Add(time.Hour)
	if hour.Format(time.DateOnly) != day {
		hour = end.Truncate(time.Hour).Add(-time.Hour)
	}
	dir := fmt.Sprintf("%s.oneday-%d", src, os.Getpid())
	aside := dir + ".aside"
	clean := func() {
		os.RemoveAll(dir)   //nolint:errcheck
		os.RemoveAll(aside) //nolint:errcheck
	}
	b.Cleanup(clean)
	for b.Loop() {
		clean()
		if err := linkLakeWithoutDerived(src, dir); err != nil {
			b.Fatal(err)
		}
		full := runRebuild(b, dir, end)
		moved, err := moveDatePartitions(dir, aside, day)
		if err != nil {
			b.Fatal(err)
		}
		if len(moved) == 0 {
			b.Fatalf("no raw partition dated %s in %s", day, src)
		}
		runRebuild(b, dir, end.Truncate(24*time.Hour))
		for _, rel := range moved {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(filepath.Join(aside, rel), filepath.Join(dir, rel)); err != nil {
				b.Fatal(err)
			}
		}
		one := runRebuild(b, dir, hour)
		b.ReportMetric(full.cpu.Seconds(), "full_cpu_s")
		b.ReportMetric(full.wall.Seconds(), "full_wall_s")
		b.ReportMetric(float64(full.peakKB)/1024, "full_peak_MB")
		b.ReportMetric(one.cpu.Seconds(), "day_cpu_s")
		b.ReportMetric(one.wall.Seconds(), "day_wall_s")
		b.ReportMetric(float64(one.peakKB)/1024, "day_peak_MB")
		b.ReportMetric(one.cpu.Seconds()/full.cpu.Seconds(), "cpu_ratio")
		b.ReportMetric(one.wall.Seconds()/full.wall.Seconds(), "wall_ratio")
		// The split each publication prints: the days' tables (what the new day made
		// due) and the hour's boards (due at every new hour, and part of both steps).
		b.ReportMetric(full.daysCPU.Seconds(), "full_days_cpu_s")
		b.ReportMetric(full.hourCPU.Seconds(), "full_hour_cpu_s")
		b.ReportMetric(one.daysCPU.Seconds(), "day_days_cpu_s")
		b.ReportMetric(one.hourCPU.Seconds(), "day_hour_cpu_s")
		if full.daysCPU > 0 {
			b.ReportMetric(one.daysCPU.Seconds()/full.daysCPU.Seconds(), "days_tables_cpu_ratio")
		}
		b.Logf("%d raw partitions of %s moved aside and back; the day published for %s", len(moved), day, hour.Format(time.RFC3339))
	}
}

type rebuildCost struct {
	cpu, wall time.Duration
	peakKB    int64
	// from the publication's cost line: CPU of the days' tables and of the hour's boards
	daysCPU, hourCPU time.Duration
}

// runRebuild runs `mdq rebuild` over dir at clock and returns what it cost.
func runRebuild(b *testing.B, dir string, clock time.Time) rebuildCost {
	b.Helper()
	var out bytes.Buffer
	args := []string{"rebuild", "--data", dir, "--clock", clock.Format(time.RFC3339)}
	logDir := os.Getenv("MDQ_ONEDAY_LOG")
	if logDir != "" {
		args = append(args, "--log-level", "debug")
	}
	cmd := exec.Command(mdqBinary(b), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("mdq rebuild --clock %s: %v\n%s", clock.Format(time.RFC3339), err, out.String())
	}
	c := rebuildCost{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.peakKB = ru.Maxrss // kilobytes on Linux
	}
	if logDir != "" {
		name := filepath.Join(logDir, clock.Format("2006-01-02T15")+".log")
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var err error
	if c.daysCPU, c.hourCPU, err = publishSplit(out.String()); err != nil {
		b.Fatalf("mdq rebuild --clock %s: %v\n%s", clock.Format(time.RFC3339), err, out.String())
	}
	return c
}

// publishSplit reads the CPU of the days' tables and of the hour's boards from a
// publication's cost line.
func publishSplit(out string) (days, hour time.Duration, err error) {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "cost: ") {
			continue
		}
		var dw, hw string
		var dc, hc float64
		if _, err := fmt.Sscanf(line, "cost: days' tables %s (%g cpu-s), hour's boards %s (%g cpu-s)", &dw, &dc, &hw, &hc); err != nil {
			return 0, 0, fmt.Errorf("cost line %q: %v", line, err)
		}
		return time.Duration(dc * float64(time.Second)), time.Duration(hc * float64(time.Second)), nil
	}
	return 0, 0, fmt.Errorf("no cost line")
}

// linkLakeWithoutDerived makes dst a copy of the lake src of hard links, without the
// derived tables (the registry's), DuckDB's temporary directory and the access
// database (a rebuild needs none of them).
func linkLakeWithoutDerived(src, dst string) error {
	var skip []string
	for _, t := range lake.Tables() {
		if t.Derived {
			skip = append(skip, filepath.FromSlash(t.Prefix))
		}
	}
	skip = append(skip, ".tmp", "access.db", "access.db-wal", "access.db-shm")
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(skip, func(p string) bool { return rel == p || strings.HasPrefix(rel, p+string(filepath.Separator)) }) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case d.Type().IsRegular():
			return os.Link(path, filepath.Join(dst, rel))
		}
		return nil
	})
}

// moveDatePartitions moves every raw (not derived) file of dir's partitions dated day
// to the same place under aside, removing the date directories it empties, and returns
// their paths relative to dir.
func moveDatePartitions(dir, aside, day string) ([]string, error) {
	var moved []string
	for _, t := range lake.Tables() {
		if t.Derived || !slices.Contains(t.Partitions, "date") {
			continue
		}
		pattern := strings.Replace(t.Glob(), "date=*", "date="+day, 1)
		files, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
		if err != nil {
			return moved, err
		}
		for _, f := range files {
			rel, err := filepath.Rel(dir, f)
			if err != nil {
				return moved, err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(aside, rel)), 0o755); err != nil {
				return moved, err
			}
			if err := os.Rename(f, filepath.Join(aside, rel)); err != nil {
				return moved, err
			}
			os.Remove(filepath.Dir(f)) //nolint:errcheck // only when empty: a lake lists partitions by directory
			moved = append(moved, rel)
		}
	}
	return moved, nil
}
