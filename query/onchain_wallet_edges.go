package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"mdq/lake"
	sqlfiles "mdq/sql"
)

var (
	walletEdgesSQL        = sqlfiles.MustRead("onchain/wallet_edges.sql")
	walletEdgesPublishSQL = sqlfiles.MustRead("onchain/wallet_edges_publish.sql")
	walletBandsPublishSQL = sqlfiles.MustRead("onchain/wallet_bands_publish.sql")
	holdersBasePublishSQL = sqlfiles.MustRead("onchain/holders_base_publish.sql")
	legsDayRangesSQL      = sqlfiles.MustRead("onchain/legs_day_ranges.sql")
)

// walletEdgesFile is the sidecar of onchain_wallet_edges: the version the reads take.
const walletEdgesFile = "onchain/wallet_edges/_edges.json"

// walletEdgesSide names the published version of onchain_wallet_edges.
type walletEdgesSide struct {
	Built string `json:"built"` // the built= directory: Day, then Tag
	Day   string `json:"day"`   // the serving date D (edgesPlan)
	// Through is the newest legs date the version holds (edgesPlan): the legs dated
	// after it are read from onchain_legs.
	Through string `json:"through"`
	Tag     string `json:"tag"` // edgesTag of the wallet segments' sources up to Through
	// Days is, per onchain_legs file read ("chain=X/date=D"), its signature and the
	// dates of its first and last block_time ("size:mtime lo hi"): a publication reads
	// the dates of the files that changed only.
	Days map[string]string `json:"days,omitempty"`
}

// walletEdgeDays are the days the summary reads as legs on serving date d: d itself
// (now falls in it) and the days its 24h, 7d, 30d and 90d windows start in.
func walletEdgeDays(d time.Time) []time.Time {
	out := make([]time.Time, 0, 5)
	for _, k := range []int{0, 1, 7, 30, 90} {
		out = append(out, d.AddDate(0, 0, -k))
	}
	return out
}

// walletSplitTag identifies a publication of the wallet segments: the split dates, the
// layout and the signatures of the transfers files their legs come from. Equal tags,
// same legs.
func walletSplitTag(side walletLegsSide) string {
	return sourcesTag(side.History+"|"+side.Recent+"|"+side.Layout, side.Sources, "9999-12-31")
}

// sourcesTag hashes head and the signatures of the sources dated up to through.
func sourcesTag(head string, sources map[string]string, through string) string {
	parts := make([]string, 0, len(sources))
	for p, sig := range sources {
		if _, date := splitPart(p); date <= through {
			parts = append(parts, p+"="+sig)
		}
	}
	sort.Strings(parts)
	h := sha256.Sum256([]byte(head + "|" + strings.Join(parts, ",")))
	return hex.EncodeToString(h[:6])
}

// edgesPlan is the version of the edges and bands due at clock now over the wallet
// segments side describes: the serving date d, the clock's date, or the lake's newest
// date (the day after the recent split) when the clock is before it; and the newest
// legs date they hold, two days before d or the recent split if that is older.
//
// Two days, not one: the day before d is an edge day, whose legs the edges hold up to
// their newest date and the reads take from onchain_legs after it, so holding it adds
// nothing a read needs. What it buys: the version of d is complete from d's midnight,
// before d's own legs land (the recent split is then d - 2), and it stays current
// when they land and the split moves to d - 1. The windows move with the clock's date,
// not with the data, and so does the version: a day's landing republishes neither the
// bands nor the edges (only a change to a legs file they read does), and the boards of
// d's first hours read them instead of every leg.
func edgesPlan(side walletLegsSide, now time.Time) (d time.Time, through string, ok bool) {
	r, err := time.Parse(time.DateOnly, side.Recent)
	if err != nil || side.Recent == noSplit || side.History == "" {
		return time.Time{}, "", false
	}
	d = now.UTC().Truncate(24 * time.Hour)
	if newest := r.AddDate(0, 0, 1); d.Before(newest) {
		d = newest
	}
	through = d.AddDate(0, 0, -2).Format(time.DateOnly)
	if side.Recent < through {
		through = side.Recent
	}
	return d, through, true
}

