package kv

import (
	"math"

	"github.com/shoalkv/shoal/internal/ascii"

	"github.com/shoalkv/shoal/store"
)

// Argument parsing for the commands with options. Each parser returns the
// Redis error text on failure ("" when fine), checking in Redis's order so
// that the first error a client sees is the one redis-server would send.

// Expiry units and bases for SET, GETEX and the EXPIRE family.
const (
	expNone = iota
	expEX   // relative seconds
	expPX   // relative milliseconds
	expEXAT // absolute unix seconds
	expPXAT // absolute unix milliseconds
)

// setArgs is SET's (or GETEX's) parsed options.
type setArgs struct {
	mode    store.SetMode
	get     bool
	keepTTL bool
	persist bool // GETEX only
	expKind int
	expArg  []byte
}

// parseSetArgs parses SET's options from args[3:] (forGetEx: GETEX's from
// args[2:]). Repeating the same expire option is allowed and the last wins,
// as in Redis; mixing two different ones is a syntax error.
func parseSetArgs(args [][]byte, forGetEx bool) (a setArgs, errText string) {
	isSet := !forGetEx
	for j := 0; j < len(args); j++ {
		opt := args[j]
		hasNext := j+1 < len(args)
		switch {
		case isSet && ascii.EqualFold(opt, "NX") && a.mode != store.SetXX:
			a.mode = store.SetNX
		case isSet && ascii.EqualFold(opt, "XX") && a.mode != store.SetNX:
			a.mode = store.SetXX
		case isSet && ascii.EqualFold(opt, "GET"):
			a.get = true
		case isSet && ascii.EqualFold(opt, "KEEPTTL") && !a.persist && a.expKind == expNone:
			a.keepTTL = true
		case forGetEx && ascii.EqualFold(opt, "PERSIST") && a.expKind == expNone && !a.keepTTL:
			a.persist = true
		default:
			k := expiryOption(opt)
			otherExp := a.expKind != expNone && a.expKind != k
			if k == expNone || a.keepTTL || a.persist || otherExp || !hasNext {
				return a, errSyntax
			}
			a.expKind, a.expArg = k, args[j+1]
			j++
		}
	}
	return a, ""
}

// expiryOption is the expiry kind that opt (EX, PX, EXAT or PXAT) names,
// or expNone.
func expiryOption(opt []byte) int {
	switch {
	case ascii.EqualFold(opt, "EX"):
		return expEX
	case ascii.EqualFold(opt, "PX"):
		return expPX
	case ascii.EqualFold(opt, "EXAT"):
		return expEXAT
	case ascii.EqualFold(opt, "PXAT"):
		return expPXAT
	}
	return expNone
}

// expireAt converts an expire argument of kind into unix milliseconds as
// Redis's getExpireMillisecondsOrReply does: it must be a positive integer,
// must not overflow when scaled or offset by now, and the result must be
// positive. cmd names the command in the error.
func expireAt(arg []byte, kind int, now int64, cmd string) (int64, string) {
	v, ok := ascii.ParseInt(arg)
	if !ok {
		return 0, errNotInteger
	}
	seconds := kind == expEX || kind == expEXAT
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		return 0, errInvalidExpire(cmd)
	}
	if seconds {
		v *= 1000
	}
	if kind == expEX || kind == expPX {
		v += now // wraps negative on overflow, caught below like Redis
	}
	if v <= 0 {
		return 0, errInvalidExpire(cmd)
	}
	return v, ""
}

// parseExpireCond parses EXPIRE's NX XX GT LT flags from args[3:].
// xxAndLT reports the one combination store.ExpireCond cannot express.
func parseExpireCond(args [][]byte) (cond store.ExpireCond, xxAndLT bool, errText string) {
	var nx, xx, gt, lt bool
	for _, opt := range args {
		if !setFlag(opt, []string{"NX", "XX", "GT", "LT"}, &nx, &xx, &gt, &lt) {
			return 0, false, sanitizeError("ERR Unsupported option " + cString(opt, len(opt)))
		}
	}
	if nx && (xx || gt || lt) {
		return 0, false, errExpireConflict
	}
	if gt && lt {
		return 0, false, errGTLTConflict
	}
	switch {
	case nx:
		cond = store.ExpireNX
	case gt: // GT already requires an expiry, so XX adds nothing
		cond = store.ExpireGT
	case lt:
		cond = store.ExpireLT
	case xx:
		cond = store.ExpireXX
	}
	return cond, xx && lt, ""
}

// setFlag reads an option word that only switches something on (ZADD's
// NX and CH, EXPIRE's GT, LCS's IDX, ...): when word is names[i], ignoring
// case, it sets *flags[i] and reports true; for another word it reports
// false.
func setFlag(word []byte, names []string, flags ...*bool) bool {
	for i, name := range names {
		if ascii.EqualFold(word, name) {
			*flags[i] = true
			return true
		}
	}
	return false
}

// parsePopCount reads the count of LPOP, RPOP, SPOP, ZPOPMIN and ZPOPMAX
// (key [count]): -1 when there is none. A count that is negative or not an
// integer, or more arguments (a syntax error; LPOP and RPOP check their
// arity before), are answered with Redis's error and reported false.
func parsePopCount(cl *client, args [][]byte) (int64, bool) {
	switch {
	case len(args) > 3:
		cl.writeError(errSyntax)
		return 0, false
	case len(args) < 3:
		return -1, true
	}
	n, ok := ascii.ParseInt(args[2])
	if !ok || n < 0 {
		cl.writeError(errMustBePositive)
		return 0, false
	}
	return n, true
}

// parseIntPair reads the two integers of LRANGE, LTRIM, GETRANGE and
// ZREMRANGEBYRANK; when either is not one, it answers cl with Redis's
// not-an-integer error and reports false.
func parseIntPair(cl *client, first, second []byte) (int64, int64, bool) {
	a, ok1 := ascii.ParseInt(first)
	b, ok2 := ascii.ParseInt(second)
	if !ok1 || !ok2 {
		cl.writeError(errNotInteger)
		return 0, 0, false
	}
	return a, b, true
}
