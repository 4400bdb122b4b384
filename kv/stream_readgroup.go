package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/store"
)

// XREADGROUP: new entries (">") delivered to a consumer and added to its
// group's pending entries, or a consumer's own pending history (any other
// ID); with BLOCK, parked on blocking.go's machinery as XREAD is. Unlike
// XREAD, a served XREADGROUP writes (the group's last ID, its PEL), so a
// serve touches the key, and logs what it did as Redis 7.0 propagates it:
// one XCLAIM ... FORCE JUSTID LASTID per delivered entry, XGROUP SETID
// after a NOACK read, XGROUP CREATECONSUMER for a consumer a NOACK read
// created.
//
// A parked XREADGROUP is answered, as in 7.0, with -NOGROUP when its group
// goes (XGROUP DESTROY) and -UNBLOCKED when its key does (DEL, a SET over
// it, FLUSHDB...): every write while such readers wait signals the keys it
// wrote and that no longer hold a stream (signalGroupReaders), and the
// serve looks.

var _ = registerFamily(family{commands: []*command{
	{
		name: "xreadgroup", arity: -7, fn: cmdXReadGroup, log: logEffect,
		flags: "write blocking movablekeys", acl: "@write @stream @slow @blocking",
		keySpecs: []keySpec{{flags: "RO access", keyword: "STREAMS", from: 4, lastKey: -1, keyStep: 1, limit: 2}},
		keysOf:   xreadKeys,
		doc:      commandDoc{"Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", "5.0.0", "stream", "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data."},
	},
}})

// groupRead is what one XREADGROUP reads with, copied so that a serve
// can use it after the command's arguments are gone.
type groupRead struct {
	group, consumer []byte
	noack           bool
	count           int64 // 0: all
	log             bool  // build the records
}

// deliverNew answers from s's entries after g's last ID, as
// streamReplyWithRange with a group: each becomes pending for the
// consumer (unless NOACK) and moves the group's last ID. It returns the
// records that rebuild what it did.
func (r *groupRead) deliverNew(cl *client, s *store.Stream, g *store.StreamGroup, c int32, key []byte, rec []byte) []byte {
	start, _ := g.LastID.Incr()
	hdr := len(cl.out)
	cl.out = append(cl.out, "*0000000000\r\n"...)
	var n int64
	now := nowMillis()
	moved := false
	var idb [48]byte
	s.Range(start, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
		if g.LastID.Less(id) {
			s.Advance(g, id)
			moved = true
		}
		writeStreamEntry(cl, id, fv)
		if !r.noack {
			p := s.Deliver(g, c, id, now)
			if r.log {
				rec = appendXClaimRecord(rec, key, r.group, r.consumer, id.AppendTo(idb[:0]), &p, g)
			}
		}
		n++
		return r.count == 0 || n < r.count
	})
	patchArrayHeader(cl, hdr, n)
	if r.noack && moved && r.log {
		rec = appendGroupSetID(rec, key, r.group, g)
	}
	return rec
}

// appendGroupSetID appends XGROUP SETID key group <last ID> ENTRIESREAD n.
func appendGroupSetID(rec, key, group []byte, g *store.StreamGroup) []byte {
	return aof.AppendCommand(rec, []byte("XGROUP"), []byte("SETID"), key, group, g.LastID.AppendTo(nil),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10))
}

