package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mdq/handlers"
	"mdq/internal/testlake"
	"mdq/query"
	"mdq/ratelimit"
)

// countingBudget admits up to limit units and records every spend and credit line.
type countingBudget struct {
	mu      sync.Mutex
	limit   int
	spent   int
	credits map[string]int // route -> credits summed
	calls   map[string]int
}

func (b *countingBudget) Spend(_ context.Context, _ ratelimit.Principal, units int) (ratelimit.Decision, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += units
	return ratelimit.Decision{Allowed: b.spent <= b.limit, Limit: b.limit, Remaining: b.limit - b.spent,
		Reset: time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)}, nil
}

func (b *countingBudget) LogCredits(_ context.Context, _ ratelimit.Principal, route string, credits int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.credits == nil {
		b.credits, b.calls = map[string]int{}, map[string]int{}
	}
	b.credits[route] += credits
	b.calls[route]++
}

// headerTransport adds fixed headers to every request, spelled as given.
type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = []string{v} // raw key: the server must match names case-insensitively
	}
	return http.DefaultTransport.RoundTrip(r)
}

type mcpFixture struct {
	srv    *httptest.Server
	api    *handlers.API
	budget *countingBudget
}

func newMCPFixture(t *testing.T) *mcpFixture {
	t.Helper()
	b := &countingBudget{limit: 1 << 30}
	api := &handlers.API{Q: openQueries(t, testlake.Tiny(t)), Auth: oneKey{"sekrit"}, Budget: b,
		Issuer: "https://issuer.example/realms/mdq"}
	api.Mounts = api.SurfaceMounts()
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &mcpFixture{srv: srv, api: api, budget: b}
}

func connectMCP(t testing.TB, endpoint string, headers map[string]string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mdq-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{headers}}, DisableStandaloneSSE: true}, nil)
}

// restTwin is the REST request equivalent to a tool call: the same arguments as query
// and path values, the tool's own defaults written out, ignored arguments dropped.
func restTwin(rt *handlers.Route, args map[string]any) (method, target string) {
	path := rt.Path
	q := url.Values{}
	for _, p := range rt.Params {
		v, ok := args[p.Name]
		if !ok {
			d, has := rt.MCP.Defaults[p.Name]
			if !has {
				continue
			}
			v = d
		}
		s := fmt.Sprint(v)
		if l, isList := v.([]string); isList {
			s = strings.Join(l, ",")
		}
		if p.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(s))
		} else {
			q.Set(p.Name, s)
		}
	}
	if enc := q.Encode(); enc != "" {
		path += "?" + enc
	}
	return rt.Method, path
}

// exampleArgs are a tool's arguments from its route's Example values, typed as the
// input schema says.
func exampleArgs(rt *handlers.Route) map[string]any {
	args := map[string]any{}
	for _, p := range rt.Params {
		if p.Example == "" {
			continue
		}
		switch p.Kind {
		case handlers.Int:
			var i int64
			if _, err := fmt.Sscan(p.Example, &i); err == nil {
				args[p.Name] = i
				continue
			}
		case handlers.Number:
			var f float64
			if _, err := fmt.Sscan(p.Example, &f); err == nil {
				args[p.Name] = f
				continue
			}
		case handlers.Bool:
			args[p.Name] = p.Example == "true"
			continue
		case handlers.List:
			args[p.Name] = strings.Split(p.Example, ",")
			continue
		}
		args[p.Name] = p.Example
	}
	return args
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func restCall(t *testing.T, f *mcpFixture, method, target string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+target, nil)
	req.Header.Set("X-API-Key", "sekrit")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	validateExchange(t, httptest.NewRequest(method, target, nil), resp.StatusCode, resp.Header, body)
	return resp.StatusCode, body
}

