package query

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var perpdexHourLabelsSQL = sqlfiles.MustRead("perpdex/cohorts_hour_labels.sql")

// The point-in-time labels of a liquidations page. A page of 100 liquidations spans
// about 16 hours of the large lake and some twenty wallets an hour, spread over every
// part of each hour's sorted wallets, so no row-group statistics narrow a lookup to
// them: joined in liquidations.sql the labels cost most of the route's 60 to 100 ms.
// A wallet's label of an hour never changes once its date's partition is written, so
// each (hour, wallet) answer, found or not, is kept in a byte-bounded LRU
// (cache_budget.go) under the partition's version: a rewritten partition (the newest
// date, as hours complete) has a new size or time and so new keys. The pages asked
// for most (the newest) then cost no label read at all.

// hourLabelsCache is the registered name (and share) of the cache.
const hourLabelsCache = "perpdex_hour_labels"

// hourLabelKey names one wallet's label of one hour in one version of its date's
// partition.
type hourLabelKey struct {
	file      string
	size, mod int64
	hour      int64 // unix seconds
	wallet    string
}

// hourLabel is a wallet's label of an hour; ok is false when the hour has none for it.
type hourLabel struct {
	size, pnl sql.NullString
	ok        bool
}

// hourLabelBytes is what one entry costs: the key's strings (the file name is shared
// by every entry of a partition), the label texts and the LRU's element and map slot.
func hourLabelBytes(k hourLabelKey, l hourLabel) int64 {
	return int64(len(k.wallet)+len(l.size.String)+len(l.pnl.String)) + 200
}

func (q *Queries) hourLabelsLRU() *byteLRU[hourLabelKey, hourLabel] {
	return storeLRU[hourLabelKey, hourLabel](q, hourLabelsCache)
}

// hourWallet is a wallet in an hour (UTC, truncated to the hour).
type hourWallet struct {
	hour   time.Time
	wallet string
}

// perpdexHourLabels returns the published point-in-time label of each (hour, wallet):
// a pair whose date has no partition, or whose hour has no row for the wallet, maps
// to a label with ok false. Pairs missing from the cache are read one date at a time.
func (q *Queries) perpdexHourLabels(ctx context.Context, pairs []hourWallet) (map[hourWallet]hourLabel, error) {
	const op = "perpdex liquidations"
	lru := q.hourLabelsLRU()
	out := make(map[hourWallet]hourLabel, len(pairs))
	byDate := map[string][]hourWallet{}
	for _, p := range pairs {
		d := p.hour.Format(time.DateOnly)
		byDate[d] = append(byDate[d], p)
	}
	for d, ps := range byDate {
		rel, err := lake.PerpdexCohortsHourly.Path(d)
		if err != nil {
			return nil, &StoreError{Op: op, Err: err}
		}
		file := filepath.Join(q.dir, filepath.FromSlash(rel))
		fi, err := os.Stat(file)
		if err != nil {
			if os.IsNotExist(err) {
				continue // no labels published for the date
			}
			return nil, &StoreError{Op: op, Err: err}
		}
		key := func(p hourWallet) hourLabelKey {
			return hourLabelKey{file, fi.Size(), fi.ModTime().UnixNano(), p.hour.Unix(), p.wallet}
		}
		var miss []hourWallet
		for _, p := range ps {
			if l, ok := lru.get(key(p)); ok {
				out[p] = l
			} else {
				miss = append(miss, p)
			}
		}
		if len(miss) == 0 {
			continue
		}
		lo, hi := miss[0].hour, miss[0].hour
		var wallets []string
		for _, p := range miss {
			lo, hi = minTime(lo, p.hour), maxTime(hi, p.hour)
			wallets = append(wallets, p.wallet)
		}
		found, err := q.readHourLabels(ctx, file, lo, hi, wallets)
		if err != nil {
			return nil, err
		}
		// Every pair asked is kept, those without a label too (an answer as well).
		for _, p := range miss {
			l := found[p]
			lru.put(key(p), l, hourLabelBytes(key(p), l))
			out[p] = l
		}
	}
	return out, nil
}

// readHourLabels reads the labels of the wallets in the hours lo..hi of one partition
// file.
func (q *Queries) readHourLabels(ctx context.Context, file string, lo, hi time.Time, wallets []string) (map[hourWallet]hourLabel, error) {
	const op = "perpdex liquidations"
	rows, err := q.db.QueryContext(ctx, perpdexHourLabelsSQL, file, lo, hi, strings.Join(wallets, ","))
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	out := map[hourWallet]hourLabel{}
	for rows.Next() {
		var (
			h time.Time
			w string
			l = hourLabel{ok: true}
		)
		if err := rows.Scan(&h, &w, &l.size, &l.pnl); err != nil {
			return nil, wrap(ctx, op, err)
		}
		out[hourWallet{h.UTC(), w}] = l
	}
	return out, wrap(ctx, op, rows.Err())
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
