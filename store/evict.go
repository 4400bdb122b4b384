package store

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
)

// Policy is the maxmemory eviction policy.
type Policy int

// Eviction policies, named as in redis.conf.
const (
	NoEviction Policy = iota
	AllKeysRandom
	AllKeysLRU
	VolatileLRU
	VolatileTTL
	VolatileRandom
	AllKeysLFU
	VolatileLFU
)

var policyNames = [...]string{"noeviction", "allkeys-random", "allkeys-lru", "volatile-lru", "volatile-ttl",
	"volatile-random", "allkeys-lfu", "volatile-lfu"}

// String returns the redis.conf name of p.
func (p Policy) String() string {
	if p < 0 || int(p) >= len(policyNames) {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// ParsePolicy parses a redis.conf maxmemory-policy name (case-insensitive).
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if strings.EqualFold(s, n) {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unsupported maxmemory-policy %q (supported: %s)", s, strings.Join(policyNames[:], ", "))
}

// Eviction, after Redis's approximate LRU: rather than keep a global LRU list (a pointer
// per key), sample a few keys from random shards and evict the best candidate under the
// policy: the longest idle by the coarse LRU clock, the nearest expiry, or any key.

const (
	evictShardSamples = 5 // shards sampled per eviction
	defaultSamples    = 5 // maxmemory-samples: candidate keys per sampled shard
	// evictScanLimit bounds the entries walked in a shard to find volatile candidates.
	evictScanLimit = 64
)

// reserve makes room for a write of a key and value of n bytes under MaxMemory, evicting
// per the policy. It runs before the write takes its shard lock, because eviction locks
// other shards. It counts the whole new block even for an overwrite: erring high keeps
// used memory under the limit.
func (s *Store) reserve(n int64) error {
	limit := s.g.maxMemory.Load()
	if limit <= 0 {
		return nil
	}
	// Clamp both ways: blockSize indexes a table with small sizes, so a negative n (a
	// caller's sum that wrapped) must not reach it.
	return s.makeRoom(blockSize(int(max(0, min(n, MaxStringLen+1))))+entryOverhead, limit)
}

// makeRoom evicts until need more bytes fit under limit, with the
// external memory counted.
// A replica that ignores maxmemory (DeletionLog.IgnoreMaxMemory) does
// neither.
func (s *Store) makeRoom(need, limit int64) error {
	if s.g.used()+s.g.external.Load()+need <= limit {
		return nil
	}
	if l := s.g.deletions.Load(); l != nil && l.IgnoreMaxMemory() {
		return nil
	}
	for s.g.used()+s.g.external.Load()+need > limit {
		p := Policy(s.g.policy.Load())
		if p == NoEviction || !s.g.evictOne(p) {
			return ErrOOM
		}
	}
	return nil
}

// evictTries bounds the candidates an eviction draws when the deletion log
// refuses the ones it found (their shard indexes are busy with writes).
const evictTries = 16

type evictCandidate struct {
	shard int
	hash  uint32
	score int64 // higher is evicted first
	key   []byte
	found bool
}

// evictOne evicts one key chosen by policy p and reports whether it found one.
func (s *Store) evictOne(p Policy) bool {
	var best evictCandidate
	for try := 0; try < evictTries; try++ {
		if !s.evictCandidate(p, &best) {
			return false
		}
		if s.evict(&best) {
			return true
		}
	}
	return false
}

// evictCandidate samples s's keys for the one policy p evicts first into
// best, and reports whether it found any.
func (s *Store) evictCandidate(p Policy, best *evictCandidate) bool {
	*best = evictCandidate{key: best.key[:0]}
	for t := 0; t < evictShardSamples; t++ {
		s.sampleShard(rand.IntN(len(s.shards)), p, best, false)
	}
	if !best.found { // sparse keyspace: walk every shard before giving up
		for i := range s.shards {
			if s.sampleShard(i, p, best, true); best.found {
				break
			}
		}
	}
	return best.found
}

// evict removes the candidate, if it is still there, and reports false
// when the deletion log refused it: another should be drawn. The log is
// entered without waiting, since the write that evicts holds shard
// indexes of its own.
func (s *Store) evict(c *evictCandidate) bool {
	en, ok := s.enter(c.shard, false)
	if !ok {
		return false
	}
	sh := &s.shards[c.shard]
	l := s.lockShard(sh)
	if slot, id := sh.find(c.hash, c.key); id >= 0 {
		s.removedOnItsOwn(sh, id, true)
		sh.remove(slot, id)
		s.evictedKeys.Add(1)
	}
	s.unlock(l)
	s.leave(en)
	return true
}

// sampleShard offers up to maxmemory-samples keys of shard i to best. full walks the
// whole shard instead of a bounded stretch from a random start.
func (s *Store) sampleShard(i int, p Policy, best *evictCandidate, full bool) {
	sh := &s.shards[i]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	n := len(sh.entries)
	volatileOnly := p == VolatileLRU || p == VolatileTTL || p == VolatileRandom || p == VolatileLFU
	if sh.count == 0 || (volatileOnly && sh.volatile == 0) {
		return
	}
	clock := s.lruClock()
	limit := evictScanLimit
	if full {
		limit = n
	}
	start := rand.IntN(n)
	taken := 0
	samples := int(s.g.samples.Load())
	for k := 0; k < limit && taken < samples; k++ {
		id := start + k
		if !volatileOnly {
			id = rand.IntN(n) // all entries qualify: sample at random, not a stretch
		}
		e := &sh.entries[id%n]
		meta := atomic.LoadUint32(&e.meta) // readers update the LRU clock concurrently
		if uint8(meta>>24) == kindFree {
			continue
		}
		if volatileOnly && e.expireAt() == 0 {
			continue
		}
		var score int64
		switch p {
		case AllKeysLRU, VolatileLRU:
			score = int64((clock - meta) & lruMask) // idle seconds, wrap-safe
		case VolatileTTL:
			score = -e.expireAt()
		case AllKeysLFU, VolatileLFU:
			score = 255 - int64(s.lfuDecayed(meta&lruMask)) // the least used first
		}
		taken++
		if !best.found || score > best.score {
			best.found, best.shard, best.hash, best.score = true, i, e.hash, score
			best.key = append(best.key[:0], sh.key(e)...)
		}
	}
}
