//go:build unix

package lake

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLockHelperProcess is not a test: TestLakeLockAcrossProcesses runs the test binary
// with it to hold a lake's lock in another process until its stdin closes.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("MDQ_LOCK_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	take := LockShared
	if os.Getenv("MDQ_LOCK_HELPER_MODE") == "exclusive" {
		take = LockExclusive
	}
	unlock, err := take(dir)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("held\n")
	bufio.NewReader(os.Stdin).ReadString('\n') //nolint:errcheck // EOF when the test ends
	unlock()
	os.Exit(0)
}

// holdInOtherProcess holds dir's lock in mode in a child process; the returned func
// releases it (and waits for the child).
func holdInOtherProcess(t *testing.T, dir, mode string) func() {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "MDQ_LOCK_HELPER_DIR="+dir, "MDQ_LOCK_HELPER_MODE="+mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		in.Close()
		cmd.Wait() //nolint:errcheck
		t.Fatalf("helper did not take the %s lock: %q %v", mode, line, err)
	}
	done := false
	release := func() {
		if !done {
			done = true
			in.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("helper: %v", err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

// The use lock between processes: stores share the lake, a demo excludes them (and
// they it), each refused at once with ErrLakeInUse rather than waiting; released, the
// lock is free again.
func TestLakeLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		other, mode string
		refused     bool
	}{
		{"shared", "shared", false},
		{"shared", "exclusive", true},
		{"exclusive", "shared", true},
		{"exclusive", "exclusive", true},
	} {
		t.Run(tc.other+" then "+tc.mode, func(t *testing.T) {
			release := holdInOtherProcess(t, dir, tc.other)
			take := LockShared
			if tc.mode == "exclusive" {
				take = LockExclusive
			}
			unlock, err := take(dir)
			if tc.refused {
				if !errors.Is(err, ErrLakeInUse) {
					t.Fatalf("%s lock while another process holds it %s: err %v, want ErrLakeInUse", tc.mode, tc.other, err)
				}
			} else if err != nil {
				t.Fatalf("%s lock beside another process's %s one: %v", tc.mode, tc.other, err)
			} else {
				unlock()
			}
			release()
			unlock, err = take(dir)
			if err != nil {
				t.Fatalf("%s lock after the other process let go: %v", tc.mode, err)
			}
			unlock()
		})
	}
}

// The use lock within one process: shared holds nest, an exclusive hold cannot be
// taken while the process has the lake open, and a store opened under the process's
// own exclusive hold (a demo publishing what it generated) shares it.
func TestLakeLockWithinProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake") // made by the exclusive lock
	a, err := LockExclusive(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("the exclusive lock did not make the directory: %v", err)
	}
	b, err := LockShared(dir)
	if err != nil {
		t.Fatalf("shared inside the process's exclusive hold: %v", err)
	}
	c, err := LockExclusive(dir)
	if err != nil {
		t.Fatalf("nested exclusive: %v", err)
	}
	c()
	b()
	b() // a release is idempotent
	a()

	s1, err := LockShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := LockShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockExclusive(dir); !errors.Is(err, ErrLakeInUse) {
		t.Fatalf("exclusive while the process has the lake open: %v, want ErrLakeInUse", err)
	}
	s1()
	if _, err := LockExclusive(dir); !errors.Is(err, ErrLakeInUse) {
		t.Fatalf("exclusive while one shared hold remains: %v, want ErrLakeInUse", err)
	}
	s2()
	x, err := LockExclusive(dir)
	if err != nil {
		t.Fatalf("exclusive once every shared hold is released: %v", err)
	}
	x()
}
