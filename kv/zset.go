package kv

import (
	"math"
	"strconv"

	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Sorted sets: the commands of Redis 7.0's sorted-set group, over
// store.ZSet. The blocking pops (BZPOPMIN, BZPOPMAX, BZMPOP) are not here:
// they wrap zpop (zset_pop.go) once the blocking machinery is merged.
// This file: the command table, AOF rules and rewrite, argument parsing,
// and the single-key commands; zset_range.go: ZRANGE and its relatives;
// zset_setops.go: ZUNION, ZINTER, ZDIFF; zset_pop.go: pops, ZRANDMEMBER,
// ZSCAN.

// The sorted-set family. A write is deterministic, so it is logged as is;
// one that met a missing or expired key is preceded by a DEL of it (a replay
// keeps expired keys until the load ends, and would add to the old set);
// the *STORE commands and ZMPOP after a DEL of the keys they found missing
// or expired.
var _ = registerFamily(family{kind: store.KindZSet, rewrite: appendRewriteZSet, commands: []*command{
	{
		name: "zadd", arity: -4, fn: cmdZAdd, log: logRMW,
		flags: "write denyoom fast", acl: "@write @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds members with scores to a sorted set, or updates their scores.", "1.2.0", "sorted-set", "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
	},
	{
		name: "zincrby", arity: 4, fn: cmdZIncrBy, log: logRMW,
		flags: "write denyoom fast", acl: "@write @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds to a member's score.", "1.2.0", "sorted-set", "O(log(N)) where N is the number of elements in the sorted set."},
	},
	{
		name: "zrem", arity: -3, fn: cmdZRem, log: logRMW,
		flags: "write fast", acl: "@write @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes members from a sorted set.", "1.2.0", "sorted-set", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed."},
	},
	{
		name: "zremrangebyrank", arity: 4, fn: cmdZRemRangeByRank, log: logRMW,
		flags: "write", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes the members within a range of ranks.", "2.0.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
	},
	{
		name: "zremrangebyscore", arity: 4, fn: cmdZRemRangeByScore, log: logRMW,
		flags: "write", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes the members within a range of scores.", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
	},
	{
		name: "zremrangebylex", arity: 4, fn: cmdZRemRangeByLex, log: logRMW,
		flags: "write", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes the members within a lexicographical range.", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
	},
	{
		name: "zunionstore", arity: -4, fn: cmdZUnionStore, log: logDelAbsent,
		flags: "write denyoom movablekeys", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc: commandDoc{"Stores the union of sorted sets.", "2.0.0", "sorted-set", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."},
	},
	{
		name: "zinterstore", arity: -4, fn: cmdZInterStore, log: logDelAbsent,
		flags: "write denyoom movablekeys", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc: commandDoc{"Stores the intersection of sorted sets.", "2.0.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."},
	},
	{
		name: "zdiffstore", arity: -4, fn: cmdZDiffStore, log: logDelAbsent,
		flags: "write denyoom movablekeys", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc: commandDoc{"Stores the difference of sorted sets.", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."},
	},
	{
		name: "zunion", arity: -3, fn: cmdZUnion,
		flags: "readonly movablekeys", acl: "@read @sortedset @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Returns the union of sorted sets.", "6.2.0", "sorted-set", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."},
	},
	{
		name: "zinter", arity: -3, fn: cmdZInter,
		flags: "readonly movablekeys", acl: "@read @sortedset @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Returns the intersection of sorted sets.", "6.2.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."},
	},
	{
		name: "zintercard", arity: -3, fn: cmdZInterCard,
		flags: "readonly movablekeys", acl: "@read @sortedset @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Counts the members of the intersection of sorted sets.", "7.0.0", "sorted-set", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets."},
	},
	{
		name: "zdiff", arity: -3, fn: cmdZDiff,
		flags: "readonly movablekeys", acl: "@read @sortedset @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Returns the difference of sorted sets.", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."},
	},
	{
		name: "zrange", arity: -4, fn: cmdZRange,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a range of ranks, scores or lexicographical order.", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."},
	},
	{
		name: "zrangestore", arity: -5, fn: cmdZRangeStore, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @sortedset @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, keyStep: 1}},
		doc: commandDoc{"Stores a range of a sorted set in another key.", "6.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key."},
	},
	{
		name: "zrangebyscore", arity: -4, fn: cmdZRangeByScore,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a range of scores.", "1.0.5", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
	},
	{
		name: "zrevrangebyscore", arity: -4, fn: cmdZRevRangeByScore,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a range of scores, highest first.", "2.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
	},
	{
		name: "zrangebylex", arity: -4, fn: cmdZRangeByLex,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a lexicographical range.", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
	},
	{
		name: "zrevrangebylex", arity: -4, fn: cmdZRevRangeByLex,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a lexicographical range, highest first.", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
	},
	{
		name: "zcount", arity: 4, fn: cmdZCount,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Counts the members within a range of scores.", "2.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set."},
	},
	{
		name: "zlexcount", arity: 4, fn: cmdZLexCount,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Counts the members within a lexicographical range.", "2.8.9", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set."},
	},
	{
		name: "zrevrange", arity: -4, fn: cmdZRevRange,
		flags: "readonly", acl: "@read @sortedset @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a range of ranks, highest first.", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."},
	},
	{
		name: "zcard", arity: 2, fn: cmdZCard,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of members of a sorted set.", "1.2.0", "sorted-set", "O(1)"},
	},
	{
		name: "zscore", arity: 3, fn: cmdZScore,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a member's score.", "1.2.0", "sorted-set", "O(1)"},
	},
	{
		name: "zmscore", arity: -3, fn: cmdZMScore,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the scores of several members.", "6.2.0", "sorted-set", "O(N) where N is the number of members being requested."},
	},
	{
		name: "zrank", arity: 3, fn: cmdZRank,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a member's rank.", "2.0.0", "sorted-set", "O(log(N))"},
	},
	{
		name: "zrevrank", arity: 3, fn: cmdZRevRank,
		flags: "readonly fast", acl: "@read @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a member's rank, highest first.", "2.0.0", "sorted-set", "O(log(N))"},
	},
	{
		name: "zpopmin", arity: -2, fn: cmdZPopMin, log: logRMW,
		flags: "write fast", acl: "@write @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes and returns the members with the lowest scores.", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."},
	},
	{
		name: "zpopmax", arity: -2, fn: cmdZPopMax, log: logRMW,
		flags: "write fast", acl: "@write @sortedset @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes and returns the members with the highest scores.", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."},
	},
	{
		name: "zmpop", arity: -4, fn: cmdZMPop, log: logDelAbsent,
		flags: "write movablekeys", acl: "@write @sortedset @slow",
		keySpecs: []keySpec{{flags: "RW access delete", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Removes and returns members from the first non-empty sorted set.", "7.0.0", "sorted-set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped."},
	},
	{
		name: "zrandmember", arity: -2, fn: cmdZRandMember,
		flags: "readonly", acl: "@read @sortedset @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns random members of a sorted set.", "6.2.0", "sorted-set", "O(N) where N is the number of elements returned"},
	},
	{
		name: "zscan", arity: -3, fn: cmdZScan,
		flags: "readonly", acl: "@read @sortedset @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Iterates over the members and scores of a sorted set.", "2.8.0", "sorted-set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.."},
	},
}})

