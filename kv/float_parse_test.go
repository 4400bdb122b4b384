package kv

import (
	"strconv"
	"strings"
	"testing"
)

// floatArgCases are float arguments as Redis 7.0 reads them in the three
// places kv reads floats: a sorted-set score (ZADD, ZINCRBY, WEIGHTS:
// string2d), one end of a score range (ZRANGEBYSCORE and relatives: strtod
// on the C string, as zslParseRange) and a blocking timeout in seconds
// (BLPOP and relatives: string2ld, then milliseconds rounded up). "err"
// is refused; a timeout is its milliseconds, "not a float" or "negative",
// after Redis's two errors. Every verdict was checked against
// redis-server 7.0.15 (float_diff_test.go sends these rows to it).
var floatArgCases = []struct {
	in              string
	score, rangeEnd string // "err", or the value as strconv 'g' -1 writes it
	timeout         string
}{
	{"1", "1", "1", "1000"},
	{"-1.5", "-1.5", "-1.5", "negative"},
	{"+1", "1", "1", "1000"},
	{".5", "0.5", "0.5", "500"},
	{"5.", "5", "5", "5000"},
	{"1e3", "1000", "1000", "1000000"},
	{"1E+3", "1000", "1000", "1000000"},
	{"0", "0", "0", "0"},
	{"-0", "-0", "-0", "0"},
	{"0.0001", "0.0001", "0.0001", "1"}, // rounded up to a millisecond
	{"-0.0001", "-0.0001", "-0.0001", "0"},
	// Hex, as strtod reads it, with or without a binary exponent.
	{"0x10", "16", "16", "16000"},
	{"0x1p3", "8", "8", "8000"},
	{"0X1P-2", "0.25", "0.25", "250"},
	{"0x1.8", "1.5", "1.5", "1500"},
	{"0x", "err", "err", "not a float"},
	// Infinities are numbers (a timeout of inf overflows the conversion).
	{"inf", "+Inf", "+Inf", "negative"},
	{"+inf", "+Inf", "+Inf", "negative"},
	{"-inf", "-Inf", "-Inf", "negative"},
	{"Infinity", "+Inf", "+Inf", "negative"},
	{"-INFINITY", "-Inf", "-Inf", "negative"},
	{"infinit", "err", "err", "not a float"},
	{"nan", "err", "err", "not a float"},
	{"NaN", "err", "err", "not a float"},
	{"-nan", "err", "err", "not a float"},
	// Spaces: only a range end skips leading ones (strtod does, string2d
	// and string2ld refuse them); trailing ones stop every parser early.
	{" 1", "err", "1", "not a float"},
	{"\t1", "err", "1", "not a float"},
	{"\v1", "err", "1", "not a float"},
	{"1 ", "err", "err", "not a float"},
	{" ", "err", "err", "not a float"},
	// An empty range end is 0: strtod converts nothing and stops at the end.
	{"", "err", "0", "not a float"},
	// A range end is a C string: it ends at a NUL.
	{"1\x00", "err", "1", "not a float"},
	{"\x001", "err", "0", "not a float"},
	// Not numbers in C, though Go or math/big read some of them.
	{"1e", "err", "err", "not a float"},
	{"1,5", "err", "err", "not a float"},
	{"abc", "err", "err", "not a float"},
	{"1_000", "err", "err", "not a float"},
	{"0x1_0", "err", "err", "not a float"},
	{"1p3", "err", "err", "not a float"},
	{"0b1", "err", "err", "not a float"},
	{"0o7", "err", "err", "not a float"},
	{"(1", "err", "err", "not a float"}, // the '(' is parseScoreRange's
	// Beyond double's range: a score is refused, a range end saturates, a
	// timeout is a long double (string2ld), refused only beyond its range.
	{"1e400", "err", "+Inf", "negative"},
	{"-1e400", "err", "-Inf", "negative"},
	{"1.8e308", "err", "+Inf", "negative"},
	{"1e5000", "err", "+Inf", "not a float"},
	{"1e700000000", "err", "+Inf", "not a float"}, // beyond big.Float's exponents too
	{"-1e-700000000", "err", "-0", "not a float"},
	{"0e-700000000", "0", "0", "0"},
	{"0E10000000000000000000", "0", "0", "0"},
	{"1E-10000000000000000000", "err", "0", "not a float"},
	{"1e-400", "err", "0", "1"},
	{"-1e-400", "err", "-0", "0"},
	{"1e-5000", "err", "0", "not a float"},
	{"4.9e-324", "5e-324", "5e-324", "1"},
	{"2e-324", "err", "0", "1"},
	{"0x1p-16445", "err", "0", "1"},           // the smallest long double
	{"0x1p-16446", "err", "0", "not a float"}, // half of it rounds to zero
	{"9223372036854776", "9.223372036854776e+15", "9.223372036854776e+15", "negative"},
	// string2ld takes at most 5119 bytes; string2d and strtod any length.
	{"1." + strings.Repeat("0", 5117), "1", "1", "1000"},
	{"1." + strings.Repeat("0", 5118), "1", "1", "not a float"},
	{strings.Repeat("1", 5119), "err", "+Inf", "not a float"},
}

func TestFloatArgumentsParseAsInRedis(t *testing.T) {
	show := func(f float64, ok bool) string {
		if !ok {
			return "err"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	for _, c := range floatArgCases {
		name := c.in
		if len(name) > 24 {
			name = name[:24] + "..."
		}
		if got := show(parseScore([]byte(c.in))); got != c.score {
			t.Errorf("score %q = %s, want %s", name, got, c.score)
		}
		if got := show(parseRangeScore([]byte(c.in))); got != c.rangeEnd {
			t.Errorf("range end %q = %s, want %s", name, got, c.rangeEnd)
		}
		ms, errText := parseTimeout([]byte(c.in))
		got := strconv.FormatInt(ms, 10)
		switch errText {
		case errTimeoutNotFloat:
			got = "not a float"
		case errTimeoutNegative:
			got = "negative"
		}
		if got != c.timeout {
			t.Errorf("timeout %q = %s, want %s", name, got, c.timeout)
		}
	}
}

func TestScoreRangeExclusiveEnds(t *testing.T) {
	for _, c := range []struct {
		min, max string
		want     string // "err" or min,minEx,max,maxEx
	}{
		{"1", "2", "1,false,2,false"},
		{"(1", "(2", "1,true,2,true"},
		{"(-inf", "+inf", "-Inf,true,+Inf,false"},
		{"(", "(", "0,true,0,true"},
		{"( 1", "(\x002", "1,true,0,true"},
		{"((1", "2", "err"},
		{"1", "nan", "err"},
	} {
		r, ok := parseScoreRange([]byte(c.min), []byte(c.max))
		got := "err"
		if ok {
			got = strings.Join([]string{
				strconv.FormatFloat(r.Min, 'g', -1, 64), strconv.FormatBool(r.MinEx),
				strconv.FormatFloat(r.Max, 'g', -1, 64), strconv.FormatBool(r.MaxEx),
			}, ",")
		}
		if got != c.want {
			t.Errorf("range %q %q = %s, want %s", c.min, c.max, got, c.want)
		}
	}
}

// FloatArgInputs lists floatArgCases' arguments for float_diff_test.go,
// which sends them to redis-server and to Shoal.
var FloatArgInputs = func() []string {
	in := make([]string, len(floatArgCases))
	for i, c := range floatArgCases {
		in[i] = c.in
	}
	return in
}()
