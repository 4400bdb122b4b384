package kv

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/repl"
)

// Replication, replica side: REPLICAOF (SLAVEOF), ROLE, and the link to a
// primary that runs Redis's PSYNC protocol (repl_link.go) and applies its
// command stream (repl_apply.go). The primary may be a redis-server or
// another Shoal.
//
// The framework has no outbound connections yet, so the link is one
// goroutine with a net.Conn, per REPLICAOF; the commands it receives run
// through dispatch like a client's, holding an exec gate of their own
// (loopState of "no loop") for each batch, so an EXEC on a loop waits for
// them and a MULTI/EXEC from the primary stops the loops as any EXEC does.

var _ = registerFamily(family{commands: []*command{
	{
		name: "replicaof", arity: 3, fn: cmdReplicaOf,
		flags: "admin noscript stale no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Make the server a replica of another instance, or promote it as master.", "5.0.0", "server", "O(1)"},
	},
	{
		name: "slaveof", arity: 3, fn: cmdReplicaOf,
		flags: "admin noscript stale no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Make the server a replica of another instance, or promote it as master.", "1.0.0", "server", "O(1)"},
	},
	{
		name: "role", arity: 1, fn: cmdRole,
		flags: "noscript loading stale fast", acl: "@admin @fast @dangerous",
		doc: commandDoc{"Return the role of the instance in the context of replication", "2.8.12", "server", "O(1)"},
	},
}})

