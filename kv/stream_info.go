package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// XINFO STREAM [FULL [COUNT n]], GROUPS and CONSUMERS, with the lag and
// entries-read of Redis 7.0 (store.Stream.Lag).

var _ = registerFamily(family{commands: []*command{
	{
		name: "xinfo", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for stream introspection commands.", "5.0.0", "stream", "Depends on subcommand."},
	},
	{
		name: "xinfo|consumers", arity: 4, fn: cmdXInfoConsumers,
		flags: "readonly", acl: "@read @stream @slow", tips: "nondeterministic_output",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns a list of the consumers in a consumer group.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xinfo|groups", arity: 3, fn: cmdXInfoGroups,
		flags: "readonly", acl: "@read @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns a list of the consumer groups of a stream.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xinfo|help", arity: 2, fn: cmdXInfoHelp,
		flags: "loading stale", acl: "@stream @slow",
		doc: commandDoc{"Returns helpful text about the different subcommands.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xinfo|stream", arity: -3, fn: cmdXInfoStream,
		flags: "readonly", acl: "@read @stream @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns information about a stream.", "5.0.0", "stream", "O(1)"},
	},
}})

func cmdXInfoHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "XINFO", []string{
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	})
}

// viewStream runs fn with key's stream, answering "no such key" or
// WRONGTYPE when there is none.
func viewStream(cl *client, key []byte, fn func(s *store.Stream)) {
	viewCollection(cl, key, store.KindStream, func(s *store.Stream) {
		if s == nil {
			cl.writeError(errNoSuchKey)
			return
		}
		fn(s)
	})
}

func (cl *client) writeID(id store.StreamID) {
	var b [48]byte
	cl.writeBulk(id.AppendTo(b[:0]))
}

// writeLag writes the group's lag, or a null when it cannot be known.
func writeLag(cl *client, s *store.Stream, g *store.StreamGroup) {
	if lag, ok := s.Lag(g); ok {
		cl.writeInt(lag)
	} else {
		cl.writeNull()
	}
}

func writeEntriesRead(cl *client, g *store.StreamGroup) {
	if g.EntriesRead == store.SCGInvalidEntriesRead {
		cl.writeNull()
	} else {
		cl.writeInt(g.EntriesRead)
	}
}

// cmdXInfoConsumers: XINFO CONSUMERS key group.
func cmdXInfoConsumers(_ *Handler, cl *client, args [][]byte) {
	viewStream(cl, args[2], func(s *store.Stream) {
		g := s.Group(args[3])
		if g == nil {
			cl.writeError(errNoGroupForKey(args[3], args[2]))
			return
		}
		cs := g.Consumers()
		now := nowMillis()
		cl.writeArray(len(cs))
		for _, c := range cs {
			cl.writeMap(3)
			cl.writeBulkStr("name")
			cl.writeBulk(c.Name)
			cl.writeBulkStr("pending")
			cl.writeInt(c.Pending)
			cl.writeBulkStr("idle")
			cl.writeInt(max(now-c.SeenTime, 0))
		}
	})
}

// cmdXInfoGroups: XINFO GROUPS key.
func cmdXInfoGroups(_ *Handler, cl *client, args [][]byte) {
	viewStream(cl, args[2], func(s *store.Stream) {
		gs := s.Groups()
		cl.writeArray(len(gs))
		for _, g := range gs {
			cl.writeMap(6)
			cl.writeBulkStr("name")
			cl.writeBulk(g.Name())
			cl.writeBulkStr("consumers")
			cl.writeInt(int64(g.NumConsumers()))
			cl.writeBulkStr("pending")
			cl.writeInt(int64(len(g.Pending())))
			cl.writeBulkStr("last-delivered-id")
			cl.writeID(g.LastID)
			cl.writeBulkStr("entries-read")
			writeEntriesRead(cl, g)
			cl.writeBulkStr("lag")
			writeLag(cl, s, g)
		}
	})
}

