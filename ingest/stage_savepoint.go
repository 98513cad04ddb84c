package ingest

import (
	"context"
	"fmt"
	"strings"

	"mdq/lake"
)

// Savepoint marks how far the stage has got, so the rows of one input file can be
// dropped again when a later line of it is malformed (that file's rows are not
// written; the rest of the batch is).
type Savepoint struct {
	seq int64
	n   map[string]int64
}

// Savepoint returns the current position of the stage.
func (s *Stage) Savepoint() Savepoint {
	s.markHere()
	sp := Savepoint{seq: s.seq, n: make(map[string]int64, len(s.tables))}
	for name, st := range s.tables {
		sp.n[name] = st.n
	}
	return sp
}

// RollbackTo drops every row staged after sp.
func (s *Stage) RollbackTo(ctx context.Context, sp Savepoint) error {
	for name, st := range s.tables {
		if st.n != sp.n[name] {
			return s.rollback(ctx, sp.seq)
		}
	}
	return nil
}

// AppendQuery stages the rows of a query (run on the stage's own DuckDB connection,
// bound args) into t's partition part: rows derived from what is already in the lake,
// such as a public tape computed from merged fills. The query must return t's columns
// by name. It returns the rows staged. They all take one staging sequence, after every
// row staged before: among them, rows sharing a key are kept in no defined order (the
// query's rows have no order of their own), as with the row numbers this replaced.
func (s *Stage) AppendQuery(ctx context.Context, t *lake.Table, part []string, query string, args ...any) (int64, error) {
	if len(part) != len(t.Partitions) {
		return 0, fmt.Errorf("table %s: %d partition values for %d keys", t.Name, len(part), len(t.Partitions))
	}
	st, err := s.table(t)
	if err != nil {
		return 0, err
	}
	if err := s.flush(ctx, st); err != nil {
		return 0, err
	}
	cols := make([]string, 0, len(t.Columns)+len(part)+1)
	for _, c := range t.Columns {
		cols = append(cols, "CAST(q."+lake.QuoteIdent(c.Name)+" AS "+c.Type+")")
	}
	// Placeholders in text order: partition values and the sequence base in the
	// select list, then the query's own.
	all := make([]any, 0, len(part)+1+len(args))
	for _, p := range part {
		cols = append(cols, "?")
		all = append(all, p)
	}
	// One sequence for every row: numbering them (row_number() OVER ()) made DuckDB
	// gather the whole result on one thread before inserting it.
	cols = append(cols, "CAST(? AS BIGINT)")
	all = append(all, s.seq)
	all = append(all, args...)
	query = strings.TrimRight(strings.TrimSpace(query), ";")
	res, err := s.conn.ExecContext(ctx, "INSERT INTO "+st.name+" SELECT "+strings.Join(cols, ", ")+" FROM (\n"+query+"\n) q", all...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	s.seq++
	st.n += n
	st.tabRows += n
	return n, nil
}

// Root is the lake directory the stage merges into.
func (s *Stage) Root() string { return s.root }
