package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Document is an OpenAPI 3.1 document, generated from the route table (never written
// by hand): every route with its parameters, its response schema reflected from
// Route.Response, its error responses and the security schemes.
type Document struct {
	OpenAPI    string                `json:"openapi"`
	Info       Info                  `json:"info"`
	Servers    []Server              `json:"servers"`
	Security   []map[string][]string `json:"security"`
	Tags       []Tag                 `json:"tags"`
	Paths      *Ordered              `json:"paths"` // path -> *Ordered (method -> *Operation)
	Components Components            `json:"components"`
}

// Info is the document's info object.
type Info struct {
	Title       string  `json:"title"`
	Version     string  `json:"version"`
	Summary     string  `json:"summary,omitempty"`
	Description string  `json:"description,omitempty"`
	License     License `json:"license"`
}

// License names the license of the API description.
type License struct {
	Name       string `json:"name"`
	Identifier string `json:"identifier,omitempty"`
}

// Server is one base URL.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Tag groups the operations of one area.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Components holds the shared schemas, responses and security schemes.
type Components struct {
	Schemas         *Ordered                   `json:"schemas"`
	Responses       *Ordered                   `json:"responses,omitempty"`
	SecuritySchemes map[string]*SecurityScheme `json:"securitySchemes"`
}

// SecurityScheme is an API key header or HTTP bearer authentication.
type SecurityScheme struct {
	Type         string `json:"type"`
	Description  string `json:"description,omitempty"`
	Name         string `json:"name,omitempty"`
	In           string `json:"in,omitempty"`
	Scheme       string `json:"scheme,omitempty"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// Operation is one route.
type Operation struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description,omitempty"`
	Tags        []string               `json:"tags"`
	Parameters  []*Parameter           `json:"parameters,omitempty"`
	Responses   *Ordered               `json:"responses"` // status -> *Response
	Security    *[]map[string][]string `json:"security,omitempty"`
	MCPTool     *MCPToolInfo           `json:"x-mcp-tool,omitempty"`
	Credits     int                    `json:"x-credits,omitempty"`

	Route *Route `json:"-"`
}

// MCPToolInfo names the MCP tool that runs the same query as an operation.
type MCPToolInfo struct {
	Name    string `json:"name"`
	Credits int    `json:"credits"`
}

// Parameter is one query or path parameter.
type Parameter struct {
	Name           string   `json:"name"`
	In             string   `json:"in"`
	Required       bool     `json:"required,omitempty"`
	Description    string   `json:"description,omitempty"`
	Style          string   `json:"style,omitempty"`
	Explode        *bool    `json:"explode,omitempty"`
	Schema         *Schema  `json:"schema"`
	Example        any      `json:"example,omitempty"`
	AppliedMinimum *float64 `json:"x-applied-minimum,omitempty"`
	AppliedMaximum *float64 `json:"x-applied-maximum,omitempty"`

	Param *Param `json:"-"`
}

// Response is a response object or a reference to a shared one.
type Response struct {
	Ref         string   `json:"$ref,omitempty"`
	Description string   `json:"description,omitempty"`
	Headers     *Ordered `json:"headers,omitempty"`
	Content     *Ordered `json:"content,omitempty"` // media type -> *MediaType
}

// MediaType holds a body's schema.
type MediaType struct {
	Schema *Schema `json:"schema"`
}

// Header is a response header.
type Header struct {
	Description string  `json:"description"`
	Schema      *Schema `json:"schema"`
}

var (
	openAPIOnce sync.Once
	openAPIDoc  *Document
	openAPIJSON []byte
)

// OpenAPI returns the document of the route table (built once).
func OpenAPI() *Document {
	openAPIOnce.Do(func() {
		openAPIDoc = BuildOpenAPI(Routes())
		b, err := marshalIndent(openAPIDoc)
		if err != nil {
			panic(fmt.Sprintf("openapi: %v", err)) // a response type that cannot be described is a programming error
		}
		openAPIJSON = b
	})
	return openAPIDoc
}

// OpenAPIJSON returns the document as indented JSON with a trailing newline.
func OpenAPIJSON() []byte {
	OpenAPI()
	return openAPIJSON
}

func marshalIndent(v any) ([]byte, error) {
	b, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

var areaTags = []Tag{
	{"platform", "The caller's own usage and budget (and, outside /v1, /healthz)."},
	{"access", "The caller's own credential and budget."},
	{"onchain", "EVM wallets, ERC-20 tokens, transfers, labels, PnL series and counterparty graphs. Errors answer {\"detail\": ...}."},
	{"predmkt", "Prediction market: wallet leaderboard, smart-money signals, candles, order books and the raw event tape. Unknown query parameters are 400."},
	{"perpdex", "Perpetuals venue: liquidations, trader leaderboards, venue stats, wallet trades, builder-code economics, holders and position matching."},
}

// BuildOpenAPI derives the document from routes.
func BuildOpenAPI(routes []*Route) *Document {
	gen := newSchemaGen("#/components/schemas/")
	doc := &Document{
		OpenAPI: "3.1.0",
		Info: Info{
			Title:   "mdq Market-Data Query Service",
			Version: "1.0.0",
			Summary: "Read-only market data over a local Parquet lake: on-chain, prediction market, perpetuals venue.",
			Description: "Generated from mdq's route table. Every /v1 route needs a credential (X-API-Key or " +
				"Authorization: Bearer; header names are case-insensitive) and spends one unit of the sliding-hour " +
				"budget (20,000 requests per credential; all OAuth tokens of one user share one counter); MCP tool " +
				"calls at /mcp spend the same budget. Prices are probabilities 0 to 1 on the prediction market; USD " +
				"amounts are plain dollars; returned addresses are lower-case.",
			License: License{Name: "Apache-2.0", Identifier: "Apache-2.0"},
		},
		Servers:  []Server{{URL: DefaultBase, Description: "this server (the address each request reached; make run's by default)"}},
		Security: []map[string][]string{{"ApiKeyAuth": {}}, {"BearerAuth": {}}},
		Paths:    &Ordered{},
		Components: Components{
			Schemas:   gen.defs,
			Responses: &Ordered{},
			SecuritySchemes: map[string]*SecurityScheme{
				"ApiKeyAuth": {Type: "apiKey", In: "header", Name: "X-API-Key",
					Description: "An API key (mdq keys create). Its own hourly counter."},
				"BearerAuth": {Type: "http", Scheme: "bearer", BearerFormat: "JWT",
					Description: "An OAuth access token of the configured issuer, or one mdq issued. Tokens of one user share one counter."},
			},
		},
	}
	used := map[string]bool{}
	for _, rt := range routes {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue // the document describes /v1 (SPEC §9); /healthz is in docs/API.md
		}
		used[rt.Area] = true
		path := openAPIPath(rt.Path)
		item, ok := doc.Paths.Get(path)
		if !ok {
			item = &Ordered{}
			doc.Paths.Set(path, item)
		}
		item.(*Ordered).Set(strings.ToLower(rt.Method), buildOperation(doc, gen, rt))
	}
	for _, t := range areaTags {
		if used[t.Name] {
			doc.Tags = append(doc.Tags, t)
			delete(used, t.Name)
		}
	}
	for _, rt := range routes { // areas without a tag text, in table order
		if used[rt.Area] {
			doc.Tags = append(doc.Tags, Tag{rt.Area, "Routes of the " + rt.Area + " area."})
			delete(used, rt.Area)
		}
	}
	return doc
}

var muxVar = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// openAPIPath drops gorilla/mux variable patterns: /a/{id:[0-9]+} -> /a/{id}.
func openAPIPath(p string) string { return muxVar.ReplaceAllString(p, "{$1}") }

// OperationID is a route's operationId: its area and CLI name in camel case.
func OperationID(rt *Route) string {
	parts := strings.FieldsFunc(rt.Area+"-"+rt.CLIName(), func(r rune) bool { return r == '-' || r == '_' || r == '/' })
	if rt.Area == rt.CLIName() {
		parts = parts[:1]
	}
	if rt.Method != http.MethodGet && rt.Method != http.MethodPost || rt.Method == http.MethodPost && rt.Area != "onchain" {
		parts = append(parts, strings.ToLower(rt.Method))
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			p = exportName(p)
		}
		b.WriteString(p)
	}
	return b.String()
}

