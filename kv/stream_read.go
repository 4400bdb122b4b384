package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// XREAD, and its blocking on the machinery of blocking.go: a reader that
// finds nothing parks its client (its loop keeps serving others), and an
// XADD to one of its streams serves it from the goroutine of the write.
// A served XREAD reads and writes nothing else, so a waiter that the
// new entries do not reach does not hold back the waiters behind it.

var _ = registerFamily(family{commands: []*command{
	{
		name: "xread", arity: -4, fn: cmdXRead,
		flags: "readonly blocking movablekeys", acl: "@read @stream @slow @blocking",
		keySpecs: []keySpec{{flags: "RO access", keyword: "STREAMS", from: 1, lastKey: -1, keyStep: 1, limit: 2}},
		keysOf:   xreadKeys,
		doc:      commandDoc{"Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", "5.0.0", "stream", "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data."},
	},
}})

// xreadKeys finds the keys of XREAD and XREADGROUP as Redis's
// xreadGetKeys: the first half of what follows the first STREAMS.
func xreadKeys(dst []int, args [][]byte) []int {
	for i := 1; i < len(args); i++ {
		if ascii.EqualFold(args[i], "streams") {
			n := (len(args) - i - 1) / 2
			for j := 0; j < n; j++ {
				dst = append(dst, i+1+j)
			}
			return dst
		}
	}
	return dst
}

// xreadDefaultCount is how many entries a served blocked XREAD without
// COUNT returns per stream (XREAD_BLOCKED_DEFAULT_COUNT).
const xreadDefaultCount = 1000

// xreadArgs is a parsed XREAD or XREADGROUP.
type xreadArgs struct {
	timeout    int64 // ms; -1: no BLOCK
	count      int64
	streamsArg int
	n          int // streams
	group      []byte
	consumer   []byte
	noack      bool
}

// parseXRead parses the options up to STREAMS as xreadCommand does.
func parseXRead(cl *client, args [][]byte, group bool) (a xreadArgs, errText string) {
	a.timeout = -1
	name := string(args[0])
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case ascii.EqualFold(o, "block") && more > 0:
			if cl.addr == scriptAddr {
				return a, "ERR " + name + " command is not allowed with BLOCK option from scripts"
			}
			i++
			t, ok := ascii.ParseInt(args[i])
			if !ok {
				return a, "ERR timeout is not an integer or out of range"
			}
			if t < 0 {
				return a, errTimeoutNegative
			}
			a.timeout = t
		case ascii.EqualFold(o, "count") && more > 0:
			i++
			n, ok := ascii.ParseInt(args[i])
			if !ok {
				return a, errNotInteger
			}
			a.count = max(n, 0)
		case ascii.EqualFold(o, "streams") && more > 0:
			a.streamsArg = i + 1
			n := len(args) - a.streamsArg
			if n%2 != 0 {
				// "XREAD" for XREADGROUP too, as Redis 7.0 words it.
				return a, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
			}
			a.n = n / 2
			i = len(args)
		case ascii.EqualFold(o, "group") && more >= 2:
			if !group {
				return a, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
			}
			a.group, a.consumer = args[i+1], args[i+2]
			i += 2
		case ascii.EqualFold(o, "noack"):
			if !group {
				return a, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
			}
			a.noack = true
		default:
			return a, errSyntax
		}
	}
	if a.streamsArg == 0 {
		return a, errSyntax
	}
	if group && a.group == nil {
		return a, "ERR Missing GROUP option for XREADGROUP"
	}
	return a, ""
}

// cmdXRead: XREAD [COUNT n] [BLOCK ms] STREAMS key... id...
func cmdXRead(h *Handler, cl *client, args [][]byte) {
	a, errText := parseXRead(cl, args, false)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	keys := args[a.streamsArg : a.streamsArg+a.n]
	ids := make([]store.StreamID, a.n)
	for i := range keys {
		idArg := args[a.streamsArg+a.n+i]
		fail := ""
		err := cl.db().View(keys[i], store.KindStream, func(o store.Object) {
			switch {
			case string(idArg) == "$":
				if s, _ := o.(*store.Stream); s != nil {
					ids[i] = s.LastID()
				}
			case string(idArg) == ">":
				fail = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
			default:
				id, _, ok := streamIDParse{strict: true}.parse(idArg)
				if !ok {
					fail = errInvalidStreamID
				}
				ids[i] = id
			}
		})
		if err != nil {
			cl.writeError(err.Error())
			return
		}
		if fail != "" {
			cl.writeError(fail)
			return
		}
	}
	if a.timeout < 0 {
		if !xreadNow(cl, keys, ids, a.count) {
			cl.out = append(cl.out, nullArrayReply(int(cl.proto))...)
		}
		return
	}
	count := a.count
	if count == 0 {
		count = xreadDefaultCount
	}
	proto, db := cl.proto, cl.selected.Load()
	gts := make(map[string]store.StreamID, len(keys))
	for i, k := range keys {
		if _, dup := gts[string(k)]; !dup {
			gts[string(k)] = ids[i] // a key named twice waits with its first ID, as Redis's
		}
	}
	h.blockOn(cl, blockRequest{
		keys: keys, timeout: a.timeout, timeoutReply: nullArrayReply(int(proto)), independent: true,
		try: func() bool { return xreadNow(cl, keys, ids, a.count) },
		serve: func(key []byte, res *serveResult) bool {
			tmp := &client{h: h, proto: proto}
			tmp.selected.Store(db)
			gt := gts[string(key)]
			served := false
			_ = tmp.db().View(key, store.KindStream, func(o store.Object) {
				s, _ := o.(*store.Stream)
				if s == nil || !gt.Less(s.LastID()) {
					return
				}
				start, _ := gt.Incr()
				tmp.writeStreamsHeader(1)
				if proto == 2 {
					tmp.writeArray(2)
				}
				tmp.writeBulk(key)
				writeStreamRange(tmp, s, start, store.MaxStreamID, false, count)
				served = true
			})
			res.reply = tmp.out
			return served
		},
	})
}

// writeStreamsHeader starts a reply of n streams: an array in RESP2, a
// map in RESP3.
func (cl *client) writeStreamsHeader(n int) {
	if cl.proto >= 3 {
		cl.writeMap(n)
	} else {
		cl.writeArray(n)
	}
}

// xreadNow answers XREAD from the streams that have entries after their
// IDs, and reports false, writing nothing, when none has.
func xreadNow(cl *client, keys [][]byte, ids []store.StreamID, count int64) bool {
	hdr := -1
	n := 0
	for i, k := range keys {
		_ = cl.db().View(k, store.KindStream, func(o store.Object) {
			s, _ := o.(*store.Stream)
			if s == nil || s.Entries() == 0 || !ids[i].Less(s.Edge(false, true)) {
				return
			}
			if hdr < 0 {
				hdr = len(cl.out)
				cl.out = append(cl.out, "*0000000000\r\n"...)
			}
			n++
			if cl.proto == 2 {
				cl.writeArray(2)
			}
			cl.writeBulk(k)
			start, _ := ids[i].Incr()
			writeStreamRange(cl, s, start, store.MaxStreamID, false, count)
		})
	}
	if hdr < 0 {
		return false
	}
	patchArrayHeader(cl, hdr, int64(n))
	if cl.proto >= 3 {
		cl.out[hdr] = '%'
	}
	return true
}
