package cli

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"mdq/query"
)

// DefaultMaxRows is how many rows table output shows unless --max-rows says otherwise;
// a note tells how many were left out. JSON and CSV are never capped.
const DefaultMaxRows = 1000

// newSQLCmd is the analysts' console: DuckDB SQL over the lake's views. The SQL comes
// from the argument, -c, or standard input (statements separated by semicolons); with
// a terminal on standard input and no SQL given it is an interactive prompt (history,
// statements over several lines until a semicolon).
func newSQLCmd(cfg *Config) *cobra.Command {
	var format, command string
	var maxRows int
	cmd := &cobra.Command{
		Use:   "sql [\"SELECT ...\"]",
		Short: "Run DuckDB SQL over the lake's views (predmkt_trades, perpdex_fills, onchain_transfers, ...)",
		Long: "Run DuckDB SQL over the lake's views. The SQL is the argument, -c \"SQL\", or standard input " +
			"(several statements separated by semicolons). With no SQL and a terminal, an interactive prompt: " +
			"end a statement with ';' (it may span lines), arrow keys recall history, \\q or Ctrl-D quits. " +
			"Table output shows at most --max-rows rows (default 1000) and says how many were left out.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if command != "" && len(args) > 0 {
				return errors.New("give the SQL as the argument or with -c, not both")
			}
			if maxRows < 0 {
				return errors.New("--max-rows must be 0 (all) or more")
			}
			q, err := query.Open(cmd.Context(), cfg.Data, cfg.storeOptions(query.Options{Timeout: 10 * time.Minute}))
			if err != nil {
				return err
			}
			defer q.Close()
			c := &sqlConsole{db: q.DB(), format: format, maxRows: maxRows, out: cmd.OutOrStdout()}
			switch {
			case command != "":
				return c.run(cmd.Context(), command)
			case len(args) == 1:
				return c.run(cmd.Context(), args[0])
			}
			in := cfg.Stdin
			if in == nil {
				in = os.Stdin
			}
			if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				return c.interactive(cmd.Context(), f)
			}
			return c.script(cmd.Context(), in)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "json, csv or table")
	cmd.Flags().StringVarP(&command, "command", "c", "", "the SQL to run (same as the argument)")
	cmd.Flags().IntVar(&maxRows, "max-rows", DefaultMaxRows, "rows shown by table output; 0 shows all (json and csv are never capped)")
	return cmd
}

type sqlConsole struct {
	db      query.DBTX
	format  string
	maxRows int
	out     io.Writer
}

// run executes one statement and prints its rows.
func (c *sqlConsole) run(ctx context.Context, stmt string) error {
	rows, err := c.db.QueryContext(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	out, err := scanAll(rows)
	if err != nil {
		return err
	}
	left := 0
	if c.format == "table" && c.maxRows > 0 && len(out) > c.maxRows {
		left = len(out) - c.maxRows
		out = out[:c.maxRows]
	}
	if err := Print(c.out, out, c.format); err != nil {
		return err
	}
	if left > 0 {
		fmt.Fprintf(c.out, "(%d more rows not shown; --max-rows 0 shows all, or add LIMIT)\n", left)
	}
	return nil
}

// script runs every statement read from r, in order, stopping at the first error.
func (c *sqlConsole) script(ctx context.Context, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	stmts, rest := splitStatements(string(b))
	if strings.TrimSpace(rest) != "" {
		stmts = append(stmts, rest) // the last statement may omit its semicolon
	}
	if len(stmts) == 0 {
		return errors.New("no SQL: give it as the argument, with -c, or on standard input")
	}
	for _, s := range stmts {
		if err := c.run(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// interactive is the prompt: a statement runs once a line ends it with a semicolon;
// errors are printed and the prompt goes on. History is kept in the terminal session
// and in ~/.mdq_sql_history.
func (c *sqlConsole) interactive(ctx context.Context, f *os.File) error {
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return c.script(ctx, f)
	}
	defer term.Restore(int(f.Fd()), old) //nolint:errcheck
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{f, c.out}, "mdq> ")
	histFile := historyPath()
	for _, h := range loadHistory(histFile) {
		t.History.Add(h)
	}
	c.out = t // rows printed through the terminal get \r\n line ends in raw mode
	var pending strings.Builder
	for {
		line, err := t.ReadLine()
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(t)
			return nil
		}
		if err != nil {
			return err
		}
		if pending.Len() == 0 && (strings.TrimSpace(line) == `\q` || strings.TrimSpace(line) == "exit") {
			return nil
		}
		pending.WriteString(line)
		pending.WriteByte('\n')
		stmts, rest := splitStatements(pending.String())
		for _, s := range stmts {
			appendHistory(histFile, s)
			if err := c.run(ctx, s); err != nil {
				fmt.Fprintln(t, "error:", err)
			}
		}
		pending.Reset()
		if strings.TrimSpace(rest) != "" {
			pending.WriteString(rest)
			t.SetPrompt("  -> ")
		} else {
			t.SetPrompt("mdq> ")
		}
	}
}

func historyPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".mdq_sql_history")
}

// loadHistory reads the last statements of the history file (one per line, newlines
// inside a statement written as spaces).
func loadHistory(p string) []string {
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 100 {
		lines = lines[len(lines)-100:]
	}
	return lines
}

func appendHistory(p, stmt string) {
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strings.Join(strings.Fields(stmt), " ")+";")
}

