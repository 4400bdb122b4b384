package kv

import (
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Functions, as Redis 7.0 has them: libraries of Lua functions loaded by
// FUNCTION LOAD ("#!lua name=<lib>" and code that calls
// redis.register_function), called by FCALL and FCALL_RO, listed, deleted,
// flushed, dumped and restored (function_dump.go).
//
// Functions run in a Lua state of their own (functionSet.vm), sandboxed as
// scripts' (script_lua.go), as Redis keeps one for the function engine
// apart from EVAL's: a library's code runs once at load, with only the
// load API visible (function_load.go), and the functions it registers are
// closures kept in that state, called with the keys and arguments as
// their two parameters (no KEYS or ARGV). An FCALL runs as an EVAL does
// (script_run.go): the world stopped, the commands on the script client,
// its writes logged as their effects in MULTI/EXEC, busy past the same
// threshold (FUNCTION KILL stops it) and under the same heap cap.
//
// The libraries are part of the data set: FUNCTION LOAD, DELETE, FLUSH
// and RESTORE have the write flag and are logged as they are, under every
// stripe so that two of them on different loops are logged in the order
// they were applied; an AOF rewrite starts with a FUNCTION LOAD of each
// library as it was at the rewrite's instant (rewrite.go).
//
// Library names are case-sensitive and function names are not, as in
// Redis. FUNCTION LIST lists libraries and functions by name (Redis: in
// its dictionaries' order, which changes from run to run).

var _ = registerFamily(family{commands: []*command{
	{
		name: "fcall", arity: -3, fn: cmdFCall, flags: scriptFlagsRW, acl: "@slow @scripting", keySpecs: scriptKeysRW,
		doc: commandDoc{"Invokes a function.", "7.0.0", "scripting", "Depends on the function that is executed."},
	},
	{
		name: "fcall_ro", arity: -3, fn: cmdFCallRO, flags: scriptFlagsRO, acl: "@slow @scripting", keySpecs: scriptKeysRO,
		doc: commandDoc{"Invokes a read-only function.", "7.0.0", "scripting", "Depends on the function that is executed."},
	},
	{
		name: "function", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for function commands.", "7.0.0", "scripting", "Depends on subcommand."},
	},
	{
		name: "function|kill", arity: 2, fn: cmdFunctionKill,
		flags: "noscript allow_busy", acl: "@slow @scripting", tips: "request_policy:all_shards response_policy:one_succeeded",
		doc: commandDoc{"Stops the function that is running.", "7.0.0", "scripting", "O(1)"},
	},
	{
		name: "function|flush", arity: -2, fn: cmdFunctionFlush, log: logEveryStripe,
		flags: "write noscript", acl: "@write @slow @scripting", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Deletes every library.", "7.0.0", "scripting", "O(N) where N is the number of functions deleted"},
	},
	{
		name: "function|dump", arity: 2, fn: cmdFunctionDump,
		flags: "noscript", acl: "@slow @scripting",
		doc: commandDoc{"Returns the libraries as a payload FUNCTION RESTORE takes.", "7.0.0", "scripting", "O(N) where N is the number of functions"},
	},
	{
		name: "function|load", arity: -3, fn: cmdFunctionLoad, log: logEveryStripe,
		flags: "write denyoom noscript", acl: "@write @slow @scripting", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Loads a library of functions.", "7.0.0", "scripting", "O(1) (considering compilation time is redundant)"},
	},
	{
		name: "function|delete", arity: 3, fn: cmdFunctionDelete, log: logEveryStripe,
		flags: "write noscript", acl: "@write @slow @scripting", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Deletes a library and its functions.", "7.0.0", "scripting", "O(1)"},
	},
	{
		name: "function|list", arity: -2, fn: cmdFunctionList,
		flags: "noscript", acl: "@slow @scripting", tips: "nondeterministic_output_order",
		doc: commandDoc{"Describes the libraries and their functions.", "7.0.0", "scripting", "O(N) where N is the number of functions"},
	},
	{
		name: "function|restore", arity: -3, fn: cmdFunctionRestore, log: logEveryStripe,
		flags: "write denyoom noscript", acl: "@write @slow @scripting", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Loads the libraries of a FUNCTION DUMP payload.", "7.0.0", "scripting", "O(N) where N is the number of functions on the payload"},
	},
	{
		name: "function|help", arity: 2, fn: cmdFunctionHelp,
		flags: "loading stale", acl: "@slow @scripting",
		doc: commandDoc{"Lists the FUNCTION subcommands.", "7.0.0", "scripting", "O(1)"},
	},
	{
		name: "function|stats", arity: 2, fn: cmdFunctionStats,
		flags: "noscript allow_busy", acl: "@slow @scripting", tips: "nondeterministic_output request_policy:all_shards response_policy:special",
		doc: commandDoc{"Describes the running function and the engines.", "7.0.0", "scripting", "O(1)"},
	},
}})

// funcFlag is one flag of redis.register_function's flags table.
type funcFlag uint8

const (
	funcNoWrites funcFlag = 1 << iota
	funcAllowOOM
	funcAllowStale
	funcNoCluster
	funcAllowCrossSlot
)

// funcFlagNames are the flags in the order FUNCTION LIST shows them.
var funcFlagNames = []struct {
	flag funcFlag
	name string
}{
	{funcNoWrites, "no-writes"}, {funcAllowOOM, "allow-oom"}, {funcAllowStale, "allow-stale"},
	{funcNoCluster, "no-cluster"}, {funcAllowCrossSlot, "allow-cross-slot-keys"},
}

// luaFunction is one registered function.
type luaFunction struct {
	name    string
	desc    string
	hasDesc bool
	flags   funcFlag
	fn      *lua.LFunction
	lib     *funcLibrary
	run     *luaScript // what a run of it needs: its name (in errors) and flags
}

// funcLibrary is one loaded library.
type funcLibrary struct {
	name  string
	code  string         // the whole FUNCTION LOAD payload, shebang line included
	funcs []*luaFunction // by name
}

// functionSet is the libraries and their functions, by name; function
// names are keyed lower case.
type functionSet struct {
	libs  map[string]*funcLibrary
	funcs map[string]*luaFunction
}

func newFunctionSet() functionSet {
	return functionSet{libs: make(map[string]*funcLibrary), funcs: make(map[string]*luaFunction)}
}

func funcKey(name string) string { return strings.ToLower(name) }

// link adds lib and its functions.
func (s *functionSet) link(lib *funcLibrary) {
	s.libs[lib.name] = lib
	for _, f := range lib.funcs {
		s.funcs[funcKey(f.name)] = f
	}
}

// unlink removes lib and its functions.
func (s *functionSet) unlink(lib *funcLibrary) {
	delete(s.libs, lib.name)
	for _, f := range lib.funcs {
		delete(s.funcs, funcKey(f.name))
	}
}

// collision returns the first of lib's functions that s has, "" if none.
func (s *functionSet) collision(lib *funcLibrary) string {
	for _, f := range lib.funcs {
		if s.funcs[funcKey(f.name)] != nil {
			return f.name
		}
	}
	return ""
}

// sortedLibs returns the libraries by name.
func (s *functionSet) sortedLibs() []*funcLibrary {
	libs := make([]*funcLibrary, 0, len(s.libs))
	for _, l := range s.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *funcLibrary) int { return strings.Compare(a.name, b.name) })
	return libs
}

