package cli

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"mdq/query"
)

// newSQLCmd is the analysts' console: DuckDB SQL over the lake's views.
func newSQLCmd(cfg *Config) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "sql \"SELECT ...\"",
		Short: "Run DuckDB SQL over the lake's views (predmkt_trades, perpdex_fills, onchain_transfers, ...)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := query.Open(cmd.Context(), cfg.Data, cfg.storeOptions(query.Options{Timeout: 10 * time.Minute}))
			if err != nil {
				return err
			}
			defer q.Close()
			rows, err := q.DB().QueryContext(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer rows.Close()
			out, err := scanAll(rows)
			if err != nil {
				return err
			}
			return Print(cmd.OutOrStdout(), out, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "json, csv or table")
	return cmd
}

// scanAll reads every row as an ordered record.
func scanAll(rows *sql.Rows) ([]orderedRow, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
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
			switch x := v.(type) {
			case []byte:
				r.vals[i] = string(x)
			case time.Time:
				r.vals[i] = x.UTC().Format(time.RFC3339Nano)
			default:
				r.vals[i] = x
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
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
