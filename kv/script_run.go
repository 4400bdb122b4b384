package kv

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/proto/resp"
)

// Running one script: the script client its commands run on, the watch
// that marks it busy and stops it (SCRIPT KILL, SHUTDOWN NOSAVE, the heap
// cap), its reply or error, and what the AOF and blocked clients get
// afterwards.

const (
	// scriptWatchEvery is how often a long script's heap is checked.
	scriptWatchEvery = 50 * time.Millisecond
	// luaMaxReplyDepth is how deep a script's reply may nest before Redis
	// answers "reached lua stack limit" in place of the deeper values.
	luaMaxReplyDepth = 7995
)

// scriptHeapLimit bounds how much a script may grow the live heap (a
// variable for the tests).
var scriptHeapLimit uint64 = 1 << 30

var (
	errScriptKilled   = errors.New("killed by SCRIPT KILL or FUNCTION KILL")
	errScriptShutdown = errors.New("stopped by SHUTDOWN NOSAVE")
	errScriptHeap     = errors.New("grew the heap too much")
)

// scriptLoops are the loop states of the script clients: blocked clients
// their commands made ready are served when the script ends, not during it
// (blocking.go's serveReady asks deferReady).
var scriptLoops sync.Map // *loopState → struct{}

// deferReady reports whether st is a script client's: its ready keys wait
// for the script's end.
func deferReady(st *loopState) bool {
	_, ok := scriptLoops.Load(st)
	return ok
}

// scriptRun is the running script: what the redis library's functions
// need. The engine keeps one and reuses its buffers.
type scriptRun struct {
	h        *Handler
	caller   *client
	sc       *client
	script   *luaScript
	readOnly bool     // EVAL_RO, EVALSHA_RO, or a no-writes shebang
	wrote    bool     // a write command ran (Redis's SCRIPT_WRITE_DIRTY)
	args     [][]byte // redis.call's command line, slices of argBuf
	argBuf   []byte
	ends     []int   // where each argument ends in argBuf
	oks      *okPool // the EVAL state's; nil in a function's run
}

// execute runs s for cl with keys and argv and writes its reply; cmdArgs
// is the caller's command line. The caller has stopped the world (or runs
// alone).
func (e *scriptEngine) execute(h *Handler, cl *client, s *luaScript, cmdArgs, keys, argv [][]byte, readOnly bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vm == nil {
		e.vm = newLuaVM(e)
	}
	vm := e.vm
	vm.keys.fill(vm, "KEYS", keys)
	vm.argv.fill(vm, "ARGV", argv)
	// A script's function holds no state of a run (a chunk has no
	// upvalues and scripts cannot reach setfenv), so each state makes it
	// once, from code bound to the state (script_bind.go); the state keeps
	// it, so a replaced state takes its functions along instead of each
	// cached script keeping an old state alive.
	fn := vm.fns[s]
	if fn == nil {
		fn = vm.L.NewFunctionFromProto(vm.bind(s.proto))
		fn.Env = vm.env
		vm.fns[s] = fn
	}
	broken := e.runLua(h, cl, vm, s, fn, nil, readOnly, runBy{args: cmdArgs})
	if broken {
		e.vm = nil // the state may be inconsistent after a panic that escaped PCall
	}
}

// runBy is who runs a script, as FUNCTION STATS and the BUSY error tell:
// the caller's command line and, for FCALL, the function's name.
type runBy struct {
	args     [][]byte
	function bool
	name     string
}

