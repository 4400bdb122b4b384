package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
)

// The blocking sorted-set pops, on the parking of blocking.go and the pops
// of zset_pop.go. A served pop is logged as its effect, ZPOPMIN/ZPOPMAX of
// the key it popped (with the count for BZMPOP), as Redis propagates it.

var _ = registerFamily(family{commands: []*command{
	{
		name: "bzpopmin", arity: -3, fn: cmdBZPopMin, log: logEffect,
		flags: "write noscript blocking fast", acl: "@write @sortedset @fast @blocking",
		firstKey: 1, lastKey: -2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, lastKey: -2, keyStep: 1}},
		doc: commandDoc{"Removes and returns the member with the lowest score from the first non-empty sorted set, waiting for one if none.", "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set."},
	},
	{
		name: "bzpopmax", arity: -3, fn: cmdBZPopMax, log: logEffect,
		flags: "write noscript blocking fast", acl: "@write @sortedset @fast @blocking",
		firstKey: 1, lastKey: -2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, lastKey: -2, keyStep: 1}},
		doc: commandDoc{"Removes and returns the member with the highest score from the first non-empty sorted set, waiting for one if none.", "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set."},
	},
	{
		name: "bzmpop", arity: -5, fn: cmdBZMPop, log: logEffect,
		flags: "write blocking movablekeys", acl: "@write @sortedset @slow @blocking",
		keySpecs: []keySpec{{flags: "RW access delete", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}},
		doc:      commandDoc{"Removes and returns members from the first non-empty sorted set, waiting for one if none.", "7.0.0", "sorted-set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped."},
	},
}})

func cmdBZPopMin(h *Handler, cl *client, args [][]byte) { h.blockingZPop(cl, args, false) }
func cmdBZPopMax(h *Handler, cl *client, args [][]byte) { h.blockingZPop(cl, args, true) }

// blockingZPop is BZPOPMIN and BZPOPMAX: key... timeout. The reply is the
// flat [key, member, score] in both protocols.
func (h *Handler) blockingZPop(cl *client, args [][]byte, max bool) {
	timeout, errText := parseTimeout(args[len(args)-1])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.blockingZPopOf(cl, args[1:len(args)-1], max, -1, zpopShape{withKey: true}, timeout)
}

// cmdBZMPop: BZMPOP timeout numkeys key... MIN|MAX [COUNT count].
func cmdBZMPop(h *Handler, cl *client, args [][]byte) {
	timeout, errText := parseTimeout(args[1])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	keys, max, count, errText := parseZMPop(args, 2)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	h.blockingZPopOf(cl, keys, max, count, zpopShape{nested: true, withKey: true}, timeout)
}

func (h *Handler) blockingZPopOf(cl *client, keys [][]byte, max bool, count int64, shape zpopShape, timeout int64) {
	proto := cl.proto
	h.blockOn(cl, blockRequest{
		keys: keys, timeout: timeout, timeoutReply: nullArrayReply(int(proto)),
		try: func() bool {
			for _, k := range keys {
				base := len(cl.out)
				if h.zpop(cl, [][]byte{k}, max, count, shape) {
					if len(cl.out) > base && cl.out[base] != '-' {
						cl.setEffect(appendZPopRecord(cl.effectScratch(), k, max, count))
					}
					return true
				}
			}
			return false
		},
		serve: func(key []byte, res *serveResult) bool {
			// The reply is built for the waiter, in its protocol, on the
			// goroutine of the client whose write made key ready.
			tmp := &client{h: h, proto: proto}
			tmp.selected.Store(cl.selected.Load()) // the waiter's database
			if !h.zpop(tmp, [][]byte{key}, max, count, shape) || len(tmp.out) == 0 || tmp.out[0] == '-' {
				return false // not a sorted set (any more): it serves only sorted sets
			}
			res.reply = tmp.out
			res.record = appendZPopRecord(nil, key, max, count)
			return true
		},
	})
}

// appendZPopRecord appends the AOF record of a served pop: ZPOPMIN or
// ZPOPMAX of key, with count when one was given.
func appendZPopRecord(dst, key []byte, max bool, count int64) []byte {
	name := []byte("ZPOPMIN")
	if max {
		name = []byte("ZPOPMAX")
	}
	if count < 0 {
		return aof.AppendCommand(dst, name, key)
	}
	return aof.AppendCommand(dst, name, key, strconv.AppendInt(nil, count, 10))
}