// appendRewriteZSet appends ZADD commands that rebuild o, with scores in
// %.17g, which reads back as the same double.
func appendRewriteZSet(dst, key []byte, o store.Object) []byte {
	z := o.(*store.ZSet)
	var num [32]byte
	b := newBatchWriter(dst, "ZADD", key, 2, z.Len())
	z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
		b.add(appendScore(num[:0], s), m)
		return true
	})
	return b.dst
}

// Reply texts of the sorted-set commands.
const (
	errNotFloatRange = "ERR min or max is not a float"
	errNotLexRange   = "ERR min or max not valid string range item"
	errZAddXXNX      = "ERR XX and NX options at the same time are not compatible"
	errZAddGTLTNX    = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZAddIncrPairs = "ERR INCR option supports a single increment-element pair"
	errScoreNaN      = "ERR resulting score is not a number (NaN)"
	errWeightFloat   = "ERR weight value is not a float"
)

// appendScore formats a score as Redis replies with it: %.17g, "inf", "-inf".
func appendScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// writeScore writes a score: a bulk string in RESP2, a double in RESP3.
func (cl *client) writeScore(f float64) {
	if cl.proto >= 3 {
		cl.out = resp.AppendDouble(cl.out, f)
	} else {
		cl.out = resp.AppendFloatBulk(cl.out, f)
	}
}

