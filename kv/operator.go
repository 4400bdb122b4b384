package kv

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Commands operators, tools and libraries ask for beside the data
// commands: TOUCH, SUBSTR, LCS, MODULE LIST (RedisInsight asks), COMMAND
// GETKEYS and GETKEYSANDFLAGS (cluster clients route with them), CLIENT
// NO-EVICT, CLIENT REPLY and CLIENT UNBLOCK.
var _ = registerFamily(family{commands: []*command{
	{
		name: "touch", arity: -2, fn: cmdTouch,
		flags: "readonly fast", acl: "@keyspace @read @fast", tips: "request_policy:multi_shard response_policy:agg_sum",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Records an access to each key (its idle time restarts) and returns how many exist.", "3.2.1", "generic", "O(N) where N is the number of keys that will be touched."},
	},
	{
		name: "substr", arity: 4, fn: cmdGetRange,
		flags: "readonly", acl: "@read @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a substring of a string value (GETRANGE's old name).", "1.0.0", "string", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings."},
	},
	{
		name: "lcs", arity: -3, fn: cmdLCS,
		flags: "readonly", acl: "@read @string @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, lastKey: 1, keyStep: 1}},
		doc: commandDoc{"Finds the longest common subsequence of two string values.", "7.0.0", "string", "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
	},
	{
		name: "module", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Module management commands.", "4.0.0", "server", "Depends on subcommand."},
	},
	{
		name: "module|help", arity: 2, fn: cmdModuleHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Describes the MODULE subcommands.", "5.0.0", "server", "O(1)"},
	},
	{
		name: "module|list", arity: 2, fn: cmdModuleList,
		flags: "admin noscript", acl: "@admin @slow @dangerous", tips: "nondeterministic_output_order",
		doc: commandDoc{"Lists the loaded modules: Shoal loads none.", "4.0.0", "server", "O(N) where N is the number of loaded modules."},
	},
	{
		name: "module|load", arity: -3, fn: cmdModuleRefused,
		flags: "admin noscript no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Refused: Shoal loads no modules.", "4.0.0", "server", "O(1)"},
	},
	{
		name: "module|loadex", arity: -3, fn: cmdModuleRefused,
		flags: "admin noscript no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Refused: Shoal loads no modules.", "7.0.0", "server", "O(1)"},
	},
	{
		name: "module|unload", arity: 3, fn: cmdModuleRefused,
		flags: "admin noscript no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Refused: Shoal loads no modules.", "4.0.0", "server", "O(1)"},
	},
	{
		name: "command|getkeys", arity: -4, fn: cmdCommandGetKeys,
		flags: "loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns the keys of a full command.", "2.8.13", "server", "O(N) where N is the number of arguments to the command"},
	},
	{
		name: "command|getkeysandflags", arity: -4, fn: cmdCommandGetKeys,
		flags: "loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns the keys of a full command and how it accesses each.", "7.0.0", "server", "O(N) where N is the number of arguments to the command"},
	},
	{
		name: "client|no-evict", arity: 3, fn: cmdClientNoEvict,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection",
		doc: commandDoc{"Exempts this connection from client eviction (maxmemory-clients).", "7.0.0", "connection", "O(1)"},
	},
	{
		name: "client|reply", arity: 3, fn: cmdClientReply,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Turns this connection's replies off, on, or off for the next command.", "3.2.0", "connection", "O(1)"},
	},
	{
		name: "shutdown", arity: -1, fn: cmdShutdown,
		flags: "admin noscript loading stale no_multi allow_busy", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Stops the server as SIGTERM does: answers what was received, syncs the AOF, exits.", "1.0.0", "server", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)"},
	},
	{
		name: "memory", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Memory diagnostics commands.", "4.0.0", "server", "Depends on subcommand."},
	},
	{
		name: "memory|help", arity: 2, fn: cmdMemoryHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Describes the MEMORY subcommands.", "4.0.0", "server", "O(1)"},
	},
	{
		name: "memory|doctor", arity: 2, fn: cmdMemoryDoctor,
		acl: "@slow", tips: "nondeterministic_output request_policy:all_shards response_policy:special",
		doc: commandDoc{"Reports memory problems.", "4.0.0", "server", "O(1)"},
	},
	{
		name: "memory|malloc-stats", arity: 2, fn: cmdMemoryMallocStats,
		acl: "@slow", tips: "nondeterministic_output request_policy:all_shards response_policy:special",
		doc: commandDoc{"Shows the Go runtime's memory statistics.", "4.0.0", "server", "Depends on how much memory is allocated, could be slow"},
	},
	{
		name: "memory|purge", arity: 2, fn: cmdMemoryPurge,
		acl: "@slow", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Returns free heap memory to the operating system.", "4.0.0", "server", "Depends on how much memory is allocated, could be slow"},
	},
	{
		name: "memory|stats", arity: 2, fn: cmdMemoryStats,
		acl: "@slow", tips: "nondeterministic_output request_policy:all_shards response_policy:special",
		doc: commandDoc{"Shows memory usage details.", "4.0.0", "server", "O(1)"},
	},
	{
		name: "memory|usage", arity: -3, fn: cmdMemoryUsage,
		flags: "readonly", acl: "@read @slow",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RO", index: 2, keyStep: 1}},
		doc: commandDoc{"Returns the bytes a key and its value take in the store.", "4.0.0", "server", "O(N) where N is the number of samples."},
	},
	{
		name: "latency", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Latency diagnostics commands.", "2.8.13", "server", "Depends on subcommand."},
	},
	{
		name: "latency|doctor", arity: 2, fn: cmdLatencyDoctor,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "nondeterministic_output request_policy:all_nodes response_policy:special",
		doc: commandDoc{"Says what latency data Shoal keeps.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "latency|graph", arity: 3, fn: cmdLatencyGraph,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "nondeterministic_output request_policy:all_nodes response_policy:special",
		doc: commandDoc{"Returns a latency graph for an event: Shoal records no events.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "latency|help", arity: 2, fn: cmdLatencyHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Describes the LATENCY subcommands.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "latency|histogram", arity: -2, fn: cmdLatencyHistogram,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "nondeterministic_output request_policy:all_nodes response_policy:special",
		doc: commandDoc{"Returns the cumulative distribution of commands' latencies.", "7.0.0", "server", "O(N) where N is the number of commands with latency information being retrieved."},
	},
	{
		name: "latency|history", arity: 3, fn: cmdLatencyEmpty,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "nondeterministic_output request_policy:all_nodes response_policy:special",
		doc: commandDoc{"Returns the samples of a latency event: Shoal records no events.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "latency|latest", arity: 2, fn: cmdLatencyEmpty,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "nondeterministic_output request_policy:all_nodes response_policy:special",
		doc: commandDoc{"Returns the latest latency events: Shoal records none.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "latency|reset", arity: -2, fn: cmdLatencyReset,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "request_policy:all_nodes response_policy:all_succeeded",
		doc: commandDoc{"Resets latency events: Shoal records none.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "client|unblock", arity: -3, fn: cmdClientUnblock,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection",
		doc: commandDoc{"Unblocks a client waiting in a blocking command, as if it timed out or with an error.", "5.0.0", "connection", "O(log N) where N is the number of client connections"},
	},
}})

func cmdTouch(_ *Handler, cl *client, args [][]byte) {
	cl.writeInt(int64(cl.db().Touch(args[1:])))
}

func cmdModuleList(_ *Handler, cl *client, _ [][]byte) { cl.writeArray(0) }

// cmdModuleRefused answers MODULE LOAD, LOADEX and UNLOAD: Redis modules
// are C shared objects for Redis's own API, which Shoal does not have.
func cmdModuleRefused(_ *Handler, cl *client, args [][]byte) {
	cl.writeError("ERR Shoal does not load Redis modules (MODULE " + strings.ToUpper(string(args[1])) + " is refused)")
}

func cmdModuleHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "MODULE", []string{
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
	})
}

