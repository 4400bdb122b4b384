package kv

import (
	"errors"
	"strconv"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/ascii"
)

// WAIT, and the primary's part of ROLE and INFO replication, with Redis's
// formats.

var (
	errPromoted   = errors.New("the server was promoted: its replicas reconnect to learn the new replication ID")
	errNewHistory = errors.New("the primary's replication ID changed: the replicas reconnect to follow it")
)

// replWait is a parked WAIT.
type replWait struct {
	w      *waiter
	offset int64 // the stream's offset when WAIT ran
	need   int64
}

var getAckRecord = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")

func cmdWait(h *Handler, cl *client, args [][]byte) {
	if h.repl.state.Load() != linkNone {
		cl.writeError(errWaitReplica)
		return
	}
	need, ok := ascii.ParseInt(args[1])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	timeout, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError("ERR timeout is not an integer or out of range")
		return
	}
	if timeout < 0 {
		cl.writeError("ERR timeout is negative")
		return
	}
	offset := h.repl.offset.Load()
	n := h.ackedReplicas(offset)
	if n >= need || cl.conn == nil || cl.inExec() {
		cl.writeInt(n)
		return
	}
	// Park: the reply comes from checkWaits (an ACK) or the timer.
	w := &waiter{cl: cl, req: blockRequest{timeoutReply: nil}, db: cl.selected.Load()}
	rw := &replWait{w: w, offset: offset, need: need}
	b := &h.blocking
	b.mu.Lock()
	w.state = waitParked
	b.registered.Add(1)
	cl.sessionOf().blocked = w
	b.blocked.Add(1)
	if timeout > 0 {
		w.timer = time.AfterFunc(time.Duration(timeout)*time.Millisecond, func() { h.finishReplWait(rw) })
	}
	b.mu.Unlock()
	p := &h.primary
	p.mu.Lock()
	p.waits = append(p.waits, rw)
	// Ask the replicas for their offsets now, as Redis does before it
	// sleeps, rather than waiting for their next ACK (a second).
	if len(p.replicas) > 0 {
		p.appendLocked(h, getAckRecord)
	}
	p.mu.Unlock()
}

