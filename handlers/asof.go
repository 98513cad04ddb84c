package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"mdq/query"
)

// AsOfHeader carries the clock a response was answered at: the request's as_of, or the
// serving clock when it sent none.
const AsOfHeader = "X-MDQ-As-Of"

// asOfParam is the point-in-time parameter every /v1 route takes (appended by Routes,
// so the router, OpenAPI, /docs, MCP tool schemas and `mdq query` flags all show it).
var asOfParam = Param{Name: "as_of", Kind: String, MaxLen: 40,
	Doc: "answer as if the clock were this time: epoch ms or RFC 3339 (e.g. 2026-11-17T09:30:00Z); default the serving clock, " +
		"later than it is 400. Only what was known at that time is used; the effective time is in the X-MDQ-As-Of header"}

// withAsOf appends as_of to every /v1 route that does not declare it.
func withAsOf(rs []*Route) []*Route {
	for _, rt := range rs {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		has := false
		for _, p := range rt.Params {
			has = has || p.Name == asOfParam.Name
		}
		if !has {
			rt.Params = append(rt.Params, asOfParam)
		}
	}
	return rs
}

// ParseAsOf reads an as_of value: epoch milliseconds or RFC 3339 (fractional seconds
// and offsets allowed).
func ParseAsOf(s string) (time.Time, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err == nil && ms <= 1<<53 {
			return time.UnixMilli(ms).UTC(), nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badInput("as_of %q is not epoch milliseconds or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// formatAsOf is the header's form: RFC 3339 UTC with milliseconds.
func formatAsOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// storeAt resolves a request's as_of against the serving store: the store itself and
// its clock when as_of is absent, a view at as_of (query.Queries.At) when it is at or
// before the serving clock, 400 naming both times when it is later.
func storeAt(q *query.Queries, v Values) (*query.Queries, time.Time, error) {
	if q == nil {
		return nil, time.Time{}, nil
	}
	now := q.Now()
	if !v.Has(asOfParam.Name) {
		return q, now, nil
	}
	t, err := ParseAsOf(v.Str(asOfParam.Name))
	if err != nil {
		return nil, time.Time{}, err
	}
	if t.After(now) {
		return nil, time.Time{}, badInput("as_of %s is later than the serving clock %s", formatAsOf(t), formatAsOf(now))
	}
	if t.Equal(now) {
		return q, now, nil
	}
	return q.At(t), t, nil
}

// setAsOfHeader names the clock the response was answered at.
func setAsOfHeader(h http.Header, rt *Route, t time.Time) {
	if !t.IsZero() && strings.HasPrefix(rt.Path, "/v1/") {
		h.Set(AsOfHeader, formatAsOf(t))
	}
}

// StoreAt is storeAt for the CLI's streamed routes.
func StoreAt(q *query.Queries, v Values) (*query.Queries, time.Time, error) { return storeAt(q, v) }