// join adds src's libraries to s, as Redis's libraryJoin: a library s has
// already is an error unless replace, and a function of another library
// that s has is an error; on error s is as it was.
func (s *functionSet) join(src *functionSet, replace bool) string {
	var replaced []*funcLibrary
	restore := func() {
		for _, old := range replaced {
			s.link(old)
		}
	}
	for _, lib := range src.sortedLibs() {
		old := s.libs[lib.name]
		if old == nil {
			continue
		}
		if !replace {
			restore()
			return "ERR Library " + lib.name + " already exists"
		}
		s.unlink(old)
		replaced = append(replaced, old)
	}
	for _, lib := range src.sortedLibs() {
		if name := s.collision(lib); name != "" {
			restore()
			return "ERR Function " + name + " already exists"
		}
	}
	for _, lib := range src.sortedLibs() {
		s.link(lib)
	}
	return ""
}

// codes returns each library's code, by library name: what a rewrite or
// a dump writes.
func (s *functionSet) codes() []string {
	libs := s.sortedLibs()
	codes := make([]string, len(libs))
	for i, l := range libs {
		codes[i] = l.code
	}
	return codes
}

// functionCounts returns how many libraries and functions are loaded, as
// last published: FUNCTION STATS reads them without e.mu, which a running
// function holds.
func (e *scriptEngine) functionCounts() (libs, funcs int) {
	v := e.counts.Load()
	return int(v >> 32), int(uint32(v))
}