// cmdLCS implements LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n]
// [WITHMATCHLEN] as Redis 7.0's lcsCommand: the dynamic-programming table,
// then one walk back from its corner that builds the subsequence and the
// matching ranges, last first.
func cmdLCS(h *Handler, cl *client, args [][]byte) {
	a, okA := lcsValue(cl, args[1])
	b, okB := lcsValue(cl, args[2])
	if !okA || !okB {
		cl.writeError("ERR The specified keys must contain string values")
		return
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(args); j++ {
		switch opt := args[j]; {
		case setFlag(opt, []string{"IDX", "LEN", "WITHMATCHLEN"}, &getIdx, &getLen, &withMatchLen):
		case ascii.EqualFold(opt, "MINMATCHLEN") && j+1 < len(args):
			n, ok := ascii.ParseInt(args[j+1])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	if getIdx && getLen {
		cl.writeError("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	cells := int64(alen+1) * int64(blen+1)
	if cells*4 > h.opts.Limits.MaxBulkLen {
		cl.writeError("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	lcs := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				lcs[i*w+j] = lcs[(i-1)*w+j-1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i-1)*w+j], lcs[i*w+j-1])
			}
		}
	}
	total := lcs[alen*w+blen]
	if getLen {
		cl.writeInt(int64(total))
		return
	}
	result := make([]byte, total)
	type match struct{ aStart, aEnd, bStart, bEnd int }
	var matches []match
	idx := int(total)
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx, i, j = idx-1, i-1, j-1
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if n := aEnd - aStart + 1; minMatchLen == 0 || int64(n) >= minMatchLen {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	if !getIdx {
		cl.writeBulk(result)
		return
	}
	cl.writeMap(2)
	cl.writeBulkStr("matches")
	cl.writeArray(len(matches))
	for _, m := range matches {
		if withMatchLen {
			cl.writeArray(3)
		} else {
			cl.writeArray(2)
		}
		cl.writeArray(2)
		cl.writeInt(int64(m.aStart))
		cl.writeInt(int64(m.aEnd))
		cl.writeArray(2)
		cl.writeInt(int64(m.bStart))
		cl.writeInt(int64(m.bEnd))
		if withMatchLen {
			cl.writeInt(int64(m.aEnd - m.aStart + 1))
		}
	}
	cl.writeBulkStr("len")
	cl.writeInt(int64(total))
}

// lcsValue reads a string value for LCS: "" when missing, ok=false when
// the key holds another type.
func lcsValue(cl *client, key []byte) ([]byte, bool) {
	v, _, err := cl.db().Get(nil, key)
	if err == store.ErrWrongType {
		return nil, false
	}
	return v, true
}

// cmdCommandGetKeys implements COMMAND GETKEYS and GETKEYSANDFLAGS: the
// keys of a full command by its table entry's key specs, in Redis 7.0's
// order of checks: an unknown command, one without key arguments at all,
// the arity; then a spec these arguments do not fit (a count past the end,
// a count of 0) voids every key found, as Redis then falls back to its
// getkeys procedure, which declines the same arguments (MIGRATE's is
// keysOf). No keys is an empty array for a command that may have none
// (EVAL x 0) and an error for one that must.
func cmdCommandGetKeys(_ *Handler, cl *client, args [][]byte) {
	withFlags := ascii.EqualFold(args[1], "getkeysandflags")
	cmdArgs := args[2:]
	cmd := commands[strings.ToLower(string(cmdArgs[0]))]
	if cmd != nil && cmd.subs != nil && len(cmdArgs) >= 2 {
		if sub := lookupName(cmd.subs, cmdArgs[1]); sub != nil {
			cmd = sub
		}
	}
	switch {
	case cmd == nil:
		cl.writeError("ERR Invalid command specified")
		return
	case cmd.keysOf == nil && len(cmd.keySpecs) == 0:
		cl.writeError("ERR The command has no key arguments")
		return
	case !arityOK(cmd.arity, len(cmdArgs)):
		cl.writeError("ERR Invalid number of arguments specified for command")
		return
	}
	type keyAt struct {
		pos   int
		flags string
	}
	var keys []keyAt
	specs := cmd.keySpecs
	if cmd.keysOf != nil { // Redis's getkeys procedure, for an incomplete spec
		for i, p := range cmd.keysOf(nil, cmdArgs) {
			keys = append(keys, keyAt{p, cmd.foundKeyFlags(i)})
		}
		specs = nil
	}
	for _, ks := range specs {
		flags := ks.flags
		if hasWord(flags, "variable_flags") {
			flags = variableKeyFlags(cmd, cmdArgs)
		}
		at, ok := ks.positions(cmdArgs)
		if !ok {
			keys = nil
			break
		}
		for _, p := range at {
			keys = append(keys, keyAt{p, flags})
		}
	}
	if len(keys) == 0 {
		if hasWord(cmd.flags, "no_mandatory_keys") {
			cl.writeArray(0)
			return
		}
		cl.writeError("ERR Invalid arguments specified for command")
		return
	}
	cl.writeArray(len(keys))
	for _, k := range keys {
		if !withFlags {
			cl.writeBulk(cmdArgs[k.pos])
			continue
		}
		cl.writeArray(2)
		cl.writeBulk(cmdArgs[k.pos])
		flags := strings.Fields(k.flags)
		cl.writeSet(len(flags))
		for _, f := range flags {
			cl.writeStatus(f)
		}
	}
}

// variableKeyFlags is what Redis's getkeys procedure reports for a key
// spec with variable_flags, by the arguments: SET's key is only read with
// GET.
func variableKeyFlags(cmd *command, args [][]byte) string {
	if cmd.name == "set" {
		for _, a := range args[3:] {
			if ascii.EqualFold(a, "get") {
				return "RW access update"
			}
		}
		return "OW update"
	}
	return strings.ReplaceAll(cmd.keySpecs[0].flags, " variable_flags", "")
}

// positions returns the argument positions ks finds in args, and false
// when the arguments do not fit the spec as Redis 7.0 judges it: a count
// that is not an integer ≥ 1 or runs past the end, a range whose first or
// last key is past the end. A keyword not found yields no keys and true.
func (ks keySpec) positions(args [][]byte) ([]int, bool) {
	if ks.keyword != "" {
		return ks.keywordPositions(nil, args), true
	}
	first, last, step := ks.index, ks.index+ks.lastKey, max(ks.keyStep, 1)
	switch {
	case ks.keynum:
		at := ks.index + ks.keynumIdx
		if at >= len(args) {
			return nil, false
		}
		n, ok := ascii.ParseInt(args[at])
		if !ok || n < 0 || n > int64(len(args)) {
			return nil, false
		}
		first = ks.index + ks.firstKeyIdx
		last = first + int(n) - 1
	case ks.lastKey < 0:
		last = len(args) + ks.lastKey
	}
	if last >= len(args) || last < first || first >= len(args) {
		return nil, false
	}
	var out []int
	for i := first; i <= last; i += step {
		out = append(out, i)
	}
	return out, true
}

// cmdClientNoEvict implements CLIENT NO-EVICT ON|OFF: maxmemory-clients
// eviction passes over the connection.
func cmdClientNoEvict(_ *Handler, cl *client, args [][]byte) {
	switch {
	case ascii.EqualFold(args[2], "on"):
		cl.sessionOf().noEvict.Store(true)
	case ascii.EqualFold(args[2], "off"):
		cl.sessionOf().noEvict.Store(false)
	default:
		cl.writeError(errSyntax)
		return
	}
	cl.writeOK()
}

// noEvict reports whether CLIENT NO-EVICT ON exempts cl from eviction.
func (cl *client) noEvict() bool {
	s := cl.sess.Load()
	return s != nil && s.noEvict.Load()
}

// CLIENT REPLY modes (session.reply).
const (
	replyOn   = 0
	replyOff  = 1
	replySkip = 2 // no reply to the next command
)

// cmdClientReply implements CLIENT REPLY ON|OFF|SKIP. OFF and SKIP are
// not answered themselves; ON answers OK. dispatch drops the replies
// (suppressReply).
func cmdClientReply(_ *Handler, cl *client, args [][]byte) {
	switch {
	case ascii.EqualFold(args[2], "on"):
		cl.sessionOf().reply = replyOn
		cl.writeOK()
	case ascii.EqualFold(args[2], "off"):
		cl.sessionOf().reply = replyOff
	case ascii.EqualFold(args[2], "skip"):
		if s := cl.sessionOf(); s.reply != replyOff {
			s.reply = replySkip
		}
	default:
		cl.writeError(errSyntax)
	}
}

// suppressReply drops the reply of the command that ran from replyStart
// when CLIENT REPLY says so; dispatch calls it for a client whose session
// has replies off or skipped.
func (cl *client) suppressReply(s *session, cmd *command, replyStart int) {
	if replyStart <= len(cl.out) {
		cl.out = cl.out[:replyStart]
	}
	if s.reply == replySkip && cmd.name != "client|reply" { // SKIP's own: the skip is the next
		s.reply = replyOn
	}
}

// cmdClientUnblock implements CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client
// parked by a blocking command answers now, as if it timed out, or with
// Redis's UNBLOCKED error.
func cmdClientUnblock(h *Handler, cl *client, args [][]byte) {
	id, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	withError := false
	if len(args) == 4 {
		switch {
		case ascii.EqualFold(args[3], "timeout"):
		case ascii.EqualFold(args[3], "error"):
			withError = true
		default:
			cl.writeError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(args) > 4 {
		cl.writeError(sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) + "'. Try CLIENT HELP."))
		return
	}
	cl.writeInt(boolInt(h.unblock(id, withError)))
}

// unblock answers the parked client id at once: its timeout reply, or the
// UNBLOCKED error. It reports whether id was parked.
func (h *Handler) unblock(id int64, withError bool) bool {
	b := &h.blocking
	b.mu.Lock()
	var w *waiter
	for _, q := range b.queues {
		for _, qw := range q.waiters {
			if qw.cl.id == id && qw.state == waitParked {
				w = qw
			}
		}
	}
	if w == nil {
		b.mu.Unlock()
		return false
	}
	b.unregister(w)
	b.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	reply := w.req.timeoutReply
	if withError {
		reply = []byte("-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
	}
	_ = w.cl.conn.Run(func() { h.finishWait(w, reply, 0) })
	return true
}

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] as
// Redis 7.0 parses it. The server stops as on SIGTERM (the edge answers
// what it received, the AOF is synced); the caller gets no reply, as from
// Redis. SAVE is refused: Shoal writes no RDB snapshot yet.
func cmdShutdown(h *Handler, cl *client, args [][]byte) {
	var save, noSave, abort, other bool
	for _, a := range args[1:] {
		if !setFlag(a, []string{"nosave", "save", "now", "force", "abort"}, &noSave, &save, &other, &other, &abort) {
			cl.writeError(errSyntax)
			return
		}
	}
	if (abort && (save || noSave || other)) || (save && noSave) {
		cl.writeError(errSyntax)
		return
	}
	if abort {
		cl.writeError("ERR No shutdown in progress.")
		return
	}
	if h.shutdownBusy(cl, noSave) {
		return // a busy script: only SHUTDOWN NOSAVE stops it (script_busy.go)
	}
	h.opts.Logger.Warn("user requested shutdown", "id", cl.id, "addr", cl.addr)
	h.shutdownOnce.Do(func() {
		switch {
		case save:
			h.shutdownSave = ShutdownSave
		case noSave:
			h.shutdownSave = ShutdownNoSave
		}
		close(h.shutdown)
	})
}

// How SHUTDOWN asked about the final snapshot.
const (
	ShutdownSaveIfPolicy = iota // plain SHUTDOWN: save if a save policy is set, as SIGTERM
	ShutdownSave                // SHUTDOWN SAVE: save even without a policy
	ShutdownNoSave              // SHUTDOWN NOSAVE: do not save
)

// ShutdownRequested is closed when a client sent SHUTDOWN: the program
// running the server stops it as on SIGTERM, then saves as
// ShutdownSaveMode says.
func (h *Handler) ShutdownRequested() <-chan struct{} { return h.shutdown }

// ShutdownSaveMode is how the SHUTDOWN that closed ShutdownRequested
// asked about the final snapshot (ShutdownSaveIfPolicy and the others).
func (h *Handler) ShutdownSaveMode() int {
	<-h.shutdown // written before the close
	return h.shutdownSave
}

// cmdMemoryUsage implements MEMORY USAGE key [SAMPLES n]: the bytes the
// store accounts for the key (entry, key and value, a collection's
// memory), not an allocator's figure as Redis's, so values differ.
func cmdMemoryUsage(_ *Handler, cl *client, args [][]byte) {
	for i := 3; i < len(args); i++ {
		if !ascii.EqualFold(args[i], "samples") || i+1 >= len(args) {
			cl.writeError(errSyntax)
			return
		}
		if _, ok := ascii.ParseInt(args[i+1]); !ok {
			cl.writeError(errNotInteger)
			return
		}
		i++
	}
	n, ok := cl.db().MemoryUsage(args[2])
	if !ok {
		cl.writeNull()
		return
	}
	cl.writeInt(n)
}

func cmdMemoryPurge(_ *Handler, cl *client, _ [][]byte) {
	debug.FreeOSMemory()
	cl.writeOK()
}

func cmdMemoryDoctor(h *Handler, cl *client, _ [][]byte) {
	used := h.usedMemory()
	rss := residentSetSize()
	msg := fmt.Sprintf("Shoal's keyspace uses %d bytes (maxmemory %d); the process's RSS is %d bytes. "+
		"Values and collections live off the Go heap or in pointer-free chunks, so RSS above the keyspace is the Go runtime, "+
		"the loops' buffers and clients' output: see INFO memory and CLIENT LIST omem.", used, h.shared.MaxMemory(), rss)
	cl.writeVerbatim([]byte(msg))
}

func cmdMemoryMallocStats(_ *Handler, cl *client, _ [][]byte) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	cl.writeVerbatim(fmt.Appendf(nil, "Go runtime: heap_alloc=%d heap_inuse=%d heap_idle=%d heap_released=%d heap_objects=%d sys=%d num_gc=%d\n",
		m.HeapAlloc, m.HeapInuse, m.HeapIdle, m.HeapReleased, m.HeapObjects, m.Sys, m.NumGC))
}

// cmdMemoryStats implements MEMORY STATS with the fields Shoal can fill
// from its own accounts, under Redis's names.
func cmdMemoryStats(h *Handler, cl *client, _ [][]byte) {
	st := h.KeyspaceStats()
	clients, _ := h.outputMemory()
	total := st.UsedMemory + clients
	peak := h.notePeak(total)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fields := []struct {
		name string
		v    int64
	}{
		{"peak.allocated", peak},
		{"total.allocated", total},
		{"clients.normal", clients},
		{"keys.count", st.Keys},
		{"dataset.bytes", st.UsedMemory},
		{"allocator.allocated", int64(m.HeapAlloc)},
		{"allocator.active", int64(m.HeapInuse)},
		{"allocator.resident", residentSetSize()},
	}
	var dbs []int
	for _, i := range h.madeIndexes() {
		if s := h.existingDB(i); s != nil && s.DBSize() > 0 {
			dbs = append(dbs, i)
		}
	}
	cl.writeMap(len(fields) + len(dbs))
	for _, f := range fields {
		cl.writeBulkStr(f.name)
		cl.writeInt(f.v)
	}
	for _, i := range dbs {
		dst := h.existingDB(i).Stats()
		cl.writeBulkStr(fmt.Sprintf("db.%d", i))
		cl.writeMap(2)
		cl.writeBulkStr("keys")
		cl.writeInt(dst.Keys)
		cl.writeBulkStr("dataset.bytes")
		cl.writeInt(dst.UsedMemory)
	}
}

func cmdMemoryHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "MEMORY", []string{
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	})
}

// LATENCY: Redis's latency monitor records events (fork, expire-cycle,
// command...) over latency-monitor-threshold, which is 0 (off) by
// default; Shoal has no such events, so LATEST and HISTORY are empty and
// RESET resets nothing, as from a Redis with the monitor off. HISTOGRAM
// reports the per-command latency INFO latencystats is made from: the
// timed sample (1 in 16 calls) in power-of-two buckets, scaled to all
// calls. Its calls are the histogram's, as Redis's: calls made while
// latency-tracking is off are not in it, and a command never tracked is
// not listed.

func cmdLatencyEmpty(_ *Handler, cl *client, _ [][]byte) { cl.writeArray(0) }

func cmdLatencyReset(_ *Handler, cl *client, _ [][]byte) { cl.writeInt(0) }

func cmdLatencyGraph(_ *Handler, cl *client, args [][]byte) {
	cl.writeError(sanitizeError("ERR No samples available for event '" + cString(args[2], 128) + "'"))
}

func cmdLatencyDoctor(_ *Handler, cl *client, _ [][]byte) {
	cl.writeVerbatim([]byte("Shoal has no latency monitor events (Redis's latency-monitor-threshold is off by default and not served here). " +
		"Per-command latency is in INFO latencystats and LATENCY HISTOGRAM, from a 1-in-16 sample of calls."))
}

func cmdLatencyHistogram(h *Handler, cl *client, args [][]byte) {
	totals := h.cmdStats.totals()
	var ids []int
	if len(args) == 2 {
		for id := range totals {
			if totals[id].histogramCount() > 0 {
				ids = append(ids, id)
			}
		}
	} else {
		for _, name := range args[2:] {
			for id, c := range commandsByID {
				if ascii.EqualFold(name, c.name) && totals[id].histogramCount() > 0 && !containsInt(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	cl.writeMap(len(ids))
	for _, id := range ids {
		t := &totals[id]
		cl.writeBulkStr(commandsByID[id].name)
		cl.writeMap(2)
		cl.writeBulkStr("calls")
		cl.writeInt(int64(t.scaled(t.histogramCount())))
		cl.writeBulkStr("histogram_usec")
		var n int
		for _, c := range t.buckets {
			if c > 0 {
				n++
			}
		}
		cl.writeMap(n)
		var cum uint64
		for i, c := range t.buckets {
			if c == 0 {
				continue
			}
			cum += c
			bound := bucketBound(min(i, latencyBuckets-1)) / 1024 // µs, as powers of two
			cl.writeInt(bound)
			cl.writeInt(int64(t.scaled(cum)))
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func cmdLatencyHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "LATENCY", []string{
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	})
}
