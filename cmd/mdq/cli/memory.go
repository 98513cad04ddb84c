package cli

import (
	"fmt"
	"strconv"
	"strings"

	"mdq/query"
)

// parseMemory reads --memory-limit: bytes with an optional KB/MB/GB/TB suffix (powers
// of 1024; KiB/MiB/GiB/TiB are the same) or a percentage of physical memory. "" is 0
// (the store's default).
func parseMemory(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("--memory-limit %q: use bytes with KB, MB, GB or TB, or a percentage such as 25%%", s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, bad
		}
		return int64(float64(query.DefaultMemoryLimit()*4) * f / 100), nil
	}
	u := strings.ToUpper(s)
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, suf.s)), suf.m
			break
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || f <= 0 || f*float64(mult) > 1<<62 {
		return 0, bad
	}
	return int64(f * float64(mult)), nil
}

// storeOptions are the query-store options every command shares: the memory budget.
func (c *Config) storeOptions(o query.Options) query.Options {
	o.Memory = c.Memory
	return o
}
