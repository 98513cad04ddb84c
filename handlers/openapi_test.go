package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gorilla/mux"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/ratelimit"
)

// The generated document, loaded by an independent implementation (kin-openapi), and a
// router over its paths, shared by every test of the package through validateExchange.
var (
	specOnce   sync.Once
	spec       *openapi3.T
	specErr    error
	specRouter *mux.Router
)

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	specOnce.Do(func() {
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", decodeNDJSON)
		loader := openapi3.NewLoader()
		spec, specErr = loader.LoadFromData(handlers.OpenAPIJSON())
		if specErr != nil {
			return
		}
		if specErr = spec.Validate(context.Background()); specErr != nil {
			return
		}
		// Literal segments before variables, as the API's own router does.
		paths := spec.Paths.InMatchingOrder()
		sort.SliceStable(paths, func(i, j int) bool {
			return strings.Count(paths[i], "{") < strings.Count(paths[j], "{")
		})
		specRouter = mux.NewRouter()
		for _, p := range paths {
			specRouter.Path(p).Name(p)
		}
	})
	if specErr != nil {
		t.Fatalf("the generated OpenAPI document does not load: %v", specErr)
	}
	return spec
}

// decodeNDJSON reads a newline-delimited JSON body as an array, one item per line.
func decodeNDJSON(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	var out []any
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// validateExchange checks one served request against the generated document: the
// response (status declared, body and headers matching the schema) always, and the
// request both ways: a request the document rejects must not be answered 200.
func validateExchange(t *testing.T, req *http.Request, code int, header http.Header, body []byte) {
	t.Helper()
	doc := loadSpec(t)
	var m mux.RouteMatch
	if !specRouter.Match(req, &m) || m.Route == nil {
		if strings.HasPrefix(req.URL.Path, "/v1/") && code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
			t.Errorf("openapi: %s %s answered %d but the document has no such path", req.Method, req.URL.Path, code)
		}
		return
	}
	path := m.Route.GetName()
	item := doc.Paths.Value(path)
	op := item.GetOperation(req.Method)
	if op == nil {
		if code != http.StatusMethodNotAllowed {
			t.Errorf("openapi: %s %s answered %d but the document has no %s operation", req.Method, path, code, req.Method)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: m.Vars,
		Route:      &routers.Route{Spec: doc, Path: path, PathItem: item, Method: req.Method, Operation: op},
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && code == http.StatusOK {
		t.Errorf("openapi: the document rejects %s %s, which the server answered 200: %v", req.Method, req.URL, err)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 code,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("openapi: response of %s %s (%d) does not match the document: %v\nbody: %.600s", req.Method, req.URL, code, err, body)
	}
}

// TestOpenAPIDocumentIsValid: the document loads and validates as OpenAPI 3.1 in an
// independent implementation, and `mdq openapi` and /openapi.json serve the same bytes.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := loadSpec(t)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	for _, name := range []string{"ApiKeyAuth", "BearerAuth"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
	if s := doc.Components.SecuritySchemes["ApiKeyAuth"].Value; s.In != "header" || s.Name != "X-API-Key" {
		t.Errorf("api key scheme: %+v", s)
	}
	if s := doc.Components.SecuritySchemes["BearerAuth"].Value; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("bearer scheme: %+v", s)
	}
}

