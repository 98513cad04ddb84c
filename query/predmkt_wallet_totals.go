package query

import (
	"context"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

// predmkt_wallet_totals is the prediction-market board's checkpoint of lifetime sums:
// per (wallet, market), every predmkt_wallet_days date up to one date summed. The board
// (sql/predmkt/board.sql) sums, per (wallet, market), the days of the whole history; a
// day wholly before the widest window's start adds to the lifetime figures only, so
// every such day of an hour's board can come from one file of totals instead of one
// file each: at large the board read 15.6 million daily rows each hour (91 dates), of
// which 11.3 million were before the 30-day window and are 3.5 million (wallet, market)
// pairs summed. The daily rows grow with every day a pair trades; the totals only with
// the pairs that ever traded.
//
// Published with the per-day tables (PublishDayTables), for the date the board hour of
// the store clock needs: the newest whose days (and every earlier one) end before the
// 30-day window. That date moves one day a day, so a publication adds one day to the
// previous totals; a late or corrected day before it breaks the chain of signatures and
// the totals are summed again from the days (from the last totals still current). Only
// the newest two dates are kept (each is a whole copy of the pairs).

var predmktWalletTotalsSQL = sqlfiles.MustRead("predmkt/wallet_totals_publish.sql")

// walletTotalsKept is how many dates of totals stay in the lake: the one the clock
// needs and the one before it (a clock an hour before midnight needs that one still).
const walletTotalsKept = 2

func walletTotalsSidecar(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(lake.PredmktWalletTotals.Prefix), "_sources.json")
}

// walletTotalsWidest is the board's widest window (ms): a day wholly before its start
// adds to no window's figures, only to the lifetime ones.
var walletTotalsWidest = boardWindows[len(boardWindows)-1].Ms

// walletTotalsChains maps each trades date to the chain of the current trades files'
// signatures of every date up to it (chainSig), in date order.
func walletTotalsChains(src map[string]dateFile) (dates []string, chains map[string]string) {
	return chainsOf(src, func(_ string, f dateFile) string { return f.sig })
}

