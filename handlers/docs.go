package handlers

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"mdq/query"
	"mdq/ratelimit"
)

// The human docs page at /docs is rendered on the server from the OpenAPI document (no
// JavaScript): each route's purpose, parameters, limits, an example request and a real
// example response, produced by running the route with its parameters' Example values
// against the served lake (once, cached).

//go:embed docs.html.tmpl
var docsTemplateText string

var docsTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{
	"paras": func(s string) []string { return strings.Split(s, "\n\n") },
}).Parse(docsTemplateText))

// exampleItems is how many items of each array an example response shows.
const exampleItems = 3

// Example is a route run with its example parameters against the lake.
type Example struct {
	Request   string // path and query
	Curl      string
	Status    int
	Body      string // indented, arrays shortened to exampleItems
	Shortened bool
	Missing   string // why there is no example
}

type docsState struct {
	once     sync.Once
	examples map[*Route]*Example
	page     []byte
	err      error
}

var docsStates sync.Map // *API -> *docsState

// WarmDocs renders the docs page (running every route's example) in the caller's
// goroutine; serve calls it in the background at startup so the first visitor does not
// wait.
func (a *API) WarmDocs() { a.docsState() }

func (a *API) docsState() *docsState {
	st, _ := docsStates.LoadOrStore(a, &docsState{})
	s := st.(*docsState)
	s.once.Do(func() {
		s.examples = map[*Route]*Example{}
		for _, rt := range Routes() {
			s.examples[rt] = a.RunExample(context.Background(), rt)
		}
		var buf bytes.Buffer
		s.err = docsTemplate.Execute(&buf, buildDocsView(OpenAPI(), s.examples))
		s.page = buf.Bytes()
	})
	return s
}

// ExampleQuery is a route's example request: every parameter with an Example value.
// It reports the first required parameter without one.
func ExampleQuery(rt *Route) (q url.Values, vars map[string]string, path string, missing string) {
	q, vars = url.Values{}, map[string]string{}
	path = openAPIPath(rt.Path)
	for _, p := range rt.Params {
		if p.Example == "" {
			if (p.Required || p.In == "path") && missing == "" {
				missing = p.Name
			}
			continue
		}
		if p.In == "path" {
			vars[p.Name] = p.Example
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(p.Example))
		} else {
			q.Set(p.Name, p.Example)
		}
	}
	if enc := q.Encode(); enc != "" {
		path += "?" + enc
	}
	return q, vars, path, missing
}

// RunExample runs a route's example: first with ids picked from the served lake
// (pickedQuery), then, when that answer is not a 200 with data, with the route
// table's Example values; the first answer with data is shown.
func (a *API) RunExample(ctx context.Context, rt *Route) *Example {
	var first *Example
	if a.Q != nil {
		picks := a.docsPicks(ctx)
		if q, vars, target, ok := pickedQuery(rt, picks); ok {
			first = a.runExample(ctx, rt, q, vars, target, "")
			if first.Status == http.StatusOK && !emptyBody(first.Body) {
				return first
			}
		}
	}
	q, vars, target, missing := ExampleQuery(rt)
	ex := a.runExample(ctx, rt, q, vars, target, missing)
	if first != nil && (ex.Status != http.StatusOK || emptyBody(ex.Body)) && first.Status == http.StatusOK {
		return first
	}
	return ex
}

// docsPicks reads the lake's example ids once per API.
func (a *API) docsPicks(ctx context.Context) query.DocsExamples {
	st, _ := docsPickStates.LoadOrStore(a, &docsPickState{})
	ps := st.(*docsPickState)
	ps.once.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		var err error
		if ps.picks, err = a.Q.PickDocsExamples(ctx); err != nil {
			a.logger().Warn("docs: example ids from the lake", "err", err.Error())
		}
	})
	return ps.picks
}

type docsPickState struct {
	once  sync.Once
	picks query.DocsExamples
}

var docsPickStates sync.Map // *API -> *docsPickState

