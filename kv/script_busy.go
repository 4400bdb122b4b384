package kv

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/config"
)

// Busy scripts, as Redis 7.0 has them. A script or function runs with the
// world stopped (multi.go: stopWorld), so other loops wait between batches.
// Once it has run for busy-reply-threshold milliseconds (lua-time-limit)
// the script's watch (script_run.go) marks it busy and wakes them: a loop
// that finds its exec gate taken and a busy script serves its batch
// without the gate and without the store (busyBatch). Commands without
// the allow_busy flag are answered -BUSY; those with it run: AUTH, HELLO,
// QUIT, RESET, MULTI, DISCARD, WATCH, UNWATCH, SCRIPT KILL, FUNCTION KILL,
// FUNCTION STATS and SHUTDOWN NOSAVE.
//
// SCRIPT KILL and FUNCTION KILL ask the watch to stop a script that has
// not written (the request and the write mark are one atomic word, so a
// write and a kill never both happen); the script's caller gets Redis's
// "Script killed by user" error. SHUTDOWN NOSAVE stops the busy script
// even if it wrote, answers nothing to its caller, and freezes the world:
// no loop touches the store again while the server drains (every command
// is answered -BUSY), and the append-only file keeps the script's records
// without their EXEC, so a replay drops them, as Redis, which exits
// without logging them, does. A script that never reaches the threshold is
// never stopped by it.
//
// Differences from Redis: the script runs on its caller's loop, so the
// other clients of that loop wait for it to end instead of getting -BUSY;
// the HTTP and frame fronts wait too. A script that grows the heap by more
// than scriptHeapLimit is stopped with an error (Redis has no such cap).

const (
	errBusyEval     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	errUnkillable   = "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
		"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errScriptKilledText = "ERR Script killed by user with SCRIPT KILL..."
)

// The bits of busyState.marks: what the script did and what was asked of
// it, in one word so that a kill and a write are decided in one order.
const (
	markWrote    uint32 = 1 << iota // a write command ran (Redis's SCRIPT_WRITE_DIRTY)
	markKilled                      // SCRIPT KILL or FUNCTION KILL stopped it
	markShutdown                    // SHUTDOWN NOSAVE stopped it
)

// busyState is the running script as the other loops see it. The script's
// loop writes it at the start and end of a run (beginRun, endRun) and the
// watch's timer marks it busy; other loops read it in busy mode.
type busyState struct {
	// threshold is busy-reply-threshold in milliseconds (the settings
	// table's row is owned here: ownBusyThreshold).
	threshold atomic.Int64
	// busy: the running script passed the threshold (or the world is
	// frozen): loops that find their gate taken serve in busy mode.
	busy atomic.Bool
	// frozen: SHUTDOWN NOSAVE stopped a busy script; the world stays
	// stopped and busy until the process exits.
	frozen atomic.Bool
	// function: the running (or frozen) script is a function, which
	// picks the BUSY text.
	function atomic.Bool
	marks    atomic.Uint32
	wake     worldSignal

	mu      sync.Mutex // the fields below, and the caller's arguments while FUNCTION STATS copies them
	running bool
	name    string       // the function's name (FUNCTION STATS)
	args    [][]byte     // the caller's command line, valid while running
	start   int64        // monotonicNanos
	watch   *scriptWatch // stops the run
}

// worldSignal wakes the loops waiting for their gate (awaitGate) when the
// world resumes or a script turns busy. A resume pays one atomic load
// while nobody waits.
type worldSignal struct {
	waiters atomic.Int32
	mu      sync.Mutex
	ch      chan struct{} // closed at the next change; nil until someone waits
}

// changed returns a channel closed at the next broadcast.
func (w *worldSignal) changed() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// broadcast wakes every waiter.
func (w *worldSignal) broadcast() {
	if w.waiters.Load() == 0 {
		return
	}
	w.mu.Lock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.mu.Unlock()
}

// ownBusyThreshold makes busy-reply-threshold (and its alias
// lua-time-limit) read and change what the scripts use.
func (h *Handler) ownBusyThreshold() {
	b := &h.busy
	b.threshold.Store(h.params.Int("busy-reply-threshold"))
	h.params.Own("busy-reply-threshold", config.Owner{
		Get: func() string { return strconv.FormatInt(b.threshold.Load(), 10) },
		Set: func(v string) { b.threshold.Store(atoi64(v)) },
	})
}

// busyThreshold is busy-reply-threshold.
func (h *Handler) busyThreshold() time.Duration {
	return time.Duration(h.busy.threshold.Load()) * time.Millisecond
}

// awaitGate waits until the loop of gate may enter it (true: entered) or
// a busy script lets it serve its batch without (false). It blocks on the
// world's signal between tries, never spins.
func (h *Handler) awaitGate(gate *execGate) bool {
	b := &h.busy
	b.wake.waiters.Add(1)
	defer b.wake.waiters.Add(-1)
	for {
		// The channel first: a change after the checks below closes it.
		wake := b.wake.changed()
		if b.busy.Load() {
			return false
		}
		if gate.tryEnter() {
			return true
		}
		<-wake
	}
}

