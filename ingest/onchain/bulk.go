package onchain

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"mdq/ingest"
	"mdq/lake"
)

// bulkFile collects staged transfers as CSV lines (seq, block, unix time, tx, log
// index, token, from, to, raw value, amount, usd or empty, date); stage hands the file
// to DuckDB. Amounts and USD are written in the shortest form that reads back to the
// same double, so nothing is rounded on the way.
type bulkFile struct {
	path    string
	f       *os.File
	w       *bufio.Writer
	buf     []byte
	day     int64
	date    string
	n       int64
	started bool
}

func (b *bulkFile) add(root string, seq int64, tr Transfer, bt int64, amt float64, usd any) error {
	if b.f == nil {
		dir := filepath.Join(root, ".tmp", "ingest")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err := os.CreateTemp(dir, "onchain-transfers-*.csv")
		if err != nil {
			return err
		}
		b.f, b.path, b.w = f, f.Name(), bufio.NewWriterSize(f, 1<<20)
	}
	if d := floorDiv(bt, 86400); !b.started || d != b.day {
		b.day, b.date, b.started = d, time.Unix(bt, 0).UTC().Format("2006-01-02"), true
	}
	x := b.buf[:0]
	x = strconv.AppendInt(x, seq, 10)
	x = append(x, ',')
	x = strconv.AppendUint(x, tr.Block, 10)
	x = append(x, ',')
	x = strconv.AppendInt(x, bt, 10)
	x = append(x, ',')
	x = append(x, tr.TxHash...)
	x = append(x, ',')
	x = strconv.AppendInt(x, int64(tr.LogIndex), 10)
	x = append(x, ',')
	x = append(x, tr.Token...)
	x = append(x, ',')
	x = append(x, tr.From...)
	x = append(x, ',')
	x = append(x, tr.To...)
	x = append(x, ',')
	if tr.Value.big != nil {
		x = tr.Value.big.Append(x, 10)
	} else {
		x = strconv.AppendUint(x, tr.Value.small, 10)
	}
	x = append(x, ',')
	x = strconv.AppendFloat(x, amt, 'g', -1, 64)
	x = append(x, ',')
	if u, ok := usd.(float64); ok {
		x = strconv.AppendFloat(x, u, 'g', -1, 64)
	}
	x = append(x, ',')
	x = append(x, b.date...)
	x = append(x, '\n')
	b.buf = x
	b.n++
	_, err := b.w.Write(x)
	return err
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// stage hands the collected transfers to the stage in one INSERT and removes the file.
func (b *bulkFile) stage(ctx context.Context, st *ingest.Stage, chain string) error {
	if b.f == nil {
		return nil
	}
	defer b.remove()
	if err := b.w.Flush(); err != nil {
		return err
	}
	if err := b.f.Close(); err != nil {
		return err
	}
	b.f = nil
	// The path is generated here under the operator's lake directory, quoted.
	q := `SELECT block_number, make_timestamp(block_time * 1000000) AS block_time, tx_hash, log_index, token_address,
	from_address, to_address, value_raw, amount, usd, ?::VARCHAR AS _part_chain, date AS _part_date, seq AS _seq
FROM read_csv(` + lake.QuoteString(b.path) + `, header = false, delim = ',', quote = '"', nullstr = '', auto_detect = false,
	columns = {'seq': 'BIGINT', 'block_number': 'BIGINT', 'block_time': 'BIGINT', 'tx_hash': 'VARCHAR', 'log_index': 'INTEGER',
		'token_address': 'VARCHAR', 'from_address': 'VARCHAR', 'to_address': 'VARCHAR', 'value_raw': 'VARCHAR',
		'amount': 'DOUBLE', 'usd': 'DOUBLE', 'date': 'VARCHAR'})`
	_, err := st.InsertQuery(ctx, lake.OnchainTransfers, q, chain)
	return err
}

func (b *bulkFile) remove() {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	if b.path != "" {
		os.Remove(b.path)
		b.path = ""
	}
}