// pickedQuery is a route's example request with the ids the lake holds in place of
// the route table's examples: it changes only parameters that have an Example, and
// reports false when it changed none.
func pickedQuery(rt *Route, x query.DocsExamples) (url.Values, map[string]string, string, bool) {
	q, vars := url.Values{}, map[string]string{}
	path := openAPIPath(rt.Path)
	changed := false
	for i := range rt.Params {
		p := &rt.Params[i]
		v := p.Example
		if v == "" {
			continue
		}
		if pick := pickFor(rt, p, x); pick != "" && pick != v {
			v, changed = pick, true
		}
		if p.In == "path" {
			vars[p.Name] = v
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
		} else {
			q.Set(p.Name, v)
		}
	}
	if enc := q.Encode(); enc != "" {
		path += "?" + enc
	}
	return q, vars, path, changed
}

// pickFor maps a parameter to the lake's id of its kind ("" to keep the Example).
func pickFor(rt *Route, p *Param, x query.DocsExamples) string {
	wallets := strings.Contains(rt.Path, "/wallets/")
	switch rt.Area {
	case "predmkt":
		switch {
		case p.Name == "token_id" || p.Name == "token_ids":
			return x.PredmktToken
		case p.Name == "condition_id":
			return x.PredmktCondition
		case p.Name == "wallet" || p.Name == "address" && wallets:
			return x.PredmktWallet
		}
	case "perpdex":
		if strings.HasSuffix(rt.Path, "/positions/match") {
			switch p.Name {
			case "coin":
				return x.PositionCoin
			case "side":
				return x.PositionSide
			case "leverage":
				return x.PositionLeverage
			case "entry_price":
				return x.PositionEntry
			}
			return ""
		}
		switch {
		case p.Name == "address" && wallets:
			return x.PerpdexWallet
		case p.Name == "coin":
			return x.PerpdexCoin
		}
	case "onchain":
		switch {
		case p.Name == "address" && strings.HasSuffix(rt.Path, "/ens"):
			return x.OnchainENS
		case p.Name == "address" && strings.Contains(rt.Path, "/labels/"):
			return x.OnchainLabelled
		case p.Name == "address" && wallets, p.Name == "wallet_a":
			return x.OnchainWallet
		case p.Name == "wallet_b":
			return x.OnchainPeer
		}
	}
	return ""
}

// emptyBody reports whether an example body holds no data: [] or {}, or an object
// whose arrays are all empty.
func emptyBody(body string) bool {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return strings.TrimSpace(body) == ""
	}
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		arrays, full := 0, 0
		for _, e := range x {
			if arr, ok := e.([]any); ok {
				arrays++
				if len(arr) > 0 {
					full++
				}
			}
		}
		return len(x) == 0 || arrays > 0 && full == 0
	}
	return false
}

