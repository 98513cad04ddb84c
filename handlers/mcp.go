package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MCP is a second transport, not a second implementation: every route with Route.MCP
// set is one tool whose call runs the route through Exec, so its payload is the REST
// body byte for byte. Tools keep their own defaults (MCPTool.Defaults) and accept and
// ignore what SPEC says they ignore (MCPTool.Ignore).

// MCPServerVersion is reported in the MCP handshake.
var MCPServerVersion = "1.0.0"

type mcpState struct {
	once    sync.Once
	server  *mcp.Server
	handler http.Handler
}

var mcpStates sync.Map // *API -> *mcpState: built once per API, lazily

func (a *API) mcpState() *mcpState {
	st, _ := mcpStates.LoadOrStore(a, &mcpState{})
	s := st.(*mcpState)
	s.once.Do(func() {
		s.server = a.NewMCPServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		s.handler = h
	})
	return s
}

// MCPTools lists the routes that are MCP tools, in table order.
func MCPTools() []*Route {
	var out []*Route
	for _, rt := range Routes() {
		if rt.MCP != nil && rt.Run != nil {
			out = append(out, rt)
		}
	}
	return out
}

// NewMCPServer builds the MCP server of the route table: one tool per route with
// Route.MCP set.
func (a *API) NewMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mdq", Title: "mdq market data", Version: MCPServerVersion},
		&mcp.ServerOptions{Instructions: "Read-only market data (on-chain, prediction market, perpetuals venue). " +
			"Every tool runs the same query as its REST route and returns the same JSON. " +
			"Each call spends one unit of the caller's hourly budget (20,000 requests, shared with REST)."})
	for _, rt := range MCPTools() {
		s.AddTool(MCPToolDef(rt), a.mcpToolHandler(rt))
	}
	s.AddReceivingMiddleware(legacyStructuredContent)
	return s
}

// modernProtocol is the first MCP version whose structured content may be any JSON
// value (SEP-2106); before it, structuredContent and outputSchema must be objects.
const modernProtocol = "2026-07-28"

// legacyStructuredContent adapts bare-array tools to clients of older protocol
// versions: their tools/list shows no output schema and their calls carry the JSON as
// text only (the same bytes), since structuredContent had to be an object then. The
// version is read from the Mcp-Protocol-Version header the client sends on every
// request (the server is stateless).
func legacyStructuredContent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		version := ""
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			version = ex.Header.Get("Mcp-Protocol-Version")
		}
		if version >= modernProtocol { // versions are dates: they compare as strings
			return res, err
		}
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			c := *r
			c.Tools = make([]*mcp.Tool, len(r.Tools))
			for i, t := range r.Tools {
				c.Tools[i] = t
				if out, ok := t.OutputSchema.(*Schema); ok && out.Type != "object" {
					tc := *t
					tc.OutputSchema = nil
					c.Tools[i] = &tc
				}
			}
			return &c, nil
		case *mcp.CallToolResult:
			if raw, ok := r.StructuredContent.(json.RawMessage); ok && (len(raw) == 0 || raw[0] != '{') {
				c := *r
				c.StructuredContent = nil
				return &c, nil
			}
		}
		return res, err
	}
}

// MCPToolDef is the tool a route declares: description, input schema from its
// parameters (with the tool's own defaults), output schema from its response type,
// and read-only, idempotent annotations.
func MCPToolDef(rt *Route) *mcp.Tool {
	desc := rt.MCP.Description
	if desc == "" {
		desc = strings.TrimSpace(rt.Summary + ". " + rt.Description)
	}
	desc += fmt.Sprintf("\n\nSame query and payload as %s %s. Price: %d credit(s) per call; spends one unit of the hourly budget.",
		rt.Method, rt.Path, rt.MCP.Credits)
	no := false
	t := &mcp.Tool{
		Name:        rt.MCP.Name,
		Title:       rt.Summary,
		Description: desc,
		InputSchema: MCPInputSchema(rt),
		Annotations: &mcp.ToolAnnotations{
			Title: rt.Summary, ReadOnlyHint: true, IdempotentHint: true,
			DestructiveHint: &no, OpenWorldHint: &no,
		},
	}
	if out := MCPOutputSchema(rt); out != nil {
		t.OutputSchema = out
	}
	return t
}

