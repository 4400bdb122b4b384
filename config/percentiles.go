package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// percentilesKind is latency-tracking-info-percentiles' kind: numbers from
// 0 to 100 separated by spaces, as Redis 7.0 takes them; the canonical
// form writes each as Redis does ("99.0" is "99").
type percentilesKind struct{}

// Redis's reasons, as it writes them.
var (
	errPercentileRange = errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
	//lint:ignore ST1005 Redis's text, which clients compare
	errPercentileParse = errors.New("Invalid latency-tracking-info-percentiles parameters")
)

// Parse implements Kind.
func (percentilesKind) Parse(s string) (string, error) {
	var ps []float64
	for _, f := range strings.Fields(s) {
		x, err := parseCDouble(f)
		if err != nil || math.IsNaN(x) {
			return "", errPercentileParse
		}
		if x < 0 || x > 100 {
			return "", errPercentileRange
		}
		ps = append(ps, x)
	}
	return FormatPercentiles(ps), nil
}

// parseCDouble reads f as C's strtod does for Redis's string2d: decimal or
// hexadecimal (whose exponent C lets go unwritten), an overflow or an
// underflow to zero being an error.
func parseCDouble(f string) (float64, error) {
	digits, exp := strings.TrimLeft(f, "+-"), "eE"
	if len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X") {
		digits, exp = digits[2:], "pP"
		if !strings.ContainsAny(digits, exp) {
			f += "p0"
		}
	}
	x, err := strconv.ParseFloat(f, 64)
	if err == nil && x == 0 {
		if i := strings.IndexAny(digits, exp); i >= 0 {
			digits = digits[:i]
		}
		if strings.ContainsAny(digits, "123456789abcdefABCDEF") {
			return 0, strconv.ErrRange // Go rounds an underflow to 0 without saying so
		}
	}
	return x, err
}

// Values implements Kind.
func (percentilesKind) Values() string { return `numbers from 0 to 100, e.g. "50 99 99.9"` }

// FormatPercentiles writes percentiles as CONFIG GET
// latency-tracking-info-percentiles shows them.
func FormatPercentiles(ps []float64) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = FormatPercentile(p)
	}
	return strings.Join(parts, " ")
}

// FormatPercentile writes p as Redis does: "%f" without trailing zeros or
// a trailing point (99.900000 is 99.9, 50.000000 is 50).
func FormatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
