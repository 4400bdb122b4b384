package kv

import (
	"math"
	"slices"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Databases: SELECT, MOVE, SWAPDB and what reads every database (INFO
// keyspace, FLUSHALL, the AOF rewrite).
//
// A client holds the index it selected (client.selected); commands reach
// its keys through cl.db(), which reads h.dbs at that index, so a SWAPDB
// moves every client of either database at once, as in Redis. A database
// is made on first use (store.NewDB: one maxmemory and policy for all, and
// eviction across them); one never selected costs a pointer. Pub/sub is
// global, as in Redis. Blocking waits and WATCHes are per database (their
// keys carry the index); the AOF logs SELECT before a record of another
// database than the last (aof.go).

// db is the database cl selected.
func (cl *client) db() *store.Store {
	return cl.h.db(int(cl.selected.Load()))
}

// db returns database i, making it on first use.
func (h *Handler) db(i int) *store.Store {
	if s := h.dbs[i].Load(); s != nil {
		return s
	}
	h.dbMu.Lock()
	defer h.dbMu.Unlock()
	if s := h.dbs[i].Load(); s != nil {
		return s
	}
	s := h.shared.NewDB()
	h.dbs[i].Store(s)
	made := append(append([]int(nil), h.madeIndexes()...), i)
	slices.Sort(made)
	h.made.Store(&made)
	return s
}

// madeIndexes returns the indexes of the databases made so far, ascending:
// what loops over every database walk, so that a large 'databases' costs
// nothing until they are used.
func (h *Handler) madeIndexes() []int {
	if p := h.made.Load(); p != nil {
		return *p
	}
	return []int{0}
}

// existingDB returns database i, or nil if nothing made it yet (it is
// empty).
func (h *Handler) existingDB(i int) *store.Store { return h.dbs[i].Load() }

// closeDBs stops the expirers of the databases h made.
func (h *Handler) closeDBs() {
	h.shared.SetRemoveHook(nil)
	h.shared.SetDeletionLog(nil)
	h.dbMu.Lock()
	defer h.dbMu.Unlock()
	for _, i := range h.madeIndexes() {
		if s := h.dbs[i].Load(); s != nil && s != h.shared {
			s.Close()
		}
	}
}

// usedMemory is what every database's keys use.
func (h *Handler) usedMemory() int64 {
	var n int64
	for _, i := range h.madeIndexes() {
		if s := h.dbs[i].Load(); s != nil {
			n += s.Stats().UsedMemory
		}
	}
	return n
}

// KeyspaceStats sums every database's counters (Store().Stats() is database 0's).
func (h *Handler) KeyspaceStats() store.Stats {
	var t store.Stats
	for _, i := range h.madeIndexes() {
		s := h.dbs[i].Load()
		if s == nil {
			continue
		}
		st := s.Stats()
		t.Keys += st.Keys
		t.Expires += st.Expires
		t.ExpiredKeys += st.ExpiredKeys
		t.EvictedKeys += st.EvictedKeys
		t.Hits += st.Hits
		t.Misses += st.Misses
		t.UsedMemory += st.UsedMemory
	}
	return t
}

// dbIndex parses a database index argument as Redis 7.0 does (its
// getIntFromObjectOrReply, then selectDb): errNotInteger if it is not an
// integer, errIntRange outside an int, errDBRange outside
// 0..databases-1.
func (h *Handler) dbIndex(arg []byte) (int, string) {
	id, ok := ascii.ParseInt(arg)
	switch {
	case !ok:
		return 0, errNotInteger
	case id < math.MinInt32 || id > math.MaxInt32:
		return 0, errIntRange
	case id < 0 || id >= int64(len(h.dbs)):
		return 0, errDBRange
	}
	return int(id), ""
}

const errIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

func cmdSelect(h *Handler, cl *client, args [][]byte) {
	id, errText := h.dbIndex(args[1])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if h.cluster != nil && id != 0 {
		cl.writeError("ERR SELECT is not allowed in cluster mode")
		return
	}
	cl.selected.Store(int32(id))
	cl.writeOK()
}

// cmdMove implements MOVE key db.
func cmdMove(h *Handler, cl *client, args [][]byte) {
	to, errText := h.dbIndex(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	from := int(cl.selected.Load())
	if to == from {
		cl.writeError("ERR source and destination objects are the same")
		return
	}
	ok, err := cl.db().MoveTo(h.db(to), args[1])
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if ok {
		h.signalReadyIn(cl, to, args[1])
		h.touchKeyIn(to, args[1]) // the source's WATCHes: touchWritten, as any write
	}
	cl.writeInt(boolInt(ok))
	if ok {
		cl.notifyIn(to, evNew, "new", args[1])
		cl.notifyIn(from, evGeneric, "move_from", args[1])
		cl.notifyIn(to, evGeneric, "move_to", args[1])
	}
}

// cmdSwapDB implements SWAPDB a b: clients of a see b's keys from now on
// and the other way round. It runs under every AOF stripe (its log rule),
// so no write of either is between its store operation and its record.
func cmdSwapDB(h *Handler, cl *client, args [][]byte) {
	a, errText := h.dbIndex(args[1])
	if errText != "" && errText != errDBRange {
		cl.writeError("ERR invalid first DB index")
		return
	}
	b, errText2 := h.dbIndex(args[2])
	if errText2 != "" && errText2 != errDBRange {
		cl.writeError("ERR invalid second DB index")
		return
	}
	if errText != "" || errText2 != "" {
		cl.writeError(errDBRange)
		return
	}
	if a != b {
		sa, sb := h.db(a), h.db(b)
		h.dbMu.Lock()
		h.dbs[a].Store(sb)
		h.dbs[b].Store(sa)
		h.dbMu.Unlock()
		// Waiters of either database may find their keys now.
		h.wakeDB(a)
		h.wakeDB(b)
	}
	cl.writeOK()
}

// appendKeyspaceInfo appends INFO's keyspace section: a line per
// database that has keys.
func (h *Handler) appendKeyspaceInfo(b []byte) []byte {
	for _, i := range h.madeIndexes() {
		s := h.dbs[i].Load()
		if s == nil {
			continue
		}
		st := s.Stats()
		if st.Keys == 0 {
			continue
		}
		b = append(b, "db"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":keys="...)
		b = strconv.AppendInt(b, st.Keys, 10)
		b = append(b, ",expires="...)
		b = strconv.AppendInt(b, st.Expires, 10)
		b = append(b, ",avg_ttl="...)
		b = strconv.AppendInt(b, st.AvgTTL, 10)
		b = append(b, "\r\n"...)
	}
	return b
}
