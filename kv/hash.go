package kv

import (
	"math"
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Hashes: the commands of Redis 7.0's hash group, over store.Hash.

// The hash family. Its writes are logged (each entry's log) as they are,
// preceded by a DEL when they met a missing or expired key (a replay keeps
// expired keys until the load ends, and would add to the old hash); HDEL
// only when it deleted something; HINCRBYFLOAT as an HSET of its result, as
// Redis propagates it.
var _ = registerFamily(family{kind: store.KindHash, rewrite: appendRewriteHash, commands: []*command{
	{
		name: "hset", arity: -4, fn: cmdHSet, log: logRMW,
		flags: "write denyoom fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets fields of a hash, creating it if needed.", "2.0.0", "hash", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs."},
	},
	{
		name: "hsetnx", arity: 4, fn: cmdHSetNX, log: logRMW,
		flags: "write denyoom fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a field of a hash only if the field does not exist yet.", "2.0.0", "hash", "O(1)"},
	},
	{
		name: "hmset", arity: -4, fn: cmdHMSet, log: logRMW,
		flags: "write denyoom fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets fields of a hash (deprecated: HSET does the same).", "2.0.0", "hash", "O(N) where N is the number of fields being set."},
	},
	{
		name: "hget", arity: 3, fn: cmdHGet,
		flags: "readonly fast", acl: "@read @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the value of a hash field.", "2.0.0", "hash", "O(1)"},
	},
	{
		name: "hmget", arity: -3, fn: cmdHMGet,
		flags: "readonly fast", acl: "@read @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the values of several hash fields.", "2.0.0", "hash", "O(N) where N is the number of fields being requested."},
	},
	{
		name: "hgetall", arity: 2, fn: cmdHGetAll,
		flags: "readonly", acl: "@read @hash @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns every field and value of a hash.", "2.0.0", "hash", "O(N) where N is the size of the hash."},
	},
	{
		name: "hdel", arity: -3, fn: cmdHDel, log: logIfNonZero,
		flags: "write fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Deletes fields of a hash; an emptied hash is deleted.", "2.0.0", "hash", "O(N) where N is the number of fields to be removed."},
	},
	{
		name: "hexists", arity: 3, fn: cmdHExists,
		flags: "readonly fast", acl: "@read @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Tells whether a hash has a field.", "2.0.0", "hash", "O(1)"},
	},
	{
		name: "hincrby", arity: 4, fn: cmdHIncrBy, log: logRMW,
		flags: "write denyoom fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds an integer to the integer value of a hash field.", "2.0.0", "hash", "O(1)"},
	},
	{
		name: "hincrbyfloat", arity: 4, fn: cmdHIncrByFloat, log: logEffect,
		flags: "write denyoom fast", acl: "@write @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds a floating-point number to the value of a hash field.", "2.6.0", "hash", "O(1)"},
	},
	{
		name: "hkeys", arity: 2, fn: cmdHKeys,
		flags: "readonly", acl: "@read @hash @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the fields of a hash.", "2.0.0", "hash", "O(N) where N is the size of the hash."},
	},
	{
		name: "hvals", arity: 2, fn: cmdHVals,
		flags: "readonly", acl: "@read @hash @slow", tips: "nondeterministic_output_order",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the values of a hash.", "2.0.0", "hash", "O(N) where N is the size of the hash."},
	},
	{
		name: "hlen", arity: 2, fn: cmdHLen,
		flags: "readonly fast", acl: "@read @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of fields of a hash.", "2.0.0", "hash", "O(1)"},
	},
	{
		name: "hstrlen", arity: 3, fn: cmdHStrLen,
		flags: "readonly fast", acl: "@read @hash @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the length of a hash field's value.", "3.2.0", "hash", "O(1)"},
	},
	{
		name: "hscan", arity: -3, fn: cmdHScan,
		flags: "readonly", acl: "@read @hash @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Iterates over the fields and values of a hash.", "2.8.0", "hash", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.."},
	},
	{
		name: "hrandfield", arity: -2, fn: cmdHRandField,
		flags: "readonly", acl: "@read @hash @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns random fields of a hash, with their values if asked.", "6.2.0", "hash", "O(N) where N is the number of fields returned"},
	},
}})

// appendRewriteHash appends HSET commands that rebuild o.
func appendRewriteHash(dst, key []byte, o store.Object) []byte {
	hs := o.(*store.Hash)
	b := newBatchWriter(dst, "HSET", key, 2, hs.Len())
	hs.Range(func(f, v []byte) bool { b.add(f, v); return true })
	return b.dst
}