// runLua calls fn with args in vm for cl, the run being s's (its name in
// errors, its flags), published as by's while it runs (script_busy.go),
// and writes its reply or error. e.mu is held. broken says the state must
// be replaced.
func (e *scriptEngine) runLua(h *Handler, cl *client, vm *luaVM, s *luaScript, fn *lua.LFunction, args []lua.LValue, readOnly bool, by runBy) (broken bool) {
	sc := e.bindClient(h, cl)
	r := &e.run
	*r = scriptRun{h: h, caller: cl, sc: sc, script: s, readOnly: readOnly, args: r.args[:0], argBuf: r.argBuf[:0], ends: r.ends[:0]}
	if vm == e.vm {
		// Only EVAL's state: a function library can keep a reply from
		// call to call.
		r.oks = &vm.oks
		r.oks.used = 0
	}
	e.running = true
	defer e.unbind(cl, sc)

	L := vm.L
	// Only a client with a connection makes the others wait: the AOF
	// replay and tests run scripts alone.
	watched := cl.conn != nil
	// Time stands still for the script's commands, as in Redis 7.0 (a
	// key does not expire between two of them); it also spares each
	// lookup a clock read.
	h.shared.FreezeClock(max(h.shared.Now(), 1))
	defer h.shared.ThawClock()
	start := monotonicNanos() // the monotonic clock alone (half of time.Now)
	L.SetContext(e.watch.begin(h, watched, start))
	h.beginRun(by.function, by.name, by.args, &e.watch, start)
	broken, err := vm.call(fn, args...)
	if err == nil {
		writeLuaReply(cl, L.Get(-1), sc.proto == 3)
	}
	L.SetTop(0)
	L.RemoveContext()
	cause := e.watch.end()
	if h.endRun() {
		// SHUTDOWN NOSAVE: the caller gets nothing, as from Redis, which
		// exits; its connection closes.
		cl.closeAfterReply = true
		return broken
	}
	if err != nil {
		r.writeError(cl, err, cause)
	}
	return broken
}

// call runs fn with args and the error handler. A panic that escapes
// PCall (gopher-lua raises a registry overflow while pushing the handler)
// is an error too, and broken says the state must be replaced.
func (vm *luaVM) call(fn *lua.LFunction, args ...lua.LValue) (broken bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			broken = true
			if apiErr, ok := p.(*lua.ApiError); ok {
				err = apiErr
			} else {
				err = fmt.Errorf("%v", p)
			}
		}
	}()
	vm.L.Push(fn)
	for _, a := range args {
		vm.L.Push(a)
	}
	return false, vm.L.PCall(len(args), 1, vm.handler)
}

// scriptArray is KEYS or ARGV of the EVAL state, a table kept from run
// to run: filling it in place spares a table and its array per run.
// Nothing of a run outlives it (globals are read-only; FCALL, whose
// libraries can keep what they are given, passes fresh tables), but the
// script may have changed the table: then the next run gets a new one,
// in base and in the bound code's constants that held the old one.
type scriptArray struct {
	t    *lua.LTable
	n    int        // the elements 1..n are the last run's; the table holds nothing else
	refs []constRef // the constants of bound code holding t (script_bind.go)
}

// fill makes a.t hold args and be base's name.
func (a *scriptArray) fill(vm *luaVM, name string, args [][]byte) {
	if a.t == nil || !a.untouched() {
		a.t, a.n = vm.L.CreateTable(len(args), 0), 0
		vm.base.RawSetString(name, a.t)
		for _, ref := range a.refs {
			ref.proto.Constants[ref.i] = a.t
		}
	}
	for i, arg := range args {
		if i < a.n {
			if last, ok := a.t.RawGetInt(i + 1).(lua.LString); ok && string(last) == string(arg) {
				continue // an argument that does not change (a limit, a window) costs no allocation
			}
		}
		a.t.RawSetInt(i+1, lua.LString(arg))
	}
	for i := len(args) + 1; i <= a.n; i++ {
		a.t.RawSetInt(i, lua.LNil)
	}
	a.n = len(args)
}

// untouched reports whether the table still holds nothing but elements
// 1..n, with no metatable: what the last fill left, values aside.
func (a *scriptArray) untouched() bool {
	if a.t.Metatable != lua.LNil {
		return false
	}
	var after lua.LValue = lua.LNil // Next(nil) starts at element 1
	if a.n > 0 {
		after = lua.LNumber(a.n)
	}
	k, _ := a.t.Next(after)
	return k == lua.LNil && a.t.Len() == a.n
}

