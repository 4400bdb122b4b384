package store

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Options configures a Store. The zero value is a usable default.
type Options struct {
	Shards               int           // power of two, default 256
	MaxMemory            int64         // bytes, 0 = unlimited
	Policy               Policy        // eviction policy when MaxMemory is reached
	Now                  func() int64  // unix milliseconds; default wall clock (tests inject)
	ActiveExpireInterval time.Duration // default 100ms; negative disables the active expirer
}

// Store is a sharded in-memory keyspace. All methods are safe for concurrent use.
type Store struct {
	shards     []shard
	shardShift uint // 64 - log2(len(shards)); the hash's top bits choose the shard

	now       func() int64
	customNow bool
	clock     atomic.Uint32 // cached LRU clock (seconds) when the wall clock is used

	used atomic.Int64 // sum of shard.used, kept by every write

	// g is what this Store shares with the databases NewDB made from it:
	// the memory limit and policy, loading mode (db.go).
	g    *group
	seq  uint64  // creation order: cross-database writes lock in it (db.go)
	opts Options // what NewDB gives a sibling

	expiredKeys atomic.Int64
	evictedKeys atomic.Int64
	// avgTTL is the active expiry's running estimate of the keys' time to
	// live in ms, as Redis's db->avg_ttl (INFO keyspace); the expirer
	// writes it.
	avgTTL atomic.Int64

	// testHash replaces xxhash in tests that force collisions.
	testHash func([]byte) uint64

	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
}

// maxShards keeps shard indices and in-shard scan cursors within one uint64 cursor.
const maxShards = 1 << 16

// lruMask keeps 24 bits of seconds: the LRU clock wraps every 194 days, as in Redis.
const lruMask = 1<<24 - 1

// New returns a Store configured by o and starts its active expirer (stop it with Close).
// It panics if o.Shards is not a power of two up to 65536: that is a programming error.
func New(o Options) *Store {
	g := &group{}
	g.maxMemory.Store(o.MaxMemory)
	g.policy.Store(int32(o.Policy))
	interval := o.ActiveExpireInterval
	if interval == 0 {
		interval = 100 * time.Millisecond
	}
	g.expireEvery.Store(int64(interval))
	g.expireEffort.Store(1)
	g.samples.Store(defaultSamples)
	g.lfuLogFactor.Store(10)
	g.lfuDecayTime.Store(1)
	return newStore(o, g)
}

func newStore(o Options, g *group) *Store {
	n := o.Shards
	if n == 0 {
		n = 256
	}
	if n < 0 || n > maxShards || n&(n-1) != 0 {
		panic(fmt.Sprintf("store: Shards = %d, want a power of two between 1 and %d", o.Shards, maxShards))
	}
	s := &Store{
		shards:     make([]shard, n),
		shardShift: uint(64 - bits.TrailingZeros(uint(n))),
		now:        o.Now,
		customNow:  o.Now != nil,
		stop:       make(chan struct{}),
		g:          g,
		seq:        storeSeq.Add(1),
		opts:       o,
	}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMilli() }
	}
	clock := s.now
	s.now = func() int64 {
		if g.loading.Load() {
			return 0
		}
		if at := g.frozen.Load(); at != 0 {
			return at
		}
		return clock()
	}
	// The shards' memory is off the Go heap: give it back when the Store is dropped.
	runtime.AddCleanup(s, freeShards, s.shards)
	s.clock.Store(uint32(s.now()/1000) & lruMask)
	g.join(s)
	if g.expireEvery.Load() > 0 || !s.customNow {
		s.done.Add(1)
		go s.background()
	}
	return s
}

// freeShards releases the memory of a dropped Store's shards.
func freeShards(shards []shard) {
	for i := range shards {
		shards[i].freeMemory()
	}
}

// Close stops the active expirer and the clock. The Store stays usable (lazy expiry
// still applies).
func (s *Store) Close() {
	s.once.Do(func() { close(s.stop) })
	s.done.Wait()
}

func (s *Store) hash(key []byte) uint64 {
	if s.testHash != nil {
		return s.testHash(key)
	}
	return xxhash.Sum64(key)
}

func (s *Store) shardOf(h uint64) *shard { return &s.shards[h>>s.shardShift] }

