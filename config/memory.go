package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMemory parses a Redis memory value: a non-negative integer with an
// optional unit, b, k (1000), kb (1024), m, mb, g or gb, in any case, as in
// redis.conf ("100mb", "1gb").
func ParseMemory(s string) (int64, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mul    int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			lower, mul = strings.TrimSuffix(lower, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid memory value %q: want a non-negative number with an optional unit (b, k, kb, m, mb, g, gb)", s)
	}
	if n > (1<<63-1)/mul {
		return 0, fmt.Errorf("memory value %q overflows 64 bits", s)
	}
	return n * mul, nil
}
