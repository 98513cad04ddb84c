// Package sqlrows reads a query's rows as the driver's values, for tests that compare
// whole results (a leaf package: no mdq import, so any package's tests can use it).
package sqlrows

import "database/sql"

// All reads every remaining row of rows, each as its columns' values in order.
func All(rows *sql.Rows) ([][]any, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}
