package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// COPY and OBJECT: the generic commands that look at a value of any type.

var _ = registerFamily(family{commands: []*command{
	{
		name: "copy", arity: -3, fn: cmdCopy, log: logAsIs,
		flags: "write denyoom", acl: "@keyspace @write @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}, {flags: "OW update", index: 2, keyStep: 1}},
		doc: commandDoc{"Copies the value of a key to a new key.", "6.2.0", "generic", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values."},
	},
	{
		name: "object", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Object introspection commands.", "2.2.3", "generic", "Depends on subcommand."},
	},
	{
		name: "object|encoding", arity: 3, fn: cmdObjectEncoding,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns the internal encoding of a key's value.", "2.2.3", "generic", "O(1)"},
	},
	{
		name: "object|freq", arity: 3, fn: cmdObjectFreq,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns the logarithmic access frequency counter of a key's value.", "4.0.0", "generic", "O(1)"},
	},
	{
		name: "object|idletime", arity: 3, fn: cmdObjectIdleTime,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns the seconds since the key was last accessed.", "2.2.3", "generic", "O(1)"},
	},
	{
		name: "object|refcount", arity: 3, fn: cmdObjectRefCount,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns the reference count of a key's value.", "2.2.3", "generic", "O(1)"},
	},
	{
		name: "object|help", arity: 2, fn: cmdObjectHelp,
		flags: "loading stale", acl: "@keyspace @slow",
		doc: commandDoc{"Lists the OBJECT subcommands.", "6.2.0", "generic", "O(1)"},
	},
}})

// cmdCopy: COPY source destination [DB destination-db] [REPLACE]. Shoal has
// database 0 only, so DB may name only it.
func cmdCopy(h *Handler, cl *client, args [][]byte) {
	replace := false
	to := int(cl.selected.Load())
	for i := 3; i < len(args); i++ {
		switch {
		case ascii.EqualFold(args[i], "replace"):
			replace = true
		case ascii.EqualFold(args[i], "db") && i+1 < len(args):
			i++
			db, errText := h.dbIndex(args[i])
			if errText != "" {
				cl.writeError(errText)
				return
			}
			to = db
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	if to == int(cl.selected.Load()) && string(args[1]) == string(args[2]) {
		cl.writeError("ERR source and destination objects are the same")
		return
	}
	ok, err := cl.db().CopyTo(h.db(to), args[1], args[2], replace)
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if ok {
		h.signalReadyIn(cl, to, args[2]) // a list or sorted set arriving wakes its waiters
		if to != int(cl.selected.Load()) {
			h.touchKeyIn(to, args[2]) // touchWritten touches the selected database's
		}
	}
	cl.writeInt(boolInt(ok))
	if ok {
		// Redis deletes a replaced key and adds the copy: always new.
		cl.notifyIn(to, evNew, "new", args[2])
		cl.notifyIn(to, evGeneric, "copy_to", args[2])
	}
}

func cmdObjectEncoding(h *Handler, cl *client, args [][]byte) {
	enc, ok := cl.db().Encoding(args[2])
	if !ok {
		cl.writeNull()
		return
	}
	cl.writeBulkStr(enc)
}

// cmdObjectFreq answers the key's access counter under an LFU policy, and
// Redis's error under the others, which track no frequency.
func cmdObjectFreq(h *Handler, cl *client, args [][]byte) {
	freq, ok := cl.db().Frequency(args[2])
	switch {
	case !ok:
		cl.writeNull()
	case !isLFU(h.shared.Policy()):
		cl.writeError("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		cl.writeInt(freq)
	}
}

func isLFU(p store.Policy) bool { return p == store.AllKeysLFU || p == store.VolatileLFU }

func cmdObjectIdleTime(h *Handler, cl *client, args [][]byte) {
	secs, ok := cl.db().IdleSeconds(args[2])
	switch {
	case !ok:
		cl.writeNull()
	case isLFU(h.shared.Policy()):
		cl.writeError("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		cl.writeInt(secs)
	}
}

// cmdObjectRefCount answers as Redis does: its values are not shared, except
// the integers 0..9999 it keeps once (OBJ_SHARED_REFCOUNT) when no memory
// limit is set.
func cmdObjectRefCount(h *Handler, cl *client, args [][]byte) {
	enc, ok := cl.db().Encoding(args[2])
	if !ok {
		cl.writeNull()
		return
	}
	if enc == "int" && h.shared.MaxMemory() == 0 {
		v, found, _ := cl.db().Get(nil, args[2])
		if n, isInt := ascii.ParseInt(v); found && isInt && n >= 0 && n < 10000 {
			cl.writeInt(2147483647)
			return
		}
	}
	cl.writeInt(1)
}

func cmdObjectHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "OBJECT", []string{
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
	})
}