// assertTwin calls a tool and its REST twin and asserts the same payload: on success
// the tool's text is the REST body byte for byte and its structured content the same
// JSON; on a rejection the tool error carries REST's message.
func assertTwin(t *testing.T, f *mcpFixture, s *mcp.ClientSession, rt *handlers.Route, args map[string]any) (restCode int) {
	t.Helper()
	res := callTool(t, s, rt.MCP.Name, args)
	method, target := restTwin(rt, args)
	code, body := restCall(t, f, method, target)
	if code == http.StatusOK {
		if res.IsError {
			t.Fatalf("%s %v: tool error %q; REST %s answered 200", rt.MCP.Name, args, toolText(res), target)
		}
		if toolText(res) != string(body) {
			t.Fatalf("%s: tool text differs from REST %s\nmcp:  %.300s\nrest: %.300s", rt.MCP.Name, target, toolText(res), body)
		}
		var restV, structV any
		sc, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(body, &restV) != nil || json.Unmarshal(sc, &structV) != nil || !reflect.DeepEqual(restV, structV) {
			t.Fatalf("%s: structured content differs from REST %s\nmcp:  %.300s\nrest: %.300s", rt.MCP.Name, target, sc, body)
		}
		return code
	}
	var e map[string]string
	json.Unmarshal(body, &e) //nolint:errcheck
	msg := e["error"] + e["detail"]
	if !res.IsError || toolText(res) != msg {
		t.Fatalf("%s %v: REST %s answered %d %q; tool isError=%v %q", rt.MCP.Name, args, target, code, msg, res.IsError, toolText(res))
	}
	return code
}