// TestOpenAPIEveryRouteDocumented: every /v1 route of the table is an operation of the
// document with each of its parameters (where it travels, required, type, default,
// enumeration, accepted range, applied cap) and its error responses.
func TestOpenAPIEveryRouteDocumented(t *testing.T) {
	doc := loadSpec(t)
	for _, rt := range handlers.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		item := doc.Paths.Value(rt.Path)
		if item == nil {
			t.Errorf("%s %s: not in the document", rt.Method, rt.Path)
			continue
		}
		op := item.GetOperation(rt.Method)
		if op == nil {
			t.Errorf("%s %s: no %s operation", rt.Method, rt.Path, rt.Method)
			continue
		}
		if op.OperationID != handlers.OperationID(rt) || op.Summary == "" {
			t.Errorf("%s: operationId %q summary %q", rt.Path, op.OperationID, op.Summary)
		}
		if len(op.Parameters) != len(rt.Params) {
			t.Errorf("%s: %d parameters in the document, %d in the table", rt.Path, len(op.Parameters), len(rt.Params))
		}
		for _, p := range rt.Params {
			in := p.In
			if in == "" {
				in = "query"
			}
			dp := op.Parameters.GetByInAndName(in, p.Name)
			if dp == nil {
				t.Errorf("%s: parameter %s (%s) missing", rt.Path, p.Name, in)
				continue
			}
			s := dp.Schema.Value
			if dp.Required != (p.Required || in == "path") {
				t.Errorf("%s %s: required %v", rt.Path, p.Name, dp.Required)
			}
			wantType := map[handlers.Kind]string{handlers.Int: "integer", handlers.Number: "number", handlers.Bool: "boolean",
				handlers.List: "array"}[p.Kind]
			if wantType == "" {
				wantType = "string"
			}
			if !s.Type.Includes(wantType) {
				t.Errorf("%s %s: type %v, want %s", rt.Path, p.Name, s.Type, wantType)
			}
			if p.Kind == handlers.Enum && p.EnumFallback == "" && len(s.Enum) != len(p.Enum) {
				t.Errorf("%s %s: enum %v, want %v", rt.Path, p.Name, s.Enum, p.Enum)
			}
			if p.Max != nil && (s.Max == nil || *s.Max != *p.Max) {
				t.Errorf("%s %s: maximum %v, want %v", rt.Path, p.Name, s.Max, *p.Max)
			}
			if p.Min != nil && !p.ZeroIsDefault && (s.Min == nil || *s.Min != *p.Min) {
				t.Errorf("%s %s: minimum %v, want %v", rt.Path, p.Name, s.Min, *p.Min)
			}
			if p.ClampHi != nil && !strings.Contains(strings.ToLower(dp.Description), "applied cap") {
				t.Errorf("%s %s: the applied cap %v is not documented: %q", rt.Path, p.Name, *p.ClampHi, dp.Description)
			}
			if p.Default != nil && s.Default == nil && !hugeDefault(p.Default) {
				t.Errorf("%s %s: default %v missing", rt.Path, p.Name, p.Default)
			}
		}
		for _, code := range []int{200, 503} {
			if op.Responses.Status(code) == nil {
				t.Errorf("%s: no %d response", rt.Path, code)
			}
		}
		if !rt.Public {
			if op.Responses.Status(401) == nil {
				t.Errorf("%s: no 401 response", rt.Path)
			}
			if !rt.Unbilled {
				r := op.Responses.Status(429)
				if r == nil || r.Value.Headers["Retry-After"] == nil {
					t.Errorf("%s: no 429 response with Retry-After", rt.Path)
				}
			}
		}
		if len(rt.Params) > 0 && op.Responses.Status(400) == nil {
			t.Errorf("%s: no 400 response", rt.Path)
		}
		errKey := "error"
		if rt.Area == "onchain" {
			errKey = "detail"
		}
		if r := op.Responses.Status(503); r != nil {
			if props := r.Value.Content.Get("application/json").Schema.Value.Properties; props[errKey] == nil {
				t.Errorf("%s: the error body lacks %q", rt.Path, errKey)
			}
		}
	}
}

func hugeDefault(v any) bool {
	i, ok := v.(int64)
	return ok && (i >= 1<<53 || i <= -(1<<53))
}

// TestOpenAPIOperationCount reports the /v1 operation count against SPEC's 61 GET and
// one POST, and checks the document counts exactly what the route table holds.
func TestOpenAPIDeclares61GETAndOnePOST(t *testing.T) {
	doc := loadSpec(t)
	count := map[string]int{}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method := range item.Operations() {
			count[method]++
		}
	}
	table := map[string]int{}
	for _, rt := range handlers.Routes() {
		if strings.HasPrefix(rt.Path, "/v1/") {
			table[rt.Method]++
		}
	}
	for _, m := range []string{"GET", "POST"} {
		if count[m] != table[m] {
			t.Errorf("%s: document %d, route table %d", m, count[m], table[m])
		}
	}
	// SPEC §1 and §9: the machine-readable description of /v1 declares 61 GET
	// operations and one POST.
	if count["GET"] != 61 || count["POST"] != 1 || len(count) != 2 {
		t.Errorf("document declares %v under /v1; SPEC §9 says 61 GET and 1 POST", count)
	}
}

// docTypes exercise the response-schema reflection.
type docInner struct {
	N int64 `json:"n"`
}

type docBase struct {
	Wallet string `json:"wallet" doc:"lower-case address"`
}

type docRow struct {
	docBase
	Price    *float64          `json:"price" doc:"null when no mid is recorded"`
	Note     string            `json:"note,omitempty"`
	At       time.Time         `json:"at"`
	Inner    *docInner         `json:"inner"`
	Tags     []string          `json:"tags"`
	ByWindow map[string]int64  `json:"by_window"`
	Skipped  string            `json:"-"`
	Raw      json.RawMessage   `json:"raw"`
	Str      int64             `json:"str,string"`
	hidden   int               //nolint:unused
	Rows     []docInner        `json:"rows"`
	Any      any               `json:"any"`
	Meta     map[string]string `json:"meta,omitempty"`
}