// MCPInputSchema is the tool's argument object: one property per parameter, path
// parameters included, MCP's own defaults in place of REST's.
func MCPInputSchema(rt *Route) *Schema {
	s := &Schema{Type: "object", Properties: &Ordered{}}
	for i := range rt.Params {
		p := &rt.Params[i]
		if ignored(rt, p.Name) {
			continue
		}
		ps := ParamSchema(p)
		notes := ParamNotes(p)
		if d, ok := rt.MCP.Defaults[p.Name]; ok {
			ps.Default = d
			notes = strings.TrimSpace(notes + fmt.Sprintf(" Over MCP the default is %s.", DisplayValue(d)))
		}
		if p.Kind == List {
			notes = strings.TrimSpace(notes + " An array of strings, or one comma-separated string.")
		}
		ps.Description = notes
		s.Properties.Set(p.Name, ps)
		if p.Required || p.In == "path" {
			s.Required = append(s.Required, p.Name)
		}
	}
	for _, name := range rt.MCP.Ignore {
		any := anySchema()
		any.Description = "Accepted and ignored by this tool."
		s.Properties.Set(name, any)
	}
	return portable(s)
}

// MCPOutputSchema is the schema of the tool's structured content: the REST body's.
func MCPOutputSchema(rt *Route) *Schema {
	if rt.Response == nil {
		return nil
	}
	gen := newSchemaGen("#/$defs/")
	s := gen.of(typeOf(rt.Response))
	if s.Ref != "" {
		// The root itself is the object, not a reference to it: clients of protocol
		// versions before 2026-07-28 require an output schema of type object.
		def, _ := gen.defs.Get(strings.TrimPrefix(s.Ref, "#/$defs/"))
		c := *def.(*Schema)
		s = &c
	}
	if gen.defs.Len() > 0 {
		c := *s
		c.Defs = gen.defs
		s = &c
	}
	return portable(s)
}

// portable rewrites type lists (["number","null"]) as anyOf branches of one type
// each: the same contract, in the spelling tool-schema dialects with a single type
// keyword (function declarations of several model providers) accept.
func portable(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Items = portable(s.Items)
	if s.Properties != nil {
		c.Properties = &Ordered{}
		for _, k := range s.Properties.Keys() {
			v, _ := s.Properties.Get(k)
			c.Properties.Set(k, portable(v.(*Schema)))
		}
	}
	if s.Defs != nil {
		c.Defs = &Ordered{}
		for _, k := range s.Defs.Keys() {
			v, _ := s.Defs.Get(k)
			c.Defs.Set(k, portable(v.(*Schema)))
		}
	}
	if ap, ok := s.AdditionalProperties.(*Schema); ok {
		c.AdditionalProperties = portable(ap)
	}
	if s.AnyOf != nil {
		c.AnyOf = make([]*Schema, len(s.AnyOf))
		for i, b := range s.AnyOf {
			c.AnyOf[i] = portable(b)
		}
	}
	ts, ok := c.Type.([]string)
	if !ok {
		return &c
	}
	out := &Schema{Description: c.Description, Default: c.Default}
	for _, t := range ts {
		if t == "null" {
			out.AnyOf = append(out.AnyOf, &Schema{Type: "null"})
			continue
		}
		b := c
		b.Type, b.Description, b.Default, b.Enum = t, "", nil, nil
		for _, e := range c.Enum {
			if e != nil {
				b.Enum = append(b.Enum, e)
			}
		}
		if t != "integer" && t != "number" {
			b.Minimum, b.Maximum = nil, nil
		}
		if t != "string" {
			b.Format, b.Pattern, b.MaxLength = "", "", nil
		}
		if t != "array" {
			b.Items, b.MaxItems, b.MinItems = nil, nil, nil
		}
		if t != "object" {
			b.Properties, b.Required, b.AdditionalProperties = nil, nil, nil
		}
		out.AnyOf = append(out.AnyOf, &b)
	}
	return out
}

func ignored(rt *Route, name string) bool {
	for _, n := range rt.MCP.Ignore {
		if n == name {
			return true
		}
	}
	return false
}

// mcpArgs turns tool arguments into the query and path values REST would receive, so
// the same parser gives the same result and the same messages.
func mcpArgs(rt *Route, raw json.RawMessage) (url.Values, map[string]string, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, nil, badInput("arguments must be a JSON object")
		}
	}
	q, vars := url.Values{}, map[string]string{}
	inPath := map[string]bool{}
	byName := map[string]*Param{}
	for i, p := range rt.Params {
		if p.In == "path" {
			inPath[p.Name] = true
		}
		byName[p.Name] = &rt.Params[i]
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := args[k]
		if v == nil || ignored(rt, k) {
			continue
		}
		if p := byName[k]; p != nil {
			if err := argType(p, v); err != nil {
				return nil, nil, err
			}
		}
		s := argText(v)
		if inPath[k] {
			vars[k] = s
		} else {
			q.Set(k, s)
		}
	}
	for k, d := range rt.MCP.Defaults {
		if _, sent := args[k]; !sent {
			if inPath[k] {
				vars[k] = argText(d)
			} else {
				q.Set(k, argText(d))
			}
		}
	}
	return q, vars, nil
}

