package kv

import (
	"slices"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Sets: the commands of Redis 7.0's set group, over store.Set.

var _ = registerFamily([]*command{
	{
		name: "sadd", arity: -3, fn: cmdSAdd,
		flags: "write denyoom fast", acl: "@write @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds members to a set, creating it if needed.", "1.0.0", "set", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "srem", arity: -3, fn: cmdSRem,
		flags: "write fast", acl: "@write @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes members from a set; an emptied set is deleted.", "1.0.0", "set", "O(N) where N is the number of members to be removed."},
	},
	{
		name: "smembers", arity: 2, fn: cmdSMembers,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns every member of a set.", "1.0.0", "set", "O(N) where N is the set cardinality."},
	},
	{
		name: "sismember", arity: 3, fn: cmdSIsMember,
		flags: "readonly fast", acl: "@read @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Tells whether a value is a member of a set.", "1.0.0", "set", "O(1)"},
	},
	{
		name: "smismember", arity: -3, fn: cmdSMIsMember,
		flags: "readonly fast", acl: "@read @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Tells, for each of several values, whether it is a member of a set.", "6.2.0", "set", "O(N) where N is the number of elements being checked for membership"},
	},
	{
		name: "scard", arity: 2, fn: cmdSCard,
		flags: "readonly fast", acl: "@read @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of members of a set.", "1.0.0", "set", "O(1)"},
	},
	{
		name: "spop", arity: -2, fn: cmdSPop,
		flags: "write fast", acl: "@write @set @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes and returns random members of a set.", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count."},
	},
	{
		name: "srandmember", arity: -2, fn: cmdSRandMember,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns random members of a set.", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count."},
	},
	{
		name: "sinter", arity: -2, fn: cmdSInter,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Returns the intersection of sets.", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
	},
	{
		name: "sunion", arity: -2, fn: cmdSUnion,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Returns the union of sets.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sdiff", arity: -2, fn: cmdSDiff,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Returns the members of a set that are in none of the others.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sinterstore", arity: -3, fn: cmdSInterStore,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the intersection of sets in a key.", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
	},
	{
		name: "sunionstore", arity: -3, fn: cmdSUnionStore,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the union of sets in a key.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sdiffstore", arity: -3, fn: cmdSDiffStore,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the difference of sets in a key.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sintercard", arity: -3, fn: cmdSInterCard,
		flags: "readonly movablekeys", acl: "@read @set @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Counts the members of the intersection of sets.", "7.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
	},
	{
		name: "smove", arity: 4, fn: cmdSMove,
		flags: "write fast", acl: "@write @set @fast",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Moves a member from one set to another.", "1.0.0", "set", "O(1)"},
	},
	{
		name: "sscan", arity: -3, fn: cmdSScan,
		flags: "readonly", acl: "@read @set @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Iterates over the members of a set.", "2.8.0", "set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.."},
	},
})

// How the set writes are logged: SADD as is, preceded by a DEL when it met
// a missing or expired key; SREM only when it removed something; SMOVE and
// the *STORE commands as they are, preceded by a DEL of the keys they found
// missing; SPOP, which is random, as what it did: SREM of the members it
// popped, or DEL when it took them all, as Redis propagates it.
var _ = func() bool {
	logRules["sadd"] = logRMW
	logRules["srem"] = logIfNonZero
	for _, name := range []string{"smove", "sinterstore", "sunionstore", "sdiffstore"} {
		logRules[name] = logDelAbsent
	}
	logRules["spop"] = logEffect
	return true
}()

func init() {
	rewriters[store.KindSet] = appendRewriteSet
	setMembersOfSet = func(o store.Object, fn func([]byte)) {
		o.(*store.Set).Range(func(m []byte) bool { fn(m); return true })
	}
}

// appendRewriteSet appends SADD commands that rebuild o.
func appendRewriteSet(dst, key []byte, o store.Object) []byte {
	s := o.(*store.Set)
	return appendBatched(dst, "SADD", key, s.Len(), func(each func(m []byte)) {
		s.Range(func(m []byte) bool { each(m); return true })
	})
}

