package kv

import (
	"strings"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// The COMMAND command: COUNT, LIST, INFO, DOCS, HELP.

func cmdCommand(_ *Handler, cl *client, args [][]byte) {
	if len(args) > 1 {
		// Reached only for a subcommand-less call; the dispatcher routes
		// "COMMAND <sub>" to the subcommand.
		cl.writeError(unknownSubcommandError("command", args[1]))
		return
	}
	cl.writeArray(len(commandOrder))
	for _, c := range commandOrder {
		writeCommandInfo(cl, c)
	}
}

func cmdCommandCount(_ *Handler, cl *client, _ [][]byte) {
	cl.writeInt(int64(len(commandOrder)))
}

// cmdCommandList implements COMMAND LIST [FILTERBY MODULE m | ACLCAT c |
// PATTERN p]: every command and subcommand ("client|list"), as Redis 7.0
// lists them; no command comes from a module.
func cmdCommandList(_ *Handler, cl *client, args [][]byte) {
	match := func(*command) bool { return true }
	switch {
	case len(args) == 2:
	case len(args) == 5 && ascii.EqualFold(args[2], "filterby"):
		v := args[4]
		switch {
		case ascii.EqualFold(args[3], "module"):
			match = func(*command) bool { return false }
		case ascii.EqualFold(args[3], "aclcat"):
			cat := "@" + strings.ToLower(string(v))
			match = func(c *command) bool { return hasWord(c.acl, cat) }
		case ascii.EqualFold(args[3], "pattern"):
			pattern := []byte(strings.ToLower(string(v))) // Redis matches without case
			match = func(c *command) bool { return store.Match(pattern, []byte(c.name)) }
		default:
			cl.writeError(errSyntax)
			return
		}
	default:
		cl.writeError(errSyntax)
		return
	}
	var names []string
	for _, c := range commandOrder {
		if match(c) {
			names = append(names, c.name)
		}
		for _, sub := range c.subOrder {
			if match(sub) {
				names = append(names, sub.name)
			}
		}
	}
	cl.writeArray(len(names))
	for _, n := range names {
		cl.writeBulkStr(n)
	}
}

func cmdCommandInfo(_ *Handler, cl *client, args [][]byte) {
	if len(args) == 2 {
		cl.writeArray(len(commandOrder))
		for _, c := range commandOrder {
			writeCommandInfo(cl, c)
		}
		return
	}
	cl.writeArray(len(args) - 2)
	for _, name := range args[2:] {
		c := lookupFullName(name)
		if c == nil {
			cl.writeNull()
			continue
		}
		writeCommandInfo(cl, c)
	}
}

// lookupFullName finds "get" or "client|list".
func lookupFullName(name []byte) *command {
	for i, ch := range name {
		if ch == '|' {
			parent := lookupName(commands, name[:i])
			if parent == nil || parent.subs == nil {
				return nil
			}
			return lookupName(parent.subs, name[i+1:])
		}
	}
	return lookupName(commands, name)
}

// writeCommandInfo writes one COMMAND INFO entry in Redis 7's ten-element
// shape.
func writeCommandInfo(cl *client, c *command) {
	cl.writeArray(10)
	cl.writeBulkStr(c.name)
	cl.writeInt(int64(c.arity))
	writeStatusSet(cl, c.flags)
	cl.writeInt(int64(c.firstKey))
	cl.writeInt(int64(c.lastKey))
	cl.writeInt(int64(c.step))
	writeStatusSet(cl, c.acl)
	tips := strings.Fields(c.tips)
	cl.writeSet(len(tips))
	for _, t := range tips {
		cl.writeBulkStr(t)
	}
	cl.writeSet(len(c.keySpecs))
	for _, ks := range c.keySpecs {
		writeKeySpec(cl, ks)
	}
	// Redis writes an empty set when there are no subcommands, an array
	// otherwise.
	if len(c.subOrder) == 0 {
		cl.writeSet(0)
		return
	}
	cl.writeArray(len(c.subOrder))
	for _, s := range c.subOrder {
		writeCommandInfo(cl, s)
	}
}

// writeStatusSet writes a space-separated list as a set of status strings.
func writeStatusSet(cl *client, list string) {
	words := strings.Fields(list)
	cl.writeSet(len(words))
	for _, w := range words {
		cl.writeStatus(w)
	}
}

func writeKeySpec(cl *client, ks keySpec) {
	n := 3
	if ks.notes != "" {
		n++
	}
	cl.writeMap(n)
	if ks.notes != "" {
		cl.writeBulkStr("notes")
		cl.writeBulkStr(ks.notes)
	}
	cl.writeBulkStr("flags")
	writeStatusSet(cl, ks.flags)
	cl.writeBulkStr("begin_search")
	if ks.unknown {
		writeKeySpecStep(cl, "unknown")
		cl.writeBulkStr("find_keys")
		writeKeySpecStep(cl, "unknown")
		return
	}
	if ks.keyword != "" {
		writeKeywordSearch(cl, ks)
	} else {
		writeKeySpecStep(cl, "index", specInt{"index", ks.index})
	}
	cl.writeBulkStr("find_keys")
	if ks.keynum {
		writeKeySpecStep(cl, "keynum", specInt{"keynumidx", ks.keynumIdx}, specInt{"firstkey", ks.firstKeyIdx}, specInt{"keystep", ks.keyStep})
		return
	}
	writeKeySpecStep(cl, "range", specInt{"lastkey", ks.lastKey}, specInt{"keystep", ks.keyStep}, specInt{"limit", ks.limit})
}

// writeKeywordSearch writes a "keyword" begin-search step (MIGRATE's
// KEYS): its spec holds a string beside the integer.
func writeKeywordSearch(cl *client, ks keySpec) {
	cl.writeMap(2)
	cl.writeBulkStr("type")
	cl.writeBulkStr("keyword")
	cl.writeBulkStr("spec")
	cl.writeMap(2)
	cl.writeBulkStr("keyword")
	cl.writeBulkStr(ks.keyword)
	cl.writeBulkStr("startfrom")
	cl.writeInt(int64(ks.from))
}

// specInt is one named integer of a key spec step's spec.
type specInt struct {
	name  string
	value int
}

// writeKeySpecStep writes one step of a key spec (begin_search, find_keys)
// as Redis does: a map of its type and its spec, a map of integers.
func writeKeySpecStep(cl *client, kind string, spec ...specInt) {
	cl.writeMap(2)
	cl.writeBulkStr("type")
	cl.writeBulkStr(kind)
	cl.writeBulkStr("spec")
	cl.writeMap(len(spec))
	for _, f := range spec {
		cl.writeBulkStr(f.name)
		cl.writeInt(int64(f.value))
	}
}

func cmdCommandDocs(_ *Handler, cl *client, args [][]byte) {
	var list []*command
	if len(args) == 2 {
		list = commandOrder
	} else {
		for _, name := range args[2:] {
			if c := lookupFullName(name); c != nil {
				list = append(list, c)
			}
		}
	}
	cl.writeMap(len(list))
	for _, c := range list {
		cl.writeBulkStr(c.name)
		writeCommandDoc(cl, c)
	}
}

func writeCommandDoc(cl *client, c *command) {
	n := 4
	if c.doc.complexity == noComplexity {
		n--
	}
	if len(c.subOrder) > 0 {
		n++
	}
	cl.writeMap(n)
	cl.writeBulkStr("summary")
	cl.writeBulkStr(c.doc.summary)
	cl.writeBulkStr("since")
	cl.writeBulkStr(c.doc.since)
	cl.writeBulkStr("group")
	cl.writeBulkStr(c.doc.group)
	if c.doc.complexity != noComplexity {
		cl.writeBulkStr("complexity")
		cl.writeBulkStr(c.doc.complexity)
	}
	if len(c.subOrder) > 0 {
		cl.writeBulkStr("subcommands")
		cl.writeMap(len(c.subOrder))
		for _, s := range c.subOrder {
			cl.writeBulkStr(s.name)
			writeCommandDoc(cl, s)
		}
	}
}

func cmdCommandHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "COMMAND", []string{
		"(no subcommand)",
		"    Return details about all commands.",
		"COUNT",
		"    Return the total number of commands in this server.",
		"LIST",
		"    Return a list of all commands in this server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple commands.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple commands.",
	})
}