// TestOpenAPIResponseReflection: a response type becomes its schema the way
// encoding/json writes it: pointer is nullable, omitempty optional, embedded fields
// flattened, doc tags are descriptions, and a value drifting from it fails validation.
func TestOpenAPIResponseReflection(t *testing.T) {
	rt := &handlers.Route{Method: "GET", Path: "/v1/test/rows", Area: "test", Summary: "rows", Response: []docRow{},
		Params: []handlers.Param{{Name: "limit", Kind: handlers.Int, Default: int64(10), Min: handlers.F(1), Max: handlers.F(1000), ClampHi: handlers.F(50)}}}
	b, err := json.Marshal(handlers.BuildOpenAPI([]*handlers.Route{rt}))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	row := doc.Components.Schemas["docRow"].Value
	if row == nil {
		t.Fatalf("no docRow component: %s", b)
	}
	for name, want := range map[string]string{
		"wallet": "string", "price": "number", "at": "string", "tags": "array", "by_window": "object", "str": "string", "rows": "array",
	} {
		p := row.Properties[name]
		if p == nil || !p.Value.Type.Includes(want) {
			t.Errorf("%s: %v, want %s", name, p, want)
		}
	}
	if !row.Properties["price"].Value.Type.Includes("null") || row.Properties["wallet"].Value.Type.Includes("null") {
		t.Error("pointer must be nullable and only pointers")
	}
	if row.Properties["price"].Value.Description != "null when no mid is recorded" || row.Properties["wallet"].Value.Description != "lower-case address" {
		t.Error("doc tags must become descriptions (embedded fields too)")
	}
	if row.Properties["Skipped"] != nil || row.Properties["skipped"] != nil || row.Properties["hidden"] != nil {
		t.Error("json:\"-\" and unexported fields must not appear")
	}
	req := strings.Join(row.Required, ",")
	if strings.Contains(req, "note") || strings.Contains(req, "meta") || !strings.Contains(req, "price") || !strings.Contains(req, "wallet") {
		t.Errorf("required %v: omitempty is optional, a nullable pointer is still present", row.Required)
	}
	if row.Properties["at"].Value.Format != "date-time" {
		t.Error("time.Time is a date-time string")
	}
	lim := doc.Paths.Value("/v1/test/rows").Get.Parameters.GetByInAndName("query", "limit")
	if *lim.Schema.Value.Max != 1000 || *lim.Schema.Value.Min != 1 || !strings.Contains(strings.ToLower(lim.Description), "applied cap 50") ||
		fmt.Sprint(lim.Extensions["x-applied-maximum"]) != "50" {
		t.Errorf("limit: %+v %q %v", lim.Schema.Value, lim.Description, lim.Extensions)
	}

	// A drifting value fails response validation; the declared one passes.
	good, _ := json.Marshal([]docRow{{docBase: docBase{Wallet: "0xab"}, Tags: []string{}, Rows: []docInner{}, ByWindow: map[string]int64{}}})
	nullTags := bytes.Replace(good, []byte(`"tags":[]`), []byte(`"tags":null`), 1)
	wrongType := bytes.Replace(good, []byte(`"wallet":"0xab"`), []byte(`"wallet":12`), 1)
	extra := bytes.Replace(good, []byte(`"wallet":"0xab"`), []byte(`"wallet":"0xab","surprise":1`), 1)
	for name, tc := range map[string]struct {
		body []byte
		ok   bool
	}{"declared": {good, true}, "nil slice": {nullTags, false}, "wrong type": {wrongType, false}, "undeclared field": {extra, false}} {
		httpReq := httptest.NewRequest("GET", "/v1/test/rows", nil)
		route := &routers.Route{Spec: doc, Path: "/v1/test/rows", PathItem: doc.Paths.Value("/v1/test/rows"), Method: "GET",
			Operation: doc.Paths.Value("/v1/test/rows").Get}
		err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: httpReq, Route: route},
			Status:                 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(tc.body)),
		})
		if (err == nil) != tc.ok {
			t.Errorf("%s: validation error %v, want ok=%v", name, err, tc.ok)
		}
	}
}

// rejectAll is an Authenticator that knows one key.
type oneKey struct{ key string }

func (k oneKey) Authenticate(_ context.Context, apiKey, bearer string) (ratelimit.Principal, error) {
	if apiKey == k.key || bearer == k.key {
		return ratelimit.Principal{CredentialID: "k1", Kind: "api_key", User: "u"}, nil
	}
	return ratelimit.Principal{}, ratelimit.ErrInvalidCredential
}

// TestOpenAPIServedWithoutKey: /openapi.json needs no credential and serves exactly
// what `mdq openapi` prints, with servers naming the address the request reached,
// while /v1 routes still need one.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	api := &handlers.API{Q: openQueries(t, testlake.Tiny(t)), Auth: oneKey{"sekrit"}}
	api.Mounts = api.SurfaceMounts()
	h := api.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil)) // Host: example.com
	want := bytes.ReplaceAll(handlers.OpenAPIJSON(), []byte(handlers.DefaultBase), []byte("http://example.com"))
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi.json: %d %.200s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/predmkt/ohlcv?token_id=1&interval=1h", nil))
	if rec.Code != 401 {
		t.Fatalf("/v1 without a key: %d", rec.Code)
	}
	validateExchange(t, httptest.NewRequest("GET", "/v1/predmkt/ohlcv?token_id=1&interval=1h", nil), rec.Code, rec.Header(), rec.Body.Bytes())
}

func ExampleOperationID() {
	for _, rt := range handlers.Routes() {
		if rt.Path == "/v1/predmkt/ohlcv" {
			fmt.Println(handlers.OperationID(rt))
		}
	}
	// Output: predmktOhlcv
}
