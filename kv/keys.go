package kv

import (
	"math"

	"github.com/shoalkv/shoal/internal/ascii"
)

// Keyspace commands.

func cmdDel(h *Handler, cl *client, args [][]byte) {
	if !h.notifying(evGeneric) {
		cl.writeInt(int64(cl.db().Del(args[1:])))
		return
	}
	deleted := make([]bool, len(args)-1)
	cl.writeInt(int64(cl.db().DelEach(args[1:], deleted)))
	for i, d := range deleted {
		if d {
			cl.notify(evGeneric, "del", args[1+i])
		}
	}
}

func cmdExists(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(int64(cl.db().Exists(args[1:])))
}

func cmdType(h *Handler, cl *client, args [][]byte) {
	cl.writeStatus(cl.db().Type(args[1]))
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
	if xxAndLT && cl.db().PTTL(args[1]) < 0 {
		cl.writeInt(0) // XX: a key without expiry (or missing) is left alone
		return
	}
	ok = cl.db().Expire(args[1], when, cond)
	cl.writeInt(boolInt(ok))
	switch {
	case !ok:
	case when <= h.now():
		cl.notify(evGeneric, "del", args[1]) // a time in the past deleted it
	default:
		cl.notify(evGeneric, "expire", args[1])
	}
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
	ms := cl.db().PTTL(args[1])
	if ms >= 0 {
		ms = (ms + 500) / 1000
	}
	cl.writeInt(ms)
}

func cmdPTTL(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(cl.db().PTTL(args[1]))
}

func cmdExpireTime(h *Handler, cl *client, args [][]byte) {
	at := cl.db().ExpireTime(args[1])
	if at >= 0 {
		at = (at + 500) / 1000 // rounded, as Redis does
	}
	cl.writeInt(at)
}

func cmdPExpireTime(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(cl.db().ExpireTime(args[1]))
}

func cmdPersist(h *Handler, cl *client, args [][]byte) {
	ok := cl.db().Persist(args[1])
	cl.writeInt(boolInt(ok))
	if ok {
		cl.notify(evGeneric, "persist", args[1])
	}
}

func cmdKeys(h *Handler, cl *client, args [][]byte) {
	keys := cl.db().Keys(args[1])
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
	next, keys := cl.db().Scan(cursor, a.match, a.count, a.typ)
	writeScanPage(cl, next, keys)
}

func cmdRename(h *Handler, cl *client, args [][]byte) {
	if err := cl.db().Rename(args[1], args[2]); err != nil {
		cl.writeError(err.Error())
		return
	}
	h.signalReady(cl, args[2]) // a list or sorted set arriving wakes its waiters
	cl.writeOK()
	cl.notifyRename(args[1], args[2])
}

// notifyRename publishes a rename's events: the new name is a new key
// (Redis deletes an old one of that name first), then rename_from and
// rename_to. Renaming a key to itself publishes nothing.
func (cl *client) notifyRename(from, to []byte) {
	if string(from) == string(to) {
		return
	}
	cl.notify(evNew, "new", to)
	cl.notify(evGeneric, "rename_from", from)
	cl.notify(evGeneric, "rename_to", to)
}

func cmdRenameNX(h *Handler, cl *client, args [][]byte) {
	ok, err := cl.db().RenameNX(args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if ok {
		h.signalReady(cl, args[2])
	}
	cl.writeInt(boolInt(ok))
	if ok {
		cl.notifyRename(args[1], args[2])
	}
}

func cmdRandomKey(h *Handler, cl *client, _ [][]byte) {
	k, ok := cl.db().RandomKey()
	if !ok {
		cl.writeNull()
		return
	}
	cl.writeBulk(k)
}

func cmdDBSize(h *Handler, cl *client, _ [][]byte) {
	cl.writeInt(int64(cl.db().DBSize()))
}

// cmdFlush implements FLUSHDB (the selected database) and FLUSHALL (every
// database) [ASYNC|SYNC]; the store's flush is always immediate.
func cmdFlush(h *Handler, cl *client, args [][]byte) {
	if len(args) > 2 || (len(args) == 2 && !ascii.EqualFold(args[1], "ASYNC") && !ascii.EqualFold(args[1], "SYNC")) {
		cl.writeError(errSyntax)
		return
	}
	if cmd := args[0]; ascii.EqualFold(cmd, "flushall") {
		for _, i := range h.madeIndexes() {
			if s := h.existingDB(i); s != nil {
				s.Flush()
			}
		}
	} else {
		cl.db().Flush()
	}
	cl.writeOK()
}