func buildOperation(doc *Document, gen *schemaGen, rt *Route) *Operation {
	op := &Operation{
		OperationID: OperationID(rt),
		Summary:     rt.Summary,
		Tags:        []string{rt.Area},
		Responses:   &Ordered{},
		Route:       rt,
	}
	if op.Summary == "" {
		op.Summary = rt.Method + " " + rt.Path
	}
	var notes []string
	if rt.Description != "" {
		notes = append(notes, rt.Description)
	}
	if rt.StrictParams {
		notes = append(notes, "An unknown query parameter is 400.")
	}
	switch {
	case rt.Public:
		notes = append(notes, "Public: no credential needed; spends no budget.")
		op.Security = &[]map[string][]string{}
	case rt.Unbilled:
		notes = append(notes, "Needs a credential; spends no budget.")
	}
	if rt.Credits > 0 {
		notes = append(notes, fmt.Sprintf("Logs %d credit(s) per REST call.", rt.Credits))
		op.Credits = rt.Credits
	}
	if rt.MCP != nil {
		op.MCPTool = &MCPToolInfo{Name: rt.MCP.Name, Credits: rt.MCP.Credits}
		notes = append(notes, fmt.Sprintf("Also the MCP tool `%s` at /mcp (%d credit(s) per call), same query and payload.", rt.MCP.Name, rt.MCP.Credits))
	}
	op.Description = strings.Join(notes, "\n\n")

	hasPath := false
	for i := range rt.Params {
		p := &rt.Params[i]
		if p.In == "path" {
			hasPath = true
		}
		op.Parameters = append(op.Parameters, buildParameter(p))
	}
	// A path variable the table forgot still has to be declared for the path to be valid.
	for _, m := range muxVar.FindAllStringSubmatch(rt.Path, -1) {
		if !declared(rt.Params, m[1]) {
			hasPath = true
			op.Parameters = append(op.Parameters, &Parameter{Name: m[1], In: "path", Required: true, Schema: &Schema{Type: "string"}})
		}
	}

	// Success.
	respType := typeOf(rt.Response)
	ok := &Response{Description: "OK", Content: &Ordered{}}
	if rt.Stream != nil {
		body := gen.of(respType)
		if body.Type != "array" {
			body = &Schema{Type: "array", Items: body}
		}
		body = withDescription(body, "One JSON value per line (newline-delimited JSON); each line is one item.")
		ct := rt.ContentType
		if ct == "" {
			ct = "application/x-ndjson"
		}
		ok.Content.Set(ct, &MediaType{Schema: body})
	} else {
		ok.Content.Set("application/json", &MediaType{Schema: gen.of(respType)})
	}
	if !rt.Public && !rt.Unbilled {
		ok.Headers = rateHeaders()
	}
	op.Responses.Set("200", ok)

	// Errors: the one status map of Status and wrap, in the area's body shape.
	area := "Error"
	if rt.Area == "onchain" {
		area = "OnchainError"
	}
	if len(rt.Params) > 0 || rt.StrictParams {
		op.Responses.Set("400", errorResponse(doc, area, "BadRequest", "Rejected input; the message names the parameter."))
	}
	if !rt.Public {
		op.Responses.Set("401", errorResponse(doc, area, "Unauthorized", "Missing or invalid credential."))
	}
	if hasPath {
		op.Responses.Set("404", errorResponse(doc, area, "NotFound", "No such resource."))
	}
	if !rt.Public && !rt.Unbilled {
		op.Responses.Set("429", errorResponse(doc, area, "RateLimited", "Hourly budget spent. Retry-After: 60 (advisory)."))
	}
	op.Responses.Set("503", errorResponse(doc, area, "Unavailable", "The store behind the route is unavailable; no driver text."))
	return op
}

