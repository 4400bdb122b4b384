package store

import (
	"math/rand/v2"
	"sync/atomic"
)

// LFU, after Redis's: under allkeys-lfu and volatile-lfu an entry's 24
// clock bits hold, instead of its last access in seconds, the minute of
// its last decrement (16 bits) and a logarithmic access counter (8 bits).
// An access first decays the counter by one per lfu-decay-time minutes
// since, then increments it with probability 1/((counter-5)*lfu-log-factor+1),
// so 255 means about a million accesses at the default factor 10. A new key
// starts at 5, so it is not evicted before it had a chance to be read.
// Switching between an LRU and an LFU policy reinterprets the bits, as in
// Redis: the data takes a while to adjust.

const (
	lfuInitVal = 5
	lfuMinutes = 1<<16 - 1
)

// isLFU reports whether p keeps access frequencies.
func (p Policy) isLFU() bool { return p == AllKeysLFU || p == VolatileLFU }

// SetLFU sets lfu-log-factor and lfu-decay-time (minutes) for the group.
func (s *Store) SetLFU(logFactor, decayMinutes int64) {
	s.g.lfuLogFactor.Store(logFactor)
	s.g.lfuDecayTime.Store(decayMinutes)
}

// LFU returns lfu-log-factor and lfu-decay-time.
func (s *Store) LFU() (logFactor, decayMinutes int64) {
	return s.g.lfuLogFactor.Load(), s.g.lfuDecayTime.Load()
}

// lfuMinute is the 16-bit minute clock.
func (s *Store) lfuMinute() uint32 { return uint32(s.now()/60000) & lfuMinutes }

// stamp is the clock bits of a new entry: its LRU time, or under an LFU
// policy the current minute and the initial counter.
func (s *Store) stamp() uint32 {
	if Policy(s.g.policy.Load()).isLFU() {
		return s.lfuMinute()<<8 | lfuInitVal
	}
	return s.lruClock()
}

// lfuDecayed returns the counter of clock bits b after the decay due now.
func (s *Store) lfuDecayed(b uint32) uint32 {
	counter := b & 0xff
	decay := s.g.lfuDecayTime.Load()
	if decay <= 0 {
		return counter
	}
	last, now := b>>8&lfuMinutes, s.lfuMinute()
	elapsed := now - last
	if now < last {
		elapsed = lfuMinutes - last + now
	}
	periods := int64(elapsed) / decay
	if periods >= int64(counter) {
		return 0
	}
	return counter - uint32(periods)
}

// lfuTouch returns the clock bits after one access.
func (s *Store) lfuTouch(b uint32) uint32 {
	counter := s.lfuDecayed(b)
	if counter < 255 {
		base := float64(int(counter) - lfuInitVal)
		if base < 0 {
			base = 0
		}
		if rand.Float64() < 1/(base*float64(s.g.lfuLogFactor.Load())+1) {
			counter++
		}
	}
	return s.lfuMinute()<<8 | counter
}

// touchLFU records an access under an LFU policy.
func (s *Store) touchLFU(e *entry) {
	m := atomic.LoadUint32(&e.meta)
	atomic.StoreUint32(&e.meta, m&^lruMask|s.lfuTouch(m&lruMask))
}

// Frequency returns key's access counter as OBJECT FREQ reports it (after
// the decay due now); found=false when it is missing. It means something
// only under an LFU policy, and reading it is not an access.
func (s *Store) Frequency(key []byte) (freq int64, found bool) {
	found = s.peek(key, func(_ *shard, e *entry) {
		freq = int64(s.lfuDecayed(atomic.LoadUint32(&e.meta) & lruMask))
	})
	return freq, found
}

// SetSamples sets maxmemory-samples: the keys each eviction weighs per
// sampled shard.
func (s *Store) SetSamples(n int64) { s.g.samples.Store(max(n, 1)) }

// Samples returns maxmemory-samples.
func (s *Store) Samples() int64 { return s.g.samples.Load() }
