package store

import "sync/atomic"

// Batched lookups. A read of a key the CPU caches do not hold costs three or four
// dependent cache misses: the index slot, then the entry it names, then the arena's
// page table and the key and value bytes (shard.find, then the caller's copy). One
// command after another, a pipeline of reads pays them in series. Prefetch, given
// the keys of a window of the pipeline before the commands run, loads each level for
// every key before going one level down, so that the misses of different keys are
// in flight together (the loads of one stage do not depend on each other); the
// commands then find their slots, entries and blocks in the cache. Go has no
// prefetch instruction, so the touches are ordinary loads whose sum is returned to
// keep the compiler from dropping them.

// PrefetchMax is the most keys one Prefetch call looks at; later keys are ignored.
const PrefetchMax = 16

// PrefetchMinBytes is the accounted memory below which PrefetchPays says no:
// a keyspace that small mostly stays in the CPU caches, where a prefetch is
// all cost (about 40 ns a key: the hash, the lock, the loads).
const PrefetchMinBytes = 2 << 20

// PrefetchPays reports whether the keyspace is large enough (PrefetchMinBytes)
// for its lookups to miss the CPU caches, so that Prefetch saves more than it
// costs.
func (s *Store) PrefetchPays() bool { return s.used.Load() >= PrefetchMinBytes }

// Prefetch brings into the CPU caches what a lookup of each of keys will read: its
// index slot, its entry and its key and value bytes. It changes nothing, counts no
// hit or miss and never waits: a shard whose read lock is not free at once (a
// writer holds or awaits it) is skipped. The result means nothing; callers may
// ignore it.
func (s *Store) Prefetch(keys [][]byte) uint32 {
	n := min(len(keys), PrefetchMax)
	var (
		hs    [PrefetchMax]uint32
		shs   [PrefetchMax]*shard
		slots [PrefetchMax]uint32
		acc   uint32
	)
	// The locks first: an atomic instruction orders the loads around it, so
	// taking a lock between two keys' loads would serialize their misses.
	for i := range n {
		h := s.hash(keys[i])
		sh := s.shardOf(h)
		if sh.mu.TryRLock() {
			shs[i], hs[i] = sh, uint32(h)
		}
	}
	for i := range n {
		if sh := shs[i]; sh != nil && len(sh.index) > 0 {
			slots[i] = sh.index[int(hs[i])&(len(sh.index)-1)]
		}
	}
	for i := range n {
		sl := slots[i]
		if sl != 0 && sl>>slotIDBits != hs[i]>>slotIDBits {
			// Displaced by a collision: follow the probe a few slots, which
			// are mostly on the line just loaded, to the first with the tag.
			sl = shs[i].probeTag(hs[i])
			slots[i] = sl
		}
		if sl == 0 {
			continue
		}
		// An entry is 28 bytes and may straddle two lines: touch both ends.
		e := &shs[i].entries[int(sl&slotIDMask)-1]
		acc += e.ref + atomic.LoadUint32(&e.meta)
	}
	for i := range n {
		if sl := slots[i]; sl != 0 {
			sh := shs[i]
			e := &sh.entries[int(sl&slotIDMask)-1]
			if b := sh.arena.block(e.ref, e.size()); len(b) > 0 {
				acc += uint32(b[0]) + uint32(b[len(b)-1])
			}
		}
	}
	for i := range n {
		if shs[i] != nil {
			shs[i].mu.RUnlock()
		}
	}
	return acc
}

// probeTag returns the first slot in h's probe run, among its first
// prefetchProbe, that carries h's tag; 0 if none.
func (sh *shard) probeTag(h uint32) uint32 {
	mask := len(sh.index) - 1
	for i, k := int(h)&mask, 0; k < prefetchProbe; i, k = (i+1)&mask, k+1 {
		s := sh.index[i]
		if s == 0 {
			return 0
		}
		if s>>slotIDBits == h>>slotIDBits {
			return s
		}
	}
	return 0
}

// prefetchProbe bounds the slots probeTag looks at.
const prefetchProbe = 8
