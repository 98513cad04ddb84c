package onchain

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"mdq/ingest"
	"mdq/lake"
)

// samples is the shared folder of real-format inputs; tests reading it skip when absent.
func samples(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "samples", "onchain")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("real-format samples absent (%s): %v", d, err)
	}
	return d
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestSampleGetLogsDecodesToGroundTruth: the eth_getLogs answer of block 483920 decodes
// exactly to the transfers Ethereum-ETL's own test expects from it.
func TestSampleGetLogsDecodesToGroundTruth(t *testing.T) {
	dir := samples(t)
	b, err := os.ReadFile(filepath.Join(dir, "eth_getLogs_response_block_483920.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result []Log `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	want := readCSV(t, filepath.Join(dir, "expected_token_transfers_block_483920.csv"))
	if len(resp.Result) != len(want) || len(want) == 0 {
		t.Fatalf("%d logs, %d expected transfers", len(resp.Result), len(want))
	}
	for i, lg := range resp.Result {
		tr, skip, err := DecodeLog(lg)
		if err != nil || skip != "" {
			t.Fatalf("log %d: skip %q err %v", i, skip, err)
		}
		w := want[i]
		got := map[string]string{
			"token_address": tr.Token, "from_address": tr.From, "to_address": tr.To, "value": tr.Value.String(),
			"transaction_hash": tr.TxHash, "log_index": strconv.Itoa(int(tr.LogIndex)), "block_number": strconv.FormatUint(tr.Block, 10),
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("log %d %s: got %s, want %s", i, k, got[k], v)
			}
		}
	}
	// The block sample gives the block's timestamp and hash, which the logs carry.
	hb, err := os.ReadFile(filepath.Join(dir, "eth_getBlockByNumber_483920.json"))
	if err != nil {
		t.Fatal(err)
	}
	var blk struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(hb, &blk); err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(blk.Result)
	if err != nil {
		t.Fatal(err)
	}
	if h.Number != 483920 || h.Hash != resp.Result[0].BlockHash || h.Time <= 1438269973 {
		t.Fatalf("header %+v", h)
	}
}

// etlRow is one stored transfer as read back.
type etlRow struct {
	Block    int64
	Time     time.Time
	Tx       string
	LogIndex int32
	Token    string
	From, To string
	Raw      string
	Amount   float64
	USD      sql.NullFloat64
	Date     string
}

func readTransfers(t *testing.T, root, chain string) []etlRow {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	glob := filepath.Join(root, "onchain", "transfers", "chain="+chain, "date=*", "transfers.parquet")
	if m, _ := filepath.Glob(glob); len(m) == 0 {
		return nil
	}
	rows, err := db.Query("SELECT block_number, block_time, tx_hash, log_index, token_address, from_address, to_address, value_raw, amount, usd, date::VARCHAR FROM read_parquet(" +
		lake.QuoteString(glob) + ", hive_partitioning = true) ORDER BY block_number, tx_hash, log_index")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []etlRow
	for rows.Next() {
		var r etlRow
		if err := rows.Scan(&r.Block, &r.Time, &r.Tx, &r.LogIndex, &r.Token, &r.From, &r.To, &r.Raw, &r.Amount, &r.USD, &r.Date); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ingestETL runs one ETL ingest (with price files) the way the CLI does.
func ingestETL(t *testing.T, root, chain string, opt Options, prices []string, paths ...string) (ingest.Summary, error) {
	t.Helper()
	ctx := context.Background()
	l, err := NewLoader(ctx, root, chain)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, p := range prices {
		if err := LoadPrices(l, p, opt); err != nil {
			return l.Sum, err
		}
	}
	files, err := FindETL(paths)
	if err != nil {
		return l.Sum, err
	}
	if err := LoadETL(ctx, l, files, opt); err != nil {
		return l.Sum, err
	}
	return l.Sum, l.Commit(ctx, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// TestSampleETLParsesWithSuppliedTimestamps: the real token_transfers.csv loads with
// block timestamps and decimals the test supplies; every row is stored with its exact
// value, lower-case addresses, amount = value / 10^decimals, in the date partition of
// its block time, checked against the CSV read independently.
func TestSampleETLParsesWithSuppliedTimestamps(t *testing.T) {
	dir := samples(t)
	src := filepath.Join(dir, "token_transfers.csv")
	want := readCSV(t, src)
	tmp := t.TempDir()
	// Timestamps: block n at 2015-11-01 + (n-483000)*15 s, a deterministic stand-in.
	base := time.Date(2015, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
	blockTime := func(n int64) int64 { return base + (n-483000)*15 }
	var blocks, tokens strings.Builder
	blocks.WriteString("number,hash,timestamp\n")
	seen := map[string]bool{}
	tokens.WriteString("address,symbol,name,decimals,total_supply\n")
	for _, r := range want {
		n, _ := strconv.ParseInt(r["block_number"], 10, 64)
		if !seen[r["block_number"]] {
			seen[r["block_number"]] = true
			fmt.Fprintf(&blocks, "%d,0x%064x,%d\n", n, n, blockTime(n))
		}
		if !seen[r["token_address"]] {
			seen[r["token_address"]] = true
			fmt.Fprintf(&tokens, "%s,TKN,Token,6,0\n", strings.ToUpper(r["token_address"][:2])+r["token_address"][2:])
		}
	}
	etl := filepath.Join(tmp, "etl")
	writeFile(t, filepath.Join(etl, "blocks.csv"), blocks.String())
	writeFile(t, filepath.Join(etl, "tokens.csv"), tokens.String())
	b, _ := os.ReadFile(src)
	writeFile(t, filepath.Join(etl, "token_transfers", "part0.csv"), string(b))
	root := filepath.Join(tmp, "lake")
	sum, err := ingestETL(t, root, "ethereum", Options{}, nil, etl)
	if err != nil {
		t.Fatal(err)
	}
	got := readTransfers(t, root, "ethereum")
	if len(got) != len(want) || sum.Written != int64(len(want)) {
		t.Fatalf("stored %d rows (written %d), want %d", len(got), sum.Written, len(want))
	}
	byKey := map[string]etlRow{}
	for _, r := range got {
		byKey[r.Tx+"/"+strconv.Itoa(int(r.LogIndex))] = r
	}
	for _, w := range want {
		r, ok := byKey[strings.ToLower(w["transaction_hash"])+"/"+w["log_index"]]
		if !ok {
			t.Fatalf("missing %v", w)
		}
		n, _ := strconv.ParseInt(w["block_number"], 10, 64)
		raw, _ := new(big.Int).SetString(w["value"], 10)
		amt, _ := new(big.Rat).SetFrac(raw, big.NewInt(1e6)).Float64()
		bt := time.Unix(blockTime(n), 0).UTC()
		if r.Block != n || !r.Time.Equal(bt) || r.Token != strings.ToLower(w["token_address"]) || r.From != strings.ToLower(w["from_address"]) ||
			r.To != strings.ToLower(w["to_address"]) || r.Raw != raw.String() || r.Amount != amt || r.USD.Valid || r.Date != bt.Format("2006-01-02") {
			t.Errorf("row %+v from %v", r, w)
		}
	}
}

// uint256 edge values: decimal and hex parsing, exact raw strings, amounts rounded once.
func TestValueUint256(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, tc := range []struct {
		in      string
		ok      bool
		decimal string
	}{
		{"0", true, "0"},
		{"000123", true, "123"},
		{"18446744073709551615", true, "18446744073709551615"},
		{"18446744073709551616", true, "18446744073709551616"},
		{max.String(), true, max.String()},
		{new(big.Int).Add(max, big.NewInt(1)).String(), false, ""},
		{"-1", false, ""},
		{"+1", false, ""},
		{"1e18", false, ""},
		{"", false, ""},
		{"12.5", false, ""},
	} {
		v, err := ParseValue(tc.in)
		if (err == nil) != tc.ok || (tc.ok && v.String() != tc.decimal) {
			t.Errorf("ParseValue(%q) = %v, %v", tc.in, v, err)
		}
	}
	hv, err := ParseHexValue("0x" + strings.Repeat("f", 64))
	if err != nil || hv.String() != max.String() {
		t.Fatalf("hex max: %v %v", hv, err)
	}
	for _, raw := range []*big.Int{big.NewInt(1), big.NewInt(1e6), new(big.Int).Lsh(big.NewInt(1), 53), new(big.Int).Lsh(big.NewInt(1), 200), max} {
		for _, dec := range []int{0, 6, 18, 24} {
			want, _ := new(big.Rat).SetFrac(raw, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil)).Float64()
			if got := ValueFromBig(raw).Amount(dec); got != want {
				t.Errorf("Amount(%s, %d) = %v, want %v", raw, dec, got, want)
			}
		}
	}
}

// TestABIString: dynamic strings, bytes32 symbols (MKR-style), and garbage.
func TestABIString(t *testing.T) {
	word := func(n int) []byte {
		b := make([]byte, 32)
		b[31] = byte(n)
		return b
	}
	dyn := append(append(word(32), word(4)...), append([]byte("USDT"), make([]byte, 28)...)...)
	b32 := append([]byte("MKR"), make([]byte, 29)...)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"dynamic", dyn, "USDT"},
		{"bytes32", b32, "MKR"},
		{"empty", nil, ""},
		{"short", []byte{1, 2}, ""},
	} {
		if got := ABIString(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

const fixTransfers = `token_address,from_address,to_address,value,transaction_hash,log_index,block_number
0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,1500000,0x00000000000000000000000000000000000000000000000000000000000000a1,0,100
0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,0x2222222222222222222222222222222222222222,0x3333333333333333333333333333333333333333,115792089237316195423570985008687907853269984665640564039457584007913129639935,0x00000000000000000000000000000000000000000000000000000000000000a2,3,101
0xcccccccccccccccccccccccccccccccccccccccc,0x3333333333333333333333333333333333333333,0x1111111111111111111111111111111111111111,7,0x00000000000000000000000000000000000000000000000000000000000000a3,1,102
`

const fixBlocks = `number,hash,parent_hash,timestamp
100,0x01,0x00,1700000000
101,0x02,0x01,1700003700
102,0x03,0x02,1700090000
`

const fixTokens = `address,symbol,name,decimals,total_supply
0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,USDC,USD Coin,6,0
0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,BIG,Big,24,0
0xcccccccccccccccccccccccccccccccccccccccc,NFTISH,Zero decimals,0,0
`

const fixPrices = `chain,token_address,hour,price_usd
ethereum,0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,2023-11-14T22:00:00Z,1.0
ethereum,0xBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB,1700002800,0.5
`

func fixture(t *testing.T) (etl, prices string) {
	t.Helper()
	d := t.TempDir()
	writeFile(t, filepath.Join(d, "etl", "token_transfers.csv"), fixTransfers)
	writeFile(t, filepath.Join(d, "etl", "blocks.csv"), fixBlocks)
	writeFile(t, filepath.Join(d, "etl", "tokens.csv"), fixTokens)
	return filepath.Join(d, "etl"), writeFile(t, filepath.Join(d, "prices.csv"), fixPrices)
}

// TestETLFixtureValuesPricesAndIdempotence: decimals 6, 24 and 0; a value of 2^256-1;
// USD from the hourly price of the block's hour, NULL for an unpriced token; a second
// ingest of the same files writes nothing new and leaves the files' rows as they were.
func TestETLFixtureValuesPricesAndIdempotence(t *testing.T) {
	etl, prices := fixture(t)
	root := t.TempDir()
	sum, err := ingestETL(t, root, "ethereum", Options{}, []string{prices}, etl)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Written != 3 {
		t.Fatalf("summary %s", sum.String())
	}
	got := readTransfers(t, root, "ethereum")
	max := "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	maxAmt, _ := new(big.Rat).SetFrac(func() *big.Int { b, _ := new(big.Int).SetString(max, 10); return b }(),
		new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)).Float64()
	want := []struct {
		token, raw string
		amount     float64
		usd        any
		date       string
	}{
		{"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1500000", 1.5, 1.5, "2023-11-14"},
		{"0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", max, maxAmt, maxAmt * 0.5, "2023-11-14"},
		{"0xcccccccccccccccccccccccccccccccccccccccc", "7", 7, nil, "2023-11-15"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %+v", got)
	}
	for i, w := range want {
		r := got[i]
		usdOK := (w.usd == nil && !r.USD.Valid) || (w.usd != nil && r.USD.Valid && r.USD.Float64 == w.usd.(float64))
		if r.Token != w.token || r.Raw != w.raw || r.Amount != w.amount || !usdOK || r.Date != w.date {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "onchain", "transfers", "chain=ethereum", "*", "transfers.parquet"))
	before := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	sum, err = ingestETL(t, root, "ethereum", Options{}, []string{prices}, etl)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Written != 0 || sum.Deduplicated != 3 {
		t.Fatalf("re-ingest: %s", sum.String())
	}
	if again := readTransfers(t, root, "ethereum"); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("re-ingest changed rows:\n%v\n%v", again, got)
	}
	// Tokens: the metadata of the file, one row per token.
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var n int
	var dec int
	if err := db.QueryRow("SELECT count(*), sum(decimals) FROM read_parquet("+lake.QuoteString(filepath.Join(root, "onchain/tokens/tokens.parquet"))+")").Scan(&n, &dec); err != nil || n != 3 || dec != 30 {
		t.Fatalf("tokens: %d rows, decimals sum %d, %v", n, dec, err)
	}
	if err := lake.Check(root); err != nil {
		t.Fatalf("the ingested directory is not a lake: %v", err)
	}
}

// TestETLBadInputChangesNothing: a malformed row fails the run with FILE:LINE and
// leaves the lake as it was; --skip-bad passes over it, counted.
func TestETLBadInputChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, row, reason string
		line              int
	}{
		{"short address", "0xaaaa,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,1,0x00000000000000000000000000000000000000000000000000000000000000b1,0,100", "token_address: bad address", 5},
		{"negative value", "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,-5,0x00000000000000000000000000000000000000000000000000000000000000b1,0,100", "bad value", 5},
		{"too many fields", "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,0x1,0x2,1,0xb1,0,100,extra", "wrong number of fields", 5},
		{"value over 2^256", "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,115792089237316195423570985008687907853269984665640564039457584007913129639936,0x00000000000000000000000000000000000000000000000000000000000000b1,0,100", "does not fit 256 bits", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			etl, _ := fixture(t)
			root := t.TempDir()
			if _, err := ingestETL(t, root, "ethereum", Options{}, nil, etl); err != nil {
				t.Fatal(err)
			}
			before := readTransfers(t, root, "ethereum")
			bad := filepath.Join(t.TempDir(), "token_transfers.csv")
			writeFile(t, bad, fixTransfers+tc.row+"\n")
			_, err := ingestETL(t, root, "ethereum", Options{}, nil, bad, filepath.Join(etl, "blocks.csv"), filepath.Join(etl, "tokens.csv"))
			var le *ingest.LineError
			if !errors.As(err, &le) || le.File != bad || le.Line != tc.line || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %v, want %s:%d: %s", err, bad, tc.line, tc.reason)
			}
			if after := readTransfers(t, root, "ethereum"); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatal("a failed ingest changed the lake")
			}
			sum, err := ingestETL(t, root, "ethereum", Options{SkipBad: true}, nil, bad, filepath.Join(etl, "blocks.csv"), filepath.Join(etl, "tokens.csv"))
			if err != nil || sum.Rejected != 1 || sum.Deduplicated != 3 {
				t.Fatalf("skip-bad: %v %s", err, sum.String())
			}
		})
	}
}