// viewHash runs fn with key's hash (nil when missing) under its shard's
// read lock, or writes WRONGTYPE.
func (h *Handler) viewHash(cl *client, key []byte, fn func(hs *store.Hash)) {
	viewCollection(cl, key, store.KindHash, fn)
}

// elementOverhead is what one hash field or set member costs beyond its
// bytes in the large encoding (entry, index slot), for the need estimate
// passed to the store's memory check.
const elementOverhead = 32

func cmdHSet(h *Handler, cl *client, args [][]byte)  { h.hset(cl, args, false) }
func cmdHMSet(h *Handler, cl *client, args [][]byte) { h.hset(cl, args, true) }

func (h *Handler) hset(cl *client, args [][]byte, hmset bool) {
	if len(args)%2 == 1 {
		cl.writeError(errWrongArgs(string(ascii.AppendLower(nil, args[0]))))
		return
	}
	need := int64(0)
	for _, a := range args[2:] {
		need += int64(len(a))
	}
	need += int64(len(args)/2) * elementOverhead
	added := 0
	created := false
	err := cl.db().Update(args[1], store.KindHash, need, func(o store.Object) store.Object {
		hs, _ := o.(*store.Hash)
		if hs == nil {
			hs, created = store.NewHash(), true
		}
		for i := 2; i < len(args); i += 2 {
			if hs.Set(args[i], args[i+1]) {
				added++
			}
		}
		return hs
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case hmset:
		cl.writeOK()
	default:
		cl.writeInt(int64(added))
	}
	cl.notifyNew(created, args[1])
	cl.notify(evHash, "hset", args[1])
}

func cmdHSetNX(h *Handler, cl *client, args [][]byte) {
	added, created := false, false
	err := cl.db().Update(args[1], store.KindHash, int64(len(args[2])+len(args[3])+elementOverhead), func(o store.Object) store.Object {
		hs, _ := o.(*store.Hash)
		if hs == nil {
			hs, created = store.NewHash(), true
		}
		if _, exists := hs.Get(args[2]); !exists {
			hs.Set(args[2], args[3])
			added = true
		}
		return hs
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(added))
	if added {
		cl.notifyNew(created, args[1])
		cl.notify(evHash, "hset", args[1])
	}
}

func cmdHGet(h *Handler, cl *client, args [][]byte)  { h.hget(cl, args, false) }
func cmdHMGet(h *Handler, cl *client, args [][]byte) { h.hget(cl, args, true) }

// hget is HGET and HMGET (many: an array): the value of each field of
// args[2:], a null for one the hash lacks.
func (h *Handler) hget(cl *client, args [][]byte, many bool) {
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		if many {
			cl.writeArray(len(args) - 2)
		}
		for _, f := range args[2:] {
			var v []byte
			found := false
			if hs != nil {
				v, found = hs.Get(f)
			}
			if found {
				cl.writeBulk(v)
			} else {
				cl.writeNull()
			}
		}
	})
}

func cmdHGetAll(h *Handler, cl *client, args [][]byte) {
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		if hs == nil {
			cl.writeMap(0)
			return
		}
		cl.writeMap(hs.Len())
		hs.Range(func(f, v []byte) bool {
			cl.writeBulk(f)
			cl.writeBulk(v)
			return true
		})
	})
}

func cmdHKeys(h *Handler, cl *client, args [][]byte) { h.hkeysVals(cl, args, true) }
func cmdHVals(h *Handler, cl *client, args [][]byte) { h.hkeysVals(cl, args, false) }

func (h *Handler) hkeysVals(cl *client, args [][]byte, keys bool) {
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		if hs == nil {
			cl.writeArray(0)
			return
		}
		cl.writeArray(hs.Len())
		hs.Range(func(f, v []byte) bool {
			if keys {
				cl.writeBulk(f)
			} else {
				cl.writeBulk(v)
			}
			return true
		})
	})
}

func cmdHDel(h *Handler, cl *client, args [][]byte) {
	removeEach(cl, args[1], store.KindHash, evHash, "hdel", args[2:], (*store.Hash).Delete)
}

func cmdHLen(_ *Handler, cl *client, args [][]byte) { writeLength(cl, args[1], store.KindHash) }

func cmdHExists(h *Handler, cl *client, args [][]byte) {
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		found := false
		if hs != nil {
			_, found = hs.Get(args[2])
		}
		cl.writeInt(boolInt(found))
	})
}

func cmdHStrLen(h *Handler, cl *client, args [][]byte) {
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		var v []byte
		if hs != nil {
			v, _ = hs.Get(args[2])
		}
		cl.writeInt(int64(len(v)))
	})
}