// appendBatched appends cmd key m1 m2 ... commands of up to rewriteBatch
// members each, for the n members range yields.
func appendBatched(dst []byte, cmd string, key []byte, n int, members func(each func(m []byte))) []byte {
	inBatch := 0
	members(func(m []byte) {
		if inBatch == 0 {
			inBatch = min(rewriteBatch, n)
			n -= inBatch
			dst = aof.AppendHeader(dst, 2+inBatch)
			dst = aof.AppendArg(dst, []byte(cmd))
			dst = aof.AppendArg(dst, key)
		}
		dst = aof.AppendArg(dst, m)
		inBatch--
	})
	return dst
}

// viewSet runs fn with key's set (nil when missing) under its shard's read
// lock, or writes WRONGTYPE.
func (h *Handler) viewSet(cl *client, key []byte, fn func(s *store.Set)) {
	err := h.store.View(key, store.KindSet, func(o store.Object) {
		s, _ := o.(*store.Set)
		fn(s)
	})
	if err != nil {
		cl.writeError(err.Error())
	}
}

func cmdSAdd(h *Handler, cl *client, args [][]byte) {
	need := int64(len(args)-2) * elementOverhead
	for _, m := range args[2:] {
		need += int64(len(m))
	}
	added := 0
	err := h.store.Update(args[1], store.KindSet, need, func(o store.Object) store.Object {
		s, _ := o.(*store.Set)
		if s == nil {
			s = store.NewSet()
		}
		for _, m := range args[2:] {
			if s.Add(m) {
				added++
			}
		}
		return s
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(added))
}

func cmdSRem(h *Handler, cl *client, args [][]byte) {
	removed := 0
	err := h.store.Update(args[1], store.KindSet, 0, func(o store.Object) store.Object {
		if o == nil {
			return nil
		}
		s := o.(*store.Set)
		for _, m := range args[2:] {
			if s.Remove(m) {
				removed++
				if s.Len() == 0 {
					break
				}
			}
		}
		return s
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(removed))
}

// writeSetMembers writes s (nil: empty) as a RESP3 set, or an array in RESP2.
func writeSetMembers(cl *client, s *store.Set) {
	if s == nil {
		cl.writeSet(0)
		return
	}
	cl.writeSet(s.Len())
	s.Range(func(m []byte) bool { cl.writeBulk(m); return true })
}

func cmdSMembers(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) { writeSetMembers(cl, s) })
}

func cmdSIsMember(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) { cl.writeInt(boolInt(s != nil && s.Has(args[2]))) })
}

func cmdSMIsMember(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) {
		cl.writeArray(len(args) - 2)
		for _, m := range args[2:] {
			cl.writeInt(boolInt(s != nil && s.Has(m)))
		}
	})
}

func cmdSCard(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) {
		if s == nil {
			cl.writeInt(0)
			return
		}
		cl.writeInt(int64(s.Len()))
	})
}

// sremBatch is how many members one logged SREM of SPOP's carries.
const sremBatch = 1024

