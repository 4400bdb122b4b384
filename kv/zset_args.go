package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Parsing the sorted-set commands' numbers and ranges exactly as Redis
// 7.0 does: scores with string2d (ZADD, ZINCRBY, WEIGHTS), range ends with
// strtod on the C string (ZRANGEBYSCORE and relatives), both read by
// store.ParseFloat; lexicographic bounds as zslParseLexRangeItem.

// parseScore reads a score, increment or weight as Redis's string2d.
func parseScore(b []byte) (float64, bool) { return store.ParseFloat(b, store.Double) }

// parseRangeScore reads one end of a score range as Redis's zslParseRange,
// after its '(': strtod on the C string.
func parseRangeScore(b []byte) (float64, bool) { return store.ParseFloat(b, store.RangeEnd) }

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
