package kv

import (
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/store"
)

// Expiry and eviction across the append-only file and replicas, as Redis
// 7.0 has them (its propagateDeletion). A primary that deletes a key whose
// TTL ran out, by its active cycle or when a command meets it, or evicts
// one under maxmemory, logs DEL key (UNLINK with lazyfree-lazy-expire or
// lazyfree-lazy-eviction yes) to the file and the replication stream. A
// replica deletes nothing on its own: its reads miss an expired key, and
// the primary's DEL removes it; the primary's commands never find a key
// expired; a write of the replica's own client (replica-read-only no)
// deletes the expired keys it names first, as Redis's writable replicas.
// With replica-ignore-maxmemory yes (the default) a replica neither
// evicts nor refuses writes over maxmemory.
//
// The store tells deletionLog of each such deletion (store.DeletionLog),
// under the key's shard lock. The record must enter the log in the order
// of the store's changes to that key: a write holds its stripe from
// before its store operation until its record is appended (aof.go), so a
// deletion's record is appended under the same stripe. A write's own
// lookups already hold it; the active expirer takes it (it holds no other
// stripe), while a read that meets an expired key and an eviction take it
// only if it is free, and otherwise leave the key for later. The records
// wait in the stripe's pending list, since the file and the stream may not
// be appended to under a shard lock, and are appended by whoever holds the
// stripe before it logs anything else or lets the stripe go.
type deletionLog struct {
	on              atomic.Bool // a file is attached: h.aof and h.stripes are set
	lazyExpire      atomic.Bool // lazyfree-lazy-expire: UNLINK, not DEL
	lazyEviction    atomic.Bool // lazyfree-lazy-eviction
	ignoreMaxMemory atomic.Bool // replica-ignore-maxmemory
	pending         []pendingDeletions
}

// pendingDeletions are the records of one stripe's deletions not yet
// appended. Only the stripe's holder appends to and takes from it; mu
// keeps a deletion made while logging was being switched on safe.
type pendingDeletions struct {
	n     atomic.Int32 // len(dbs), for a test without mu
	mu    sync.Mutex
	recs  []byte
	dbs   []deletionRecord
	spare []byte // the buffer taken last time, for reuse
}

type deletionRecord struct {
	db  int
	end int // end of the record in recs
}

// initDeletionLog takes over the settings the log reads and gives the
// store its DeletionLog.
func (h *Handler) initDeletionLog() {
	d := &h.dels
	d.pending = make([]pendingDeletions, h.shared.ShardCount())
	for _, s := range []struct {
		name string
		flag *atomic.Bool
	}{{"lazyfree-lazy-expire", &d.lazyExpire}, {"lazyfree-lazy-eviction", &d.lazyEviction}, {"replica-ignore-maxmemory", &d.ignoreMaxMemory}} {
		flag := s.flag
		flag.Store(h.params.Bool(s.name))
		h.params.Own(s.name, config.Owner{
			Get: func() string { return config.FormatYesNo(flag.Load()) },
			Set: func(v string) { flag.Store(v == "yes") },
		})
	}
	h.shared.SetDeletionLog(&store.DeletionLog{
		Replica:         h.keepsExpiredKeys,
		IgnoreMaxMemory: func() bool { return d.ignoreMaxMemory.Load() && h.followsPrimary() },
		Enter:           h.enterDeletion,
		Leave:           h.leaveDeletion,
		Deleted:         h.storeDeleted,
	})
}

// followsPrimary reports whether h follows a primary (REPLICAOF host port).
func (h *Handler) followsPrimary() bool { return h.repl.state.Load() != linkNone }

// keepsExpiredKeys reports whether keys whose TTL ran out stay in the data
// set (reads miss them; nothing deletes them): on a replica, until its
// primary's DEL; and during a pause of the clients (CLIENT PAUSE, the hold
// of a FAILOVER), until it ends, as Redis keeps the data set static then
// (checkClientPauseTimeoutAndReturnIfPaused in its activeExpireCycle and
// expireIfNeeded), so that a failover's new primary finds the keys the old
// one had and sends the DELs itself.
func (h *Handler) keepsExpiredKeys() bool {
	return h.followsPrimary() || h.pause.mode.Load() != pauseOff
}

// logsWrites reports whether writes are logged, to a file or to replicas:
// then h.stripes exist.
func (h *Handler) logsWrites() bool { return h.dels.on.Load() || h.primary.feeding.Load() }

// enterDeletion is the DeletionLog's Enter: it takes stripe i, waiting for
// it only when asked to.
func (h *Handler) enterDeletion(i int, wait bool) (ok, held bool) {
	if !h.logsWrites() {
		return true, false
	}
	if wait {
		h.stripes[i].Lock()
		return true, true
	}
	if h.stripes[i].TryLock() {
		return true, true
	}
	return false, false
}

// leaveDeletion is the DeletionLog's Leave: it appends the deletions made
// under stripe i and releases it.
func (h *Handler) leaveDeletion(i int, held bool) {
	if held {
		h.flushDeletions(i)
		h.stripes[i].Unlock()
	}
}

