package store

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
)

// Redis 7 reads a float argument in one of three ways, all of them C's
// strtod syntax over the whole argument (Go's strconv.ParseFloat, once hex
// without a binary exponent gets "p0" and '_' is refused), and differing in
// spaces, length, range and NUL bytes. ParseFloat is the one reader of all
// three; FloatRule names them.

// FloatRule is one of the ways Redis reads a float argument.
type FloatRule uint8

const (
	// LongDouble is string2ld (util.c): INCRBYFLOAT's and HINCRBYFLOAT's
	// increments and values, and the timeouts of blocking commands. All of
	// the argument, shorter than 5120 bytes (MAX_LONG_DOUBLE_CHARS), no
	// leading space, NaN refused, "inf" a number; a value strtold
	// overflows or underflows to zero is refused, but one a long double
	// holds beyond float64's range (1e400, 1e-400) is not.
	LongDouble FloatRule = iota
	// Double is string2d: sorted-set scores, ZINCRBY's increment, WEIGHTS.
	// As LongDouble, at any length and within double's range.
	Double
	// RangeEnd is strtod on the C string, as zslParseRange reads an end of
	// ZRANGEBYSCORE's range (its '(' already taken off): the argument ends
	// at its first NUL, leading spaces are skipped, an empty argument is 0,
	// and a value beyond double's range saturates (±inf, 0) instead of
	// being refused.
	RangeEnd
)

// maxFloatChars is Redis's MAX_LONG_DOUBLE_CHARS: string2ld refuses
// arguments of this length or more.
const maxFloatChars = 5 * 1024

// ParseFloat reads b as Redis reads a float argument under rule, and
// reports whether Redis accepts it. Under LongDouble, a value beyond
// float64's range is ±Inf and a nonzero one below it is ±5e-324 (the
// float64 nearest zero), so that only a zero argument reads as zero: a
// blocking timeout of 1e-400 is 1 ms, as in Redis, not "block for ever".
func ParseFloat(b []byte, rule FloatRule) (float64, bool) {
	f, _, ok := parseFloat(b, rule, false)
	return f, ok
}

// parseLongDouble reads b as string2ld does into a long double: a
// big.Float of longDoublePrec bits. An infinite argument ("inf") is errInf.
func parseLongDouble(b []byte) (*big.Float, error) {
	_, x, ok := parseFloat(b, LongDouble, true)
	switch {
	case !ok:
		return nil, ErrNotFloat
	case x.IsInf():
		return nil, errInf
	}
	return x, nil
}

// parseFloat is ParseFloat; under LongDouble with wide set it also returns
// the long double, which it otherwise reads only for a value beyond
// float64's range.
func parseFloat(b []byte, rule FloatRule, wide bool) (float64, *big.Float, bool) {
	switch rule {
	case RangeEnd:
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		if len(b) == 0 {
			return 0, nil, true // strtod converts nothing and stops at the end
		}
		for len(b) > 0 && isCSpace(b[0]) {
			b = b[1:]
		}
	case LongDouble:
		if len(b) >= maxFloatChars {
			return 0, nil, false
		}
	}
	if len(b) == 0 || isCSpace(b[0]) || bytes.IndexByte(b, '_') >= 0 {
		return 0, nil, false
	}
	text := b
	body := bytes.TrimLeft(b, "+-")
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if hex && !bytes.ContainsAny(body, "pP") {
		text = append(b[:len(b):len(b)], "p0"...)
	}
	f, err := strconv.ParseFloat(string(text), 64)
	outOfRange := false // strtod's ERANGE
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, nil, false
	case err != nil:
		outOfRange = true // an overflow: f is ±Inf
	case math.IsNaN(f):
		return 0, nil, false
	case f == 0:
		// ParseFloat rounds an underflow to zero silently.
		outOfRange = nonzeroMantissa(body, hex)
	}
	switch rule {
	case RangeEnd:
		return f, nil, true
	case Double:
		return f, nil, !outOfRange
	}
	return longDouble(text, f, outOfRange, wide)
}

