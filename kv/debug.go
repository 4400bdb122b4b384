package kv

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/store"
)

// DEBUG, behind enable-debug-command as in Redis 7.0 (no by default; yes;
// local: from loopback clients only). Shoal has the subcommands tests,
// client libraries and operators use and that cannot harm the server:
// SLEEP, DIGEST and DIGEST-VALUE (Redis's own algorithm, so a Shoal and a
// redis-server holding the same data print the same digest), PROTOCOL
// (every RESP3 type, for client libraries' tests), ERROR, LOG, OBJECT and
// HELP. The ones that crash, leak or restart the server on purpose
// (SEGFAULT, PANIC, ASSERT, OOM, LEAK, CRASH-AND-RECOVER, RESTART) are
// refused by name; the others Shoal lacks get Redis's unknown-subcommand
// error.

var _ = registerFamily(family{commands: []*command{
	{
		name: "debug", arity: -2, fn: cmdDebug,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Debugging and testing aid: sleeps, dataset digests, every RESP type.", "1.0.0", "server", "Depends on subcommand."},
	},
}})

const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

// debugAllowed applies enable-debug-command to cl.
func (h *Handler) debugAllowed(cl *client) bool {
	switch h.params.Get("enable-debug-command") {
	case "yes":
		return true
	case "local":
		return cl.unixSocket || loopbackAddr(cl.addr)
	}
	return false
}

// loopbackAddr reports whether an "ip:port" address (as the edge gives it)
// is on the loopback interface: 127.0.0.0/8 or ::1, also IPv4-mapped. kv
// imports no networking packages, so it reads the text.
func loopbackAddr(addr string) bool {
	return strings.HasPrefix(addr, "127.") || strings.HasPrefix(addr, "[::1]:") ||
		strings.HasPrefix(addr, "[::ffff:127.")
}

func cmdDebug(h *Handler, cl *client, args [][]byte) {
	if !h.debugAllowed(cl) {
		cl.writeError(errDebugNotAllowed)
		return
	}
	sub := strings.ToLower(string(args[1]))
	n := len(args)
	switch {
	case sub == "help" && n == 2:
		debugHelp(cl)
	case sub == "sleep" && n == 3:
		// Redis's strtod: a number, or 0 when the text is none.
		secs, _ := strconv.ParseFloat(strings.TrimSpace(string(args[2])), 64)
		if secs > 0 {
			// The whole server stops, as in Redis: every loop waits.
			stopped := h.stopWorld(cl)
			time.Sleep(time.Duration(secs * float64(time.Second)))
			h.resumeWorld(cl, stopped)
		}
		cl.writeOK()
	case sub == "digest" && n == 2:
		d := h.datasetDigest()
		cl.writeStatus(hex.EncodeToString(d[:]))
	case sub == "digest-value":
		cl.writeArray(n - 2)
		for _, key := range args[2:] {
			d := keyDigest(cl.db(), key)
			cl.writeStatus(hex.EncodeToString(d[:]))
		}
	case sub == "protocol" && n == 3:
		debugProtocol(cl, args[2])
	case sub == "error" && n == 3:
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(args[2]))
		cl.out = append(append(append(cl.out, '-'), msg...), '\r', '\n')
		cl.failed = true
	case sub == "log" && n == 3:
		h.opts.Logger.Warn("DEBUG LOG: " + string(args[2]))
		cl.writeOK()
	case sub == "object" && n == 3:
		h.debugObject(cl, args[2])
	case sub == "set-active-expire" && n == 3:
		cmdDebugSetActiveExpire(h, cl, args[2]) // expiry_log.go
	case sub == "segfault" || sub == "panic" || sub == "assert" || sub == "oom" || sub == "leak" ||
		sub == "crash-and-recover" || sub == "restart":
		cl.writeError("ERR DEBUG " + strings.ToUpper(sub) + " is not supported: Shoal does not crash, leak or restart on request")
	default:
		cl.writeError(sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) + "'. Try DEBUG HELP."))
	}
}