// luaStrings returns a Lua array of args (FCALL's keys and arguments).
func luaStrings(L *lua.LState, args [][]byte) *lua.LTable {
	t := L.CreateTable(len(args), 0)
	for i, a := range args {
		t.RawSetInt(i+1, lua.LString(a))
	}
	return t
}

// bindClient readies the script client for a run by cl: cl's database,
// RESP2, cl's loop's counters, and the MULTI state of the AOF records
// (inside an EXEC the transaction's MULTI serves the script's records too).
func (e *scriptEngine) bindClient(h *Handler, cl *client) *client {
	sc := e.client
	if sc == nil {
		sc = &client{proto: 2, authed: true, valueDigits: 1, addr: scriptAddr}
		sc.sessionOf().execing = true
		e.client = sc
	}
	sc.h = h
	sc.proto = 2
	sc.selected.Store(cl.selected.Load())
	st := cl.stats
	if st == nil {
		st = h.cmdStats.forLoop(-1)
	}
	e.loop.cmds = st.cmds
	sc.stats = &e.loop
	sc.out = sc.out[:0]
	s := sc.sess.Load()
	s.multiLogged = false
	if cs := cl.sess.Load(); cs != nil && cs.execing {
		s.multiLogged = cs.multiLogged
	}
	return sc
}

// unbind ends a run: the EXEC record after the script's writes, the
// caller's AOF offset, its ready keys and command count, and no
// reference left to the Handler.
func (e *scriptEngine) unbind(cl, sc *client) {
	h := sc.h
	s := sc.sess.Load()
	if cs := cl.sess.Load(); cs != nil && cs.execing {
		cs.multiLogged = s.multiLogged
	} else if s.multiLogged && !h.busy.frozen.Load() {
		// (Stopped by SHUTDOWN NOSAVE, the script's records stay without
		// their EXEC: a replay drops them.)
		h.logExec(sc) // aof.go
	}
	s.multiLogged = false
	if sc.aof != nil && sc.aof.end > 0 {
		if cl.aof == nil {
			cl.aof = &aofState{}
		}
		cl.aof.end = max(cl.aof.end, sc.aof.end)
	}
	if len(e.loop.ready) > 0 && cl.stats != nil {
		cl.stats.ready = append(cl.stats.ready, e.loop.ready...)
		clear(e.loop.ready)
		e.loop.ready = e.loop.ready[:0]
	}
	cl.batchCmds += sc.batchCmds
	sc.batchCmds = 0
	if cap(sc.out) > 64<<10 {
		sc.out = nil
	}
	sc.h, sc.stats, e.loop.cmds = nil, nil, nil
	r := &e.run
	r.h, r.caller, r.sc, r.script, r.oks = nil, nil, nil, nil, nil
	clear(r.args)
	if cap(r.argBuf) > 64<<10 {
		r.argBuf = nil
	}
	e.running = false
}

// scriptWatch times a run and stops it on request: a timer marks the run
// busy once it passes busy-reply-threshold and checks the heap while it
// runs, and SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE and the heap cap
// cancel the context gopher-lua's VM polls between instructions. The
// engine keeps one; its context lasts from run to run until it stops one.
type scriptWatch struct {
	mu        sync.Mutex // the fields below, against the timer's goroutine and the killers
	timer     *time.Timer
	ctx       context.Context
	cancel    context.CancelCauseFunc
	running   bool
	h         *Handler // the run's, told when it turns busy; nil between runs
	watched   bool     // the run may turn busy (a client with a connection)
	busy      bool     // this run passed the threshold
	start     int64    // monotonicNanos at the run's start
	threshold time.Duration
	heapBase  uint64
	armed     bool  // the timer will fire (at due)
	due       int64 // when the armed timer fires, in monotonicNanos
}

