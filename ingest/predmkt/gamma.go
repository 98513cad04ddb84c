package predmkt

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Market is one predmkt_markets row. A zero time is stored as NULL.
type Market struct {
	Cond, Question, Slug, Category string
	FamAsset, FamTenor             string
	Created, End                   time.Time
	Closed                         bool
	// Partial is set for a market known only from a new_market message (no end
	// date, no closed flag): it never replaces a row the lake already holds.
	Partial bool
}

// Token is one predmkt_tokens row.
type Token struct {
	ID, Cond string
	Index    int32
	Outcome  string
}

// Resolution is one predmkt_resolutions row; Invalid has no winner.
type Resolution struct {
	Cond    string
	Ts      time.Time
	Winner  int32
	Invalid bool
}

// Meta collects the metadata rows of a run.
type Meta struct {
	Markets     []Market
	Tokens      []Token
	Resolutions []Resolution
}

type metaMark struct{ m, t, r int }

func (m *Meta) mark() metaMark { return metaMark{len(m.Markets), len(m.Tokens), len(m.Resolutions)} }

func (m *Meta) reset(k metaMark) {
	m.Markets, m.Tokens, m.Resolutions = m.Markets[:k.m], m.Tokens[:k.t], m.Resolutions[:k.r]
}

// The five categories of SPEC and the venue tags (slugs, lower-case) that map onto
// each. The first tag of a market that maps decides; a market with none keeps its own
// category string (then it is counted under `all` only).
var categoryTags = []struct {
	cat  string
	tags []string
}{
	{"Crypto", []string{"crypto", "bitcoin", "ethereum", "solana", "xrp", "crypto-prices", "up-or-down", "defi", "stablecoins", "airdrops", "memecoins"}},
	{"Sports", []string{"sports", "nba", "nfl", "mlb", "nhl", "soccer", "football", "epl", "tennis", "golf", "ufc", "mma", "boxing", "f1", "formula-1", "cricket", "esports", "olympics", "ncaa", "college-football", "basketball", "baseball", "hockey", "champions-league", "world-cup"}},
	{"Politics", []string{"politics", "elections", "us-presidential-election", "global-elections", "world-elections", "primaries", "trump", "congress", "senate", "geopolitics", "world", "government", "us-politics"}},
	{"Pop-Culture", []string{"pop-culture", "culture", "entertainment", "movies", "music", "celebrities", "tv", "awards", "oscars", "grammys", "youtube", "twitter", "mentions", "gaming"}},
	{"Tech", []string{"tech", "technology", "ai", "science", "openai", "apple", "google", "elon-musk", "space", "spacex", "big-tech"}},
}

var tagCategory = func() map[string]string {
	m := map[string]string{}
	for _, c := range categoryTags {
		for _, t := range c.tags {
			m[t] = c.cat
		}
		m[strings.ToLower(c.cat)] = c.cat
	}
	return m
}()

// Category maps venue tags (slugs or labels) to one of SPEC's five categories; own
// is returned (the venue's own category string) when no tag maps.
func Category(tags []string, own string) string {
	for _, t := range tags {
		k := strings.ToLower(strings.TrimSpace(t))
		k = strings.ReplaceAll(k, " ", "-")
		if c, ok := tagCategory[k]; ok {
			return c
		}
	}
	if c, ok := tagCategory[strings.ReplaceAll(strings.ToLower(own), " ", "-")]; ok {
		return c
	}
	return own
}

// Crypto up/down families: the asset from the slug's first word (or the title's
// coin name), the tenor from the slug or the series recurrence.
var (
	famSlug   = regexp.MustCompile(`^(btc|eth|sol|xrp|bitcoin|ethereum|solana)-(?:updown|up-or-down)-(5m|15m|1h|4h|hourly|daily|1d)\b`)
	famTitle  = regexp.MustCompile(`^(Bitcoin|Ethereum|Solana|XRP|BTC|ETH|SOL) Up or Down`)
	famAssets = map[string]string{"btc": "btc", "bitcoin": "btc", "eth": "eth", "ethereum": "eth", "sol": "sol", "solana": "sol", "xrp": "xrp"}
	famTenors = map[string]string{"5m": "5m", "15m": "15m", "1h": "1h", "hourly": "1h", "4h": "4h", "daily": "1d", "1d": "1d"}
)

// Family returns the asset and tenor of a crypto up/down market, or empty strings.
func Family(slug, title, seriesSlug, recurrence string) (asset, tenor string) {
	for _, s := range []string{slug, seriesSlug} {
		if m := famSlug.FindStringSubmatch(strings.ToLower(s)); m != nil {
			return famAssets[m[1]], famTenors[m[2]]
		}
	}
	if m := famTitle.FindStringSubmatch(title); m != nil {
		if t := famTenors[strings.ToLower(recurrence)]; t != "" {
			return famAssets[strings.ToLower(m[1])], t
		}
	}
	return "", ""
}

