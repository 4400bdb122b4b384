package kv

import (
	"crypto/sha1"
	"encoding/hex"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/internal/ascii"
)

// Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, as Redis
// 7.0 has them, on gopher-lua (Lua 5.1, the version Redis embeds).
//
// Atomicity. A script runs with the world stopped, exactly as EXEC does
// (multi.go: stopWorld): no other loop is inside a batch until it ends.
// Inside an EXEC the world is already stopped.
//
// The commands a script calls run through dispatch on a script client
// (scriptEngine.client, set up like the AOF replay client) bound to the
// caller's database, so WATCH, blocked clients, keyspace statistics,
// tracking and the AOF see them as any client's commands. The script
// client has a session marked execing: a blocking command answers as if it
// timed out, as in EXEC, and callLogged puts a MULTI before its first
// record; the script adds the EXEC (script_run.go). So the AOF logs what a
// script did, never EVAL itself (which has no write flag), and a replay
// applies all of it or none. Keys it made ready for blocked clients are
// served after it ends.
//
// Functions (FUNCTION, FCALL: function.go) share this engine: its mutex,
// its script client and limits, and a Lua state of their own.
//
// Scripts are compiled once and cached by the SHA1 of their body; EVAL
// caches too. They share one Lua state per Handler, sandboxed as Redis's
// (script_lua.go): no os, io, loadfile, dofile or require; every global
// and library table is read-only; math.random is Redis's rand48.
//
// A script that runs past busy-reply-threshold lets the other loops
// answer -BUSY, and SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE stop it,
// as in Redis (script_busy.go).
//
// Differences from Redis: a script that grows the live heap by more than
// scriptHeapLimit is stopped with an error, keeping the writes it made
// (and logging them). Kills and that cap are checked between Lua
// instructions, so one long Go call (a slow command, a pattern match)
// runs to its end first. Texts
// of Lua's own compile and runtime errors are gopher-lua's; gopher-lua
// also turns numbers into strings in Go's shortest form when it
// concatenates them (tostring uses Lua's "%.14g") and does not take
// numeric strings as numeric for-loop bounds. Deep recursion is refused
// with a message of its own. MONITOR does not show the commands a script
// runs, CLIENT TRACKING does not track the keys it reads for its caller,
// and redis.set_repl is checked but everything is logged. The libraries
// Redis adds are loaded: bit, cjson, cmsgpack and struct (script_bit.go,
// script_cjson.go, script_cmsgpack.go, script_struct.go); cjson and
// cmsgpack write a table's keys in gopher-lua's iteration order, which is
// not Lua 5.1's.

var _ = registerFamily(family{commands: []*command{
	{
		name: "eval", arity: -3, fn: cmdEval, flags: scriptFlagsRW, acl: "@slow @scripting", keySpecs: scriptKeysRW,
		doc: commandDoc{"Executes a server-side Lua script.", "2.6.0", "scripting", "Depends on the script that is executed."},
	},
	{
		name: "evalsha", arity: -3, fn: cmdEvalSHA, flags: scriptFlagsRW, acl: "@slow @scripting", keySpecs: withoutNotes(scriptKeysRW),
		doc: commandDoc{"Executes a server-side Lua script by SHA1 digest.", "2.6.0", "scripting", "Depends on the script that is executed."},
	},
	{
		name: "eval_ro", arity: -3, fn: cmdEvalRO, flags: scriptFlagsRO, acl: "@slow @scripting", keySpecs: scriptKeysRO,
		doc: commandDoc{"Executes a read-only server-side Lua script.", "7.0.0", "scripting", "Depends on the script that is executed."},
	},
	{
		name: "evalsha_ro", arity: -3, fn: cmdEvalSHARO, flags: scriptFlagsRO, acl: "@slow @scripting", keySpecs: withoutNotes(scriptKeysRO),
		doc: commandDoc{"Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0", "scripting", "Depends on the script that is executed."},
	},
	// SCRIPT's subcommands in the order redis-server 7.0 lists them.
	{
		name: "script", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for Lua scripts management commands.", "2.6.0", "scripting", "Depends on subcommand."},
	},
	{
		name: "script|help", arity: 2, fn: cmdScriptHelp,
		flags: "loading stale", acl: "@slow @scripting",
		doc: commandDoc{"Returns helpful text about the different subcommands.", "5.0.0", "scripting", "O(1)"},
	},
	{
		name: "script|exists", arity: -3, fn: cmdScriptExists,
		flags: "noscript", acl: "@slow @scripting", tips: "request_policy:all_shards response_policy:agg_logical_and",
		doc: commandDoc{"Determines whether server-side Lua scripts exist in the script cache.", "2.6.0", "scripting",
			"O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation)."},
	},
	{
		name: "script|flush", arity: -2, fn: cmdScriptFlush,
		flags: "noscript", acl: "@slow @scripting", tips: "request_policy:all_nodes response_policy:all_succeeded",
		doc: commandDoc{"Removes all server-side Lua scripts from the script cache.", "2.6.0", "scripting", "O(N) with N being the number of scripts in cache"},
	},
	{
		name: "script|load", arity: 3, fn: cmdScriptLoad,
		flags: "noscript stale", acl: "@slow @scripting", tips: "request_policy:all_nodes response_policy:all_succeeded",
		doc: commandDoc{"Loads a server-side Lua script to the script cache.", "2.6.0", "scripting", "O(N) with N being the length in bytes of the script body."},
	},
	{
		name: "script|debug", arity: 3, fn: cmdScriptDebug,
		flags: "noscript", acl: "@slow @scripting",
		doc: commandDoc{"Sets the debug mode of server-side Lua scripts.", "3.2.0", "scripting", "O(1)"},
	},
	{
		name: "script|kill", arity: 2, fn: cmdScriptKill,
		flags: "noscript allow_busy", acl: "@slow @scripting", tips: "request_policy:all_shards response_policy:one_succeeded",
		doc: commandDoc{"Terminates a server-side Lua script during execution.", "2.6.0", "scripting", "O(1)"},
	},
}})

