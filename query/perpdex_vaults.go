package query

import (
	"context"
	"database/sql"
	"time"

	sqlfiles "mdq/sql"
)

var (
	perpdexVaultsSQL         = sqlfiles.MustRead("perpdex/vaults.sql")
	perpdexVaultDailySQL     = sqlfiles.MustRead("perpdex/vault_daily.sql")
	perpdexVaultPositionsSQL = sqlfiles.MustRead("perpdex/vault_positions.sql")
)

// VaultWindows are the vault routes' windows: rolling N times 24 hours ending at the
// store clock; "all" is unbounded.
var VaultWindows = map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "all": 0}

// VaultWindow echoes the window the figures cover.
type VaultWindow struct {
	Window string  `json:"window"`
	Start  *string `json:"start" doc:"window start, ISO-8601 UTC; null for all"`
	End    string  `json:"end" doc:"window end: the store clock, ISO-8601 UTC"`
}

// VaultRow is one vault of /v1/perpdex/vaults, and the summary of /v1/perpdex/vaults/{address}.
type VaultRow struct {
	Vault          string   `json:"vault" doc:"vault address (the wallet it trades as)"`
	Name           string   `json:"name"`
	Kind           string   `json:"kind" doc:"market_making or liquidation"`
	Leader         string   `json:"leader" doc:"leader (operator) address"`
	Description    string   `json:"description"`
	CreatedTS      string   `json:"created_ts" doc:"vault creation, ISO-8601 UTC"`
	AccountValue   *float64 `json:"account_value" doc:"equity at the latest account snapshot at or before now, USD; null without a snapshot"`
	AccountValueTS *string  `json:"account_value_ts" doc:"time of that snapshot, ISO-8601 UTC; null without one"`
	Pnl1d          float64  `json:"pnl_1d" doc:"closed_pnl - fee + funding over the 24 hours to now, USD"`
	Pnl7d          float64  `json:"pnl_7d" doc:"the same over 7 days"`
	Pnl30d         float64  `json:"pnl_30d" doc:"the same over 30 days"`
	PnlAll         float64  `json:"pnl_all" doc:"the same over the whole history"`
	VolumeUsd      float64  `json:"volume_usd" doc:"fill notional (px * sz) in the window, USD"`
	Fills          int64    `json:"fills" doc:"fills in the window"`
	MakerSharePct  *float64 `json:"maker_share_pct" doc:"share of the window's volume on fills that did not cross (maker), percentage points 0 to 100; null without volume"`
	AprPct         *float64 `json:"apr_pct" doc:"estimated annual return in percentage points: window PnL / mean hourly account value in the window * 365 / window days * 100 (days of all: from the first fill or funding to now); null without a snapshot in the window or a non-positive mean"`
	LastFillTS     *string  `json:"last_fill_ts" doc:"the vault's last fill in the window, ISO-8601 UTC with microseconds; null when none"`
}

// VaultsPage is the body of /v1/perpdex/vaults.
type VaultsPage struct {
	Window VaultWindow `json:"window"`
	Vaults []VaultRow  `json:"vaults"`
}

// VaultDay is one UTC date of a vault's daily series.
type VaultDay struct {
	Date         string   `json:"date" doc:"YYYY-MM-DD (UTC)"`
	AccountValue *float64 `json:"account_value" doc:"equity at the day's last snapshot inside the window, USD; null on a date without one"`
	Pnl          float64  `json:"pnl" doc:"closed_pnl - fee + funding on the date inside the window, USD"`
	CumPnl       float64  `json:"cum_pnl" doc:"pnl summed from the first date of the series through this one, USD"`
	VolumeUsd    float64  `json:"volume_usd" doc:"fill notional on the date inside the window, USD"`
	Fills        int64    `json:"fills"`
}

// VaultPosition is one open position of a vault in the newest snapshot batch.
type VaultPosition struct {
	Coin             string  `json:"coin"`
	Side             string  `json:"side" doc:"long or short"`
	SizeToken        float64 `json:"size_token" doc:"absolute size in tokens"`
	SizeUsd          float64 `json:"size_usd" doc:"position value: size times mark, USD"`
	EntryPrice       float64 `json:"entry_price"`
	MarkPrice        float64 `json:"mark_price"`
	Leverage         float64 `json:"leverage"`
	LiquidationPrice float64 `json:"liquidation_price" doc:"0.0 when the venue reports none"`
	UnrealizedPnl    float64 `json:"unrealized_pnl" doc:"USD"`
}

