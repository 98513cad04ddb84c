// Package sql holds the hand-written SQL of every query, one file per route, embedded
// into the binary. Parameters are always bound ($1, $2, ...), never pasted into the text.
package sql

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed */*.sql
var files embed.FS

// MustRead returns the text of name ("predmkt/ohlcv.sql") and panics if it is absent,
// so a missing file fails at init rather than at the first request.
func MustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("sql: missing " + name)
	}
	return string(b)
}

// Names lists every embedded file, sorted.
func Names() []string {
	var out []string
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