// lruClock is the current coarse LRU clock.
func (s *Store) lruClock() uint32 {
	if s.customNow {
		return uint32(s.now()/1000) & lruMask
	}
	return s.clock.Load()
}

// touch records an access to e; it may run under the read lock, hence the atomics, and it
// skips the store when the clock has not moved to keep the cache line shared.
func (s *Store) touch(e *entry) {
	if Policy(s.g.policy.Load()).isLFU() {
		s.touchLFU(e)
		return
	}
	c := s.lruClock()
	m := atomic.LoadUint32(&e.meta)
	if m&lruMask != c {
		atomic.StoreUint32(&e.meta, m&^lruMask|c)
	}
}

// account publishes a shard's change of used memory to the store-wide counter.
func (s *Store) account(delta int64) {
	if delta != 0 {
		s.used.Add(delta)
	}
}

// lookupWrite finds key under sh's write lock, reclaiming it if expired
// (and logging that, as the write's own: deletions.go). On a replica an
// expired key is found as it is: the primary's writes never find a key
// expired, and it deletes its keys itself.
func (s *Store) lookupWrite(sh *shard, h uint32, key []byte) (slot, id int) {
	slot, id = sh.find(h, key)
	if id >= 0 && sh.entries[id].expired(s.nowIfVolatile(&sh.entries[id])) && !s.replica() {
		s.logDeletion(sh, id, false)
		sh.remove(slot, id)
		s.expiredKeys.Add(1)
		return -1, -1
	}
	return slot, id
}

// nowIfVolatile reads the clock only for keys that can expire.
func (s *Store) nowIfVolatile(e *entry) int64 {
	if e.expireAt() == 0 {
		return 0
	}
	return s.now()
}

// lookupRead finds a live key under sh's read lock. An expired key reports expired=true;
// the caller reclaims it with reclaim after dropping the read lock.
func (s *Store) lookupRead(sh *shard, h uint32, key []byte) (id int, expired bool) {
	_, id = sh.find(h, key)
	if id >= 0 && sh.entries[id].expired(s.nowIfVolatile(&sh.entries[id])) {
		return -1, true
	}
	return id, false
}

// readEntry read-locks key's shard and finds key there as an entry of kind k. On
// success it returns the entry with the read lock held for the caller to drop.
// Otherwise it drops the lock and returns a nil entry: with a nil error when key
// is missing (a miss is counted, and an expired key reclaimed), with ErrWrongType
// when key holds another kind.
func (s *Store) readEntry(key []byte, k uint8) (sh *shard, e *entry, err error) {
	h := s.hash(key)
	sh = s.shardOf(h)
	sh.mu.RLock()
	id, expired := s.lookupRead(sh, uint32(h), key)
	if id < 0 {
		sh.mu.RUnlock()
		sh.misses.Add(1)
		if expired {
			s.reclaim(sh, uint32(h), key)
		}
		return sh, nil, nil
	}
	e = &sh.entries[id]
	if e.kind() != k {
		sh.mu.RUnlock()
		return sh, nil, ErrWrongType
	}
	return sh, e, nil
}

// peek runs fn on key's entry under its shard's read lock and reports whether key
// exists. It is no access: nothing is touched or counted as a hit or miss, and an
// expired key is left to expiry.
func (s *Store) peek(key []byte, fn func(sh *shard, e *entry)) (found bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	id, _ := s.lookupRead(sh, uint32(h), key)
	if id < 0 {
		return false
	}
	fn(sh, &sh.entries[id])
	return true
}

// liveIn returns key's entry in sh, whose lock the caller holds, or nil when key is
// missing or expired. now is the clock for a multi-key command: -1 until the first
// key with an expiry reads it, so the command reads it at most once.
func (s *Store) liveIn(sh *shard, h uint32, key []byte, now *int64) *entry {
	_, id := sh.find(h, key)
	if id < 0 {
		return nil
	}
	e := &sh.entries[id]
	if e.expireAt() != 0 && *now < 0 {
		*now = s.now()
	}
	if e.expired(*now) {
		return nil
	}
	return e
}

// reclaim deletes key if it is (still) expired; used after a read saw it
// expired. It enters the deletion log without waiting (a read may run
// inside a write that holds other shard indexes) and leaves the key when
// refused; on a replica it leaves it to the primary.
func (s *Store) reclaim(sh *shard, h uint32, key []byte) {
	if s.replica() {
		return
	}
	e, ok := s.enter(s.shardIndexOf(s.hash(key)), false)
	if !ok {
		return
	}
	s.removeExpired(sh, h, key)
	s.leave(e)
}

