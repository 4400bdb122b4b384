package store

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
)

// maxFloatChars is Redis's MAX_LONG_DOUBLE_CHARS: longer float strings are rejected.
const maxFloatChars = 5 * 1024

// floatSyntax checks b against what Redis's string2ld accepts (strtold consuming the whole
// string, no leading space, no NaN) and returns it in a form big.ParseFloat and
// strconv.ParseFloat read the same way (hex without a binary exponent gets "p0").
func floatSyntax(b []byte) (string, bool) {
	if len(b) == 0 || len(b) >= maxFloatChars {
		return "", false
	}
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return "", false
	}
	if bytes.IndexByte(b, '_') >= 0 {
		return "", false
	}
	s := string(b)
	body := bytes.TrimLeft(b, "+-")
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') &&
		!bytes.ContainsAny(body, "pP") {
		s += "p0"
	}
	return s, true
}

// ParseFloat parses b with the rules of Redis's string2ld: no surrounding spaces, "inf"
// accepted, NaN rejected, overflow and underflow to zero rejected. Values beyond float64's
// range (which a long double would hold) are rejected too.
func ParseFloat(b []byte) (float64, bool) {
	s, ok := floatSyntax(b)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// longDoublePrec is the mantissa width of the x87 80-bit long double Redis computes
// INCRBYFLOAT with; big.Float at this precision rounds exactly as it does.
const (
	longDoublePrec   = 64
	longDoubleMaxExp = 16384
)

var errInf = errors.New("infinite")

// parseLongDouble reads b as strtold would into a 64-bit-mantissa big.Float.
func parseLongDouble(b []byte) (*big.Float, error) {
	s, ok := floatSyntax(b)
	if !ok {
		return nil, ErrNotFloat
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && math.IsInf(f, 0) {
		return nil, errInf
	} else if err == nil && math.IsNaN(f) {
		return nil, ErrNotFloat
	}
	x, _, err := big.ParseFloat(s, 0, longDoublePrec, big.ToNearestEven)
	if err != nil {
		return nil, ErrNotFloat
	}
	if x.MantExp(nil) > longDoubleMaxExp {
		// Beyond the long double range: strtold overflows (ERANGE), which
		// string2ld refuses.
		return nil, ErrNotFloat
	}
	return x, nil
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
