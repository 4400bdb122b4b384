package kv

import (
	"bytes"
	"math"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Parsing the sorted-set commands' numbers and ranges exactly as Redis
// 7.0 does: scores with string2d (ZADD, ZINCRBY, WEIGHTS), range ends with
// strtod on the C string (ZRANGEBYSCORE and relatives), lexicographic
// bounds as zslParseLexRangeItem.

// isCSpace is C's isspace.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// strtod converts all of b as C's strtod would, reporting ok=false when
// strtod would stop early or convert nothing; it returns overflow as ±Inf
// and underflow as 0 (strtod's ERANGE cases) with rangeErr set. NaN is
// refused.
func strtod(b []byte) (f float64, rangeErr, ok bool) {
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

// parseScore reads a score, increment or weight as Redis's string2d: no
// leading space, all of it, no NaN, no overflow or underflow to zero.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	f, rangeErr, ok := strtod(b)
	if !ok || rangeErr && (math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

// parseRangeScore reads one end of a score range as Redis's zslParseRange,
// with strtod on the C string: cut at a NUL, leading spaces skipped, an
// empty string is 0, out-of-range values saturate, NaN is refused.
func parseRangeScore(b []byte) (float64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	t := b
	for len(t) > 0 && isCSpace(t[0]) {
		t = t[1:]
	}
	f, _, ok := strtod(t)
	return f, ok
}

// parseScoreRange parses ZRANGEBYSCORE's min and max: "(" excludes an end.
func parseScoreRange(minArg, maxArg []byte) (r store.ScoreRange, ok bool) {
	parse := func(b []byte) (float64, bool, bool) {
		if len(b) > 0 && b[0] == '(' {
			f, ok := parseRangeScore(b[1:])
			return f, true, ok
		}
		f, ok := parseRangeScore(b)
		return f, false, ok
	}
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parse(minArg)
	r.Max, r.MaxEx, ok2 = parse(maxArg)
	return r, ok1 && ok2
}

// parseLexBound parses one end of a lexicographic range: "-", "+", "[x"
// or "(x". Like Redis, "-" and "+" are read as C strings.
func parseLexBound(b []byte) (store.LexBound, bool) {
	if len(b) == 0 {
		return store.LexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return store.LexBound{}, false
		}
		inf := 1
		if b[0] == '-' {
			inf = -1
		}
		return store.LexBound{Inf: inf, Ex: true}, true
	case '(':
		return store.LexBound{Value: b[1:], Ex: true}, true
	case '[':
		return store.LexBound{Value: b[1:]}, true
	}
	return store.LexBound{}, false
}

func parseLexRange(minArg, maxArg []byte) (r store.LexRange, ok bool) {
	var ok1, ok2 bool
	r.Min, ok1 = parseLexBound(minArg)
	r.Max, ok2 = parseLexBound(maxArg)
	return r, ok1 && ok2
}

// parseLong is getLongFromObjectOrReply.
func parseLong(b []byte) (int64, bool) { return ascii.ParseInt(b) }
