package cut_test

import (
	"testing"

	"mdq/lake"
	"mdq/lake/cut"
)

// TestEveryRawTableHasARule: a cut filters every raw table by the time its rows became
// known; a table without a rule would be copied whole by accident, so each must have
// one (derived tables are rebuilt, never cut).
func TestEveryRawTableHasARule(t *testing.T) {
	for _, tb := range lake.Tables() {
		r, ok := cut.Rules[tb.Name]
		if tb.Derived {
			if ok {
				t.Errorf("%s is derived: it is rebuilt, it must have no cut rule", tb.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no cut rule", tb.Name)
			continue
		}
		if r.Why == "" {
			t.Errorf("%s: rule without a reason", tb.Name)
		}
	}
	for name := range cut.Rules {
		if lake.Get(name) == nil {
			t.Errorf("rule for unknown table %s", name)
		}
	}
}
