// Package cut writes a point-in-time copy of a lake: every raw table holding only the
// rows that were known at one instant, the way a backtest snapshot would be kept. The
// derived tables are not copied; the caller rebuilds them from the cut raw tables
// through the ordinary publication paths (mdq lake cut does), so the copy is exactly
// what the lake would have been had ingest stopped at that instant.
package cut

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mdq/archive"
	"mdq/internal/duckconn"
	"mdq/lake"
)

// Rule says which rows of one raw table were known at the cut time $1: Where is the
// row predicate over the table's own columns ("" keeps every row: reference data with
// no time of its own), Select the projection when a column's value depends on the
// time (a market is only closed once its end has passed). $1 is the cut time as a
// TIMESTAMP, $2 the same in epoch milliseconds (the tape's BIGINT columns).
type Rule struct {
	Where  string
	Select string // "" is SELECT *
	Why    string // for docs and errors
}

// Rules holds one entry per raw (not derived) table of the lake; a test checks that
// every registered raw table has one, so a new table cannot be cut by accident whole.
var Rules = map[string]Rule{
	// Prediction market.
	"predmkt_markets": {Where: "created_ts <= $1", Select: "* REPLACE (closed AND end_ts <= $1 AS closed)",
		Why: "listed by then; closed only once its end has passed"},
	"predmkt_tokens": {Where: "condition_id IN (SELECT condition_id FROM read_parquet(" + placeholderMarkets + ") WHERE created_ts <= $1)",
		Why: "the outcome tokens of the markets listed by then"},
	"predmkt_resolutions":        {Where: "resolved_ts <= $1", Why: "resolved by then"},
	"predmkt_profiles":           {Why: "reference data without a time: kept whole"},
	"predmkt_trades":             {Where: "ts <= $2", Why: "fills with venue time at most the cut"},
	"predmkt_book_events":        {Where: "ts <= $2 AND local_ts <= $2", Why: "tape events received by then"},
	"predmkt_family_book_events": {Where: "ts <= $2 AND local_ts <= $2", Why: "tape events received by then"},
	// Perpetuals.
	"perpdex_fills":         {Where: "time <= $1", Why: "fills by then"},
	"perpdex_trades":        {Where: "ts <= $2 AND local_ts <= $2", Why: "trades received by then"},
	"perpdex_book_events":   {Where: "ts <= $2 AND local_ts <= $2", Why: "tape events received by then"},
	"perpdex_funding":       {Where: "time <= $1", Why: "payments by then"},
	"perpdex_ledger":        {Where: "time <= $1", Why: "ledger events by then"},
	"perpdex_positions":     {Where: "snapshot_ts <= $1", Why: "snapshots taken by then"},
	"perpdex_accounts":      {Where: "snapshot_ts <= $1", Why: "snapshots taken by then"},
	"perpdex_hype_balances": {Where: "as_of <= $1", Why: "balances read by then"},
	"perpdex_marks":         {Where: "time <= $1", Why: "marks by then"},
	"perpdex_candles":       {Where: "close_time <= $1", Why: "candles closed by then"},
	"perpdex_funding_rates": {Where: "time <= $1", Why: "rates known by then"},
	"perpdex_venue_stats":   {Where: "ts <= $1", Why: "statistics by then"},
	"perpdex_vaults":        {Where: "created_ts <= $1", Why: "vaults created by then"},
	// On-chain.
	"onchain_transfers":     {Where: "block_time <= $1", Why: "blocks by then"},
	"onchain_tokens":        {Why: "reference data without a time: kept whole"},
	"onchain_prices":        {Where: "hour <= $1", Why: "hourly prices whose hour has started by then"},
	"onchain_labels":        {Where: "observed_at <= $1", Why: "labels observed by then"},
	"onchain_label_sources": {Why: "reference data without a time: kept whole"},
	"onchain_ens":           {Where: "registered_at <= $1", Why: "names registered by then"},
	"onchain_balances":      {Where: "as_of <= $1", Why: "balances read by then"},
}

// placeholderMarkets is replaced by the source lake's markets file(s) in the tokens
// rule (a path, which DuckDB cannot take as a bound parameter).
const placeholderMarkets = "'@markets@'"

// Result describes a finished cut.
type Result struct {
	At    time.Time
	Files int              // Parquet files written
	Rows  map[string]int64 // rows kept per table
}