// gammaTag is an event's or market's tag object.
type gammaTag struct {
	Label string `json:"label"`
	Slug  string `json:"slug"`
}

type gammaSeries struct {
	Slug       string `json:"slug"`
	Recurrence string `json:"recurrence"`
}

type gammaEvent struct {
	ID         string        `json:"id"`
	Slug       string        `json:"slug"`
	Title      string        `json:"title"`
	Category   string        `json:"category"`
	Tags       []gammaTag    `json:"tags"`
	Series     []gammaSeries `json:"series"`
	SeriesSlug string        `json:"seriesSlug"`
	Markets    []gammaMarket `json:"markets"`
	Closed     bool          `json:"closed"`
}

type gammaMarket struct {
	ID            string       `json:"id"`
	Question      string       `json:"question"`
	ConditionID   string       `json:"conditionId"`
	Slug          string       `json:"slug"`
	Category      string       `json:"category"`
	EndDate       string       `json:"endDate"`
	CreatedAt     string       `json:"createdAt"`
	StartDate     string       `json:"startDate"`
	ClosedTime    string       `json:"closedTime"`
	UMAEndDate    string       `json:"umaEndDate"`
	Outcomes      string       `json:"outcomes"`
	OutcomePrices string       `json:"outcomePrices"`
	ClobTokenIDs  string       `json:"clobTokenIds"`
	Closed        bool         `json:"closed"`
	UMAStatus     string       `json:"umaResolutionStatus"`
	Tags          []gammaTag   `json:"tags"`
	Events        []gammaEvent `json:"events"`
}

