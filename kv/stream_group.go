package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Consumer groups: XGROUP and its subcommands, XACK, XPENDING. XREADGROUP
// is in stream_readgroup.go, XCLAIM and XAUTOCLAIM in stream_claim.go.
//
// Logging, as Redis 7.0 propagates them: XGROUP's subcommands and XACK as
// they are when they changed something; XREADGROUP, XCLAIM and XAUTOCLAIM
// as the XCLAIMs (and XGROUP SETID, XGROUP CREATECONSUMER) that rebuild
// the pending entries they touched.

var _ = registerFamily(family{commands: []*command{
	{
		name: "xgroup", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for consumer groups commands.", "5.0.0", "stream", "Depends on subcommand."},
	},
	{
		name: "xgroup|create", arity: -5, fn: cmdXGroup, log: logEffect,
		flags: "write denyoom", acl: "@write @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Creates a consumer group.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xgroup|createconsumer", arity: 5, fn: cmdXGroup, log: logEffect,
		flags: "write denyoom", acl: "@write @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Creates a consumer in a consumer group.", "6.2.0", "stream", "O(1)"},
	},
	{
		name: "xgroup|delconsumer", arity: 5, fn: cmdXGroup, log: logEffect,
		flags: "write", acl: "@write @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 2, keyStep: 1}},
		doc: commandDoc{"Deletes a consumer from a consumer group.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xgroup|destroy", arity: 4, fn: cmdXGroup, log: logEffect,
		flags: "write", acl: "@write @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 2, keyStep: 1}},
		doc: commandDoc{"Destroys a consumer group.", "5.0.0", "stream", "O(N) where N is the number of entries in the group's pending entries list (PEL)."},
	},
	{
		name: "xgroup|setid", arity: -5, fn: cmdXGroup, log: logEffect,
		flags: "write", acl: "@write @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 2, keyStep: 1}},
		doc: commandDoc{"Sets the last-delivered ID of a consumer group.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xgroup|help", arity: 2, fn: cmdXGroupHelp,
		flags: "loading stale", acl: "@stream @slow",
		doc: commandDoc{"Returns helpful text about the different subcommands.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xack", arity: -4, fn: cmdXAck, log: logEffect,
		flags: "write fast", acl: "@write @stream @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", "5.0.0", "stream", "O(1) for each message ID processed."},
	},
	{
		name: "xpending", arity: -3, fn: cmdXPending,
		flags: "readonly", acl: "@read @stream @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the information and entries from a stream consumer group's pending entries list.", "5.0.0", "stream", "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer."},
	},
}})

func errNoGroupForKey(group, key []byte) string {
	return sanitizeError("NOGROUP No such consumer group '" + cString(group, len(group)) + "' for key name '" + cString(key, len(key)) + "'")
}

func errNoKeyOrGroup(key, group []byte, suffix string) string {
	return sanitizeError("NOGROUP No such key '" + cString(key, len(key)) + "' or consumer group '" + cString(group, len(group)) + "'" + suffix)
}

func xgroupSyntaxError(sub []byte) string {
	return sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(sub, 128) + "'. Try XGROUP HELP.")
}

