package duckconn

import (
	"database/sql"
	"os"
	"os/exec"
	"testing"
	"time"
)

// inZone reruns the calling test in a child process whose local zone is
// America/New_York (DuckDB takes its default TimeZone from the process's zone) and
// reports whether this is that child.
func inZone(t *testing.T) bool {
	t.Helper()
	if os.Getenv("DUCKCONN_CHILD") != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "DUCKCONN_CHILD=1", "TZ=America/New_York")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in America/New_York: %v\n%s", err, out)
	}
	return false
}

// The rule: a bound time.Time (a TIMESTAMP WITH TIME ZONE) cast to the lake's naive
// TIMESTAMP or to a DATE, as the SQL files do ($1::TIMESTAMP, CAST($1 AS DATE)), is
// its UTC wall time on every connection, whatever the local zone. The plain driver,
// checked alongside, shows the check can fail.
func TestConnectionsAreUTCWhateverTheLocalZone(t *testing.T) {
	if !inZone(t) {
		return
	}
	at := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC) // 21:00 the day before in New York
	const probe = "SELECT current_setting('TimeZone'), CAST($1::TIMESTAMP AS VARCHAR) || ' ' || CAST(CAST($1 AS DATE) AS VARCHAR)"
	const want = "2026-11-20 02:00:00 2026-11-20"
	db, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(3)
	// Several connections at once, so that each new one is checked, not only the first.
	for i := 0; i < 3; i++ {
		c, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var zone, got string
		if err := c.QueryRowContext(t.Context(), probe, at).Scan(&zone, &got); err != nil {
			t.Fatal(err)
		}
		if zone != "UTC" || got != want {
			t.Errorf("connection %d: TimeZone %q, 02:00Z as TIMESTAMP and DATE %q, want %q", i, zone, got, want)
		}
	}
	// Without the setting, once ICU is loaded (as any time-zone-aware function loads
	// it), the same comparison fails in this zone: the child's zone is in effect, so
	// the check above can fail.
	plain, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ExecContext(t.Context(), "LOAD icu"); err != nil {
		t.Fatal(err)
	}
	var zone, got string
	if err := plain.QueryRowContext(t.Context(), probe, at).Scan(&zone, &got); err != nil {
		t.Fatal(err)
	}
	if got == want {
		t.Errorf("the plain driver (TimeZone %q) gave UTC too: the child's zone is not in effect", zone)
	}
}
