package kv

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
)

// CLIENT PAUSE and UNPAUSE, as Redis 7.0: for a number of milliseconds,
// every client's commands (ALL) or only those that write or may be
// replicated (WRITE: the write flag or may_replicate, so PUBLISH and EVAL
// too, and an EXEC whose queue holds a write) wait unanswered; reads go on
// under WRITE. A waiting command is not consumed: execute stops at it, the
// client's loop stops presenting its input (as for a blocking pop), and
// the end of the pause presents it again, so the commands then run in the
// order they were sent. Commands the pause catches are still checked for
// arity and authentication first, as Redis does.
//
// As Redis, keys do not expire during a pause, actively or when a read
// meets them (keepsExpiredKeys; eviction, which only a write makes, has
// nothing to trigger it). Difference from Redis: the HTTP and frame fronts
// are not paused.

var _ = registerFamily(family{commands: []*command{
	{
		name: "client|pause", arity: -3, fn: cmdClientPause,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection",
		doc: commandDoc{"Holds the commands of every client (ALL) or their writes (WRITE) for some milliseconds.", "2.9.50", "connection", "O(1)"},
	},
	{
		name: "client|unpause", arity: 2, fn: cmdClientUnpause,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection",
		doc: commandDoc{"Ends a CLIENT PAUSE: the clients it held go on.", "6.2.0", "connection", "O(N) Where N is the number of paused clients"},
	},
}})

// Pause modes, least to most restrictive.
const (
	pauseOff int32 = iota
	pauseWrite
	pauseAll
)

// pauseState is the Handler's CLIENT PAUSE, and the hold of writes of a
// FAILOVER (failover.go), which CLIENT UNPAUSE does not end, as Redis
// keeps the two apart. mode, the stronger of the two, is read by execute
// on every loop (one atomic load per command while no pause was ever
// set); the rest is under mu.
type pauseState struct {
	mode atomic.Int32

	mu       sync.Mutex
	userMode int32 // CLIENT PAUSE's mode, until end
	end      time.Time
	timer    *time.Timer
	failover bool                 // a FAILOVER holds writes until it ends
	parked   map[*client]struct{} // clients whose next command waits
}

// effectiveLocked is the mode in force: CLIENT PAUSE's, or WRITE while a
// failover holds writes. mu is held.
func (p *pauseState) effectiveLocked() int32 {
	if p.failover {
		return max(p.userMode, pauseWrite)
	}
	return p.userMode
}

func cmdClientPause(h *Handler, cl *client, args [][]byte) {
	ms, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		cl.writeError("ERR timeout is negative")
		return
	}
	mode := pauseAll
	switch {
	case len(args) == 3:
	case len(args) == 4 && ascii.EqualFold(args[3], "write"):
		mode = pauseWrite
	case len(args) == 4 && ascii.EqualFold(args[3], "all"):
	case len(args) == 4:
		cl.writeError("ERR CLIENT PAUSE mode must be WRITE or ALL")
		return
	default:
		cl.writeError(sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) + "'. Try CLIENT HELP."))
		return
	}
	h.pauseClients(mode, time.Duration(min(ms, int64(time.Duration(1<<62)/time.Millisecond)))*time.Millisecond)
	cl.writeOK()
}

func cmdClientUnpause(h *Handler, cl *client, _ [][]byte) {
	h.unpauseClients()
	cl.writeOK()
}

// pauseClients starts or extends a pause: as Redis, the later end and the
// more restrictive mode of the running pause and the new one win.
func (h *Handler) pauseClients(mode int32, d time.Duration) {
	p := &h.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	end := time.Now().Add(d)
	if p.userMode != pauseOff {
		mode = max(mode, p.userMode)
		if end.Before(p.end) {
			end = p.end
		}
	}
	p.end = end
	p.userMode = mode
	p.mode.Store(p.effectiveLocked())
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(time.Until(end), func() {
		p.mu.Lock()
		due := !time.Now().Before(p.end)
		p.mu.Unlock()
		if due {
			h.unpauseClients()
		}
	})
}

// unpauseClients ends the pause and presents the input of every client it
// held, each on its own loop: a command a failover still holds parks
// again.
func (h *Handler) unpauseClients() {
	p := &h.pause
	p.mu.Lock()
	p.userMode = pauseOff
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	h.releaseParkedLocked()
}

// holdWrites starts (on) or ends the hold of writes of a FAILOVER; ending
// it presents the input of the clients it held.
func (h *Handler) holdWrites(on bool) {
	p := &h.pause
	p.mu.Lock()
	p.failover = on
	if on {
		p.mode.Store(p.effectiveLocked())
		p.mu.Unlock()
		return
	}
	h.releaseParkedLocked()
}

// releaseParkedLocked sets the mode in force and presents the input of
// every parked client, each on its own loop; the next command of each is
// looked at again (holdsCommand). It unlocks p.mu.
func (h *Handler) releaseParkedLocked() {
	p := &h.pause
	p.mode.Store(p.effectiveLocked())
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	for cl := range parked {
		_ = cl.conn.Run(func() {
			if s := cl.sess.Load(); s != nil && s.paused {
				s.paused = false
				cl.conn.Resume()
			}
		})
	}
}

// holdsCommand reports whether the pause in force holds args, the next
// command of cl, and if so parks cl until it ends. execute calls it only
// while a pause is on.
func (h *Handler) holdsCommand(cl *client, args [][]byte) bool {
	if cl.conn == nil {
		return false // the AOF replay, benchmarks
	}
	cmd := dispatchIdx.find(args[0])
	if cmd == nil {
		return false // unknown: answered at once
	}
	if cmd.subs != nil && len(args) >= 2 {
		if cmd = lookupName(cmd.subs, args[1]); cmd == nil {
			return false
		}
	}
	if !arityOK(cmd.arity, len(args)) || (!cl.authed && !cmd.noAuth && h.authRequired.Load()) {
		return false // refused at once, as Redis checks these first
	}
	p := &h.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.effectiveLocked() {
	case pauseOff:
		return false
	case pauseWrite:
		s := cl.sess.Load()
		queuedWrite := cmd.name == "exec" && s != nil && s.multi && s.writes
		if !cmd.pausesOnWrite && !queuedWrite {
			return false
		}
	}
	if p.parked == nil {
		p.parked = make(map[*client]struct{})
	}
	p.parked[cl] = struct{}{}
	cl.sessionOf().paused = true
	return true
}

// forgetPaused drops a closing client from the pause's list.
func (h *Handler) forgetPaused(cl *client) {
	if s := cl.sess.Load(); s == nil || !s.paused {
		return
	}
	p := &h.pause
	p.mu.Lock()
	delete(p.parked, cl)
	p.mu.Unlock()
}
