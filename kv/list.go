package kv

import (
	"bytes"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Lists: LPUSH, LRANGE and the rest of Redis 7.0's list family, over
// store.List. The blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
// BLMPOP) park the client through blocking.go and are served by the push
// that makes one of their keys a list.

var _ = registerFamily(family{kind: store.KindList, rewrite: appendRewriteList, commands: []*command{
	{
		name: "lpush", arity: -3, fn: cmdLPush, log: logAsIs,
		flags: "write denyoom fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Inserts elements at the head of a list, creating it if needed.", "1.0.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "rpush", arity: -3, fn: cmdRPush, log: logAsIs,
		flags: "write denyoom fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Appends elements to the tail of a list, creating it if needed.", "1.0.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "lpushx", arity: -3, fn: cmdLPushX, log: logAsIs,
		flags: "write denyoom fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Inserts elements at the head of a list that exists.", "2.2.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "rpushx", arity: -3, fn: cmdRPushX, log: logAsIs,
		flags: "write denyoom fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Appends elements to the tail of a list that exists.", "2.2.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
	},
	{
		name: "lpop", arity: -2, fn: cmdLPop, log: logAsIs,
		flags: "write fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes and returns elements from the head of a list.", "1.0.0", "list", "O(N) where N is the number of elements returned"},
	},
	{
		name: "rpop", arity: -2, fn: cmdRPop, log: logAsIs,
		flags: "write fast", acl: "@write @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes and returns elements from the tail of a list.", "1.0.0", "list", "O(N) where N is the number of elements returned"},
	},
	{
		name: "lrange", arity: 4, fn: cmdLRange,
		flags: "readonly", acl: "@read @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the elements of a list between two indexes.", "1.0.0", "list", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range."},
	},
	{
		name: "lindex", arity: 3, fn: cmdLIndex,
		flags: "readonly", acl: "@read @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the element of a list at an index.", "1.0.0", "list", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1)."},
	},
	{
		name: "linsert", arity: 5, fn: cmdLInsert, log: logAsIs,
		flags: "write denyoom", acl: "@write @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Inserts an element before or after a pivot element of a list.", "2.2.0", "list", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N)."},
	},
	{
		name: "llen", arity: 2, fn: cmdLLen,
		flags: "readonly fast", acl: "@read @list @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of elements of a list.", "1.0.0", "list", "O(1)"},
	},
	{
		name: "lrem", arity: 4, fn: cmdLRem, log: logAsIs,
		flags: "write", acl: "@write @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes occurrences of an element from a list.", "1.0.0", "list", "O(N+M) where N is the length of the list and M is the number of elements removed."},
	},
	{
		name: "lset", arity: 4, fn: cmdLSet, log: logAsIs,
		flags: "write denyoom", acl: "@write @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Replaces the element of a list at an index.", "1.0.0", "list", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1)."},
	},
	{
		name: "ltrim", arity: 4, fn: cmdLTrim, log: logAsIs,
		flags: "write", acl: "@write @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Keeps only the elements of a list between two indexes.", "1.0.0", "list", "O(N) where N is the number of elements to be removed by the operation."},
	},
	{
		name: "lpos", arity: -3, fn: cmdLPos,
		flags: "readonly", acl: "@read @list @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the indexes of the elements of a list equal to a value.", "6.0.6", "list", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time."},
	},
	{
		name: "lmove", arity: 5, fn: cmdLMove, log: logAsIs,
		flags: "write denyoom", acl: "@write @list @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Moves an element from one end of a list to an end of another.", "6.2.0", "list", "O(1)"},
	},
	{
		name: "rpoplpush", arity: 3, fn: cmdRPopLPush, log: logAsIs,
		flags: "write denyoom", acl: "@write @list @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Moves the tail element of a list to the head of another.", "1.2.0", "list", "O(1)"},
	},
	{
		name: "lmpop", arity: -4, fn: cmdLMPop, log: logEffect,
		flags: "write movablekeys", acl: "@write @list @slow",
		keySpecs: []keySpec{{flags: "RW access delete", index: 1, keynum: true, keynumIdx: 0, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Removes and returns elements from the first non-empty list of several.", "7.0.0", "list", "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
	},
	{
		name: "blpop", arity: -3, fn: cmdBLPop, log: logEffect,
		flags: "write noscript blocking", acl: "@write @list @slow @blocking",
		firstKey: 1, lastKey: -2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, lastKey: -2, keyStep: 1}},
		doc: commandDoc{"Removes and returns the head element of the first non-empty list, waiting for one if none.", "2.0.0", "list", "O(N) where N is the number of provided keys."},
	},
	{
		name: "brpop", arity: -3, fn: cmdBRPop, log: logEffect,
		flags: "write noscript blocking", acl: "@write @list @slow @blocking",
		firstKey: 1, lastKey: -2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, lastKey: -2, keyStep: 1}},
		doc: commandDoc{"Removes and returns the tail element of the first non-empty list, waiting for one if none.", "2.0.0", "list", "O(N) where N is the number of provided keys."},
	},
	{
		name: "blmove", arity: 6, fn: cmdBLMove, log: logEffect,
		flags: "write denyoom noscript blocking", acl: "@write @list @slow @blocking",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Moves an element between lists, waiting for the source to have one.", "6.2.0", "list", "O(1)"},
	},
	{
		name: "brpoplpush", arity: 4, fn: cmdBRPopLPush, log: logEffect,
		flags: "write denyoom noscript blocking", acl: "@write @list @slow @blocking",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Moves the tail element of a list to the head of another, waiting for one.", "2.2.0", "list", "O(1)"},
	},
	{
		name: "blmpop", arity: -5, fn: cmdBLMPop, log: logEffect,
		flags: "write blocking movablekeys", acl: "@write @list @slow @blocking",
		keySpecs: []keySpec{{flags: "RW access delete", index: 2, keynum: true, keynumIdx: 0, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Removes and returns elements from the first non-empty list of several, waiting for one if none.", "7.0.0", "list", "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
	},
}})

