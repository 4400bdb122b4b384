package kv

import (
	"math"

	"github.com/shoalkv/shoal/internal/ascii"
)

// Keyspace commands.

func cmdDel(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(int64(h.store.Del(args[1:])))
}

func cmdExists(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(int64(h.store.Exists(args[1:])))
}

func cmdType(h *Handler, cl *client, args [][]byte) {
	cl.writeStatus(h.store.Type(args[1]))
}

// expireGeneric implements EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT in the
// order of Redis's expireGenericCommand: options, integer, overflow, then
// the key.
func (h *Handler) expireGeneric(cl *client, args [][]byte, seconds, relative bool, cmdName string) {
	cond, xxAndLT, errText := parseExpireCond(args[3:])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	when, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			cl.writeError(errInvalidExpire(cmdName))
			return
		}
		when *= 1000
	}
	if relative {
		now := h.now()
		if when > math.MaxInt64-now {
			cl.writeError(errInvalidExpire(cmdName))
			return
		}
		when += now
	}
	if xxAndLT && h.store.PTTL(args[1]) < 0 {
		cl.writeInt(0) // XX: a key without expiry (or missing) is left alone
		return
	}
	cl.writeInt(boolInt(h.store.Expire(args[1], when, cond)))
}

func cmdExpire(h *Handler, cl *client, args [][]byte) {
	h.expireGeneric(cl, args, true, true, "expire")
}

func cmdPExpire(h *Handler, cl *client, args [][]byte) {
	h.expireGeneric(cl, args, false, true, "pexpire")
}

func cmdExpireAt(h *Handler, cl *client, args [][]byte) {
	h.expireGeneric(cl, args, true, false, "expireat")
}

func cmdPExpireAt(h *Handler, cl *client, args [][]byte) {
	h.expireGeneric(cl, args, false, false, "pexpireat")
}

func cmdTTL(h *Handler, cl *client, args [][]byte) {
	ms := h.store.PTTL(args[1])
	if ms >= 0 {
		ms = (ms + 500) / 1000
	}
	cl.writeInt(ms)
}

func cmdPTTL(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(h.store.PTTL(args[1]))
}

func cmdExpireTime(h *Handler, cl *client, args [][]byte) {
	at := h.store.ExpireTime(args[1])
	if at >= 0 {
		at = (at + 500) / 1000 // rounded, as Redis does
	}
	cl.writeInt(at)
}

func cmdPExpireTime(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(h.store.ExpireTime(args[1]))
}

func cmdPersist(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(boolInt(h.store.Persist(args[1])))
}

func cmdKeys(h *Handler, cl *client, args [][]byte) {
	keys := h.store.Keys(args[1])
	cl.writeArray(len(keys))
	for _, k := range keys {
		cl.writeBulk(k)
	}
}

func cmdScan(h *Handler, cl *client, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		cl.writeError(errInvalidCursor)
		return
	}
	a, errText := parseScanArgs(args[2:], true)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	next, keys := h.store.Scan(cursor, a.match, a.count, a.typ)
	writeScanPage(cl, next, keys)
}

func cmdRename(h *Handler, cl *client, args [][]byte) {
	if err := h.store.Rename(args[1], args[2]); err != nil {
		cl.writeError(err.Error())
		return
	}
	h.signalReady(cl, args[2]) // a list or sorted set arriving wakes its waiters
	cl.writeOK()
}

func cmdRenameNX(h *Handler, cl *client, args [][]byte) {
	ok, err := h.store.RenameNX(args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if ok {
		h.signalReady(cl, args[2])
	}
	cl.writeInt(boolInt(ok))
}

func cmdRandomKey(h *Handler, cl *client, _ [][]byte) {
	k, ok := h.store.RandomKey()
	if !ok {
		cl.writeNull()
		return
	}
	cl.writeBulk(k)
}

func cmdDBSize(h *Handler, cl *client, _ [][]byte) {
	cl.writeInt(int64(h.store.DBSize()))
}

// cmdFlush implements FLUSHDB and FLUSHALL [ASYNC|SYNC]; the store's flush
// is always immediate.
func cmdFlush(h *Handler, cl *client, args [][]byte) {
	if len(args) > 2 || (len(args) == 2 && !ascii.EqualFold(args[1], "ASYNC") && !ascii.EqualFold(args[1], "SYNC")) {
		cl.writeError(errSyntax)
		return
	}
	h.store.Flush()
	cl.writeOK()
}
