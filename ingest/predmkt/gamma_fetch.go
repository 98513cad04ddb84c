package predmkt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mdq/internal/duckconn"
	"mdq/lake"
)

// gammaPage and gammaMaxPages bound the listing of active markets.
const (
	gammaPage     = 500
	gammaMaxPages = 200
)

// FetchActive lists the active, open markets of a Gamma API (GET <base>/markets,
// paged), keeps the responses as one Gamma file in dir (so the recorder ingests the
// metadata before the tape, and the capture holds it), and returns that file and the
// outcome tokens to subscribe to.
func FetchActive(ctx context.Context, base, dir string) (file string, tokens []string, err error) {
	client := &http.Client{Timeout: 60 * time.Second}
	var all []json.RawMessage
	for page := 0; page < gammaMaxPages; page++ {
		u, err := url.Parse(strings.TrimRight(base, "/") + "/markets")
		if err != nil {
			return "", nil, err
		}
		q := u.Query()
		q.Set("active", "true")
		q.Set("closed", "false")
		q.Set("limit", strconv.Itoa(gammaPage))
		q.Set("offset", strconv.Itoa(page*gammaPage))
		u.RawQuery = q.Encode()
		req, _ := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
		resp.Body.Close()
		if err != nil {
			return "", nil, err
		}
		if resp.StatusCode != 200 {
			return "", nil, fmt.Errorf("gamma %s: status %d", u.Redacted(), resp.StatusCode)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil {
			return "", nil, fmt.Errorf("gamma %s: %v", u.Redacted(), err)
		}
		all = append(all, items...)
		if len(items) < gammaPage {
			break
		}
	}
	m := &Meta{}
	for _, it := range all {
		mark := m.mark()
		if err := m.Gamma(it); err != nil {
			m.reset(mark) // a market mdq cannot read is not subscribed to
		}
	}
	for _, t := range m.Tokens {
		tokens = append(tokens, t.ID)
	}
	b, _ := json.Marshal(all)
	file = filepath.Join(dir, fmt.Sprintf("gamma-%d.json", time.Now().UnixMilli()))
	if err := lake.WriteFileAtomic(file, b); err != nil {
		return "", nil, err
	}
	return file, tokens, nil
}

// TokensOf resolves ids for --markets: decimal token ids are kept; a condition id
// (0x...) stands for its outcome tokens, looked up in the lake's predmkt_tokens.
func TokensOf(ctx context.Context, root string, ids []string) ([]string, error) {
	var out, conds []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if strings.HasPrefix(id, "0x") || strings.HasPrefix(id, "0X") {
			c, err := checkCond(id)
			if err != nil {
				return nil, err
			}
			conds = append(conds, c)
			continue
		}
		if err := checkToken(id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	if len(conds) == 0 {
		return out, nil
	}
	tf := filepath.Join(root, filepath.FromSlash(lake.PredmktTokens.Prefix), lake.PredmktTokens.File)
	if _, err := os.Stat(tf); err != nil {
		return nil, fmt.Errorf("market %s: the lake has no predmkt_tokens yet (ingest its Gamma metadata, or pass token ids)", conds[0])
	}
	db, err := duckconn.Open("")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, c := range conds {
		rows, err := db.QueryContext(ctx, "SELECT token_id FROM read_parquet(?) WHERE condition_id = ? ORDER BY outcome_index", tf, c)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, t)
			n++
		}
		rows.Close()
		if n == 0 {
			return nil, fmt.Errorf("market %s is not in the lake's predmkt_tokens", c)
		}
	}
	return out, nil
}
