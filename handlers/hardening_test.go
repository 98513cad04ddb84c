package handlers_test

import (
	"encoding/json"
	"math"
	"net/url"
	"strings"
	"testing"

	"mdq/handlers"
	"mdq/internal/testlake"
)

// TestIntegerParamsParsedAsIntegers: an integer parameter is parsed and bounded as an
// int64, never through float64 (where 9223372036854775807 rounds to 2^63 and converts
// back to its negative).
func TestIntegerParamsParsedAsIntegers(t *testing.T) {
	rt := &handlers.Route{Params: []handlers.Param{
		{Name: "free", Kind: handlers.Int},
		{Name: "hours", Kind: handlers.Int, Min: handlers.F(1), Max: handlers.F(720)},
		{Name: "limit", Kind: handlers.Int, Min: handlers.F(1), ClampHi: handlers.F(50000)},
		{Name: "to_ms", Kind: handlers.Int, Min: handlers.F(0), Default: int64(math.MaxInt64)},
	}}
	for _, tc := range []struct {
		name, query, param string
		want               int64
		wantErr            string
	}{
		{"the largest int64 stays itself", "free=9223372036854775807", "free", math.MaxInt64, ""},
		{"the smallest int64 stays itself", "free=-9223372036854775808", "free", math.MinInt64, ""},
		{"one past the largest is refused", "free=9223372036854775808", "", 0, "free must be an integer"},
		{"a huge value over a maximum is refused", "hours=9223372036854775807", "", 0, "hours must be between 1 and 720"},
		{"a huge value is clamped to the applied cap", "limit=9223372036854775807", "limit", 50000, ""},
		{"the largest int64 passes a minimum of 0", "to_ms=9223372036854775807", "to_ms", math.MaxInt64, ""},
		{"the smallest int64 fails a minimum of 0", "to_ms=-9223372036854775808", "", 0, "to_ms must be at least 0"},
		{"2^53+1 is exact", "free=9007199254740993", "free", 9007199254740993, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			v, err := rt.Parse(q, nil)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || v.Int(tc.param) != tc.want {
				t.Fatalf("err = %v, %s = %d, want %d", err, tc.param, v.Int(tc.param), tc.want)
			}
		})
	}
}

// TestHardenedInputs: inputs an attacker or a careless client sends get 400 with a
// clear message, never 503 or a 200 for a query over nonsense.
func TestHardenedInputs(t *testing.T) {
	h := (&handlers.API{Q: openQueries(t, testlake.Tiny(t))}).Handler()
	const wallet = "0x21f839801b99033064425928f998dbf97ccfe7ed"
	for _, tc := range []struct{ rule, target, body string }{
		{"events: a window whose span overflows int64 is refused, not served",
			"/v1/predmkt/events?from_ms=-9223372036854775808&to_ms=9223372036854774784",
			`{"error":"window of 18446744073709550592 ms exceeds the maximum of 86400000 ms (24 hours)"}`},
		{"events: the largest to_ms with a far from_ms is refused",
			"/v1/predmkt/events?from_ms=0&to_ms=9223372036854775807",
			`{"error":"window of 9223372036854775807 ms exceeds the maximum of 86400000 ms (24 hours)"}`},
		{"invalid UTF-8 in a query string parameter (coin)", "/v1/perpdex/ohlcv?coin=%ff%fe&interval=1h",
			`{"error":"coin is not valid UTF-8"}`},
		{"invalid UTF-8 in q", "/v1/onchain/tokens/search?q=%ff%fe", `{"detail":"q is not valid UTF-8"}`},
		{"invalid UTF-8 in token_id", "/v1/predmkt/orderbook?token_id=%ff%fe", `{"error":"token_id is not valid UTF-8"}`},
		{"invalid UTF-8 in a path segment", "/v1/perpdex/markets/%ff%fe", `{"error":"coin is not valid UTF-8"}`},
		{"an empty required token_id is missing", "/v1/predmkt/orderbook?token_id=", `{"error":"token_id is required"}`},
		{"a token id that is not a decimal digit string (a large number as a client encodes it)",
			"/v1/predmkt/orderbook?token_id=6.6e%2B76", `{"error":"token_id \"6.6e+76\" is not an outcome-token id (a decimal digit string)"}`},
		{"a token id on an optional parameter is held to the same form",
			"/v1/predmkt/wallets/" + wallet + "/trades?token_id=abc", `{"error":"token_id \"abc\" is not an outcome-token id (a decimal digit string)"}`},
		{"each item of token_ids is held to the form",
			"/v1/predmkt/events?from_ms=0&to_ms=1000&token_ids=123,1e5", `{"error":"token_ids item \"1e5\" is not an outcome-token id (a decimal digit string)"}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, body := get(t, h, tc.target)
			if code != 400 || strings.TrimSpace(string(body)) != tc.body {
				t.Fatalf("%d %s, want 400 %s", code, body, tc.body)
			}
		})
	}
}

// TestMCPArgumentsHeldToInputSchema: a tool argument of another JSON type than the
// tool's input schema declares is a tool error, not a stringified value run as a query
// (a token id sent as the number 6.6e+76).
func TestMCPArgumentsHeldToInputSchema(t *testing.T) {
	f := newMCPFixture(t)
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"X-Api-Key": "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		rule, tool string
		args       string
		want       string
	}{
		{"a number for a string token id", "predmkt_orderbook", `{"token_id": 6.6e+76}`, "token_id must be a string"},
		{"an empty token id", "predmkt_orderbook", `{"token_id": ""}`, "token_id is required"},
		{"a digit string that is not a token id", "predmkt_orderbook", `{"token_id": "12a"}`, `token_id "12a" is not an outcome-token id (a decimal digit string)`},
		{"a string for an integer", "predmkt_orderbook", `{"token_id": "1", "depth": "5"}`, "depth must be an integer"},
		{"an object for a string", "predmkt_orderbook", `{"token_id": {"x": 1}}`, "token_id must be a string"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			res := callTool(t, s, tc.tool, args)
			if !res.IsError || toolText(res) != tc.want {
				t.Fatalf("isError=%v %q, want %q", res.IsError, toolText(res), tc.want)
			}
		})
	}
}
