package kv

import (
	"bytes"
	"math"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// The SCAN family's shared parts: the cursor and options parser of SCAN,
// HSCAN, SSCAN and ZSCAN, the page writer of SCAN, HSCAN and SSCAN, and ZSCAN
// (whose scores need a writer of their own). SCAN itself is in keys.go,
// HSCAN in hash.go, SSCAN in set.go.

// scanArgs is the parsed options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanArgs struct {
	match []byte // nil matches everything
	count int
	typ   string
}

// parseScanArgs parses the options after the cursor: MATCH and COUNT, and
// for SCAN (withType) TYPE. COUNT defaults to 10 and is capped at
// MaxInt32; a pattern of "*" matches everything (nil). The collection
// scans parse them after the key's type was checked, as Redis does.
func parseScanArgs(args [][]byte, withType bool) (a scanArgs, errText string) {
	a.count = 10
	for i := 0; i < len(args); {
		remaining := len(args) - i
		switch {
		case ascii.EqualFold(args[i], "COUNT") && remaining >= 2:
			n, ok := ascii.ParseInt(args[i+1])
			if !ok {
				return a, errNotInteger
			}
			if n < 1 {
				return a, errSyntax
			}
			if n > math.MaxInt32 {
				n = math.MaxInt32
			}
			a.count = int(n)
		case ascii.EqualFold(args[i], "MATCH") && remaining >= 2:
			a.match = args[i+1]
			if len(a.match) == 1 && a.match[0] == '*' {
				a.match = nil
			}
		case withType && ascii.EqualFold(args[i], "TYPE") && remaining >= 2:
			a.typ = string(args[i+1])
		default:
			return a, errSyntax
		}
		i += 2
	}
	return a, ""
}

// parseCursor parses a SCAN cursor exactly as Redis's
// parseScanCursorOrReply does with strtoul(3) in base 10: the argument is a
// C string (cut at the first NUL), may not start with white space, may have
// one sign ("-1" wraps to 2^64-1), must have nothing after the digits and
// must not overflow. An empty argument converts nothing and leaves strtoul's
// end pointer on the terminating NUL, so Redis accepts it as cursor 0.
func parseCursor(b []byte) (uint64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 0, false
	}
	neg := false
	digits := b
	if digits[0] == '+' || digits[0] == '-' {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, false // no conversion: the end pointer stays on the sign
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// writeScanPage writes a scan reply: the next cursor and the elements
// (flat, so pairs for HSCAN). SCAN, HSCAN and SSCAN answer with it, and
// ZSCAN of a missing key.
func writeScanPage(cl *client, next uint64, elems [][]byte) {
	var num [20]byte
	cl.writeArray(2)
	cl.writeBulk(strconv.AppendUint(num[:0], next, 10))
	cl.writeArray(len(elems))
	for _, e := range elems {
		cl.writeBulk(e)
	}
}

func cmdZScan(h *Handler, cl *client, args [][]byte) {
	scanCollection(cl, args, store.KindZSet, func(z *store.ZSet, cursor uint64, a scanArgs) {
		writeZScan(cl, z, cursor, a.count, a.match)
	})
}

// writeZScan writes one ZSCAN page. Scores are written as Redis's scan
// does: from a listpack as the text it stores (an integral score within
// ±2^62 as an integer), from a skiplist as %.17g.
func writeZScan(cl *client, z *store.ZSet, cursor uint64, count int, pattern []byte) {
	listpack := z.Encoding() == "listpack"
	var num [32]byte
	var elems [][]byte // member, score text; the members stay valid under the read lock
	var scores []byte
	var ends []int
	next := z.Scan(cursor, count, func(m []byte, s float64) {
		if pattern != nil && !store.Match(pattern, m) {
			return
		}
		elems = append(elems, m)
		if listpack && s == math.Trunc(s) && s >= -(1<<62) && s <= 1<<62 {
			scores = strconv.AppendInt(scores, int64(s), 10)
		} else {
			scores = append(scores, appendScore(num[:0], s)...)
		}
		ends = append(ends, len(scores))
	})
	cl.writeArray(2)
	cl.writeBulk(strconv.AppendUint(num[:0], next, 10))
	cl.writeArray(2 * len(elems))
	start := 0
	for i, m := range elems {
		cl.writeBulk(m)
		cl.writeBulk(scores[start:ends[i]])
		start = ends[i]
	}
}
