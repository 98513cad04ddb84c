//go:build duckdb_arrow

package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTextFits: the word-at-a-time check says what the rule says (no NUL byte, valid
// UTF-8) for every position of a NUL, a non-ASCII byte and an invalid sequence, at
// lengths around the word size, and allocates nothing.
func TestTextFits(t *testing.T) {
	rule := func(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }
	var cases []string
	for n := 0; n <= 20; n++ {
		base := strings.Repeat("a", n)
		cases = append(cases, base)
		for i := 0; i < n; i++ {
			for _, c := range []string{"\x00", "\x80", "\xff", "é", "\x7f", "\x01"} {
				cases = append(cases, base[:i]+c+base[i+1:])
			}
		}
	}
	cases = append(cases, "0x"+strings.Repeat("ab", 20), "xyz:TSLA", "日本語", "\xe6\x97", "a\u0000b")
	for _, s := range cases {
		if got, want := textFits(s), rule(s); got != want {
			t.Errorf("textFits(%q) = %v, want %v", s, got, want)
		}
	}
	s := "0x" + strings.Repeat("ab", 32)
	if n := testing.AllocsPerRun(100, func() { textFits(s) }); n != 0 {
		t.Errorf("textFits allocates %v times", n)
	}
}
