package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// XCLAIM and XAUTOCLAIM: pending entries change owner. Both log, as Redis
// 7.0 propagates them, one XCLAIM ... TIME t RETRYCOUNT n FORCE JUSTID
// LASTID id per entry claimed or dropped (an entry no longer in the
// stream leaves the PEL), which is also how XREADGROUP's deliveries are
// logged: XCLAIM with FORCE rebuilds a pending entry from nothing.

var _ = registerFamily(family{commands: []*command{
	{
		name: "xclaim", arity: -6, fn: cmdXClaim, log: logEffect,
		flags: "write fast", acl: "@write @stream @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", "5.0.0", "stream", "O(log N) with N being the number of messages in the PEL of the consumer group."},
	},
	{
		name: "xautoclaim", arity: -6, fn: cmdXAutoClaim, log: logEffect,
		flags: "write fast", acl: "@write @stream @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", "6.2.0", "stream", "O(1) if COUNT is small."},
	},
}})

// appendXClaimRecord appends the XCLAIM that rebuilds pending entry p of
// group g (streamPropagateXCLAIM); idArg is the ID as the command had it.
func appendXClaimRecord(rec, key, group, consumer, idArg []byte, p *store.PendingEntry, g *store.StreamGroup) []byte {
	var tb, cb, lb [48]byte
	return aof.AppendCommand(rec, []byte("XCLAIM"), key, group, consumer, []byte("0"), idArg,
		[]byte("TIME"), strconv.AppendInt(tb[:0], p.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(cb[:0], p.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.LastID.AppendTo(lb[:0]))
}

// writeEntryAt writes entry id of s as [id, [field, value, ...]].
func writeEntryAt(cl *client, s *store.Stream, id store.StreamID) {
	s.Range(id, id, false, func(id store.StreamID, fv [][]byte) bool {
		writeStreamEntry(cl, id, fv)
		return false
	})
}

// claimer is the consumer a claim gives entries to, looked up (or
// created) at the first entry it takes, as Redis does.
type claimer struct {
	name []byte
	idx  int32
}

func (c *claimer) get(cl *client, s *store.Stream, g *store.StreamGroup, key []byte, now int64) int32 {
	if c.idx >= 0 {
		return c.idx
	}
	if c.idx = g.FindConsumer(c.name); c.idx >= 0 {
		g.Touch(c.idx, now)
		return c.idx
	}
	c.idx, _ = s.CreateConsumer(g, c.name, now)
	cl.notify(evStream, "xgroup-createconsumer", key)
	return c.idx
}

// lookupGroup finds key's stream and its group for XCLAIM and XAUTOCLAIM,
// writing WRONGTYPE or NOGROUP when there is none.
func lookupGroup(cl *client, key, group []byte) bool {
	found := false
	ok := viewCollection(cl, key, store.KindStream, func(s *store.Stream) {
		found = s != nil && s.Group(group) != nil
	})
	if ok && !found {
		cl.writeError(errNoKeyOrGroup(key, group, ""))
	}
	return ok && found
}

// cmdXClaim: XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
// [TIME unix-ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id].
func cmdXClaim(_ *Handler, cl *client, args [][]byte) {
	key, group := args[1], args[2]
	if !lookupGroup(cl, key, group) {
		return
	}
	minIdle, ok := ascii.ParseInt(args[4])
	if !ok {
		cl.writeError("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []store.StreamID
	for ; j < len(args); j++ {
		id, _, ok := streamIDParse{strict: true}.parse(args[j])
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := nowMillis()
	retry, delivery := int64(-1), int64(-1)
	force, justID := false, false
	var lastID store.StreamID
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		switch {
		case ascii.EqualFold(opt, "force"):
			force = true
		case ascii.EqualFold(opt, "justid"):
			justID = true
		case ascii.EqualFold(opt, "idle") && more > 0:
			j++
			n, ok := ascii.ParseInt(args[j])
			if !ok {
				cl.writeError("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = now - n
		case ascii.EqualFold(opt, "time") && more > 0:
			j++
			n, ok := ascii.ParseInt(args[j])
			if !ok {
				cl.writeError("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = n
		case ascii.EqualFold(opt, "retrycount") && more > 0:
			j++
			n, ok := ascii.ParseInt(args[j])
			if !ok {
				cl.writeError("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = n
		case ascii.EqualFold(opt, "lastid") && more > 0:
			j++
			id, _, ok := streamIDParse{strict: true}.parse(args[j])
			if !ok {
				cl.writeError(errInvalidStreamID)
				return
			}
			lastID = id
		default:
			cl.writeError(sanitizeError("ERR Unrecognized XCLAIM option '" + cString(opt, len(opt)) + "'"))
			return
		}
	}
	if delivery < 0 || delivery > now {
		delivery = now // unset, or bogus: Redis takes now rather than fail
	}
	rec := cl.effectScratch()
	log := cl.logsEffects()
	_, _, err := updateExisting(cl, key, store.KindStream, func(s *store.Stream) {
		g := s.Group(group)
		if g == nil {
			cl.writeArray(0)
			return
		}
		setLast := false
		if g.LastID.Less(lastID) {
			g.LastID, setLast = lastID, true
		}
		hdr := len(cl.out)
		cl.out = append(cl.out, "*0000000000\r\n"...)
		var n int64
		taker := claimer{name: args[3], idx: -1}
		var idb [48]byte
		for k, id := range ids {
			idArg := args[5+k]
			i, pending := g.FindPending(id)
			if !s.Has(id) {
				if pending {
					p := g.Pending()[i]
					if log {
						rec = appendXClaimRecord(rec, key, group, g.ConsumerName(p.Consumer), idArg, &p, g)
					}
					setLast = false
					s.RemovePending(g, i)
				}
				continue
			}
			if force && !pending {
				s.AddPending(g, i, id, now)
				pending = true
			}
			if !pending {
				continue
			}
			if p := g.Pending()[i]; p.Consumer >= 0 && minIdle != 0 && now-p.DeliveryTime < minIdle {
				continue
			}
			c := taker.get(cl, s, g, key, now)
			g.Claim(i, c)
			p := &g.Pending()[i]
			p.DeliveryTime = delivery
			switch {
			case retry >= 0:
				p.DeliveryCount = uint64(retry)
			case !justID:
				p.DeliveryCount++
			}
			if justID {
				cl.writeBulk(id.AppendTo(idb[:0]))
			} else {
				writeEntryAt(cl, s, id)
			}
			n++
			if log {
				rec = appendXClaimRecord(rec, key, group, g.ConsumerName(c), idArg, p, g)
			}
			setLast = false
		}
		if setLast && log {
			rec = appendGroupSetID(rec, key, group, g)
		}
		patchArrayHeader(cl, hdr, n)
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.setEffect(rec)
}

// xautoclaimMaxCount is the greatest COUNT XAUTOCLAIM takes (Redis's
// LONG_MAX / sizeof(streamID)).
const xautoclaimMaxCount = (1<<63 - 1) / 16

// xautoclaimNoMemory is the COUNT from which redis-server fails to
// allocate the 16 bytes per count it reserves for deleted IDs: 2^47
// bytes, the address space of x86-64 and arm64 Linux processes. Shoal
// reserves nothing ahead, but answers as Redis does.
const xautoclaimNoMemory = 1 << 47 / 16

// cmdXAutoClaim: XAUTOCLAIM key group consumer min-idle-time start [COUNT
// count] [JUSTID]. The reply is Redis 7.0's: the cursor, the entries
// claimed, and the IDs it dropped from the PEL because their entries were
// gone.
func cmdXAutoClaim(_ *Handler, cl *client, args [][]byte) {
	key, group := args[1], args[2]
	minIdle, ok := ascii.ParseInt(args[4])
	if !ok {
		cl.writeError("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := parseIntervalID(args[5], 0)
	if !ok {
		cl.writeError(errInvalidStreamID)
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			cl.writeError("ERR invalid start ID for the interval")
			return
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case ascii.EqualFold(args[j], "count") && more > 0:
			n, ok := ascii.ParseInt(args[j+1])
			if !ok || n < 1 || n > xautoclaimMaxCount {
				cl.writeError("ERR COUNT must be > 0")
				return
			}
			count = n
			j++
		case ascii.EqualFold(args[j], "justid"):
			justID = true
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	if !lookupGroup(cl, key, group) {
		return
	}
	if count >= xautoclaimNoMemory {
		cl.writeError("ERR Insufficient memory, failed allocating transient memory, COUNT too high.")
		return
	}
	rec := cl.effectScratch()
	log := cl.logsEffects()
	_, _, err := updateExisting(cl, key, store.KindStream, func(s *store.Stream) {
		g := s.Group(group)
		if g == nil {
			cl.writeArray(0)
			return
		}
		now := nowMillis()
		attempts := count * 10
		if attempts/10 != count {
			attempts = 1<<63 - 1
		}
		cl.writeArray(3)
		cursorAt := len(cl.out)
		hdr := len(cl.out)
		cl.out = append(cl.out, "*0000000000\r\n"...)
		var n int64
		var deleted []store.StreamID
		taker := claimer{name: args[3], idx: -1}
		var idb [48]byte
		i, _ := g.FindPending(start)
		for ; attempts > 0 && count > 0 && i < len(g.Pending()); attempts-- {
			p := g.Pending()[i]
			if !s.Has(p.ID) {
				if log {
					rec = appendXClaimRecord(rec, key, group, g.ConsumerName(p.Consumer), p.ID.AppendTo(idb[:0]), &p, g)
				}
				s.RemovePending(g, i)
				deleted = append(deleted, p.ID)
				count--
				continue
			}
			if minIdle != 0 && now-p.DeliveryTime < minIdle {
				i++
				continue
			}
			c := taker.get(cl, s, g, key, now)
			g.Claim(i, c)
			pp := &g.Pending()[i]
			pp.DeliveryTime = now
			if !justID {
				pp.DeliveryCount++
			}
			if justID {
				cl.writeBulk(pp.ID.AppendTo(idb[:0]))
			} else {
				writeEntryAt(cl, s, pp.ID)
			}
			n++
			count--
			if log {
				rec = appendXClaimRecord(rec, key, group, g.ConsumerName(c), pp.ID.AppendTo(idb[:0]), pp, g)
			}
			i++
		}
		patchArrayHeader(cl, hdr, n)
		var cursor store.StreamID
		if i < len(g.Pending()) {
			cursor = g.Pending()[i].ID
		}
		// The cursor goes first: insert it before the entries.
		var cb [64]byte
		c := resp.AppendBulk(cb[:0], cursor.AppendTo(idb[:0]))
		cl.out = append(cl.out[:cursorAt], append(c, cl.out[cursorAt:]...)...)
		cl.writeArray(len(deleted))
		for _, id := range deleted {
			cl.writeBulk(id.AppendTo(idb[:0]))
		}
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.setEffect(rec)
}
