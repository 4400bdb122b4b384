package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// ZRANGE and its relatives (ZRANGESTORE, ZREVRANGE, Z[REV]RANGEBYSCORE,
// Z[REV]RANGEBYLEX) and the ZREMRANGEBY* removals. Every range becomes a
// span of ranks, found in O(log n) on a large set, walked from one end.

type zrangeBy uint8

const (
	zrangeAuto zrangeBy = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

type zrangeDir uint8

const (
	zdirAuto zrangeDir = iota
	zdirForward
	zdirReverse
)

// zrangeSpec is a parsed ZRANGE request.
type zrangeSpec struct {
	by         zrangeBy
	rev        bool
	withScores bool
	start, end int64 // by rank
	score      store.ScoreRange
	lex        store.LexRange
	offset     int64
	limit      int64 // -1: no limit
}

// The ZRANGE family is one command, zrange: where its arguments start (2,
// after ZRANGESTORE's destination), whether it stores, and the kind of
// range and the direction that the older forms fix.
var (
	cmdZRange           = zrangeCommand(1, false, zrangeAuto, zdirAuto)
	cmdZRangeStore      = zrangeCommand(2, true, zrangeAuto, zdirAuto)
	cmdZRevRange        = zrangeCommand(1, false, zrangeRank, zdirReverse)
	cmdZRangeByScore    = zrangeCommand(1, false, zrangeScore, zdirForward)
	cmdZRevRangeByScore = zrangeCommand(1, false, zrangeScore, zdirReverse)
	cmdZRangeByLex      = zrangeCommand(1, false, zrangeLex, zdirForward)
	cmdZRevRangeByLex   = zrangeCommand(1, false, zrangeLex, zdirReverse)
)

func zrangeCommand(src int, toStore bool, by zrangeBy, dir zrangeDir) handlerFunc {
	return func(h *Handler, cl *client, args [][]byte) { h.zrange(cl, args, src, toStore, by, dir) }
}

// parseZRange parses the arguments after the source key (at src) the way
// Redis's zrangeGenericCommand does, in its order: options, conflicts,
// then the range itself.
func parseZRange(args [][]byte, src int, toStore bool, by zrangeBy, dir zrangeDir) (zrangeSpec, string) {
	sp := zrangeSpec{limit: -1}
	hasLimit := false
	for j := src + 3; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case !toStore && ascii.EqualFold(a, "withscores"):
			sp.withScores = true
		case ascii.EqualFold(a, "limit") && left >= 2:
			var ok bool
			if sp.offset, ok = parseLong(args[j+1]); !ok {
				return sp, errNotInteger
			}
			if sp.limit, ok = parseLong(args[j+2]); !ok {
				return sp, errNotInteger
			}
			hasLimit = sp.limit != -1
			j += 2
		case dir == zdirAuto && ascii.EqualFold(a, "rev"):
			dir = zdirReverse
		case by == zrangeAuto && ascii.EqualFold(a, "bylex"):
			by = zrangeLex
		case by == zrangeAuto && ascii.EqualFold(a, "byscore"):
			by = zrangeScore
		default:
			return sp, errSyntax
		}
	}
	if by == zrangeAuto {
		by = zrangeRank
	}
	sp.by, sp.rev = by, dir == zdirReverse
	if hasLimit && by == zrangeRank {
		return sp, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	}
	if sp.withScores && by == zrangeLex {
		return sp, "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	}
	lo, hi := args[src+1], args[src+2]
	if sp.rev && by != zrangeRank {
		lo, hi = hi, lo // given as max, min
	}
	var ok bool
	switch by {
	case zrangeRank:
		if sp.start, ok = parseLong(lo); !ok {
			return sp, errNotInteger
		}
		if sp.end, ok = parseLong(hi); !ok {
			return sp, errNotInteger
		}
	case zrangeScore:
		if sp.score, ok = parseScoreRange(lo, hi); !ok {
			return sp, errNotFloatRange
		}
	case zrangeLex:
		if sp.lex, ok = parseLexRange(lo, hi); !ok {
			return sp, errNotLexRange
		}
	}
	return sp, ""
}

// rankSpan normalises a start and end rank as Redis does (negative counts
// from the end) into ranks [lo, hi) of a set of n elements.
func rankSpan(start, end int64, n int) (lo, hi int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return 0, 0
	}
	end = min(end, ln-1)
	return int(start), int(end + 1)
}