// TestMCPToolsPayloadEqualsREST: every tool, called with the SDK's own client over real
// HTTP, returns exactly its REST twin's payload; each call spends one budget unit and
// logs the tool's credit price.
func TestMCPToolsPayloadEqualsREST(t *testing.T) {
	f := newMCPFixture(t)
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"x-api-key": "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := handlers.MCPTools()
	if len(list.Tools) != len(want) {
		t.Fatalf("%d tools listed, %d routes are tools", len(list.Tools), len(want))
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	spentBefore := f.budget.spent
	calls := 0
	for _, rt := range want {
		tl := byName[rt.MCP.Name]
		if tl == nil {
			t.Errorf("tool %s not listed", rt.MCP.Name)
			continue
		}
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || !tl.Annotations.IdempotentHint || tl.OutputSchema == nil ||
			tl.Description == "" || tl.InputSchema.(map[string]any)["type"] != "object" {
			t.Errorf("tool %s: annotations %+v, output schema %v, description %q", tl.Name, tl.Annotations, tl.OutputSchema != nil, tl.Description)
		}
		args := exampleArgs(rt)
		_, _, _, missing := handlers.ExampleQuery(rt)
		t.Run(rt.MCP.Name, func(t *testing.T) {
			code := assertTwin(t, f, s, rt, args)
			calls++
			if missing != "" {
				t.Logf("route gives no Example for %s: compared the rejection (%d) only", missing, code)
			} else if code != http.StatusOK {
				t.Errorf("the example call answered %d", code)
			}
		})
	}
	if got := f.budget.spent - spentBefore; got < calls {
		t.Errorf("%d tool calls spent %d units", calls, got)
	}
	for _, rt := range want {
		if f.budget.calls["mcp:"+rt.MCP.Name] > 0 && f.budget.credits["mcp:"+rt.MCP.Name] != rt.MCP.Credits*f.budget.calls["mcp:"+rt.MCP.Name] {
			t.Errorf("%s: credits logged %d for %d calls at price %d", rt.MCP.Name, f.budget.credits["mcp:"+rt.MCP.Name],
				f.budget.calls["mcp:"+rt.MCP.Name], rt.MCP.Credits)
		}
	}
	t.Logf("%d MCP tools", len(list.Tools))
}

// TestMCPBadArgumentsAreToolErrorsWithRESTMessages: a value REST rejects comes back as
// a tool error with REST's message, for every enumerated and bounded parameter.
func TestMCPBadArgumentsAreToolErrorsWithRESTMessages(t *testing.T) {
	f := newMCPFixture(t)
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"X-Api-Key": "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tried := 0
	for _, rt := range handlers.MCPTools() {
		for _, p := range rt.Params {
			var bad any
			switch {
			case p.Kind == handlers.Enum && p.EnumFallback == "":
				bad = "no-such-value"
			case p.Kind == handlers.Int && p.Max != nil && !p.Lenient:
				bad = int64(*p.Max) + 1
			case p.Kind == handlers.Int && !p.Lenient:
				bad = "abc"
			default:
				continue
			}
			args := exampleArgs(rt)
			args[p.Name] = bad
			t.Run(rt.MCP.Name+"/"+p.Name, func(t *testing.T) {
				if code := assertTwin(t, f, s, rt, args); code != http.StatusBadRequest {
					t.Errorf("REST answered %d to %s=%v", code, p.Name, bad)
				}
			})
			tried++
		}
	}
	if tried == 0 {
		t.Fatal("no tool has an enumerated or bounded parameter to reject")
	}
}

// TestMCPAuthAsREST: no credential is 401 with the protected-resource metadata named;
// a bearer scheme in any case works; a spent budget is a tool error with REST's text;
// the metadata points at the configured issuer.
func TestMCPAuthAsREST(t *testing.T) {
	f := newMCPFixture(t)
	if _, err := connectMCP(t, f.srv.URL+"/mcp", nil); err == nil {
		t.Fatal("connected without a credential")
	}
	resp, err := http.Post(f.srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+f.srv.URL+`/.well-known/oauth-protected-resource`) {
		t.Fatalf("no credential: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if _, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"x-api-key": "wrong"}); err == nil {
		t.Fatal("connected with a wrong key")
	}
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"authorization": "bEaReR sekrit"})
	if err != nil {
		t.Fatalf("bearer: %v", err)
	}
	defer s.Close()
	tools := handlers.MCPTools()
	if len(tools) == 0 {
		t.Skip("no MCP tools in the route table yet")
	}
	f.budget.mu.Lock()
	f.budget.limit = f.budget.spent // the next unit is over the budget
	f.budget.mu.Unlock()
	res := callTool(t, s, tools[0].MCP.Name, exampleArgs(tools[0]))
	if !res.IsError || !strings.HasPrefix(toolText(res), "hourly budget of") {
		t.Fatalf("over budget: isError=%v %q", res.IsError, toolText(res))
	}

	resp, err = http.Get(f.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	json.NewDecoder(resp.Body).Decode(&md) //nolint:errcheck
	resp.Body.Close()
	if resp.StatusCode != 200 || md.Resource != f.srv.URL+"/mcp" || len(md.AuthorizationServers) != 1 ||
		md.AuthorizationServers[0] != "https://issuer.example/realms/mdq" {
		t.Fatalf("metadata: %d %+v", resp.StatusCode, md)
	}
}

// TestMCPDefaultsAndIgnoredArguments: a tool's own defaults reach the query in place of
// REST's, and the arguments it ignores change nothing.
func TestMCPDefaultsAndIgnoredArguments(t *testing.T) {
	f := newMCPFixture(t)
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"X-API-KEY": "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checked := 0
	for _, rt := range handlers.MCPTools() {
		if len(rt.MCP.Ignore) == 0 && len(rt.MCP.Defaults) == 0 {
			continue
		}
		args := exampleArgs(rt)
		if _, _, _, missing := handlers.ExampleQuery(rt); missing != "" {
			continue
		}
		base := callTool(t, s, rt.MCP.Name, args)
		for _, name := range rt.MCP.Ignore {
			with := map[string]any{}
			for k, v := range args {
				with[k] = v
			}
			with[name] = 3
			if got := callTool(t, s, rt.MCP.Name, with); got.IsError || toolText(got) != toolText(base) {
				t.Errorf("%s: ignored %s changed the answer", rt.MCP.Name, name)
			}
		}
		assertTwin(t, f, s, rt, args) // the twin writes the tool's defaults out
		checked++
	}
	t.Logf("%d tools with their own defaults or ignored arguments checked", checked)
}

// TestMCPInputSchemaFromParams: the input schema has one property per parameter with
// the tool's defaults in place of REST's, and the ignored names accepted.
func TestMCPInputSchemaFromParams(t *testing.T) {
	rt := &handlers.Route{Method: "GET", Path: "/v1/onchain/wallets/{address}/counterparties", Area: "onchain",
		Params: []handlers.Param{
			{Name: "address", In: "path", Kind: handlers.Address},
			{Name: "limit", Kind: handlers.Int, Default: int64(100), Max: handlers.F(1000), ClampHi: handlers.F(50)},
		},
		MCP: &handlers.MCPTool{Name: "t", Defaults: map[string]any{"limit": int64(10)}, Ignore: []string{"page"}}}
	b, _ := json.Marshal(handlers.MCPInputSchema(rt))
	var s struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.Required) != 1 || s.Required[0] != "address" || s.Properties["limit"]["default"] != 10.0 ||
		s.Properties["limit"]["maximum"] != 1000.0 || s.Properties["page"] == nil || s.Properties["address"]["pattern"] == nil {
		t.Fatalf("schema %s", b)
	}
	if !strings.Contains(s.Properties["limit"]["description"].(string), "Over MCP the default is 10") {
		t.Fatalf("limit description %q", s.Properties["limit"]["description"])
	}
}

