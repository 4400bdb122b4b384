package kv

import (
	"errors"
	"strconv"
	"sync"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// DUMP and RESTORE: a value in Redis's DUMP payload format (package rdb),
// so a value dumped by redis-server 7.0 restores here and the reverse.
// valueOf and objectOf convert between the store's values and rdb.Value;
// SAVE and the replication's full sync read values the same way.

var _ = registerFamily(family{commands: []*command{
	{
		name: "dump", arity: 2, fn: cmdDump,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's value serialized in the RDB format, for RESTORE.", "2.6.0", "generic",
			"O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."},
	},
	{
		name: "restore", arity: -4, fn: cmdRestore, log: logEffect,
		flags: "write denyoom", acl: "@keyspace @write @slow @dangerous",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Creates a key from a value serialized by DUMP.", "2.6.0", "generic",
			"O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."},
	},
	{
		// What a cluster's MIGRATE sends; outside a cluster it is RESTORE.
		name: "restore-asking", arity: -4, fn: cmdRestore, log: logEffect,
		flags: "write denyoom asking", acl: "@keyspace @write @slow @dangerous",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Creates a key from a value serialized by DUMP, for a cluster's MIGRATE.", "3.0.0", "server",
			"O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."},
	},
}})

// Redis's RESTORE errors; errDumpPayload, shared with FUNCTION RESTORE,
// is in function_dump.go.
const (
	errBadData = "ERR Bad data format"
	errBusyKey = "BUSYKEY Target key name already exists."
	errBadTTL  = "ERR Invalid TTL value, must be >= 0"
	errBadIdle = "ERR Invalid IDLETIME value, must be >= 0"
	errBadFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

// dumpScratch is what one DUMP or RESTORE reuses: an encoder and a value.
type dumpScratch struct {
	enc  *rdb.Encoder
	v    rdb.Value
	buf  []byte // set members copied out of the set (an intset formats them)
	ends []int  // where each copied member ends in buf
}

var dumpPool = sync.Pool{New: func() any { return &dumpScratch{enc: rdb.NewEncoder(rdb.Options{})} }}

func cmdDump(h *Handler, cl *client, args [][]byte) {
	ds := dumpPool.Get().(*dumpScratch)
	defer dumpPool.Put(ds)
	payload, found, err := appendDump(cl.db(), nil, args[1], ds)
	switch {
	case err != nil:
		cl.writeError("ERR " + err.Error())
	case !found:
		cl.writeNull()
	default:
		cl.writeBulk(payload)
	}
}

// appendDump appends the DUMP payload of key's value. The key's type is
// read first and its value then under the shard's lock; should another
// write change the type between the two, it reads again.
func appendDump(db *store.Store, dst, key []byte, ds *dumpScratch) ([]byte, bool, error) {
	for {
		kind, ok := kindOf(db.Type(key))
		if !ok {
			return dst, false, nil
		}
		if kind == store.KindString {
			val, found, err := db.Get(ds.buf[:0], key)
			ds.buf = val
			if errors.Is(err, store.ErrWrongType) {
				continue
			}
			if !found {
				return dst, false, nil
			}
			ds.v.Reset()
			ds.v.Kind, ds.v.Str = rdb.KindString, val
			out, err := ds.enc.AppendDump(dst, &ds.v)
			return out, true, err
		}
		var out []byte
		var encErr error
		found := false
		err := db.View(key, kind, func(o store.Object) {
			if o == nil {
				return
			}
			found = true
			ds.valueOf(o)
			out, encErr = ds.enc.AppendDump(dst, &ds.v) // under the lock: the value's memory is the store's
			ds.v.Reset()
		})
		if errors.Is(err, store.ErrWrongType) {
			continue
		}
		if !found {
			return dst, false, nil
		}
		return out, true, encErr
	}
}

// kindOf maps TYPE's name to the store's kind; false for "none".
func kindOf(typ string) (store.Kind, bool) {
	switch typ {
	case "string":
		return store.KindString, true
	case "list":
		return store.KindList, true
	case "hash":
		return store.KindHash, true
	case "set":
		return store.KindSet, true
	case "zset":
		return store.KindZSet, true
	case "stream":
		return store.KindStream, true
	}
	return store.KindNone, false
}

// valueOf fills ds.v with collection o's elements. Except for set members
// (an intset formats them into a buffer of the call), the elements are
// the store's memory: use ds.v while o's shard is locked.
func (ds *dumpScratch) valueOf(o store.Object) {
	v := &ds.v
	v.Reset()
	switch o := o.(type) {
	case *store.List:
		v.Kind = rdb.KindList
		o.Range(0, o.Len()-1, func(e []byte) bool {
			v.Items = append(v.Items, e)
			return true
		})
	case *store.Hash:
		v.Kind = rdb.KindHash
		o.Range(func(f, val []byte) bool {
			v.Items = append(v.Items, f, val)
			return true
		})
	case *store.ZSet:
		v.Kind = rdb.KindZSet
		o.Range(0, o.Len(), false, func(m []byte, score float64) bool {
			v.Items = append(v.Items, m)
			v.Scores = append(v.Scores, score)
			return true
		})
	case *store.Stream:
		v.Kind = rdb.KindStream
		v.Stream = streamValueOf(o)
	case *store.Set:
		v.Kind = rdb.KindSet
		ds.buf, ds.ends = ds.buf[:0], ds.ends[:0]
		o.Range(func(m []byte) bool {
			ds.buf = append(ds.buf, m...)
			ds.ends = append(ds.ends, len(ds.buf))
			return true
		})
		start := 0
		for _, end := range ds.ends {
			v.Items = append(v.Items, ds.buf[start:end:end])
			start = end
		}
	}
}

// errDuplicate: a payload whose collection repeats a member, which Redis
// refuses too.
var errDuplicate = errors.New("duplicate element")

// objectOf builds the store's value of v: a collection, or nil for a
// string. The collection takes the encoding Redis would give it from the
// same elements. need is the memory it adds, for the store's limit.
func objectOf(v *rdb.Value) (o store.Object, need int64, err error) {
	for _, it := range v.Items {
		need += int64(len(it))
	}
	switch v.Kind {
	case rdb.KindString:
		return nil, int64(len(v.Str)), nil
	case rdb.KindList:
		l := store.NewList()
		for _, it := range v.Items {
			l.PushBack(it)
		}
		return l, need, nil
	case rdb.KindSet:
		s := store.NewSet()
		for _, it := range v.Items {
			if !s.Add(it) {
				return nil, 0, errDuplicate
			}
		}
		return s, need, nil
	case rdb.KindHash:
		hs := store.NewHash()
		for i := 0; i+1 < len(v.Items); i += 2 {
			if !hs.Set(v.Items[i], v.Items[i+1]) {
				return nil, 0, errDuplicate
			}
		}
		return hs, need, nil
	case rdb.KindStream:
		s, err := streamOf(v.Stream)
		if err != nil {
			return nil, 0, err
		}
		return s, s.Size(), nil
	case rdb.KindZSet:
		maxLen := 0
		for _, it := range v.Items {
			maxLen = max(maxLen, len(it))
		}
		z := store.NewZSet(len(v.Items), maxLen)
		for i, it := range v.Items {
			if !z.Set(it, v.Scores[i]) {
				return nil, 0, errDuplicate
			}
		}
		return z, need + int64(8*len(v.Scores)), nil
	}
	return nil, 0, errors.New("unknown kind " + v.Kind.String())
}

// restoreArgs are RESTORE's options.
type restoreArgs struct {
	replace, absTTL bool
	idle, freq      int64 // -1 when not given
}

// parseRestoreArgs parses RESTORE's options as Redis does, in order: an
// IDLETIME after a FREQ (or the reverse) is a syntax error.
func parseRestoreArgs(args [][]byte) (restoreArgs, string) {
	a := restoreArgs{idle: -1, freq: -1}
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case ascii.EqualFold(args[j], "replace"):
			a.replace = true
		case ascii.EqualFold(args[j], "absttl"):
			a.absTTL = true
		case ascii.EqualFold(args[j], "idletime") && more >= 1 && a.freq == -1:
			n, ok := ascii.ParseInt(args[j+1])
			if !ok {
				return a, errNotInteger
			}
			if n < 0 {
				return a, errBadIdle
			}
			a.idle = n
			j++
		case ascii.EqualFold(args[j], "freq") && more >= 1 && a.idle == -1:
			n, ok := ascii.ParseInt(args[j+1])
			if !ok {
				return a, errNotInteger
			}
			if n < 0 || n > 255 {
				return a, errBadFreq
			}
			a.freq = n
			j++
		default:
			return a, errSyntax
		}
	}
	return a, ""
}

