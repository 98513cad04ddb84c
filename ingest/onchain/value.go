// Package onchain loads real EVM data into the lake's on-chain tables: Ethereum-ETL CSV
// exports and any JSON-RPC node (eth_getLogs for ERC-20 Transfer events, blocks for
// timestamps, eth_call for token metadata), hourly price files, labels and ENS names,
// and a follower that keeps a chain current behind a confirmation depth, rewinding
// what a reorganisation replaced. Every row goes through ingest.Stage, so a re-ingest
// is idempotent and a failed run changes nothing.
package onchain

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Chains are the chains the lake's on-chain routes serve.
var Chains = []string{"ethereum", "bsc", "base"}

// ValidChain reports whether c is one of Chains.
func ValidChain(c string) bool {
	for _, x := range Chains {
		if x == c {
			return true
		}
	}
	return false
}

// ZeroAddress stands for the chain's native coin in token_address.
const ZeroAddress = "0x0000000000000000000000000000000000000000"

// TransferTopic is keccak256("Transfer(address,address,uint256)"), topic 0 of an
// ERC-20 (and ERC-721) Transfer event.
const TransferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// hexID checks that s is 0x plus n hex digits and returns it lower-case.
func hexID(what, s string, n int) (string, error) {
	if len(s) != n+2 || (s[:2] != "0x" && s[:2] != "0X") || !isHex(s[2:]) {
		return "", fmt.Errorf("bad %s %q (want 0x and %d hex digits)", what, s, n)
	}
	// Most exports are lower-case already; avoid the copy then.
	for i := 2; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'F' {
			return "0x" + strings.ToLower(s[2:]), nil
		}
	}
	if s[1] == 'X' {
		return "0x" + s[2:], nil
	}
	return s, nil
}

// Address checks an EVM address and returns it lower-case.
func Address(s string) (string, error) { return hexID("address", s, 40) }

// TxHash checks a transaction (or block) hash and returns it lower-case.
func TxHash(s string) (string, error) { return hexID("hash", s, 64) }

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Value is a uint256 token amount: small values (below 2^64) without allocation.
type Value struct {
	small uint64
	big   *big.Int // nil when the value fits small
}

// ParseValue parses a raw amount written as a decimal integer string (Ethereum-ETL's
// value column). Anything but digits, or a value of 2^256 or more, is an error.
func ParseValue(s string) (Value, error) {
	if s == "" {
		return Value{}, errors.New("empty value")
	}
	if len(s) <= 19 {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil || s[0] == '+' {
			return Value{}, fmt.Errorf("bad value %q (want a non-negative integer)", s)
		}
		return Value{small: u}, nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return Value{}, fmt.Errorf("bad value %q (want a non-negative integer)", s)
		}
	}
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Value{}, fmt.Errorf("bad value %q", s)
	}
	return valueOf(b)
}

// ParseHexValue parses a 0x hex quantity or a 32-byte ABI word (a log's data).
func ParseHexValue(s string) (Value, error) {
	if len(s) < 3 || s[:2] != "0x" || !isHex(s[2:]) {
		return Value{}, fmt.Errorf("bad hex value %q", s)
	}
	h := strings.TrimLeft(s[2:], "0")
	if len(h) <= 16 {
		u, err := strconv.ParseUint("0"+h, 16, 64)
		if err != nil {
			return Value{}, fmt.Errorf("bad hex value %q", s)
		}
		return Value{small: u}, nil
	}
	b, ok := new(big.Int).SetString(h, 16)
	if !ok {
		return Value{}, fmt.Errorf("bad hex value %q", s)
	}
	return valueOf(b)
}

func valueOf(b *big.Int) (Value, error) {
	if b.Cmp(maxUint256) > 0 {
		return Value{}, fmt.Errorf("value %s does not fit 256 bits", b)
	}
	if b.IsUint64() {
		return Value{small: b.Uint64()}, nil
	}
	return Value{big: b}, nil
}

// ValueFromBig wraps b (tests, balances).
func ValueFromBig(b *big.Int) Value {
	if b.IsUint64() {
		return Value{small: b.Uint64()}
	}
	return Value{big: new(big.Int).Set(b)}
}

// String is the exact decimal integer (value_raw).
func (v Value) String() string {
	if v.big != nil {
		return v.big.String()
	}
	return strconv.FormatUint(v.small, 10)
}

// Big returns the value as a new big.Int.
func (v Value) Big() *big.Int {
	if v.big != nil {
		return new(big.Int).Set(v.big)
	}
	return new(big.Int).SetUint64(v.small)
}

// IsZero reports a zero value.
func (v Value) IsZero() bool { return v.big == nil && v.small == 0 }

var pow10 = func() []*big.Int {
	p := make([]*big.Int, 256)
	p[0] = big.NewInt(1)
	for i := 1; i < len(p); i++ {
		p[i] = new(big.Int).Mul(p[i-1], big.NewInt(10))
	}
	return p
}()

// Amount is the value in whole tokens, value / 10^decimals, as the nearest float64: an
// exact integer below 2^53 divided once by 10^decimals, otherwise the exact rational
// rounded once (math/big), so no value near 2^256 overflows or loses more than the
// final rounding. The demo generator computes amounts the same way, so a lake loaded
// from a node holds the same doubles as one generated.
func (v Value) Amount(decimals int) float64 {
	if decimals < 0 || decimals >= len(pow10) {
		decimals = 0
	}
	// 10^22 is the largest power of ten a float64 holds exactly.
	if v.big == nil && v.small < 1<<53 && decimals <= 22 {
		return float64(v.small) / math.Pow10(decimals)
	}
	f, _ := new(big.Rat).SetFrac(v.Big(), pow10[decimals]).Float64()
	return f
}
