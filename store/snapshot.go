package store

// Shard-level access for persistence: an append-only file needs to order
// the writes to one shard, copy a shard consistently while the others keep
// serving, and replay its log without expiring keys mid-way.

// ShardCount returns the number of shards.
func (s *Store) ShardCount() int { return len(s.shards) }

// ShardIndex returns the index (0 ≤ i < ShardCount) of the shard holding key.
func (s *Store) ShardIndex(key []byte) int { return int(s.hash(key) >> s.shardShift) }

// SnapshotShard calls visit for every live string key of shard i, and
// visitObject (when not nil) for every live collection, under the shard's read
// lock, so the shard is seen at one instant: writes to it wait until
// SnapshotShard returns. key, val and o are valid only during the call;
// expireAt is unix ms, 0 for none.
func (s *Store) SnapshotShard(i int, visit func(key, val []byte, expireAt int64), visitObject func(key []byte, o Object, expireAt int64)) {
	sh := &s.shards[i]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	now := s.now()
	for id := range sh.entries {
		e := &sh.entries[id]
		if e.kind() == kindFree || e.expired(now) {
			continue
		}
		if isObject(e.kind()) {
			if visitObject != nil {
				visitObject(sh.key(e), sh.objectOf(e), e.expireAt())
			}
			continue
		}
		visit(sh.key(e), sh.val(e), e.expireAt())
	}
}

// SetLoading turns loading mode on or off. While loading, the store's clock
// reads 0, so no key expires: a log replayed later than it was written must
// rebuild the keyspace as it was, keys past their expiry included, and
// expire them after the load, as Redis does (a write that met an expired
// key was logged after a DEL of it, so the replay meets it deleted too).
func (s *Store) SetLoading(on bool) { s.g.loading.Store(on) }

// FreezeClock makes every database of s's group read the time as at (unix ms,
// not 0) until ThawClock: keys expire as of that instant, no later, for lookups and
// the active expirer alike. Redis stops time so while a script runs, so that a key
// cannot expire between two of the script's commands.
func (s *Store) FreezeClock(at int64) { s.g.frozen.Store(at) }

// ThawClock lets the clock FreezeClock stopped run again.
func (s *Store) ThawClock() { s.g.frozen.Store(0) }