// argType holds an argument to the JSON type the tool's input schema declares for it
// (MCPInputSchema): a number sent for a string (a token id as 6.6e+76) or an object
// for a scalar would otherwise be stringified into a different value and run.
func argType(p *Param, v any) error {
	_, isStr := v.(string)
	_, isNum := v.(json.Number)
	switch p.Kind {
	case Int:
		if !isNum && !(isStr && p.Lenient) {
			return p.fail(argText(v), "%s must be an integer", p.Name)
		}
	case Number:
		if !isNum && !(isStr && p.Lenient) {
			return p.fail(argText(v), "%s must be a finite number", p.Name)
		}
	case Bool:
		if _, ok := v.(bool); !ok {
			return badInput("%s must be true or false", p.Name)
		}
	case List:
		if isStr {
			return nil
		}
		items, ok := v.([]any)
		if !ok {
			return badInput("%s must be an array of strings", p.Name)
		}
		for _, it := range items {
			if _, ok := it.(string); !ok {
				return badInput("%s must be an array of strings", p.Name)
			}
		}
	default: // String, Enum, Address
		if !isStr {
			return badInput("%s must be a string", p.Name)
		}
	}
	return nil
}

// argText writes an argument the way it would travel in a query string.
func argText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return num(x)
	case []string:
		return strings.Join(x, ",")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = argText(e)
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// mcpToolHandler authenticates the call as REST does, spends one unit of the budget,
// runs the route through Exec and returns the REST body as text and structured content.
func (a *API) mcpToolHandler(rt *Route) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if a.Auth != nil {
			h := http.Header{}
			if req.Extra != nil && req.Extra.Header != nil {
				h = req.Extra.Header
			}
			p, status, msg := a.authenticate((&http.Request{Header: h}).WithContext(ctx))
			if status != 0 {
				return toolError(msg), nil
			}
			ctx = context.WithValue(ctx, principalKey{}, p)
			if a.Budget != nil {
				d, err := a.Budget.Spend(ctx, p, 1)
				if err != nil {
					a.logger().Error("budget", "err", err)
					return toolError("budget store unavailable"), nil
				}
				if !d.Allowed {
					a.Metrics.refused()
					return toolError(fmt.Sprintf("hourly budget of %d requests spent; retry after %s",
						d.Limit, d.Reset.UTC().Format(time.RFC3339))), nil
				}
			}
		}
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		q, vars, err := mcpArgs(rt, raw)
		if err != nil {
			_, msg := Status(err)
			return toolError(msg), nil
		}
		res := a.Exec(ctx, rt, q, vars)
		if res.Err != nil {
			status, msg := Status(res.Err)
			if status >= 500 {
				a.logger().Error("mcp tool failed", "tool", rt.MCP.Name, "err", res.Err.Error())
			}
			return toolError(msg), nil
		}
		var buf bytes.Buffer
		if err := Encode(&buf, res.Data); err != nil {
			a.logger().Error("encode", "tool", rt.MCP.Name, "err", err)
			return toolError("store unavailable"), nil
		}
		if p, ok := PrincipalFrom(ctx); ok && a.Budget != nil {
			a.Budget.LogCredits(ctx, p, "mcp:"+rt.MCP.Name, rt.MCP.Credits)
		}
		body := buf.Bytes()
		var meta mcp.Meta
		if !res.AsOf.IsZero() {
			meta = mcp.Meta{"as_of": formatAsOf(res.AsOf)} // the clock the tool answered at
		}
		return &mcp.CallToolResult{
			Meta:              meta,
			Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
			StructuredContent: json.RawMessage(bytes.TrimRight(body, "\n")),
		}, nil
	}
}

// MCPHandler serves the MCP endpoint (streamable HTTP). A missing or invalid credential
// is 401 with a WWW-Authenticate header naming the protected-resource metadata, so
// OAuth clients can discover the issuer.
func (a *API) MCPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Auth != nil {
			if _, status, msg := a.authenticate(r); status != 0 {
				if status == http.StatusUnauthorized {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer resource_metadata=%q",
						baseURL(r)+"/.well-known/oauth-protected-resource/mcp"))
				}
				writeError(w, "other", status, msg)
				return
			}
		}
		a.mcpState().handler.ServeHTTP(w, r)
	})
}

// ProtectedResourceHandler serves the OAuth protected-resource metadata (RFC 9728) of
// the MCP endpoint, naming the configured issuer as its authorization server.
func (a *API) ProtectedResourceHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		md := &oauthex.ProtectedResourceMetadata{
			Resource:               baseURL(r) + "/mcp",
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mdq market data (MCP and /v1)",
			ResourceDocumentation:  baseURL(r) + "/docs",
		}
		if a.Issuer != "" {
			md.AuthorizationServers = []string{a.Issuer}
		}
		auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
	})
}

// baseURL is the scheme and host the client used.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
