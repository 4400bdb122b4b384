package kv

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/repl"
)

// FAILOVER, Redis 7.0's coordinated failover: the primary holds its
// clients' writes, waits until a replica (any, or the one named with TO)
// has acknowledged the whole stream, becomes a replica of it and asks it,
// with PSYNC <id> <offset> FAILOVER, to take over: the replica, whose
// history is the primary's, becomes a primary (REPLICAOF NO ONE) and
// answers +CONTINUE with its new ID, so that no write acknowledged before
// the hold is lost and nothing is copied in full. The hold ends when the
// new primary answers; the writes it held then meet a replica
// (-READONLY), as Redis's do.
//
// TIMEOUT ms ends the wait: the failover is abandoned, or with FORCE
// (which needs TO and TIMEOUT) goes on to the named replica even though
// it has not caught up (then it answers +FULLRESYNC, and the writes it
// missed are gone, as in Redis). FAILOVER ABORT ends a failover in either
// state; one abandoned after the PSYNC was sent makes the node a primary
// again under a new ID (the target keeps the history and becomes
// primary only if it got the request).
//
// Redis checks whether a replica caught up on every turn of its event
// loop; Shoal on every REPLCONF ACK and every failoverTick. While a
// failover waits, the primary sends its replicas no PING, which would move
// the offset they must reach (Redis skips it while clients are paused by
// a failover with a timeout).

// Failover states, as INFO's master_failover_state names them.
const (
	failoverNone       int32 = iota // no-failover
	failoverWaitSync                // waiting-for-sync
	failoverInProgress              // failover-in-progress: PSYNC FAILOVER sent or to be sent
)

// failoverTick is how often a waiting failover looks at its replicas'
// offsets without an ACK (and at its deadline).
const failoverTick = 100 * time.Millisecond

// failoverState is the node's FAILOVER. state is read without the lock
// (INFO, REPLICAOF, PSYNC, the link); the rest is under mu.
type failoverState struct {
	state atomic.Int32

	mu    sync.Mutex
	host  string    // the target; "" until one is chosen
	port  int       //
	end   time.Time // TIMEOUT's deadline; zero without one
	force bool
	wake  chan struct{} // an ACK arrived: look again (buffered, 1)
	quit  chan struct{} // closed when the failover ends
}

// Redis's texts.
const (
	errFailoverCluster    = "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead."
	errFailoverInProgress = "ERR FAILOVER already in progress."
	errFailoverReplica    = "ERR FAILOVER is not valid when server is a replica."
	errFailoverNoReplicas = "ERR FAILOVER requires connected replicas."
	errFailoverForce      = "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	errFailoverNotReplica = "ERR FAILOVER target HOST and PORT is not a replica."
	errFailoverNotOnline  = "ERR FAILOVER target replica is not online."
	errFailoverTimeout    = "ERR FAILOVER timeout must be greater than 0"
	errNoFailover         = "ERR No failover in progress."
	errReplicaOfFailover  = "ERR REPLICAOF not allowed while failing over."
	errSyncFailingOver    = "NOMASTERLINK Can't SYNC while failing over"
	errPSyncFailoverOnPri = "ERR PSYNC FAILOVER can't be sent to a master."
	errPSyncFailoverID    = "ERR PSYNC FAILOVER replid must match my replid."
)

var _ = registerFamily(family{commands: []*command{
	{
		name: "failover", arity: -1, fn: cmdFailover,
		flags: "admin noscript stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Start a coordinated failover between this server and one of its replicas.", "6.2.0", "server", "O(1)"},
	},
}})

// failoverStateWord is master_failover_state.
func (h *Handler) failoverStateWord() string {
	switch h.failover.state.Load() {
	case failoverWaitSync:
		return "waiting-for-sync"
	case failoverInProgress:
		return "failover-in-progress"
	}
	return "no-failover"
}

