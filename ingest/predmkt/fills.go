package predmkt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"mdq/lake"
)

// fill is one wallet fill before it is matched to its tape trade event.
type fill struct {
	id, token, cond string
	outcome         int32 // -1: look it up in the tokens
	wallet          string
	role, side      string
	price, size     decimal
	ms              int64 // venue time, epoch ms
	secOnly         bool  // ms came from a seconds timestamp: match anywhere in that second
	tx              string
}

// dataFill is a Data API trade record (the per-wallet fills the venue publishes).
// role and id are optional: mdq's own export writes them; the venue's records (taken
// with takerOnly, its default) are taker fills.
type dataFill struct {
	ProxyWallet  string  `json:"proxyWallet"`
	Side         string  `json:"side"`
	Asset        string  `json:"asset"`
	ConditionID  string  `json:"conditionId"`
	Size         numText `json:"size"`
	Price        numText `json:"price"`
	Timestamp    numText `json:"timestamp"`
	Outcome      string  `json:"outcome"`
	OutcomeIndex *int32  `json:"outcomeIndex"`
	TxHash       string  `json:"transactionHash"`
	Name         string  `json:"name"`
	Pseudonym    string  `json:"pseudonym"`
	Role         string  `json:"role"`
	ID           string  `json:"id"`
}

// orderFilled is one decoded OrderFilled log of the exchange contract, with the block
// time added (logs carry none): timestamp in seconds.
type orderFilled struct {
	TxHash      string  `json:"transactionHash"`
	LogIndex    numText `json:"logIndex"`
	Timestamp   numText `json:"timestamp"`
	BlockTime   numText `json:"blockTimestamp"`
	Maker       string  `json:"maker"`
	Taker       string  `json:"taker"`
	MakerAsset  numText `json:"makerAssetId"`
	TakerAsset  numText `json:"takerAssetId"`
	MakerAmount numText `json:"makerAmountFilled"`
	TakerAmount numText `json:"takerAmountFilled"`
}

// The exchange contracts: an OrderFilled whose taker is the exchange itself is the
// taker order's own summary of fills already logged maker by maker, so it adds no fill.
var exchanges = map[string]bool{
	"0x4bfb41d5b3570defd03c39a9a4d8de6bd8b8982e": true, // CTF Exchange
	"0xc5d563a36ae78145c45a50134d48a1215220f80a": true, // Neg Risk CTF Exchange
}

// parseFill parses one fill line; with commit it also records the profile and the
// skip counts (not on the validation pass, nor for a file that is then rejected).
func (l *Loader) parseFill(kind string, b []byte, commit bool) ([]fill, error) {
	if kind == KindFills {
		var d dataFill
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("not a JSON fill record: %v", err)
		}
		f, err := d.fill()
		if err != nil {
			return nil, err
		}
		if commit && (d.Name != "" || d.Pseudonym != "") {
			l.profiles[f.wallet] = [2]string{d.Pseudonym, d.Name}
		}
		return []fill{f}, nil
	}
	var o orderFilled
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("not a JSON OrderFilled log: %v", err)
	}
	fs, err := o.fills()
	if err != nil {
		return nil, err
	}
	if fs == nil && commit {
		l.tape.Skipped["OrderFilled with the exchange as taker"]++
	}
	return fs, nil
}

func (d *dataFill) fill() (fill, error) {
	w, err := checkAddr(d.ProxyWallet)
	if err != nil {
		return fill{}, fmt.Errorf("proxyWallet: %v", err)
	}
	if err := checkToken(d.Asset); err != nil {
		return fill{}, err
	}
	side, err := checkSide(d.Side)
	if err != nil {
		return fill{}, err
	}
	p, err := parseDecimal(string(d.Price))
	if err != nil {
		return fill{}, fmt.Errorf("price: %v", err)
	}
	s, err := parseDecimal(string(d.Size))
	if err != nil {
		return fill{}, fmt.Errorf("size: %v", err)
	}
	if p.fix > fixScale {
		return fill{}, fmt.Errorf("price %s is above 1", d.Price)
	}
	ms, sec, err := parseSecOrMs(d.Timestamp)
	if err != nil {
		return fill{}, fmt.Errorf("timestamp: %v", err)
	}
	f := fill{id: d.ID, token: d.Asset, outcome: -1, wallet: w, role: "taker", side: side, price: p, size: s,
		ms: ms, secOnly: sec, tx: strings.ToLower(d.TxHash)}
	if d.ConditionID != "" {
		if f.cond, err = checkCond(d.ConditionID); err != nil {
			return fill{}, err
		}
	}
	if d.OutcomeIndex != nil {
		if *d.OutcomeIndex != 0 && *d.OutcomeIndex != 1 {
			return fill{}, fmt.Errorf("outcomeIndex %d is not 0 or 1", *d.OutcomeIndex)
		}
		f.outcome = *d.OutcomeIndex
	}
	switch d.Role {
	case "", "taker", "TAKER":
	case "maker", "MAKER":
		f.role = "maker"
	default:
		return fill{}, fmt.Errorf("role %q is not taker or maker", d.Role)
	}
	if f.id == "" {
		// No id in the venue's record: derive one from what identifies the fill.
		h := sha256.Sum256([]byte(strings.Join([]string{f.tx, f.wallet, f.token, f.role, f.side,
			string(d.Price), string(d.Size), string(d.Timestamp)}, "|")))
		f.id = hex.EncodeToString(h[:16])
	}
	return f, nil
}