func cmdHIncrBy(h *Handler, cl *client, args [][]byte) {
	incr, ok := ascii.ParseInt(args[3])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	var result int64
	var errText string
	created := false
	err := cl.db().Update(args[1], store.KindHash, int64(len(args[2])+20+elementOverhead), func(o store.Object) store.Object {
		hs, _ := o.(*store.Hash)
		var cur int64
		if hs != nil {
			if v, found := hs.Get(args[2]); found {
				if cur, ok = ascii.ParseInt(v); !ok {
					errText = store.ErrHashNotInteger.Error()
					return o
				}
			}
		} else {
			hs, created = store.NewHash(), true
		}
		if incr < 0 && cur < 0 && incr < math.MinInt64-cur || incr > 0 && cur > 0 && incr > math.MaxInt64-cur {
			errText = store.ErrOverflow.Error()
			return o
		}
		result = cur + incr
		var buf [20]byte
		hs.Set(args[2], strconv.AppendInt(buf[:0], result, 10))
		return hs
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case errText != "":
		cl.writeError(errText)
	default:
		cl.writeInt(result)
		cl.notifyNew(created, args[1])
		cl.notify(evHash, "hincrby", args[1])
	}
}

// cmdHIncrByFloat adds in long double as Redis does, replies with the new
// value and logs it as HSET key field value (preceded by DEL when the key
// was missing), so a replay does not depend on float arithmetic.
func cmdHIncrByFloat(h *Handler, cl *client, args [][]byte) {
	// The increment is checked before the key, as Redis does.
	if _, err := store.HashIncrByFloat(nil, nil, args[3]); err != nil {
		cl.writeError(err.Error())
		return
	}
	var buf [64]byte
	var result []byte
	var opErr error
	created := false
	err := cl.db().Update(args[1], store.KindHash, int64(len(args[2])+64+elementOverhead), func(o store.Object) store.Object {
		hs, _ := o.(*store.Hash)
		var cur []byte
		if hs != nil {
			cur, _ = hs.Get(args[2])
		} else {
			hs, created = store.NewHash(), true
		}
		result, opErr = store.HashIncrByFloat(buf[:0], cur, args[3])
		if opErr != nil {
			created = false
			return o
		}
		hs.Set(args[2], result)
		return hs
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case opErr != nil:
		cl.writeError(opErr.Error())
		return
	}
	cl.writeBulk(result)
	cl.notifyNew(created, args[1])
	cl.notify(evHash, "hincrbyfloat", args[1])
	if cl.logsEffects() { // logging, and not replaying
		rec := cl.effectScratch()
		if created {
			rec = aof.AppendCommand(rec, []byte("DEL"), args[1])
		}
		cl.setEffect(aof.AppendCommand(rec, []byte("HSET"), args[1], args[2], result))
	}
}

func cmdHRandField(h *Handler, cl *client, args [][]byte) {
	if len(args) == 2 {
		h.viewHash(cl, args[1], func(hs *store.Hash) {
			if hs == nil {
				cl.writeNull()
				return
			}
			hs.Random(1, false, func(f, _ []byte) { cl.writeBulk(f) })
		})
		return
	}
	withValues := false
	switch {
	case len(args) == 4 && ascii.EqualFold(args[3], "withvalues"):
		withValues = true
	case len(args) >= 4:
		cl.writeError(errSyntax)
		return
	}
	l, errText := parseRandCount(args[2])
	if errText == "" && withValues && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
		errText = "ERR value is out of range"
	}
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.viewHash(cl, args[1], func(hs *store.Hash) {
		if hs == nil || l == 0 {
			cl.writeArray(0)
			return
		}
		if l < -randMaxCount {
			cl.writeError("ERR value is out of range")
			return
		}
		one := func(f, v []byte) {
			cl.writePairStart(withValues)
			cl.writeBulk(f)
			if withValues {
				cl.writeBulk(v)
			}
		}
		header := func(k int) { cl.writePairArray(k, withValues) }
		n := hs.Len()
		switch {
		case l < 0 || l == 1:
			k := int(max(l, -l))
			header(k)
			hs.Random(k, false, one)
		case l >= int64(n): // the whole hash, in its order
			header(n)
			hs.Range(func(f, v []byte) bool { one(f, v); return true })
		default:
			header(int(l))
			hs.Random(int(l), true, one)
		}
	})
}

func cmdHScan(h *Handler, cl *client, args [][]byte) {
	scanCollection(cl, args, store.KindHash, func(hs *store.Hash, cursor uint64, a scanArgs) {
		var elems [][]byte // slices of the hash, valid under the read lock
		next := hs.Scan(cursor, a.count, func(f, v []byte) {
			if a.match == nil || store.Match(a.match, f) {
				elems = append(elems, f, v)
			}
		})
		writeScanPage(cl, next, elems)
	})
}
