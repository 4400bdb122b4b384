package store

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Databases. Redis numbers its keyspaces (SELECT 0-15); a Store is one of
// them, and NewDB makes another that shares its limits: one maxmemory for
// all, one eviction policy, one loading mode, and eviction that takes keys
// from whichever database has them, as Redis's does. Each database keeps its
// own shards, counters and expirer, so one that is never written costs a
// Store header and nothing per key.

// group is what the databases of one server share.
type group struct {
	maxMemory atomic.Int64
	policy    atomic.Int32
	external  atomic.Int64 // SetExternalMemory: memory outside the store that counts against maxMemory
	loading   atomic.Bool  // SetLoading: the clock reads 0 and nothing expires
	frozen    atomic.Int64 // FreezeClock: the unix ms every database reads (0: the clock runs)

	deletions       atomic.Pointer[DeletionLog] // SetDeletionLog (deletions.go)
	activeExpireOff atomic.Bool                 // SetActiveExpire(false)

	expireEvery  atomic.Int64 // nanoseconds between active expiry cycles (1s/hz; ≤ 0: none)
	expireEffort atomic.Int64 // active-expire-effort, 1..10
	samples      atomic.Int64 // maxmemory-samples
	lfuLogFactor atomic.Int64 // lfu-log-factor
	lfuDecayTime atomic.Int64 // lfu-decay-time, minutes

	mu      sync.Mutex
	members atomic.Pointer[[]*Store] // every database, in creation order
}

// storeSeq numbers Stores in creation order.
var storeSeq atomic.Uint64

func (g *group) join(s *Store) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next []*Store
	if old := g.members.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, s)
	g.members.Store(&next)
}

// used is the memory every database of the group uses.
func (g *group) used() int64 {
	var n int64
	for _, s := range *g.members.Load() {
		n += s.used.Load()
	}
	return n
}

// evictOne evicts one key by policy p from whichever database holds the
// best candidate: each database that has keys offers its own, and the
// highest score wins (for the random policies, whichever database comes
// first from a random start). With one database it is that database's.
func (g *group) evictOne(p Policy) bool {
	members := *g.members.Load()
	if len(members) == 1 {
		return members[0].evictOne(p)
	}
	for try := 0; try < evictTries; try++ {
		var best, c evictCandidate
		var from *Store
		start := rand.IntN(len(members))
		for i := range members {
			s := members[(start+i)%len(members)]
			if s.used.Load() == 0 || !s.evictCandidate(p, &c) {
				continue
			}
			if from == nil || c.score > best.score {
				from = s
				best, c = c, evictCandidate{key: best.key[:0]}
			}
		}
		if from == nil {
			return false
		}
		if from.evict(&best) {
			return true
		}
	}
	return false
}

// NewDB returns a new, empty database beside s: configured as s was, and
// sharing s's memory limit, eviction policy, external memory and loading
// mode (setting one on either sets it for both). Close it as any Store.
func (s *Store) NewDB() *Store {
	return newStore(s.opts, s.g)
}

// SameGroup reports whether s and o are databases of one group (NewDB).
func (s *Store) SameGroup(o *Store) bool { return s.g == o.g }

// CopyTo copies src's value and TTL in s to dstKey in dst, another database
// of the group (COPY ... DB). It reports false, changing nothing, when src
// is missing or dstKey exists in dst and replace is false. dst may be s.
func (s *Store) CopyTo(dst *Store, src, dstKey []byte, replace bool) (bool, error) {
	if dst == s {
		return s.Copy(src, dstKey, replace)
	}
	return s.transfer(dst, src, dstKey, replace, false)
}

// MoveTo moves key from s to dst, another database of the group (MOVE): it
// reports false, changing nothing, when key is missing in s or exists in
// dst. The value keeps its TTL.
func (s *Store) MoveTo(dst *Store, key []byte) (bool, error) {
	if dst == s {
		panic("store: MoveTo its own database")
	}
	return s.transfer(dst, key, key, false, true)
}

// transfer copies src in s to dstKey in dst (s != dst), and with move
// deletes src. Both shards are locked in database creation order, so two
// transfers between the same pair of databases cannot wait on each other.
func (s *Store) transfer(dst *Store, src, dstKey []byte, replace, move bool) (bool, error) {
	if !s.SameGroup(dst) {
		panic("store: transfer between databases of different groups")
	}
	sh, dh := s.hash(src), dst.hash(dstKey)
	ssh, dsh := s.shardOf(sh), dst.shardOf(dh)
	var sl, dl shardLock
	if s.seq < dst.seq {
		sl, dl = s.lockShard(ssh), dst.lockShard(dsh)
	} else {
		dl, sl = dst.lockShard(dsh), s.lockShard(ssh)
	}
	defer func() {
		if s.seq < dst.seq {
			dst.unlock(dl)
			s.unlock(sl)
		} else {
			s.unlock(sl)
			dst.unlock(dl)
		}
	}()
	sslot, sid := s.lookupWrite(ssh, uint32(sh), src)
	if sid < 0 {
		return false, nil
	}
	dslot, did := dst.lookupWrite(dsh, uint32(dh), dstKey)
	if did >= 0 {
		if !replace {
			return false, nil
		}
		dsh.remove(dslot, did)
	}
	e := ssh.entries[sid]
	var nid int
	var ok bool
	if isObject(e.kind()) {
		o := ssh.objectOf(&e)
		if !move {
			o = o.Clone()
		}
		nid, ok = dsh.putObject(uint32(dh), dstKey, o, dst.stamp())
	} else {
		nid, ok = dsh.insert(uint32(dh), dstKey, int(e.vlen), e.kind(), dst.stamp())
		if ok {
			copy(dsh.val(&dsh.entries[nid]), ssh.val(&e))
		}
	}
	if !ok {
		return false, ErrOOM
	}
	dsh.setExpiry(&dsh.entries[nid], e.expireAt())
	if move {
		ssh.remove(sslot, sid) // the object, if any, is dst's now: remove only drops the reference
	}
	return true, nil
}