// fills turns one OrderFilled log into its maker and taker fills. Asset id 0 is the
// collateral (USDC, 6 decimals); the other asset is the outcome token (6 decimals).
func (o *orderFilled) fills() ([]fill, error) {
	maker, err := checkAddr(o.Maker)
	if err != nil {
		return nil, fmt.Errorf("maker: %v", err)
	}
	taker, err := checkAddr(o.Taker)
	if err != nil {
		return nil, fmt.Errorf("taker: %v", err)
	}
	ma, err := bigInt(o.MakerAsset)
	if err != nil {
		return nil, fmt.Errorf("makerAssetId: %v", err)
	}
	ta, err := bigInt(o.TakerAsset)
	if err != nil {
		return nil, fmt.Errorf("takerAssetId: %v", err)
	}
	mAmt, err := bigInt(o.MakerAmount)
	if err != nil {
		return nil, fmt.Errorf("makerAmountFilled: %v", err)
	}
	tAmt, err := bigInt(o.TakerAmount)
	if err != nil {
		return nil, fmt.Errorf("takerAmountFilled: %v", err)
	}
	tsText := o.Timestamp
	if tsText == "" {
		tsText = o.BlockTime
	}
	ms, _, err := parseSecOrMs(tsText)
	if err != nil {
		return nil, fmt.Errorf("timestamp (the block time, seconds): %v", err)
	}
	li, err := bigInt(o.LogIndex)
	if err != nil {
		return nil, fmt.Errorf("logIndex: %v", err)
	}
	tx := strings.ToLower(o.TxHash)
	if tx == "" {
		return nil, errors.New("missing transactionHash")
	}
	if exchanges[taker] {
		return nil, nil
	}
	var token *big.Int
	var usdRaw, sizeRaw *big.Int
	makerSide := ""
	switch {
	case ma.Sign() == 0 && ta.Sign() != 0: // the maker pays collateral: buys the token
		token, usdRaw, sizeRaw, makerSide = ta, mAmt, tAmt, "BUY"
	case ta.Sign() == 0 && ma.Sign() != 0: // the maker gives the token: sells it
		token, usdRaw, sizeRaw, makerSide = ma, tAmt, mAmt, "SELL"
	default:
		return nil, errors.New("one of makerAssetId and takerAssetId must be 0 (the collateral)")
	}
	if sizeRaw.Sign() <= 0 {
		return nil, errors.New("zero token amount")
	}
	// Amounts have 6 decimals; fixed point has 8: times 100. Price = usd / size,
	// rounded half up to 8 places (exact for every tick size of the venue).
	size := decimalFromFix(new(big.Int).Mul(sizeRaw, big.NewInt(100)))
	pNum := new(big.Int).Mul(usdRaw, big.NewInt(2*fixScale))
	pNum.Add(pNum, sizeRaw)
	pNum.Quo(pNum, new(big.Int).Mul(sizeRaw, big.NewInt(2)))
	price := decimalFromFix(pNum)
	if !size.ok || !price.ok {
		return nil, errors.New("amount out of range")
	}
	takerSide := "SELL"
	if makerSide == "SELL" {
		takerSide = "BUY"
	}
	base := tx + ":" + li.String()
	return []fill{
		{id: base + ":taker", token: token.String(), outcome: -1, wallet: taker, role: "taker", side: takerSide,
			price: price.d, size: size.d, ms: ms, secOnly: true, tx: tx},
		{id: base + ":maker", token: token.String(), outcome: -1, wallet: maker, role: "maker", side: makerSide,
			price: price.d, size: size.d, ms: ms, secOnly: true, tx: tx},
	}, nil
}

type fixResult struct {
	d  decimal
	ok bool
}

func decimalFromFix(v *big.Int) fixResult {
	if !v.IsInt64() {
		return fixResult{}
	}
	x := v.Int64()
	return fixResult{decimal{fix: x, f: fixFloat(x)}, true}
}

func bigInt(n numText) (*big.Int, error) {
	s := string(n)
	if s == "" {
		return nil, errors.New("missing")
	}
	v := new(big.Int)
	base := 10
	if strings.HasPrefix(s, "0x") {
		s, base = s[2:], 16
	}
	if _, ok := v.SetString(s, base); !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("%q is not a non-negative integer", string(n))
	}
	return v, nil
}

func checkAddr(s string) (string, error) {
	s = strings.ToLower(s)
	if len(s) != 42 || !strings.HasPrefix(s, "0x") {
		return "", fmt.Errorf("%q is not a 0x address", s)
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", fmt.Errorf("%q is not a 0x address", s)
		}
	}
	return s, nil
}

// tapeTrade is a trade event a fill can match.
type tapeTrade struct {
	ts, lts, seq int64
	used         [2]bool // claimed by a taker fill, by a maker fill
}