const (
	errNoSuchKey      = "ERR no such key"
	errIndexRange     = "ERR index out of range"
	errMustBePositive = "ERR value is out of range, must be positive"
	errNumKeys        = "ERR numkeys should be greater than 0"
	errCountPositive  = "ERR count should be greater than 0"
)

// pushNeed is the memory a push of vals may add, for maxmemory.
func pushNeed(vals [][]byte) int64 {
	n := int64(0)
	for _, v := range vals {
		n += int64(len(v)) + 8
	}
	return n
}

// parseEnd reads LEFT or RIGHT; front reports LEFT.
func parseEnd(b []byte) (front, ok bool) {
	switch {
	case ascii.EqualFold(b, "left"):
		return true, true
	case ascii.EqualFold(b, "right"):
		return false, true
	}
	return false, false
}

// parseEnds reads LMOVE's and BLMOVE's two ends; a word that is neither
// LEFT nor RIGHT is answered with a syntax error and reported false.
func parseEnds(cl *client, fromArg, toArg []byte) (fromFront, toFront, ok bool) {
	from, ok1 := parseEnd(fromArg)
	to, ok2 := parseEnd(toArg)
	if !ok1 || !ok2 {
		cl.writeError(errSyntax)
		return false, false, false
	}
	return from, to, true
}

func cmdLPush(h *Handler, cl *client, args [][]byte)  { h.push(cl, args, true, false) }
func cmdRPush(h *Handler, cl *client, args [][]byte)  { h.push(cl, args, false, false) }
func cmdLPushX(h *Handler, cl *client, args [][]byte) { h.push(cl, args, true, true) }
func cmdRPushX(h *Handler, cl *client, args [][]byte) { h.push(cl, args, false, true) }

