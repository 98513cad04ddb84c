package handlers

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"mdq/query"
)

// Metrics are the Prometheus series of a serving process: requests and latency per
// route (the route table's path pattern or a mount's prefix, never the raw path, so
// the label set stays bounded), budget refusals, archive bytes sent, and the age of
// each area's derived state.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refusals prometheus.Counter
	archive  prometheus.Counter
}

// NewMetrics registers the series (and the Go runtime and process collectors) on a
// registry of its own. q may be nil (no derived-age series).
func NewMetrics(q *query.Queries) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mdq_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mdq_http_request_duration_seconds", Help: "Time to answer a request, by route pattern (streams: until the last byte).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route"})
	m.refusals = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mdq_budget_refusals_total", Help: "Requests and MCP tool calls refused (429) because the hourly budget was spent.",
	})
	m.archive = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mdq_archive_bytes_total", Help: "Bytes of archive files sent (bodies, ranges included).",
	})
	m.reg.MustRegister(m.requests, m.latency, m.refusals, m.archive,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if q != nil {
		m.reg.MustRegister(derivedAge{q: q, desc: prometheus.NewDesc("mdq_derived_age_seconds",
			"Age of each area's derived state: the serving clock minus the board hour it is as of (absent while the first build runs).",
			[]string{"area"}, nil)})
	}
	return m
}

// Handler serves the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// derivedAge reads query's readiness report at scrape time.
type derivedAge struct {
	q    *query.Queries
	desc *prometheus.Desc
}

func (d derivedAge) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

func (d derivedAge) Collect(ch chan<- prometheus.Metric) {
	r := d.q.Ready()
	now, err := time.Parse(time.RFC3339, r.Now)
	if err != nil {
		return
	}
	for area, state := range r.Areas {
		// "ready as of <hour>" or "stale: as of <hour>": the report's only form of
		// the hour, read here so the query package needs no second accessor.
		_, hour, ok := strings.Cut(state, "as of ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(hour))
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, now.Sub(t).Seconds(), area)
	}
}

// routeLabel carries the route label from the handler that matched back to the
// access-log middleware, which observes every request.
type routeLabel struct{ s string }

type routeLabelKey struct{}

func setRouteLabel(ctx context.Context, s string) {
	if l, ok := ctx.Value(routeLabelKey{}).(*routeLabel); ok {
		l.s = s
	}
}

// observe records one answered request.
func (m *Metrics) observe(route, method string, status int, bytes int64, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
	if route == "/archive/" && (status == http.StatusOK || status == http.StatusPartialContent) {
		m.archive.Add(float64(bytes))
	}
}

func (m *Metrics) refused() {
	if m != nil {
		m.refusals.Inc()
	}
}

// AccessLog sets how many requests the access log writes: every one (the zero value),
// none, only errors (status 400 and above), or a sample of the others.
type AccessLog struct {
	Off        bool
	ErrorsOnly bool
	Sample     float64 // 0 < Sample < 1: that share of requests under 400 is logged; errors always
}

// ParseAccessLog reads --access-log: all, off, errors, or a share in (0, 1].
func ParseAccessLog(s string) (AccessLog, error) {
	switch s {
	case "", "all":
		return AccessLog{}, nil
	case "off":
		return AccessLog{Off: true}, nil
	case "errors":
		return AccessLog{ErrorsOnly: true}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return AccessLog{}, badInput("--access-log %q: use all, off, errors, or a share of requests to log between 0 and 1 (errors are always logged)", s)
	}
	if f == 1 {
		return AccessLog{}, nil
	}
	return AccessLog{Sample: f}, nil
}

func (p AccessLog) logs(status int) bool {
	switch {
	case p.Off:
		return false
	case status >= 400:
		return true
	case p.ErrorsOnly:
		return false
	case p.Sample > 0:
		return rand.Float64() < p.Sample
	}
	return true
}
