package kv

import (
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/repl"
)

// A replica's history in its snapshot file, as Redis 7.0 keeps it: the
// aux fields repl-stream-db, repl-id and repl-offset of a file a replica
// saves (SAVE, BGSAVE, the save policy, shutdown), and of the payload of a
// full sync; a replica restarted from the file asks its primary for
// PSYNC repl-id repl-offset+1 and continues with +CONTINUE when the
// primary's backlog still covers it, instead of a full sync.

// replSaveInfo is the replication state a snapshot records.
type replSaveInfo struct {
	id       string // the history the data set follows
	offset   int64  // the bytes of it the data set reflects
	streamDB int    // the database the primary's stream has selected there
}

// writeAux writes the fields, in Redis's order (after used-mem).
func (i *replSaveInfo) writeAux(w *rdb.Writer) {
	_ = w.WriteAuxInt("repl-stream-db", int64(i.streamDB))
	_ = w.WriteAux("repl-id", i.id)
	_ = w.WriteAuxInt("repl-offset", i.offset)
}

// replSaveInfo returns what a snapshot about to be written records of a
// replica's history (nil on a primary, or on a replica that has none
// yet), and the function to call once it is written. The file must hold
// the data set of exactly that offset, while BGSAVE writes shard by
// shard as writes go on: unless the caller stopped the world, the link
// stops applying the stream until resume, the primary's bytes waiting in
// the socket (Redis's fork gives it the same instant).
func (h *Handler) replSaveInfo(worldStopped bool) (*replSaveInfo, func()) {
	r := &h.repl
	r.mu.Lock()
	link := r.link
	r.mu.Unlock()
	if link == nil {
		return nil, func() {}
	}
	resume := func() {}
	if !worldStopped {
		r.savePause.Add(1)
		resume = func() { r.savePause.Add(-1) }
		// Wait for the batch the link may be applying: the next one
		// sees the pause (masterLink.apply).
		g := &h.cmdStats.forLoop(-1).gate
		g.mu.Lock()
		//lint:ignore SA2001 an empty critical section: waiting for the batch is the point
		g.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// During a full sync the data set is neither the old history's nor
	// yet the new one's.
	if r.link != link || r.offset.Load() <= 0 || r.state.Load() == linkTransfer {
		return nil, resume
	}
	return &replSaveInfo{id: r.id, offset: r.offset.Load(), streamDB: int(link.cl.selected.Load())}, resume
}

// awaitSave holds the link's batch back while a snapshot is written
// (replSaveInfo); the caller holds the link's gate, which it leaves while
// it waits.
func (l *masterLink) awaitSave(g *execGate) {
	for l.h.repl.savePause.Load() > 0 && !l.stopped.Load() {
		g.leave()
		time.Sleep(5 * time.Millisecond)
		g.enter()
	}
}

// resumeFromFile takes the history recorded in the snapshot loaded at
// startup (LoadRDB): a replica continues it, as Redis's
// replicationCacheMasterUsingMyself, so that its first PSYNC asks for the
// offset after the file's. It runs before the link starts.
func (h *Handler) resumeFromFile() {
	r := &h.repl
	st := r.fromFile
	if st.ReplID == "" || st.ReplOffset <= 0 || len(strings.Fields(r.startup)) != 2 {
		return
	}
	r.mu.Lock()
	r.id, r.id2, r.secondOffset = st.ReplID, repl.NoID, -1
	r.offset.Store(st.ReplOffset)
	r.readOffset.Store(st.ReplOffset)
	if st.ReplStreamDB >= 0 && st.ReplStreamDB < len(h.dbs) {
		r.resumeDB = st.ReplStreamDB
	}
	r.mu.Unlock()
	h.opts.Logger.Info("the snapshot carries the replication history; a partial resync will be asked for",
		"replid", st.ReplID, "offset", strconv.FormatInt(st.ReplOffset, 10))
}