// The names a deletion is logged with.
var (
	delName    = []byte("DEL")
	unlinkName = []byte("UNLINK")
)

// storeDeleted is the DeletionLog's Deleted: it adds the record of key's
// deletion from database s to the pending list of its stripe. It runs
// under the key's shard lock.
func (h *Handler) storeDeleted(s *store.Store, key []byte, evicted bool) {
	if !h.logsWrites() {
		return
	}
	db := h.dbIndexOf(s)
	if db < 0 {
		return
	}
	name := delName
	if evicted && h.dels.lazyEviction.Load() || !evicted && h.dels.lazyExpire.Load() {
		name = unlinkName
	}
	p := &h.dels.pending[h.shared.ShardIndex(key)]
	p.mu.Lock()
	p.recs = aof.AppendCommand(p.recs, name, key)
	p.dbs = append(p.dbs, deletionRecord{db: db, end: len(p.recs)})
	p.n.Store(int32(len(p.dbs)))
	p.mu.Unlock()
}

// flushDeletions appends the pending deletion records of the stripes given
// to the file and the stream: the holder of those stripes calls it before
// it appends a record of its own.
func (h *Handler) flushDeletions(stripes ...int) {
	for _, i := range stripes {
		p := &h.dels.pending[i]
		if p.n.Load() == 0 {
			continue
		}
		p.mu.Lock()
		recs, dbs := p.recs, p.dbs
		p.recs, p.dbs = p.spare[:0], nil
		p.n.Store(0)
		p.mu.Unlock()
		if len(dbs) == 0 {
			continue
		}
		h.appendDeletions(recs, dbs)
		p.mu.Lock()
		if p.dbs == nil {
			p.dbs = dbs[:0]
		}
		p.spare = recs[:0]
		p.mu.Unlock()
	}
}

// flushDeletionsOf is flushDeletions for a client's write, under its
// stripes: in an EXEC or a script, the deletions go after the MULTI that
// opens its records, as Redis puts them.
func (h *Handler) flushDeletionsOf(cl *client) {
	pending := false
	for _, i := range cl.aof.stripes {
		if h.dels.pending[i].n.Load() != 0 {
			pending = true
			break
		}
	}
	if !pending {
		return
	}
	if multi := cl.execLogPrefix(); multi != nil {
		h.appendDeletions(multi, []deletionRecord{{db: -1, end: len(multi)}})
	}
	h.flushDeletions(cl.aof.stripes...)
}

// appendDeletions appends records to the file, if any, and the stream; a
// record of db -1 (MULTI) is of no database.
func (h *Handler) appendDeletions(recs []byte, dbs []deletionRecord) {
	if h.dels.on.Load() {
		buf := h.aof.Begin()
		start := 0
		for _, r := range dbs {
			if r.db >= 0 {
				buf = h.aof.Select(buf, r.db)
			}
			buf = append(buf, recs[start:r.end]...)
			start = r.end
		}
		// Wakes the writer. Nobody waits: under appendfsync always the
		// replies that may show the deletion wait for the file's end.
		h.aof.Commit(h.aof.End(buf), ignoreSynced)
	}
	if h.primary.feeding.Load() {
		start := 0
		for _, r := range dbs {
			h.feedStream(r.db, recs[start:r.end]) // primary.go
			start = r.end
		}
	}
}

// ignoreSynced is the Commit callback of records no reply waits for.
func ignoreSynced(int64, bool) {}

// reclaimBeforeWrite deletes the expired keys a write of a replica's own
// client names, before it runs: Redis's writable replicas delete them (and
// log it) as a write looks them up, while the primary's writes, and the
// store's lookups on a replica, find them live.
func (h *Handler) reclaimBeforeWrite(cl *client, cmd *command, args [][]byte) {
	db := cl.db()
	dbIndex := int(cl.selected.Load())
	forEachKey(cmd, args, func(key []byte) {
		i := h.shared.ShardIndex(key)
		ok, held := h.enterDeletion(i, true) // dispatch holds no stripe yet
		if ok && db.ReclaimExpired(key) {
			if h.notifying(evExpired) {
				h.publishEvent(cl, "expired", key, dbIndex)
			}
			if h.tracking.active.Load() != 0 {
				h.invalidate(nil, key)
			}
		}
		h.leaveDeletion(i, held)
	})
}

// cmdDebugSetActiveExpire is DEBUG SET-ACTIVE-EXPIRE 0|1: 0 stops the
// active expirer (keys whose TTL ran out then go only when met), as
// Redis's test suites use it. The argument is read as C's atoi reads it,
// as Redis does: what is not a number is 0.
func cmdDebugSetActiveExpire(h *Handler, cl *client, arg []byte) {
	h.shared.SetActiveExpire(atoiC(arg) != 0)
	cl.writeOK()
}

// atoiC is C's atoi: leading blanks, a sign, the digits that follow; 0
// when there are none.
func atoiC(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var n int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && n < 1<<58; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}