func declared(ps []Param, name string) bool {
	for _, p := range ps {
		if p.Name == name && p.In == "path" {
			return true
		}
	}
	return false
}

func rateHeaders() *Ordered {
	h := &Ordered{}
	h.Set("X-RateLimit-Limit", &Header{Description: "Requests admitted per sliding hour.", Schema: &Schema{Type: "integer"}})
	h.Set("X-RateLimit-Remaining", &Header{Description: "Requests left in the current window.", Schema: &Schema{Type: "integer"}})
	h.Set("X-RateLimit-Reset", &Header{Description: "Epoch seconds when the oldest counted request leaves the window.", Schema: &Schema{Type: "integer"}})
	return h
}

// errorResponse registers (once) and references the shared error response of a body
// shape: Error is {"error": ...}, OnchainError {"detail": ...}.
func errorResponse(doc *Document, body, kind, desc string) *Response {
	name := kind
	if body == "OnchainError" {
		name = "Onchain" + kind
	}
	if _, ok := doc.Components.Responses.Get(name); !ok {
		if _, ok := doc.Components.Schemas.Get(body); !ok {
			key := "error"
			if body == "OnchainError" {
				key = "detail"
			}
			props := &Ordered{}
			props.Set(key, &Schema{Type: "string", Description: "What went wrong, for a person."})
			doc.Components.Schemas.Set(body, &Schema{Type: "object", Properties: props, Required: []string{key}, AdditionalProperties: false})
		}
		r := &Response{Description: desc, Content: &Ordered{}}
		r.Content.Set("application/json", &MediaType{Schema: &Schema{Ref: "#/components/schemas/" + body}})
		if kind == "RateLimited" {
			r.Headers = &Ordered{}
			r.Headers.Set("Retry-After", &Header{Description: "Seconds to wait (always 60; advisory).", Schema: &Schema{Type: "integer"}})
		}
		doc.Components.Responses.Set(name, r)
	}
	return &Response{Ref: "#/components/responses/" + name}
}