// cmdXInfoStream: XINFO STREAM key [FULL [COUNT n]].
func cmdXInfoStream(_ *Handler, cl *client, args [][]byte) {
	viewStream(cl, args[2], func(s *store.Stream) {
		opts := args[3:]
		full := len(opts) > 0
		count := int64(10)
		if full {
			if len(opts) != 1 && len(opts) != 3 || !ascii.EqualFold(opts[0], "full") ||
				len(opts) == 3 && !ascii.EqualFold(opts[1], "count") {
				cl.writeError(sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) + "'. Try XINFO HELP."))
				return
			}
			if len(opts) == 3 {
				n, ok := ascii.ParseInt(opts[2])
				if !ok {
					cl.writeError(errNotInteger)
					return
				}
				if count = n; n < 0 {
					count = 10
				}
			}
		}
		if full {
			cl.writeMap(9)
		} else {
			cl.writeMap(10)
		}
		m := s.Meta()
		cl.writeBulkStr("length")
		cl.writeInt(int64(m.Length))
		cl.writeBulkStr("radix-tree-keys")
		nodes := int64(0)
		s.Nodes(func(store.StreamID, []byte) { nodes++ })
		cl.writeInt(nodes)
		cl.writeBulkStr("radix-tree-nodes")
		cl.writeInt(s.RadixTreeNodes())
		cl.writeBulkStr("last-generated-id")
		cl.writeID(m.LastID)
		cl.writeBulkStr("max-deleted-entry-id")
		cl.writeID(m.MaxDeletedID)
		cl.writeBulkStr("entries-added")
		cl.writeInt(int64(m.EntriesAdded))
		cl.writeBulkStr("recorded-first-entry-id")
		cl.writeID(m.FirstID)
		if !full {
			cl.writeBulkStr("groups")
			cl.writeInt(int64(len(s.Groups())))
			for _, edge := range []string{"first-entry", "last-entry"} {
				cl.writeBulkStr(edge)
				found := false
				s.Range(store.StreamID{}, store.MaxStreamID, edge == "last-entry", func(id store.StreamID, fv [][]byte) bool {
					writeStreamEntry(cl, id, fv)
					found = true
					return false
				})
				if !found {
					cl.writeNull()
				}
			}
			return
		}
		cl.writeBulkStr("entries")
		writeStreamRange(cl, s, store.StreamID{}, store.MaxStreamID, false, count)
		cl.writeBulkStr("groups")
		cl.writeArray(len(s.Groups()))
		for _, g := range s.Groups() {
			writeGroupFull(cl, s, g, count)
		}
	})
}

// writeGroupFull is one group of XINFO STREAM FULL: at most count (0: all)
// pending entries of the group and of each consumer.
func writeGroupFull(cl *client, s *store.Stream, g *store.StreamGroup, count int64) {
	cl.writeMap(7)
	cl.writeBulkStr("name")
	cl.writeBulk(g.Name())
	cl.writeBulkStr("last-delivered-id")
	cl.writeID(g.LastID)
	cl.writeBulkStr("entries-read")
	writeEntriesRead(cl, g)
	cl.writeBulkStr("lag")
	writeLag(cl, s, g)
	pel := g.Pending()
	cl.writeBulkStr("pel-count")
	cl.writeInt(int64(len(pel)))
	cl.writeBulkStr("pending")
	n := len(pel)
	if count > 0 && int64(n) > count {
		n = int(count)
	}
	cl.writeArray(n)
	for _, p := range pel[:n] {
		cl.writeArray(4)
		cl.writeID(p.ID)
		cl.writeBulk(g.ConsumerName(p.Consumer))
		cl.writeInt(p.DeliveryTime)
		cl.writeInt(int64(p.DeliveryCount))
	}
	cs := g.Consumers()
	cl.writeBulkStr("consumers")
	cl.writeArray(len(cs))
	for _, c := range cs {
		cl.writeMap(4)
		cl.writeBulkStr("name")
		cl.writeBulk(c.Name)
		cl.writeBulkStr("seen-time")
		cl.writeInt(c.SeenTime)
		cl.writeBulkStr("pel-count")
		cl.writeInt(c.Pending)
		cl.writeBulkStr("pending")
		hdr := len(cl.out)
		cl.out = append(cl.out, "*0000000000\r\n"...)
		var k int64
		for i := range pel {
			if count > 0 && k >= count {
				break
			}
			if pel[i].Consumer != int32(c.Index) {
				continue
			}
			cl.writeArray(3)
			cl.writeID(pel[i].ID)
			cl.writeInt(pel[i].DeliveryTime)
			cl.writeInt(int64(pel[i].DeliveryCount))
			k++
		}
		patchArrayHeader(cl, hdr, k)
	}
}