// BenchmarkMCPOverREST measures the per-call overhead of MCP against REST for one
// route (predmkt ohlcv) over loopback HTTP on the benchmark lake.
func BenchmarkMCPOverREST(b *testing.B) {
	q := mcpBenchQueries(b)
	api := &handlers.API{Q: q, Auth: oneKey{"sekrit"}, Budget: &countingBudget{limit: 1 << 30}}
	api.Mounts = api.SurfaceMounts()
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	var tok string
	if err := q.DB().QueryRowContext(context.Background(),
		"SELECT token_id FROM predmkt_trades GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").Scan(&tok); err != nil {
		b.Fatal(err)
	}
	b.Run("rest", func(b *testing.B) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/predmkt/ohlcv?interval=1h&limit=100&token_id="+tok, nil)
		req.Header.Set("X-API-Key", "sekrit")
		for b.Loop() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
		}
	})
	b.Run("mcp", func(b *testing.B) {
		s, err := connectMCP(b, srv.URL+"/mcp", map[string]string{"X-API-Key": "sekrit"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		args := map[string]any{"interval": "1h", "limit": 100, "token_id": tok}
		for b.Loop() {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "predmkt_ohlcv", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, toolText(res))
			}
		}
	})
}

func mcpBenchQueries(b *testing.B) *query.Queries {
	q, err := query.Open(context.Background(), testlake.Bench(b), query.Options{Now: func() time.Time { return testlake.BenchNow(b) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	return q
}

var updateAPIDoc = flag.Bool("update-api-doc", false, "rewrite the MCP tool table of docs/API.md")

// TestMCPToolTableInAPIDoc: docs/API.md lists every MCP tool with its REST twin and
// credit price (regenerate with go test ./handlers -run TestMCPToolTableInAPIDoc -update-api-doc).
func TestMCPToolTableInAPIDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString("| Tool | REST twin | Credits per call | Own defaults | Ignores |\n|---|---|---|---|---|\n")
	for _, rt := range handlers.MCPTools() {
		var defs []string
		for _, k := range slices.Sorted(maps.Keys(rt.MCP.Defaults)) {
			defs = append(defs, fmt.Sprintf("%s=%s", k, handlers.DisplayValue(rt.MCP.Defaults[k])))
		}
		fmt.Fprintf(&b, "| `%s` | %s %s | %d | %s | %s |\n", rt.MCP.Name, rt.Method, rt.Path, rt.MCP.Credits,
			strings.Join(defs, ", "), strings.Join(rt.MCP.Ignore, ", "))
	}
	table := b.String()
	const begin, end = "<!-- mcp-tools:begin -->\n", "<!-- mcp-tools:end -->"
	path := filepath.Join("..", "docs", "API.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/API.md lacks the %q and %q markers", begin, end)
	}
	if got := string(doc[i+len(begin) : j]); got != table {
		if *updateAPIDoc {
			out := append(append(append([]byte{}, doc[:i+len(begin)]...), table...), doc[j:]...)
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("docs/API.md's tool table is stale: go test ./handlers -run TestMCPToolTableInAPIDoc -update-api-doc\nwant:\n%s", table)
	}
}