// runExample runs one example request through Exec (or the route's streamer).
func (a *API) runExample(ctx context.Context, rt *Route, q url.Values, vars map[string]string, target, missing string) *Example {
	ex := &Example{Request: target}
	ex.Curl = fmt.Sprintf("curl -s -X %s -H \"X-API-Key: $MDQ_KEY\" '%s%s'", rt.Method, DefaultBase, target)
	if rt.Public {
		ex.Curl = fmt.Sprintf("curl -s '%s%s'", DefaultBase, target)
	}
	if missing != "" {
		ex.Missing = "no example: the route table gives no Example for the required parameter " + missing
		return ex
	}
	if a.Q == nil {
		ex.Missing = "no example: no lake is open"
		return ex
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if rt.Path == "/v1/usage" {
		// The route reports its caller's budget: the example is called as a key of
		// user docs (peeking at the budget, spending nothing).
		ctx = context.WithValue(ctx, principalKey{}, ratelimit.Principal{CredentialID: "0d0c5e4a3b2a", Kind: ratelimit.KindAPIKey, User: "docs"})
		if a.Budget != nil {
			ctx = context.WithValue(ctx, budgetKey{}, a.Budget)
		}
	}
	var body []byte
	if rt.Stream != nil {
		v, err := rt.Parse(q, vars)
		if err == nil {
			lw := &lineLimitWriter{max: exampleItems}
			err = rt.Stream(ctx, a.Q, v, lw)
			if errors.Is(err, errEnoughLines) {
				err = nil
				ex.Shortened = true
			}
			ex.Body = lw.buf.String()
		}
		if err != nil {
			ex.Status, ex.Body = statusBody(rt, err)
		} else {
			ex.Status = http.StatusOK
		}
		return ex
	}
	res := a.Exec(ctx, rt, q, vars)
	if res.Err != nil {
		ex.Status, ex.Body = statusBody(rt, res.Err)
		return ex
	}
	var buf bytes.Buffer
	if err := Encode(&buf, res.Data); err != nil {
		ex.Status, ex.Body = statusBody(rt, err)
		return ex
	}
	body = buf.Bytes()
	short, shortened, err := shortenJSON(body, exampleItems)
	if err != nil {
		short = body
	}
	ex.Status, ex.Body, ex.Shortened = http.StatusOK, string(short), shortened
	return ex
}

func statusBody(rt *Route, err error) (int, string) {
	status, msg := Status(err)
	b, _ := marshalIndent(ErrorBody(rt.Area, msg))
	return status, string(b)
}

var errEnoughLines = errors.New("example has enough lines")

type lineLimitWriter struct {
	buf   bytes.Buffer
	lines int
	max   int
}

func (w *lineLimitWriter) Write(p []byte) (int, error) {
	for i, c := range p {
		w.buf.WriteByte(c)
		if c == '\n' {
			w.lines++
			if w.lines >= w.max {
				return i + 1, errEnoughLines
			}
		}
	}
	return len(p), nil
}

// ShortenJSON re-indents a JSON value as the docs page shows it, keeping object key
// order and the first max items of every array.
func ShortenJSON(b []byte, max int) ([]byte, error) {
	out, _, err := shortenJSON(b, max)
	return out, err
}

func shortenJSON(b []byte, max int) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	shortened := false
	var read func() (any, error)
	read = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' {
				o := &Ordered{}
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					v, err := read()
					if err != nil {
						return nil, err
					}
					o.Set(k.(string), v)
				}
				_, err := dec.Token()
				return o, err
			}
			arr := []any{}
			for dec.More() {
				v, err := read()
				if err != nil {
					return nil, err
				}
				if len(arr) < max {
					arr = append(arr, v)
				} else {
					shortened = true
				}
			}
			_, err := dec.Token()
			return arr, err
		}
		return tok, nil
	}
	v, err := read()
	if err != nil {
		return nil, false, err
	}
	out, err := marshalIndent(v)
	return out, shortened, err
}

// DocsHandler serves the docs page. It needs no credential.
func (a *API) DocsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/docs" && r.URL.Path != "/docs/" {
			writeError(w, "other", http.StatusNotFound, "no route for "+r.URL.Path)
			return
		}
		s := a.docsState()
		if s.err != nil {
			a.logger().Error("docs", "err", s.err)
			writeError(w, "other", http.StatusServiceUnavailable, "docs unavailable")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Add("Vary", "Host")
		w.Write(withBase(s.page, servedBase(r))) //nolint:errcheck
	})
}

// OpenAPIHandler serves the document. It needs no credential.
func (a *API) OpenAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi.json" {
			writeError(w, "other", http.StatusNotFound, "no route for "+r.URL.Path)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Add("Vary", "Host")
		w.Write(withBase(OpenAPIJSON(), servedBase(r))) //nolint:errcheck
	})
}

// DefaultBase is the address the document and the docs page are rendered with; each
// request gets them with the address it reached instead (servedBase).
const DefaultBase = "http://127.0.0.1:8080"