// busyBatch serves a batch while a busy script holds the world: dispatch
// answers -BUSY to every command without the allow_busy flag.
func (h *Handler) busyBatch(cl *client, in []byte) int {
	gate := &cl.stats.gate
	gate.busy = true
	defer func() { gate.busy = false }()
	return h.onBatch(cl, in)
}

// refuseBusy answers -BUSY to a command that lacks allow_busy, in busy
// mode, and reports whether it did. The RESP2 subscribed context refuses
// first, as in Redis (interceptSession).
func (h *Handler) refuseBusy(cl *client, cmd *command, counters *commandCounters) bool {
	if hasFlag(cmd.flags, "allow_busy") {
		return false
	}
	if s := cl.sess.Load(); s != nil && cl.proto == 2 && s.sub.Load().subscribed() && !allowedWhileSubscribed(cmd) {
		return false
	}
	counters.rejected.Add(1)
	cl.reject(cmd, h.busyError())
	return true
}

// busyError is the -BUSY text for the running script's kind.
func (h *Handler) busyError() string {
	if h.busy.function.Load() {
		return errBusyFunction
	}
	return errBusyEval
}

// beginRun publishes a run: a function's name ("" for EVAL), the caller's
// command line (args, which must stay valid until endRun), and the watch
// that stops it.
func (h *Handler) beginRun(function bool, name string, args [][]byte, w *scriptWatch, start int64) {
	b := &h.busy
	b.mu.Lock()
	b.running, b.name, b.args, b.start, b.watch = true, name, args, start, w
	b.mu.Unlock()
	b.function.Store(function)
	b.marks.Store(0)
}

// markBusy is the watch's: the run passed the threshold.
func (h *Handler) markBusy() {
	h.opts.Logger.Warn("slow script detected: still running past busy-reply-threshold; SCRIPT KILL or FUNCTION KILL may stop it",
		"threshold_ms", h.busy.threshold.Load())
	h.busy.busy.Store(true)
	h.busy.wake.broadcast()
}

// endRun withdraws the run; it reports whether SHUTDOWN NOSAVE stopped it
// (the world then stays stopped and busy).
func (h *Handler) endRun() (shutdown bool) {
	b := &h.busy
	b.mu.Lock()
	b.running, b.name, b.args, b.watch = false, "", nil, nil
	b.mu.Unlock()
	if b.marks.Load()&markShutdown != 0 {
		b.frozen.Store(true)
		return true
	}
	if b.busy.Load() {
		b.busy.Store(false)
	}
	return false
}

// noteWrite marks the run as having written; it reports false if a kill
// came first, so the write must not run.
func (h *Handler) noteWrite() bool {
	m := &h.busy.marks
	for {
		old := m.Load()
		if old&(markKilled|markShutdown) != 0 {
			return false
		}
		if old&markWrote != 0 || m.CompareAndSwap(old, old|markWrote) {
			return true
		}
	}
}

// killScript is SCRIPT KILL (eval) and FUNCTION KILL, as Redis 7.0's
// scriptKill.
func (h *Handler) killScript(cl *client, eval bool) {
	b := &h.busy
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running || !b.busy.Load() {
		// A script that has not passed the threshold holds every loop,
		// so only one that just ended or began can be seen here.
		cl.writeError(errNotBusy)
		return
	}
	function := b.function.Load()
	for {
		old := b.marks.Load()
		switch {
		case old&markWrote != 0:
			cl.writeError(errUnkillable)
			return
		case eval && function:
			cl.writeError(errBusyFunction)
			return
		case !eval && !function:
			cl.writeError(errBusyEval)
			return
		}
		if b.marks.CompareAndSwap(old, old|markKilled) {
			break
		}
	}
	b.watch.stop(errScriptKilled)
	cl.writeOK()
}

// shutdownBusy is SHUTDOWN's check while a script is busy: without NOSAVE
// it is refused (reported true, answered -BUSY); with it the script is
// stopped whatever it did, and the world stays stopped.
func (h *Handler) shutdownBusy(cl *client, noSave bool) (refused bool) {
	b := &h.busy
	if !b.busy.Load() || b.frozen.Load() {
		return false
	}
	if !noSave {
		cl.writeError(h.busyError())
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		b.marks.Or(markShutdown)
		b.watch.stop(errScriptShutdown)
	}
	return false
}

// runningScript writes FUNCTION STATS's running_script: null, or the
// function's name, its caller's command line and how long it has run.
func (h *Handler) runningScript(cl *client) {
	b := &h.busy
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running {
		cl.writeNull()
		return
	}
	cl.writeMap(3)
	cl.writeBulkStr("name")
	cl.writeBulkStr(b.name)
	cl.writeBulkStr("command")
	cl.writeArray(len(b.args))
	for _, a := range b.args {
		cl.writeBulk(a)
	}
	cl.writeBulkStr("duration_ms")
	cl.writeInt((monotonicNanos() - b.start) / int64(time.Millisecond))
}

// evalRunning reports whether an EVAL (not a function) is running: FUNCTION
// STATS refuses to describe it.
func (h *Handler) evalRunning() bool {
	b := &h.busy
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running && !b.function.Load()
}