// push is LPUSH, RPUSH and their X forms (only onto an existing list).
// Creating the list is what wakes clients blocked on the key.
func (h *Handler) push(cl *client, args [][]byte, front, onlyExisting bool) {
	key, vals := args[1], args[2:]
	n, created, pushed := 0, false, false
	err := cl.db().Update(key, store.KindList, pushNeed(vals), func(o store.Object) store.Object {
		l, _ := o.(*store.List)
		if l == nil {
			if onlyExisting {
				return nil
			}
			l, created = store.NewList(), true
		}
		for _, v := range vals {
			if front {
				l.PushFront(v)
			} else {
				l.PushBack(v)
			}
		}
		n, pushed = l.Len(), true
		return l
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if created {
		h.signalReady(cl, key)
	}
	cl.writeInt(int64(n))
	if pushed {
		cl.notifyNew(created, key)
		cl.notify(evList, endEvent(front, "lpush", "rpush"), key)
	}
}

// endEvent picks a list event by the end it works at.
func endEvent(front bool, head, tail string) string {
	if front {
		return head
	}
	return tail
}

func cmdLPop(h *Handler, cl *client, args [][]byte) { h.pop(cl, args, true) }
func cmdRPop(h *Handler, cl *client, args [][]byte) { h.pop(cl, args, false) }

// pop is LPOP and RPOP. Without a count the reply is one bulk (null when
// the key is missing); with one, an array (a null array when missing).
func (h *Handler) pop(cl *client, args [][]byte, front bool) {
	if len(args) > 3 {
		name := "rpop"
		if front {
			name = "lpop"
		}
		cl.writeError(errWrongArgs(name))
		return
	}
	count, ok := parsePopCount(cl, args)
	if !ok {
		return
	}
	found, emptied, err := updateExisting(cl, args[1], store.KindList, func(l *store.List) {
		if count >= 0 {
			cl.out = appendPopped(cl.out, l, front, count)
			return
		}
		i := 0
		if !front {
			i = l.Len() - 1
		}
		cl.writeBulk(l.Index(i))
		l.Delete(i, 1)
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case found:
		cl.notifyRemoved(evList, endEvent(front, "lpop", "rpop"), args[1], emptied)
	case count < 0:
		cl.writeNull()
	default:
		cl.writeNullArray()
	}
}

// appendPopped removes up to count elements from one end of l and appends
// them to out as an array, in the order they were popped.
func appendPopped(out []byte, l *store.List, front bool, count int64) []byte {
	n := l.Len()
	if count > int64(n) {
		count = int64(n)
	}
	c := int(count)
	out = resp.AppendArrayHeader(out, c)
	if c == 0 {
		return out
	}
	if front {
		l.Range(0, c-1, func(v []byte) bool { out = resp.AppendBulk(out, v); return true })
		l.Delete(0, c)
	} else {
		left := c
		l.RangeBack(n-1, func(_ int, v []byte) bool {
			out = resp.AppendBulk(out, v)
			left--
			return left > 0
		})
		l.Delete(n-c, c)
	}
	return out
}

// viewList runs fn with key's list (nil when missing); it answers
// WRONGTYPE itself and reports false then.
func (h *Handler) viewList(cl *client, key []byte, fn func(l *store.List)) bool {
	return viewCollection(cl, key, store.KindList, fn)
}

func cmdLLen(_ *Handler, cl *client, args [][]byte) { writeLength(cl, args[1], store.KindList) }

// normalizeRange applies Redis's LRANGE/LTRIM index rules: negative
// indexes count from the end; it reports an empty range as ok=false.
func normalizeRange(start, stop int64, n int) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0, false
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop), true
}

func cmdLRange(h *Handler, cl *client, args [][]byte) {
	start, stop, ok := parseIntPair(cl, args[2], args[3])
	if !ok {
		return
	}
	h.viewList(cl, args[1], func(l *store.List) {
		if l == nil {
			cl.writeArray(0)
			return
		}
		from, to, ok := normalizeRange(start, stop, l.Len())
		if !ok {
			cl.writeArray(0)
			return
		}
		cl.writeArray(to - from + 1)
		l.Range(from, to, func(v []byte) bool { cl.writeBulk(v); return true })
	})
}

func cmdLIndex(h *Handler, cl *client, args [][]byte) {
	idx, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	h.viewList(cl, args[1], func(l *store.List) {
		if l == nil {
			cl.writeNull()
			return
		}
		if idx < 0 {
			idx += int64(l.Len())
		}
		if idx < 0 || idx >= int64(l.Len()) {
			cl.writeNull()
			return
		}
		cl.writeBulk(l.Index(int(idx)))
	})
}

func cmdLSet(h *Handler, cl *client, args [][]byte) {
	idx, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	reply := ""
	err := cl.db().Update(args[1], store.KindList, int64(len(args[3])), func(o store.Object) store.Object {
		l, _ := o.(*store.List)
		if l == nil {
			reply = errNoSuchKey
			return nil
		}
		i := idx
		if i < 0 {
			i += int64(l.Len())
		}
		if i < 0 || i >= int64(l.Len()) {
			reply = errIndexRange
			return l
		}
		l.Set(int(i), args[3])
		return l
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case reply != "":
		cl.writeError(reply)
	default:
		cl.writeOK()
		cl.notify(evList, "lset", args[1])
	}
}

func cmdLInsert(h *Handler, cl *client, args [][]byte) {
	var after bool
	switch {
	case ascii.EqualFold(args[2], "before"):
	case ascii.EqualFold(args[2], "after"):
		after = true
	default:
		cl.writeError(errSyntax)
		return
	}
	pivot, val := args[3], args[4]
	result := int64(0)
	err := cl.db().Update(args[1], store.KindList, int64(len(val))+8, func(o store.Object) store.Object {
		l, _ := o.(*store.List)
		if l == nil {
			return nil
		}
		at, i := -1, 0
		l.Range(0, l.Len()-1, func(v []byte) bool {
			if bytes.Equal(v, pivot) {
				at = i
				return false
			}
			i++
			return true
		})
		if at < 0 {
			result = -1
			return l
		}
		if after {
			at++
		}
		l.Insert(at, val)
		result = int64(l.Len())
		return l
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(result)
	if result > 0 {
		cl.notify(evList, "linsert", args[1])
	}
}

func cmdLRem(h *Handler, cl *client, args [][]byte) {
	count, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	removeMembers(cl, args[1], store.KindList, evList, "lrem", func(l *store.List) int {
		limit, fromTail := count, false
		if count < 0 {
			limit, fromTail = -count, true // -MinInt64 stays negative: no limit, as in Redis
		}
		if limit < 0 {
			limit = 0
		}
		return l.Remove(args[3], int(limit), fromTail)
	})
}

func cmdLTrim(h *Handler, cl *client, args [][]byte) {
	start, stop, ok := parseIntPair(cl, args[2], args[3])
	if !ok {
		return
	}
	found, emptied, err := updateExisting(cl, args[1], store.KindList, func(l *store.List) {
		n := l.Len()
		from, to, ok := normalizeRange(start, stop, n)
		if !ok {
			l.Delete(0, n)
			return
		}
		l.Delete(to+1, n-to-1)
		l.Delete(0, from)
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeOK()
	if found {
		cl.notifyRemoved(evList, "ltrim", args[1], emptied)
	}
}

// cmdLPos: LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
func cmdLPos(h *Handler, cl *client, args [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 3; i < len(args); i += 2 {
		var name string
		var dst *int64
		switch {
		case ascii.EqualFold(args[i], "rank"):
			name, dst = "RANK", &rank
		case ascii.EqualFold(args[i], "count"):
			name, dst = "COUNT", &count
		case ascii.EqualFold(args[i], "maxlen"):
			name, dst = "MAXLEN", &maxlen
		}
		if dst == nil || i+1 == len(args) {
			cl.writeError(errSyntax)
			return
		}
		n, ok := ascii.ParseInt(args[i+1])
		switch {
		case !ok:
			cl.writeError(errNotInteger)
			return
		case dst == &rank && n == 0:
			cl.writeError("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
			return
		case dst != &rank && n < 0:
			cl.writeError("ERR " + name + " can't be negative")
			return
		}
		*dst = n
	}
	elem := args[2]
	h.viewList(cl, args[1], func(l *store.List) {
		if l == nil {
			if count >= 0 {
				cl.writeArray(0)
			} else {
				cl.writeNull()
			}
			return
		}
		fromTail := rank < 0
		if fromTail {
			rank = -rank // -MinInt64 stays negative, and then every match ranks, as in Redis
		}
		var found []int64
		matches, scanned := int64(0), int64(0)
		visit := func(i int, v []byte) bool {
			if maxlen != 0 && scanned >= maxlen {
				return false
			}
			scanned++
			if !bytes.Equal(v, elem) {
				return true
			}
			matches++
			if matches < rank {
				return true
			}
			found = append(found, int64(i))
			if count < 0 {
				return false
			}
			return count == 0 || matches-rank+1 < count
		}
		if fromTail {
			l.RangeBack(l.Len()-1, visit)
		} else {
			i := 0
			l.Range(0, l.Len()-1, func(v []byte) bool { ok := visit(i, v); i++; return ok })
		}
		if count < 0 {
			if len(found) == 0 {
				cl.writeNull()
			} else {
				cl.writeInt(found[0])
			}
			return
		}
		cl.writeArray(len(found))
		for _, i := range found {
			cl.writeInt(i)
		}
	})
}

// moveResult is what an LMOVE did.
type moveResult struct {
	val     []byte // the element moved (a copy); nil if the source was missing
	created bool   // the destination list was created: clients blocked on it wake
	emptied bool   // the source list lost its last element and went
	err     error
}

// notifyMove publishes a move's events in Redis's order: the push onto
// dst (after "new" if it made dst), then the pop from src, then "del" if
// that emptied src. from is the client whose command moved (nil for a
// served BLMOVE).
func (h *Handler) notifyMove(from *client, db int, src, dst []byte, r moveResult, fromFront, toFront bool) {
	if !h.notifying(evNew|evList|evGeneric) || r.val == nil || r.err != nil {
		return
	}
	if r.created {
		h.notifyDB(from, db, evNew, "new", dst)
	}
	h.notifyDB(from, db, evList, endEvent(toFront, "lpush", "rpush"), dst)
	h.notifyDB(from, db, evList, endEvent(fromFront, "lpop", "rpop"), src)
	if r.emptied {
		h.notifyDB(from, db, evGeneric, "del", src)
	}
}

// move pops an element from src's end and pushes it to dst's (LMOVE,
// RPOPLPUSH and the served BLMOVE), as one transaction over both keys.
// WRONGTYPE for the destination is only checked when there is something
// to move, as Redis does.
func (h *Handler) move(db *store.Store, src, dst []byte, fromFront, toFront bool) moveResult {
	var r moveResult
	keys := [2][]byte{src, dst}
	r.err = db.Tx(keys[:], 64, func(t *store.Tx) error {
		so, err := t.Object(0, store.KindList)
		if err != nil || so == nil {
			return err
		}
		do, err := t.Object(1, store.KindList)
		if err != nil {
			return err
		}
		sl := so.(*store.List)
		i := 0
		if !fromFront {
			i = sl.Len() - 1
		}
		r.val = append([]byte{}, sl.Index(i)...)
		sl.Delete(i, 1)
		r.emptied = sl.Len() == 0 && string(src) != string(dst)
		dl, _ := do.(*store.List)
		if dl == nil {
			dl, r.created = store.NewList(), true
		}
		if toFront {
			dl.PushFront(r.val)
		} else {
			dl.PushBack(r.val)
		}
		if r.created {
			return t.Put(1, dl)
		}
		return nil
	})
	return r
}

func cmdLMove(h *Handler, cl *client, args [][]byte) {
	from, to, ok := parseEnds(cl, args[3], args[4])
	if !ok {
		return
	}
	r := h.move(cl.db(), args[1], args[2], from, to)
	h.replyMove(cl, args[1], args[2], r)
	h.notifyMove(cl, int(cl.selected.Load()), args[1], args[2], r, from, to)
}

func cmdRPopLPush(h *Handler, cl *client, args [][]byte) {
	r := h.move(cl.db(), args[1], args[2], false, true)
	h.replyMove(cl, args[1], args[2], r)
	h.notifyMove(cl, int(cl.selected.Load()), args[1], args[2], r, false, true)
}

func (h *Handler) replyMove(cl *client, _, dst []byte, r moveResult) {
	switch {
	case r.err != nil:
		cl.writeError(r.err.Error())
	case r.val == nil:
		cl.writeNull()
	default:
		if r.created {
			h.signalReady(cl, dst)
		}
		cl.writeBulk(r.val)
	}
}

// mpopArgs are LMPOP's and BLMPOP's arguments after the timeout.
type mpopArgs struct {
	keys  [][]byte
	front bool
	count int64
}

// parseMPop reads numkeys key... LEFT|RIGHT [COUNT count] from args.
func parseMPop(args [][]byte) (a mpopArgs, errText string) {
	n, ok := ascii.ParseInt(args[0])
	if !ok || n <= 0 {
		return a, errNumKeys
	}
	if n >= int64(len(args)-1) { // no room for the direction
		return a, errSyntax
	}
	a.keys = args[1 : 1+n]
	rest := args[1+n:]
	if a.front, ok = parseEnd(rest[0]); !ok {
		return a, errSyntax
	}
	a.count = -1
	for i := 1; i < len(rest); i++ {
		if a.count == -1 && ascii.EqualFold(rest[i], "count") && i+1 < len(rest) {
			i++
			c, ok := ascii.ParseInt(rest[i])
			if !ok || c <= 0 {
				return a, errCountPositive
			}
			a.count = c
			continue
		}
		return a, errSyntax
	}
	if a.count == -1 {
		a.count = 1
	}
	return a, ""
}

// popFrom pops up to count elements from the first non-empty list among
// keys and returns the reply ([key, [elements]]) appended to out, and the
// AOF record of the pop (LPOP/RPOP key n) appended to rec. found is false
// when every key is missing; err is WRONGTYPE for the first key of another
// kind met before a list.
//
// ev, if set, is told of the pop for its keyspace events.
func (h *Handler) popFrom(db *store.Store, keys [][]byte, front bool, count int64, out, rec []byte, single bool, ev *popEvent) (_, _ []byte, key []byte, found bool, err error) {
	for _, k := range keys {
		n := 0
		err = db.Update(k, store.KindList, 0, func(o store.Object) store.Object {
			l, _ := o.(*store.List)
			if l == nil {
				return nil
			}
			found = true
			if ev != nil {
				defer func() { ev.emptied = l.Len() == 0 }()
			}
			if single {
				out = resp.AppendArrayHeader(out, 2)
				out = resp.AppendBulk(out, k)
				i := 0
				if !front {
					i = l.Len() - 1
				}
				out = resp.AppendBulk(out, l.Index(i))
				l.Delete(i, 1)
				return l
			}
			n = min(int(count), l.Len())
			out = resp.AppendArrayHeader(out, 2)
			out = resp.AppendBulk(out, k)
			out = appendPopped(out, l, front, int64(n))
			return l
		})
		if err != nil {
			return out, rec, nil, false, err
		}
		if found {
			name := "RPOP"
			if front {
				name = "LPOP"
			}
			if single {
				rec = aof.AppendCommand(rec, []byte(name), k)
			} else {
				rec = aof.AppendHeader(rec, 3)
				rec = aof.AppendArg(rec, []byte(name))
				rec = aof.AppendArg(rec, k)
				rec = aof.AppendIntArg(rec, int64(n))
			}
			if ev != nil {
				ev.publish(h, k, endEvent(front, "lpop", "rpop"))
			}
			return out, rec, k, true, nil
		}
	}
	return out, rec, nil, false, nil
}

// effectScratch returns the buffer a logEffect command writes its AOF
// record to: nil when nothing is logged (no file, or the replay itself).
func (cl *client) effectScratch() []byte {
	if !cl.logsEffects() {
		return nil
	}
	return cl.aof.effect[:0]
}

func (cl *client) setEffect(rec []byte) {
	if cl.logsEffects() {
		cl.aof.effect = rec
	}
}

func cmdLMPop(h *Handler, cl *client, args [][]byte) {
	a, errText := parseMPop(args[1:])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	out, rec, _, found, err := h.popFrom(cl.db(), a.keys, a.front, a.count, cl.out, cl.effectScratch(), false, cl.popEvent())
	cl.out = out
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case !found:
		cl.writeNullArray()
	default:
		cl.setEffect(rec)
	}
}

// appendRewriteList appends RPUSH commands that rebuild list o, at most 64
// elements each, as Redis's rewrite batches them.
func appendRewriteList(dst, key []byte, o store.Object) []byte {
	l := o.(*store.List)
	b := newBatchWriter(dst, "RPUSH", key, 1, l.Len())
	l.Range(0, l.Len()-1, func(v []byte) bool { b.add(v); return true })
	return b.dst
}

// The blocking commands.

func cmdBLPop(h *Handler, cl *client, args [][]byte) { h.blockingPop(cl, args, true) }
func cmdBRPop(h *Handler, cl *client, args [][]byte) { h.blockingPop(cl, args, false) }

// blockingPop is BLPOP and BRPOP: key... timeout.
func (h *Handler) blockingPop(cl *client, args [][]byte, front bool) {
	timeout, errText := parseTimeout(args[len(args)-1])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.blockingPopOf(cl, args[1:len(args)-1], front, 1, true, timeout)
}

// cmdBLMPop: BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT count].
func cmdBLMPop(h *Handler, cl *client, args [][]byte) {
	timeout, errText := parseTimeout(args[1])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	a, errText := parseMPop(args[2:])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.blockingPopOf(cl, a.keys, a.front, a.count, false, timeout)
}

// blockingPopOf is BLPOP, BRPOP (single: the reply is [key, element]) and
// BLMPOP: it pops as popFrom does from the first of keys that holds a list,
// or blocks cl until a write serves it one or timeout (ms) passes.
func (h *Handler) blockingPopOf(cl *client, keys [][]byte, front bool, count int64, single bool, timeout int64) {
	h.blockOn(cl, blockRequest{
		keys: keys, timeout: timeout, timeoutReply: nullArrayReply(int(cl.proto)),
		try: func() bool {
			out, rec, _, found, err := h.popFrom(cl.db(), keys, front, count, cl.out, cl.effectScratch(), single, cl.popEvent())
			if err != nil {
				cl.writeError(err.Error())
				return true
			}
			if found {
				cl.out = out
				cl.setEffect(rec)
			}
			return found
		},
		serve: func(key []byte, res *serveResult) bool {
			out, rec, _, found, err := h.popFrom(cl.db(), [][]byte{key}, front, count, nil, nil, single, cl.servedPopEvent())
			if err != nil || !found {
				return false // not a list (any more): Redis serves only lists
			}
			res.reply, res.record = out, rec
			return true
		},
	})
}

// cmdBLMove: BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func cmdBLMove(h *Handler, cl *client, args [][]byte) {
	from, to, ok := parseEnds(cl, args[3], args[4])
	if !ok {
		return
	}
	h.blockingMove(cl, args[1], args[2], from, to, args[5], func(rec []byte, src, dst []byte) []byte {
		return aof.AppendCommand(rec, []byte("LMOVE"), src, dst, endName(from), endName(to))
	})
}

// cmdBRPopLPush: BRPOPLPUSH source destination timeout.
func cmdBRPopLPush(h *Handler, cl *client, args [][]byte) {
	h.blockingMove(cl, args[1], args[2], false, true, args[3], func(rec []byte, src, dst []byte) []byte {
		return aof.AppendCommand(rec, []byte("RPOPLPUSH"), src, dst)
	})
}

func endName(front bool) []byte {
	if front {
		return []byte("left")
	}
	return []byte("right")
}

// blockingMove is BLMOVE and BRPOPLPUSH, logged as LMOVE / RPOPLPUSH.
func (h *Handler) blockingMove(cl *client, src, dst []byte, from, to bool, timeoutArg []byte, record func(rec, src, dst []byte) []byte) {
	timeout, errText := parseTimeout(timeoutArg)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	dstCopy := append([]byte(nil), dst...)
	h.blockOn(cl, blockRequest{
		keys: [][]byte{src}, touches: [][]byte{dst}, timeout: timeout, timeoutReply: nullArrayReply(int(cl.proto)), // Redis answers a timed-out BLMOVE with a null array too
		try: func() bool {
			// Only the source's type is checked while it is missing, as Redis.
			r := h.move(cl.db(), src, dst, from, to)
			if r.err != nil {
				cl.writeError(r.err.Error())
				return true
			}
			if r.val == nil {
				return false
			}
			if r.created {
				h.signalReady(cl, dst)
			}
			cl.writeBulk(r.val)
			cl.setEffect(record(cl.effectScratch(), src, dst))
			h.notifyMove(cl, int(cl.selected.Load()), src, dst, r, from, to)
			return true
		},
		serve: func(key []byte, res *serveResult) bool {
			if kind := cl.db().Type(key); kind != "list" {
				return false
			}
			r := h.move(cl.db(), key, dstCopy, from, to)
			h.notifyMove(nil, int(cl.selected.Load()), key, dstCopy, r, from, to)
			switch {
			case r.err != nil: // the destination holds another kind
				res.reply = resp.AppendError(nil, r.err.Error())
			case r.val == nil:
				return false
			default:
				res.reply = resp.AppendBulk(nil, r.val)
				res.record = record(nil, key, dstCopy)
				if r.created {
					res.ready = append(res.ready, dstCopy)
				}
			}
			return true
		},
	})
}

// popEvent is what a pop tells its keyspace events: the client whose
// command popped (nil for a waiter served by another's write) and its
// database, and whether the pop emptied the key.
type popEvent struct {
	from    *client
	db      int
	emptied bool
}

// popEvent returns cl's pop event while any of the pop's classes is
// published, else nil: the pop then records nothing.
func (cl *client) popEvent() *popEvent {
	if !cl.h.notifying(evList | evZSet | evGeneric) {
		return nil
	}
	return &popEvent{from: cl, db: int(cl.selected.Load())}
}

// servedPopEvent is popEvent for a waiter served by another client's
// write: the messages go through the mailboxes, not into cl's replies.
func (cl *client) servedPopEvent() *popEvent {
	ev := cl.popEvent()
	if ev != nil {
		ev.from = nil
	}
	return ev
}

// publish publishes the pop's event for key, then "del" if it emptied it.
func (ev *popEvent) publish(h *Handler, key []byte, event string) {
	class := evList
	if event == "zpopmin" || event == "zpopmax" {
		class = evZSet
	}
	h.notifyDB(ev.from, ev.db, class, event, key)
	if ev.emptied {
		h.notifyDB(ev.from, ev.db, evGeneric, "del", key)
	}
}
