package kv

import (
	"slices"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// The set family (Redis 7.0's t_set.c) over store.Set: intset while every
// member is an integer (up to 512), else a pointer-free hashtable.

// The set family. Its writes are logged (each entry's log): SADD and SREM as
// they are, after a DEL when they met an expired key (a replay still holds
// it); SPOP as the SREM (or DEL) of what it popped, as Redis propagates it;
// SMOVE and the *STORE commands after a DEL of the keys they found missing
// or expired.
var _ = registerFamily(family{kind: store.KindSet, rewrite: appendRewriteSet, commands: []*command{
	{
		name: "sadd", arity: -3, fn: cmdSAdd, log: logRMW,
		flags: "write denyoom fast", acl: "@write @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds members to a set, creating it if needed.", "1.0.0", "set", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "srem", arity: -3, fn: cmdSRem, log: logRMW,
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
		doc: commandDoc{"Tells, for each value, whether it is a member of a set.", "6.2.0", "set", "O(N) where N is the number of elements being checked for membership"},
	},
	{
		name: "scard", arity: 2, fn: cmdSCard,
		flags: "readonly fast", acl: "@read @set @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of members of a set.", "1.0.0", "set", "O(1)"},
	},
	{
		name: "spop", arity: -2, fn: cmdSPop, log: logEffect,
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
		doc: commandDoc{"Returns the members of the first set that are in none of the others.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sinterstore", arity: -3, fn: cmdSInterStore, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the intersection of sets in a key.", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
	},
	{
		name: "sunionstore", arity: -3, fn: cmdSUnionStore, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the union of sets in a key.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sdiffstore", arity: -3, fn: cmdSDiffStore, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @set @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stores the difference of sets in a key.", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets."},
	},
	{
		name: "sintercard", arity: -3, fn: cmdSInterCard,
		flags: "readonly movablekeys", acl: "@read @set @slow",
		keySpecs: []keySpec{{flags: "RO access", index: 1, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Returns the number of members of the intersection of sets.", "7.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
	},
	{
		name: "smove", arity: 4, fn: cmdSMove, log: logDelAbsent,
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
}})

func init() {
	// A set is an input of ZUNION and its relatives, each member scoring 1.
	setMembersOfSet = func(o store.Object, fn func(member []byte)) {
		o.(*store.Set).Range(func(m []byte) bool { fn(m); return true })
	}
}

// appendRewriteSet appends SADD commands that rebuild s, 64 members each.
func appendRewriteSet(dst, key []byte, o store.Object) []byte {
	s := o.(*store.Set)
	b := newBatchWriter(dst, "SADD", key, 1, s.Len())
	s.Range(func(m []byte) bool { b.add(m); return true })
	return b.dst
}

// viewSet runs fn with key's set (nil when missing), or answers WRONGTYPE.
func (h *Handler) viewSet(cl *client, key []byte, fn func(s *store.Set)) {
	viewCollection(cl, key, store.KindSet, fn)
}

func cmdSAdd(h *Handler, cl *client, args [][]byte) {
	added := 0
	need := int64(0)
	for _, m := range args[2:] {
		need += int64(len(m)) + 16
	}
	created := false
	err := cl.db().Update(args[1], store.KindSet, need, func(o store.Object) store.Object {
		s, _ := o.(*store.Set)
		if s == nil {
			s, created = store.NewSet(), true
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
	if added > 0 {
		cl.notifyNew(created, args[1])
		cl.notify(evSet, "sadd", args[1])
	}
}

func cmdSRem(h *Handler, cl *client, args [][]byte) {
	removeEach(cl, args[1], store.KindSet, evSet, "srem", args[2:], (*store.Set).Remove)
}

func cmdSMembers(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) {
		if s == nil {
			cl.writeSet(0)
			return
		}
		writeSetMembers(cl, s)
	})
}

// writeSetMembers writes every member of s as a set reply (an array in RESP2).
func writeSetMembers(cl *client, s *store.Set) {
	cl.writeSet(s.Len())
	s.Range(func(m []byte) bool {
		cl.writeBulk(m)
		return true
	})
}

func cmdSIsMember(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) {
		cl.writeInt(boolInt(s != nil && s.Has(args[2])))
	})
}

func cmdSMIsMember(h *Handler, cl *client, args [][]byte) {
	h.viewSet(cl, args[1], func(s *store.Set) {
		cl.writeArray(len(args) - 2)
		for _, m := range args[2:] {
			cl.writeInt(boolInt(s != nil && s.Has(m)))
		}
	})
}

func cmdSCard(_ *Handler, cl *client, args [][]byte) { writeLength(cl, args[1], store.KindSet) }

// cmdSPop: SPOP key [count]. What it popped is logged as SREM key members
// (DEL key when it took the whole set), as Redis propagates it.
func cmdSPop(h *Handler, cl *client, args [][]byte) {
	count, ok := parsePopCount(cl, args)
	if !ok {
		return
	}
	rec := cl.effectScratch()
	logged := cl.logsEffects()
	var popped [][]byte // copies, for the record
	found, whole := false, false
	err := cl.db().Update(args[1], store.KindSet, 0, func(o store.Object) store.Object {
		s, _ := o.(*store.Set)
		if s == nil {
			return nil
		}
		found = true
		switch {
		case count < 0:
			var m []byte
			s.Random(1, false, func(r []byte) { m = slices.Clone(r) })
			s.Remove(m)
			cl.writeBulk(m)
			popped = append(popped, m)
			whole = s.Len() == 0
		case count == 0:
			cl.writeSet(0)
		case count >= int64(s.Len()):
			// The whole set: answered in its order, and the key deleted.
			writeSetMembers(cl, s)
			whole = true
			return nil
		default:
			cl.writeSet(int(count))
			s.Pop(int(count), func(m []byte) {
				cl.writeBulk(m)
				if logged {
					popped = append(popped, slices.Clone(m))
				}
			})
			whole = s.Len() == 0
		}
		return s
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case !found && count < 0:
		cl.writeNull()
		return
	case !found:
		cl.writeSet(0)
		return
	}
	if count != 0 {
		cl.notifyRemoved(evSet, "spop", args[1], whole)
	}
	if !logged || count == 0 {
		return
	}
	if whole {
		rec = aof.AppendCommand(rec, []byte("DEL"), args[1])
	} else {
		rec = aof.AppendHeader(rec, 2+len(popped))
		rec = aof.AppendArg(rec, []byte("SREM"))
		rec = aof.AppendArg(rec, args[1])
		for _, m := range popped {
			rec = aof.AppendArg(rec, m)
		}
	}
	cl.setEffect(rec)
}

// cmdSRandMember: SRANDMEMBER key [count]; a negative count may repeat
// members.
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
	n, errText := parseRandCount(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	unique := n >= 0
	if n < 0 {
		n = -n
		if n > randMaxCount {
			cl.writeError("ERR value is out of range")
			return
		}
	}
	h.viewSet(cl, args[1], func(s *store.Set) {
		switch {
		case s == nil || n == 0:
			cl.writeArray(0)
		case unique && n >= int64(s.Len()):
			cl.writeArray(s.Len())
			s.Range(func(m []byte) bool { cl.writeBulk(m); return true })
		default:
			cl.writeArray(int(n))
			s.Random(int(n), unique, func(m []byte) { cl.writeBulk(m) })
		}
	})
}

// setOp is SINTER, SUNION or SDIFF.
type setOp int

const (
	opInter setOp = iota
	opUnion
	opDiff
)

// combine computes op over the sets at keys (nil for missing keys) and
// calls emit with each member of the result. It returns ErrWrongType when a
// key holds another type. It runs under the keys' shard locks (store.Tx).
func combine(t *store.Tx, n int, first int, op setOp, emit func(m []byte)) error {
	sets := make([]*store.Set, 0, n)
	for i := first; i < first+n; i++ {
		o, err := t.Object(i, store.KindSet)
		if err != nil {
			return err
		}
		s, _ := o.(*store.Set)
		sets = append(sets, s)
	}
	switch op {
	case opInter:
		if slices.Contains(sets, nil) {
			return nil
		}
		// Walk the smallest set, as Redis does, and keep what every other has.
		slices.SortStableFunc(sets, func(a, b *store.Set) int { return a.Len() - b.Len() })
		sets[0].Range(func(m []byte) bool {
			for _, o := range sets[1:] {
				if !o.Has(m) {
					return true
				}
			}
			emit(m)
			return true
		})
	case opUnion:
		seen := store.NewSet()
		for _, s := range sets {
			if s == nil {
				continue
			}
			s.Range(func(m []byte) bool {
				if seen.Add(m) {
					emit(m)
				}
				return true
			})
		}
	case opDiff:
		if sets[0] == nil {
			return nil
		}
		sets[0].Range(func(m []byte) bool {
			for _, o := range sets[1:] {
				if o != nil && (o == sets[0] || o.Has(m)) {
					return true
				}
			}
			emit(m)
			return true
		})
	}
	return nil
}

func cmdSInter(h *Handler, cl *client, args [][]byte) { h.setOpReply(cl, args[1:], opInter) }
func cmdSUnion(h *Handler, cl *client, args [][]byte) { h.setOpReply(cl, args[1:], opUnion) }
func cmdSDiff(h *Handler, cl *client, args [][]byte)  { h.setOpReply(cl, args[1:], opDiff) }

// setOpReply answers SINTER/SUNION/SDIFF with the result as a set reply, in
// the order of a set built from it (sorted when it is an intset), as Redis
// builds its reply.
func (h *Handler) setOpReply(cl *client, keys [][]byte, op setOp) {
	res := store.NewSet()
	err := cl.db().Tx(keys, 0, func(t *store.Tx) error {
		return combine(t, len(keys), 0, op, func(m []byte) { res.Add(m) })
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	writeSetMembers(cl, res)
}

func cmdSInterStore(h *Handler, cl *client, args [][]byte) { h.setOpStore(cl, args, opInter) }
func cmdSUnionStore(h *Handler, cl *client, args [][]byte) { h.setOpStore(cl, args, opUnion) }
func cmdSDiffStore(h *Handler, cl *client, args [][]byte)  { h.setOpStore(cl, args, opDiff) }

// setOpStore stores op over args[2:] at args[1], replacing whatever it held;
// an empty result deletes it.
func (h *Handler) setOpStore(cl *client, args [][]byte, op setOp) {
	stored, existed := 0, false
	// need > 0: the *STORE commands are denyoom, refused over maxmemory.
	err := cl.db().Tx(args[1:], 1, func(t *store.Tx) error {
		res := store.NewSet()
		if err := combine(t, len(args)-2, 1, op, func(m []byte) { res.Add(m) }); err != nil {
			return err
		}
		stored, existed = res.Len(), t.Kind(0) != store.KindNone
		return t.Put(0, res)
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(stored))
	cl.notifyStored(evSet, [...]string{opInter: "sinterstore", opUnion: "sunionstore", opDiff: "sdiffstore"}[op], args[1], stored > 0, existed)
}

// cmdSInterCard: SINTERCARD numkeys key... [LIMIT limit].
func cmdSInterCard(h *Handler, cl *client, args [][]byte) {
	numkeys, ok := ascii.ParseInt(args[1])
	if !ok || numkeys < 1 {
		cl.writeError("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(args)-2) {
		cl.writeError("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for i := 2 + int(numkeys); i < len(args); i += 2 {
		if !ascii.EqualFold(args[i], "limit") || i+1 >= len(args) {
			cl.writeError(errSyntax)
			return
		}
		l, ok := ascii.ParseInt(args[i+1])
		if !ok || l < 0 {
			cl.writeError("ERR LIMIT can't be negative")
			return
		}
		limit = l
	}
	keys := args[2 : 2+numkeys]
	card := int64(0)
	err := cl.db().Tx(keys, 0, func(t *store.Tx) error {
		err := combine(t, len(keys), 0, opInter, func([]byte) {
			card++
		})
		if err == nil && limit > 0 && card > limit {
			card = limit
		}
		return err
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(card)
}

func cmdSMove(h *Handler, cl *client, args [][]byte) {
	moved, emptied, created, added := false, false, false, false
	// need 0: SMOVE is not denyoom in Redis 7.0, so it runs over maxmemory.
	err := cl.db().Tx(args[1:3], 0, func(t *store.Tx) error {
		// A missing source answers 0 whatever the destination holds, as in
		// Redis; then both must be sets.
		if t.Kind(0) == store.KindNone {
			return nil
		}
		src, err := t.Object(0, store.KindSet)
		if err != nil {
			return err
		}
		dst, err := t.Object(1, store.KindSet)
		if err != nil {
			return err
		}
		s := src.(*store.Set)
		if string(args[1]) == string(args[2]) {
			moved = s.Has(args[3])
			return nil
		}
		if !s.Remove(args[3]) {
			return nil
		}
		moved, emptied = true, s.Len() == 0
		if dst == nil {
			d := store.NewSet()
			d.Add(args[3])
			created, added = true, true
			return t.Put(1, d)
		}
		added = dst.(*store.Set).Add(args[3])
		return nil
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(moved))
	if moved && string(args[1]) != string(args[2]) { // Redis: srem, del, new, sadd
		cl.notifyRemoved(evSet, "srem", args[1], emptied)
		cl.notifyNew(created, args[2])
		if added {
			cl.notify(evSet, "sadd", args[2])
		}
	}
}

func cmdSScan(h *Handler, cl *client, args [][]byte) {
	scanCollection(cl, args, store.KindSet, func(s *store.Set, cursor uint64, a scanArgs) {
		var page [][]byte
		next := s.Scan(cursor, a.count, func(m []byte) {
			if a.match == nil || store.Match(a.match, m) {
				page = append(page, slices.Clone(m))
			}
		})
		writeScanPage(cl, next, page)
	})
}