// TestETLMissingBlockTimestampNamesRange: transfers whose blocks are not in blocks.csv
// reject the run with the block range to export; nothing is written.
func TestETLMissingBlockTimestampNamesRange(t *testing.T) {
	etl, _ := fixture(t)
	writeFile(t, filepath.Join(etl, "blocks.csv"), "number,timestamp\n101,1700003700\n")
	root := t.TempDir()
	_, err := ingestETL(t, root, "ethereum", Options{}, nil, etl)
	if err == nil || !strings.Contains(err.Error(), "2 transfers are in blocks without a timestamp (blocks 100 to 102)") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, lake.MarkerFile)); !os.IsNotExist(err) {
		t.Fatal("a rejected first ingest made a lake")
	}
	if rows := readTransfers(t, root, "ethereum"); len(rows) != 0 {
		t.Fatalf("rows written: %v", rows)
	}
	// Unknown token metadata without --rpc: named.
	etl2, _ := fixture(t)
	writeFile(t, filepath.Join(etl2, "tokens.csv"), "address,symbol,name,decimals\n0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,USDC,USD Coin,6\n")
	if _, err := ingestETL(t, root, "ethereum", Options{}, nil, etl2); err == nil || !strings.Contains(err.Error(), "no decimals for token 0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 0xcccccccccccccccccccccccccccccccccccccccc") {
		t.Fatalf("error %v", err)
	}
}

