package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"mdq/internal/testlake"
)

// TestStoreAnswersInUTCWhateverTheLocalZone: the lake's times are naive UTC TIMESTAMPs
// and bound times reach DuckDB WITH TIME ZONE, so a store whose connections took the
// process's zone (DuckDB's default) would shift every window by the zone's offset. The
// route is run here in UTC and again in a child process whose zone is
// America/New_York; before both pools' connections were set to UTC (internal/duckconn)
// the child's liquidations ended five hours early. Both pools are probed as well.
func TestStoreAnswersInUTCWhateverTheLocalZone(t *testing.T) {
	ctx := context.Background()
	child := os.Getenv("MDQ_ZONE_CHILD")
	dir := os.Getenv("MDQ_ZONE_LAKE")
	if child == "" {
		dir = testlake.Copy(t)
	}
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	q, err := Open(ctx, dir, Options{Now: func() time.Time { return at }, NoGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	page, err := q.PerpdexLiquidations(ctx, PerpdexLiquidationsParams{Start: at.Add(-7 * 24 * time.Hour), End: at, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Liquidations) == 0 {
		t.Fatal("no liquidations in the week: nothing to compare")
	}
	got, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	if child == "" {
		want := t.TempDir() + "/utc.json"
		if err := os.WriteFile(want, got, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
		cmd.Env = append(os.Environ(), "MDQ_ZONE_CHILD="+want, "MDQ_ZONE_LAKE="+dir, "TZ=America/New_York")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("in America/New_York: %v\n%s", err, out)
		}
		return
	}
	want, err := os.ReadFile(child)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("liquidations in America/New_York differ from UTC:\n%.400s\nwant\n%.400s", got, want)
	}
	for name, db := range map[string]*sql.DB{"main": q.db, "per-wallet": q.walletDB} {
		var zone string
		if err := db.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&zone); err != nil || zone != "UTC" {
			t.Errorf("%s pool: TimeZone %q (%v), want UTC", name, zone, err)
		}
	}
}
