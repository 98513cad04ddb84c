package onchain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mdq/ingest"
	"mdq/internal/duckconn"
	"mdq/lake"
)

var (
	walletTypes = map[string]bool{"cex": true, "dex": true, "defi": true, "market_maker": true, "bridge": true, "fund": true, "individual": true}
	confidences = map[string]bool{"high": true, "medium": true, "low": true}
	riskFlags   = map[string]bool{"": true, "sanctioned": true, "exploit": true, "mixer": true}
	sourceKinds = map[string]bool{"manual": true, "exchange_disclosure": true, "heuristic": true, "community": true}
)

// LoadLabels reads a CSV of onchain_labels rows (address, entity, wallet_type,
// confidence, risk_flag, source, observed_at) into the loader. Rows merge by
// (address, source); a stored row observed later than the file's row is kept (an
// older assertion never replaces a newer one).
func LoadLabels(l *Loader, path string, opt Options) error {
	newer, err := l.storedObserved()
	if err != nil {
		return err
	}
	return smallCSV(l, path, opt, []string{"address", "entity", "wallet_type", "confidence", "risk_flag", "source", "observed_at"}, func(col func(string) string) error {
		addr, err := Address(col("address"))
		if err != nil {
			return err
		}
		wt, conf, risk, src := col("wallet_type"), col("confidence"), col("risk_flag"), col("source")
		switch {
		case col("entity") == "":
			return fmt.Errorf("empty entity")
		case !walletTypes[wt]:
			return fmt.Errorf("wallet_type %q (want cex, dex, defi, market_maker, bridge, fund or individual)", wt)
		case !confidences[conf]:
			return fmt.Errorf("confidence %q (want high, medium or low)", conf)
		case !riskFlags[risk]:
			return fmt.Errorf("risk_flag %q (want empty, sanctioned, exploit or mixer)", risk)
		case src == "":
			return fmt.Errorf("empty source")
		}
		obs, err := parseTime(col("observed_at"))
		if err != nil {
			return fmt.Errorf("observed_at: %w", err)
		}
		if old, ok := newer[addr+"\x00"+src]; ok && old.After(obs) {
			l.Sum.Skip("label older than the stored one")
			return nil
		}
		return l.stage.Append(lake.OnchainLabels, nil, addr, col("entity"), wt, conf, risk, src, obs)
	})
}

// storedObserved maps address+source to the observed_at of the stored labels.
func (l *Loader) storedObserved() (map[string]time.Time, error) {
	out := map[string]time.Time{}
	f := filepath.Join(l.Root, filepath.FromSlash(lake.OnchainLabels.Prefix), lake.OnchainLabels.File)
	if _, err := os.Stat(f); err != nil {
		return out, nil
	}
	db, err := duckconn.Open("")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), "SELECT address, source, observed_at FROM read_parquet("+lake.QuoteString(f)+")")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, s string
		var t time.Time
		if err := rows.Scan(&a, &s, &t); err != nil {
			return nil, err
		}
		out[a+"\x00"+s] = t
	}
	return out, rows.Err()
}

// LoadLabelSources reads a CSV of onchain_label_sources rows (source, name, kind,
// priority, url), merged by source.
func LoadLabelSources(l *Loader, path string, opt Options) error {
	return smallCSV(l, path, opt, []string{"source", "name", "kind", "priority", "url"}, func(col func(string) string) error {
		if col("source") == "" {
			return fmt.Errorf("empty source")
		}
		if !sourceKinds[col("kind")] {
			return fmt.Errorf("kind %q (want manual, exchange_disclosure, heuristic or community)", col("kind"))
		}
		p, err := strconv.Atoi(col("priority"))
		if err != nil || p < 1 {
			return fmt.Errorf("bad priority %q (want an integer from 1)", col("priority"))
		}
		return l.stage.Append(lake.OnchainLabelSources, nil, col("source"), col("name"), col("kind"), int32(p), col("url"))
	})
}

// LoadENS reads a CSV of onchain_ens rows (address, name, is_primary, registered_at),
// merged by (address, name).
func LoadENS(l *Loader, path string, opt Options) error {
	return smallCSV(l, path, opt, []string{"address", "name", "is_primary", "registered_at"}, func(col func(string) string) error {
		addr, err := Address(col("address"))
		if err != nil {
			return err
		}
		name := strings.ToLower(col("name"))
		if name == "" || !strings.Contains(name, ".") {
			return fmt.Errorf("bad ENS name %q", col("name"))
		}
		prim, err := strconv.ParseBool(col("is_primary"))
		if err != nil {
			return fmt.Errorf("bad is_primary %q (want true or false)", col("is_primary"))
		}
		reg, err := parseTime(col("registered_at"))
		if err != nil {
			return fmt.Errorf("registered_at: %w", err)
		}
		return l.stage.Append(lake.OnchainENS, nil, addr, name, prim, reg)
	})
}

func smallCSV(l *Loader, path string, opt Options, cols []string, fn func(col func(string) string) error) error {
	f, err := ingest.Open(path, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	return csvFile2(path, f, opt, &l.Sum, cols, fn)
}
