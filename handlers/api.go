// Package handlers is the HTTP layer: it parses and validates parameters as the route
// table declares them, calls the query package and encodes the result. Everything else
// (credentials, budget, errors, logging) lives in one wrapper shared by every route.
package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"mdq/query"
	"mdq/ratelimit"
)

// Authenticator checks a credential. It returns ratelimit.ErrInvalidCredential (wrapped
// or not) for a credential that is not valid; any other error is a store failure.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey, bearer string) (ratelimit.Principal, error)
}

// Budget spends the sliding-hour request budget and logs credits.
type Budget interface {
	Spend(ctx context.Context, p ratelimit.Principal, units int) (ratelimit.Decision, error)
	LogCredits(ctx context.Context, p ratelimit.Principal, route string, credits int)
}

// Mount is an extra handler under a path prefix (archive, MCP, docs).
type Mount struct {
	Prefix  string
	Handler http.Handler
	// Auth makes the mount need a credential (the same check as the routes, in
	// authMount); Public exempts paths (archive manifest and samples). A mount never
	// spends budget here: the archive never does, and MCP spends per tool call through
	// BudgetFrom.
	Auth   bool
	Public func(path string) bool
}

// API serves the route table.
type API struct {
	Q      *query.Queries
	Log    *slog.Logger
	Auth   Authenticator // nil: every route is open (tests of the platform, offline CLI)
	Budget Budget        // nil: no budget
	Mounts []Mount
	// Issuer is the OAuth issuer whose access tokens Auth accepts (empty: none). The
	// access wiring sets it; /.well-known/oauth-protected-resource publishes it, read
	// at request time so the order of serve hooks does not matter.
	Issuer string
	// Metrics receives every request's route, status and latency, budget refusals and
	// archive bytes (nil: none).
	Metrics *Metrics
	// AccessLog sets the access log's volume (zero value: every request).
	AccessLog AccessLog
}

type (
	principalKey struct{}
	budgetKey    struct{}
	decisionKey  struct{}
)

// BudgetFrom returns the API's Budget for an authenticated request (nil without one),
// for runners that report usage and transports (MCP) that spend per call.
func BudgetFrom(ctx context.Context) Budget {
	b, _ := ctx.Value(budgetKey{}).(Budget)
	return b
}

// DecisionFrom returns the budget decision this request's spend produced.
func DecisionFrom(ctx context.Context) (ratelimit.Decision, bool) {
	d, ok := ctx.Value(decisionKey{}).(ratelimit.Decision)
	return d, ok
}

// PrincipalFrom returns the caller of an authenticated request.
func PrincipalFrom(ctx context.Context) (ratelimit.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(ratelimit.Principal)
	return p, ok
}

// Handler builds the whole HTTP handler: every route of the table, the mounts, JSON
// 404/405, panic recovery and the access log.
func (a *API) Handler() http.Handler {
	return a.accessLog(a.recoverer(originForm(a.Router())))
}

// originForm drops the scheme and host of an absolute-form request target
// (GET http://host/path): the router's redirect to a clean path copies the URL, and
// would send the client to whatever host the target named.
func originForm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.IsAbs() || r.URL.Host != "" {
			u := *r.URL
			u.Scheme, u.Host, u.User = "", "", nil
			r2 := *r
			r2.URL = &u
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// Router is the bare router: every route of the table and the mounts.
func (a *API) Router() *mux.Router {
	r := mux.NewRouter()
	for _, m := range a.Mounts {
		h := m.Handler
		if m.Auth && a.Auth != nil {
			h = a.authMount(m)
		}
		prefix := m.Prefix
		r.PathPrefix(m.Prefix).Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			setRouteLabel(req.Context(), prefix)
			h.ServeHTTP(w, req)
		}))
	}
	for _, rt := range orderedRoutes() {
		r.Handle(rt.Path, a.wrap(rt)).Methods(rt.Method)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, areaOf(req.URL.Path), http.StatusNotFound, "no route for "+req.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, areaOf(req.URL.Path), http.StatusMethodNotAllowed, "method "+req.Method+" not allowed on "+req.URL.Path)
	})
	return r
}