// publishCounts publishes the counts after the libraries changed. e.mu is
// held.
func (e *scriptEngine) publishCounts() {
	funcs := 0
	for _, lib := range e.functions.libs {
		funcs += len(lib.funcs)
	}
	e.counts.Store(uint64(len(e.functions.libs))<<32 | uint64(uint32(funcs)))
}

// libraryCodes returns the code of every library, for the AOF rewrite.
func (h *Handler) libraryCodes() []string {
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.functions.codes()
}

func cmdFCall(h *Handler, cl *client, args [][]byte)   { h.fcall(cl, args, false) }
func cmdFCallRO(h *Handler, cl *client, args [][]byte) { h.fcall(cl, args, true) }

// fcall implements FCALL and FCALL_RO: function numkeys key... arg...,
// checked in Redis's order.
func (h *Handler) fcall(cl *client, args [][]byte, readOnly bool) {
	h.feedScriptCall(cl, cl.lastCmd.Load(), args)
	e := h.scripts()
	e.mu.Lock()
	f := e.functions.funcs[funcKey(string(args[1]))]
	e.mu.Unlock()
	if f == nil {
		cl.writeError("ERR Function not found")
		return
	}
	numKeys, ok := ascii.ParseInt(args[2])
	switch {
	case !ok:
		cl.writeError("ERR Bad number of keys provided")
		return
	case numKeys > int64(len(args)-3):
		cl.writeError("ERR Number of keys can't be greater than number of args")
		return
	case numKeys < 0:
		cl.writeError("ERR Number of keys can't be negative")
		return
	}
	if errText := h.refuseScript(f.run, readOnly); errText != "" {
		cl.writeError(errText)
		return
	}
	defer h.resumeWorld(cl, h.stopWorldForScript(cl))
	e.callFunction(h, cl, f, args, args[3:3+numKeys], args[3+numKeys:], readOnly || f.flags&funcNoWrites != 0)
}

// callFunction runs f for cl and writes its reply; cmdArgs is the caller's
// command line. The caller has stopped the world (or runs alone).
func (e *scriptEngine) callFunction(h *Handler, cl *client, f *luaFunction, cmdArgs, keys, argv [][]byte, readOnly bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.repairFunctions(h)
	if e.functions.libs[f.lib.name] != f.lib {
		// Deleted or replaced while the world was being stopped.
		cl.writeError("ERR Function not found")
		return
	}
	vm := e.funcVM
	L := vm.L
	if broken := e.runLua(h, cl, vm, f.run, f.fn, []lua.LValue{luaStrings(L, keys), luaStrings(L, argv)}, readOnly,
		runBy{args: cmdArgs, function: true, name: f.name}); broken {
		e.reloadFunctions(h)
	}
}

func cmdFunctionLoad(h *Handler, cl *client, args [][]byte) {
	replace := false
	i := 2
	for ; i < len(args)-1; i++ {
		if !ascii.EqualFold(args[i], "replace") {
			cl.writeError("ERR Unknown option given: " + cString(args[i], len(args[i])))
			return
		}
		replace = true
	}
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.publishCounts()
	e.repairFunctions(h)
	lib, errText := e.loadLibrary(h, string(args[i]), &e.functions, replace, loadTimeout(cl))
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if old := e.functions.libs[lib.name]; old != nil {
		e.functions.unlink(old)
	}
	e.functions.link(lib)
	cl.writeBulkStr(lib.name)
}