// VaultDetail is the body of /v1/perpdex/vaults/{address}.
type VaultDetail struct {
	Window              VaultWindow     `json:"window"`
	Vault               VaultRow        `json:"vault"`
	Daily               []VaultDay      `json:"daily" doc:"one bucket per UTC date from the window's first date (for all: the first date with activity) to today's, oldest first; the first bucket covers only the part inside the window"`
	PositionsSnapshotTS *string         `json:"positions_snapshot_ts" doc:"the newest venue-wide position snapshot batch at or before now, ISO-8601 UTC; null when none"`
	Positions           []VaultPosition `json:"positions" doc:"the vault's open positions in that batch, largest size_usd first; [] when flat"`
}

// vaultWindow resolves a window name at the store clock.
func vaultWindow(window string, now time.Time) (VaultWindow, time.Time) {
	w := VaultWindow{Window: window, End: ISOSeconds(now)}
	d := VaultWindows[window]
	if d == 0 {
		return w, time.Unix(0, 0).UTC()
	}
	start := now.Add(-d)
	s := ISOSeconds(start)
	w.Start = &s
	return w, start
}

// vaultRows runs vaults.sql for one vault ("" for all).
func (q *Queries) vaultRows(ctx context.Context, vault, window string) (VaultWindow, []VaultRow, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "perpdex vaults"
	now := q.Now()
	w, start := vaultWindow(window, now)
	var v any
	if vault != "" {
		v = vault
	}
	rows, err := q.db.QueryContext(ctx, perpdexVaultsSQL, v, now,
		now.Add(-VaultWindows["1d"]), now.Add(-VaultWindows["7d"]), now.Add(-VaultWindows["30d"]), start)
	if err != nil {
		return w, nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	out := []VaultRow{}
	for rows.Next() {
		var r VaultRow
		var created time.Time
		var av sql.NullFloat64
		var avTS, first, last sql.NullTime
		var avSum, avN, p1, p7, p30, pAll, vol, makerVol int64
		if err := rows.Scan(&r.Vault, &r.Name, &r.Kind, &r.Leader, &created, &r.Description,
			&av, &avTS, &avSum, &avN, &p1, &p7, &p30, &pAll, &first, &vol, &makerVol, &r.Fills, &last); err != nil {
			return w, nil, wrap(ctx, op, err)
		}
		r.CreatedTS = ISOSeconds(created)
		if av.Valid {
			a, ts := Round(av.Float64, 2), ISOSeconds(avTS.Time)
			r.AccountValue, r.AccountValueTS = &a, &ts
		}
		r.Pnl1d, r.Pnl7d, r.Pnl30d, r.PnlAll = MicroUSD(p1), MicroUSD(p7), MicroUSD(p30), MicroUSD(pAll)
		r.VolumeUsd = MicroUSD(vol)
		if vol > 0 {
			m := Round(float64(makerVol)/float64(vol)*100, 4)
			r.MakerSharePct = &m
		}
		if last.Valid {
			s := ISOMicros(last.Time)
			r.LastFillTS = &s
		}
		var firstAt time.Time
		if first.Valid {
			firstAt = first.Time
		}
		r.AprPct = VaultAPR(map[string]int64{"1d": p1, "7d": p7, "30d": p30, "all": pAll}[window], avSum, avN, window, firstAt, now)
		out = append(out, r)
	}
	return w, out, wrap(ctx, op, rows.Err())
}

// VaultAPR is the vault routes' annual-return estimate in percentage points:
// pnl / mean account value * 365 / days * 100, where pnl is the window's PnL and the
// mean is over the hourly account snapshots inside the window (both in micro-USD), and
// days is the window's length (for all: from the first fill or funding payment to
// now). Nil without a snapshot, with a non-positive mean or an empty period.
func VaultAPR(pnl, avSum, avN int64, window string, first, now time.Time) *float64 {
	if avN == 0 || avSum <= 0 {
		return nil
	}
	days := VaultWindows[window].Hours() / 24
	if window == "all" {
		if first.IsZero() {
			return nil
		}
		days = now.Sub(first).Hours() / 24
	}
	if days <= 0 {
		return nil
	}
	mean := float64(avSum) / float64(avN)
	a := Round(float64(pnl)/mean*365/days*100, 4)
	return &a
}

// PerpdexVaults answers /v1/perpdex/vaults: every vault, ordered by address.
func (q *Queries) PerpdexVaults(ctx context.Context, window string) (VaultsPage, error) {
	w, rows, err := q.vaultRows(ctx, "", window)
	return VaultsPage{Window: w, Vaults: rows}, err
}

// PerpdexVault answers /v1/perpdex/vaults/{address}; ErrNotFound when the address is
// not a vault.
func (q *Queries) PerpdexVault(ctx context.Context, vault, window string) (VaultDetail, error) {
	w, rows, err := q.vaultRows(ctx, vault, window)
	d := VaultDetail{Window: w, Daily: []VaultDay{}, Positions: []VaultPosition{}}
	if err != nil {
		return d, err
	}
	if len(rows) == 0 {
		return d, ErrNotFound
	}
	d.Vault = rows[0]
	if d.Daily, err = q.vaultDaily(ctx, vault, window); err != nil {
		return d, err
	}
	d.PositionsSnapshotTS, d.Positions, err = q.vaultPositions(ctx, vault)
	return d, err
}

func (q *Queries) vaultDaily(ctx context.Context, vault, window string) ([]VaultDay, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "perpdex vault daily"
	now := q.Now()
	_, start := vaultWindow(window, now)
	rows, err := q.db.QueryContext(ctx, perpdexVaultDailySQL, vault, start, now)
	if err != nil {
		return nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	type day struct {
		pnl, ntl, n int64
		av          sql.NullFloat64
	}
	days := map[string]day{}
	var firstDate string
	for rows.Next() {
		var d time.Time
		var x day
		if err := rows.Scan(&d, &x.pnl, &x.ntl, &x.n, &x.av); err != nil {
			return nil, wrap(ctx, op, err)
		}
		k := Date(d)
		if firstDate == "" {
			firstDate = k
		}
		days[k] = x
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, op, err)
	}
	out := []VaultDay{}
	from := start.Truncate(24 * time.Hour)
	if window == "all" {
		if firstDate == "" {
			return out, nil
		}
		from, _ = time.Parse("2006-01-02", firstDate)
	}
	var cum int64
	for d := from; !d.After(now); d = d.Add(24 * time.Hour) {
		k := Date(d)
		x := days[k]
		cum += x.pnl
		v := VaultDay{Date: k, Pnl: MicroUSD(x.pnl), CumPnl: MicroUSD(cum), VolumeUsd: MicroUSD(x.ntl), Fills: x.n}
		if x.av.Valid {
			a := Round(x.av.Float64, 2)
			v.AccountValue = &a
		}
		out = append(out, v)
	}
	return out, nil
}

func (q *Queries) vaultPositions(ctx context.Context, vault string) (*string, []VaultPosition, error) {
	ctx, cancel := q.ctx(ctx)
	defer cancel()
	const op = "perpdex vault positions"
	rows, err := q.db.QueryContext(ctx, perpdexVaultPositionsSQL, vault, q.Now())
	if err != nil {
		return nil, nil, wrap(ctx, op, err)
	}
	defer rows.Close()
	var batch *string
	out := []VaultPosition{}
	for rows.Next() {
		var snap, b sql.NullTime
		var coin sql.NullString
		var szi, entry, mark, lev, liq, upnl, val sql.NullFloat64
		if err := rows.Scan(&snap, &b, &coin, &szi, &entry, &mark, &lev, &liq, &upnl, &val); err != nil {
			return nil, nil, wrap(ctx, op, err)
		}
		if b.Valid && batch == nil {
			s := ISOSeconds(b.Time)
			batch = &s
		}
		if !coin.Valid {
			continue // the batch exists; the vault holds nothing in it
		}
		p := VaultPosition{Coin: coin.String, Side: "long", SizeToken: szi.Float64, SizeUsd: Round(val.Float64, 2),
			EntryPrice: entry.Float64, MarkPrice: mark.Float64, Leverage: lev.Float64,
			LiquidationPrice: liq.Float64, UnrealizedPnl: Round(upnl.Float64, 2)}
		if p.SizeToken < 0 {
			p.Side, p.SizeToken = "short", -p.SizeToken
		}
		out = append(out, p)
	}
	return batch, out, wrap(ctx, op, rows.Err())
}