// deliverHistory answers from consumer c's pending entries from start on,
// as streamReplyWithRangeFromConsumerPEL: an entry that no longer exists
// is its ID and a null; the others count one more delivery.
func (r *groupRead) deliverHistory(cl *client, s *store.Stream, g *store.StreamGroup, c int32, start store.StreamID) {
	hdr := len(cl.out)
	cl.out = append(cl.out, "*0000000000\r\n"...)
	var n int64
	now := nowMillis()
	pel := g.Pending()
	var idb [48]byte
	for i, _ := g.FindPending(start); i < len(pel) && (r.count == 0 || n < r.count); i++ {
		p := &pel[i]
		if p.Consumer != c {
			continue
		}
		found := false
		s.Range(p.ID, p.ID, false, func(id store.StreamID, fv [][]byte) bool {
			writeStreamEntry(cl, id, fv)
			found = true
			return false
		})
		if found {
			p.DeliveryTime = now
			p.DeliveryCount++
		} else {
			cl.writeArray(2)
			cl.writeBulk(p.ID.AppendTo(idb[:0]))
			cl.out = append(cl.out, nullArrayReply(int(cl.proto))...)
		}
		n++
	}
	patchArrayHeader(cl, hdr, n)
}

// consumerFor looks up (refreshing its seen time) or creates the
// consumer, and with NOACK logs a creation as XGROUP CREATECONSUMER.
func (r *groupRead) consumerFor(cl *client, s *store.Stream, g *store.StreamGroup, key []byte, rec []byte) (int32, []byte) {
	now := nowMillis()
	if c := g.FindConsumer(r.consumer); c >= 0 {
		g.Touch(c, now)
		return c, rec
	}
	c, _ := s.CreateConsumer(g, r.consumer, now)
	cl.notify(evStream, "xgroup-createconsumer", key)
	if r.noack && r.log {
		rec = aof.AppendCommand(rec, []byte("XGROUP"), []byte("CREATECONSUMER"), key, r.group, r.consumer)
	}
	return c, rec
}