// splitStatements cuts text at semicolons outside quotes and comments; it returns the
// complete statements (without the semicolon, blank ones dropped) and the unfinished rest.
func splitStatements(text string) ([]string, string) {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '-' && i+1 < len(text) && text[i+1] == '-':
			nl := strings.IndexByte(text[i:], '\n')
			if nl < 0 {
				i = len(text)
			} else {
				i += nl
			}
		case ch == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 3
			}
		case ch == ';':
			if s := strings.TrimSpace(text[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out, text[start:]
}

// scanAll reads every row as an ordered record, each value in a form JSON, CSV and
// tables render as DuckDB shows it (sqlValue).
func scanAll(rows *sql.Rows) ([]orderedRow, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types := make([]string, len(cols))
	if cts, err := rows.ColumnTypes(); err == nil {
		for i, ct := range cts {
			types[i] = strings.ToUpper(ct.DatabaseTypeName())
		}
	}
	out := []orderedRow{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := orderedRow{cols: cols, vals: make([]any, len(cols))}
		for i, v := range vals {
			r.vals[i] = sqlValue(v, types[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// sqlValue converts a value the DuckDB driver scanned into one encoding/json writes
// as DuckDB shows it: DECIMAL exact (a JSON number from its digits), DATE as
// YYYY-MM-DD, TIME as HH:MM:SS[.ffffff], TIMESTAMP as RFC 3339, INTERVAL and UUID as
// text, MAP as an object (keys as text), NaN and infinities as text, and the same
// inside LIST, STRUCT and MAP values. dbType is the column's type name (element types
// of nested values are inferred from the values).
func sqlValue(v any, dbType string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		if dbType == "UUID" && len(x) == 16 {
			var u duckdb.UUID
			copy(u[:], x)
			return u.String()
		}
		if utf8.Valid(x) {
			return string(x)
		}
		return `\x` + hex.EncodeToString(x)
	case duckdb.UUID:
		return x.String()
	case *duckdb.UUID:
		return x.String()
	case duckdb.Decimal:
		return json.Number(x.String())
	case *duckdb.Decimal:
		return json.Number(x.String())
	case duckdb.Interval:
		return intervalText(x)
	case time.Time:
		return timeText(x, dbType)
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	case duckdb.Map:
		keys := make([]string, 0, len(x))
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks := fmt.Sprint(sqlValue(k, ""))
			keys = append(keys, ks)
			m[ks] = sqlValue(e, elemType(dbType))
		}
		sort.Strings(keys)
		return orderedRow{cols: keys, vals: func() []any {
			vs := make([]any, len(keys))
			for i, k := range keys {
				vs[i] = m[k]
			}
			return vs
		}()}
	case map[string]any: // STRUCT
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		vs := make([]any, len(keys))
		for i, k := range keys {
			vs[i] = sqlValue(x[k], "")
		}
		return orderedRow{cols: keys, vals: vs}
	case []any: // LIST, ARRAY
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sqlValue(e, elemType(dbType))
		}
		return out
	case duckdb.Union:
		return sqlValue(x.Value, "")
	}
	return v
}

// elemType is the element type of a LIST or ARRAY type name ("DATE[]" → "DATE").
func elemType(t string) string {
	if i := strings.LastIndexByte(t, '['); i > 0 {
		return t[:i]
	}
	return ""
}

func finite(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// timeText renders DATE, TIME and TIMESTAMP values; without a type name (nested), a
// value on 0001-01-01 is a TIME and one at midnight UTC a DATE.
func timeText(t time.Time, dbType string) string {
	t = t.UTC()
	switch {
	case dbType == "DATE":
		return t.Format(time.DateOnly)
	case strings.HasPrefix(dbType, "TIME") && !strings.HasPrefix(dbType, "TIMESTAMP"):
		return t.Format("15:04:05.999999")
	case dbType == "" && t.Year() == 1 && t.YearDay() == 1:
		return t.Format("15:04:05.999999")
	}
	return t.Format(time.RFC3339Nano)
}

// intervalText writes an INTERVAL as DuckDB does: "1 year 2 months 3 days 04:05:06.5".
func intervalText(iv duckdb.Interval) string {
	var parts []string
	plural := func(n int64, unit string) {
		if n == 0 {
			return
		}
		s := fmt.Sprintf("%d %s", n, unit)
		if n != 1 && n != -1 {
			s += "s"
		}
		parts = append(parts, s)
	}
	plural(int64(iv.Months/12), "year")
	plural(int64(iv.Months%12), "month")
	plural(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		m := iv.Micros
		sign := ""
		if m < 0 {
			sign, m = "-", -m
		}
		s := fmt.Sprintf("%s%02d:%02d:%02d", sign, m/3_600_000_000, m/60_000_000%60, m/1_000_000%60)
		if frac := m % 1_000_000; frac != 0 {
			s += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// orderedRow encodes as a JSON object with the query's column order.
type orderedRow struct {
	cols []string
	vals []any
}

func (r orderedRow) MarshalJSON() ([]byte, error) {
	return marshalOrdered(r.cols, r.vals)
}

func marshalOrdered(cols []string, vals []any) ([]byte, error) {
	buf := []byte{'{'}
	for i, c := range cols {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, _ := jsonMarshal(c)
		v, err := jsonMarshal(vals[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c, err)
		}
		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = append(buf, v...)
	}
	return append(buf, '}'), nil
}