// Redis's texts.
const (
	errInvalidMasterPort = "ERR Invalid master port"
	errReadOnlyReplica   = "READONLY You can't write against a read only replica."
	errMasterDown        = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// Link states, as Redis's repl_state; ROLE and INFO name them.
const (
	linkNone       int32 = iota // a primary
	linkConnect                 // waiting to (re)connect
	linkConnecting              // dialing
	linkHandshake               // PING, AUTH, REPLCONF, PSYNC
	linkTransfer                // receiving the snapshot of a full sync
	linkConnected               // applying the stream
)

// Guard bits: what dispatch refuses to ordinary clients (replicaGuard).
const (
	guardReadOnly int32 = 1 << iota // a replica with replica-read-only yes: writes get -READONLY
	guardStale                      // a replica, link down, replica-serve-stale-data no: -MASTERDOWN
)

// replication is the node's place in a replication history, kept as
// Redis keeps it so that PSYNC works in both directions. id names the
// history the data set follows and offset counts the bytes of that
// history the data set reflects: on a replica, the bytes of the primary's
// stream applied (Redis's master_repl_offset); id2 is the history before
// the last switch (a promotion by REPLICAOF NO ONE, or a primary that
// answered +CONTINUE with a new ID), valid up to secondOffset-1, which is
// what lets a replica of the old history continue with a partial resync.
//
// The primary side (serving PSYNC, the backlog, WAIT) builds on this state
// as it is: a primary advances offset by the bytes it propagates, keeps
// them in a backlog, and answers PSYNC id|id2 offset with +CONTINUE when
// the offset is still in the backlog. A replica does the same with the
// bytes of its primary's stream (masterLink.forward), so that it serves
// replicas of its own and, once promoted, continues the history.
//
// Lock order: mu before primarySide.mu.
type replication struct {
	mu           sync.Mutex  // id, id2, secondOffset, host, port, link
	id, id2      string      // 40 hex digits; id2 is repl.NoID without a previous history
	secondOffset int64       // -1 without a previous history
	host         string      // the primary's, "" on a primary
	port         int         //
	link         *masterLink // the running link, nil on a primary
	startup      string      // the replicaof setting at startup: "host port" or ""

	offset     atomic.Int64 // master_repl_offset: bytes of the history applied
	readOffset atomic.Int64 // slave_read_repl_offset: bytes of the stream received
	state      atomic.Int32 // link state (linkNone ...)
	guard      atomic.Int32 // guard bits, for dispatch
	downSince  atomic.Int64 // unix s the link went down; 0 if it never was up
	lastIO     atomic.Int64 // unix ms of the last byte from the primary
	syncTotal  atomic.Int64 // the snapshot being received: its length (0 for the $EOF form)
	syncRead   atomic.Int64 // and the bytes of it received so far

	readOnly   atomic.Bool // replica-read-only
	serveStale atomic.Bool // replica-serve-stale-data

	fromFile LoadStats // the snapshot loaded at startup, whose history a replica resumes
	resumeDB int       // the database the next link's stream starts in, from fromFile
}

// newReplID returns a random replication ID.
func newReplID() string {
	var b [repl.IDLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// initReplication gives h a new history and takes over the replication
// settings it applies. The link to a replicaof primary starts at Boot.
func (h *Handler) initReplication() {
	r := &h.repl
	r.id, r.id2, r.secondOffset = newReplID(), repl.NoID, -1
	p := h.params
	r.readOnly.Store(p.Bool("replica-read-only"))
	r.serveStale.Store(p.Bool("replica-serve-stale-data"))
	p.Own("replica-read-only", config.Owner{
		Get: func() string { return config.FormatYesNo(r.readOnly.Load()) },
		Set: func(v string) { r.readOnly.Store(v == "yes"); h.updateReplGuard() },
	})
	p.Own("replica-serve-stale-data", config.Owner{
		Get: func() string { return config.FormatYesNo(r.serveStale.Load()) },
		Set: func(v string) { r.serveStale.Store(v == "yes"); h.updateReplGuard() },
	})
	r.startup = p.Get("replicaof") // before Own: from then on it reads the current primary
	p.Own("replicaof", config.Owner{Get: func() string {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.host == "" {
			return ""
		}
		return r.host + " " + strconv.Itoa(r.port)
	}})
}

// bootReplication starts the link to the primary the replicaof setting
// names, once the edge serves (the handshake tells the primary our port).
func (h *Handler) bootReplication() {
	v := strings.Fields(h.repl.startup)
	if len(v) != 2 {
		h.resumeAsPrimary() // repl_save.go
		return
	}
	h.resumeFromFile() // repl_save.go
	port, _ := strconv.Atoi(v[1])
	h.setMaster(v[0], port)
}

// updateReplGuard recomputes the guard bits from the role, the link state
// and the settings.
func (h *Handler) updateReplGuard() {
	r := &h.repl
	var g int32
	if st := r.state.Load(); st != linkNone {
		if r.readOnly.Load() {
			g |= guardReadOnly
		}
		if st != linkConnected && !r.serveStale.Load() {
			g |= guardStale
		}
	}
	r.guard.Store(g)
}

// replicaRefuses answers a command a replica does not run for cl, as
// redis-server's processCommand checks: writes on a read-only replica,
// and while the link is down with replica-serve-stale-data no, every
// command without the stale flag. The primary's own commands pass, and
// so do those of clients without a connection (loading a snapshot or the
// append-only file), as Redis obeys both.
func (h *Handler) replicaRefuses(cl *client, cmd *command, g int32, counters *commandCounters) bool {
	if cl.isPrimaryLink() || cl.conn == nil {
		return false
	}
	msg := ""
	switch {
	case g&guardReadOnly != 0 && cmd.logged:
		msg = errReadOnlyReplica
	case g&guardStale != 0 && !hasWord(cmd.flags, "stale"):
		msg = errMasterDown
	default:
		return false
	}
	counters.rejected.Add(1)
	cl.reject(cmd, msg)
	return true
}

func cmdReplicaOf(h *Handler, cl *client, args [][]byte) {
	if h.failover.state.Load() != failoverNone {
		cl.writeError(errReplicaOfFailover)
		return
	}
	if ascii.EqualFold(args[1], "NO") && ascii.EqualFold(args[2], "ONE") {
		if h.switchMaster(cl, "", 0) {
			h.opts.Logger.Info("MASTER MODE enabled (user request)", "id", cl.id, "addr", cl.addr)
		}
		cl.writeOK()
		return
	}
	port, ok := ascii.ParseInt(args[2])
	if !ok || port < 0 || port > 65535 {
		cl.writeError(errInvalidMasterPort)
		return
	}
	host := string(args[1])
	r := &h.repl
	r.mu.Lock()
	same := r.host != "" && strings.EqualFold(r.host, host) && r.port == int(port)
	r.mu.Unlock()
	if same {
		cl.writeStatus("OK Already connected to specified master")
		return
	}
	h.switchMaster(cl, host, int(port))
	h.opts.Logger.Info("REPLICAOF enabled (user request)", "primary", repl.Addr(host, int(port)), "id", cl.id, "addr", cl.addr)
	cl.writeOK()
}

// switchMaster runs setMaster (host "": unsetMaster) for cl's REPLICAOF
// with the world stopped, unless cl's EXEC stopped it already: the link
// being replaced is then between two batches of the stream, so that the
// history switches at the offset of a whole command, every command it
// applied counted.
func (h *Handler) switchMaster(cl *client, host string, port int) bool {
	stopped := false
	if !cl.inExec() {
		stopped = h.stopWorld(cl)
	}
	defer h.resumeWorld(cl, stopped)
	if host == "" {
		return h.unsetMaster()
	}
	h.setMaster(host, port)
	return true
}

// setMaster makes h a replica of host:port: the link to a previous primary
// is dropped and a new one started. The data set and its history stay, so
// the new primary may continue it (PSYNC id offset+1). The replicas of h
// stay connected, as Redis 7.0's replicationSetMaster keeps them: if the
// new primary continues h's history under the same ID, its stream reaches
// them through h as before; they are dropped only when the history
// changes, to learn the new ID and continue from h's backlog (+CONTINUE
// with a new ID, masterLink.continued) or to sync in full from h's new
// data set (masterLink.fullSync).
//
// The new link's stream starts in the database the old one had selected,
// as Redis's cached master keeps its db: a primary continuing the history
// under the same ID sends no SELECT before its next record.
func (h *Handler) setMaster(host string, port int) {
	h.disconnectBlocked()
	h.startFeeding() // the backlog and h's own replicas (primary.go)
	r := &h.repl
	r.mu.Lock()
	old := r.link
	link := newMasterLink(h, host, port, old)
	db := int32(r.resumeDB)
	if old != nil {
		db = old.cl.selected.Load()
	}
	link.cl.selected.Store(db)
	r.resumeDB = 0
	r.host, r.port, r.link = host, port, link
	r.downSince.Store(0)
	r.state.Store(linkConnect)
	r.mu.Unlock()
	h.updateReplGuard()
	if old != nil {
		old.stop()
	}
	link.failover = h.failoverLink() // failover.go
	go link.run()
}

// errUnblockedReplica is Redis's reply to a blocking command that was
// waiting when the node became a replica.
const errUnblockedReplica = "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"

// disconnectBlocked ends every blocking command still waiting (the list and
// sorted set pops, XREAD and XREADGROUP BLOCK, WAIT) with Redis's UNBLOCKED
// error and closes its connection once the reply is written, as Redis's
// disconnectAllBlockedClients when the node is told REPLICAOF: a pop that
// the primary's stream served later would change this node's data set
// alone. The world is stopped (setMaster's callers), so no waiter is
// being served.
func (h *Handler) disconnectBlocked() {
	b := &h.blocking
	if b.blocked.Load() == 0 {
		return
	}
	var list []*waiter
	b.mu.Lock()
	for _, q := range b.queues {
		for _, w := range q.waiters {
			if w.state == waitParked && !slices.Contains(list, w) {
				list = append(list, w)
			}
		}
	}
	for _, w := range list {
		b.unregister(w)
	}
	b.mu.Unlock()
	p := &h.primary
	p.mu.Lock()
	waits := p.waits
	p.waits = nil
	p.mu.Unlock()
	b.mu.Lock()
	for _, rw := range waits {
		if rw.w.state == waitParked {
			b.unregister(rw.w)
			list = append(list, rw.w)
		}
	}
	b.mu.Unlock()
	for _, w := range list {
		if w.timer != nil {
			w.timer.Stop()
		}
		_ = w.cl.conn.Run(func() {
			cl := w.cl
			cl.closeAfterReply = true // what it sent after the command is dropped
			h.finishWait(w, []byte(errUnblockedReplica), 0)
			if cl.closeAfterReply { // not left to a held reply's release (aof_hold.go)
				_ = cl.conn.Close()
			}
		})
	}
}

// unsetMaster makes h a primary again, keeping its data: the link stops
// and the history gets a new ID, the old one kept as id2 up to the offset
// reached, as Redis's shiftReplicationId. The backlog stays, so that the
// other replicas of the old primary continue from h with +CONTINUE and
// the new ID; h's own replicas are dropped to come back and learn it, as
// Redis 7.0 does. It reports whether h was a replica.
func (h *Handler) unsetMaster() bool {
	r := &h.repl
	r.mu.Lock()
	link := r.link
	if link == nil {
		r.mu.Unlock()
		return false
	}
	link.stop()
	r.host, r.port, r.link = "", 0, nil
	r.state.Store(linkNone)
	r.id2, r.secondOffset, r.id = r.id, r.offset.Load()+1, newReplID()
	p := &h.primary
	p.mu.Lock()
	p.db = -1 // h's first own write selects its database
	p.mu.Unlock()
	r.mu.Unlock()
	h.updateReplGuard()
	h.dropReplicas(errPromoted)
	return true
}

// closeReplication stops the link, when the Handler closes.
func (h *Handler) closeReplication() {
	r := &h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.link != nil {
		r.link.stop()
	}
}

// replIDs returns the history's IDs and where the previous one ended.
func (h *Handler) replIDs() (id, id2 string, secondOffset int64) {
	r := &h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id, r.id2, r.secondOffset
}

// masterAddr returns the primary's host and port; "" on a primary.
func (h *Handler) masterAddr() (string, int) {
	r := &h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.host, r.port
}

// currentLink returns the link to the primary; nil on a primary.
func (h *Handler) currentLink() *masterLink {
	r := &h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.link
}
