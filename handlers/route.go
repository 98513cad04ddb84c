package handlers

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mdq/query"
)

// Kind is the type of a parameter.
type Kind string

// Parameter kinds.
const (
	String  Kind = "string"
	Int     Kind = "integer"
	Number  Kind = "number"
	Bool    Kind = "boolean"
	Enum    Kind = "enum"
	Address Kind = "address" // 0x + 40 hex, returned lower-case
	List    Kind = "list"    // comma-separated strings
)

// Param declares one parameter of a route: its type, default, accepted range (outside
// is 400) and applied range (silently clamped), so that per-route quirks from SPEC live
// here and not in handler code.
type Param struct {
	Name     string
	In       string // "query" (default) or "path"
	Kind     Kind
	Required bool
	Default  any // typed as Kind: int64, float64, bool, string, []string; nil for none
	Doc      string

	Enum         []string // Kind Enum: the accepted values
	EnumFallback string   // an unknown enum value silently reads this (SPEC: trace window)
	EnumMessage  string   // error text for an unknown value; %s is the value

	Min, Max *float64 // accepted range; outside is 400
	ClampLo  *float64 // applied range; values are silently moved inside
	ClampHi  *float64

	ZeroIsDefault  bool   // 0 or an empty string resolve to Default (on-chain convention)
	Lenient        bool   // an unparseable value is ignored (Default applies)
	MaxLen         int    // String: longest accepted value
	Pattern        string // String: a regular expression the whole value must match (OpenAPI pattern)
	MaxItems       int    // List: most items accepted
	ItemsMessage   string // List: error text over MaxItems; %d is the count
	Message        string // error text for a malformed value (e.g. Bad EVM address ...)
	MissingMessage string // error text when a required value is missing or empty
	Example        string // example value for docs and tests
}

// F returns a pointer to f, for the range fields of Param.
func F(f float64) *float64 { return &f }

// Runner executes a route.
type Runner func(ctx context.Context, q *query.Queries, v Values) (any, error)

// Streamer executes a route that writes its own body (NDJSON exports).
type Streamer func(ctx context.Context, q *query.Queries, v Values, w io.Writer) error

// Route is one entry of the route table: the single description from which the
// router, parameter validation, the OpenAPI document, MCP tools and the `mdq query`
// subcommands are derived.
type Route struct {
	Method       string // GET or POST
	Path         string // gorilla/mux pattern, e.g. /v1/predmkt/ohlcv
	Area         string // platform, onchain, predmkt, perpdex
	Summary      string
	Description  string
	Params       []Param
	StrictParams bool // an unknown query parameter is 400
	Public       bool // no credential needed
	Unbilled     bool // spends no budget
	Credits      int  // credits logged per REST call
	Response     any  // a value of the response type, for the OpenAPI schema
	Run          Runner
	Stream       Streamer
	ContentType  string // of streamed bodies
	MCP          *MCPTool
	CLI          string // overrides the derived CLIName where two paths would share one
}

// MCPTool marks a route as also being an MCP tool.
type MCPTool struct {
	Name        string
	Description string
	Credits     int            // price logged per call
	Defaults    map[string]any // MCP's own defaults where SPEC says they differ
	Ignore      []string       // parameters the tool accepts and ignores
}