// TestETLNativeTransactions: transactions.csv values become native-coin transfers (the
// zero token address, log_index -1, 18 decimals, priced like any token), with their
// block timestamps; failed and zero-value transactions are no transfer; a contract
// creation pays the created contract.
func TestETLNativeTransactions(t *testing.T) {
	d := t.TempDir()
	writeFile(t, filepath.Join(d, "transactions.csv"), `hash,nonce,block_hash,block_number,transaction_index,from_address,to_address,value,gas,gas_price,input,block_timestamp,receipt_status,receipt_contract_address
0x00000000000000000000000000000000000000000000000000000000000000f1,0,0x01,500,0,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,2500000000000000000,21000,1,0x,1700000000,1,
0x00000000000000000000000000000000000000000000000000000000000000f2,1,0x01,500,1,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,0,21000,1,0x,1700000000,1,
0x00000000000000000000000000000000000000000000000000000000000000f3,2,0x01,500,2,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,5,21000,1,0x,1700000000,0,
0x00000000000000000000000000000000000000000000000000000000000000f4,3,0x02,501,0,0x1111111111111111111111111111111111111111,,7,21000,1,0x60,1700000012,1,0x4444444444444444444444444444444444444444
`)
	prices := writeFile(t, filepath.Join(d, "prices.json"), `[
  {"chain": "ethereum", "token_address": "`+ZeroAddress+`", "hour": "2023-11-14T22:00:00Z", "price_usd": 2000}
]`)
	root := t.TempDir()
	sum, err := ingestETL(t, root, "ethereum", Options{}, []string{prices}, filepath.Join(d, "transactions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := readTransfers(t, root, "ethereum")
	if len(rows) != 2 || sum.Written != 2 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Token != ZeroAddress || r.LogIndex != -1 || r.Raw != "2500000000000000000" || r.Amount != 2.5 || !r.USD.Valid || r.USD.Float64 != 5000 {
		t.Errorf("native transfer %+v", r)
	}
	if rows[1].To != "0x4444444444444444444444444444444444444444" || rows[1].Raw != "7" {
		t.Errorf("contract creation %+v", rows[1])
	}
	if tok := readTokens(t, root)[ZeroAddress]; tok.Symbol != "ETH" || tok.Decimals != 18 {
		t.Errorf("native token row %+v", tok)
	}
}

// TestSmallFiles: prices (CSV, JSON array, JSON lines), label sources, labels and ENS
// names load with their columns checked; labels merge by (address, source) and an
// older observation never replaces a newer one; a bad row is FILE:LINE.
func TestSmallFiles(t *testing.T) {
	d := t.TempDir()
	root := t.TempDir()
	load := func(fn func(*Loader, string, Options) error, path string) (ingest.Summary, error) {
		t.Helper()
		l, err := NewLoader(context.Background(), root, "ethereum")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := fn(l, path, Options{}); err != nil {
			return l.Sum, err
		}
		return l.Sum, l.Commit(context.Background(), time.Now())
	}
	a1 := "0x1111111111111111111111111111111111111111"
	for _, tc := range []struct {
		name, file, content string
		fn                  func(*Loader, string, Options) error
		err                 string
	}{
		{"prices csv", "p.csv", "chain,token_address,hour,price_usd\nbsc,0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,2026-01-01 10:30:00,1.5\n", LoadPrices, ""},
		{"prices json lines", "p.jsonl", `{"chain":"base","token_address":"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","hour":1767261600,"price_usd":"2.5"}` + "\n", LoadPrices, ""},
		{"prices bad chain", "p2.csv", "chain,token_address,hour,price_usd\nsolana,0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,2026-01-01T00:00:00Z,1\n", LoadPrices, "p2.csv:2: chain \"solana\" not supported"},
		{"prices bad json", "p3.json", "[\n{\"chain\":\"ethereum\",\"token_address\":\"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"hour\":\"2026-01-01T00:00:00Z\",\"price_usd\":-1}\n]", LoadPrices, "p3.json:2: bad price_usd"},
		{"sources", "s.csv", "source,name,kind,priority,url\nmanual,Manual,manual,1,https://example.org\n", LoadLabelSources, ""},
		{"labels", "l.csv", "address,entity,wallet_type,confidence,risk_flag,source,observed_at\n" + a1 + ",Old Name,cex,high,,manual,2026-02-01T00:00:00Z\n", LoadLabels, ""},
		{"labels newer", "l2.csv", "address,entity,wallet_type,confidence,risk_flag,source,observed_at\n" + a1 + ",New Name,cex,high,,manual,2026-03-01T00:00:00Z\n", LoadLabels, ""},
		{"labels older ignored", "l3.csv", "address,entity,wallet_type,confidence,risk_flag,source,observed_at\n" + a1 + ",Stale Name,cex,high,,manual,2026-01-01T00:00:00Z\n", LoadLabels, ""},
		{"labels bad type", "l4.csv", "address,entity,wallet_type,confidence,risk_flag,source,observed_at\n" + a1 + ",X,casino,high,,manual,2026-01-01T00:00:00Z\n", LoadLabels, "l4.csv:2: wallet_type \"casino\""},
		{"labels missing column", "l5.csv", "address,entity\n" + a1 + ",X\n", LoadLabels, "l5.csv:1: header lacks column wallet_type"},
		{"ens", "e.csv", "address,name,is_primary,registered_at\n" + a1 + ",Alice.eth,true,2024-01-01T00:00:00Z\n", LoadENS, ""},
		{"ens bad", "e2.csv", "address,name,is_primary,registered_at\n" + a1 + ",alice.eth,maybe,2024-01-01T00:00:00Z\n", LoadENS, "e2.csv:2: bad is_primary"},
	} {
		p := writeFile(t, filepath.Join(d, tc.file), tc.content)
		_, err := load(tc.fn, p)
		if (tc.err == "" && err != nil) || (tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err))) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var s string
	q := func(query string) string {
		t.Helper()
		if err := db.QueryRow(query).Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return s
	}
	f := func(rel string) string { return lake.QuoteString(filepath.Join(root, rel)) }
	if got := q("SELECT string_agg(entity, ',') FROM read_parquet(" + f("onchain/labels/labels.parquet") + ")"); got != "New Name" {
		t.Errorf("labels: %q", got)
	}
	if got := q("SELECT string_agg(hour::VARCHAR || ' ' || price_usd, ',') FROM read_parquet(" + f("onchain/prices/chain=bsc/prices.parquet") + ")"); got != "2026-01-01 10:00:00 1.5" {
		t.Errorf("bsc prices: %q", got)
	}
	if got := q("SELECT string_agg(hour::VARCHAR || ' ' || price_usd, ',') FROM read_parquet(" + f("onchain/prices/chain=base/prices.parquet") + ")"); got != "2026-01-01 10:00:00 2.5" {
		t.Errorf("base prices: %q", got)
	}
	if got := q("SELECT string_agg(name || ' ' || is_primary, ',') FROM read_parquet(" + f("onchain/ens/ens.parquet") + ")"); got != "alice.eth true" {
		t.Errorf("ens: %q", got)
	}
	if got := q("SELECT string_agg(source || ' ' || priority || ' ' || url, ',') FROM read_parquet(" + f("onchain/label_sources/label_sources.parquet") + ")"); got != "manual 1 https://example.org" {
		t.Errorf("sources: %q", got)
	}
}

// TestETLTraces: traces.csv value transfers are native transfers numbered -1, -2, ...
// per transaction; the top-level call and the transaction's own value (transactions.csv)
// are one row; delegatecalls, failed traces and zero values move nothing; rewards are
// skipped and counted.
func TestETLTraces(t *testing.T) {
	d := t.TempDir()
	txA := "0x00000000000000000000000000000000000000000000000000000000000000aa"
	a, b, c := "0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222", "0x3333333333333333333333333333333333333333"
	writeFile(t, filepath.Join(d, "traces.csv"), "block_number,transaction_hash,transaction_index,from_address,to_address,value,input,output,trace_type,call_type,reward_type,gas,gas_used,subtraces,trace_address,error,status,trace_id\n"+
		"700,"+txA+",0,"+a+","+b+",5,0x,0x,call,call,,1,1,2,,,1,t1\n"+
		"700,"+txA+",0,"+b+","+c+",3,0x,0x,call,call,,1,1,0,0,,1,t2\n"+
		"700,"+txA+",0,"+b+","+c+",9,0x,0x,call,delegatecall,,1,1,0,1,,1,t3\n"+
		"700,"+txA+",0,"+b+","+c+",4,0x,0x,call,call,,1,1,0,2,reverted,0,t4\n"+
		"700,,,,"+c+",2000000000000000000,,,reward,,block,,,0,,,1,t5\n")
	writeFile(t, filepath.Join(d, "transactions.csv"), "hash,nonce,block_hash,block_number,transaction_index,from_address,to_address,value,gas,gas_price,input,block_timestamp,receipt_status\n"+
		txA+",0,0x01,700,0,"+a+","+b+",5,1,1,0x,1700000000,1\n")
	root := t.TempDir()
	sum, err := ingestETL(t, root, "ethereum", Options{}, nil, d)
	if err != nil {
		t.Fatal(err)
	}
	rows := readTransfers(t, root, "ethereum")
	got := []string{}
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s>%s %s", r.LogIndex, r.From[:4], r.To[:4], r.Raw))
	}
	want := []string{"-2 0x22>0x33 3", "-1 0x11>0x22 5"}
	if fmt.Sprint(got) != fmt.Sprint(want) || sum.Written != 2 || sum.Skipped["trace without a transaction (reward)"] != 1 {
		t.Fatalf("rows %v (want %v); %s", got, want, sum.String())
	}
}