// writePairArray starts a reply of n elements that are pairs when paired
// (a member and its score, a field and its value): a flat array of 2n in
// RESP2, an array of n two-element arrays in RESP3, as Redis's
// WITHSCORES and WITHVALUES replies. Each element begins with
// writePairStart.
func (cl *client) writePairArray(n int, paired bool) {
	if paired && cl.proto < 3 {
		n *= 2
	}
	cl.writeArray(n)
}

// writePairStart begins an element of a writePairArray reply.
func (cl *client) writePairStart(paired bool) {
	if paired && cl.proto >= 3 {
		cl.writeArray(2)
	}
}

// writeScored writes a sorted-set member of a writePairArray reply, with its
// score when withScores.
func (cl *client) writeScored(m []byte, s float64, withScores bool) {
	cl.writePairStart(withScores)
	cl.writeBulk(m)
	if withScores {
		cl.writeScore(s)
	}
}

// writeNullArray is Redis's addReplyNullArray: *-1 in RESP2, _ in RESP3.
func (cl *client) writeNullArray() {
	if cl.proto >= 3 {
		cl.out = resp.AppendNull(cl.out)
	} else {
		cl.out = resp.AppendNullArray(cl.out)
	}
}

// viewZSet runs fn with key's sorted set (nil when missing) under its
// shard's read lock, or writes WRONGTYPE and returns false.
func (h *Handler) viewZSet(cl *client, key []byte, fn func(z *store.ZSet)) bool {
	return viewCollection(cl, key, store.KindZSet, fn)
}

func cmdZAdd(h *Handler, cl *client, args [][]byte) { h.zadd(cl, args, false) }

// cmdZIncrBy is ZADD INCR with one pair; like Redis, it reads ZADD's flags
// from its third argument on (so "ZINCRBY k nx m" is a syntax error).
func cmdZIncrBy(h *Handler, cl *client, args [][]byte) { h.zadd(cl, args, true) }

