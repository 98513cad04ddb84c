package handlers_test

import (
	"strings"
	"testing"
)

// TestMCPAsOf: a tool takes as_of like its REST twin: the result carries the clock it
// answered at in _meta.as_of and the REST body of the same request; a future as_of is a
// tool error with REST's message naming both times.
func TestMCPAsOf(t *testing.T) {
	f := newMCPFixture(t)
	s, err := connectMCP(t, f.srv.URL+"/mcp", map[string]string{"X-API-KEY": "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	args := map[string]any{"token_id": "68783291989961754191311255821197966179714110417478218772409060504263891222377",
		"interval": "1h", "as_of": "2026-11-15T13:37:12.345Z"}
	res := callTool(t, s, "predmkt_ohlcv", args)
	if res.IsError {
		t.Fatalf("tool error: %s", toolText(res))
	}
	if got := res.Meta["as_of"]; got != "2026-11-15T13:37:12.345Z" {
		t.Errorf("_meta.as_of %v", got)
	}
	code, body := restCall(t, f, "GET", "/v1/predmkt/ohlcv?token_id="+args["token_id"].(string)+"&interval=1h&as_of=2026-11-15T13:37:12.345Z")
	if code != 200 || toolText(res) != string(body) {
		t.Errorf("tool %.200q\nREST %d %.200q", toolText(res), code, body)
	}
	if res := callTool(t, s, "predmkt_ohlcv", map[string]any{"token_id": "1", "interval": "1h"}); res.Meta["as_of"] != "2026-11-20T12:00:00.000Z" {
		t.Errorf("without as_of: _meta.as_of %v, want the serving clock", res.Meta["as_of"])
	}
	args["as_of"] = "2026-11-21T00:00:00Z"
	res = callTool(t, s, "predmkt_ohlcv", args)
	if !res.IsError || !strings.Contains(toolText(res), "as_of 2026-11-21T00:00:00.000Z is later than the serving clock 2026-11-20T12:00:00.000Z") {
		t.Errorf("future as_of: %v %s", res.IsError, toolText(res))
	}
}
