package kv

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzFloatParsersMatchTheirPredecessors: the sorted sets' score and range
// readers and the blocking timeout, now rules of store.ParseFloat, give
// every argument the same verdict and the same value (to the bit) as the
// three readers of their own did before the fold, copied below as the
// oracle. The store package fuzzes INCRBYFLOAT's reader the same way.
func FuzzFloatParsersMatchTheirPredecessors(f *testing.F) {
	for _, c := range floatArgCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		same := func(what string, f float64, ok bool, g float64, oldOK bool) {
			if ok != oldOK || ok && math.Float64bits(f) != math.Float64bits(g) {
				t.Fatalf("%s %q: %v %v, before the fold %v %v", what, b, f, ok, g, oldOK)
			}
		}
		f, ok := parseScore(b)
		g, oldOK := oldParseScore(b)
		same("score", f, ok, g, oldOK)
		f, ok = parseRangeScore(b)
		g, oldOK = oldParseRangeScore(b)
		same("range end", f, ok, g, oldOK)
		ms, errText := parseTimeout(b)
		oldMS, oldErrText := oldParseTimeout(b)
		if ms != oldMS || errText != oldErrText {
			t.Fatalf("timeout %q: %d %q, before the fold %d %q", b, ms, errText, oldMS, oldErrText)
		}
	})
}

// The readers as they were before the fold: kv/zset_args.go's and
// kv/blocking.go's.

func oldIsCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func oldStrtod(b []byte) (f float64, rangeErr, ok bool) {
	if len(b) == 0 || bytes.IndexByte(b, '_') >= 0 {
		return 0, false, false
	}
	s := string(b)
	body := bytes.TrimLeft(b, "+-")
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if hex && !bytes.ContainsAny(body, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return f, true, true
		}
		return 0, false, false
	}
	if math.IsNaN(f) {
		return 0, false, false
	}
	if f == 0 {
		// Go rounds an underflow to zero silently; strtod reports it.
		mant := body
		if hex {
			mant = mant[2:]
			if i := bytes.IndexAny(mant, "pP"); i >= 0 {
				mant = mant[:i]
			}
			return f, bytes.ContainsAny(mant, "123456789abcdefABCDEF"), true
		}
		if i := bytes.IndexAny(mant, "eE"); i >= 0 {
			mant = mant[:i]
		}
		return f, bytes.ContainsAny(mant, "123456789"), true
	}
	return f, false, true
}

func oldParseScore(b []byte) (float64, bool) {
	if len(b) == 0 || oldIsCSpace(b[0]) {
		return 0, false
	}
	f, rangeErr, ok := oldStrtod(b)
	if !ok || rangeErr && (math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

func oldParseRangeScore(b []byte) (float64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	t := b
	for len(t) > 0 && oldIsCSpace(t[0]) {
		t = t[1:]
	}
	f, _, ok := oldStrtod(t)
	return f, ok
}

func oldParseTimeout(b []byte) (ms int64, errText string) {
	if len(b) == 0 || len(b) >= 5*1024 || strings.ContainsRune(" \t\n\v\f\r", rune(b[0])) || slices.Contains(b, '_') {
		return 0, errTimeoutNotFloat
	}
	s := string(b)
	body := strings.TrimLeft(s, "+-")
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if math.IsNaN(f) || err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errTimeoutNotFloat
	}
	if _, underflow, _ := oldStrtod(b); err != nil || f == 0 && underflow {
		// Out of float64's range (ParseFloat rounds an underflow to zero
		// silently): a long double may still hold it.
		x, _, berr := big.ParseFloat(s, 0, 64, big.ToNearestEven)
		if berr != nil || x.IsInf() {
			return 0, errTimeoutNotFloat
		}
		if x.Sign() == 0 && x.Acc() == big.Exact {
			return 0, ""
		}
		var mant big.Float
		exp := x.MantExp(&mant)
		if x.Sign() == 0 || exp > 16384 || exp < -16445 || exp == -16445 && mant.Abs(&mant).Cmp(big.NewFloat(0.5)) == 0 {
			return 0, errTimeoutNotFloat // strtold's ERANGE
		}
		if exp > 0 {
			return 0, errTimeoutNegative // overflows the conversion
		}
		if x.Sign() > 0 {
			return 1, "" // a tiny positive timeout: rounded up to 1 ms
		}
		return 0, ""
	}
	ms64 := math.Ceil(f * 1000)
	if math.IsInf(ms64, 0) || ms64 >= math.MaxInt64 || ms64 < math.MinInt64 {
		return 0, errTimeoutNegative
	}
	if ms64 < 0 {
		return 0, errTimeoutNegative
	}
	return int64(ms64), ""
}
