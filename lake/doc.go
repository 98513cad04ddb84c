package lake

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// dataDocIntro opens docs/DATA.md; the table sections below it are generated from the
// registry so the document cannot drift from what is written.
const dataDocIntro = `# The lake

One directory (` + "`--data`" + `, env ` + "`MDQ_DATA`" + `, default ` + "`./data`" + `) holds every table as Parquet.
The archive part, ` + "`archive/`" + `, is exactly what ` + "`GET /archive/...`" + ` serves (SPEC §4.4); the
query engine reads those same files, it is not a copy. Every other table lives beside
it as Hive-partitioned Parquet (` + "`key=value`" + ` directories).

- Files are written sorted (see "sorted by") with bounded row groups and column
  statistics, so a reader interested in one token, coin or wallet touches only the row
  groups whose min/max cover it, locally or over HTTP Range.
- Every write is atomic: rows go to a temporary file in a hidden directory beside the
  target (` + "`.name.parquet.tmp-*/`" + `, never matched by a table's glob), which is fsynced and
  renamed into place. A reader never sees a half-written file; a crash leaves the old
  file, and a failed or cancelled write removes the directory whole.
- ` + "`lake.json`" + ` is written last by ` + "`mdq demo`" + ` (and ingest); a directory without it is not a
  lake (` + "`no lake at DIR: run mdq demo or mdq ingest`" + `).
- The lake's directory is its use lock (a flock on the directory itself): every process
  with the lake open (serve, rebuild, query, sql, ingest) holds it shared, and ` + "`mdq demo`" + `
  exclusively for its whole run, so a demo ` + "`--force`" + ` refuses a lake in use
  (` + "`lake in use: another mdq process ...`" + `) and a store refuses a lake a demo is
  writing, rather than either removing files under the other.
- Timestamps: the prediction-market tape and its trades use epoch milliseconds (BIGINT),
  as SPEC returns them; other tables use TIMESTAMP (UTC, microseconds). Addresses are
  stored lower-case. Partition keys (` + "`venue`, `date`, `chain`, `asset`, `tenor`" + `) are
  columns of the views, typed VARCHAR except ` + "`date`" + ` (DATE).
- Each table is a DuckDB view of the same name (` + "`mdq sql \"SELECT * FROM predmkt_trades LIMIT 5\"`" + `).

This file is generated from ` + "`lake/tables.go`" + ` by ` + "`go test ./lake -run TestDataDoc -update`" + `; a test
checks it against the registry and another checks every Parquet file's real schema
against it.
`

// docAreas is the order of the areas in docs/DATA.md, with their headings.
var docAreas = []string{"predmkt", "perpdex", "onchain"}

var areaTitles = map[string]string{"predmkt": "Prediction market", "perpdex": "Perpetuals venue", "onchain": "On-chain"}

// docOrder groups the tables by area in docAreas order (an unknown area last, by
// name), raw tables before derived ones, registration order otherwise: tables of one
// area are registered from several files (tables_<area>_derived.go, ...), so
// registration order alone would print an area's heading twice.
func docOrder(tables []*Table) []*Table {
	rank := func(t *Table) int {
		for i, a := range docAreas {
			if a == t.Area {
				return i
			}
		}
		return len(docAreas)
	}
	out := slices.Clone(tables)
	slices.SortStableFunc(out, func(a, b *Table) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Area, b.Area); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a.Derived), b2i(b.Derived))
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DataDoc renders docs/DATA.md from the registry.
func DataDoc() string {
	var b strings.Builder
	b.WriteString(dataDocIntro)
	area := ""
	for _, t := range docOrder(Tables()) {
		if t.Area != area {
			area = t.Area
			fmt.Fprintf(&b, "\n## %s\n", areaTitles[area])
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", t.Name, t.Doc)
		fmt.Fprintf(&b, "- path: `%s`\n", t.Glob())
		if len(t.Partitions) > 0 {
			fmt.Fprintf(&b, "- partitioned by: %s\n", strings.Join(t.Partitions, ", "))
		} else {
			b.WriteString("- partitioned by: none (one file)\n")
		}
		fmt.Fprintf(&b, "- sorted by: %s\n", strings.Join(t.SortBy, ", "))
		if t.Derived {
			b.WriteString("- derived: computed by mdq from the tables above (hourly in `mdq serve`, and `mdq rebuild`)\n")
		}
		if len(t.Routes) > 0 {
			fmt.Fprintf(&b, "- read by: %s\n", strings.Join(t.Routes, ", "))
		}
		b.WriteString("\n| column | type | unit | meaning |\n|---|---|---|---|\n")
		for _, c := range t.Columns {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Name, c.Type, c.Unit, strings.ReplaceAll(c.Doc, "|", "\\|"))
		}
	}
	return b.String()
}

// ParseDataDoc reads the column tables back out of DATA.md: table name to ordered
// (column, type) pairs. Tests use it to check real Parquet schemas against the doc.
func ParseDataDoc(doc string) map[string][][2]string {
	out := map[string][][2]string{}
	cur := ""
	for _, line := range strings.Split(doc, "\n") {
		if name, ok := strings.CutPrefix(line, "### "); ok {
			cur = strings.TrimSpace(name)
			continue
		}
		if cur == "" || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| column") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		out[cur] = append(out[cur], [2]string{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])})
	}
	return out
}