func debugHelp(cl *client) {
	writeHelp(cl, "DEBUG", []string{
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"ERROR <string>",
		"    Return a Redis protocol error with <string> as message. Useful for clients",
		"    unit tests to simulate Redis errors.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"PROTOCOL <type>",
		"    Reply with a test value of the specified type. <type> can be: string,",
		"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
		"    true, false.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
	})
}

// debugProtocol answers with a sample of one RESP type, as Redis does, in
// the client's protocol.
func debugProtocol(cl *client, name []byte) {
	v3 := cl.proto >= 3
	switch strings.ToLower(string(name)) {
	case "string":
		cl.writeBulkStr("Hello World")
	case "integer":
		cl.writeInt(12345)
	case "double":
		cl.writeScore(3.141)
	case "bignum":
		const big = "1234567999999999999999999999999999999"
		if v3 {
			cl.out = append(append(append(cl.out, '('), big...), '\r', '\n')
		} else {
			cl.writeBulkStr(big)
		}
	case "null":
		cl.writeNull()
	case "array":
		cl.writeArray(3)
		for j := range int64(3) {
			cl.writeInt(j)
		}
	case "set":
		cl.writeSet(3)
		for j := range int64(3) {
			cl.writeInt(j)
		}
	case "map":
		cl.writeMap(3)
		for j := range int64(3) {
			cl.writeInt(j)
			cl.writeBool(j == 1)
		}
	case "attrib":
		if v3 {
			cl.out = append(cl.out, "|1\r\n"...)
			cl.writeBulkStr("key-popularity")
			cl.writeArray(2)
			cl.writeBulkStr("key:123")
			cl.writeInt(90)
		}
		cl.writeBulkStr("Some real reply following the attribute")
	case "push":
		if !v3 {
			cl.writeError("ERR RESP2 is not supported by this command")
			return
		}
		cl.out = append(cl.out, ">2\r\n"...)
		cl.writeBulkStr("server-cpu-usage")
		cl.writeInt(42)
		cl.writeBulkStr("Some real reply following the push reply")
	case "true":
		cl.writeBool(true)
	case "false":
		cl.writeBool(false)
	case "verbatim":
		cl.writeVerbatim([]byte("This is a verbatim\nstring"))
	default:
		cl.writeError("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// writeBool writes a boolean: #t/#f in RESP3, 1/0 in RESP2, as Redis's
// addReplyBool.
func (cl *client) writeBool(b bool) {
	switch {
	case cl.proto >= 3 && b:
		cl.out = append(cl.out, "#t\r\n"...)
	case cl.proto >= 3:
		cl.out = append(cl.out, "#f\r\n"...)
	default:
		cl.writeInt(int64(boolInt(b)))
	}
}

// debugObject answers DEBUG OBJECT in Redis's format. Shoal has no object
// addresses or shared objects, and no RDB yet: "at" is 0, refcount 1, and
// serializedlength the value's size in memory.
func (h *Handler) debugObject(cl *client, key []byte) {
	db := cl.db()
	enc, ok := db.Encoding(key)
	if !ok {
		cl.writeError("ERR no such key")
		return
	}
	idle, _ := db.IdleSeconds(key)
	size, _ := db.MemoryUsage(key)
	cl.writeStatus("Value at:0x0 refcount:1 encoding:" + enc +
		" serializedlength:" + strconv.FormatInt(size, 10) +
		" lru:0 lru_seconds_idle:" + strconv.FormatInt(idle, 10))
}

// Dataset digests, as Redis's DEBUG DIGEST computes them. mix folds bytes
// in order, xor without order. A key's digest mixes its name, its type and,
// for a string or a list, its elements in order; each field of a hash and
// member of a sorted set (with its score as %.17g) gets a digest of its own
// that is xor-ed in, a set's members are xor-ed in, and an expiry xors in
// "!!expire!!". The dataset's digest mixes in the number of each non-empty
// database, then xors in the digest of each of its keys.

type digest [20]byte

// xor folds SHA1(p) into d.
func (d *digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix folds p into d in order: d = SHA1(d xor SHA1(p)).
func (d *digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

// Redis's type numbers, which the digest mixes in.
var digestType = map[store.Kind]uint32{
	store.KindString: 0, store.KindList: 1, store.KindSet: 2, store.KindZSet: 3, store.KindHash: 4,
	store.KindStream: 6,
}

// datasetDigest is DEBUG DIGEST: all zeros for an empty dataset.
func (h *Handler) datasetDigest() digest {
	var final digest
	for _, i := range h.madeIndexes() {
		db := h.dbs[i].Load()
		var keys digest
		n := 0
		for shard := range db.ShardCount() {
			db.SnapshotShard(shard, func(key, val []byte, expireAt int64) {
				kd := keyValueDigest(key, store.KindString, val, nil, expireAt)
				keys.xor(kd[:])
				n++
			}, func(key []byte, o store.Object, expireAt int64) {
				kd := keyValueDigest(key, o.Kind(), nil, o, expireAt)
				keys.xor(kd[:])
				n++
			})
		}
		if n == 0 {
			continue
		}
		var id [4]byte
		binary.BigEndian.PutUint32(id[:], uint32(i))
		final.mix(id[:])
		final.xorWhole(keys)
	}
	return final
}

// xorWhole xors another digest's bytes into d (not their hash).
func (d *digest) xorWhole(o digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

// keyValueDigest is a key's part of the dataset digest.
func keyValueDigest(key []byte, kind store.Kind, val []byte, o store.Object, expireAt int64) digest {
	var d digest
	d.mix(key)
	objectDigest(&d, kind, val, o, expireAt)
	return d
}

// keyDigest is DEBUG DIGEST-VALUE's digest of one key of db: its value
// and expiry without its name; all zeros when the key does not exist.
func keyDigest(db *store.Store, key []byte) digest {
	var d digest
	kinds := map[string]store.Kind{"string": store.KindString, "list": store.KindList,
		"set": store.KindSet, "zset": store.KindZSet, "hash": store.KindHash, "stream": store.KindStream}
	kind, ok := kinds[db.Type(key)]
	if !ok {
		return d
	}
	expireAt := max(db.ExpireTime(key), 0)
	if kind == store.KindString {
		val, found, _ := db.Get(nil, key)
		if found {
			objectDigest(&d, kind, val, nil, expireAt)
		}
		return d
	}
	_ = db.View(key, kind, func(o store.Object) {
		if o != nil {
			objectDigest(&d, kind, nil, o, expireAt)
		}
	})
	return d
}

// objectDigest is Redis's xorObjectDigest: mixes the type and the value of
// a string (val) or a collection (o) into d.
func objectDigest(d *digest, kind store.Kind, val []byte, o store.Object, expireAt int64) {
	var typ [4]byte
	binary.BigEndian.PutUint32(typ[:], digestType[kind])
	d.mix(typ[:])
	switch x := o.(type) {
	case nil:
		d.mix(val)
	case *store.List:
		x.Range(0, x.Len()-1, func(v []byte) bool { d.mix(v); return true })
	case *store.Set:
		x.Range(func(m []byte) bool { d.xor(m); return true })
	case *store.ZSet:
		var num [32]byte
		x.Range(0, x.Len(), false, func(m []byte, s float64) bool {
			var e digest
			e.mix(m)
			e.mix(appendScore(num[:0], s))
			d.xor(e[:])
			return true
		})
	case *store.Hash:
		x.Range(func(f, v []byte) bool {
			var e digest
			e.mix(f)
			e.mix(v)
			d.xor(e[:])
			return true
		})
	case *store.Stream: // each entry's "<ms>.<seq>", then its fields and values
		var idb [48]byte
		x.Range(store.StreamID{}, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
			b := strconv.AppendUint(idb[:0], id.Ms, 10)
			b = strconv.AppendUint(append(b, '.'), id.Seq, 10)
			d.mix(b)
			for _, v := range fv {
				d.mix(v)
			}
			return true
		})
	}
	if expireAt > 0 {
		d.xor([]byte("!!expire!!"))
	}
}
