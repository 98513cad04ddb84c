package query

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestCatalogStatementWaitsOutAConflict: a catalog statement meeting DuckDB's
// write-write conflict (another connection's change of the same view still open, as a
// statement interrupted by a cancelled context can be) is run again once that change
// ends, instead of failing the publication or request that made it; a conflict that
// does not end still fails, with DuckDB's error.
func TestCatalogStatementWaitsOutAConflict(t *testing.T) {
	ctx := context.Background()
	q := ddlProbeStore(t)
	hold := func() func() {
		conn := openProbeChange(t, q)
		return func() {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				t.Error(err)
			}
			conn.Close()
		}
	}
	// The other change ends 30 ms in: the statement succeeds and is the last word.
	release := hold()
	go func() { time.Sleep(30 * time.Millisecond); release() }()
	if err := q.execDDL(ctx, "CREATE OR REPLACE VIEW ddl_probe AS SELECT 3 AS x"); err != nil {
		t.Fatalf("statement after a conflict that ended: %v", err)
	}
	var x int
	if err := q.db.QueryRowContext(ctx, "SELECT x FROM ddl_probe").Scan(&x); err != nil || x != 3 {
		t.Fatalf("view answers %d (%v), want 3", x, err)
	}
	// A change held past every retry: the conflict is reported.
	release = hold()
	err := q.execDDL(ctx, "CREATE OR REPLACE VIEW ddl_probe AS SELECT 4 AS x")
	release()
	if err == nil || !strings.Contains(err.Error(), "write-write conflict") {
		t.Fatalf("statement under a conflict that did not end: %v, want DuckDB's write-write conflict", err)
	}
}

// TestCatalogStatementClosesAnIdleHolder: a change left open on a connection back in
// the pool, idle (what an interrupted statement can leave), keeps its transaction: the
// pool hands that connection out again, and any other connection meets DuckDB's
// write-write conflict on the entry. closeIdle, which execDDL runs on a conflict, ends
// it: the change is rolled back, and the statement after it is committed on a fresh
// connection (read after the idle connections are closed once more, so a statement
// left inside the open change would read as rolled back).
func TestCatalogStatementClosesAnIdleHolder(t *testing.T) {
	ctx := context.Background()
	q := ddlProbeStore(t)
	openProbeChange(t, q).Close() // back in the pool, its change open
	q.closeIdle()
	if err := q.execDDL(ctx, "CREATE OR REPLACE VIEW ddl_probe AS SELECT 3 AS x"); err != nil {
		t.Fatalf("statement after the idle holder was closed: %v", err)
	}
	q.closeIdle()
	var x int
	if err := q.db.QueryRowContext(ctx, "SELECT x FROM ddl_probe").Scan(&x); err != nil || x != 3 {
		t.Fatalf("view answers %d (%v), want 3, committed", x, err)
	}
}

// ddlProbeStore opens a store on a copy of the tiny lake with the view ddl_probe (x = 1)
// the catalog tests change.
func ddlProbeStore(t *testing.T) *Queries {
	t.Helper()
	q, err := Open(context.Background(), testlake.Copy(t), Options{NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if _, err := q.db.Exec("CREATE VIEW ddl_probe AS SELECT 1 AS x"); err != nil {
		t.Fatal(err)
	}
	return q
}

// openProbeChange returns a connection holding an open change of ddl_probe (x = 2),
// not committed: the entry another connection's catalog statement conflicts with.
func openProbeChange(t *testing.T, q *Queries) *sql.Conn {
	t.Helper()
	conn, err := q.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN; CREATE OR REPLACE VIEW ddl_probe AS SELECT 2 AS x"); err != nil {
		t.Fatal(err)
	}
	return conn
}