// cmdXGroup is XGROUP CREATE, SETID, DESTROY, CREATECONSUMER and
// DELCONSUMER, checked in the order of Redis's xgroupCommand.
func cmdXGroup(h *Handler, cl *client, args [][]byte) {
	sub := args[1]
	create, setid := ascii.EqualFold(sub, "create"), ascii.EqualFold(sub, "setid")
	mkstream := false
	entriesRead := int64(store.SCGInvalidEntriesRead)
	for i := 5; i < len(args); {
		switch {
		case create && ascii.EqualFold(args[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && ascii.EqualFold(args[i], "entriesread") && i+1 < len(args):
			n, ok := ascii.ParseInt(args[i+1])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			if n < 0 && n != store.SCGInvalidEntriesRead {
				cl.writeError("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = n
			i += 2
		default:
			cl.writeError(xgroupSyntaxError(sub))
			return
		}
	}
	key, group := args[2], args[3]
	var id store.StreamID
	idOK := true
	parseID := func(s *store.Stream) {
		switch {
		case string(args[4]) == "$":
			if s != nil {
				id = s.LastID()
			}
		case create:
			id, _, idOK = streamIDParse{strict: true}.parse(args[4])
		default:
			id, _, idOK = streamIDParse{}.parse(args[4])
		}
	}
	fail := ""
	var reply int64 = -1 // -1: +OK
	changed, created := false, false
	err := cl.db().Update(key, store.KindStream, 64+int64(len(group)), func(o store.Object) store.Object {
		s, _ := o.(*store.Stream)
		if s == nil && !mkstream {
			fail = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
			return nil
		}
		var g *store.StreamGroup
		if s != nil {
			g = s.Group(group)
		}
		if s != nil && g == nil && !mkstream && !create && !ascii.EqualFold(sub, "destroy") {
			fail = errNoGroupForKey(group, key)
			return s
		}
		switch {
		case create && len(args) <= 8:
			if parseID(s); !idOK {
				fail = errInvalidStreamID
				break
			}
			if s == nil {
				s, created = store.NewStream(), true
			}
			if _, ok := s.CreateGroup(group, id, entriesRead); !ok {
				fail = "BUSYGROUP Consumer Group name already exists"
				return s
			}
			changed = true
		case setid && (len(args) == 5 || len(args) == 7):
			if parseID(s); !idOK {
				fail = errInvalidStreamID
				return s
			}
			g.LastID, g.EntriesRead = id, entriesRead
			changed = true
		case ascii.EqualFold(sub, "destroy") && len(args) == 4:
			reply = 0
			if g != nil {
				s.DestroyGroup(group)
				reply, changed = 1, true
			}
		case ascii.EqualFold(sub, "createconsumer") && len(args) == 5:
			_, ok := s.CreateConsumer(g, args[4], nowMillis())
			reply = 0
			if ok {
				reply, changed = 1, true
			}
		case ascii.EqualFold(sub, "delconsumer") && len(args) == 5:
			reply = 0
			if c := g.FindConsumer(args[4]); c >= 0 {
				reply, changed = s.DeleteConsumer(g, c), true
			}
		default:
			fail = xgroupSyntaxError(sub)
		}
		if s == nil {
			return nil // not a typed nil: the store would keep it
		}
		return s
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case fail != "":
		cl.notifyNew(created, key)
		cl.writeError(fail)
		return
	case reply < 0:
		cl.writeOK()
	default:
		cl.writeInt(reply)
	}
	cl.notifyNew(created, key)
	if !changed {
		return
	}
	cl.setEffect(aof.AppendCommand(cl.effectScratch(), args...))
	cl.notify(evStream, "xgroup-"+string(ascii.AppendLower(nil, sub)), key)
	if ascii.EqualFold(sub, "destroy") {
		h.signalReady(cl, key) // its blocked readers get -NOGROUP
	}
}

func cmdXGroupHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "XGROUP", []string{
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
	})
}

// cmdXAck: XACK key group id [id ...].
func cmdXAck(_ *Handler, cl *client, args [][]byte) {
	if !streamOrZero(cl, args[1]) {
		return
	}
	var acked int64
	parsed := false
	_, _, err := updateExisting(cl, args[1], store.KindStream, func(s *store.Stream) {
		g := s.Group(args[2])
		if g == nil {
			parsed = true
			return
		}
		ids := make([]store.StreamID, len(args)-3)
		for i, b := range args[3:] {
			id, _, ok := streamIDParse{strict: true}.parse(b)
			if !ok {
				return
			}
			ids[i] = id
		}
		parsed = true
		for _, id := range ids {
			if i, ok := g.FindPending(id); ok {
				s.RemovePending(g, i)
				acked++
			}
		}
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case !parsed:
		cl.writeError(errInvalidStreamID)
	default:
		cl.writeInt(acked)
		if acked > 0 {
			cl.setEffect(aof.AppendCommand(cl.effectScratch(), args...))
		}
	}
}

// cmdXPending: XPENDING key group [[IDLE min-idle] start end count
// [consumer]].
func cmdXPending(_ *Handler, cl *client, args [][]byte) {
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		cl.writeError(errSyntax)
		return
	}
	var start, end store.StreamID
	var count, minIdle int64
	var consumer []byte
	if len(args) >= 6 {
		at := 3
		if ascii.EqualFold(args[3], "idle") {
			n, ok := ascii.ParseInt(args[4])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			minIdle = n
			if len(args) < 8 {
				cl.writeError(errSyntax)
				return
			}
			at += 2
		}
		n, ok := ascii.ParseInt(args[at+2])
		if !ok {
			cl.writeError(errNotInteger)
			return
		}
		count = max(n, 0)
		var errText string
		if start, end, errText = parseIDInterval(args[at], args[at+1]); errText != "" {
			cl.writeError(errText)
			return
		}
		if at+3 < len(args) {
			consumer = args[at+3]
		}
	}
	viewCollection(cl, args[1], store.KindStream, func(s *store.Stream) {
		var g *store.StreamGroup
		if s != nil {
			g = s.Group(args[2])
		}
		if g == nil {
			cl.writeError(errNoKeyOrGroup(args[1], args[2], ""))
			return
		}
		if len(args) == 3 {
			writePendingSummary(cl, g)
			return
		}
		owner := int32(-1)
		if consumer != nil {
			if owner = g.FindConsumer(consumer); owner < 0 {
				cl.writeArray(0)
				return
			}
		}
		now := nowMillis()
		hdr := len(cl.out)
		cl.out = append(cl.out, "*0000000000\r\n"...)
		var n int64
		pel := g.Pending()
		i, _ := g.FindPending(start)
		for ; count > 0 && i < len(pel) && !end.Less(pel[i].ID); i++ {
			p := &pel[i]
			if owner >= 0 && p.Consumer != owner {
				continue
			}
			if minIdle != 0 && now-p.DeliveryTime < minIdle {
				continue
			}
			n++
			count--
			cl.writeArray(4)
			var buf [48]byte
			cl.writeBulk(p.ID.AppendTo(buf[:0]))
			cl.writeBulk(g.ConsumerName(p.Consumer))
			cl.writeInt(max(now-p.DeliveryTime, 0))
			cl.writeInt(int64(p.DeliveryCount))
		}
		patchArrayHeader(cl, hdr, n)
	})
}

// writePendingSummary is XPENDING key group: the count, the least and
// greatest pending IDs, and the consumers that have pending entries.
func writePendingSummary(cl *client, g *store.StreamGroup) {
	pel := g.Pending()
	cl.writeArray(4)
	cl.writeInt(int64(len(pel)))
	if len(pel) == 0 {
		cl.writeNull()
		cl.writeNull()
		cl.out = append(cl.out, nullArrayReply(int(cl.proto))...)
		return
	}
	var buf [48]byte
	cl.writeBulk(pel[0].ID.AppendTo(buf[:0]))
	cl.writeBulk(pel[len(pel)-1].ID.AppendTo(buf[:0]))
	cs := g.Consumers()
	n := 0
	for _, c := range cs {
		if c.Pending > 0 {
			n++
		}
	}
	cl.writeArray(n)
	for _, c := range cs {
		if c.Pending > 0 {
			cl.writeArray(2)
			cl.writeBulk(c.Name)
			cl.writeBulk(strconv.AppendInt(buf[:0], c.Pending, 10))
		}
	}
}

// parseIDInterval reads a start and an end as XPENDING does
// (streamParseIntervalIDOrReply, then the exclusive bounds stepped).
func parseIDInterval(startArg, endArg []byte) (start, end store.StreamID, errText string) {
	start, ex, ok := parseIntervalID(startArg, 0)
	if !ok {
		return start, end, errInvalidStreamID
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			return start, end, "ERR invalid start ID for the interval"
		}
	}
	end, ex, ok = parseIntervalID(endArg, 1<<64-1)
	if !ok {
		return start, end, errInvalidStreamID
	}
	if ex {
		if end, ok = end.Decr(); !ok {
			return start, end, "ERR invalid end ID for the interval"
		}
	}
	return start, end, ""
}