func cmdSPop(h *Handler, cl *client, args [][]byte) {
	if len(args) > 3 {
		cl.writeError(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		var ok bool
		if count, ok = ascii.ParseInt(args[2]); !ok || count < 0 {
			cl.writeError(errMustPositive)
			return
		}
	}
	logging := cl.logsEffects()
	var popped [][]byte // copies, for the log record
	all := false
	err := h.store.Update(args[1], store.KindSet, 0, func(o store.Object) store.Object {
		s, _ := o.(*store.Set)
		switch {
		case s == nil && count < 0:
			cl.writeNull()
			return nil
		case s == nil || count == 0:
			cl.writeSet(0)
			return o
		case count < 0:
			s.Random(1, false, func(m []byte) {
				cl.writeBulk(m)
				if logging {
					popped = append(popped, slices.Clone(m))
				}
				s.Remove(slices.Clone(m))
			})
			return s
		case count >= int64(s.Len()):
			writeSetMembers(cl, s)
			all = true
			return nil
		}
		cl.writeSet(int(count))
		s.Pop(int(count), func(m []byte) {
			cl.writeBulk(m)
			if logging {
				popped = append(popped, slices.Clone(m))
			}
		})
		return s
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if !logging {
		return
	}
	rec := cl.effectScratch()
	if all {
		rec = aof.AppendCommand(rec, []byte("DEL"), args[1])
	}
	for len(popped) > 0 {
		k := min(len(popped), sremBatch)
		rec = appendBatched(rec, "SREM", args[1], k, func(each func([]byte)) {
			for _, m := range popped[:k] {
				each(m)
			}
		})
		popped = popped[k:]
	}
	cl.setEffect(rec)
}

func cmdSRandMember(h *Handler, cl *client, args [][]byte) {
	if len(args) > 3 {
		cl.writeError(errSyntax)
		return
	}
	if len(args) == 2 {
		h.viewSet(cl, args[1], func(s *store.Set) {
			if s == nil {
				cl.writeNull()
				return
			}
			s.Random(1, false, func(m []byte) { cl.writeBulk(m) })
		})
		return
	}
	l, errText := parseRandCount(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.viewSet(cl, args[1], func(s *store.Set) {
		switch {
		case s == nil || l == 0:
			cl.writeArray(0)
		case l < -randMaxCount:
			cl.writeError("ERR value is out of range")
		case l < 0 || l == 1:
			k := int(max(l, -l))
			cl.writeArray(k)
			s.Random(k, false, func(m []byte) { cl.writeBulk(m) })
		case l >= int64(s.Len()):
			cl.writeArray(s.Len())
			s.Range(func(m []byte) bool { cl.writeBulk(m); return true })
		default:
			cl.writeArray(int(l))
			s.Random(int(l), true, func(m []byte) { cl.writeBulk(m) })
		}
	})
}

// The set algebra.
type setOp uint8

const (
	setInter setOp = iota
	setUnion
	setDiff
)

func cmdSInter(h *Handler, cl *client, args [][]byte) { h.setAlgebra(cl, args[1:], nil, setInter) }
func cmdSUnion(h *Handler, cl *client, args [][]byte) { h.setAlgebra(cl, args[1:], nil, setUnion) }
func cmdSDiff(h *Handler, cl *client, args [][]byte)  { h.setAlgebra(cl, args[1:], nil, setDiff) }

func cmdSInterStore(h *Handler, cl *client, args [][]byte) {
	h.setAlgebra(cl, args[2:], args[1], setInter)
}

func cmdSUnionStore(h *Handler, cl *client, args [][]byte) {
	h.setAlgebra(cl, args[2:], args[1], setUnion)
}

func cmdSDiffStore(h *Handler, cl *client, args [][]byte) {
	h.setAlgebra(cl, args[2:], args[1], setDiff)
}

// sourceSets returns the sets of keys[from:] in t (nil for a missing key),
// or WRONGTYPE if any of them holds another kind, as Redis checks them all
// before it computes anything.
func sourceSets(t *store.Tx, from, n int) ([]*store.Set, error) {
	sets := make([]*store.Set, n)
	for i := range sets {
		o, err := t.Object(from+i, store.KindSet)
		if err != nil {
			return nil, err
		}
		sets[i], _ = o.(*store.Set)
	}
	return sets, nil
}

// setAlgebra computes SINTER, SUNION or SDIFF of srcs and replies with the
// members or, with dst, stores them there (an empty result deletes dst)
// and replies with their number. The result is built as a new set, as
// Redis builds it, so its encoding (and an intset's ascending order) is
// Redis's.
func (h *Handler) setAlgebra(cl *client, srcs [][]byte, dst []byte, op setOp) {
	keys, from, need := srcs, 0, int64(0)
	if dst != nil {
		keys = append([][]byte{dst}, srcs...)
		from, need = 1, 1
	}
	err := h.store.Tx(keys, need, func(t *store.Tx) error {
		sets, err := sourceSets(t, from, len(srcs))
		if err != nil {
			return err
		}
		res := computeSetOp(sets, op)
		if dst == nil {
			writeSetMembers(cl, res)
			return nil
		}
		if err := t.Put(0, res); err != nil {
			return err
		}
		cl.writeInt(int64(res.Len()))
		return nil
	})
	if err != nil {
		cl.writeError(err.Error())
	}
}

func computeSetOp(sets []*store.Set, op setOp) *store.Set {
	res := store.NewSet()
	switch op {
	case setInter:
		if slices.Contains(sets, nil) {
			return res
		}
		intersect(sets, 0, func(m []byte) bool { res.Add(m); return true })
	case setUnion:
		for _, s := range sets {
			if s != nil {
				s.Range(func(m []byte) bool { res.Add(m); return true })
			}
		}
	case setDiff:
		if sets[0] == nil {
			return res
		}
		sets[0].Range(func(m []byte) bool {
			for _, s := range sets[1:] {
				if s != nil && s.Has(m) {
					return true
				}
			}
			res.Add(m)
			return true
		})
	}
	return res
}

// intersect calls fn with the members of the intersection of sets (none
// nil), walking the smallest, until fn returns false or limit (if not 0)
// members were found; it returns how many it found.
func intersect(sets []*store.Set, limit int, fn func(m []byte) bool) int {
	sorted := slices.Clone(sets)
	slices.SortStableFunc(sorted, func(a, b *store.Set) int { return a.Len() - b.Len() })
	found := 0
	sorted[0].Range(func(m []byte) bool {
		for _, s := range sorted[1:] {
			if s != sorted[0] && !s.Has(m) {
				return true
			}
		}
		found++
		return fn(m) && (limit == 0 || found < limit)
	})
	return found
}

func cmdSInterCard(h *Handler, cl *client, args [][]byte) {
	const errNumKeys = "ERR numkeys should be greater than 0"
	numkeys, ok := ascii.ParseInt(args[1])
	if !ok || numkeys < 1 {
		cl.writeError(errNumKeys)
		return
	}
	if numkeys > int64(len(args)-2) {
		cl.writeError("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(args); j++ {
		if ascii.EqualFold(args[j], "limit") && j+1 < len(args) {
			j++
			if limit, ok = ascii.ParseInt(args[j]); !ok || limit < 0 {
				cl.writeError("ERR LIMIT can't be negative")
				return
			}
			continue
		}
		cl.writeError(errSyntax)
		return
	}
	keys := args[2 : 2+numkeys]
	var card int
	err := h.store.Tx(keys, 0, func(t *store.Tx) error {
		sets, err := sourceSets(t, 0, len(keys))
		if err != nil || slices.Contains(sets, nil) {
			return err
		}
		card = intersect(sets, int(min(limit, int64(1<<62))), func([]byte) bool { return true })
		return nil
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(card))
}

func cmdSMove(h *Handler, cl *client, args [][]byte) {
	member := args[3]
	moved := false
	err := h.store.Tx(args[1:3], 0, func(t *store.Tx) error {
		if t.Kind(0) == store.KindNone {
			return nil
		}
		so, err := t.Object(0, store.KindSet)
		if err != nil {
			return err
		}
		do, err := t.Object(1, store.KindSet)
		if err != nil {
			return err
		}
		src := so.(*store.Set)
		if string(args[1]) == string(args[2]) {
			moved = src.Has(member)
			return nil
		}
		if !src.Remove(member) {
			return nil
		}
		moved = true
		if do == nil {
			d := store.NewSet()
			d.Add(member)
			return t.Put(1, d)
		}
		do.(*store.Set).Add(member)
		return nil
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(moved))
}

func cmdSScan(h *Handler, cl *client, args [][]byte) {
	cursor, ok := parseCursor(args[2])
	if !ok {
		cl.writeError(errInvalidCursor)
		return
	}
	h.viewSet(cl, args[1], func(s *store.Set) {
		if s == nil {
			writeScanPage(cl, 0, nil)
			return
		}
		count, pattern, errText := scanOptions(args)
		if errText != "" {
			cl.writeError(errText)
			return
		}
		var elems [][]byte
		var intBuf []byte // an intset's members are formatted into a scratch buffer
		intset := s.Encoding() == "intset"
		next := s.Scan(cursor, count, func(m []byte) {
			if pattern != nil && !store.Match(pattern, m) {
				return
			}
			if intset {
				start := len(intBuf)
				intBuf = append(intBuf, m...)
				m = intBuf[start:len(intBuf):len(intBuf)]
			}
			elems = append(elems, m)
		})
		writeScanPage(cl, next, elems)
	})
}