// ackedReplicas counts the replicas that acknowledged offset.
func (h *Handler) ackedReplicas(offset int64) int64 {
	p := &h.primary
	if !p.feeding.Load() {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(0)
	for _, r := range p.replicas {
		if r.online && r.ack.Load() >= offset {
			n++
		}
	}
	return n
}

// checkWaits answers the WAITs their replicas now satisfy.
func (h *Handler) checkWaits() {
	p := &h.primary
	p.mu.Lock()
	if len(p.waits) == 0 {
		p.mu.Unlock()
		return
	}
	waits := append([]*replWait(nil), p.waits...)
	p.mu.Unlock()
	for _, rw := range waits {
		if h.ackedReplicas(rw.offset) >= rw.need {
			h.finishReplWait(rw)
		}
	}
}

// finishReplWait answers a parked WAIT with the replicas that have its
// offset now, once (an ACK, the timeout and a close may race).
func (h *Handler) finishReplWait(rw *replWait) {
	p := &h.primary
	p.mu.Lock()
	for i, o := range p.waits {
		if o == rw {
			p.waits = append(p.waits[:i], p.waits[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	w := rw.w
	b := &h.blocking
	b.mu.Lock()
	if w.state == waitDone { // disconnected (cancelWait), or answered
		b.mu.Unlock()
		return
	}
	b.unregister(w)
	b.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	reply := strconv.AppendInt([]byte{':'}, h.ackedReplicas(rw.offset), 10)
	reply = append(reply, "\r\n"...)
	_ = w.cl.conn.Run(func() { h.finishWait(w, reply, 0) })
}

// mailboxHard is the hard limit a mailbox of class is held to: the
// replica class's for monitors and replicas, else the pubsub class's.
func (h *Handler) mailboxHard(class int) int64 {
	if class == config.ClassReplica {
		return h.outLimits.replicaHard.Load()
	}
	return h.outLimits.pubsubHard.Load()
}

// replicaStates writes INFO replication's connected_slaves and one
// slaveN line per replica, as Redis: every replica that sent SYNC or
// PSYNC, in its state (replica.stateWord), with the offset it
// acknowledged (0 before its first ACK) and, once online, the seconds
// since its last ACK as lag (0 before, as Redis).
func (h *Handler) replicaStates(field func(k string, v any)) {
	p := &h.primary
	p.mu.Lock()
	list := append([]*replica(nil), p.replicas...)
	for _, ps := range p.syncQueue { // waiting for repl-diskless-sync-delay
		if !ps.r.gone {
			list = append(list, ps.r)
		}
	}
	states := make([]string, len(list))
	for i, r := range list {
		states[i] = r.stateWord()
	}
	p.mu.Unlock()
	field("connected_slaves", len(list))
	now := time.Now().UnixMilli()
	for i, r := range list {
		lag := int64(0)
		if states[i] == "online" {
			lag = (now - r.ackAt.Load()) / 1000
		}
		field("slave"+strconv.Itoa(i), "ip="+r.conf.ip+",port="+strconv.Itoa(r.conf.port)+",state="+states[i]+
			",offset="+strconv.FormatInt(r.ack.Load(), 10)+",lag="+strconv.FormatInt(lag, 10))
	}
}

// backlogInfo writes INFO replication's repl_backlog_* fields.
func (h *Handler) backlogInfo(field func(k string, v any)) {
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.backlog == nil {
		field("repl_backlog_active", 0)
		field("repl_backlog_size", p.backlogSize)
		field("repl_backlog_first_byte_offset", 0)
		field("repl_backlog_histlen", 0)
		return
	}
	field("repl_backlog_active", 1)
	field("repl_backlog_size", p.backlog.Size())
	field("repl_backlog_first_byte_offset", p.backlog.FirstByte())
	field("repl_backlog_histlen", p.backlog.HistLen())
}

// syncStats writes INFO stats' sync_full, sync_partial_ok and
// sync_partial_err.
func (h *Handler) syncStats(field func(k string, v any)) {
	p := &h.primary
	field("sync_full", p.syncFull.Load())
	field("sync_partial_ok", p.syncPartialOK.Load())
	field("sync_partial_err", p.syncPartialErr.Load())
}

// writeRoleReplicas writes the rest of a primary's ROLE reply: its offset
// and [ip, port, acknowledged offset] of each online replica (as INFO
// says online: a diskless one waiting for its first ACK too), as Redis.
func (h *Handler) writeRoleReplicas(cl *client) {
	p := &h.primary
	cl.writeInt(h.repl.offset.Load())
	p.mu.Lock()
	var list []*replica
	for _, r := range p.replicas {
		if !r.gone && r.stateWord() == "online" {
			list = append(list, r)
		}
	}
	p.mu.Unlock()
	cl.writeArray(len(list))
	for _, r := range list {
		cl.writeArray(3)
		cl.writeBulkStr(r.conf.ip)
		cl.writeBulkStr(strconv.Itoa(r.conf.port))
		cl.writeBulkStr(strconv.FormatInt(r.ack.Load(), 10))
	}
}

// errNoReplicas is Redis's refusal of a write under min-replicas-to-write.
const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// initPrimary takes over min-replicas-to-write and min-replicas-max-lag:
// while fewer replicas than the first acknowledged within the second's
// seconds, writes are refused, as Redis's checkGoodReplicasStatus.
func (h *Handler) initPrimary() {
	p := &h.primary
	p.minReplicas.Store(h.params.Int("min-replicas-to-write"))
	p.backlogSize = h.params.Int("repl-backlog-size")
	p.maxLag.Store(h.params.Int("min-replicas-max-lag"))
	h.params.Own("min-replicas-to-write", config.Owner{
		Get: func() string { return strconv.FormatInt(p.minReplicas.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); p.minReplicas.Store(n); h.updateGoodReplicas() },
	})
	h.params.Own("min-replicas-max-lag", config.Owner{
		Get: func() string { return strconv.FormatInt(p.maxLag.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); p.maxLag.Store(n); h.updateGoodReplicas() },
	})
	h.updateGoodReplicas()
	h.params.Own("repl-backlog-size", config.Owner{
		Get: func() string {
			p.mu.Lock()
			defer p.mu.Unlock()
			return strconv.FormatInt(p.backlogSize, 10)
		},
		Set: func(v string) {
			n, _ := strconv.ParseInt(v, 10, 64) // the table checked it
			p.mu.Lock()
			p.backlogSize = n
			if p.backlog != nil {
				p.backlog.Resize(int(n))
			}
			p.mu.Unlock()
		},
	})
}

// updateGoodReplicas recounts the replicas that acknowledged within
// min-replicas-max-lag and sets whether writes are refused: at every
// setting change, every second (primaryCron) and at each ACK.
func (h *Handler) updateGoodReplicas() {
	p := &h.primary
	minimum := p.minReplicas.Load()
	if minimum <= 0 {
		p.noReplicas.Store(false)
		return
	}
	good := int64(0)
	now := time.Now().UnixMilli()
	lag := p.maxLag.Load() * 1000
	p.mu.Lock()
	for _, r := range p.replicas {
		if (r.online || r.awaitAck) && now-r.ackAt.Load() <= lag {
			good++
		}
	}
	p.mu.Unlock()
	p.noReplicas.Store(good < minimum)
}

// refusesForReplicas answers -NOREPLICAS to a write (or an EXEC with
// writes queued) of an ordinary client while min-replicas-to-write is not
// met; dispatch calls it while noReplicas is set.
func (h *Handler) refusesForReplicas(cl *client, cmd *command, counters *commandCounters) bool {
	if cl.conn == nil || cl.isPrimaryLink() || h.repl.state.Load() != linkNone {
		return false
	}
	write := cmd.logged
	if cmd.name == "exec" {
		s := cl.sess.Load()
		write = s != nil && s.multi && s.writes
	}
	if !write {
		return false
	}
	counters.rejected.Add(1)
	cl.reject(cmd, errNoReplicas)
	return true
}