// TestETLTransfersWithBlockTimestamp: a token_transfers export that carries
// block_timestamp (BigQuery's crypto_ethereum.token_transfers) needs no blocks.csv.
func TestETLTransfersWithBlockTimestamp(t *testing.T) {
	d := t.TempDir()
	writeFile(t, filepath.Join(d, "tt.csv"), "token_address,from_address,to_address,value,transaction_hash,log_index,block_number,block_timestamp,block_hash\n"+
		"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,0x1111111111111111111111111111111111111111,0x2222222222222222222222222222222222222222,5,0x00000000000000000000000000000000000000000000000000000000000000c1,0,900,2024-03-01 10:20:30 UTC,0x01\n")
	writeFile(t, filepath.Join(d, "tokens.csv"), "address,symbol,name,decimals\n0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,A,A,0\n")
	root := t.TempDir()
	if _, err := ingestETL(t, root, "ethereum", Options{}, nil, d); err != nil {
		t.Fatal(err)
	}
	rows := readTransfers(t, root, "ethereum")
	if len(rows) != 1 || !rows[0].Time.Equal(time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)) || rows[0].Date != "2024-03-01" {
		t.Fatalf("rows %+v", rows)
	}
}

// TestFindETLByHeader: exports are recognised by their header whatever their names
// and compression (a gzip file in a folder); a file named on the command line that is
// no export is refused as FILE:1; in a folder such files are passed over.
func TestFindETLByHeader(t *testing.T) {
	d := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(fixTransfers))
	zw.Close()
	writeFile(t, filepath.Join(d, "export", "start_block=100", "part-0.csv.gz"), gz.String())
	writeFile(t, filepath.Join(d, "export", "b.csv"), fixBlocks)
	writeFile(t, filepath.Join(d, "export", "t.csv"), fixTokens)
	other := writeFile(t, filepath.Join(d, "export", "notes.csv"), "a,b\n1,2\n")
	files, err := FindETL([]string{filepath.Join(d, "export")})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range files {
		kinds[filepath.Base(f.Path)] = f.Kind
	}
	if fmt.Sprint(kinds) != fmt.Sprint(map[string]string{"b.csv": KindBlocks, "part-0.csv.gz": KindTransfers, "t.csv": KindTokens}) {
		t.Fatalf("kinds %v", kinds)
	}
	if _, err := FindETL([]string{other}); err == nil || !strings.HasPrefix(err.Error(), other+":1: not an Ethereum-ETL") {
		t.Fatalf("error %v", err)
	}
	root := t.TempDir()
	sum, err := ingestETL(t, root, "ethereum", Options{}, nil, filepath.Join(d, "export"))
	if err != nil || sum.Written != 3 {
		t.Fatalf("%v %s", err, sum.String())
	}
}