// span returns the ranks [lo, hi) the request selects in z, to be walked
// downwards from hi-1 when sp.rev.
func (sp *zrangeSpec) span(z *store.ZSet) (lo, hi int) {
	n := z.Len()
	switch sp.by {
	case zrangeRank:
		lo, hi = rankSpan(sp.start, sp.end, n)
		if sp.rev {
			lo, hi = n-hi, n-lo
		}
		return lo, hi
	case zrangeScore:
		lo, hi = z.ScoreRanks(sp.score)
	default:
		lo, hi = z.LexRanks(sp.lex, sp.rev)
	}
	if sp.offset < 0 || sp.offset > 0 && sp.offset >= int64(n) {
		return 0, 0
	}
	off := int(min(sp.offset, int64(hi-lo)))
	take := hi - lo - off
	if sp.limit >= 0 {
		take = int(min(int64(take), sp.limit))
	}
	if sp.rev {
		return hi - off - take, hi - off
	}
	return lo + off, lo + off + take
}

// zrange implements the ZRANGE family. src is the source key's position;
// with store, args[1] is the destination.
func (h *Handler) zrange(cl *client, args [][]byte, src int, toStore bool, by zrangeBy, dir zrangeDir) {
	sp, errText := parseZRange(args, src, toStore, by, dir)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if toStore {
		h.zrangeStore(cl, args, &sp)
		return
	}
	h.viewZSet(cl, args[src], func(z *store.ZSet) {
		if z == nil {
			cl.writeArray(0)
			return
		}
		lo, hi := sp.span(z)
		writeZRange(cl, z, lo, hi, sp.rev, sp.withScores)
	})
}

// writeZRange writes the elements of ranks [lo, hi): members, or with
// scores as a flat array in RESP2 and [member, score] pairs in RESP3.
func writeZRange(cl *client, z *store.ZSet, lo, hi int, rev, withScores bool) {
	cl.writePairArray(max(hi-lo, 0), withScores)
	z.Range(lo, hi, rev, func(m []byte, s float64) bool {
		cl.writeScored(m, s, withScores)
		return true
	})
}

func (h *Handler) zrangeStore(cl *client, args [][]byte, sp *zrangeSpec) {
	var stored int
	existed := false
	err := cl.db().Tx([][]byte{args[1], args[2]}, 1, func(t *store.Tx) error {
		existed = t.Kind(0) != store.KindNone
		o, err := t.Object(1, store.KindZSet)
		if err != nil {
			return err
		}
		var dst *store.ZSet
		if o != nil {
			z := o.(*store.ZSet)
			lo, hi := sp.span(z)
			if stored = max(hi-lo, 0); stored > 0 {
				dst = store.NewZSet(stored, 0)
				z.Range(lo, hi, sp.rev, func(m []byte, s float64) bool {
					dst.Set(m, s)
					return true
				})
			}
		}
		if dst == nil {
			return t.Put(0, nil)
		}
		return t.Put(0, dst)
	})
	if err == nil && stored > 0 {
		h.signalReady(cl, args[1])
	}
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(stored))
	cl.notifyStored(evZSet, "zrangestore", args[1], stored > 0, existed)
}
func cmdZRemRangeByRank(h *Handler, cl *client, args [][]byte) {
	start, end, ok := parseIntPair(cl, args[2], args[3])
	if !ok {
		return
	}
	h.zremRange(cl, args[1], "zremrangebyrank", func(z *store.ZSet) (int, int) { return rankSpan(start, end, z.Len()) })
}
func cmdZRemRangeByScore(h *Handler, cl *client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		cl.writeError(errNotFloatRange)
		return
	}
	h.zremRange(cl, args[1], "zremrangebyscore", func(z *store.ZSet) (int, int) { return z.ScoreRanks(r) })
}
func cmdZRemRangeByLex(h *Handler, cl *client, args [][]byte) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		cl.writeError(errNotLexRange)
		return
	}
	h.zremRange(cl, args[1], "zremrangebylex", func(z *store.ZSet) (int, int) { return z.LexRanks(r, false) })
}

// zremRange removes the ranks span picks and replies how many; event is
// the command's keyspace event.
func (h *Handler) zremRange(cl *client, key []byte, event string, span func(z *store.ZSet) (lo, hi int)) {
	removeMembers(cl, key, store.KindZSet, evZSet, event, func(z *store.ZSet) int {
		return z.RemoveRange(span(z))
	})
}
