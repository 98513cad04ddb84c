package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
	var format, clock string
	cmd.PersistentFlags().StringVar(&format, "format", "json", "json, csv or table")
	cmd.PersistentFlags().StringVar(&clock, "clock", "", "pin \"now\" to this RFC3339 time")
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
		ac.AddCommand(routeCmd(cfg, rt, &format, &clock))
	}
	return cmd
}

func routeCmd(cfg *Config, rt *handlers.Route, format, clock *string) *cobra.Command {
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
			return Print(out, res.Data, *format)
		},
	}
	for _, p := range rt.Params {
		s := new(string)
		vals[p.Name] = s
		usage := p.Doc
		if p.Required {
			usage = "(required) " + usage
		}
		c.Flags().StringVar(s, p.Name, "", usage)
	}
	return c
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
	var buf bytes.Buffer
	if err := handlers.Encode(&buf, data); err != nil {
		return err
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	v, err := decodeOrdered(dec)
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
	case object:
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%s", k, cell(x.vals[k]))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cell(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		return fmt.Sprint(x)
	}
}