var hostRe = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])(:[0-9]{1,5})?$`)

// servedBase is the base URL a client reached this server at: the Host it sent (when
// it is a plain host[:port], since it is written into the page) and https behind TLS or
// a proxy that says so; DefaultBase otherwise.
func servedBase(r *http.Request) string {
	if !hostRe.MatchString(r.Host) {
		return DefaultBase
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withBase writes base in place of DefaultBase (servers, curl lines). base holds only
// host characters (hostRe), so it needs no escaping in JSON or HTML.
func withBase(b []byte, base string) []byte {
	if base == DefaultBase {
		return b
	}
	return bytes.ReplaceAll(b, []byte(DefaultBase), []byte(base))
}

// SurfaceMounts are the machine-readable and human surface of the route table: the
// OpenAPI document, the docs page, the MCP endpoint and its OAuth protected-resource
// metadata. They read the API's Auth, Budget and Issuer at request time, so they can be
// mounted before the access wiring sets them.
func (a *API) SurfaceMounts() []Mount {
	return []Mount{
		{Prefix: "/openapi.json", Handler: a.OpenAPIHandler()},
		{Prefix: "/docs", Handler: a.DocsHandler()},
		{Prefix: "/mcp", Handler: a.MCPHandler()},
		{Prefix: "/.well-known/oauth-protected-resource", Handler: a.ProtectedResourceHandler()},
	}
}

// The view of the docs page.

type docsView struct {
	Title, Summary, Description string
	Count                       string
	Areas                       []*docsArea
}

type docsArea struct {
	Name, Description string
	Ops               []*docsOp
}

type docsOp struct {
	ID, Method, Path, Summary string
	Description               string
	Params                    []docsParam
	Limits                    []string
	Example                   *Example
	Shapes                    []docsShape
	Errors                    []string
	MCP                       string
	Auth                      string
}

type docsParam struct {
	Name, In, Type, Default, Range, Description string
	Required                                    bool
}

type docsShape struct {
	Name   string
	Fields []docsField
}

type docsField struct {
	Name, Type, Description string
	Optional                bool
}

func buildDocsView(doc *Document, examples map[*Route]*Example) *docsView {
	v := &docsView{Title: doc.Info.Title, Summary: doc.Info.Summary, Description: doc.Info.Description}
	get, post := 0, 0
	areas := map[string]*docsArea{}
	for _, t := range doc.Tags {
		a := &docsArea{Name: t.Name, Description: t.Description}
		areas[t.Name] = a
		v.Areas = append(v.Areas, a)
	}
	for _, path := range doc.Paths.Keys() {
		item, _ := doc.Paths.Get(path)
		for _, method := range item.(*Ordered).Keys() {
			o, _ := item.(*Ordered).Get(method)
			op := o.(*Operation)
			if strings.HasPrefix(path, "/v1/") {
				if method == "get" {
					get++
				} else if method == "post" {
					post++
				}
			}
			dop := &docsOp{ID: op.OperationID, Method: strings.ToUpper(method), Path: path, Summary: op.Summary,
				Description: op.Description, Example: examples[op.Route]}
			for _, p := range op.Parameters {
				dp := docsParam{Name: p.Name, In: p.In, Required: p.Required, Type: schemaType(doc, p.Schema),
					Description: p.Description}
				if p.Schema.Default != nil {
					dp.Default = DisplayValue(p.Schema.Default)
				}
				var rng []string
				if p.Schema.Minimum != nil || p.Schema.Maximum != nil {
					lo, hi := "", ""
					if p.Schema.Minimum != nil {
						lo = num(*p.Schema.Minimum)
					}
					if p.Schema.Maximum != nil {
						hi = num(*p.Schema.Maximum)
					}
					rng = append(rng, "accepted "+lo+"…"+hi)
				}
				if p.AppliedMaximum != nil || p.AppliedMinimum != nil {
					lo, hi := "", ""
					if p.AppliedMinimum != nil {
						lo = num(*p.AppliedMinimum)
					}
					if p.AppliedMaximum != nil {
						hi = num(*p.AppliedMaximum)
					}
					rng = append(rng, "applied "+lo+"…"+hi)
					dop.Limits = append(dop.Limits, fmt.Sprintf("%s: applied range %s…%s (silent)", p.Name, lo, hi))
				}
				if p.Schema.MaxItems != nil {
					rng = append(rng, fmt.Sprintf("at most %d items", *p.Schema.MaxItems))
					dop.Limits = append(dop.Limits, fmt.Sprintf("%s: at most %d items", p.Name, *p.Schema.MaxItems))
				}
				if p.Schema.MaxLength != nil {
					rng = append(rng, fmt.Sprintf("at most %d characters", *p.Schema.MaxLength))
				}
				if len(p.Schema.Enum) > 0 {
					var es []string
					for _, e := range p.Schema.Enum {
						es = append(es, fmt.Sprint(e))
					}
					rng = append(rng, strings.Join(es, ", "))
				}
				dp.Range = strings.Join(rng, "; ")
				dop.Params = append(dop.Params, dp)
			}
			if op.Security != nil && len(*op.Security) == 0 {
				dop.Auth = "Public: no credential."
			} else {
				dop.Auth = "X-API-Key or Authorization: Bearer."
				if _, billed := op.Responses.Get("429"); billed {
					dop.Auth += " One unit of the hourly budget per call."
				}
			}
			for _, code := range op.Responses.Keys() {
				if code == "200" {
					continue
				}
				r, _ := op.Responses.Get(code)
				dop.Errors = append(dop.Errors, code+" "+responseDescription(doc, r.(*Response)))
			}
			if op.MCPTool != nil {
				dop.MCP = fmt.Sprintf("%s (%d credit(s) per call)", op.MCPTool.Name, op.MCPTool.Credits)
			}
			if ok, _ := op.Responses.Get("200"); ok != nil {
				dop.Shapes = shapes(doc, ok.(*Response))
			}
			a := areas[op.Tags[0]]
			a.Ops = append(a.Ops, dop)
		}
	}
	v.Count = fmt.Sprintf("%d GET and %d POST operations under /v1", get, post)
	return v
}

func responseDescription(doc *Document, r *Response) string {
	if r.Ref != "" {
		if c, ok := doc.Components.Responses.Get(strings.TrimPrefix(r.Ref, "#/components/responses/")); ok {
			r = c.(*Response)
		}
	}
	return r.Description
}

// shapes lists the object schemas a success body is made of: the body itself, then
// every named row type it reaches, in reading order.
func shapes(doc *Document, r *Response) []docsShape {
	var body *Schema
	for _, ct := range r.Content.Keys() {
		mt, _ := r.Content.Get(ct)
		body = mt.(*MediaType).Schema
	}
	if body == nil {
		return nil
	}
	var out []docsShape
	seen := map[string]bool{}
	var queue []string
	var visit func(s *Schema)
	visit = func(s *Schema) {
		if s == nil {
			return
		}
		if s.Ref != "" {
			name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
			if !seen[name] {
				seen[name] = true
				queue = append(queue, name)
			}
			return
		}
		visit(s.Items)
		for _, a := range s.AnyOf {
			visit(a)
		}
		if ap, ok := s.AdditionalProperties.(*Schema); ok {
			visit(ap)
		}
		for _, k := range s.Properties.Keys() {
			p, _ := s.Properties.Get(k)
			visit(p.(*Schema))
		}
	}
	describe := func(name string, s *Schema) {
		sh := docsShape{Name: name}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		for _, k := range s.Properties.Keys() {
			p, _ := s.Properties.Get(k)
			ps := p.(*Schema)
			sh.Fields = append(sh.Fields, docsField{Name: k, Type: schemaType(doc, ps), Description: ps.Description, Optional: !req[k]})
		}
		out = append(out, sh)
		visit(s)
	}
	if body.Properties.Len() > 0 {
		describe("Response body", body)
	} else {
		visit(body)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if c, ok := doc.Components.Schemas.Get(name); ok && c.(*Schema).Properties.Len() > 0 {
			describe(name, c.(*Schema))
		}
	}
	return out
}

// schemaType is a schema's type for people: "integer", "number or null", "array of
// CandleBar".
func schemaType(doc *Document, s *Schema) string {
	if s == nil {
		return "any"
	}
	if n, inner := s.Nullable(); n {
		return schemaType(doc, inner) + " or null"
	}
	if s.Ref != "" {
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	}
	var t string
	switch x := s.Type.(type) {
	case string:
		t = x
	case []string:
		if len(x) >= 6 {
			return "any"
		}
		t = strings.Join(x, " or ")
	default:
		return "any"
	}
	switch t {
	case "array":
		return "array of " + schemaType(doc, s.Items)
	case "object":
		if ap, ok := s.AdditionalProperties.(*Schema); ok {
			return "object of " + schemaType(doc, ap)
		}
	}
	if s.Format != "" && s.Format != "int64" && s.Format != "double" {
		t += " (" + s.Format + ")"
	}
	return t
}