// orderedRoutes registers literal paths before patterns so /wallets/discover is never
// read as /wallets/{address}, and /builders/stats never as /builders/{builder}.
func orderedRoutes() []*Route {
	rs := append([]*Route(nil), Routes()...)
	sort.SliceStable(rs, func(i, j int) bool {
		return strings.Count(rs[i].Path, "{") < strings.Count(rs[j].Path, "{")
	})
	return rs
}

func areaOf(path string) string {
	if strings.HasPrefix(path, "/v1/onchain/") {
		return "onchain"
	}
	return "other"
}

// Result is what executing a route produced: data to encode or an error.
type Result struct {
	Data any
	Err  error
	AsOf time.Time // the clock the route answered at (as_of, or the serving clock)
}

// Exec parses and runs a route without HTTP: the one path shared by REST, the CLI and
// MCP, so their payloads cannot differ.
func (a *API) Exec(ctx context.Context, rt *Route, q url.Values, vars map[string]string) Result {
	v, err := rt.Parse(q, vars)
	if err != nil {
		return Result{Err: err}
	}
	if rt.Run == nil {
		return Result{Err: errors.New("route has no runner")}
	}
	st, at, err := storeAt(a.Q, v)
	if err != nil {
		return Result{Err: err}
	}
	data, err := rt.Run(ctx, st, v)
	return Result{Data: data, Err: err, AsOf: at}
}

// wrap turns a route into an http.Handler: credential, budget, parameters, query,
// encoding, errors.
func (a *API) wrap(rt *Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		setRouteLabel(ctx, rt.Path)
		if !rt.Public && a.Auth != nil {
			p, status, msg := a.authenticate(r)
			if status != 0 {
				writeError(w, rt.Area, status, msg)
				return
			}
			ctx = context.WithValue(ctx, principalKey{}, p)
			if a.Budget != nil {
				ctx = context.WithValue(ctx, budgetKey{}, a.Budget)
			}
			if a.Budget != nil && !rt.Unbilled {
				d, err := a.Budget.Spend(ctx, p, 1)
				if err != nil {
					a.logger().Error("budget", "err", err)
					writeError(w, rt.Area, http.StatusServiceUnavailable, "budget store unavailable")
					return
				}
				SetRateHeaders(w.Header(), d)
				ctx = context.WithValue(ctx, decisionKey{}, d)
				if !d.Allowed {
					a.Metrics.refused()
					w.Header().Set("Retry-After", "60")
					writeError(w, rt.Area, http.StatusTooManyRequests,
						fmt.Sprintf("hourly budget of %d requests spent; retry after %s", d.Limit, d.Reset.UTC().Format(time.RFC3339)))
					return
				}
			}
		}
		v, err := rt.Parse(r.URL.Query(), mux.Vars(r))
		if err != nil {
			a.fail(w, r, rt, err)
			return
		}
		st, at, err := storeAt(a.Q, v)
		if err != nil {
			a.fail(w, r, rt, err)
			return
		}
		setAsOfHeader(w.Header(), rt, at)
		if rt.Stream != nil {
			w.Header().Set("Content-Type", rt.ContentType)
			sw := &firstWriteWriter{w: w}
			if err := rt.Stream(ctx, st, v, sw); err != nil {
				if !sw.wrote {
					// Nothing was sent yet: the client gets the error's status and body.
					a.fail(w, r, rt, err)
					return
				}
				a.logger().Error("stream", "route", rt.Path, "err", err)
			}
			return
		}
		ctx, asOf := query.WithDataAsOf(ctx)
		data, err := rt.Run(ctx, st, v)
		if err != nil {
			a.fail(w, r, rt, err)
			return
		}
		if t := asOf.Time(); !t.IsZero() {
			// The age of the derived state the body comes from (an hourly board's hour;
			// the previous hour's while the next builds), so a client can see it.
			w.Header().Set(DataAsOfHeader, t.UTC().Format(time.RFC3339))
		}
		body, err := encodeBody(data)
		if r, ok := data.(interface{ Release() }); ok {
			// The body is a copy: the page's memory serves a later page (query.EventsPage).
			r.Release()
		}
		if err != nil {
			a.logger().Error("encode", "route", rt.Path, "err", err)
			writeError(w, rt.Area, http.StatusServiceUnavailable, "store unavailable")
			return
		}
		defer releaseBody(body)
		if p, ok := PrincipalFrom(ctx); ok && a.Budget != nil && rt.Credits > 0 {
			a.Budget.LogCredits(ctx, p, rt.Path, rt.Credits)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(*body); err != nil {
			a.logger().Debug("write", "err", err)
		}
	})
}

