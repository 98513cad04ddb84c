package onchain

import (
	"bufio"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mdq/ingest"
	"mdq/lake"
)

// OpeningPath is where the opening balances of chain are kept: the balances snapshot
// of the chain's first ingested block, which PublishBalances adds to the transfers.
func OpeningPath(root, chain string) string {
	return filepath.Join(root, ".ingest", "onchain-opening-"+chain+".csv")
}

// LoadOpening reads a balances snapshot for the starting block (CSV: address,
// token_address, balance_raw as a decimal integer) and merges it into the chain's
// stored opening balances (a pair given again replaces the stored one). It writes
// only when the whole file is valid; a bad row is FILE:LINE.
func LoadOpening(root, chain, path string, opt Options) (int64, error) {
	unlock, err := lockLake(root)
	if err != nil {
		return 0, err
	}
	defer unlock()
	open, err := readOpening(root, chain)
	if err != nil {
		return 0, err
	}
	f, err := ingest.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var sum ingest.Summary
	var n int64
	err = csvFile2(path, f, opt, &sum, []string{"address", "token_address", "balance_raw"}, func(col func(string) string) error {
		a, err := Address(col("address"))
		if err != nil {
			return err
		}
		tk, err := Address(col("token_address"))
		if err != nil {
			return fmt.Errorf("token_address: %w", err)
		}
		v, err := ParseValue(col("balance_raw"))
		if err != nil {
			return err
		}
		open[a+","+tk] = v.Big()
		n++
		return nil
	})
	if err != nil {
		return 0, err
	}
	keys := make([]string, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("address,token_address,balance_raw\n")
	for _, k := range keys {
		b.WriteString(k + "," + open[k].String() + "\n")
	}
	return n, lake.WriteFileAtomic(OpeningPath(root, chain), []byte(b.String()))
}

// readOpening returns the stored opening balances, keyed "address,token".
func readOpening(root, chain string) (map[string]*big.Int, error) {
	out := map[string]*big.Int{}
	f, err := os.Open(OpeningPath(root, chain))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		parts := strings.Split(sc.Text(), ",")
		if len(parts) != 3 {
			continue
		}
		v, ok := new(big.Int).SetString(parts[2], 10)
		if !ok {
			return nil, fmt.Errorf("%s: bad balance %q", OpeningPath(root, chain), parts[2])
		}
		out[parts[0]+","+parts[1]] = v
	}
	return out, sc.Err()
}
