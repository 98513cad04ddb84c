package cli_test

import (
	"testing"
	"time"

	"mdq/internal/testlake"
	"mdq/query"
)

// TestRebuildCostLineSplitsDaysFromHour: mdq rebuild's last line splits its CPU
// between the days' tables and the hour's boards. At a new hour of a lake whose days
// are all published, the days' part only checks what is published, and the hour's
// part computes every area's boards; the two parts are parts of the process's CPU over
// the publication, none of it counted twice.
func TestRebuildCostLineSplitsDaysFromHour(t *testing.T) {
	if query.ProcessCPU() == 0 {
		t.Skip("process CPU is not measured on this platform")
	}
	dir := testlake.Copy(t)
	// The copy's files are new to the sidecars: the first publication brings the days'
	// tables up to date, the measured one is an hour later.
	if code, out, errs := run(t, "rebuild", "--data", dir, "--clock", testlake.End.Format(time.RFC3339)); code != 0 {
		t.Fatalf("rebuild: %d\n%s%s", code, out, errs)
	}
	c0 := query.ProcessCPU()
	code, out, errs := run(t, "rebuild", "--data", dir, "--clock", testlake.End.Add(time.Hour).Format(time.RFC3339))
	used := query.ProcessCPU() - c0
	if code != 0 {
		t.Fatalf("rebuild: %d\n%s%s", code, out, errs)
	}
	days, hour, err := publishSplit(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if hour <= days {
		t.Errorf("a new hour over published days: the hour's boards took %v of CPU, the days' tables %v\n%s", hour, days, out)
	}
	// The line rounds each part to 0.1 cpu-s. (No lower bound: the process's CPU also
	// counts the store's opening and closing and whatever other goroutines of the test
	// binary ran meanwhile.)
	if days+hour > used+100*time.Millisecond {
		t.Errorf("the cost line counts %v of CPU, the process used %v over the rebuild\n%s", days+hour, used, out)
	}
}
