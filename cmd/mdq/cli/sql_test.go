package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"mdq/cmd/mdq/cli"
	"mdq/internal/testlake"
)

func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Do(args, strings.NewReader(stdin), &out, &errb, "test")
	return code, out.String(), errb.String()
}

// TestSQLRendersDuckDBTypes: DECIMAL (exact), INTERVAL, UUID, TIME, DATE, MAP (which
// crashed the JSON encoder), nested LIST/STRUCT values and non-finite doubles render
// as DuckDB shows them, in json, csv and table.
func TestSQLRendersDuckDBTypes(t *testing.T) {
	dir := testlake.Tiny(t)
	const stmt = `SELECT 12345678901234567.891::DECIMAL(38,3) AS dec,
		INTERVAL '1 year 2 months 3 days 04:05:06.5' AS iv,
		'6f1b7bd4-5c2c-4c50-9c0e-0d3b1a4b7e21'::UUID AS id,
		TIME '13:14:15.25' AS tm,
		DATE '2026-11-20' AS d,
		MAP {'a': 1, 'b': 2} AS m,
		[DATE '2026-01-02', DATE '2026-01-03'] AS ds,
		{'x': 1.5::DECIMAL(4,2), 'when': TIME '01:02:03'} AS st,
		'nan'::DOUBLE AS bad`
	code, out, errs := run(t, "sql", "--data", dir, "--format", "json", stmt)
	if code != 0 {
		t.Fatalf("json: %d %s", code, errs)
	}
	var rows []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v %s", err, out)
	}
	r := rows[0]
	for col, want := range map[string]string{
		"dec": "12345678901234567.891", "iv": "1 year 2 months 3 days 04:05:06.5",
		"id": "6f1b7bd4-5c2c-4c50-9c0e-0d3b1a4b7e21", "tm": "13:14:15.25", "d": "2026-11-20",
		"m": `map[a:1 b:2]`, "ds": "[2026-01-02 2026-01-03]", "st": "map[when:01:02:03 x:1.5]", "bad": "NaN",
	} {
		if got := fmt.Sprint(r[col]); got != want {
			t.Errorf("%s = %s, want %s", col, got, want)
		}
	}
	if _, exact := r["dec"].(json.Number); !exact {
		t.Errorf("dec is %T, want a JSON number", r["dec"])
	}
	code, out, errs = run(t, "sql", "--data", dir, "--format", "csv", stmt)
	if code != 0 || !strings.Contains(out, `12345678901234567.891,1 year 2 months 3 days 04:05:06.5,6f1b7bd4-5c2c-4c50-9c0e-0d3b1a4b7e21,13:14:15.25,2026-11-20,"{""a"":1,""b"":2}","[""2026-01-02"",""2026-01-03""]"`) {
		t.Fatalf("csv: %d %s %s", code, out, errs)
	}
	if code, out, errs = run(t, "sql", "--data", dir, stmt); code != 0 || !strings.Contains(out, `{"a":1,"b":2}`) {
		t.Fatalf("table: %d %s %s", code, out, errs)
	}
}

// TestSQLInputs: the SQL comes from the argument, -c or standard input (several
// statements, semicolons inside quotes and comments kept); giving both is an error.
func TestSQLInputs(t *testing.T) {
	dir := testlake.Tiny(t)
	if code, out, errs := run(t, "sql", "--data", dir, "--format", "csv", "-c", "SELECT 41 + 1 AS n"); code != 0 || out != "n\n42\n" {
		t.Fatalf("-c: %d %q %s", code, out, errs)
	}
	script := "SELECT 'a;b' AS s; -- a comment; with a semicolon\nSELECT 2 AS n\n/* ; */ ;\nSELECT 3 AS n"
	if code, out, errs := runIn(t, script, "sql", "--data", dir, "--format", "csv"); code != 0 || out != "s\na;b\nn\n2\nn\n3\n" {
		t.Fatalf("stdin: %d %q %s", code, out, errs)
	}
	if code, _, errs := run(t, "sql", "--data", dir, "-c", "SELECT 1", "SELECT 2"); code == 0 || !strings.Contains(errs, "not both") {
		t.Fatalf("both: %d %s", code, errs)
	}
	if code, _, errs := runIn(t, "  \n", "sql", "--data", dir); code == 0 || !strings.Contains(errs, "no SQL") {
		t.Fatalf("empty stdin: %d %s", code, errs)
	}
}

// TestSQLTableRowCap: table output shows at most --max-rows rows (default 1000) and
// says how many were left out; json and csv are not capped; --max-rows 0 shows all.
func TestSQLTableRowCap(t *testing.T) {
	dir := testlake.Tiny(t)
	const stmt = "SELECT range AS n FROM range(1500)"
	_, out, _ := run(t, "sql", "--data", dir, stmt)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+cli.DefaultMaxRows+1 || lines[len(lines)-1] != "(500 more rows not shown; --max-rows 0 shows all, or add LIMIT)" {
		t.Fatalf("default cap: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	_, out, _ = run(t, "sql", "--data", dir, "--max-rows", "10", stmt)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 12 || !strings.HasPrefix(lines[11], "(1490 more rows") {
		t.Fatalf("--max-rows 10: %q", out)
	}
	_, out, _ = run(t, "sql", "--data", dir, "--max-rows", "0", stmt)
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 1501 {
		t.Fatalf("--max-rows 0: %d lines", n)
	}
	_, out, _ = run(t, "sql", "--data", dir, "--format", "csv", stmt)
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 1501 {
		t.Fatalf("csv capped: %d lines", n)
	}
}