// TestConcurrentCommitsKeepBothRuns: two ingests committing into the same partition
// at once (an ingest beside a follower) both end up in the lake: the lake's on-chain
// write lock serialises the read-merge-write of each partition.
func TestConcurrentCommitsKeepBothRuns(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	const runs, per = 4, 50
	errs := make(chan error, runs)
	for r := 0; r < runs; r++ {
		go func(r int) {
			l, err := NewLoader(ctx, root, "ethereum")
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			l.AddToken(Token{Address: hexAddr('c', 1), Symbol: "T", Name: "T", Decimals: 0})
			l.SetBlockTime(100, 1700000000)
			for i := 0; i < per; i++ {
				tr := Transfer{Block: 100, TxHash: fmt.Sprintf("0x%062x%02x", i, r), LogIndex: int32(i), Token: hexAddr('c', 1),
					From: hexAddr('a', 1), To: hexAddr('a', 2), Value: Value{small: uint64(i)}}
				if err := l.Transfer(ctx, tr); err != nil {
					errs <- err
					return
				}
			}
			errs <- l.Commit(ctx, time.Now())
		}(r)
	}
	for r := 0; r < runs; r++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if rows := readTransfers(t, root, "ethereum"); len(rows) != runs*per {
		t.Fatalf("%d rows, want %d", len(rows), runs*per)
	}
}

