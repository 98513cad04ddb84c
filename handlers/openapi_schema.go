package handlers

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Schema is a JSON Schema (2020-12, the dialect of OpenAPI 3.1 and of MCP tool
// schemas) with only the keywords the generated documents use.
type Schema struct {
	Ref                  string         `json:"$ref,omitempty"`
	Type                 any            `json:"type,omitempty"` // a type name, or []string with "null"
	Format               string         `json:"format,omitempty"`
	Description          string         `json:"description,omitempty"`
	Enum                 []any          `json:"enum,omitempty"`
	Default              any            `json:"default,omitempty"`
	Minimum              *float64       `json:"minimum,omitempty"`
	Maximum              *float64       `json:"maximum,omitempty"`
	MaxLength            *int           `json:"maxLength,omitempty"`
	MinItems             *int           `json:"minItems,omitempty"`
	MaxItems             *int           `json:"maxItems,omitempty"`
	Pattern              string         `json:"pattern,omitempty"`
	Items                *Schema        `json:"items,omitempty"`
	Properties           *Ordered       `json:"properties,omitempty"` // name -> *Schema, in field order
	Required             []string       `json:"required,omitempty"`
	AdditionalProperties any            `json:"additionalProperties,omitempty"` // false or *Schema
	AnyOf                []*Schema      `json:"anyOf,omitempty"`
	Defs                 *Ordered       `json:"$defs,omitempty"`
	Extra                map[string]any `json:"-"` // x- keywords, merged when marshalled
}

// MarshalJSON merges the x- keywords into the object.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	b, err := marshalNoEscape((*plain)(s))
	if err != nil || len(s.Extra) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range s.Extra {
		raw, err := marshalNoEscape(v)
		if err != nil {
			return nil, err
		}
		m[k] = raw
	}
	return marshalNoEscape(m)
}

// Nullable reports whether the schema admits null, and the schema of its non-null
// values.
func (s *Schema) Nullable() (bool, *Schema) {
	if ts, ok := s.Type.([]string); ok && len(ts) == 2 && ts[1] == "null" {
		c := *s
		c.Type = ts[0]
		return true, &c
	}
	if len(s.AnyOf) == 2 && s.AnyOf[1].Type == "null" {
		return true, s.AnyOf[0]
	}
	return false, s
}

// Ordered is a JSON object that keeps its keys in insertion order, so the documents
// list paths in route-table order and properties in struct-field order.
type Ordered struct {
	keys []string
	vals map[string]any
}

// Set adds or replaces a key.
func (o *Ordered) Set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Get returns the value of a key.
func (o *Ordered) Get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// Keys returns the keys in order.
func (o *Ordered) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Len is the number of keys.
func (o *Ordered) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// MarshalJSON writes the keys in order.
func (o *Ordered) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.Keys() {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := marshalNoEscape(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// schemaGen turns Go response types into JSON Schemas the way encoding/json encodes
// them: json tags name fields, omitempty makes a field optional, pointers are
// nullable, embedded structs are flattened, and `doc` tags become descriptions. Named
// struct types become shared definitions under prefix.
type schemaGen struct {
	prefix string   // "#/components/schemas/" or "#/$defs/"
	defs   *Ordered // name -> *Schema
	names  map[reflect.Type]string
	taken  map[string]reflect.Type
}

func newSchemaGen(prefix string) *schemaGen {
	return &schemaGen{prefix: prefix, defs: &Ordered{}, names: map[reflect.Type]string{}, taken: map[string]reflect.Type{}}
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	emptyInterfaceT = reflect.TypeFor[any]()
)

// of returns the schema of values of type t. A top-level pointer is not nullable
// (a route never answers a bare null).
func (g *schemaGen) of(t reflect.Type) *Schema {
	if t == nil {
		return anySchema()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return g.schema(t)
}

func (g *schemaGen) schema(t reflect.Type) *Schema {
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case t == rawMessageType || t == emptyInterfaceT || t.Kind() == reflect.Interface:
		return anySchema()
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		return customJSONSchema(t)
	case t.Kind() != reflect.String && (t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)):
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schema(t.Elem()))
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := &Schema{Type: "integer"}
		if t.Size() == 8 {
			s.Format = "int64"
		} else if t.Kind() == reflect.Int32 {
			s.Format = "int32"
		}
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			s.Minimum = F(0)
		}
		return s
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number", Format: map[bool]string{true: "float", false: "double"}[t.Kind() == reflect.Float32]}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: g.schema(t.Elem())}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: g.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		return &Schema{Ref: g.prefix + g.define(t)}
	}
	return anySchema()
}

