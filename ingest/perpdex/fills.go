package perpdex

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mdq/ingest"
)

// Fill is one perpdex_fills row: one user's side of one trade.
type Fill struct {
	Time          time.Time
	Wallet        string
	Coin          string // builder-deployed markets as <dex>:<symbol>
	Dex           string // "" on the main venue
	Side          string // B or A
	Px, Sz        float64
	Dir           string
	StartPosition float64
	ClosedPnl     float64
	Fee           float64
	FeeToken      string
	Builder       *string  // nil without a builder code
	BuilderFee    *float64 // nil without a builder code
	DeployerFee   *float64 // nil on the main venue (or when the venue sent none)
	Crossed       bool
	Hash          string
	Tid, Oid      int64
	Liquidation   bool     // true on the liquidated user's own fill
	LiqMarkPx     *float64 // the mark at liquidation, on that fill only
}

// Row is the fill in perpdex_fills column order.
func (f *Fill) Row() []any {
	return []any{f.Time, f.Wallet, f.Coin, f.Dex, f.Side, f.Px, f.Sz, f.Dir, f.StartPosition, f.ClosedPnl,
		f.Fee, f.FeeToken, ptr(f.Builder), ptr(f.BuilderFee), ptr(f.DeployerFee), f.Crossed, f.Hash, f.Tid, f.Oid,
		f.Liquidation, ptr(f.LiqMarkPx)}
}

// vals puts the fill in perpdex_fills column order into row, as Row does without an
// interface per value.
func (f *Fill) vals(row *[21]ingest.Val) {
	*row = [21]ingest.Val{ingest.Time(f.Time), ingest.Text(f.Wallet), ingest.Text(f.Coin), ingest.Text(f.Dex), ingest.Text(f.Side),
		ingest.Float(f.Px), ingest.Float(f.Sz), ingest.Text(f.Dir), ingest.Float(f.StartPosition), ingest.Float(f.ClosedPnl),
		ingest.Float(f.Fee), ingest.Text(f.FeeToken), ingest.OptText(f.Builder), ingest.OptFloat(f.BuilderFee),
		ingest.OptFloat(f.DeployerFee), ingest.Bool(f.Crossed), ingest.Text(f.Hash), ingest.Int(f.Tid), ingest.Int(f.Oid),
		ingest.Bool(f.Liquidation), ingest.OptFloat(f.LiqMarkPx)}
}

// Date is the fill's partition (UTC date).
func (f *Fill) Date() string { return f.Time.UTC().Format(time.DateOnly) }

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// rawFill is a fill as the node and the info API write it. Fields not listed (cloid,
// twapId, ...) are ignored; a field the venue adds later is ignored too.
type rawFill struct {
	Coin          str     `json:"coin"`
	Px            num     `json:"px"`
	Sz            num     `json:"sz"`
	Side          str     `json:"side"`
	Time          integer `json:"time"`
	StartPosition num     `json:"startPosition"`
	Dir           str     `json:"dir"`
	ClosedPnl     num     `json:"closedPnl"`
	Hash          str     `json:"hash"`
	Oid           integer `json:"oid"`
	Crossed       *bool   `json:"crossed"`
	Fee           num     `json:"fee"`
	Tid           integer `json:"tid"`
	FeeToken      str     `json:"feeToken"`
	Builder       str     `json:"builder"`
	BuilderFee    num     `json:"builderFee"`
	DeployerFee   num     `json:"deployerFee"`
	Liquidation   *rawLiq `json:"liquidation"`
	User          str     `json:"user"` // present in some websocket payloads
}

type rawLiq struct {
	LiquidatedUser str `json:"liquidatedUser"`
	MarkPx         num `json:"markPx"`
	Method         str `json:"method"`
}

// errSpot marks a spot fill: node files carry the spot book's fills too (coin "@107"
// or "PURR/USDC"); they are not perpetuals and are skipped (counted).
var errSpot = errors.New("spot fill")

