package kv

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/shoalkv/shoal/repl"
)

// Full sync and the primary's timers.

// pendingSync is a replica waiting for its full sync; sync is the old
// SYNC, which gets no +FULLRESYNC line.
type pendingSync struct {
	r    *replica
	sync bool
}

// fullSync sends r the snapshot of one instant and then the stream from
// that instant (primary.go). It runs on its own goroutine. The replicas
// that wait together share one snapshot: with repl-diskless-sync, as
// Redis, the first waits up to repl-diskless-sync-delay seconds for
// others to come, or until repl-diskless-sync-max-replicas are waiting
// (awaitSyncBatch); a replica that arrives while a snapshot is being made
// waits for the next.
func (h *Handler) fullSync(r *replica, oldSync bool) {
	p := &h.primary
	r.ackAt.Store(time.Now().UnixMilli())
	p.mu.Lock()
	if len(p.syncQueue) == 0 {
		p.syncQueuedAt = time.Now()
	}
	p.syncQueue = append(p.syncQueue, pendingSync{r: r, sync: oldSync})
	p.mu.Unlock()
	p.syncMu.Lock() // one snapshot at a time
	defer p.syncMu.Unlock()
	batch := h.awaitSyncBatch()
	if len(batch) == 0 {
		return // served with an earlier replica's snapshot
	}
	// The instant: no batch running, then no write in flight (each holds
	// its stripes from its store operation to its record).
	stopped := h.stopWorld(nil)
	for i := range h.stripes {
		h.stripes[i].Lock()
	}
	sn := h.newSyncSnapshot()
	p.snapshot.Store(sn)
	id, _, _ := h.replIDs()
	if l := h.currentLink(); l != nil {
		// A replica serving its primary's stream: the stream goes on in
		// the database its primary last selected.
		sn.repl.streamDB = int(l.cl.selected.Load())
	}
	p.mu.Lock()
	offset := h.repl.offset.Load()
	if p.backlog == nil {
		p.backlog = repl.NewBacklog(int(p.backlogSize), offset)
	}
	p.db = -1 // the replica starts in database 0: the next record selects its own
	sn.repl.id, sn.repl.offset = id, offset
	// Its ACK (0 until the first, as Redis's repl_ack_off) tells when
	// it has the stream: a FAILOVER does not take a replica still loading
	// its snapshot for one that caught up.
	p.replicas = append(p.replicas, replicasOf(batch)...)
	p.mu.Unlock()
	for i := range h.stripes {
		h.stripes[i].Unlock()
	}
	h.resumeWorld(nil, stopped)

	for _, ps := range batch {
		if !ps.sync {
			ps.r.sub.deliverRaw([]byte("+FULLRESYNC "+id+" "+strconv.FormatInt(offset, 10)+"\r\n"), 0)
		}
	}
	start := time.Now()
	rdb, err := h.finishSnapshot(sn) // primary_snapshot.go
	if err != nil {
		for _, ps := range batch {
			h.opts.Logger.Warn("full sync failed: the snapshot could not be made", "addr", replicaName(ps.r), "err", err)
			ps.r.cl.abort(err)
		}
		return
	}
	var wg sync.WaitGroup
	for _, ps := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.sendSnapshot(ps.r, rdb, offset, start, sn)
		}()
	}
	wg.Wait()
}

func replicasOf(batch []pendingSync) []*replica {
	list := make([]*replica, len(batch))
	for i, ps := range batch {
		list[i] = ps.r
	}
	return list
}

