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
	notifying := h.pubsub.events.active.Load() != 0
	created := notifying && cl.keyIsNew(key)
	start := len(cl.out)
	out, hadOld, written, err := cl.db().Set(cl.out, key, val, o)
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case a.get && hadOld:
		cl.out = finishBulk(out, start)
	case a.get || !written:
		cl.writeNull()
	default:
		cl.writeOK()
	}
	if !notifying {
		return
	}
	if a.get && !hadOld && cmdName == "set" {
		cl.notify(evKeyMiss, "keymiss", key) // GETSET's is beforeKeys'
	}
	if written {
		cl.notifySet(created, key, a.expKind != expNone)
	}
}

// notifySet publishes a string write's events: "new" for a key it
// created, "set", and "expire" when it set a TTL.
func (cl *client) notifySet(created bool, key []byte, expires bool) {
	cl.notifyNew(created, key)
	cl.notify(evString, "set", key)
	if expires {
		cl.notify(evGeneric, "expire", key)
	}
}

func cmdSetNX(h *Handler, cl *client, args [][]byte) {
	_, _, written, err := cl.db().Set(nil, args[1], args[2], store.SetOptions{Mode: store.SetNX})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(written))
	if written {
		cl.notifySet(true, args[1], false)
	}
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
	if found && err == nil {
		cl.notify(evGeneric, "del", args[1])
	}
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
	// PERSIST publishes only if there was a TTL to remove.
	hadTTL := a.persist && h.notifying(evGeneric) && cl.db().PTTL(args[1]) >= 0
	out, start := reserveBulkHeader(cl.out, int(cl.valueDigits))
	out, found, err := cl.db().GetEx(out, args[1], o)
	cl.finishValue(out, len(cl.out), start, found, err)
	switch {
	case !found || err != nil:
	case a.expKind == expEXAT || a.expKind == expPXAT:
		if o.ExpireAt <= h.now() {
			cl.notify(evGeneric, "del", args[1]) // a time in the past deleted it
		} else {
			cl.notify(evGeneric, "expire", args[1])
		}
	case a.expKind != expNone:
		cl.notify(evGeneric, "expire", args[1])
	case hadTTL:
		cl.notify(evGeneric, "persist", args[1])
	}
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
	created := cl.newKeys(args[1:])
	if err := cl.db().MSet(args[1:]); err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeOK()
	cl.notifyMSet(args[1:], created)
}

// newKeys reports, while class n is on, which keys of MSET's pairs are
// missing: the first pair of each such key creates it. Nil while n is off.
func (cl *client) newKeys(pairs [][]byte) []bool {
	if !cl.h.notifying(evNew) {
		return nil
	}
	created := make([]bool, len(pairs)/2)
	seen := make(map[string]bool, len(created))
	for i := range created {
		k := string(pairs[2*i])
		if !seen[k] {
			seen[k] = true
			created[i] = !cl.db().KeyExists(pairs[2*i])
		}
	}
	return created
}

// notifyMSet publishes MSET's events: per pair, "new" if it created the
// key, then "set".
func (cl *client) notifyMSet(pairs [][]byte, created []bool) {
	if !cl.h.notifying(evNew | evString) {
		return
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		cl.notifyNew(created != nil && created[i/2], pairs[i])
		cl.notify(evString, "set", pairs[i])
	}
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
	if ok && cl.h.notifying(evNew|evString) {
		created := make([]bool, (len(args)-1)/2)
		seen := make(map[string]bool, len(created))
		for i := range created {
			created[i] = !seen[string(args[1+2*i])]
			seen[string(args[1+2*i])] = true
		}
		cl.notifyMSet(args[1:], created)
	}
}

func (h *Handler) incrBy(cl *client, key []byte, delta int64) {
	created := cl.keyIsNew(key)
	n, err := cl.db().IncrBy(key, delta)
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(n)
	cl.notifyNew(created, key)
	cl.notify(evString, "incrby", key)
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
	created := cl.keyIsNew(args[1])
	start := len(cl.out)
	out, err := cl.db().IncrByFloatText(cl.out, args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.out = finishBulk(out, start)
	cl.notifyNew(created, args[1])
	cl.notify(evString, "incrbyfloat", args[1])
}

func cmdAppend(h *Handler, cl *client, args [][]byte) {
	created := cl.keyIsNew(args[1])
	n, err := cl.db().Append(args[1], args[2])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(n))
	cl.notifyNew(created, args[1])
	cl.notify(evString, "append", args[1])
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
	start, end, ok := parseIntPair(cl, args[2], args[3])
	if !ok {
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
	created := cl.keyIsNew(args[1])
	n, err := cl.db().SetRange(args[1], offset, args[3])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(n))
	if len(args[3]) > 0 { // an empty value changes nothing and makes no key
		cl.notifyNew(created, args[1])
		cl.notify(evString, "setrange", args[1])
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