// edgesTag identifies the contents of a version holding the legs dated up to through:
// the signatures of the transfers files of those dates and the layout. Equal tags (and
// serving dates), same files.
func edgesTag(side walletLegsSide, through string) string {
	return sourcesTag(through+"|"+side.Layout, side.Sources, through)
}

func readWalletEdgesSide(dir string) (walletEdgesSide, error) {
	var side walletEdgesSide
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(walletEdgesFile)))
	if errors.Is(err, os.ErrNotExist) {
		return side, nil
	}
	if err != nil {
		return side, err
	}
	if json.Unmarshal(b, &side) != nil {
		return walletEdgesSide{}, nil // a damaged sidecar only costs a publication
	}
	return side, nil
}

// walletEdgesCurrent reports whether the published edges are those due at clock now
// over the wallet segments side describes (none are due without a split).
func walletEdgesCurrent(dir string, side walletLegsSide, now time.Time) (bool, error) {
	cur, _, err := walletEdgesPublished(dir, side, now)
	return cur, err
}

// walletEdgesPublished is walletEdgesCurrent with the published sidecar it read.
func walletEdgesPublished(dir string, side walletLegsSide, now time.Time) (bool, walletEdgesSide, error) {
	d, through, ok := edgesPlan(side, now)
	if !ok {
		return true, walletEdgesSide{}, nil
	}
	e, err := readWalletEdgesSide(dir)
	return err == nil && e.current(side, d, through), e, err
}

// current reports whether e is the version of serving date d holding the legs up to
// through of the segments side describes.
func (e walletEdgesSide) current(side walletLegsSide, d time.Time, through string) bool {
	return e.Built != "" && e.Day == d.Format(time.DateOnly) && e.Through == through && e.Tag == edgesTag(side, through)
}