// stageFills matches each fill to its tape trade event and stages it with the
// profiles. The rule: same token, same price and size (exact decimals), venue time
// equal to the fill's (within the fill's second when its timestamp has seconds only);
// among candidates the earliest (ts, seq) not yet claimed by a fill of the same role,
// fills taken in (time, input) order, so the taker and the maker of one trade claim
// the same event. The matched event gives ts, local_ts and seq. A fill with no
// matching event keeps its own time (ts = local_ts = the fill's time in ms) and seq 0;
// ingesting the tape later and the fills again fixes it (same trade_id, the newer row
// wins).
func (l *Loader) stageFills(ctx context.Context) error {
	for w, p := range l.profiles {
		if err := l.stage.Append(lake.PredmktProfiles, nil, w, p[0], p[1]); err != nil {
			return err
		}
	}
	if len(l.fills) == 0 {
		return nil
	}
	cands, err := l.tradeEvents(ctx)
	if err != nil {
		return err
	}
	sort.SliceStable(l.fills, func(i, j int) bool { return l.fills[i].ms < l.fills[j].ms })
	for i := range l.fills {
		f := &l.fills[i]
		t, ok := l.tokens[f.token]
		if f.cond == "" {
			if !ok {
				l.tape.Skipped["fill of a token not in predmkt_tokens"]++
				continue
			}
			f.cond = t.Cond
		}
		if f.outcome < 0 {
			if !ok {
				l.tape.Skipped["fill of a token not in predmkt_tokens"]++
				continue
			}
			f.outcome = t.Index
		}
		ts, lts, seq := f.ms, f.ms, int64(0)
		hi := f.ms
		if f.secOnly {
			hi = f.ms + 999
		}
		r := 0
		if f.role == "maker" {
			r = 1
		}
		for _, c := range cands[candKey(f.token, f.price.fix, f.size.fix)] {
			if c.ts >= f.ms && c.ts <= hi && !c.used[r] {
				c.used[r] = true
				ts, lts, seq = c.ts, c.lts, c.seq
				break
			}
		}
		if seq == 0 {
			l.tape.Skipped["fills without a tape trade event (kept, seq 0)"]++
		}
		date := time.UnixMilli(ts).UTC().Format("2006-01-02")
		if err := l.stage.Append(lake.PredmktTrades, []string{date}, f.id, ts, lts, seq, f.token, f.cond, f.outcome,
			f.wallet, f.role, f.side, f.price.f, f.size.f, f.price.f*f.size.f, f.tx); err != nil {
			return err
		}
	}
	return nil
}

func candKey(tok string, p, s int64) string {
	return tok + "|" + strconv.FormatInt(p, 10) + "|" + strconv.FormatInt(s, 10)
}

// tradeEvents gathers the trade events fills can match: those of this run (staged)
// and those already in the lake on the fills' dates, for the fills' tokens.
func (l *Loader) tradeEvents(ctx context.Context) (map[string][]*tapeTrade, error) {
	toks := map[string]bool{}
	dates := map[string]bool{}
	for _, f := range l.fills {
		toks[f.token] = true
		dates[time.UnixMilli(f.ms).UTC().Format("2006-01-02")] = true
		dates[time.UnixMilli(f.ms+999).UTC().Format("2006-01-02")] = true
	}
	seen := map[string]bool{}
	out := map[string][]*tapeTrade{}
	add := func(tok string, ts, lts, seq int64, price, size float64) {
		k := tok + "|" + strconv.FormatInt(seq, 10)
		if seen[k] {
			return
		}
		seen[k] = true
		p, e1 := parseDecimal(strconv.FormatFloat(price, 'f', -1, 64))
		s, e2 := parseDecimal(strconv.FormatFloat(size, 'f', -1, 64))
		if e1 != nil || e2 != nil {
			return
		}
		ck := candKey(tok, p.fix, s.fix)
		out[ck] = append(out[ck], &tapeTrade{ts: ts, lts: lts, seq: seq})
	}
	for _, e := range l.runTrades {
		if toks[e.Token] {
			add(e.Token, e.Ts, e.LocalTs, e.Seq, e.Price, e.Size)
		}
	}
	for d := range dates {
		rel, err := lake.PredmktBookEvents.Path(d)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(l.root, filepath.FromSlash(rel))
		if _, err := os.Stat(file); err != nil {
			continue
		}
		rows, err := l.db.QueryContext(ctx, "SELECT token_id, ts, local_ts, seq, price, size FROM read_parquet(?) WHERE event_type = 'trade'", file)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var tok string
			var ts, lts, seq int64
			var p, s float64
			if err := rows.Scan(&tok, &ts, &lts, &seq, &p, &s); err != nil {
				rows.Close()
				return nil, err
			}
			if toks[tok] {
				add(tok, ts, lts, seq, p, s)
			}
		}
		rows.Close()
	}
	for _, cs := range out {
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].ts != cs[j].ts {
				return cs[i].ts < cs[j].ts
			}
			return cs[i].seq < cs[j].seq
		})
	}
	return out, nil
}
