package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mdq/archive"
	"mdq/handlers"
	"mdq/query"
)

// newQueryCmd derives `mdq query <area> <route>` from the route table: one subcommand
// per route, one flag per parameter. Flags travel as raw strings through the same
// parsing and query code as REST, so the JSON output equals the REST body.
func newQueryCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "query <area> <route> [--param value ...]",
		Short: "Run any API route offline on the local lake",
	}
	var format, clock, remote string
	cmd.PersistentFlags().StringVar(&format, "format", "json", "json, csv or table")
	cmd.PersistentFlags().StringVar(&clock, "clock", "", "pin \"now\" to this RFC3339 time")
	cmd.PersistentFlags().StringVar(&remote, "remote", "", "run the route on this server (URL or host:port) instead of the local lake; the key is read from $MDQ_KEY")
	areas := map[string]*cobra.Command{}
	for _, rt := range handlers.Routes() {
		if rt.Area == "platform" || rt.Run == nil && rt.Stream == nil {
			continue
		}
		ac, ok := areas[rt.Area]
		if !ok {
			ac = &cobra.Command{Use: rt.Area, Short: "Routes under /v1/" + rt.Area}
			areas[rt.Area] = ac
			cmd.AddCommand(ac)
		}
		ac.AddCommand(routeCmd(cfg, rt, &format, &clock, &remote))
	}
	return cmd
}

func routeCmd(cfg *Config, rt *handlers.Route, format, clock, remote *string) *cobra.Command {
	vals := map[string]*string{}
	c := &cobra.Command{
		Use:   rt.CLIName(),
		Short: rt.Method + " " + rt.Path + ": " + rt.Summary,
		Long:  rt.Description,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			vars := map[string]string{}
			for _, p := range rt.Params {
				if !cmd.Flags().Changed(p.Name) {
					continue
				}
				if p.In == "path" {
					vars[p.Name] = *vals[p.Name]
				} else {
					q.Set(p.Name, *vals[p.Name])
				}
			}
			if *remote != "" {
				if *clock != "" {
					return fmt.Errorf("--clock applies to the local lake; a server uses its own clock")
				}
				return runRemote(cmd, rt, *remote, q, vars, *format)
			}
			now, err := clockFunc(*clock)
			if err != nil {
				return err
			}
			qs, err := query.Open(cmd.Context(), cfg.Data, cfg.storeOptions(query.Options{Now: now}))
			if err != nil {
				return err
			}
			defer qs.Close()
			api := &handlers.API{Q: qs}
			out := cmd.OutOrStdout()
			if rt.Stream != nil {
				v, err := rt.Parse(q, vars)
				if err != nil {
					return err
				}
				st, _, err := handlers.StoreAt(qs, v)
				if err != nil {
					return err
				}
				return rt.Stream(cmd.Context(), st, v, out)
			}
			res := api.Exec(cmd.Context(), rt, q, vars)
			if res.Err != nil {
				status, msg := handlers.Status(res.Err)
				if status >= 500 {
					return fmt.Errorf("%s: %w", msg, res.Err)
				}
				return fmt.Errorf("%d: %s", status, msg)
			}
			return PrintPage(out, cmd.ErrOrStderr(), res.Data, *format)
		},
	}
	for i := range rt.Params {
		p := &rt.Params[i]
		s := new(string)
		vals[p.Name] = s
		c.Flags().StringVar(s, p.Name, "", flagUsage(p))
	}
	c.Example = routeExample(rt)
	return c
}

// flagUsage is a parameter's help line: required, type, doc, enumeration, default and
// example, from the route table.
func flagUsage(p *handlers.Param) string {
	var b strings.Builder
	if p.Required {
		b.WriteString("(required) ")
	}
	kind := string(p.Kind)
	switch p.Kind {
	case handlers.Enum:
		kind = "one of " + strings.Join(p.Enum, "|")
	case handlers.List:
		kind = "comma-separated list"
	case handlers.Address:
		kind = "0x address"
	}
	fmt.Fprintf(&b, "[%s] %s", kind, p.Doc)
	if p.Default != nil && !isNoBound(p.Default) && !(p.Kind == handlers.String && p.Default == "") {
		fmt.Fprintf(&b, " (default %s)", handlers.DisplayValue(p.Default))
	}
	if p.Example != "" {
		fmt.Fprintf(&b, " (e.g. %s)", p.Example)
	}
	return b.String()
}

// isNoBound hides "no bound" sentinel defaults (math.MaxInt64) from help.
func isNoBound(v any) bool {
	i, ok := v.(int64)
	return ok && (i >= 1<<53 || i <= -(1<<53))
}

// routeExample is one runnable command line: the required parameters with their
// example values.
func routeExample(rt *handlers.Route) string {
	line := "mdq query " + rt.Area + " " + rt.CLIName()
	for _, p := range rt.Params {
		if p.Required || p.In == "path" {
			v := p.Example
			if v == "" {
				v = "<" + p.Name + ">"
			}
			line += " --" + p.Name + " " + v
		}
	}
	return "  " + line + "\n  " + line + " --format table\n  MDQ_KEY=... " + line + " --remote localhost:8080"
}

