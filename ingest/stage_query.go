package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// WriteNew writes the rows of query (bound args) straight to t's partition part when
// that partition is not stored and no row of t is staged for it, and says whether it
// did. It is the merge of rows derived by a query into an empty partition without
// staging them first: AppendQuery inserts them into the staging table, a grouped pass
// counts them per partition and the merge reads them back, all before the same sorted
// write (for the perpetuals tape a third of its cost). query must return t's columns
// by name and be unique on t's key: nothing deduplicates them here, as the merge would
// only have to when two staged rows share a key. A result without rows writes nothing.
func (s *Stage) WriteNew(ctx context.Context, t *lake.Table, part []string, query string, args ...any) (MergeStats, bool, error) {
	if len(part) != len(t.Partitions) {
		return MergeStats{}, false, fmt.Errorf("table %s: %d partition values for %d keys", t.Name, len(part), len(t.Partitions))
	}
	if st := s.tables[t.Name]; st != nil {
		if err := s.flush(ctx, st); err != nil {
			return MergeStats{}, false, err
		}
		if pf := st.parts[strings.Join(part, "\x00")]; (pf != nil && pf.total() > 0) || st.tabRows > 0 {
			return MergeStats{}, false, nil // staged rows to merge with: the merge does it
		}
	}
	rel, err := t.Path(part...)
	if err != nil {
		return MergeStats{}, false, err
	}
	if _, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(rel))); err == nil {
		return MergeStats{}, false, nil // stored rows to merge with
	} else if !errors.Is(err, fs.ErrNotExist) {
		return MergeStats{}, false, err
	}
	if err := s.mergeThreads(ctx); err != nil {
		return MergeStats{}, false, err
	}
	n, err := lake.CopyQuery(ctx, s.conn, s.root, t, part, query, args...)
	if err != nil {
		return MergeStats{}, false, err
	}
	ms := MergeStats{Staged: n, Written: n}
	if n > 0 {
		ms.Partitions = []string{rel}
	}
	return ms, true, nil
}
