package kv

import (
	"bytes"

	"github.com/shoalkv/shoal/internal/ascii"
)

// SORT and SORT_RO: Redis 7.0's sort of a list, set or sorted set's
// elements, by themselves or by the values of other keys (BY), returning
// them or other keys' values (GET), or storing the result as a list
// (STORE). sort_run.go loads, weighs, orders and writes; this file holds
// the table entries and the parse.
//
// SORT ... STORE is logged as its effect: DEL of the destination, then
// RPUSHes of what it holds now. Redis propagates the SORT itself; a replay
// of it would read the BY and GET keys, which a replay keeps after they
// expired, and a set's order under BY nosort, which need not be the
// primary's.
var _ = registerFamily(family{commands: []*command{
	{
		name: "sort", arity: -2, fn: cmdSort, log: logEffect, keysOf: sortKeys, destFlags: "OW update",
		flags: "write denyoom movablekeys", acl: "@write @set @sortedset @list @slow @dangerous",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{
			{flags: "RO access", index: 1, keyStep: 1},
			sortPatternKeys,
			{notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array", flags: "OW update", unknown: true},
		},
		doc: commandDoc{"Sort the elements in a list, set or sorted set", "1.0.0", "generic", sortComplexity},
	},
	{
		name: "sort_ro", arity: -2, fn: cmdSortRO, keysOf: sortROKeys,
		flags: "readonly movablekeys", acl: "@read @set @sortedset @list @slow @dangerous",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{
			{flags: "RO access", index: 1, keyStep: 1},
			sortPatternKeys,
		},
		doc: commandDoc{"Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0", "generic", sortComplexity},
	},
}})

var sortPatternKeys = keySpec{
	notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
	flags: "RO access", unknown: true,
}

const sortComplexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N)."

// Reply texts of SORT.
const (
	errSortScores = "ERR One or more scores can't be converted into double"
	errSortByACL  = "ERR BY option of SORT denied due to insufficient ACL permissions."
	errSortGetACL = "ERR GET option of SORT denied due to insufficient ACL permissions."
)

// sortKeys finds SORT's keys as Redis's sortGetKeys: the source, and the
// argument after the last STORE, skipping the arguments of LIMIT, GET and
// BY on the way.
func sortKeys(dst []int, args [][]byte) []int {
	dst = append(dst, 1)
	at := 0
	for i := 2; i < len(args); i++ {
		switch {
		case ascii.EqualFold(args[i], "limit"):
			i += 2
		case ascii.EqualFold(args[i], "get"), ascii.EqualFold(args[i], "by"):
			i++
		case ascii.EqualFold(args[i], "store") && i+1 < len(args):
			at = i + 1 // the argument is looked at again, as Redis does
		}
	}
	if at > 0 {
		dst = append(dst, at)
	}
	return dst
}

// sortROKeys is SORT_RO's key: the source (its other spec is unknown).
func sortROKeys(dst []int, _ [][]byte) []int { return append(dst, 1) }

// sortQuery is one SORT's options, parsed.
type sortQuery struct {
	desc, alpha bool
	dontSort    bool // BY without '*' (sticky, as in Redis, whatever BY comes after)
	by          *sortPattern
	gets        []sortPattern
	limitStart  int64
	limitCount  int64 // -1: to the end
	store       []byte
	storeAt     int // position of the STORE key in args, 0 without
}

// parseSort reads SORT's options in Redis's order: the first error is
// the reply, before the source is looked at.
func parseSort(cl *client, cmd *command, args [][]byte, readOnly bool) (q sortQuery, errText string) {
	q.limitCount = -1
	keyAccess := -1 // whether the user reads any key: asked once, when BY or GET needs it
	anyKey := func() bool {
		if keyAccess < 0 {
			keyAccess = int(boolInt(cl.readsAnyKey(cmd, args)))
		}
		return keyAccess == 1
	}
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case ascii.EqualFold(a, "asc"):
			q.desc = false
		case ascii.EqualFold(a, "desc"):
			q.desc = true
		case ascii.EqualFold(a, "alpha"):
			q.alpha = true
		case ascii.EqualFold(a, "limit") && left >= 2:
			start, ok1 := ascii.ParseInt(args[j+1])
			count, ok2 := ascii.ParseInt(args[j+2])
			if !ok1 || !ok2 {
				return q, errNotInteger
			}
			q.limitStart, q.limitCount = start, count
			j += 2
		case !readOnly && ascii.EqualFold(a, "store") && left >= 1:
			q.store, q.storeAt = args[j+1], j+1
			j++
		case ascii.EqualFold(a, "by") && left >= 1:
			p := parseSortPattern(args[j+1])
			q.by = &p
			if p.noStar {
				q.dontSort = true
			} else if !anyKey() {
				return q, errSortByACL
			}
			j++
		case ascii.EqualFold(a, "get") && left >= 1:
			if !anyKey() {
				return q, errSortGetACL
			}
			q.gets = append(q.gets, parseSortPattern(args[j+1]))
			j++
		default:
			return q, errSyntax
		}
	}
	return q, ""
}

// sortPattern is a BY or GET pattern, split as Redis's lookupKeyByPattern
// reads it: C string functions find the '*' and the "->", so they look no
// further than a NUL byte, while the key and field are cut from the whole
// argument.
type sortPattern struct {
	self    bool // "#": the element itself
	noStar  bool // no '*': names no key
	prefix  []byte
	suffix  []byte
	field   []byte // after "->": the key is a hash, the value its field
	isField bool
}

func parseSortPattern(p []byte) sortPattern {
	if len(p) > 0 && p[0] == '#' && (len(p) == 1 || p[1] == 0) {
		return sortPattern{self: true}
	}
	c := p // the C string
	if i := bytes.IndexByte(c, 0); i >= 0 {
		c = c[:i]
	}
	star := bytes.IndexByte(c, '*')
	if star < 0 {
		return sortPattern{noStar: true}
	}
	sp := sortPattern{prefix: p[:star]}
	end := len(p)
	if f := bytes.Index(c[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(c) {
		at := star + 1 + f
		sp.field, sp.isField = p[at+2:], true
		end = at
	}
	sp.suffix = p[star+1 : end]
	return sp
}

// key appends to dst the key the pattern names for element e.
func (sp *sortPattern) key(dst, e []byte) []byte {
	dst = append(dst, sp.prefix...)
	dst = append(dst, e...)
	return append(dst, sp.suffix...)
}

func cmdSort(h *Handler, cl *client, args [][]byte) {
	h.sort(cl, commands["sort"], args, false)
}

func cmdSortRO(h *Handler, cl *client, args [][]byte) {
	h.sort(cl, commands["sort_ro"], args, true)
}