// Gamma adds the rows of one Gamma JSON value: a market, an event (with its
// markets), or an array of either.
func (m *Meta) Gamma(raw json.RawMessage) error {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 {
		return errors.New("empty value")
	}
	if raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		for i, it := range items {
			if err := m.Gamma(it); err != nil {
				return fmt.Errorf("item %d: %v", i+1, err)
			}
		}
		return nil
	}
	var probe struct {
		Markets     json.RawMessage `json:"markets"`
		ConditionID string          `json:"conditionId"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return err
	}
	if probe.Markets != nil {
		var ev gammaEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		for i := range ev.Markets {
			if err := m.gammaMarket(&ev.Markets[i], &ev); err != nil {
				return fmt.Errorf("event %s market %d: %v", ev.Slug, i+1, err)
			}
		}
		return nil
	}
	if probe.ConditionID == "" {
		return errors.New("neither a Gamma market (conditionId) nor an event (markets)")
	}
	var gm gammaMarket
	if err := json.Unmarshal(raw, &gm); err != nil {
		return err
	}
	var ev *gammaEvent
	if len(gm.Events) > 0 {
		ev = &gm.Events[0]
	}
	return m.gammaMarket(&gm, ev)
}

func (m *Meta) gammaMarket(g *gammaMarket, ev *gammaEvent) error {
	cond, err := checkCond(g.ConditionID)
	if err != nil {
		return err
	}
	var outcomes, tokens, prices []string
	if err := jsonStrings(g.Outcomes, &outcomes); err != nil {
		return fmt.Errorf("outcomes: %v", err)
	}
	if err := jsonStrings(g.ClobTokenIDs, &tokens); err != nil {
		return fmt.Errorf("clobTokenIds: %v", err)
	}
	if err := jsonStrings(g.OutcomePrices, &prices); err != nil {
		return fmt.Errorf("outcomePrices: %v", err)
	}
	if len(tokens) != 2 || len(outcomes) != 2 {
		return fmt.Errorf("%d tokens and %d outcomes; a market has two of each", len(tokens), len(outcomes))
	}
	for _, t := range tokens {
		if err := checkToken(t); err != nil {
			return err
		}
	}
	created, err := optTime(g.CreatedAt)
	if err != nil {
		return fmt.Errorf("createdAt: %v", err)
	}
	if created.IsZero() {
		if created, err = optTime(g.StartDate); err != nil {
			return fmt.Errorf("startDate: %v", err)
		}
	}
	end, err := optTime(g.EndDate)
	if err != nil {
		return fmt.Errorf("endDate: %v", err)
	}
	var tags []string
	for _, t := range g.Tags {
		tags = append(tags, t.Slug, t.Label)
	}
	own := g.Category
	var seriesSlug, recurrence string
	if ev != nil {
		for _, t := range ev.Tags {
			tags = append(tags, t.Slug, t.Label)
		}
		if own == "" {
			own = ev.Category
		}
		seriesSlug = ev.SeriesSlug
		if len(ev.Series) > 0 {
			seriesSlug, recurrence = ev.Series[0].Slug, ev.Series[0].Recurrence
		}
	}
	asset, tenor := Family(g.Slug, g.Question, seriesSlug, recurrence)
	cat := Category(tags, own)
	if asset != "" && cat == own {
		cat = "Crypto"
	}
	m.Markets = append(m.Markets, Market{Cond: cond, Question: g.Question, Slug: g.Slug, Category: cat,
		FamAsset: asset, FamTenor: tenor, Created: created, End: end, Closed: g.Closed})
	for i, t := range tokens {
		m.Tokens = append(m.Tokens, Token{ID: t, Cond: cond, Index: int32(i), Outcome: outcomes[i]})
	}
	// Resolution: a closed market whose outcome prices settled. One outcome at 1 wins;
	// 50/50 (or a cancelled question) is invalid; anything else is not resolved yet.
	if !g.Closed || len(prices) != 2 {
		return nil
	}
	p0, e0 := parseDecimal(prices[0])
	p1, e1 := parseDecimal(prices[1])
	if e0 != nil || e1 != nil {
		return fmt.Errorf("outcomePrices %v are not decimals", prices)
	}
	ts, err := optTime(g.ClosedTime)
	if err != nil {
		return fmt.Errorf("closedTime: %v", err)
	}
	if ts.IsZero() {
		if ts, err = optTime(g.UMAEndDate); err != nil {
			return fmt.Errorf("umaEndDate: %v", err)
		}
	}
	if ts.IsZero() {
		ts = end
	}
	r := Resolution{Cond: cond, Ts: ts}
	switch {
	case strings.Contains(strings.ToLower(g.UMAStatus), "cancel"):
		r.Invalid = true
	case p0.fix == fixScale && p1.fix == 0:
		r.Winner = 0
	case p0.fix == 0 && p1.fix == fixScale:
		r.Winner = 1
	case p0.fix == fixScale/2 && p1.fix == fixScale/2:
		r.Invalid = true
	default:
		return nil
	}
	m.Resolutions = append(m.Resolutions, r)
	return nil
}

// addNewMarket records a market announced on the channel (partial: no end date).
func (m *Meta) addNewMarket(w *wsMsg, ts int64) error {
	cond := w.ConditionID
	if cond == "" {
		cond = w.Market
	}
	cond, err := checkCond(cond)
	if err != nil {
		return err
	}
	if len(w.AssetsIDs) != 2 || len(w.Outcomes) != 2 {
		return fmt.Errorf("%d assets_ids and %d outcomes; a market has two of each", len(w.AssetsIDs), len(w.Outcomes))
	}
	for _, t := range w.AssetsIDs {
		if err := checkToken(t); err != nil {
			return err
		}
	}
	var evSlug string
	if w.EventMessage != nil {
		evSlug = w.EventMessage.Slug
	}
	asset, tenor := Family(w.Slug, w.Question, evSlug, "")
	own := ""
	if len(w.Tags) > 0 {
		own = w.Tags[0] // the venue's own word for it, when no tag maps
	}
	cat := Category(w.Tags, own)
	if asset != "" && cat == own {
		cat = "Crypto"
	}
	m.Markets = append(m.Markets, Market{Cond: cond, Question: w.Question, Slug: w.Slug, Category: cat,
		FamAsset: asset, FamTenor: tenor, Created: time.UnixMilli(ts).UTC(), Partial: true})
	for i, t := range w.AssetsIDs {
		m.Tokens = append(m.Tokens, Token{ID: t, Cond: cond, Index: int32(i), Outcome: w.Outcomes[i]})
	}
	return nil
}

// addResolved records a resolution from the channel: the winner is the position of
// winning_asset_id in assets_ids (the outcome order); no winner is invalid.
func (m *Meta) addResolved(w *wsMsg, ts int64) error {
	cond, err := checkCond(w.Market)
	if err != nil {
		return err
	}
	r := Resolution{Cond: cond, Ts: time.UnixMilli(ts).UTC(), Invalid: true}
	if w.WinningAssetID != "" {
		for i, a := range w.AssetsIDs {
			if a == w.WinningAssetID {
				r.Winner, r.Invalid = int32(i), false
			}
		}
		if r.Invalid {
			return fmt.Errorf("winning_asset_id %s is not in assets_ids", w.WinningAssetID)
		}
	}
	m.Resolutions = append(m.Resolutions, r)
	return nil
}

func checkCond(s string) (string, error) {
	s = strings.ToLower(s)
	if len(s) != 66 || !strings.HasPrefix(s, "0x") {
		return "", fmt.Errorf("condition id %q is not 0x and 64 hex digits", s)
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", fmt.Errorf("condition id %q is not hex", s)
		}
	}
	return s, nil
}

// jsonStrings decodes the JSON-encoded string arrays Gamma nests inside its JSON
// ("[\"Yes\", \"No\"]"); empty is none.
func jsonStrings(s string, out *[]string) error {
	if strings.TrimSpace(s) == "" {
		*out = nil
		return nil
	}
	return json.Unmarshal([]byte(s), out)
}

// optTime parses Gamma's times (RFC 3339 with or without fraction, "2024-01-02
// 15:04:05+00", or a bare date); empty is zero.
func optTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05Z07", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Microsecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time", s)
}
