package store

import (
	"slices"
	"sync"
)

// multiLock holds the shards of a multi-key operation. Shards are locked in ascending
// index order, so two multi-key operations can never wait on each other in a cycle.
type multiLock struct {
	hash  []uint64 // per key
	shard []int    // per key
	order []int    // distinct shard indices, ascending
	write bool
	// before is the memory the locked shards used when a write locked them;
	// unlock publishes the change, as shardLock does for one shard.
	before int64

	hashBuf  [8]uint64
	shardBuf [8]int
	orderBuf [8]int
}

// multiLocks recycles multiLocks: one points into its own arrays, which
// makes a local one escape to the heap, and every multi-key command would
// allocate it.
var multiLocks = sync.Pool{New: func() any { return new(multiLock) }}

// maxPooledKeys bounds the per-key slices a pooled multiLock keeps, so one
// huge MGET does not pin its index memory for good.
const maxPooledKeys = 1024

// lockKeys hashes keys[0], keys[stride], ... and locks their shards. The
// caller releases the locks and the multiLock with unlock.
func (s *Store) lockKeys(keys [][]byte, stride int, write bool) *multiLock {
	ml := multiLocks.Get().(*multiLock)
	n := (len(keys) + stride - 1) / stride
	ml.hash, ml.shard, ml.order = ml.hashBuf[:0], ml.shardBuf[:0], ml.orderBuf[:0]
	ml.write = write
	for i := 0; i < len(keys); i += stride {
		h := s.hash(keys[i])
		idx := int(h >> s.shardShift)
		ml.hash = append(ml.hash, h)
		ml.shard = append(ml.shard, idx)
		if n <= len(ml.orderBuf) {
			if !slices.Contains(ml.order, idx) {
				ml.order = append(ml.order, idx)
			}
		}
	}
	if n > len(ml.orderBuf) {
		ml.order = append(ml.order, ml.shard...)
		slices.Sort(ml.order)
		ml.order = slices.Compact(ml.order)
	} else {
		slices.Sort(ml.order)
	}
	for _, i := range ml.order {
		if write {
			s.shards[i].mu.Lock()
		} else {
			s.shards[i].mu.RLock()
		}
	}
	if write {
		ml.before = s.usedOf(ml.order)
	}
	return ml
}

// usedOf sums the memory used by the given shards; the caller holds their locks.
func (s *Store) usedOf(shards []int) int64 {
	var n int64
	for _, i := range shards {
		n += s.shards[i].used
	}
	return n
}

// unlock releases the shards and returns ml to the pool; ml is not used after.
func (ml *multiLock) unlock(s *Store) {
	if ml.write {
		s.account(s.usedOf(ml.order) - ml.before)
	}
	for i := len(ml.order) - 1; i >= 0; i-- {
		if ml.write {
			s.shards[ml.order[i]].mu.Unlock()
		} else {
			s.shards[ml.order[i]].mu.RUnlock()
		}
	}
	if cap(ml.hash) > maxPooledKeys || cap(ml.order) > maxPooledKeys {
		return
	}
	multiLocks.Put(ml)
}