// cmdXReadGroup: XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms]
// [NOACK] STREAMS key... id...
func cmdXReadGroup(h *Handler, cl *client, args [][]byte) {
	a, errText := parseXRead(cl, args, true)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	keys := args[a.streamsArg : a.streamsArg+a.n]
	history := make([]bool, a.n)
	starts := make([]store.StreamID, a.n)
	for i, key := range keys {
		idArg := args[a.streamsArg+a.n+i]
		fail := ""
		err := cl.db().View(key, store.KindStream, func(o store.Object) {
			s, _ := o.(*store.Stream)
			if s == nil || s.Group(a.group) == nil {
				fail = errNoKeyOrGroup(key, a.group, " in XREADGROUP with GROUP option")
				return
			}
			switch string(idArg) {
			case "$":
				fail = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
			case ">":
			default:
				id, _, ok := streamIDParse{strict: true}.parse(idArg)
				if !ok {
					fail = errInvalidStreamID
				}
				// The greatest ID reads as ">" does: Redis marks ">" so.
				history[i], starts[i] = id != store.MaxStreamID, id
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
	r := &groupRead{group: a.group, consumer: a.consumer, noack: a.noack, count: a.count, log: cl.logsEffects()}
	if a.timeout < 0 || cl.conn == nil || cl.inExec() {
		if !readGroupNow(cl, r, keys, history, starts) {
			cl.out = append(cl.out, nullArrayReply(int(cl.proto))...)
		}
		return
	}
	waiting := &groupRead{group: append([]byte(nil), a.group...), consumer: append([]byte(nil), a.consumer...),
		noack: a.noack, count: a.count, log: h.aof != nil || h.primary.feeding.Load()}
	if waiting.count == 0 {
		waiting.count = xreadDefaultCount
	}
	proto, db := cl.proto, cl.selected.Load()
	h.blockOn(cl, blockRequest{
		keys: keys, timeout: a.timeout, timeoutReply: nullArrayReply(int(proto)), independent: true, groupRead: true,
		try: func() bool { return readGroupNow(cl, r, keys, history, starts) },
		serve: func(key []byte, res *serveResult) bool {
			tmp := &client{h: h, proto: proto}
			tmp.selected.Store(db)
			served := waiting.serveBlocked(h, tmp, key, res)
			res.reply = tmp.out
			return served
		},
	})
}

// serveBlocked answers a parked XREADGROUP from key, which a write
// signalled, as Redis's serveClientsBlockedOnStreamKey and
// unblockDeletedStreamReadgroupClients do.
func (r *groupRead) serveBlocked(h *Handler, tmp *client, key []byte, res *serveResult) bool {
	served := false
	gone := false
	err := tmp.db().Update(key, store.KindStream, 0, func(o store.Object) store.Object {
		s, _ := o.(*store.Stream)
		if s == nil {
			gone = true
			return nil
		}
		g := s.Group(r.group)
		switch {
		case g == nil:
			tmp.writeError("NOGROUP the consumer group this client was blocked on no longer exists")
			served = true
		case g.LastID.Less(s.LastID()):
			var c int32
			c, res.record = r.consumerFor(tmp, s, g, key, res.record)
			tmp.writeStreamsHeader(1)
			if tmp.proto == 2 {
				tmp.writeArray(2)
			}
			tmp.writeBulk(key)
			res.record = r.deliverNew(tmp, s, g, c, key, res.record)
			served = true
		}
		return s
	})
	if err == store.ErrWrongType {
		gone = true
	}
	if gone {
		tmp.out = tmp.out[:0]
		tmp.writeError("UNBLOCKED the stream key no longer exists")
		return true
	}
	if served {
		h.touchKeyIn(int(tmp.selected.Load()), key) // the group changed: WATCHes fail
	}
	return served
}

// readGroupNow answers XREADGROUP from the streams it can serve now: each
// history read, and each ">" read whose stream has entries after the
// group's last ID. It reports false, writing nothing, when there is none.
func readGroupNow(cl *client, r *groupRead, keys [][]byte, history []bool, starts []store.StreamID) bool {
	hdr := -1
	n := 0
	rec := cl.effectScratch()
	for i, key := range keys {
		_ = cl.db().Update(key, store.KindStream, 0, func(o store.Object) store.Object {
			s, _ := o.(*store.Stream)
			if s == nil {
				return nil
			}
			g := s.Group(r.group)
			if g == nil {
				return s
			}
			if !history[i] && (s.Entries() == 0 || !g.LastID.Less(s.Edge(false, true))) {
				return s
			}
			if hdr < 0 {
				hdr = len(cl.out)
				cl.out = append(cl.out, "*0000000000\r\n"...)
			}
			n++
			if cl.proto == 2 {
				cl.writeArray(2)
			}
			cl.writeBulk(key)
			var c int32
			c, rec = r.consumerFor(cl, s, g, key, rec)
			if history[i] {
				start, _ := starts[i].Incr()
				r.deliverHistory(cl, s, g, c, start)
			} else {
				rec = r.deliverNew(cl, s, g, c, key, rec)
			}
			return s
		})
	}
	if hdr < 0 {
		return false
	}
	patchArrayHeader(cl, hdr, int64(n))
	if cl.proto >= 3 {
		cl.out[hdr] = '%'
	}
	cl.setEffect(rec)
	return true
}

// signalGroupReaders runs after a write while XREADGROUPs are parked: the
// keys the command wrote that hold no stream now are signalled, so that
// the readers whose key went are answered; flushes and SWAPDB signal every
// key waited on. The serve decides; a reader whose stream and group are
// still there waits on.
func (h *Handler) signalGroupReaders(cl *client, cmd *command, args [][]byte, reply []byte) {
	if len(reply) == 0 || reply[0] == '-' {
		return
	}
	if cmd.log == logFlush || cmd.name == "swapdb" || cmd.movableKeys && cmd.keysOf == nil {
		b := &h.blocking
		b.mu.Lock()
		var keys []dbKey
		for k := range b.queues {
			keys = append(keys, k)
		}
		b.mu.Unlock()
		for _, k := range keys {
			h.signalReadyIn(cl, int(k.db), []byte(k.key))
		}
		return
	}
	forEachWrittenKey(cmd, args, func(key []byte) {
		if cl.db().Type(key) != "stream" { // a stream written stays one: XADD and XGROUP DESTROY signal it themselves
			h.signalReady(cl, key)
		}
	})
}
