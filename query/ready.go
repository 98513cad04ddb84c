package query

import (
	"sort"
	"sync"
	"time"
)

// readiness records, per area, the board hour its derived state was last brought up
// to date for and the last error, as the serve refresher reports them.
type readiness struct {
	mu    sync.Mutex
	areas map[string]areaReady
}

type areaReady struct {
	hour time.Time // board hour of the last successful warm (zero: never)
	err  string    // the last attempt's error ("" when it succeeded)
}

// ReadyAreas are the areas whose derived state /readyz waits for.
var ReadyAreas = []string{"predmkt", "perpdex_cohorts", "perpdex", "onchain"}

// MarkWarm records that area's derived state was brought up to date for the board hour
// of at (err nil) or that the attempt failed.
func (q *Queries) MarkWarm(area string, at time.Time, err error) {
	q.ready.mu.Lock()
	defer q.ready.mu.Unlock()
	if q.ready.areas == nil {
		q.ready.areas = map[string]areaReady{}
	}
	a := q.ready.areas[area]
	if err != nil {
		a.err = err.Error()
	} else {
		a.hour, a.err = at.UTC().Truncate(time.Hour), ""
	}
	q.ready.areas[area] = a
}

// ReadyReport is the body of /readyz.
type ReadyReport struct {
	Ready  bool              `json:"ready"`
	Reason string            `json:"reason,omitempty"`
	Now    string            `json:"now"`
	Areas  map[string]string `json:"areas"` // area -> "ready as of <hour>", "building", "stale ...", "error: ..."
}

// Ready reports whether every area's derived state is current for the serving clock:
// warmed for the clock's board hour or the hour before (the next one is building in
// the background and the previous is served meanwhile, so an hour turn does not take
// a ready server out of rotation). Before the first warm, or when an area is older or
// failing, it is not ready and says why.
func (q *Queries) Ready() ReadyReport {
	now := q.Now()
	hour := now.Truncate(time.Hour)
	q.ready.mu.Lock()
	defer q.ready.mu.Unlock()
	r := ReadyReport{Ready: true, Now: now.Format(time.RFC3339), Areas: map[string]string{}}
	var why []string
	for _, name := range ReadyAreas {
		a := q.ready.areas[name]
		switch {
		case a.hour.IsZero() && a.err != "":
			r.Areas[name] = "error: " + a.err
			why = append(why, name+" failed")
		case a.hour.IsZero():
			r.Areas[name] = "building"
			why = append(why, name+" building")
		case a.hour.Before(hour.Add(-time.Hour)):
			r.Areas[name] = "stale: as of " + a.hour.Format(time.RFC3339)
			why = append(why, name+" stale")
		default:
			r.Areas[name] = "ready as of " + a.hour.Format(time.RFC3339)
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		r.Ready = false
		r.Reason = why[0]
		for _, w := range why[1:] {
			r.Reason += ", " + w
		}
	}
	return r
}

// warmSteps returns a function that logs (at debug) how long each step of area's warm
// took since the previous call, and the process CPU time spent meanwhile (the whole
// process's: a step's own when nothing else runs, as in mdq rebuild), to see where a
// start's seconds go.
func (q *Queries) warmSteps(area string) func(step string) {
	last, lastCPU := time.Now(), processCPU()
	return func(step string) {
		cpu := processCPU()
		q.log.Debug("warm step", "area", area, "step", step, "took", time.Since(last).Round(time.Millisecond),
			"cpu", (cpu - lastCPU).Round(time.Millisecond))
		last, lastCPU = time.Now(), cpu
	}
}