// DataAsOfHeader carries the time the derived state a response was computed from is as
// of (routes answered from hourly boards).
const DataAsOfHeader = "X-MDQ-Data-As-Of"

// authMount guards a mount with the routes' credential check: 401 on a missing or
// invalid credential, except on the mount's public paths. It spends no budget.
func (a *API) authMount(m Mount) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Public != nil && m.Public(r.URL.Path) {
			m.Handler.ServeHTTP(w, r)
			return
		}
		p, status, msg := a.authenticate(r)
		if status != 0 {
			writeError(w, areaOf(r.URL.Path), status, msg)
			return
		}
		ctx := context.WithValue(r.Context(), principalKey{}, p)
		if a.Budget != nil {
			ctx = context.WithValue(ctx, budgetKey{}, a.Budget)
		}
		m.Handler.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authenticate reads X-API-Key or Authorization: Bearer (header names are matched
// case-insensitively by net/http) and returns a status and message on failure.
func (a *API) authenticate(r *http.Request) (ratelimit.Principal, int, string) {
	key := strings.TrimSpace(r.Header.Get("X-API-Key"))
	bearer := ""
	if h := strings.TrimSpace(r.Header.Get("Authorization")); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) == "" {
			return ratelimit.Principal{}, http.StatusUnauthorized, "invalid credential: Authorization must be 'Bearer <token>'"
		}
		bearer = strings.TrimSpace(tok)
	}
	if key == "" && bearer == "" {
		return ratelimit.Principal{}, http.StatusUnauthorized, "missing credential: send X-API-Key or Authorization: Bearer"
	}
	p, err := a.Auth.Authenticate(r.Context(), key, bearer)
	if errors.Is(err, ratelimit.ErrInvalidCredential) {
		return p, http.StatusUnauthorized, "invalid credential: unknown, revoked or expired"
	}
	if err != nil {
		a.logger().Error("authenticate", "err", err)
		return p, http.StatusServiceUnavailable, "credential store unavailable"
	}
	return p, 0, ""
}

// SetRateHeaders writes the X-RateLimit-* headers of a decision.
func SetRateHeaders(h http.Header, d ratelimit.Decision) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Reset.Unix(), 10))
}

