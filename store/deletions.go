package store

// Deletions the store makes on its own, for a log of writes. Redis logs a
// DEL when it deletes a key whose TTL ran out (by its active cycle, or
// lazily when a command meets it) or evicts one, so that its append-only
// file and its replicas follow; and a replica deletes nothing on its own
// but waits for those DELs, while its reads treat an expired key as
// missing. A DeletionLog gives a store's user both: it hears of each such
// deletion, orders it with the user's own records, and says whether the
// data set is a replica's.
//
// Ordering. The user (kv) logs a write under a lock of the write's shard
// index (its stripe), held from before the store operation until the
// record is appended. A deletion is logged in order if it too happens
// under that lock: a write's own lookups (lookupWrite) already do; the
// active expirer, a read that meets an expired key and an eviction ask
// Enter first, which takes the stripe (or refuses when it may not wait:
// the key is then left for later), and Leave after the shard's lock is
// dropped, which appends what Deleted collected and releases the stripe.

// DeletionLog is what a store's user provides to log the store's own
// deletions and to make a replica's data set. Every field is required.
type DeletionLog struct {
	// Replica reports whether the data set follows a primary: keys whose
	// TTL ran out are then kept until the primary deletes them (reads
	// miss them; a write's own lookup sees them live, as the primary's
	// commands must), and the active expirer does nothing.
	Replica func() bool
	// IgnoreMaxMemory reports whether writes may pass maxmemory without
	// evicting or failing (a replica with replica-ignore-maxmemory yes).
	IgnoreMaxMemory func() bool
	// Enter is called before a deletion by a goroutine that may not hold
	// the user's lock of shard index i (the active expirer, a read, an
	// eviction): it reports whether the deletion may go on; wait says
	// whether it may block for it. held is passed back to Leave.
	Enter func(i int, wait bool) (ok, held bool)
	// Leave ends what Enter began, after the shard's lock is released.
	Leave func(i int, held bool)
	// Deleted is told, under the shard's write lock, of key about to be
	// deleted from s: expired, or evicted. key is valid only during the
	// call, which must not call into any store of the group.
	Deleted func(s *Store, key []byte, evicted bool)
}

// SetDeletionLog installs l for every database of s's group; nil removes
// it. Set it before serving.
func (s *Store) SetDeletionLog(l *DeletionLog) { s.g.deletions.Store(l) }

// SetActiveExpire turns the active expirer on or off for every database of
// s's group (DEBUG SET-ACTIVE-EXPIRE): off, keys whose TTL ran out go only
// when something meets them.
func (s *Store) SetActiveExpire(on bool) { s.g.activeExpireOff.Store(!on) }

// replica reports whether s's data set follows a primary.
func (s *Store) replica() bool {
	l := s.g.deletions.Load()
	return l != nil && l.Replica()
}

// entered is a deletion that enter let go on: leave ends it with the log
// enter asked, even if SetDeletionLog changed it meanwhile.
type entered struct {
	log  *DeletionLog
	i    int
	held bool
}

// enter asks the deletion log, if any, before a deletion in shard i.
func (s *Store) enter(i int, wait bool) (entered, bool) {
	l := s.g.deletions.Load()
	if l == nil {
		return entered{}, true
	}
	ok, held := l.Enter(i, wait)
	return entered{l, i, held}, ok
}

// leave ends enter.
func (s *Store) leave(e entered) {
	if e.log != nil {
		e.log.Leave(e.i, e.held)
	}
}

// logDeletion tells the deletion log, if any, of entry id of sh
// (write-locked), about to be deleted.
func (s *Store) logDeletion(sh *shard, id int, evicted bool) {
	if l := s.g.deletions.Load(); l != nil {
		l.Deleted(s, sh.key(&sh.entries[id]), evicted)
	}
}

// shardIndexOf returns the index of key's shard.
func (s *Store) shardIndexOf(h uint64) int { return int(h >> s.shardShift) }

// ReclaimExpiredRead is ReclaimExpired for a caller that does not hold
// the key's shard index in the deletion log's sense (a read): it enters
// the log without waiting, and leaves the key when refused. On a replica
// it deletes nothing.
func (s *Store) ReclaimExpiredRead(key []byte) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	_, expired := s.lookupRead(sh, uint32(h), key)
	sh.mu.RUnlock()
	if !expired || s.replica() {
		return false
	}
	e, ok := s.enter(s.shardIndexOf(h), false)
	if !ok {
		return false
	}
	done := s.removeExpired(sh, uint32(h), key)
	s.leave(e)
	return done
}

// removeExpired deletes key from sh if it is (still) expired, logging it,
// and reports whether it did.
func (s *Store) removeExpired(sh *shard, h uint32, key []byte) bool {
	l := s.lockShard(sh)
	defer s.unlock(l)
	slot, id := sh.find(h, key)
	if id < 0 || !sh.entries[id].expired(s.nowIfVolatile(&sh.entries[id])) {
		return false // another goroutine got there first
	}
	s.logDeletion(sh, id, false)
	sh.remove(slot, id)
	s.expiredKeys.Add(1)
	return true
}