// anySchema admits any JSON value, null included, spelled out as a type list: some
// validators read a bare {} as "not nullable".
func anySchema() *Schema {
	return &Schema{Type: []string{"string", "number", "boolean", "object", "array", "null"}}
}

// customJSONSchema infers the JSON type of a type with its own MarshalJSON from what
// its zero value encodes to; anything else is left unconstrained.
func customJSONSchema(t reflect.Type) *Schema {
	b, err := json.Marshal(reflect.New(t).Interface())
	if err != nil || len(b) == 0 {
		return anySchema()
	}
	switch {
	case b[0] == '"':
		return &Schema{Type: "string"}
	case b[0] == 't' || b[0] == 'f':
		return &Schema{Type: "boolean"}
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		return &Schema{Type: "number"}
	}
	return anySchema()
}

// nullable makes s admit null: a type list for a plain type, anyOf otherwise.
func nullable(s *Schema) *Schema {
	if n, _ := s.Nullable(); n {
		return s
	}
	if typ, ok := s.Type.(string); ok && s.Ref == "" {
		c := *s
		c.Type = []string{typ, "null"}
		if c.Enum != nil {
			c.Enum = append(append([]any(nil), c.Enum...), nil)
		}
		return &c
	}
	if ts, ok := s.Type.([]string); ok && len(ts) > 0 && ts[len(ts)-1] == "null" {
		return s // already admits null
	}
	return &Schema{AnyOf: []*Schema{s, {Type: "null"}}}
}

// define registers a named struct type as a definition and returns its name.
func (g *schemaGen) define(t reflect.Type) string {
	if n, ok := g.names[t]; ok {
		return n
	}
	name := cleanName(t.Name())
	if other, ok := g.taken[name]; ok && other != t {
		pkg := t.PkgPath()
		base := exportName(pkg[strings.LastIndex(pkg, "/")+1:]) + name
		name = base
		for i := 2; g.taken[name] != nil; i++ {
			name = base + strconv.Itoa(i)
		}
	}
	g.names[t] = name
	g.taken[name] = t
	g.defs.Set(name, &Schema{}) // placeholder first: recursive types refer to it
	g.defs.Set(name, g.object(t))
	return name
}

// cleanName keeps a type name usable as a component key (generic instances carry
// brackets and package paths).
func cleanName(n string) string {
	var b strings.Builder
	for _, r := range n {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			b.WriteRune(r)
		} else if r == '[' || r == ',' {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func exportName(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

type jsonField struct {
	name     string
	optional bool
	schema   *Schema
	depth    int
}

// object is the schema of a struct's fields as encoding/json writes them.
func (g *schemaGen) object(t reflect.Type) *Schema {
	fields := g.fields(t, 0, map[reflect.Type]bool{})
	s := &Schema{Type: "object", Properties: &Ordered{}, AdditionalProperties: false}
	seen := map[string]int{}
	var kept []jsonField
	for _, f := range fields {
		if i, dup := seen[f.name]; dup {
			if f.depth < kept[i].depth {
				kept[i] = f // the shallower field wins, as in encoding/json
			}
			continue
		}
		seen[f.name] = len(kept)
		kept = append(kept, f)
	}
	for _, f := range kept {
		s.Properties.Set(f.name, f.schema)
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s
}

func (g *schemaGen) fields(t reflect.Type, depth int, visiting map[reflect.Type]bool) []jsonField {
	if visiting[t] {
		return nil
	}
	visiting[t] = true
	defer delete(visiting, t)
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, g.fields(et, depth+1, visiting)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		var s *Schema
		if hasOpt(opts, "string") && isScalar(ft) {
			s = &Schema{Type: "string"}
			if ft.Kind() == reflect.Pointer {
				s = nullable(s)
			}
		} else {
			s = g.schema(ft)
		}
		if doc := sf.Tag.Get("doc"); doc != "" {
			s = withDescription(s, doc)
		}
		out = append(out, jsonField{name: name, optional: hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero"), schema: s, depth: depth})
	}
	return out
}

// withDescription returns s described by doc, without touching a shared definition.
func withDescription(s *Schema, doc string) *Schema {
	c := *s
	c.Description = doc
	return &c
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func isScalar(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}