// awaitSyncBatch takes the replicas waiting for a full sync, once the
// delay allows: with repl-diskless-sync and a replica that takes the
// diskless form, repl-diskless-sync-delay seconds after the first came,
// or as soon as repl-diskless-sync-max-replicas (if not 0) wait. Replicas
// that left meanwhile are dropped from the batch. It runs under syncMu.
func (h *Handler) awaitSyncBatch() []pendingSync {
	p := &h.primary
	for {
		// Read at every look, as Redis's replicationCron does: a CONFIG SET
		// of the delay applies to the replicas already waiting.
		delay := time.Duration(h.params.Int("repl-diskless-sync-delay")) * time.Second
		p.mu.Lock()
		live := p.syncQueue[:0]
		diskless := false
		for _, ps := range p.syncQueue {
			if !ps.r.gone {
				live = append(live, ps)
				diskless = diskless || ps.r.conf.capaEOF
			}
		}
		p.syncQueue = live
		enough := len(live) == 0 || !diskless || !h.params.Bool("repl-diskless-sync") || time.Since(p.syncQueuedAt) >= delay
		if most := h.params.Int("repl-diskless-sync-max-replicas"); most > 0 && int64(len(live)) >= most {
			enough = true
		}
		if enough {
			batch := append([]pendingSync(nil), live...)
			p.syncQueue = p.syncQueue[:0]
			p.mu.Unlock()
			if len(batch) > 0 && delay > 0 && diskless {
				h.opts.Logger.Info("starting a diskless full sync", "replicas", len(batch), "waited", time.Since(p.syncQueuedAt).Round(time.Millisecond).String())
			}
			return batch
		}
		p.mu.Unlock()
		select {
		case <-h.done:
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sendSnapshot hands one replica of a batch the snapshot rdb, of the
// stream's offset, in the form it takes, then the stream since.
func (h *Handler) sendSnapshot(r *replica, rdb []byte, offset int64, start time.Time, sn *syncSnapshot) {
	p := &h.primary
	var head []byte
	var mark string
	if r.conf.capaEOF && h.params.Bool("repl-diskless-sync") {
		mark = newMark()
		head = []byte("$EOF:" + mark + "\r\n")
	} else {
		head = []byte("$" + strconv.Itoa(len(rdb)) + "\r\n")
		p.mu.Lock()
		r.sendBulk = true
		p.mu.Unlock()
	}
	r.sub.deliverRaw(head, 0)
	if !h.sendPayload(r, rdb) {
		return
	}
	if mark != "" {
		r.sub.deliverRaw([]byte(mark), 0)
	}
	p.mu.Lock()
	if mark != "" {
		// A replica reading a diskless payload looks for the mark at
		// the end of what it read: the stream waits for its first ACK,
		// sent once it has loaded the snapshot (as Redis 7's
		// repl_start_cmd_stream_on_ack).
		r.awaitAck = true
		r.ackAt.Store(time.Now().UnixMilli()) // online for INFO and ROLE, as Redis's replicaPutOnline
	} else {
		r.goOnline()
	}
	p.mu.Unlock()
	h.opts.Logger.Info("synchronization with replica succeeded", "addr", replicaName(r), "offset", offset,
		"bytes", len(rdb), "took", time.Since(start).Round(time.Millisecond).String(), "shards_copied_by_writes", sn.onWrite.Load())
}

// Pacing of a snapshot's transfer: it goes to the connection in pieces,
// each once what the replica has not read yet is below payloadAhead, so
// that the replica's loop writes it a piece at a time between its other
// connections' work, and a slow replica holds a few megabytes of it in
// memory rather than all of it.
const (
	payloadPiece = 256 << 10
	payloadAhead = 4 << 20
)

// sendPayload hands the snapshot to r's connection, paced. A replica
// that reads nothing of it for repl-timeout seconds is dropped, as Redis
// drops one.
func (h *Handler) sendPayload(r *replica, b []byte) bool {
	for len(b) > 0 {
		waitFrom := time.Now()
		for r.sub.boxLen.Load()+int64(r.cl.conn.OutputBacklog()) > payloadAhead {
			if h.replicaGone(r) {
				return false
			}
			if timeout := time.Duration(h.params.Int("repl-timeout")) * time.Second; time.Since(waitFrom) > timeout {
				h.opts.Logger.Warn("replica dropped: it read nothing of its snapshot for repl-timeout", "addr", replicaName(r), "timeout", timeout.String())
				r.cl.abort(fmt.Errorf("replica %s read nothing of its snapshot for %v (repl-timeout)", replicaName(r), timeout))
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
		n := min(payloadPiece, len(b))
		r.sub.deliverRaw(b[:n], 0)
		b = b[n:]
	}
	return true
}

// replicaGone reports whether r's connection closed.
func (h *Handler) replicaGone(r *replica) bool {
	h.primary.mu.Lock()
	defer h.primary.mu.Unlock()
	return r.gone
}

// goOnline hands r the stream since its snapshot and from now on the
// stream itself. primarySide.mu is held.
func (r *replica) goOnline() {
	if r.gone || r.online {
		return
	}
	r.sub.deliverRaw(r.pending, 0)
	r.pending = nil
	r.online = true
	if !r.awaitAck {
		r.ackAt.Store(time.Now().UnixMilli()) // as Redis's replicaPutOnline
	}
	r.awaitAck, r.sendBulk = false, false
}

// primaryCron runs once a second from the first replica on: it pings the
// replicas every repl-ping-replica-period seconds (a PING in the stream,
// as Redis, so that they see the link alive and their offsets move),
// answers WAITs that timed out, and frees the backlog after
// repl-backlog-ttl seconds without replicas.
func (h *Handler) primaryCron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	p := &h.primary
	p.mu.Lock()
	p.lastPing = time.Now()
	p.mu.Unlock()
	for {
		select {
		case <-h.done:
			return
		case now := <-t.C:
			h.pingReplicas(now)
			h.checkWaits()
			h.updateGoodReplicas()
		}
	}
}

var pingRecord = []byte("*1\r\n$4\r\nPING\r\n")

func (h *Handler) pingReplicas(now time.Time) {
	p := &h.primary
	period := time.Duration(h.params.Int("repl-ping-replica-period")) * time.Second
	ttl := time.Duration(h.params.Int("repl-backlog-ttl")) * time.Second
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.repl.state.Load() != linkNone {
		// A replica: its replicas get its primary's pings, and it keeps
		// its backlog, as Redis's replicas do.
		return
	}
	// A PING would move the offset a failover (or a cluster's manual
	// failover) waits for its replica to reach.
	if len(p.replicas) > 0 && now.Sub(p.lastPing) >= period && h.failover.state.Load() == failoverNone && !h.clusterHoldsWrites() {
		p.lastPing = now
		p.appendLocked(h, pingRecord)
	}
	if p.backlog != nil && len(p.replicas) == 0 && ttl > 0 && !p.emptySince.IsZero() && now.Sub(p.emptySince) >= ttl {
		p.backlog = nil
		h.opts.Logger.Info("replication backlog freed after repl-backlog-ttl without replicas", "ttl", ttl.String())
	}
}