// Status maps an error to its HTTP status and the message a client may see. This is
// the one error-to-status map of the API.
func Status(err error) (int, string) {
	var ie *inputError
	var se *query.StoreError
	switch {
	case errors.As(err, &ie):
		return http.StatusBadRequest, ie.msg
	case errors.Is(err, query.ErrNotFound):
		return http.StatusNotFound, "not found"
	case errors.As(err, &se), errors.Is(err, query.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "store unavailable"
	case errors.Is(err, context.Canceled):
		return 499, "request canceled"
	default:
		return http.StatusServiceUnavailable, "store unavailable"
	}
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, rt *Route, err error) {
	status, msg := Status(err)
	if status >= 500 {
		attrs := []any{"route", rt.Path, "err", err.Error(), "request_id", w.Header().Get("X-Request-Id")}
		var se *query.StoreError
		if errors.As(err, &se) && se.File != "" {
			attrs = append(attrs, "file", se.File)
		}
		a.logger().Error("query failed", attrs...)
	}
	writeError(w, rt.Area, status, msg)
}

// ErrorBody is the error envelope of an area: on-chain routes answer {"detail": ...}
// (SPEC's labels batch), every other route {"error": ...}.
func ErrorBody(area, msg string) any {
	if area == "onchain" {
		return map[string]string{"detail": msg}
	}
	return map[string]string{"error": msg}
}

func writeError(w http.ResponseWriter, area string, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	Encode(w, ErrorBody(area, msg)) //nolint:errcheck
}

// Encode writes v as JSON the one way every transport uses (REST, CLI, MCP), so their
// bytes agree: no HTML escaping, one trailing newline.
func Encode(w io.Writer, v any) error {
	body, err := encodeBody(v)
	if err != nil {
		return err
	}
	defer releaseBody(body)
	_, err = w.Write(*body)
	return err
}

// JSONAppender is a response that encodes itself: AppendJSON appends exactly the bytes
// encoding/json writes for the value with HTML escaping off (no newline), and fails
// where encoding/json fails. A route whose pages are megabytes (predmkt events)
// implements it to skip reflection; a test holds each implementation to encoding/json.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// bodyPool recycles response buffers: a large page is encoded into one buffer that
// the next request reuses instead of growing a new one from nothing.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// bigBodies keeps up to two buffers of a megabyte or more (each at most 64 MB and
// what query.KeepForReuse allows, releaseBody) for the pages that encode
// themselves (JSONAppender: the events pages, tens of megabytes). bodyPool drops its
// buffers at the collector's cycles, and the page after that grew its buffer again
// by doubling, faulting in fresh memory (part of 99 MB allocated by one request that
// took 400 to 500 ms against about 100).
var bigBodies = make(chan *[]byte, 2)

const bigBody = 1 << 20

// encodeBody returns Encode's bytes for v in a pooled buffer; hand it back with
// releaseBody once written.
func encodeBody(v any) (*[]byte, error) {
	a, big := v.(JSONAppender)
	var p *[]byte
	if big {
		select {
		case p = <-bigBodies:
		default:
		}
	}
	if p == nil {
		p = bodyPool.Get().(*[]byte)
	}
	var err error
	b := (*p)[:0]
	if big {
		if b, err = a.AppendJSON(b); err == nil {
			b = append(b, '\n')
		}
	} else {
		buf := bytes.NewBuffer(b)
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		err = enc.Encode(v)
		b = buf.Bytes()
	}
	*p = b
	if err != nil {
		releaseBody(p)
		return nil, err
	}
	return p, nil
}

// releaseBody returns a buffer to the pool; an outsized one is left to the collector.
func releaseBody(p *[]byte) {
	if cap(*p) > 64<<20 {
		return
	}
	*p = (*p)[:0]
	if cap(*p) >= bigBody && query.KeepForReuse(int64(cap(*p))) {
		select {
		case bigBodies <- p:
			return
		default:
		}
	}
	bodyPool.Put(p)
}

func (a *API) logger() *slog.Logger {
	if a.Log == nil {
		return slog.Default()
	}
	return a.Log
}

// recoverer answers a panic with 503 and no detail; the log gets the stack.
func (a *API) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.logger().Error("panic", "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()),
					"request_id", w.Header().Get("X-Request-Id"))
				writeError(w, areaOf(r.URL.Path), http.StatusServiceUnavailable, "store unavailable")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController and ServeContent reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// accessLog writes one JSON line per request with a request id (the client's
// X-Request-Id when it sent a sane one).
func (a *API) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			var b [8]byte
			rand.Read(b[:]) //nolint:errcheck
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w}
		label := &routeLabel{s: "unmatched"}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routeLabelKey{}, label)))
		took := time.Since(start)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		a.Metrics.observe(label.s, r.Method, status, sw.bytes, took)
		if a.AccessLog.logs(status) {
			a.logger().Info("request", "request_id", id, "method", r.Method, "path", r.URL.Path,
				"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(took.Microseconds())/1000)
		}
	})
}

// firstWriteWriter records whether a streamed body has started, so a streamer that
// fails before its first byte can still answer with an error status.
type firstWriteWriter struct {
	w     io.Writer
	wrote bool
}

func (f *firstWriteWriter) Write(b []byte) (int, error) {
	f.wrote = f.wrote || len(b) > 0
	return f.w.Write(b)
}