// buildParameter describes one Param: its type, default, enumeration, accepted range
// (minimum/maximum) and, in the description, the applied range and the quirks.
func buildParameter(p *Param) *Parameter {
	in := p.In
	if in == "" {
		in = "query"
	}
	par := &Parameter{Name: p.Name, In: in, Required: p.Required || in == "path", Param: p}
	s := ParamSchema(p)
	par.Schema = s
	if p.Kind == List {
		par.Style, par.Explode = "form", new(bool) // comma-separated
	}
	if p.Example != "" {
		par.Example = typedValue(p, p.Example)
	}
	par.AppliedMinimum, par.AppliedMaximum = p.ClampLo, p.ClampHi
	par.Description = ParamNotes(p)
	return par
}

// ParamSchema is the JSON Schema of a parameter's accepted values, shared by the
// OpenAPI document and the MCP input schemas.
func ParamSchema(p *Param) *Schema {
	s := &Schema{}
	switch p.Kind {
	case Int:
		s.Type, s.Format = "integer", "int64"
	case Number:
		s.Type = "number"
	case Bool:
		s.Type = "boolean"
	case Enum:
		s.Type = "string"
		if p.EnumFallback == "" {
			for _, e := range p.Enum {
				s.Enum = append(s.Enum, e)
			}
		}
	case Address:
		s.Type, s.Pattern = "string", "^0x[0-9a-fA-F]{40}$"
		if p.Message != "" {
			s.Pattern = "" // the route answers its own message for a malformed address
		}
	case List:
		s.Type, s.Items = "array", &Schema{Type: "string", Pattern: p.Pattern}
		if p.MaxItems > 0 {
			s.MaxItems = &p.MaxItems
		}
	default:
		s.Type = "string"
		if p.MaxLen > 0 {
			s.MaxLength = &p.MaxLen
		}
		s.Pattern = p.Pattern
	}
	if p.Kind == Int || p.Kind == Number {
		s.Minimum, s.Maximum = p.Min, p.Max
		if p.ZeroIsDefault && p.Min != nil && *p.Min > 0 {
			s.Minimum = F(0) // 0 is accepted and reads the default
		}
		if p.Lenient {
			s.Type = []string{s.Type.(string), "string"} // a value that does not parse is ignored
			s.Format = ""
		}
	}
	if p.Default != nil && !isHugeDefault(p.Default) {
		s.Default = p.Default
	}
	return s
}

// isHugeDefault hides "no bound" sentinels such as math.MaxInt64 from the document.
func isHugeDefault(v any) bool {
	switch x := v.(type) {
	case int64:
		return x >= 1<<53 || x <= -(1<<53)
	case float64:
		return x >= 1e300 || x <= -1e300
	}
	return false
}

// ParamNotes is the human description of a parameter: its doc and every rule the
// route table declares that a schema cannot say.
func ParamNotes(p *Param) string {
	notes := []string{}
	if p.Doc != "" {
		notes = append(notes, strings.TrimSuffix(p.Doc, "."))
	}
	if p.Kind == Enum && p.EnumFallback != "" {
		notes = append(notes, fmt.Sprintf("one of %s; any other value reads %s", strings.Join(p.Enum, ", "), p.EnumFallback))
	}
	if p.ZeroIsDefault {
		notes = append(notes, fmt.Sprintf("0 or an empty value reads the default (%s)", DisplayValue(p.Default)))
	}
	if p.Lenient {
		notes = append(notes, "a value that does not parse is ignored (the default applies)")
	}
	if p.ClampLo != nil {
		notes = append(notes, fmt.Sprintf("values below %s are served at %s", num(*p.ClampLo), num(*p.ClampLo)))
	}
	if p.ClampHi != nil {
		notes = append(notes, fmt.Sprintf("applied cap %s: larger accepted values are served at %s without error", num(*p.ClampHi), num(*p.ClampHi)))
	}
	if p.Kind == List && p.MaxItems > 0 {
		notes = append(notes, fmt.Sprintf("comma-separated; at most %d items", p.MaxItems))
	}
	if len(notes) == 0 {
		return ""
	}
	s := strings.Join(notes, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// DisplayValue renders a default or example for people.
func DisplayValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case []string:
		return strings.Join(x, ",")
	case float64:
		return num(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// typedValue converts a raw parameter text to its JSON type (for examples and MCP
// defaults); a value that does not parse stays a string.
func typedValue(p *Param, raw string) any {
	switch p.Kind {
	case Int:
		if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return i
		}
	case Number:
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			return f
		}
	case Bool:
		if b, err := strconv.ParseBool(raw); err == nil {
			return b
		}
	case List:
		return strings.Split(raw, ",")
	}
	return raw
}

func typeOf(v any) reflect.Type {
	if v == nil {
		return nil
	}
	return reflect.TypeOf(v)
}