// begin starts watching a run of h and returns the context for the VM; a
// watched run is marked busy once it passes h's busy-reply-threshold.
func (w *scriptWatch) begin(h *Handler, watched bool, start int64) context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil {
		w.ctx, w.cancel = context.WithCancelCause(context.Background())
	}
	w.running, w.h, w.watched, w.busy = true, h, watched, false
	w.start, w.threshold, w.heapBase = start, h.busyThreshold(), 0
	// The timer is left running between runs (end does not stop it): a
	// run needs it re-armed only when it is not armed or due later than
	// the run's first check. Scripts run back to back then cost no timer
	// call; the timer finds no run at most once before it rests.
	first := w.next(0)
	if due := start + int64(first); w.timer == nil {
		w.timer = time.AfterFunc(first, w.check)
		w.armed, w.due = true, due
	} else if !w.armed || w.due > due {
		w.timer.Reset(first)
		w.armed, w.due = true, due
	}
	return w.ctx
}

// next is when to check again, elapsed into the run: at the threshold if
// the run is watched and not busy yet, else at the heap's interval.
func (w *scriptWatch) next(elapsed time.Duration) time.Duration {
	if w.watched && !w.busy && w.threshold-elapsed < scriptWatchEvery {
		return max(w.threshold-elapsed, 0)
	}
	return scriptWatchEvery
}

func (w *scriptWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		w.armed = false
		return
	}
	now := monotonicNanos()
	elapsed := time.Duration(now - w.start)
	if w.watched && !w.busy && elapsed >= w.threshold {
		w.busy = true
		w.h.markBusy()
	}
	live := liveHeap()
	if w.heapBase == 0 || live < w.heapBase {
		w.heapBase = live
	} else if live-w.heapBase > scriptHeapLimit {
		w.cancel(errScriptHeap)
		w.armed = false
		return
	}
	next := w.next(elapsed)
	w.due = now + int64(next)
	w.timer.Reset(next)
}

// stop stops the run, if one is on, for cause.
func (w *scriptWatch) stop(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running {
		w.cancel(cause)
	}
}

// end stops watching and returns why the run was stopped, nil if it was
// not.
func (w *scriptWatch) end() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.h = false, nil
	return context.Cause(w.ctx)
}

// liveHeap is the heap the last garbage collection found live.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// writeError answers a script that failed, as Redis 7.0's luaCallFunction:
// the error's text, and where it was raised when known.
func (r *scriptRun) writeError(cl *client, err error, cause error) {
	var t *lua.LTable
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		t, _ = apiErr.Object.(*lua.LTable)
	}
	var msg, where string
	ignoreStats := false
	if t != nil {
		msg, _ = luaText(t.RawGetString("err"))
		source, okSource := luaText(t.RawGetString("source"))
		line, okLine := luaText(t.RawGetString("line"))
		if okSource && okLine {
			where = " script: " + r.script.sha + ", on " + source + ":" + line + "."
		}
		ignoreStats = t.RawGetString("ignore_error_stats_update") == lua.LTrue
		if _, isText := luaText(t.RawGetString("err")); !isText {
			msg = "ERR Script raised an error that is not a string or a table with an err field"
		}
	}
	switch {
	case errors.Is(cause, errScriptKilled):
		msg = errScriptKilledText
		ignoreStats = false
	case errors.Is(cause, errScriptHeap):
		msg = "ERR Script grew the heap by more than " + strconv.FormatUint(scriptHeapLimit>>20, 10) +
			" MB and was stopped; the writes it made are kept"
		ignoreStats = false
	case t == nil:
		msg, where = "ERR Error running script "+r.script.sha+", "+runFailure(err), ""
	}
	if ignoreStats {
		cl.out = resp.AppendError(cl.out, msg+where)
		cl.failed = true
		return
	}
	cl.writeError(msg + where)
}

// runFailure describes an error the handler did not see.
func runFailure(err error) string {
	var apiErr *lua.ApiError
	text := err.Error()
	if errors.As(err, &apiErr) {
		if s, ok := luaText(apiErr.Object); ok {
			text = s
		}
	}
	switch {
	case strings.HasSuffix(text, "callstack overflow"):
		return "stack overflow: more than " + strconv.Itoa(luaMaxCalls) + " nested calls"
	case strings.HasSuffix(text, "registry overflow"):
		return "stack overflow: more than " + strconv.Itoa(luaMaxSlots) + " values on the Lua stack"
	}
	return text
}