// Raw writes into out (an empty or missing directory) the raw tables of the lake at
// src cut at at, the archive manifest of the cut files and a lake.json marker naming
// the source and the cut time. Derived tables are left for the caller to publish. It
// does not make out atomic: the caller writes into a temporary directory and renames.
func Raw(ctx context.Context, src, out string, at time.Time) (*Result, error) {
	if err := lake.Check(src); err != nil {
		return nil, err
	}
	at = at.UTC()
	db, err := duckconn.Open("")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	res := &Result{At: at, Rows: map[string]int64{}}
	for _, t := range lake.Tables() {
		if t.Derived {
			continue
		}
		r, ok := Rules[t.Name]
		if !ok {
			return nil, fmt.Errorf("table %s has no cut rule", t.Name)
		}
		files, err := t.Files(src)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			vals, err := partitionValues(src, t, f)
			if err != nil {
				return nil, err
			}
			q, err := r.query(src, f)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", t.Name, err)
			}
			n, err := lake.CopyQuery(ctx, db, out, t, vals, q, at, at.UnixMilli())
			if err != nil {
				return nil, fmt.Errorf("cut %s: %w", f, err)
			}
			if n > 0 {
				res.Files++
			}
			res.Rows[t.Name] += n
		}
	}
	if err := archive.Refresh(ctx, out); err != nil {
		return nil, fmt.Errorf("archive manifest: %w", err)
	}
	if err := writeMarker(src, out, at); err != nil {
		return nil, err
	}
	return res, nil
}

// query is the SELECT of one source file under r (paths are quoted, never input).
func (r Rule) query(src, file string) (string, error) {
	sel := r.Select
	if sel == "" {
		sel = "*"
	}
	q := "SELECT " + sel + " FROM read_parquet(" + lake.QuoteString(file) + ", hive_partitioning = false)"
	if r.Where == "" {
		// Keep every row; the bound parameters still have to be used once.
		return q + " WHERE $1 IS NOT NULL AND $2 IS NOT NULL", nil
	}
	where := r.Where
	if strings.Contains(where, placeholderMarkets) {
		mk, err := lake.PredmktMarkets.Files(src)
		if err != nil {
			return "", err
		}
		if len(mk) == 0 {
			return q + " WHERE false AND $1 IS NOT NULL AND $2 IS NOT NULL", nil
		}
		quoted := make([]string, len(mk))
		for i, m := range mk {
			quoted[i] = lake.QuoteString(m)
		}
		where = strings.ReplaceAll(where, placeholderMarkets, "["+strings.Join(quoted, ", ")+"]")
	}
	if !strings.Contains(where, "$1") {
		where += " AND $1 IS NOT NULL"
	}
	if !strings.Contains(where, "$2") {
		where += " AND $2 IS NOT NULL"
	}
	return q + " WHERE " + where, nil
}

// partitionValues reads the Hive partition values of file, a file of t under root.
func partitionValues(root string, t *lake.Table, file string) ([]string, error) {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	rest := strings.TrimPrefix(rel, t.Prefix+"/")
	segs := strings.Split(rest, "/")
	if len(segs) != len(t.Partitions)+1 {
		return nil, fmt.Errorf("%s: not a file of table %s", rel, t.Name)
	}
	vals := make([]string, len(t.Partitions))
	for i, p := range t.Partitions {
		k, v, ok := strings.Cut(segs[i], "=")
		if !ok || k != p {
			return nil, fmt.Errorf("%s: partition %q where %s= was expected", rel, segs[i], p)
		}
		vals[i] = v
	}
	return vals, nil
}

// writeMarker writes out's lake.json: the source's marker with the cut recorded (its
// end moved back to the cut when the cut is earlier).
func writeMarker(src, out string, at time.Time) error {
	b, err := os.ReadFile(filepath.Join(src, lake.MarkerFile))
	if err != nil {
		return err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(src, lake.MarkerFile), err)
	}
	if e, ok := m["end"].(string); ok {
		if end, err := time.Parse(time.RFC3339Nano, e); err == nil && at.Before(end) {
			m["end"] = at.Format(time.RFC3339Nano)
		}
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	m["cut_at"] = at.Format(time.RFC3339Nano)
	m["cut_from"] = abs
	nb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return lake.WriteFileAtomic(filepath.Join(out, lake.MarkerFile), append(nb, '\n'))
}

// ErrNotEmpty reports an output directory that already holds something.
var ErrNotEmpty = errors.New("output directory is not empty")

// CheckOut refuses an output directory that exists and is not empty, and one inside
// the source lake.
func CheckOut(src, out string) error {
	as, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	ao, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if ao == as || strings.HasPrefix(ao, as+string(filepath.Separator)) {
		return fmt.Errorf("--out %s is inside the source lake %s", out, src)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, out)
	}
	return nil
}