// zadd implements ZADD and ZINCRBY, checking in Redis's order: flags,
// pairs, flag conflicts, scores, the key.
func (h *Handler) zadd(cl *client, args [][]byte, incr bool) {
	var nx, xx, gt, lt, ch bool
	i := 2
	for i < len(args) && setFlag(args[i], []string{"nx", "xx", "ch", "incr", "gt", "lt"}, &nx, &xx, &ch, &incr, &gt, &lt) {
		i++
	}
	pairs := args[i:]
	switch {
	case len(pairs) == 0 || len(pairs)%2 != 0:
		cl.writeError(errSyntax)
		return
	case nx && xx:
		cl.writeError(errZAddXXNX)
		return
	case (gt || lt) && nx || gt && lt:
		cl.writeError(errZAddGTLTNX)
		return
	case incr && len(pairs) > 2:
		cl.writeError(errZAddIncrPairs)
		return
	}
	var scoreBuf [8]float64
	scores := scoreBuf[:0]
	need := int64(0)
	for j := 0; j < len(pairs); j += 2 {
		f, ok := parseScore(pairs[j])
		if !ok {
			cl.writeError(errNotFloat)
			return
		}
		scores = append(scores, f)
		need += int64(len(pairs[j+1])) + 16
	}
	var added, updated, processed int
	var last float64
	nan, created := false, false
	err := cl.db().Update(args[1], store.KindZSet, need, func(o store.Object) store.Object {
		z, _ := o.(*store.ZSet)
		if z == nil {
			if xx {
				return nil
			}
			z, created = store.NewZSet(1, len(pairs[1])), true
		}
		for j, score := range scores {
			m := pairs[2*j+1]
			cur, exists := z.Score(m)
			if !exists {
				if xx {
					continue
				}
				z.Set(m, score)
				added++
				processed++
				last = score
				continue
			}
			if nx {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					nan = true
					break
				}
			}
			if lt && score >= cur || gt && score <= cur {
				continue
			}
			processed++
			last = score
			if score != cur {
				z.Set(m, score)
				updated++
			}
		}
		return z
	})
	if err == nil && added > 0 {
		h.signalReady(cl, args[1]) // clients blocked in BZPOPMIN and friends (zset_block.go)
	}
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case nan:
		cl.writeError(errScoreNaN)
	case incr && processed == 0:
		cl.writeNull()
	case incr:
		cl.writeScore(last)
	case ch:
		cl.writeInt(int64(added + updated))
	default:
		cl.writeInt(int64(added))
	}
	if err == nil && added+updated > 0 {
		cl.notifyNew(created, args[1])
		cl.notify(evZSet, endEvent(incr, "zincr", "zadd"), args[1])
	}
}

func cmdZRem(h *Handler, cl *client, args [][]byte) {
	removeEach(cl, args[1], store.KindZSet, evZSet, "zrem", args[2:], (*store.ZSet).Remove)
}

func cmdZCard(_ *Handler, cl *client, args [][]byte) { writeLength(cl, args[1], store.KindZSet) }

func cmdZScore(h *Handler, cl *client, args [][]byte)  { h.zscore(cl, args, false) }
func cmdZMScore(h *Handler, cl *client, args [][]byte) { h.zscore(cl, args, true) }

// zscore is ZSCORE and ZMSCORE (many: an array): the score of each member
// of args[2:], a null for one the set lacks.
func (h *Handler) zscore(cl *client, args [][]byte, many bool) {
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if many {
			cl.writeArray(len(args) - 2)
		}
		for _, m := range args[2:] {
			var s float64
			found := false
			if z != nil {
				s, found = z.Score(m)
			}
			if found {
				cl.writeScore(s)
			} else {
				cl.writeNull()
			}
		}
	})
}

func cmdZRank(h *Handler, cl *client, args [][]byte)    { h.zrank(cl, args, false) }
func cmdZRevRank(h *Handler, cl *client, args [][]byte) { h.zrank(cl, args, true) }

func (h *Handler) zrank(cl *client, args [][]byte, rev bool) {
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if z != nil {
			if r, ok := z.Rank(args[2]); ok {
				if rev {
					r = z.Len() - 1 - r
				}
				cl.writeInt(int64(r))
				return
			}
		}
		cl.writeNull()
	})
}

func cmdZCount(h *Handler, cl *client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		cl.writeError(errNotFloatRange)
		return
	}
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if z == nil {
			cl.writeInt(0)
			return
		}
		lo, hi := z.ScoreRanks(r)
		cl.writeInt(int64(hi - lo))
	})
}

func cmdZLexCount(h *Handler, cl *client, args [][]byte) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		cl.writeError(errNotLexRange)
		return
	}
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if z == nil {
			cl.writeInt(0)
			return
		}
		lo, hi := z.LexRanks(r, false)
		cl.writeInt(int64(hi - lo))
	})
}