// shardLock is a shard held under its write lock together with the memory it used
// when the lock was taken, so that unlock can publish what the write changed. Every
// write goes through lockKey or lockShard and ends with unlock:
//
//	l := s.lockKey(key)
//	defer s.unlock(l)
//	slot, id := s.lookupWrite(l.sh, l.h, key)
type shardLock struct {
	sh     *shard
	h      uint32 // the key's hash (lockKey only)
	before int64
}

// lockKey hashes key and write-locks its shard.
func (s *Store) lockKey(key []byte) shardLock {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.Lock()
	return shardLock{sh: sh, h: uint32(h), before: sh.used}
}

// lockShard write-locks sh for work on the whole shard (expiry, eviction, purges).
func (s *Store) lockShard(sh *shard) shardLock {
	sh.mu.Lock()
	return shardLock{sh: sh, before: sh.used}
}

// unlock publishes the memory the write used or freed and releases the shard.
func (s *Store) unlock(l shardLock) {
	s.account(l.sh.used - l.before)
	l.sh.mu.Unlock()
}

// SetMaxMemory changes the memory limit (0 = unlimited); it applies to the next write.
func (s *Store) SetMaxMemory(n int64) { s.g.maxMemory.Store(n) }

// SetExternalMemory sets how much memory outside the store counts against
// MaxMemory, as Redis counts clients' output buffers in used_memory: a
// write that finds the store's memory plus n over the limit evicts (or,
// under noeviction, fails with ErrOOM) as if the store held it. The
// caller refreshes it as that memory changes; Stats does not include it.
func (s *Store) SetExternalMemory(n int64) { s.g.external.Store(max(n, 0)) }

// Now returns the store's clock in unix milliseconds: the one relative
// expirations are measured against (Options.Now, or the wall clock).
func (s *Store) Now() int64 { return s.now() }

// MaxMemory returns the current memory limit in bytes (0: none).
func (s *Store) MaxMemory() int64 { return s.g.maxMemory.Load() }

// SetPolicy changes the eviction policy.
func (s *Store) SetPolicy(p Policy) { s.g.policy.Store(int32(p)) }

// Policy returns the current eviction policy.
func (s *Store) Policy() Policy { return Policy(s.g.policy.Load()) }

// Stats is a snapshot of keyspace counters, as INFO reports them.
// AvgTTL is the active expiry's running estimate of the time to live of
// the keys with one, in milliseconds (0 until it has sampled some), as
// Redis's INFO keyspace avg_ttl.
type Stats struct{ Keys, Expires, ExpiredKeys, EvictedKeys, Hits, Misses, UsedMemory, AvgTTL int64 }

// Stats returns current counters. Keys excludes expired keys, like DBSize.
func (s *Store) Stats() Stats {
	st := Stats{Keys: int64(s.DBSize())}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		st.Expires += int64(sh.volatile)
		sh.mu.RUnlock()
		st.Hits += sh.hits.Load()
		st.Misses += sh.misses.Load()
	}
	st.ExpiredKeys = s.expiredKeys.Load()
	st.EvictedKeys = s.evictedKeys.Load()
	st.AvgTTL = s.avgTTL.Load()
	st.UsedMemory = s.used.Load()
	return st
}

// background runs the LRU clock and the active expirer until Close.
func (s *Store) background() {
	defer s.done.Done()
	t := time.NewTimer(s.tick())
	defer t.Stop()
	var lastExpire time.Time
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			if !s.customNow {
				s.clock.Store(uint32(s.now()/1000) & lruMask)
			}
			if every := time.Duration(s.g.expireEvery.Load()); every > 0 && now.Sub(lastExpire) >= every {
				lastExpire = now
				s.activeExpire(s.expireBudget(every))
			}
			t.Reset(s.tick())
		}
	}
}

// tick is how often background wakes: every 100 ms for the LRU clock, or
// sooner when hz asks for more expiry cycles than that.
func (s *Store) tick() time.Duration {
	tick := 100 * time.Millisecond
	if every := time.Duration(s.g.expireEvery.Load()); every > 0 {
		tick = min(tick, every)
	}
	return tick
}
