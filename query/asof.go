package query

import (
	"context"
	"sync"
	"time"
)

// DataAsOf collects, for one request, the time the derived state it was answered from
// is as of: the board hour of each hourly board it read (the previous hour's while the
// current one builds). The oldest wins, so a response never claims to be fresher than
// its stalest part. Routes reading only raw tables record nothing.
type DataAsOf struct {
	mu sync.Mutex
	t  time.Time
}

type dataAsOfKey struct{}

// WithDataAsOf returns a context whose store reads record their data's age in the
// returned collector.
func WithDataAsOf(ctx context.Context) (context.Context, *DataAsOf) {
	d := &DataAsOf{}
	return context.WithValue(ctx, dataAsOfKey{}, d), d
}

// Time is the oldest as-of recorded (zero when none was).
func (d *DataAsOf) Time() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t
}

// recordAsOf notes that ctx's request read derived state as of t.
func recordAsOf(ctx context.Context, t time.Time) {
	d, _ := ctx.Value(dataAsOfKey{}).(*DataAsOf)
	if d == nil || t.IsZero() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.t.IsZero() || t.Before(d.t) {
		d.t = t
	}
}