// CLIName is the route's `mdq query <area> <name>` subcommand: the literal path
// segments after the area, joined by dashes.
func (rt *Route) CLIName() string {
	if rt.CLI != "" {
		return rt.CLI
	}
	segs := strings.Split(strings.TrimPrefix(rt.Path, "/"), "/")
	var out []string
	for i, s := range segs {
		if i < 2 && (s == "v1" || s == rt.Area) {
			continue
		}
		if strings.HasPrefix(s, "{") {
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return rt.Area
	}
	return strings.Join(out, "-")
}

// Values holds a request's parsed parameters, typed as their Kind.
type Values struct {
	v   map[string]any
	set map[string]bool // sent by the client (not defaulted)
}

// Has reports whether the client sent the parameter (a zero-resolving value counts
// as not sent).
func (v Values) Has(name string) bool { return v.set[name] }

// Str returns a string, enum or address value.
func (v Values) Str(name string) string { s, _ := v.v[name].(string); return s }

// Int returns an integer value.
func (v Values) Int(name string) int64 { i, _ := v.v[name].(int64); return i }

// Float returns a number value.
func (v Values) Float(name string) float64 { f, _ := v.v[name].(float64); return f }

// Bool returns a boolean value.
func (v Values) Bool(name string) bool { b, _ := v.v[name].(bool); return b }

// List returns a list value.
func (v Values) List(name string) []string { l, _ := v.v[name].([]string); return l }

// Raw returns the typed value or nil.
func (v Values) Raw(name string) any { return v.v[name] }

// inputError is a rejected input; its message reaches the client.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// badInput makes a 400 with msg.
func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

var addrRe = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// patterns caches the compiled Pattern of each parameter (the route table is static).
var patterns sync.Map

func patternRe(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(p)
	patterns.Store(p, re)
	return re
}

// IsAddress reports whether s is a 0x-prefixed 20-byte hex address.
func IsAddress(s string) bool { return addrRe.MatchString(s) }

// Parse validates raw query and path values against the route's parameters.
func (rt *Route) Parse(q url.Values, vars map[string]string) (Values, error) {
	if rt.StrictParams {
		known := map[string]bool{}
		for _, p := range rt.Params {
			if p.In != "path" {
				known[p.Name] = true
			}
		}
		var unknown []string
		for k := range q {
			if !known[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return Values{}, badInput("unknown query parameter %q", unknown[0])
		}
	}
	out := Values{v: map[string]any{}, set: map[string]bool{}}
	for _, p := range rt.Params {
		var raw string
		var present bool
		if p.In == "path" {
			raw, present = vars[p.Name]
		} else {
			present = q.Has(p.Name)
			raw = strings.TrimSpace(q.Get(p.Name))
		}
		if !utf8.ValidString(raw) {
			// Refused here: DuckDB rejects invalid UTF-8 in a bound string, which would
			// surface as a store failure (503) for what is the client's input.
			return Values{}, badInput("%s is not valid UTF-8", p.Name)
		}
		val, sent, err := p.parse(raw, present)
		if err != nil {
			return Values{}, err
		}
		if val != nil {
			out.v[p.Name] = val
		}
		out.set[p.Name] = sent
	}
	return out, nil
}

// parse resolves one parameter; sent reports whether the client's value was used.
func (p *Param) parse(raw string, present bool) (any, bool, error) {
	zero := raw == "" || (p.ZeroIsDefault && isNumericZero(raw))
	// An empty value of a required parameter is missing, whatever its kind: token_id=
	// must not run the query for the empty token.
	if !present || (p.ZeroIsDefault && zero) || (raw == "" && (p.Kind != String || p.Required)) {
		if p.Required {
			return nil, false, p.missing()
		}
		return p.applied(p.Default), false, nil
	}
	switch p.Kind {
	case Int:
		i, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			if p.Lenient {
				return p.applied(p.Default), false, nil
			}
			return nil, false, p.fail(raw, "%s must be an integer", p.Name)
		}
		// Bounded as an integer: a float64 round trip turns 9223372036854775807 into
		// its negative (2^63 does not fit back into an int64).
		i, err = p.boundInt(i)
		if err != nil {
			return nil, false, err
		}
		return i, true, nil
	case Number:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			if p.Lenient {
				return p.Default, false, nil
			}
			return nil, false, p.fail(raw, "%s must be a finite number", p.Name)
		}
		f, err = p.bound(f)
		if err != nil {
			return nil, false, err
		}
		return f, true, nil
	case Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, false, p.fail(raw, "%s must be true or false", p.Name)
		}
		return b, true, nil
	case Enum:
		for _, e := range p.Enum {
			if raw == e {
				return raw, true, nil
			}
		}
		if p.EnumFallback != "" {
			return p.EnumFallback, false, nil
		}
		if p.EnumMessage != "" {
			return nil, false, badInput(p.EnumMessage, raw)
		}
		return nil, false, badInput("%s must be one of %s", p.Name, strings.Join(p.Enum, ", "))
	case Address:
		if !IsAddress(raw) {
			return nil, false, p.fail(raw, "%s must be a 0x-prefixed 40-hex-digit address", p.Name)
		}
		return strings.ToLower(raw), true, nil
	case List:
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		for _, it := range items {
			if p.Pattern != "" && !patternRe(p.Pattern).MatchString(it) {
				return nil, false, p.fail(it, "%s item %q does not match %s", p.Name, it, p.Pattern)
			}
		}
		if len(items) == 0 {
			if p.Required {
				return nil, false, p.missing()
			}
			return p.Default, false, nil
		}
		if p.MaxItems > 0 && len(items) > p.MaxItems {
			if p.ItemsMessage != "" {
				if !strings.Contains(p.ItemsMessage, "%d") { // a fixed message (SPEC's labels batch)
					return nil, false, badInput("%s", p.ItemsMessage)
				}
				return nil, false, badInput(p.ItemsMessage, len(items))
			}
			return nil, false, badInput("%s holds %d items; at most %d", p.Name, len(items), p.MaxItems)
		}
		return items, true, nil
	default: // String
		if p.MaxLen > 0 && len(raw) > p.MaxLen {
			return nil, false, badInput("%s is longer than %d characters", p.Name, p.MaxLen)
		}
		if p.Pattern != "" && !patternRe(p.Pattern).MatchString(raw) {
			return nil, false, p.fail(raw, "%s does not match %s", p.Name, p.Pattern)
		}
		return raw, true, nil
	}
}