// TestETLFromStdinConcatenated: one concatenated export on stdin (transfers first,
// then tokens and blocks; plain and gzip) stores the same transfers as the three
// files; a malformed row is reported as -:LINE with its line in the stream, and
// nothing is written; a stream that does not begin with an export header is refused.
func TestETLFromStdinConcatenated(t *testing.T) {
	etl, _ := fixture(t)
	want := t.TempDir()
	if _, err := ingestETL(t, want, "ethereum", Options{}, nil, etl); err != nil {
		t.Fatal(err)
	}
	stream := fixTransfers + fixTokens + fixBlocks
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(stream))
	zw.Close()
	load := func(root string, in []byte) (ingest.Summary, error) {
		t.Helper()
		ctx := context.Background()
		tmp := filepath.Join(root, ".tmp", "ingest")
		files, err := SplitETL(bytes.NewReader(in), tmp)
		if err != nil {
			return ingest.Summary{}, err
		}
		defer RemoveETL(files)
		if len(files) != 3 {
			t.Fatalf("%d sections, want 3: %+v", len(files), files)
		}
		l, err := NewLoader(ctx, root, "ethereum")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := LoadETL(ctx, l, files, Options{}); err != nil {
			return l.Sum, err
		}
		return l.Sum, l.Commit(ctx, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	for name, in := range map[string][]byte{"plain": []byte(stream), "gzip": gz.Bytes()} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			sum, err := load(root, in)
			if err != nil || sum.Written != 3 {
				t.Fatalf("%v %s", err, sum.String())
			}
			if got := readTransfers(t, root, "ethereum"); fmt.Sprint(got) != fmt.Sprint(readTransfers(t, want, "ethereum")) {
				t.Fatalf("stdin stored\n%v\nfiles stored\n%v", got, readTransfers(t, want, "ethereum"))
			}
			if left, _ := filepath.Glob(filepath.Join(root, ".tmp", "ingest", "etl-stdin-*")); len(left) != 0 {
				t.Fatalf("section files left behind: %v", left)
			}
		})
	}
	// A bad row in the blocks section: its line counted from the start of the stream.
	root := t.TempDir()
	bad := fixTransfers + fixTokens + fixBlocks + "notanumber,1700000000\n"
	line := strings.Count(bad, "\n")
	_, err := load(root, []byte(bad))
	var le *ingest.LineError
	if !errors.As(err, &le) || le.File != "-" || le.Line != line {
		t.Fatalf("error %v, want -:%d", err, line)
	}
	if got := readTransfers(t, root, "ethereum"); len(got) != 0 {
		t.Fatalf("a failed ingest wrote %v", got)
	}
	if _, err := SplitETL(strings.NewReader("a,b\n1,2\n"+fixBlocks), t.TempDir()); err == nil || !strings.HasPrefix(err.Error(), "-:1: not an Ethereum-ETL") {
		t.Fatalf("a stream without a header: %v", err)
	}
}