// publishWalletEdges writes onchain_wallet_edges and onchain_wallet_bands due at the
// store's clock (edgesPlan) for the wallet segments side describes (just published by
// publishWalletLegs, under the legs lock), unless they are current. A new version goes
// to its own built= directories, every file atomically; the sidecar then names it and
// the older versions are removed. A version is a function of its serving date and its
// sources (the tag in its name), so a file left in its directory by a cancelled run
// (whose sidecar still names the previous version, whole) holds what a complete run
// writes. A request listing a version removed under it lists again (queryWallet). It
// returns the serving date it wrote a version for ("" when none; the caller reloads
// the views).
func (q *Queries) publishWalletEdges(ctx context.Context, conn *sql.Conn, side walletLegsSide) (string, error) {
	root := filepath.Join(q.dir, filepath.FromSlash(lake.OnchainWalletEdges.Prefix))
	now := q.Now() // one clock: the plan and the check of the current version agree
	d, through, ok := edgesPlan(side, now)
	if !ok {
		return "", removeWalletEdges(q.dir, "")
	}
	cur, prev, err := walletEdgesPublished(q.dir, side, now)
	if err != nil || cur {
		return "", err
	}
	tag := edgesTag(side, through)
	built := d.Format("20060102") + "_" + tag
	days := walletEdgeDays(d)
	step := q.warmSteps("onchain wallet edges publication") // debug: each step's time
	// The legs files dated up to through, per chain, and which of them can hold a leg
	// of an edge day: their block dates, kept from the last publication for the files
	// it read (same signature), read for the others.
	ranges := map[string]string{}
	file := map[string]string{}   // part -> file
	partOf := map[string]string{} // file -> part
	var unread []string
	for part := range side.Sources {
		c, date := splitPart(part)
		if date > through {
			continue
		}
		rel, err := lake.OnchainLegs.Path(c, date)
		if err != nil {
			return "", err
		}
		f := filepath.Join(q.dir, filepath.FromSlash(rel))
		st, err := os.Stat(f)
		if err != nil { // an empty source day has no legs file
			continue
		}
		file[part], partOf[f] = f, part
		sig := fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())
		if v := prev.Days[part]; strings.HasPrefix(v, sig+" ") {
			ranges[part] = v
		} else {
			unread = append(unread, f)
		}
	}
	if len(unread) > 0 {
		sort.Strings(unread)
		rows, err := conn.QueryContext(ctx, legsDayRangesSQL, unread)
		if err != nil {
			return "", err
		}
		for rows.Next() {
			var f string
			var lo, hi sql.NullTime
			if err := rows.Scan(&f, &lo, &hi); err != nil {
				rows.Close()
				return "", err
			}
			st, err := os.Stat(f)
			if err != nil || !lo.Valid || !hi.Valid {
				continue // gone (the next publication of the legs sees it) or no rows
			}
			ranges[partOf[f]] = fmt.Sprintf("%d:%d %s %s", st.Size(), st.ModTime().UnixNano(), lo.Time.Format(time.DateOnly), hi.Time.Format(time.DateOnly))
		}
		if err := rows.Close(); err != nil {
			return "", err
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
	}
	byChain := map[string][]string{}
	for part, v := range ranges {
		f := strings.Fields(v)
		if len(f) != 3 {
			continue
		}
		for _, day := range days {
			if d := day.Format(time.DateOnly); f[1] <= d && d <= f[2] {
				c, _ := splitPart(part)
				byChain[c] = append(byChain[c], file[part])
				break
			}
		}
	}
	chains := make([]string, 0, len(byChain))
	for c := range byChain {
		chains = append(chains, c)
	}
	sort.Strings(chains)
	for _, c := range chains {
		files := byChain[c]
		sort.Strings(files)
		for _, b := range walletBuckets {
			lo, hi := bucketRange(b)
			if _, err := lake.CopyQuery(ctx, conn, q.dir, lake.OnchainWalletEdges, []string{built, c, b}, walletEdgesPublishSQL, files, days, lo, hi); err != nil {
				return "", err
			}
		}
	}
	step("edges")
	// The bands, from each bucket's daily sums segments over the dates the split gives
	// them (as wallet_seg_days reads them) up to through.
	for _, c := range sourceChains(side.Sources) {
		var bands []string
		for _, b := range walletBuckets {
			var files []string
			for _, seg := range splitSegments(side.History, side.Recent) {
				rel, err := lake.OnchainWalletDays.Path(c, b, seg)
				if err != nil {
					return "", err
				}
				if f := filepath.Join(q.dir, filepath.FromSlash(rel)); fileExists(f) {
					files = append(files, f)
				}
			}
			if len(files) == 0 {
				continue
			}
			if _, err := lake.CopyQuery(ctx, conn, q.dir, lake.OnchainWalletBands, []string{built, c, b}, walletBandsPublishSQL, files, side.History, through, d); err != nil {
				return "", err
			}
			rel, err := lake.OnchainWalletBands.Path(built, c, b)
			if err != nil {
				return "", err
			}
			bands = append(bands, filepath.Join(q.dir, filepath.FromSlash(rel)))
		}
		// The chain's holders base, from its bands just written.
		if len(bands) > 0 {
			if _, err := lake.CopyQuery(ctx, conn, q.dir, lake.OnchainHoldersBase, []string{built, c}, holdersBasePublishSQL, bands); err != nil {
				return "", err
			}
		}
	}
	step("bands and holders base")
	b, err := json.MarshalIndent(walletEdgesSide{Built: built, Day: d.Format(time.DateOnly), Through: through, Tag: tag, Days: ranges}, "", " ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	if err := lake.WriteFileAtomic(filepath.Join(q.dir, filepath.FromSlash(walletEdgesFile)), append(b, '\n')); err != nil {
		return "", err
	}
	return d.Format(time.DateOnly), removeWalletEdges(q.dir, built)
}