// The flags and key specs EVAL, EVALSHA, FCALL and their read-only forms
// share, as redis-server 7.0 declares them (EVALSHA's key spec has no
// notes).
const (
	scriptFlagsRW = "noscript stale skip_monitor no_mandatory_keys movablekeys"
	scriptFlagsRO = "readonly " + scriptFlagsRW
)

var (
	scriptKeysRW = []keySpec{{notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
		flags: "RW access update", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}}
	scriptKeysRO = []keySpec{{notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
		flags: "RO access", index: 2, keynum: true, firstKeyIdx: 1, keyStep: 1}}
)

// withoutNotes returns a copy of specs without their notes.
func withoutNotes(specs []keySpec) []keySpec {
	out := slices.Clone(specs)
	for i := range out {
		out[i].notes = ""
	}
	return out
}

const (
	errNoScript = "NOSCRIPT No matching script. Please use EVAL."
	errNotBusy  = "NOTBUSY No scripts in execution right now."
)

// luaScript is one cached script: compiled once, run by any number of
// EVALs (a FunctionProto holds no state of a run).
type luaScript struct {
	sha   string // lower-case hex SHA1 of the body
	proto *lua.FunctionProto
	flags scriptFlags
}

// scriptFlags are what a script's shebang line ("#!lua flags=...") says.
// A script without one runs in Redis's compatibility mode: it may write
// unless it runs by EVAL_RO.
type scriptFlags struct {
	shebang  bool // not compatibility mode
	noWrites bool
	allowOOM bool
}

// scriptEngine is a Handler's scripting: the cache and the Lua state.
// mu serializes everything: scripts run one at a time, each from its
// caller's loop goroutine (with the world stopped, so other loops wait
// anyway). Between runs it holds no reference to the Handler, so it is
// collected with the Handler that holds it.
type scriptEngine struct {
	mu      sync.Mutex
	scripts map[string]*luaScript // by SHA1
	vm      *luaVM                // nil until the first run and after SCRIPT FLUSH
	rand    rand48                // math.random's state: one sequence per server, as in Redis
	running bool                  // a script is running: run is its state
	run     scriptRun             // reused from run to run
	client  *client               // the script client, reused (script_run.go)
	watch   scriptWatch           // the time and heap limits of a run
	loop    loopState             // the script client's counters (the caller's) and ready keys

	functions functionSet   // the libraries (function.go)
	funcVM    *luaVM        // the Lua state functions run in; nil until a library loads
	loading   *libraryLoad  // the library whose code is running, during FUNCTION LOAD
	counts    atomic.Uint64 // libraries<<32 | functions, for FUNCTION STATS (functionCounts)
}

// scripts returns h's script engine, making it on first use. The engine
// lives in a Handler field, so it goes with the Handler; a cleanup drops
// its script client's loop from scriptLoops then.
func (h *Handler) scripts() *scriptEngine {
	if e := h.scripting.Load(); e != nil {
		return e
	}
	fresh := &scriptEngine{scripts: make(map[string]*luaScript), rand: newRand48(), functions: newFunctionSet()}
	if !h.scripting.CompareAndSwap(nil, fresh) {
		return h.scripting.Load()
	}
	scriptLoops.Store(&fresh.loop, struct{}{})
	runtime.AddCleanup(h, func(loop *loopState) { scriptLoops.Delete(loop) }, &fresh.loop)
	return fresh
}

