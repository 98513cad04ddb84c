package ingest

import (
	"context"
	"fmt"
	"strings"

	"mdq/lake"
)

// InsertQuery stages the rows of query, run by the stage's DuckDB, as rows of t: for
// loaders that hand DuckDB a bulk file (a normalised CSV) instead of appending row by
// row. query must return t's columns by name, one column "_part_<key>" (VARCHAR) per
// partition key of t, and "_seq" (BIGINT, ascending in input order: among staged
// rows with the same key the one with the larger _seq wins, as with Append). It
// returns the rows staged. Identifiers come from the registry; query and args are
// the caller's.
func (s *Stage) InsertQuery(ctx context.Context, t *lake.Table, query string, args ...any) (int64, error) {
	st, err := s.table(t)
	if err != nil {
		return 0, err
	}
	if err := s.flush(ctx, st); err != nil {
		return 0, err
	}
	cols := make([]string, 0, len(t.Columns)+len(t.Partitions)+1)
	for _, c := range t.Columns {
		cols = append(cols, "CAST(q."+lake.QuoteIdent(c.Name)+" AS "+c.Type+")")
	}
	for _, p := range t.Partitions {
		cols = append(cols, "CAST(q."+lake.QuoteIdent("_part_"+p)+" AS VARCHAR)")
	}
	cols = append(cols, fmt.Sprintf("%d + q._seq", s.seq))
	res, err := s.conn.ExecContext(ctx, "INSERT INTO "+st.name+" SELECT "+strings.Join(cols, ", ")+" FROM (\n"+
		strings.TrimRight(strings.TrimSpace(query), ";")+"\n) q", args...)
	if err != nil {
		return 0, fmt.Errorf("stage %s: %w", t.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	var maxSeq int64
	if n > 0 {
		// Later Appends and inserts come after every row staged here.
		if err := s.conn.QueryRowContext(ctx, "SELECT max(_ord) FROM "+st.name).Scan(&maxSeq); err != nil {
			return 0, err
		}
		s.seq = max(s.seq, maxSeq+1)
	}
	st.n += n
	st.tabRows += n
	return n, nil
}
