package onchain

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Client speaks JSON-RPC 2.0 over HTTP to an EVM node. Transport failures, HTTP 429
// and 5xx answers and the rate-limit errors nodes return are retried with exponential
// backoff (honouring Retry-After); other JSON-RPC errors are returned to the caller.
type Client struct {
	URL       string
	HTTP      *http.Client
	Retries   int           // attempts after the first (default 5)
	Backoff   time.Duration // first backoff, doubled per attempt (default 500ms)
	BatchSize int           // calls per batched request (default 100)
	// Span is the first eth_getLogs range in blocks (default 2,000), MaxSpan its
	// ceiling when answers are small (default 100,000).
	Span, MaxSpan uint64

	requests atomic.Int64
	calls    atomic.Int64
	nextID   atomic.Int64
	// noBlockReceipts is set once the node answered that it has no
	// eth_getBlockReceipts (native.go then asks receipts one transaction at a time).
	noBlockReceipts atomic.Bool
	// noTraceBlock is set once the node answered that it has no trace_block
	// (traces.go then asks debug_traceBlockByHash).
	noTraceBlock atomic.Bool
}

// NewClient returns a client for url with a 30-second timeout per request.
func NewClient(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Requests is how many HTTP requests were made (a batch is one); Calls how many
// JSON-RPC calls they carried.
func (c *Client) Requests() int64 { return c.requests.Load() }
func (c *Client) Calls() int64    { return c.calls.Load() }

func (c *Client) retries() int {
	if c.Retries <= 0 {
		return 5
	}
	return c.Retries
}

func (c *Client) backoff(attempt int) time.Duration {
	b := c.Backoff
	if b <= 0 {
		b = 500 * time.Millisecond
	}
	return min(b<<attempt, 30*time.Second)
}

// RPCError is an error answer of the node.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// rateLimited reports the error answers nodes give when throttling (retried).
func (e *RPCError) rateLimited() bool {
	m := strings.ToLower(e.Message)
	return e.Code == 429 || strings.Contains(m, "rate limit") || strings.Contains(m, "too many requests") ||
		strings.Contains(m, "exceeded its") || strings.Contains(m, "capacity")
}

// Reverted reports an eth_call that reverted (or hit no code): the contract does not
// implement the function.
func (e *RPCError) Reverted() bool {
	m := strings.ToLower(e.Message)
	return e.Code == 3 || strings.Contains(m, "revert") || strings.Contains(m, "invalid opcode") || strings.Contains(m, "execution")
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// errHTTP is a failed exchange worth retrying (transport error, 429, 5xx).
type errHTTP struct {
	err        error
	status     int // 0: no answer (transport error, timeout)
	retryAfter time.Duration
}

func (e *errHTTP) Error() string { return e.err.Error() }
func (e *errHTTP) Unwrap() error { return e.err }

// post sends body once.
func (c *Client) post(ctx context.Context, body []byte) ([]byte, error) {
	c.requests.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// Endpoint URLs often carry an API key in the path or query: never print them.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("post %s: %w", Redact(c.URL), ue.Err)
		}
		return nil, &errHTTP{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, &errHTTP{err: err}
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return nil, &errHTTP{err: fmt.Errorf("http %d: %s", resp.StatusCode, firstLine(b)), status: resp.StatusCode, retryAfter: time.Duration(ra) * time.Second}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("http %d: %s", resp.StatusCode, firstLine(b))
	}
	return b, nil
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Call is one call of a batch: Out receives the result (when Err is nil).
type Call struct {
	Method string
	Params []any
	Out    any
	Err    error
}

// Batch sends calls in batched requests of BatchSize, each request retried as a whole
// on transport errors and rate limits. A call's own error answer is left in its Err;
// the returned error is a failed exchange.
func (c *Client) Batch(ctx context.Context, calls []*Call) error {
	bs := c.BatchSize
	if bs <= 0 {
		bs = 100
	}
	for i := 0; i < len(calls); i += bs {
		if err := c.batch(ctx, calls[i:min(i+bs, len(calls))], true); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) batch(ctx context.Context, calls []*Call, retry bool) error {
	reqs := make([]request, len(calls))
	byID := map[int64]*Call{}
	for i, cl := range calls {
		id := c.nextID.Add(1)
		params := cl.Params
		if params == nil {
			params = []any{}
		}
		reqs[i] = request{"2.0", id, cl.Method, params}
		byID[id] = cl
	}
	var body []byte
	var err error
	single := len(calls) == 1
	if single {
		body, err = json.Marshal(reqs[0])
	} else {
		body, err = json.Marshal(reqs)
	}
	if err != nil {
		return err
	}
	attempts := 1
	if retry {
		attempts += c.retries()
	}
	var last error
	for a := 0; a < attempts; a++ {
		if a > 0 {
			d := c.backoff(a - 1)
			var eh *errHTTP
			if errors.As(last, &eh) && eh.retryAfter > d {
				d = eh.retryAfter
			}
			if err := sleep(ctx, d); err != nil {
				return err
			}
		}
		c.calls.Add(int64(len(calls)))
		b, err := c.post(ctx, body)
		if err != nil {
			last = err
			var eh *errHTTP
			if errors.As(err, &eh) && ctx.Err() == nil {
				continue
			}
			return err
		}
		var resps []response
		if single && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			var r response
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("rpc answer: %w", err)
			}
			resps = []response{r}
		} else if err := json.Unmarshal(b, &resps); err != nil {
			// A node that refuses a batch answers one error object.
			var r response
			if json.Unmarshal(b, &r) == nil && r.Error != nil {
				if r.Error.rateLimited() {
					last = r.Error
					continue
				}
				return r.Error
			}
			return fmt.Errorf("rpc answer: %w", err)
		}
		limited := false
		answered := map[*Call]bool{}
		for _, r := range resps {
			cl := byID[r.ID]
			if cl == nil && single && len(resps) == 1 {
				cl = calls[0] // a node that does not echo the id
			}
			if cl == nil {
				continue
			}
			answered[cl] = true
			cl.Err = nil
			if r.Error != nil {
				cl.Err = r.Error
				if r.Error.rateLimited() {
					limited = true
				}
				continue
			}
			if cl.Out != nil {
				if err := json.Unmarshal(r.Result, cl.Out); err != nil {
					cl.Err = fmt.Errorf("%s answer: %w", cl.Method, err)
				}
			}
		}
		for _, cl := range calls {
			if !answered[cl] {
				cl.Err = fmt.Errorf("%s: no answer in the batch", cl.Method)
			}
		}
		if limited {
			last = errors.New("rate limited")
			continue
		}
		return nil
	}
	return fmt.Errorf("after %d attempts: %w", attempts, last)
}

// Call1 makes one call (retried as Batch does) and returns its error answer if any.
func (c *Client) Call1(ctx context.Context, method string, out any, params ...any) error {
	cl := &Call{Method: method, Params: params, Out: out}
	if err := c.batch(ctx, []*Call{cl}, true); err != nil {
		return err
	}
	return cl.Err
}

// Header is what the loader needs of a block.
type Header struct {
	Number     uint64
	Hash       string
	ParentHash string
	Time       int64
}

type rawHeader struct {
	Number     string `json:"number"`
	Hash       string `json:"hash"`
	ParentHash string `json:"parentHash"`
	Timestamp  string `json:"timestamp"`
}

func hexUint(s string) (uint64, error) {
	if !strings.HasPrefix(s, "0x") || len(s) < 3 {
		return 0, fmt.Errorf("bad quantity %q", s)
	}
	return strconv.ParseUint(s[2:], 16, 64)
}

func hexQ(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

func (r *rawHeader) header() (Header, error) {
	var h Header
	var err error
	if h.Number, err = hexUint(r.Number); err != nil {
		return h, err
	}
	ts, err := hexUint(r.Timestamp)
	if err != nil {
		return h, err
	}
	h.Time = int64(ts)
	if h.Hash, err = TxHash(r.Hash); err != nil {
		return h, err
	}
	if h.ParentHash, err = TxHash(r.ParentHash); err != nil {
		return h, err
	}
	return h, nil
}

// ParseHeader decodes an eth_getBlockByNumber result.
func ParseHeader(b []byte) (Header, error) {
	var r rawHeader
	if err := json.Unmarshal(b, &r); err != nil {
		return Header{}, err
	}
	return r.header()
}

// Headers fetches the headers of blocks (batched eth_getBlockByNumber without
// transactions). A block the node does not have is an error.
func (c *Client) Headers(ctx context.Context, blocks []uint64) (map[uint64]Header, error) {
	calls := make([]*Call, len(blocks))
	outs := make([]*json.RawMessage, len(blocks))
	for i, b := range blocks {
		outs[i] = new(json.RawMessage)
		calls[i] = &Call{Method: "eth_getBlockByNumber", Params: []any{hexQ(b), false}, Out: outs[i]}
	}
	if err := c.Batch(ctx, calls); err != nil {
		return nil, err
	}
	out := make(map[uint64]Header, len(blocks))
	for i, cl := range calls {
		if cl.Err != nil {
			return nil, fmt.Errorf("block %d: %w", blocks[i], cl.Err)
		}
		if len(*outs[i]) == 0 || string(*outs[i]) == "null" {
			return nil, fmt.Errorf("block %d: the node does not have it", blocks[i])
		}
		h, err := ParseHeader(*outs[i])
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", blocks[i], err)
		}
		out[blocks[i]] = h
	}
	return out, nil
}

// BlockNumber is the node's head.
func (c *Client) BlockNumber(ctx context.Context) (uint64, error) {
	var s string
	if err := c.Call1(ctx, "eth_blockNumber", &s); err != nil {
		return 0, err
	}
	return hexUint(s)
}

// Log is an eth_getLogs entry.
type Log struct {
	Address         string   `json:"address"`
	Topics          []string `json:"topics"`
	Data            string   `json:"data"`
	BlockNumber     string   `json:"blockNumber"`
	BlockHash       string   `json:"blockHash"`
	TransactionHash string   `json:"transactionHash"`
	LogIndex        string   `json:"logIndex"`
	Removed         bool     `json:"removed"`
	// BlockTimestamp is given by newer nodes (Erigon, Reth, recent Geth); when every
	// log of a block has it, the block's header is not fetched.
	BlockTimestamp string `json:"blockTimestamp,omitempty"`
}

// Log kinds that are not stored, counted in the summary.
const (
	SkipERC721  = "erc721 transfer"
	SkipRemoved = "removed log"
	SkipShape   = "transfer log of unknown shape"
)

// DecodeLog turns a Transfer log into a transfer. skip names why a log is not an
// ERC-20 transfer (ERC-721: four topics and no data; a log removed by a reorg; any
// other shape); err is a malformed field.
func DecodeLog(lg Log) (tr Transfer, skip string, err error) {
	if lg.Removed {
		return tr, SkipRemoved, nil
	}
	if len(lg.Topics) == 0 || !strings.EqualFold(lg.Topics[0], TransferTopic) {
		return tr, SkipShape, nil
	}
	data := strings.TrimPrefix(lg.Data, "0x")
	if len(data)%64 != 0 || !isHex(data) {
		return tr, "", fmt.Errorf("bad log data %q", lg.Data)
	}
	words := lg.Topics[1:]
	for i := 0; i < len(data); i += 64 {
		words = append(words[:len(words):len(words)], "0x"+data[i:i+64])
	}
	switch {
	case len(lg.Topics) == 4 && len(data) == 0:
		return tr, SkipERC721, nil
	case len(words) != 3:
		return tr, SkipShape, nil
	}
	if tr.Token, err = Address(lg.Address); err != nil {
		return tr, "", err
	}
	if tr.From, err = wordAddress(words[0]); err != nil {
		return tr, "", err
	}
	if tr.To, err = wordAddress(words[1]); err != nil {
		return tr, "", err
	}
	if tr.Value, err = ParseHexValue(words[2]); err != nil {
		return tr, "", err
	}
	if tr.TxHash, err = TxHash(lg.TransactionHash); err != nil {
		return tr, "", err
	}
	if tr.Block, err = hexUint(lg.BlockNumber); err != nil {
		return tr, "", err
	}
	li, err := hexUint(lg.LogIndex)
	if err != nil || li > 1<<31-1 {
		return tr, "", fmt.Errorf("bad logIndex %q", lg.LogIndex)
	}
	tr.LogIndex = int32(li)
	return tr, "", nil
}

// wordAddress reads an address from a 32-byte topic or data word (the low 20 bytes).
func wordAddress(w string) (string, error) {
	if len(w) != 66 || !strings.HasPrefix(w, "0x") || !isHex(w[2:]) {
		return "", fmt.Errorf("bad address word %q", w)
	}
	return Address("0x" + w[26:])
}

// GetLogs returns the Transfer logs of blocks [from, to] in one call (no retry: the
// caller adapts the range).
func (c *Client) GetLogs(ctx context.Context, from, to uint64) ([]Log, error) {
	var logs []Log
	cl := &Call{Method: "eth_getLogs", Params: []any{map[string]any{
		"fromBlock": hexQ(from), "toBlock": hexQ(to), "topics": []any{TransferTopic},
	}}, Out: &logs}
	if err := c.batch(ctx, []*Call{cl}, false); err != nil {
		return nil, err
	}
	return logs, cl.Err
}

// ERC-20 metadata selectors: the first four bytes of keccak256 of the signature.
const (
	selDecimals = "0x313ce567" // decimals()
	selSymbol   = "0x95d89b41" // symbol()
	selName     = "0x06fdde03" // name()
)

// TokenMeta reads decimals(), symbol() and name() of token in one batched request.
// A reverting (or empty) decimals() gives Decimals -1; a reverting symbol or name an
// empty one. Symbols and names returned as bytes32 (early tokens) are read up to
// their first zero byte.
func (c *Client) TokenMeta(ctx context.Context, token string) (Token, error) {
	t := Token{Address: token, Decimals: -1}
	var outs [3]string
	calls := make([]*Call, 3)
	for i, sel := range []string{selDecimals, selSymbol, selName} {
		calls[i] = &Call{Method: "eth_call", Params: []any{map[string]any{"to": token, "data": sel}, "latest"}, Out: &outs[i]}
	}
	if err := c.Batch(ctx, calls); err != nil {
		return t, err
	}
	// result returns a call's bytes; nil when it reverted or the contract has no code.
	result := func(i int) ([]byte, error) {
		var re *RPCError
		if errors.As(calls[i].Err, &re) && re.Reverted() {
			return nil, nil
		}
		if calls[i].Err != nil {
			return nil, calls[i].Err
		}
		b, err := hex.DecodeString(strings.TrimPrefix(outs[i], "0x"))
		if err != nil {
			return nil, fmt.Errorf("eth_call answer %q: %w", outs[i], err)
		}
		return b, nil
	}
	b, err := result(0)
	if err != nil {
		return t, err
	}
	if d, ok := abiUint8(b); ok {
		t.Decimals = d
	}
	for i, dst := range []*string{&t.Symbol, &t.Name} {
		b, err := result(i + 1)
		if err != nil {
			return t, err
		}
		*dst = ABIString(b)
	}
	return t, nil
}

// abiUint8 reads a uint8 return word; anything above 255 is not a decimals value.
func abiUint8(b []byte) (int, bool) {
	if len(b) < 32 {
		return 0, false
	}
	for _, x := range b[:31] {
		if x != 0 {
			return 0, false
		}
	}
	return int(b[31]), true
}

// ABIString decodes a string return value: the ABI's dynamic string (offset, length,
// bytes) or a bytes32 padded with zeros. Invalid UTF-8 and control characters are
// dropped; a result neither form fits gives "".
func ABIString(b []byte) string {
	if len(b) >= 64 {
		off := new32(b[:32])
		if off >= 0 && off+32 <= int64(len(b)) {
			n := new32(b[off : off+32])
			if n >= 0 && off+32+n <= int64(len(b)) {
				return clean(b[off+32 : off+32+n])
			}
		}
	}
	if len(b) == 32 {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return clean(b)
	}
	return ""
}

// new32 reads a 32-byte big-endian word as int64 (-1 when it does not fit).
func new32(w []byte) int64 {
	for _, x := range w[:24] {
		if x != 0 {
			return -1
		}
	}
	var v int64
	for _, x := range w[24:] {
		v = v<<8 | int64(x)
	}
	if v < 0 || v > 1<<32 {
		return -1
	}
	return v
}

func clean(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, s))
}

// Redact shows an endpoint without what may be a credential: scheme and host only
// (user info, path and query, where providers put API keys, become "...").
func Redact(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(endpoint)"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		out += "/..."
	}
	return out
}