func cmdFailover(h *Handler, cl *client, args [][]byte) {
	if h.cluster != nil { // before anything else, ABORT included, as Redis
		cl.writeError(errFailoverCluster)
		return
	}
	f := &h.failover
	if len(args) == 2 && ascii.EqualFold(args[1], "abort") {
		if f.state.Load() == failoverNone {
			cl.writeError(errNoFailover)
			return
		}
		h.abortFailover(cl, "Failover manually aborted")
		cl.writeOK()
		return
	}
	var (
		timeout int64
		force   bool
		host    string
		port    int64
		hasTo   bool
	)
	for j := 1; j < len(args); j++ {
		switch {
		case ascii.EqualFold(args[j], "timeout") && j+1 < len(args) && timeout == 0:
			n, ok := ascii.ParseInt(args[j+1])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			if n <= 0 {
				cl.writeError(errFailoverTimeout)
				return
			}
			timeout = n
			j++
		case ascii.EqualFold(args[j], "to") && j+2 < len(args) && !hasTo:
			n, ok := ascii.ParseInt(args[j+2])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			host, port, hasTo = string(args[j+1]), n, true
			j += 2
		case ascii.EqualFold(args[j], "force") && !force:
			force = true
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	if f.state.Load() != failoverNone {
		cl.writeError(errFailoverInProgress)
		return
	}
	if mh, _ := h.masterAddr(); mh != "" {
		cl.writeError(errFailoverReplica)
		return
	}
	if h.replicaCount() == 0 {
		cl.writeError(errFailoverNoReplicas)
		return
	}
	if force && (timeout == 0 || !hasTo) {
		cl.writeError(errFailoverForce)
		return
	}
	if hasTo {
		r := h.findReplica(host, int(port))
		if r == nil {
			cl.writeError(errFailoverNotReplica)
			return
		}
		if !h.replicaOnline(r) {
			cl.writeError(errFailoverNotOnline)
			return
		}
		h.opts.Logger.Info("FAILOVER requested", "to", repl.Addr(host, int(port)))
	} else {
		h.opts.Logger.Info("FAILOVER requested to any replica")
	}
	f.mu.Lock()
	f.host, f.port, f.force = "", 0, force
	if hasTo {
		f.host, f.port = host, int(port)
	}
	f.end = time.Time{}
	if timeout > 0 {
		f.end = time.Now().Add(time.Duration(min(timeout, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond)
	}
	f.wake = make(chan struct{}, 1)
	f.quit = make(chan struct{})
	wake, quit := f.wake, f.quit
	f.state.Store(failoverWaitSync)
	f.mu.Unlock()
	h.holdWrites(true)
	go h.runFailover(wake, quit)
	cl.writeOK()
}

// replicaCount is the number of replicas connected, in any state (Redis's
// listLength(server.slaves)).
func (h *Handler) replicaCount() int {
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.replicas) + len(p.syncQueue)
}

// findReplica returns the replica that announced host (or connected from
// it) and listening port port, as Redis's findReplica; nil if none.
func (h *Handler) findReplica(host string, port int) *replica {
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.replicas {
		if !r.gone && strings.EqualFold(r.conf.ip, host) && r.conf.port == port {
			return r
		}
	}
	return nil
}

func (h *Handler) replicaOnline(r *replica) bool {
	h.primary.mu.Lock()
	defer h.primary.mu.Unlock()
	return !r.gone && r.stateWord() == "online"
}

// failoverAcked wakes a waiting failover: a replica acknowledged an
// offset.
func (h *Handler) failoverAcked() {
	if h.failover.state.Load() != failoverWaitSync {
		return
	}
	f := &h.failover
	f.mu.Lock()
	wake := f.wake
	f.mu.Unlock()
	if wake != nil {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// runFailover waits for a replica to catch up, or for the deadline, and
// then starts the switch (failoverStep); it returns when the failover
// leaves waiting-for-sync.
func (h *Handler) runFailover(wake, quit chan struct{}) {
	t := time.NewTicker(failoverTick)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-h.done:
			return
		case <-wake:
		case <-t.C:
		}
		if h.failoverStep(quit) {
			return
		}
	}
}

// failoverStep does what Redis's updateFailoverStatus does: past the
// deadline, abandon the failover or force it; else, once the target (or
// any replica) acknowledged the whole stream, become its replica with
// PSYNC FAILOVER. The world is stopped for the last look, so that no
// write runs between the check and the switch. It reports whether the
// wait is over.
func (h *Handler) failoverStep(quit chan struct{}) bool {
	f := &h.failover
	f.mu.Lock()
	end, force, host, port := f.end, f.force, f.host, f.port
	f.mu.Unlock()
	if !end.IsZero() && !time.Now().Before(end) {
		if force {
			h.opts.Logger.Info("FAILOVER time out exceeded, failing over", "to", repl.Addr(host, port))
			return h.startSwitch(quit, host, port, true)
		}
		h.abortFailover(nil, "Replica never caught up before timeout")
		return true
	}
	if _, _, ok := h.caughtUp(host, port); !ok {
		return false
	}
	return h.startSwitch(quit, host, port, false)
}

// caughtUp returns a replica whose acknowledged offset is the stream's:
// the one at host:port, or with host "" any.
func (h *Handler) caughtUp(host string, port int) (string, int, bool) {
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	offset := h.repl.offset.Load()
	for _, r := range p.replicas {
		if r.gone || (host != "" && (!strings.EqualFold(r.conf.ip, host) || r.conf.port != port)) {
			continue
		}
		if r.ack.Load() == offset {
			return r.conf.ip, r.conf.port, true
		}
	}
	return "", 0, false
}

// startSwitch makes the node a replica of host:port (the caught-up replica
// when host is ""), its link sending PSYNC FAILOVER; forced, without
// looking at the offsets. It reports whether the wait is over (false: the
// replica fell behind again before the world stopped).
func (h *Handler) startSwitch(quit chan struct{}, host string, port int, forced bool) bool {
	stopped := h.stopWorld(nil)
	defer h.resumeWorld(nil, stopped)
	select {
	case <-quit:
		return true // aborted meanwhile
	default:
	}
	if !forced {
		var ok bool
		if host, port, ok = h.caughtUp(host, port); !ok {
			return false
		}
		h.opts.Logger.Info("Failover target is synced, failing over", "to", repl.Addr(host, port))
	}
	f := &h.failover
	f.mu.Lock()
	f.host, f.port = host, port
	f.state.Store(failoverInProgress)
	f.mu.Unlock()
	h.setMaster(host, port) // the link sends PSYNC ... FAILOVER (failoverLink)
	return true
}

// failoverLink reports whether a link being started is the one of a
// failover, which asks its primary to take over.
func (h *Handler) failoverLink() bool {
	return h.failover.state.Load() == failoverInProgress
}

// failoverAnswered ends the failover once the target answered PSYNC
// FAILOVER: done with +CONTINUE or +FULLRESYNC, abandoned otherwise (the
// node a primary again). It reports whether the link goes on.
func (h *Handler) failoverAnswered(err error) bool {
	if h.failover.state.Load() != failoverInProgress {
		return true
	}
	if err != nil {
		h.abortFailover(nil, "Failover target rejected psync request: "+err.Error())
		return false
	}
	h.opts.Logger.Info("FAILOVER done: the target took over")
	h.clearFailover()
	return true
}

// abortFailover abandons the failover, with why in the log: after the
// switch began, the node becomes a primary again (cl: the client of
// FAILOVER ABORT, nil from the failover's goroutine or the link).
func (h *Handler) abortFailover(cl *client, why string) {
	f := &h.failover
	f.mu.Lock()
	host, port := f.host, f.port
	f.mu.Unlock()
	st := f.state.Load()
	if st == failoverNone {
		return
	}
	if host != "" {
		h.opts.Logger.Info("FAILOVER aborted", "to", repl.Addr(host, port), "reason", why)
	} else {
		h.opts.Logger.Info("FAILOVER to any replica aborted", "reason", why)
	}
	if st == failoverInProgress {
		if cl != nil {
			h.switchMaster(cl, "", 0)
		} else {
			stopped := h.stopWorld(nil)
			h.unsetMaster()
			h.resumeWorld(nil, stopped)
		}
	}
	h.clearFailover()
}

// clearFailover ends the failover's state and its hold of writes.
func (h *Handler) clearFailover() {
	f := &h.failover
	f.mu.Lock()
	if f.state.Load() == failoverNone {
		f.mu.Unlock()
		return
	}
	f.state.Store(failoverNone)
	f.host, f.port, f.force, f.end = "", 0, false, time.Time{}
	if f.quit != nil {
		close(f.quit)
	}
	f.quit, f.wake = nil, nil
	f.mu.Unlock()
	h.holdWrites(false)
}

// psyncFailover serves the FAILOVER argument of PSYNC: a replica whose
// history is the one named becomes a primary, as REPLICAOF NO ONE, before
// the PSYNC is served (it then continues the sender with its new ID). It
// reports whether the PSYNC goes on.
func (h *Handler) psyncFailover(cl *client, id []byte) bool {
	h.opts.Logger.Warn("Failover request received", "replid", string(id))
	if host, _ := h.masterAddr(); host == "" {
		cl.writeError(errPSyncFailoverOnPri)
		return false
	}
	cur, _, _ := h.replIDs()
	if !ascii.EqualFold(id, cur) {
		cl.writeError(errPSyncFailoverID)
		return false
	}
	h.switchMaster(cl, "", 0)
	h.opts.Logger.Info("MASTER MODE enabled (failover request)", "id", cl.id, "addr", cl.addr)
	return true
}
