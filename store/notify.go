package store

import (
	"sync"
	"sync/atomic"
)

// What the store removes on its own, not at a caller's request, it reports
// to a hook: keys whose TTL ran out found by the active expiry cycle or a
// walk of a shard (SCAN, KEYS), and keys evicted under maxmemory. The
// command layer publishes keyspace notifications ("expired", "evicted")
// and invalidates client-side caches with it. Nobody listening costs one
// atomic load per removal, and nothing on the paths of reads and writes.
//
// Keys that expire under a caller's lookup are the caller's to report:
// ReclaimExpired removes one and says so, so that the command about to run
// can publish "expired" before its own events, as Redis does.

// RemoveHook is told of a key s removed on its own: evicted, or expired.
// It runs under the key's shard lock, on whatever goroutine removed it (a
// store's background expirer, or a write that evicted to make room): key
// is valid only during the call, and the hook must not call into any store
// of the group.
type RemoveHook func(s *Store, key []byte, evicted bool)

// removeHooks holds the hook of each group that has one. count is the fast
// test of the removal paths: zero while no group has a hook.
var removeHooks struct {
	count   atomic.Int32
	mu      sync.Mutex
	byGroup atomic.Pointer[map[*group]RemoveHook]
}

// SetRemoveHook makes fn the hook of every database of s's group (NewDB);
// nil removes it. Set it before the keys it should hear of are removed.
func (s *Store) SetRemoveHook(fn RemoveHook) {
	removeHooks.mu.Lock()
	defer removeHooks.mu.Unlock()
	next := make(map[*group]RemoveHook)
	if old := removeHooks.byGroup.Load(); old != nil {
		for g, h := range *old {
			next[g] = h
		}
	}
	if fn == nil {
		delete(next, s.g)
	} else {
		next[s.g] = fn
	}
	removeHooks.byGroup.Store(&next)
	removeHooks.count.Store(int32(len(next)))
}

// removedOnItsOwn tells the group's hook and deletion log, if any, that
// the entry id of sh (write-locked) is about to be removed. Call it before sh.remove, while
// the key's bytes are still there.
func (s *Store) removedOnItsOwn(sh *shard, id int, evicted bool) {
	s.logDeletion(sh, id, evicted)
	if removeHooks.count.Load() == 0 {
		return
	}
	m := removeHooks.byGroup.Load()
	if m == nil {
		return
	}
	if fn := (*m)[s.g]; fn != nil {
		fn(s, sh.key(&sh.entries[id]), evicted)
	}
}

// ReclaimExpired removes key if its TTL has run out and reports whether
// it did: a lookup by a command would have found it expired. The hook is
// not told: the caller reports it; the deletion log is, as for a write's
// own lookup (the caller holds the key's shard index in its sense). It
// deletes also on a replica: what a write of a replica's own client does,
// as Redis's writable replicas. A key that is missing or alive costs a
// read lock.
func (s *Store) ReclaimExpired(key []byte) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	_, expired := s.lookupRead(sh, uint32(h), key)
	sh.mu.RUnlock()
	if !expired {
		return false
	}
	return s.removeExpired(sh, uint32(h), key)
}

// DelEach deletes keys as Del does and sets deleted[i] for each key i that
// existed (DEL's "del" event is per key). deleted must be as long as keys.
func (s *Store) DelEach(keys [][]byte, deleted []bool) int {
	return s.delEach(keys, deleted)
}

// KeyExists reports whether key exists (and has not expired), without
// touching it: what a command checks before a write when it must tell a
// new key from an old one.
func (s *Store) KeyExists(key []byte) bool {
	return s.peek(key, func(*shard, *entry) {})
}