// fill converts one raw fill of wallet into a row. A missing required field rejects
// it; builder, builderFee, deployerFee, feeToken and liquidation may be absent or null.
func (r *rawFill) fill(wallet string) (Fill, error) {
	if err := missing("coin", r.Coin, "px", r.Px, "sz", r.Sz, "side", r.Side, "time", r.Time,
		"startPosition", r.StartPosition, "dir", r.Dir, "closedPnl", r.ClosedPnl, "hash", r.Hash,
		"oid", r.Oid, "crossed", r.Crossed, "fee", r.Fee, "tid", r.Tid); err != nil {
		return Fill{}, err
	}
	coin := r.Coin.v
	if strings.HasPrefix(coin, "@") || strings.Contains(coin, "/") {
		return Fill{}, errSpot
	}
	if coin == "" {
		return Fill{}, errors.New("empty coin")
	}
	if r.Side.v != "B" && r.Side.v != "A" {
		return Fill{}, fmt.Errorf("side %q: want B or A", r.Side.v)
	}
	if r.Px.v <= 0 || r.Sz.v <= 0 {
		return Fill{}, fmt.Errorf("px %v and sz %v must be positive", r.Px.v, r.Sz.v)
	}
	if wallet == "" {
		return Fill{}, errors.New("empty user")
	}
	f := Fill{
		Time: time.UnixMilli(r.Time.v).UTC(), Wallet: strings.ToLower(wallet), Coin: coin,
		Side: r.Side.v, Px: r.Px.v, Sz: r.Sz.v, Dir: r.Dir.v, StartPosition: r.StartPosition.v,
		ClosedPnl: r.ClosedPnl.v, Fee: r.Fee.v, FeeToken: r.FeeToken.v, Crossed: *r.Crossed,
		Hash: strings.ToLower(r.Hash.v), Tid: r.Tid.v, Oid: r.Oid.v,
	}
	if i := strings.IndexByte(coin, ':'); i > 0 {
		f.Dex = coin[:i]
	}
	if !r.FeeToken.set || f.FeeToken == "" {
		f.FeeToken = "USDC" // fills before the venue had other fee tokens carry none
	}
	if r.Builder.set && r.Builder.v != "" {
		b := strings.ToLower(r.Builder.v)
		f.Builder = &b
		bf := 0.0
		if r.BuilderFee.ok() {
			bf = r.BuilderFee.v
		}
		f.BuilderFee = &bf
	}
	if r.DeployerFee.ok() {
		d := r.DeployerFee.v
		f.DeployerFee = &d
	}
	if l := r.Liquidation; l != nil && l.LiquidatedUser.set && strings.EqualFold(l.LiquidatedUser.v, f.Wallet) {
		f.Liquidation = true
		if l.MarkPx.ok() {
			m := l.MarkPx.v
			f.LiqMarkPx = &m
		}
	}
	return f, nil
}

// nodeBlock is one line of a node_fills_by_block file.
type nodeBlock struct {
	LocalTime   str          `json:"local_time"`
	BlockTime   str          `json:"block_time"`
	BlockNumber integer      `json:"block_number"`
	Events      *[]nodeEvent `json:"events"`
}

// nodeEvent is [user, fill].
type nodeEvent struct {
	User str
	Fill rawFill
}

func (e *nodeEvent) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return fmt.Errorf("event: want [user, fill]: %w", err)
	}
	if len(pair) != 2 {
		return fmt.Errorf("event: want [user, fill], got %d elements", len(pair))
	}
	if err := json.Unmarshal(pair[0], &e.User); err != nil {
		return fmt.Errorf("event user: %w", err)
	}
	if err := json.Unmarshal(pair[1], &e.Fill); err != nil {
		return fmt.Errorf("event fill: %w", err)
	}
	return nil
}

// ParseNodeLine parses one line of a node fill file into its fills; spot fills are
// counted in spot and left out.
func ParseNodeLine(b []byte) (fills []Fill, spot int, err error) {
	if fills, spot, ok := fastNodeLine(b, nil); ok {
		return fills, spot, nil
	}
	return parseNodeLineSlow(b)
}

// parseNodeLineSlow is the reference decoder (encoding/json), which also says what is
// wrong with a malformed line.
func parseNodeLineSlow(b []byte) (fills []Fill, spot int, err error) {
	var blk nodeBlock
	if err := json.Unmarshal(b, &blk); err != nil {
		return nil, 0, err
	}
	if blk.Events == nil {
		return nil, 0, errors.New("not a node fill block: no events")
	}
	for i := range *blk.Events {
		ev := &(*blk.Events)[i]
		if !ev.User.set {
			return nil, 0, fmt.Errorf("event %d: missing user", i)
		}
		f, err := ev.Fill.fill(ev.User.v)
		if errors.Is(err, errSpot) {
			spot++
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("event %d: %w", i, err)
		}
		fills = append(fills, f)
	}
	return fills, spot, nil
}
