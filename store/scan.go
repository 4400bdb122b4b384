package store

import (
	"math/bits"
	"math/rand/v2"
)

// keyBuf hands out copies of keys carved from shared chunks, so listing many keys costs
// one allocation per chunk plus the result slice, not one per key.
type keyBuf struct{ chunk []byte }

func (b *keyBuf) copy(k []byte) []byte {
	if len(k) > cap(b.chunk)-len(b.chunk) {
		if len(k) > 4096 {
			return append([]byte(nil), k...)
		}
		b.chunk = make([]byte, 0, 16384)
	}
	n := len(b.chunk)
	b.chunk = append(b.chunk, k...)
	return b.chunk[n:len(b.chunk):len(b.chunk)]
}

// Keys returns copies of every live key matching the Redis glob pattern. Each shard is
// listed atomically; the whole keyspace is not (a concurrent write may or may not show).
func (s *Store) Keys(pattern []byte) [][]byte {
	var out [][]byte
	var buf keyBuf
	matchAll := string(pattern) == "*"
	now := s.now()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for id := range sh.entries {
			e := &sh.entries[id]
			if e.kind() == kindFree || e.expired(now) {
				continue
			}
			if k := sh.key(e); matchAll || Match(pattern, k) {
				out = append(out, buf.copy(k))
			}
		}
		sh.mu.RUnlock()
	}
	return out
}

// Scan returns some keys and the cursor to continue from; 0 starts and ends a scan.
// A key present for the whole scan is returned at least once (maybe more), however the
// shards grow or shrink between calls: the cursor's low bits are the shard index and the
// rest is Redis's reverse-binary bucket cursor over that shard's power-of-two index, where
// a bucket is every key whose home slot it is. count (default 10) bounds the keys looked
// at, before match and typ ("" = any) filter them, like Redis's COUNT.
func (s *Store) Scan(cursor uint64, match []byte, count int, typ string) (next uint64, keys [][]byte) {
	if count <= 0 {
		count = 10
	}
	shardBits := 64 - s.shardShift
	shardMask := uint64(len(s.shards) - 1)
	si := int(cursor & shardMask)
	c := cursor >> shardBits
	var buf keyBuf
	now := s.now()
	visited := 0
	for {
		sh := &s.shards[si]
		sh.mu.RLock()
		for len(sh.index) > 0 {
			mask := uint64(len(sh.index) - 1)
			keys, visited = s.scanBucket(sh, int(c&mask), now, match, typ, keys, visited, &buf)
			c = nextCursor(c, mask)
			if c == 0 {
				break
			}
			if visited >= count {
				sh.mu.RUnlock()
				return c<<shardBits | uint64(si), keys
			}
		}
		sh.mu.RUnlock()
		si, c = si+1, 0
		if si == len(s.shards) {
			return 0, keys
		}
		if visited >= count {
			return uint64(si), keys
		}
	}
}

// scanBucket appends the keys whose home slot is b. With linear probing and backward-
// shift deletion they all sit in the run of occupied slots starting at b.
func (s *Store) scanBucket(sh *shard, b int, now int64, match []byte, typ string, keys [][]byte, visited int, buf *keyBuf) ([][]byte, int) {
	mask := len(sh.index) - 1
	for i := b; ; i = (i + 1) & mask {
		slot := sh.index[i]
		if slot == 0 {
			return keys, visited
		}
		e := &sh.entries[int(slot&slotIDMask)-1]
		if int(e.hash)&mask != b {
			continue
		}
		visited++
		if e.expired(now) || (typ != "" && kindName(e.kind()) != typ) {
			continue
		}
		if k := sh.key(e); len(match) == 0 || Match(match, k) {
			keys = append(keys, buf.copy(k))
		}
	}
}

// nextCursor advances a reverse-binary cursor over a table of mask+1 buckets, as
// Redis's dictScan does: incrementing the reversed bits visits every bucket of a table
// and, after the table doubles or halves, no bucket whose keys were not yet returned is
// skipped.
func nextCursor(c, mask uint64) uint64 {
	c |= ^mask
	c = bits.Reverse64(c)
	c++
	return bits.Reverse64(c)
}

// RandomKey returns a copy of a random live key, or false if there is none.
func (s *Store) RandomKey() ([]byte, bool) {
	now := s.now()
	for try := 0; try < 64; try++ {
		if k, ok := s.randomIn(&s.shards[rand.IntN(len(s.shards))], now, 8); ok {
			return k, true
		}
	}
	// Sparse or mostly expired keyspace: purge and walk the shards from a random one.
	start := rand.IntN(len(s.shards))
	for j := range s.shards {
		i := (start + j) % len(s.shards)
		sh := &s.shards[i]
		s.purgeShard(i, now)
		if k, ok := s.randomIn(sh, now, len(sh.entries)*4+8); ok {
			return k, true
		}
	}
	return nil, false
}

// randomIn tries up to tries random entries of sh for a live key.
func (s *Store) randomIn(sh *shard, now int64, tries int) ([]byte, bool) {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if sh.count == 0 {
		return nil, false
	}
	for t := 0; t < tries; t++ {
		e := &sh.entries[rand.IntN(len(sh.entries))]
		if e.kind() != kindFree && !e.expired(now) {
			return append([]byte(nil), sh.key(e)...), true
		}
	}
	return nil, false
}

// DBSize returns the number of live keys. Shards that may hold expired keys are purged
// first, so the count never includes a key Get would not return; a shard the deletion
// log does not let it purge now has its live keys counted instead. On a replica it
// counts every key held, expired or not, as Redis's replicas do (the primary's DEL
// removes them).
func (s *Store) DBSize() int {
	now := s.now()
	replica := s.replica()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		if replica || !sh.needsPurge(now) {
			n += sh.count
			sh.mu.RUnlock()
			continue
		}
		sh.mu.RUnlock()
		if s.purgeShard(i, now) {
			sh.mu.RLock()
			n += sh.count
			sh.mu.RUnlock()
			continue
		}
		n += countUnexpired(sh, now)
	}
	return n
}

// countUnexpired counts the keys of sh that have not expired at now.
func countUnexpired(sh *shard, now int64) int {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	n := 0
	for id := range sh.entries {
		if e := &sh.entries[id]; e.kind() != kindFree && !e.expired(now) {
			n++
		}
	}
	return n
}

// Flush deletes every key and gives the memory back.
func (s *Store) Flush() {
	for i := range s.shards {
		sh := &s.shards[i]
		l := s.lockShard(sh)
		sh.freeMemory()
		sh.count, sh.volatile, sh.nextExpiry, sh.used = 0, 0, 0, 0
		s.unlock(l) // accounts the shard's whole use as freed
	}
}