// sourceChains are the chains of a sources map ("chain=X/date=D" keys), sorted.
func sourceChains(src map[string]string) []string {
	set := map[string]bool{}
	for part := range src {
		c, _ := splitPart(part)
		set[c] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// removeWalletEdges removes every version of onchain_wallet_edges, _bands and
// onchain_holders_base but keep ("" removes
// them all, and the sidecar).
func removeWalletEdges(dir, keep string) error {
	if keep == "" {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(walletEdgesFile))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, t := range []*lake.Table{lake.OnchainWalletEdges, lake.OnchainWalletBands, lake.OnchainHoldersBase} {
		root := filepath.Join(dir, filepath.FromSlash(t.Prefix))
		for _, v := range partitionValues(root, "built") {
			if v != keep {
				if err := os.RemoveAll(filepath.Join(root, "built="+v)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// walletEdgesCache keeps the parsed edges sidecar per lake, re-read when its file changes.
var walletEdgesCache sidecarCache[walletEdgesSide]

// walletEdgesSideFor returns the version of onchain_wallet_edges a read at clock now
// takes: the published one when it is the version due at now over the published wallet
// segments (edgesPlan; false otherwise: the summary reads the segments, a board every
// leg).
func (q *Queries) walletEdgesSideFor(now time.Time) (walletEdgesSide, bool) {
	split, ok := q.walletSplitEntry()
	if !ok || split.tag == "" {
		return walletEdgesSide{}, false
	}
	side, ok := walletEdgesCache.get(q.dir, filepath.Join(q.dir, filepath.FromSlash(walletEdgesFile)), func() walletEdgesSide {
		side, _ := readWalletEdgesSide(q.dir) // unreadable: no version, the segments
		return side
	})
	if !ok || side.Built == "" {
		return walletEdgesSide{}, false
	}
	// A clock before the lake's newest date plans that date's version (edgesPlan), which
	// holds that date's windows, not the clock's: only a version of the clock's own date
	// is read.
	d, through, ok := edgesPlan(split.side, now)
	if !ok || side.Day != now.UTC().Format(time.DateOnly) || side.Day != d.Format(time.DateOnly) ||
		side.Through != through || side.Tag != lastEdgesTag.of(split, through) {
		return walletEdgesSide{}, false
	}
	return side, true
}

// lastEdgesTag keeps the last edgesTag computed, which every read at the same split
// and date asks again (a hash of every source's signature up to the date).
var lastEdgesTag edgesTagMemo

type edgesTagMemo struct {
	mu             sync.Mutex
	split, through string
	tag            string
}

func (m *edgesTagMemo) of(split walletSplitEntry, through string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.split != split.tag || m.through != through {
		m.split, m.through, m.tag = split.tag, through, edgesTag(split.side, through)
	}
	return m.tag
}

// walletEdgeFiles sets a's edges and bands to the files of version side for address's
// bucket on a's chains (an empty list holds the store's empty file of the same
// columns), and a's split date and today's files to those the version leaves to
// onchain_legs: the legs dated after its Through.
func (q *Queries) walletEdgeFiles(ctx context.Context, side walletEdgesSide, address string, a *walletArgs) error {
	var keys [][2]string
	if len(address) > 2 {
		for _, c := range a.chains {
			keys = append(keys, [2]string{c, address[2:3]})
		}
	}
	var err error
	if a.edges, a.bands, err = q.edgesAndBands(side.Built, keys); err != nil {
		return err
	}
	a.r = side.Through
	a.today, err = q.legsFilesAfter(ctx, a.chains, side.Through)
	return err
}

// edgesAndBands lists the onchain_wallet_edges and onchain_wallet_bands files of
// version built that exist for the (chain, bucket) keys; a list with none is an empty
// file of its table, as the SQL files take both lists as file arguments.
func (q *Queries) edgesAndBands(built string, keys [][2]string) (edges, bands []string, err error) {
	for _, x := range []struct {
		t    *lake.Table
		list *[]string
	}{{lake.OnchainWalletEdges, &edges}, {lake.OnchainWalletBands, &bands}} {
		var out []string
		for _, k := range keys {
			rel, err := x.t.Path(built, k[0], k[1])
			if err != nil {
				continue // not a chain or bucket a file can be named by: none
			}
			if f := filepath.Join(q.dir, filepath.FromSlash(rel)); fileExists(f) {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			f, err := q.emptyFile(x.t, "built=_", "chain=_", "bucket=_")
			if err != nil {
				return nil, nil, &StoreError{Op: "onchain wallet files", Err: fmt.Errorf("empty %s file: %w", x.t.Name, err)}
			}
			out = []string{f}
		}
		*x.list = out
	}
	return edges, bands, nil
}

// WalletEdges is the serving date of the published onchain_wallet_edges and the newest
// legs date they hold, when they are the version due at the store's clock over the
// published wallet segments ("" otherwise): for the tests.
func (q *Queries) WalletEdges() (day, through string) {
	side, err := readWalletLegsSide(q.dir)
	if err != nil {
		return "", ""
	}
	cur, e, err := walletEdgesPublished(q.dir, side, q.Now())
	if err != nil || !cur || e.Built == "" {
		return "", ""
	}
	return e.Day, e.Through
}