func cmdFunctionDelete(h *Handler, cl *client, args [][]byte) {
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.publishCounts()
	lib := e.functions.libs[string(args[2])]
	if lib == nil {
		cl.writeError("ERR Library not found")
		return
	}
	e.functions.unlink(lib)
	cl.writeOK()
}

// cmdFunctionFlush: FUNCTION FLUSH [ASYNC|SYNC]. Both drop the libraries
// and the functions' Lua state at once; the memory goes to the garbage
// collector either way.
func cmdFunctionFlush(h *Handler, cl *client, args [][]byte) {
	if len(args) > 3 {
		cl.writeError(subcommandSyntaxError(args[1]))
		return
	}
	if len(args) == 3 && !ascii.EqualFold(args[2], "async") && !ascii.EqualFold(args[2], "sync") {
		cl.writeError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.publishCounts()
	e.functions = newFunctionSet()
	e.funcVM = nil
	cl.writeOK()
}

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError.
func subcommandSyntaxError(sub []byte) string {
	return sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(sub, 128) + "'. Try FUNCTION HELP.")
}

// cmdFunctionList: FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func cmdFunctionList(h *Handler, cl *client, args [][]byte) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(args); i++ {
		switch {
		case !withCode && ascii.EqualFold(args[i], "withcode"):
			withCode = true
		case !hasPattern && ascii.EqualFold(args[i], "libraryname"):
			if i >= len(args)-1 {
				cl.writeError("ERR library name argument was not given")
				return
			}
			i++
			pattern, hasPattern = ascii.AppendLower(nil, args[i]), true
		default:
			cl.writeError(sanitizeError("ERR Unknown argument " + cString(args[i], len(args[i]))))
			return
		}
	}
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	var libs []*funcLibrary
	for _, lib := range e.functions.sortedLibs() {
		if !hasPattern || store.Match(pattern, ascii.AppendLower(nil, []byte(lib.name))) {
			libs = append(libs, lib)
		}
	}
	cl.writeArray(len(libs))
	for _, lib := range libs {
		cl.writeMap(3 + int(boolInt(withCode)))
		cl.writeBulkStr("library_name")
		cl.writeBulkStr(lib.name)
		cl.writeBulkStr("engine")
		cl.writeBulkStr("LUA")
		cl.writeBulkStr("functions")
		cl.writeArray(len(lib.funcs))
		for _, f := range lib.funcs {
			cl.writeMap(3)
			cl.writeBulkStr("name")
			cl.writeBulkStr(f.name)
			cl.writeBulkStr("description")
			if f.hasDesc {
				cl.writeBulkStr(f.desc)
			} else {
				cl.writeNull()
			}
			cl.writeBulkStr("flags")
			n := 0
			for _, fl := range funcFlagNames {
				n += int(boolInt(f.flags&fl.flag != 0))
			}
			cl.writeSet(n)
			for _, fl := range funcFlagNames {
				if f.flags&fl.flag != 0 {
					cl.writeStatus(fl.name)
				}
			}
		}
		if withCode {
			cl.writeBulkStr("library_code")
			cl.writeBulkStr(lib.code)
		}
	}
}

// cmdFunctionStats describes the busy function, if one runs, and the
// libraries. It runs in busy mode, while the function holds e.mu, so the
// counts are the ones published when the libraries last changed.
func cmdFunctionStats(h *Handler, cl *client, _ [][]byte) {
	if h.evalRunning() {
		cl.writeError(errBusyEval) // as Redis: FUNCTION STATS does not describe an EVAL
		return
	}
	libs, funcs := h.scripts().functionCounts()
	cl.writeMap(2)
	cl.writeBulkStr("running_script")
	h.runningScript(cl)
	cl.writeBulkStr("engines")
	cl.writeMap(1)
	cl.writeBulkStr("LUA")
	cl.writeMap(2)
	cl.writeBulkStr("libraries_count")
	cl.writeInt(int64(libs))
	cl.writeBulkStr("functions_count")
	cl.writeInt(int64(funcs))
}

// cmdFunctionKill stops a busy function that has not written
// (script_busy.go).
func cmdFunctionKill(h *Handler, cl *client, _ [][]byte) { h.killScript(cl, false) }

func cmdFunctionHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "FUNCTION", []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}