// runRemote sends the same request to a server: the route's method and path with the
// path parameters filled in, the other flags as the query string, the key from
// $MDQ_KEY. JSON output is the server's body as received.
func runRemote(cmd *cobra.Command, rt *handlers.Route, remote string, q url.Values, vars map[string]string, format string) error {
	path := rt.Path
	for name, v := range vars {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if strings.Contains(path, "{") {
		return fmt.Errorf("missing path parameter in %s", path)
	}
	target := archive.NormalizeBase(remote) + path
	if enc := q.Encode(); enc != "" {
		target += "?" + enc
	}
	req, err := http.NewRequestWithContext(cmd.Context(), rt.Method, target, nil)
	if err != nil {
		return err
	}
	if key := os.Getenv("MDQ_KEY"); key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e map[string]string
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && e["error"]+e["detail"] != "" {
			msg = e["error"] + e["detail"]
		}
		return fmt.Errorf("%d: %s", resp.StatusCode, msg)
	}
	out := cmd.OutOrStdout()
	if format == "json" || rt.Stream != nil {
		_, err := out.Write(body)
		return err
	}
	if !json.Valid(body) {
		return fmt.Errorf("the server answered a body that is not JSON")
	}
	return PrintPage(out, cmd.ErrOrStderr(), json.RawMessage(body), format)
}

// PrintPage is Print for a route's body, followed, for csv and table, by the
// envelope's scalar fields (next_cursor, has_more, totals...) that a flattened table
// drops: after the table on stdout, or on stderr for csv so the CSV stays clean. A
// cursor is printed with the flag that fetches the next page.
func PrintPage(out, notes io.Writer, data any, format string) error {
	if err := Print(out, data, format); err != nil || format == "json" {
		return err
	}
	v, err := orderedBody(data)
	if err != nil {
		return err
	}
	o, ok := v.(object)
	if !ok {
		return nil
	}
	hasArray := false
	for _, k := range o.keys {
		if _, isArr := o.vals[k].([]any); isArr {
			hasArray = true
		}
	}
	if !hasArray {
		return nil // the object itself was the one row
	}
	w := out
	if format == "csv" {
		w = notes
	}
	for _, k := range o.keys {
		switch x := o.vals[k].(type) {
		case []any, object:
			continue
		case nil:
			fmt.Fprintf(w, "# %s: null\n", k)
		default:
			c := cell(x)
			if (k == "next_cursor" || k == "nextCursor") && c != "" {
				fmt.Fprintf(w, "# %s: %s (next page: --cursor %s)\n", k, c, c)
				continue
			}
			fmt.Fprintf(w, "# %s: %s\n", k, c)
		}
	}
	return nil
}

// Print writes data as JSON (the REST body, byte for byte), CSV or an aligned table.
// CSV and table flatten the first array found: the body itself, or the one array
// field of an envelope.
func Print(w io.Writer, data any, format string) error {
	switch format {
	case "json":
		return handlers.Encode(w, data)
	case "csv", "table":
	default:
		return fmt.Errorf("--format %q: use json, csv or table", format)
	}
	v, err := orderedBody(data)
	if err != nil {
		return err
	}
	cols, rows := tabulate(v)
	if format == "csv" {
		cw := csv.NewWriter(w)
		cw.Write(cols)    //nolint:errcheck
		cw.WriteAll(rows) //nolint:errcheck
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// object is a decoded JSON object that keeps its key order, so CSV and table columns
// follow the JSON field order.
type object struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes one JSON value, keeping object key order.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '{':
			o := object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k)
				o.vals[k] = v
			}
			_, err := dec.Token() // }
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ]
			return arr, err
		}
	}
	return tok, nil
}

// tabulate flattens a decoded body into columns and rows.
func tabulate(v any) ([]string, [][]string) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case object:
		for _, k := range x.keys {
			if arr, ok := x.vals[k].([]any); ok {
				items = arr
				break
			}
		}
		if items == nil {
			items = []any{x}
		}
	default:
		items = []any{v}
	}
	var cols []string
	seen := map[string]bool{}
	for _, it := range items {
		if o, ok := it.(object); ok {
			for _, k := range o.keys {
				if !seen[k] {
					seen[k] = true
					cols = append(cols, k)
				}
			}
		}
	}
	if len(cols) == 0 {
		cols = []string{"value"}
	}
	var rows [][]string
	for _, it := range items {
		o, ok := it.(object)
		if !ok {
			o = object{keys: []string{"value"}, vals: map[string]any{"value": it}}
		}
		r := make([]string, len(cols))
		for i, c := range cols {
			r[i] = cell(o.vals[c])
		}
		rows = append(rows, r)
	}
	return cols, rows
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	case object, []any:
		// A nested value is one cell of compact JSON (strings quoted, key order kept), so
		// it can be read back; its inner text is never spliced in bare.
		var b strings.Builder
		writeJSON(&b, x)
		return b.String()
	default:
		return fmt.Sprint(x)
	}
}

// writeJSON writes a decoded value as compact JSON, objects in their key order.
func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeJSON(b, x.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(x.String())
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

// orderedBody is data as the REST body encodes it, decoded back with its key order
// and exact numbers kept, for the csv and table renderings and the page's cursor.
func orderedBody(data any) (any, error) {
	var buf bytes.Buffer
	if err := handlers.Encode(&buf, data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	return decodeOrdered(dec)
}