// cmdRestore: RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency]. Checks come in Redis's order:
// options, an existing key, the TTL, the payload's footer, its value.
// IDLETIME and FREQ are checked and otherwise ignored: the store has no
// way to set a key's LRU clock or LFU counter.
func cmdRestore(h *Handler, cl *client, args [][]byte) {
	a, errText := parseRestoreArgs(args)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	key, db := args[1], cl.db()
	if !a.replace && db.KeyExists(key) {
		cl.writeError(errBusyKey)
		return
	}
	ttl, ok := ascii.ParseInt(args[2])
	switch {
	case !ok:
		cl.writeError(errNotInteger)
		return
	case ttl < 0:
		cl.writeError(errBadTTL)
		return
	}
	ds := dumpPool.Get().(*dumpScratch)
	defer dumpPool.Put(ds)
	defer ds.v.Reset() // its slices point into args
	if _, err := rdb.DecodeDump(args[3], &ds.v); err != nil {
		if errors.Is(err, rdb.ErrDumpFooter) {
			cl.writeError(errDumpPayload)
		} else {
			cl.writeError(errBadData)
		}
		return
	}
	obj, need, err := objectOf(&ds.v)
	if err != nil {
		cl.writeError(errBadData)
		return
	}
	if ttl != 0 && !a.absTTL {
		ttl += h.now()
	}
	if ttl != 0 && ttl <= h.now() {
		// Already expired: nothing is created, and with REPLACE the old
		// key is deleted, as Redis does.
		if a.replace && db.Del([][]byte{key}) > 0 {
			cl.setEffect(aof.AppendCommand(cl.effectScratch(), []byte("DEL"), key))
			cl.notify(evGeneric, "del", key)
		}
		cl.writeOK()
		return
	}
	busy := false
	if obj == nil {
		mode := store.SetAlways
		if !a.replace {
			mode = store.SetNX
		}
		var written bool
		_, _, written, err = db.Set(nil, key, ds.v.Str, store.SetOptions{Mode: mode, ExpireAt: ttl})
		busy = err == nil && !written
	} else {
		keys := [1][]byte{key}
		err = db.Tx(keys[:], need, func(t *store.Tx) error {
			if !a.replace && t.Kind(0) != store.KindNone {
				busy = true
				return nil
			}
			return t.Put(0, obj)
		})
		if err == nil && !busy && ttl != 0 {
			// The store sets a collection's expiry apart from putting it:
			// another command may see the key without its TTL in between.
			db.Expire(key, ttl, store.ExpireAlways)
		}
	}
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case busy: // created by another client since the check above
		cl.writeError(errBusyKey)
		return
	}
	h.signalReady(cl, key) // a list or sorted set arriving wakes its waiters
	cl.writeOK()
	if cl.logsEffects() { // logging, and not replaying
		cl.setEffect(appendRestoreRecord(cl.effectScratch(), key, ttl, args[3]))
	}
	cl.notify(evNew, "new", key)
	cl.notify(evGeneric, "restore", key)
}

// appendRestoreRecord logs a RESTORE by its effect: the value with an
// absolute expiry, replacing whatever a replay finds at the key (a replay
// keeps expired keys until it ends).
func appendRestoreRecord(dst, key []byte, at int64, payload []byte) []byte {
	dst = aof.AppendHeader(dst, 6)
	dst = aof.AppendArg(dst, []byte("RESTORE"))
	dst = aof.AppendArg(dst, key)
	dst = aof.AppendArg(dst, strconv.AppendInt(nil, at, 10))
	dst = aof.AppendArg(dst, payload)
	dst = aof.AppendArg(dst, []byte("REPLACE"))
	return aof.AppendArg(dst, []byte("ABSTTL"))
}