// publishWalletTotals writes the totals of the date the store clock's board hour
// needs, when they are not current: from the newest earlier totals still current
// (their chain of signatures unchanged) plus the days after them, else from every day.
// The wallet days must be published from the trades files now in the lake for every
// date up to it (PublishDayTables runs it after them); otherwise nothing is written and
// the board reads the days, as without totals. The file is written atomically and the
// sidecar after it; dates beyond the newest walletTotalsKept are then dropped from the
// sidecar before their files are removed, so a reader never meets a listed date
// without its file.
func (q *Queries) publishWalletTotals(ctx context.Context) (DayPublication, error) {
	const op = "predmkt wallet totals publication"
	start := time.Now()
	mu, _ := dayLocks.LoadOrStore(q.dir+"\x00"+lake.PredmktWalletTotals.Name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	pub := DayPublication{Table: lake.PredmktWalletTotals.Name}
	src, err := datePartitions(q.dir, lake.PredmktTrades)
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	days, err := readSidecar[daySource](predmktWalletDays.sidecar(q.dir))
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	done, err := readSidecar[totalsSource](walletTotalsSidecar(q.dir))
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	dates, chains := walletTotalsChains(src)
	pub.Partitions = len(dates)
	cut := q.Now().UnixMilli() - walletTotalsWidest
	target, last := "", int64(0)
	lastAt := map[string]int64{}
	for _, d := range dates {
		e, ok := days[d]
		if !ok || e.Sig != src[d].sig || (e.Rows > 0 && !e.Span) {
			break // this day's sums are not published from the file now in the lake
		}
		if e.Rows > 0 && e.Last > last {
			last = e.Last
		}
		if last >= cut {
			break
		}
		target, lastAt[d] = d, last
	}
	if target == "" {
		pub.Took = time.Since(start)
		return pub, nil
	}
	totalsFile := func(d string) (string, error) {
		f, err := q.partitionFiles(lake.PredmktWalletTotals, []string{d})
		if err != nil {
			return "", err
		}
		return f[0], nil
	}
	tf, err := totalsFile(target)
	if err != nil {
		return pub, err
	}
	if t, ok := done[target]; !ok || t.Chain != chains[target] || (t.Rows > 0 && !fileExists(tf)) {
		base, baseFile := "", ""
		for d, t := range done {
			if d < target && t.Chain == chains[d] && d > base {
				f := ""
				if t.Rows > 0 {
					if f, err = totalsFile(d); err != nil {
						return pub, err
					}
					if !fileExists(f) {
						continue // listed but gone (removed by hand): not a base
					}
				}
				base, baseFile = d, f
			}
		}
		var after []string
		for _, d := range dates {
			if d > base && d <= target && days[d].Rows > 0 {
				after = append(after, d)
			}
		}
		files, err := q.partitionFiles(lake.PredmktWalletDays, after)
		if err != nil {
			return pub, err
		}
		if baseFile != "" {
			files = append([]string{baseFile}, files...)
		}
		list, err := q.fileList(lake.PredmktWalletDays, files)
		if err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		n, err := lake.CopyQuery(ctx, q.db, q.dir, lake.PredmktWalletTotals, []string{target}, predmktWalletTotalsSQL, list)
		if err != nil {
			return pub, wrap(ctx, op, err)
		}
		if n == 0 { // no row: CopyQuery kept any old file, which no longer holds
			if err := removeDatePartition(q.dir, lake.PredmktWalletTotals, target); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
		}
		done[target] = totalsSource{Chain: chains[target], Rows: n, Last: lastAt[target]}
		if err := writeSidecar(walletTotalsSidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
		pub.Written = append(pub.Written, target)
	}
	// Keep the newest walletTotalsKept dates up to the target (one the clock moved back
	// from goes too: the next publication sums it again from what is kept).
	listed := make([]string, 0, len(done))
	for d := range done {
		listed = append(listed, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(listed)))
	dropped, newer := false, 0
	for _, d := range listed {
		if d <= target && newer < walletTotalsKept {
			newer++
			continue
		}
		delete(done, d)
		dropped = true
	}
	if dropped {
		if err := writeSidecar(walletTotalsSidecar(q.dir), done); err != nil {
			return pub, &StoreError{Op: op, Err: err}
		}
	}
	// Every file of a date the sidecar does not list (dropped now, or left by a
	// publication cancelled between its file and its sidecar).
	onDisk, err := datePartitions(q.dir, lake.PredmktWalletTotals)
	if err != nil {
		return pub, &StoreError{Op: op, Err: err}
	}
	for d := range onDisk {
		if _, listed := done[d]; !listed {
			if err := removeDatePartition(q.dir, lake.PredmktWalletTotals, d); err != nil {
				return pub, &StoreError{Op: op, Err: err}
			}
			pub.Removed = append(pub.Removed, d)
		}
	}
	sort.Strings(pub.Removed)
	pub.Took = time.Since(start)
	return pub, nil
}

// walletTotalsFor picks the totals the board at clock now (epoch ms) reads for the
// days up to a date: the newest published date whose totals were summed from the very
// trades files now in the lake (its chain of signatures is the current one) and whose
// days all end before the widest window's start. file is its file ("" when it has no
// row); date "" when no totals stand in.
func (q *Queries) walletTotalsFor(src map[string]dateFile, now int64) (date, file string, err error) {
	done, err := readSidecar[totalsSource](walletTotalsSidecar(q.dir))
	if err != nil || len(done) == 0 {
		return "", "", err
	}
	_, chains := walletTotalsChains(src)
	for d, t := range done {
		if t.Chain == chains[d] && t.Last < now-walletTotalsWidest && d > date {
			date = d
		}
	}
	if date == "" || done[date].Rows == 0 {
		return date, "", nil
	}
	f, err := q.partitionFiles(lake.PredmktWalletTotals, []string{date})
	if err != nil {
		return "", "", err
	}
	if file = f[0]; !fileExists(file) {
		// Listed but gone (a publication pruning it after this plan's read of the
		// sidecar): the days are read instead.
		return "", "", nil
	}
	return date, file, nil
}