// lookup returns the cached script whose SHA1 is sha in any case, or nil.
func (e *scriptEngine) lookup(sha []byte) *luaScript {
	var lower [40]byte
	if len(sha) != len(lower) {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.scripts[string(sha)]; s != nil {
		return s // clients send the lower case SCRIPT LOAD answered
	}
	for i, c := range sha {
		lower[i] = ascii.Lower(c)
	}
	return e.scripts[string(lower[:])]
}

// load returns the script of body, compiling and caching it unless it is
// cached already; on failure it returns Redis's error text.
func (e *scriptEngine) load(body []byte) (*luaScript, string) {
	sum := sha1.Sum(body)
	sha := hex.EncodeToString(sum[:])
	e.mu.Lock()
	s := e.scripts[sha]
	e.mu.Unlock()
	if s != nil {
		return s, ""
	}
	s, errText := compileScript(sha, body)
	if errText != "" {
		return nil, errText
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cached := e.scripts[sha]; cached != nil {
		return cached, ""
	}
	e.scripts[sha] = s
	return s, ""
}

// flush forgets every script and the Lua state, as SCRIPT FLUSH does.
func (e *scriptEngine) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scripts = make(map[string]*luaScript)
	e.vm = nil
}

func cmdEval(h *Handler, cl *client, args [][]byte)      { h.eval(cl, args, false, false) }
func cmdEvalSHA(h *Handler, cl *client, args [][]byte)   { h.eval(cl, args, true, false) }
func cmdEvalRO(h *Handler, cl *client, args [][]byte)    { h.eval(cl, args, false, true) }
func cmdEvalSHARO(h *Handler, cl *client, args [][]byte) { h.eval(cl, args, true, true) }

// eval implements the four EVAL commands: script numkeys key... arg...,
// the script by its body or its SHA1, read-only for the _RO forms. The
// checks come in Redis's order.
func (h *Handler) eval(cl *client, args [][]byte, bySHA, readOnly bool) {
	h.feedScriptCall(cl, cl.lastCmd.Load(), args)
	if bySHA && len(args[1]) != 40 {
		cl.writeError(errNoScript)
		return
	}
	numKeys, ok := ascii.ParseInt(args[2])
	switch {
	case !ok:
		cl.writeError(errNotInteger)
		return
	case numKeys > int64(len(args)-3):
		cl.writeError("ERR Number of keys can't be greater than number of args")
		return
	case numKeys < 0:
		cl.writeError("ERR Number of keys can't be negative")
		return
	}
	e := h.scripts()
	var s *luaScript
	if bySHA {
		if s = e.lookup(args[1]); s == nil {
			cl.writeError(errNoScript)
			return
		}
	} else {
		var errText string
		if s, errText = e.load(args[1]); errText != "" {
			cl.writeError(errText)
			return
		}
	}
	if errText := h.refuseScript(s, readOnly); errText != "" {
		cl.writeError(errText)
		return
	}
	// Deferred, as in cmdExec: a panic in a command the script runs (the
	// eventloop recovers it) must not leave every loop stopped.
	defer h.resumeWorld(cl, h.stopWorldForScript(cl))
	keys := args[3 : 3+numKeys]
	e.execute(h, cl, s, args, keys, args[3+numKeys:], readOnly || s.flags.noWrites)
}

// refuseScript returns the error Redis 7.0's scriptPrepareForRun answers
// before a script with a shebang runs, "" to run it.
func (h *Handler) refuseScript(s *luaScript, readOnly bool) string {
	if !s.flags.shebang {
		return ""
	}
	if !s.flags.noWrites {
		if h.aof != nil {
			if msg := h.aof.WriteError(); msg != "" {
				return "MISCONF " + msg
			}
		}
		if readOnly {
			return "ERR Can not execute a script with write flag using *_ro command."
		}
	}
	if !s.flags.allowOOM && !s.flags.noWrites && h.outOfMemory() {
		return "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	}
	return ""
}

func cmdScriptLoad(h *Handler, cl *client, args [][]byte) {
	s, errText := h.scripts().load(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	cl.writeBulkStr(s.sha)
}

func cmdScriptExists(h *Handler, cl *client, args [][]byte) {
	e := h.scripts()
	cl.writeArray(len(args) - 2)
	for _, sha := range args[2:] {
		cl.writeInt(boolInt(e.lookup(sha) != nil))
	}
}

// cmdScriptFlush: SCRIPT FLUSH [ASYNC|SYNC]. Both modes drop the cache at
// once; the memory goes to the garbage collector either way.
func cmdScriptFlush(h *Handler, cl *client, args [][]byte) {
	if len(args) > 3 || (len(args) == 3 && !ascii.EqualFold(args[2], "async") && !ascii.EqualFold(args[2], "sync")) {
		cl.writeError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	h.scripts().flush()
	cl.writeOK()
}

// cmdScriptKill stops a busy EVAL that has not written (script_busy.go).
func cmdScriptKill(h *Handler, cl *client, _ [][]byte) { h.killScript(cl, true) }

// cmdScriptDebug: Shoal has no Lua debugger; SCRIPT DEBUG NO, which turns
// it off, is accepted.
func cmdScriptDebug(_ *Handler, cl *client, args [][]byte) {
	if len(cl.out) > 0 { // replies not yet sent: Redis's clientHasPendingReplies
		cl.writeError("ERR SCRIPT DEBUG must be called outside a pipeline")
		return
	}
	if s := cl.sess.Load(); s != nil && s.execing {
		cl.writeError("ERR SCRIPT DEBUG must be called outside MULTI")
		return
	}
	switch {
	case ascii.EqualFold(args[2], "no"):
		cl.writeOK()
	case ascii.EqualFold(args[2], "yes"), ascii.EqualFold(args[2], "sync"):
		cl.writeError("ERR Shoal has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported")
	default:
		cl.writeError("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func cmdScriptHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "SCRIPT", []string{
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	})
}