// missing builds the error for an absent required value, preferring the route's own message.
func (p *Param) missing() error {
	if p.MissingMessage != "" {
		return badInput("%s", p.MissingMessage)
	}
	return badInput("%s is required", p.Name)
}

// fail builds the error for a malformed value, preferring the route's own message.
func (p *Param) fail(raw, format string, args ...any) error {
	if p.Message != "" {
		return badInput(p.Message, raw)
	}
	return badInput(format, args...)
}

// applied moves a default into the applied range: SPEC's counterparties and compare
// declare a default of 100 that is applied at 50, like any sent value above the cap.
func (p *Param) applied(def any) any {
	switch d := def.(type) {
	case int64: // compared without converting d, so math.MaxInt64 defaults stay exact
		if p.ClampLo != nil && float64(d) < *p.ClampLo {
			return int64(*p.ClampLo)
		}
		if p.ClampHi != nil && float64(d) > *p.ClampHi {
			return int64(*p.ClampHi)
		}
	case float64:
		if p.ClampLo != nil && d < *p.ClampLo {
			return *p.ClampLo
		}
		if p.ClampHi != nil && d > *p.ClampHi {
			return *p.ClampHi
		}
	}
	return def
}

// boundInt is bound for integers, compared without leaving int64.
func (p *Param) boundInt(i int64) (int64, error) {
	if p.Min != nil && i < boundToInt(*p.Min) {
		_, err := p.bound(math.Inf(-1)) // the range's message
		return 0, err
	}
	if p.Max != nil && i > boundToInt(*p.Max) {
		_, err := p.bound(math.Inf(1))
		return 0, err
	}
	if p.ClampLo != nil && i < boundToInt(*p.ClampLo) {
		i = boundToInt(*p.ClampLo)
	}
	if p.ClampHi != nil && i > boundToInt(*p.ClampHi) {
		i = boundToInt(*p.ClampHi)
	}
	return i, nil
}

// boundToInt converts an integer-valued bound to int64, saturating at the type's ends.
func boundToInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64: // 2^63 as a float64
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f) // bounds of integer parameters are whole numbers
}

// bound applies the accepted range (400 outside) and then the applied range (clamp).
func (p *Param) bound(f float64) (float64, error) {
	if p.Min != nil && f < *p.Min || p.Max != nil && f > *p.Max {
		switch {
		case p.Min != nil && p.Max != nil:
			return 0, badInput("%s must be between %s and %s", p.Name, num(*p.Min), num(*p.Max))
		case p.Min != nil:
			return 0, badInput("%s must be at least %s", p.Name, num(*p.Min))
		default:
			return 0, badInput("%s must be at most %s", p.Name, num(*p.Max))
		}
	}
	if p.ClampLo != nil && f < *p.ClampLo {
		f = *p.ClampLo
	}
	if p.ClampHi != nil && f > *p.ClampHi {
		f = *p.ClampHi
	}
	return f, nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isNumericZero(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 0
}