// longDouble finishes reading text as strtold, given f and outOfRange,
// what strtod made of it; it reads the long double with math/big when wide
// is set or when a double could not hold the value.
func longDouble(text []byte, f float64, outOfRange, wide bool) (float64, *big.Float, bool) {
	switch {
	case !outOfRange && !wide:
		return f, nil, true
	case !outOfRange && math.IsInf(f, 0):
		return f, new(big.Float).SetInf(f < 0), true // "inf" itself
	case !outOfRange && f == 0:
		// Zero, whatever its exponent ("0e99999999999999999999", which
		// big.ParseFloat refuses).
		return f, new(big.Float).SetPrec(longDoublePrec).SetFloat64(f), true
	}
	x, _, err := big.ParseFloat(string(text), 0, longDoublePrec, big.ToNearestEven)
	if err != nil || outsideLongDouble(x) {
		return 0, nil, false
	}
	if f == 0 && x.Sign() != 0 {
		f = math.Copysign(math.SmallestNonzeroFloat64, float64(x.Sign()))
	}
	return f, x, true
}

// nonzeroMantissa reports whether the mantissa of body, a number without
// its sign, has a nonzero digit.
func nonzeroMantissa(body []byte, hex bool) bool {
	if hex {
		mant := body[2:]
		if i := bytes.IndexAny(mant, "pP"); i >= 0 {
			mant = mant[:i]
		}
		return bytes.ContainsAny(mant, "123456789abcdefABCDEF")
	}
	if i := bytes.IndexAny(body, "eE"); i >= 0 {
		body = body[:i]
	}
	return bytes.ContainsAny(body, "123456789")
}

// isCSpace is C's isspace.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// longDoublePrec is the mantissa width of the x87 80-bit long double Redis computes
// INCRBYFLOAT with; big.Float at this precision rounds exactly as it does.
// Its largest finite value is below 2^16384, its smallest nonzero one is
// 2^-16445.
const (
	longDoublePrec   = 64
	longDoubleMaxExp = 16384
	longDoubleMinExp = -16445
)

var errInf = errors.New("infinite")

// outsideLongDouble reports whether strtold overflows reading x, or
// underflows it to zero (half the smallest long double rounds to even,
// zero), both ERANGE, which string2ld refuses. An infinite x, or an
// inexact zero, is a finite argument beyond even big.Float's exponent range
// ("1e700000000", "1e-700000000").
func outsideLongDouble(x *big.Float) bool {
	if x.IsInf() {
		return true
	}
	if x.Sign() == 0 {
		return x.Acc() != big.Exact
	}
	var mant big.Float
	exp := x.MantExp(&mant) // |x| = |mant|·2^exp, |mant| in [0.5, 1)
	half := exp == longDoubleMinExp && mant.Abs(&mant).Cmp(big.NewFloat(0.5)) == 0
	return exp > longDoubleMaxExp || exp < longDoubleMinExp || half
}

// float64ToLongDouble widens f through its shortest decimal form, so a delta the user
// typed as "0.1" becomes 0.1L, as Redis's strtold would read it, not 0.1 as a double.
func float64ToLongDouble(f float64) *big.Float {
	var buf [32]byte
	x, _, err := big.ParseFloat(string(strconv.AppendFloat(buf[:0], f, 'g', -1, 64)), 10, longDoublePrec, big.ToNearestEven)
	if err != nil { // unreachable for finite f
		return new(big.Float).SetPrec(longDoublePrec).SetFloat64(f)
	}
	return x
}

// addLongDouble appends the INCRBYFLOAT result of cur (nil = 0) + delta to dst.
func addLongDouble(dst, cur []byte, delta *big.Float) ([]byte, error) {
	sum := delta
	if cur != nil {
		x, err := parseLongDouble(cur)
		if err == errInf {
			return dst, ErrNaNOrInf
		}
		if err != nil {
			return dst, ErrNotFloat
		}
		sum = new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(x, sum)
	}
	if sum.MantExp(nil) > longDoubleMaxExp {
		return dst, ErrNaNOrInf
	}
	return appendHuman(dst, sum), nil
}

// appendHuman formats x like Redis's ld2string LD_STR_HUMAN: "%.17Lf", then trailing
// zeros (and a bare '.') trimmed, and "-0" written as "0".
func appendHuman(dst []byte, x *big.Float) []byte {
	start := len(dst)
	dst = x.Append(dst, 'f', 17)
	if bytes.IndexByte(dst[start:], '.') >= 0 {
		dst = bytes.TrimRight(dst, "0")
		dst = bytes.TrimSuffix(dst, []byte("."))
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// AppendFloat appends f formatted as INCRBYFLOAT replies: the long double nearest f's
// shortest decimal form, printed with 17 decimals and trailing zeros trimmed, so 10.6
// gives "10.6" and 3e3 gives "3000". Infinities are "inf" and "-inf".
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return appendHuman(dst, float64ToLongDouble(f))
}
