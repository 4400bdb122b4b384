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
// primary's backlog still covers it, instead of a full sync. A primary's
// file records its history while it keeps a backlog, and a primary
// restarted from it continues that history (resumeAsPrimary).

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

// replSaveInfo returns what a snapshot written with the world stopped
// (SAVE, shutdown) records of the node's history, as Redis's
// rdbPopulateSaveInfo: a replica's (nil while it has none, or during a
// full sync, when the data set is neither the old history's nor yet the
// new one's), or a primary's while it keeps a backlog (nil without: no
// replica could continue it).
func (h *Handler) replSaveInfo() *replSaveInfo {
	r := &h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if link := r.link; link != nil {
		if r.offset.Load() <= 0 || r.state.Load() == linkTransfer {
			return nil
		}
		return &replSaveInfo{id: r.id, offset: r.offset.Load(), streamDB: int(link.cl.selected.Load())}
	}
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.backlog == nil {
		return nil
	}
	return &replSaveInfo{id: r.id, offset: r.offset.Load(), streamDB: max(p.db, 0)}
}

// snapshotAtInstant makes the file of a snapshot that records the history
// (replSaveInfo) while writes go on, BGSAVE's and the save policy's: the
// data set must be the one of exactly the offset recorded, so it is taken
// as a full sync's (primary_snapshot.go), at one instant for every shard,
// with the loops (and a replica's link) stopped between two batches, and
// encoded while the stream goes on being applied. It reports ok false
// when there is no history to record: the caller writes shard by shard.
func (h *Handler) snapshotAtInstant() (file []byte, st SaveStats, ok bool, err error) {
	if h.stripes == nil {
		return nil, st, false, nil // never fed a stream: no history
	}
	p := &h.primary
	p.syncMu.Lock() // one snapshot at a time, full syncs' too
	defer p.syncMu.Unlock()
	stopped := h.stopWorld(nil)
	for i := range h.stripes {
		h.stripes[i].Lock()
	}
	info := h.replSaveInfo()
	var sn *syncSnapshot
	if info != nil {
		sn = h.newSyncSnapshot()
		sn.repl = *info
		p.snapshot.Store(sn)
	}
	for i := range h.stripes {
		h.stripes[i].Unlock()
	}
	h.resumeWorld(nil, stopped)
	if sn == nil {
		return nil, st, false, nil
	}
	file, err = h.finishSnapshot(sn)
	for _, c := range sn.counts {
		st.Keys += int64(c[0])
	}
	st.Bytes = int64(len(file))
	return file, st, true, err
}

// resumeFromFile takes the history recorded in the snapshot loaded at
// startup (LoadRDB): a replica continues it, as Redis's
// replicationCacheMasterUsingMyself, so that its first PSYNC asks for the
// offset after the file's. It runs before the link starts. A primary
// keeps it as its previous history (resumeAsPrimary).
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

// resumeAsPrimary takes the history recorded in the snapshot a primary
// restarts from, as Redis 7.0's loadDataFromDisk: the node's new history
// continues it (master_replid2, second_repl_offset), from its offset, with
// a backlog that starts there, so that a replica that had the whole of it
// continues with +CONTINUE and the new ID instead of a full sync. A file
// that held keys whose TTL ran out before the load is not continued: their
// DELs, which Redis puts in the new backlog, are not in Shoal's, and such a
// replica would keep them.
func (h *Handler) resumeAsPrimary() {
	r := &h.repl
	st := r.fromFile
	if st.ReplID == "" || st.ReplOffset < 0 || !repl.ValidID(st.ReplID) || st.ReplStreamDB < 0 {
		return
	}
	if st.Expired > 0 {
		h.opts.Logger.Info("the snapshot's replication history is not continued: keys whose TTL ran out were skipped at load; replicas will sync in full",
			"replid", st.ReplID, "expired_skipped", st.Expired)
		return
	}
	h.startFeeding()
	r.mu.Lock()
	r.id2, r.secondOffset = st.ReplID, st.ReplOffset+1
	r.offset.Store(st.ReplOffset)
	p := &h.primary
	p.mu.Lock()
	p.backlog = repl.NewBacklog(int(p.backlogSize), st.ReplOffset)
	p.emptySince = time.Now() // repl-backlog-ttl counts from the restart, as Redis's
	p.mu.Unlock()
	r.mu.Unlock()
	h.opts.Logger.Info("the snapshot carries the replication history; replicas that had all of it continue partially",
		"replid2", st.ReplID, "offset", strconv.FormatInt(st.ReplOffset, 10))
}
