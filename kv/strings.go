package kv

import (
	"math"

	"github.com/shoalkv/shoal/internal/ascii"

	"github.com/shoalkv/shoal/store"
)

// String commands. Values are appended by the store straight into the
// output buffer and framed there (finishValue, finishBulk), so replies
// allocate nothing; GET's header is reserved before the value so that a
// value of the expected length is copied once and never moved.

func cmdGet(h *Handler, cl *client, args [][]byte) {
	out, start := reserveBulkHeader(cl.out, int(cl.valueDigits))
	out, found, err := cl.db().Get(out, args[1])
	cl.finishValue(out, len(cl.out), start, found, err)
}

// finishValue completes the reply to a command that had the store append a
// string value to out from start, after room for its header from hdrStart
// (cl.out is out[:hdrStart]): the value as a bulk string, null if the key
// was missing, or the store's error. It remembers the value's length as
// the next header's guess.
func (cl *client) finishValue(out []byte, hdrStart, start int, found bool, err error) {
	switch {
	case err != nil:
		cl.out = out[:hdrStart]
		cl.writeError(err.Error())
	case !found:
		cl.out = out[:hdrStart]
		cl.writeNull()
	default:
		cl.valueDigits = uint8(digitCount(len(out) - start))
		cl.out = finishReservedBulk(out, hdrStart, start)
	}
}

func cmdSet(h *Handler, cl *client, args [][]byte) {
	a, errText := parseSetArgs(args[3:], false)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.set(cl, args[1], args[2], a, "set")
}

// set is SET's core, shared by SETNX, SETEX, PSETEX and GETSET.
func (h *Handler) set(cl *client, key, val []byte, a setArgs, cmdName string) {
	o := store.SetOptions{Mode: a.mode, KeepTTL: a.keepTTL, Get: a.get}
	if a.expKind != expNone {
		at, errText := expireAt(a.expArg, a.expKind, h.now(), cmdName)
		if errText != "" {
			cl.writeError(errText)
			return
		}
		o.ExpireAt = at
	}
	start := len(cl.out)
	out, hadOld, written, err := cl.db().Set(cl.out, key, val, o)
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case a.get && hadOld:
		cl.out = finishBulk(out, start)
	case a.get || !written:
		cl.writeNull()
	default:
		cl.writeOK()
	}
}

func cmdSetNX(h *Handler, cl *client, args [][]byte) {
	_, _, written, err := cl.db().Set(nil, args[1], args[2], store.SetOptions{Mode: store.SetNX})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(written))
}

func cmdSetEX(h *Handler, cl *client, args [][]byte) {
	h.set(cl, args[1], args[3], setArgs{expKind: expEX, expArg: args[2]}, "setex")
}

func cmdPSetEX(h *Handler, cl *client, args [][]byte) {
	h.set(cl, args[1], args[3], setArgs{expKind: expPX, expArg: args[2]}, "psetex")
}

func cmdGetSet(h *Handler, cl *client, args [][]byte) {
	h.set(cl, args[1], args[2], setArgs{get: true}, "getset")
}

func cmdGetDel(h *Handler, cl *client, args [][]byte) {
	out, start := reserveBulkHeader(cl.out, int(cl.valueDigits))
	out, found, err := cl.db().GetDel(out, args[1])
	cl.finishValue(out, len(cl.out), start, found, err)
}

func cmdGetEx(h *Handler, cl *client, args [][]byte) {
	a, errText := parseSetArgs(args[2:], true)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	o := store.GetExOptions{Persist: a.persist}
	if a.expKind != expNone {
		at, errText := expireAt(a.expArg, a.expKind, h.now(), "getex")
		if errText != "" {
			// Redis looks the key up before validating the time: a
			// missing key answers null, a wrong type WRONGTYPE.
			switch cl.db().Type(args[1]) {
			case "none":
				cl.writeNull()
			case "string":
				cl.writeError(errText)
			default:
				cl.writeError(store.ErrWrongType.Error())
			}
			return
		}
		o.ExpireAt = at
	}
	out, start := reserveBulkHeader(cl.out, int(cl.valueDigits))
	out, found, err := cl.db().GetEx(out, args[1], o)
	cl.finishValue(out, len(cl.out), start, found, err)
}

func cmdMGet(h *Handler, cl *client, args [][]byte) {
	keys := args[1:]
	cl.writeArray(len(keys))
	cl.db().MGet(keys, cl.visitMGet)
}

// visitMGet is a method value bound once per call; it appends one MGET
// element.
func (cl *client) visitMGet(_ int, val []byte, found bool) {
	if found {
		cl.writeBulk(val)
	} else {
		cl.writeNull()
	}
}

func cmdMSet(h *Handler, cl *client, args [][]byte) {
	if len(args)%2 == 0 {
		cl.writeError(errWrongArgs("mset"))
		return
	}
	if err := cl.db().MSet(args[1:]); err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeOK()
}

func cmdMSetNX(h *Handler, cl *client, args [][]byte) {
	if len(args)%2 == 0 {
		cl.writeError(errWrongArgs("msetnx"))
		return
	}
	ok, err := cl.db().MSetNX(args[1:])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(ok))
}

func (h *Handler) incrBy(cl *client, key []byte, delta int64) {
	n, err := cl.db().IncrBy(key, delta)
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(n)
}

func cmdIncr(h *Handler, cl *client, args [][]byte) { h.incrBy(cl, args[1], 1) }
func cmdDecr(h *Handler, cl *client, args [][]byte) { h.incrBy(cl, args[1], -1) }

func cmdIncrBy(h *Handler, cl *client, args [][]byte) {
	delta, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	h.incrBy(cl, args[1], delta)
}

func cmdDecrBy(h *Handler, cl *client, args [][]byte) {
	delta, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	if delta == math.MinInt64 {
		cl.writeError(errDecrOverflow)
		return
	}
	h.incrBy(cl, args[1], -delta)
}

func cmdIncrByFloat(h *Handler, cl *client, args [][]byte) {
	start := len(cl.out)
	out, err := cl.db().IncrByFloatText(cl.out, args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.out = finishBulk(out, start)
}

func cmdAppend(h *Handler, cl *client, args [][]byte) {
	n, err := cl.db().Append(args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(n))
}

func cmdStrlen(h *Handler, cl *client, args [][]byte) {
	n, err := cl.db().Strlen(args[1])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(n))
}

func cmdGetRange(h *Handler, cl *client, args [][]byte) {
	start, ok1 := ascii.ParseInt(args[2])
	end, ok2 := ascii.ParseInt(args[3])
	if !ok1 || !ok2 {
		cl.writeError(errNotInteger)
		return
	}
	mark := len(cl.out)
	out, err := cl.db().GetRange(cl.out, args[1], start, end)
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.out = finishBulk(out, mark)
}

func cmdSetRange(h *Handler, cl *client, args [][]byte) {
	offset, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	n, err := cl.db().SetRange(args[1], offset, args[3])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(n))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
