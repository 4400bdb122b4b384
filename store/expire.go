package store

import "time"

// Active expiry, after Redis's activeExpireCycle: each tick walks every shard that has
// keys with a TTL, examining up to expireSample of them from where the last walk stopped
// and deleting the expired ones; a shard is walked again while more than a quarter of its
// sample had expired, until the tick's time budget runs out.

const (
	expireSample = 20
	// expireScanLimit bounds the entries looked at to find one sample in a shard where
	// few keys have a TTL.
	expireScanLimit = expireSample * 20
)

// activeExpire runs one cycle within budget of wall time.
func (s *Store) activeExpire(budget time.Duration) {
	deadline := time.Now().Add(budget)
	for i := range s.shards {
		sh := &s.shards[i]
		l := s.lockShard(sh)
		for sh.volatile > 0 {
			sampled, expired := s.expireStep(sh, s.now())
			if sampled == 0 || expired*4 <= sampled || time.Now().After(deadline) {
				break
			}
		}
		s.unlock(l)
		if time.Now().After(deadline) {
			return
		}
	}
}

// expireStep examines up to expireSample keys with a TTL in sh (write-locked) and
// deletes the expired ones.
func (s *Store) expireStep(sh *shard, now int64) (sampled, expired int) {
	for scanned := 0; scanned < expireScanLimit && sampled < expireSample && sh.volatile > 0; scanned++ {
		i := sh.expireCursor
		if i >= len(sh.entries) {
			i = 0
		}
		sh.expireCursor = i + 1
		e := &sh.entries[i]
		if e.meta>>24 == uint32(kindFree) || e.expireAt() == 0 {
			continue
		}
		sampled++
		if e.expired(now) {
			expired++
			s.removedOnItsOwn(sh, i, false)
			slot, _ := sh.find(e.hash, sh.key(e))
			sh.remove(slot, i) // may compact entries; it then resets expireCursor
			s.expiredKeys.Add(1)
		}
	}
	return sampled, expired
}

// purgeExpired deletes every expired key of sh (write-locked) unless the shard's lower
// bound on expiry times shows there is none, and recomputes that bound.
func (s *Store) purgeExpired(sh *shard, now int64) {
	if sh.nextExpiry == 0 || now <= sh.nextExpiry {
		return
	}
	for i := 0; i < len(sh.entries); i++ {
		e := &sh.entries[i]
		if e.meta>>24 == uint32(kindFree) || !e.expired(now) {
			continue
		}
		n := len(sh.entries)
		s.removedOnItsOwn(sh, i, false)
		slot, _ := sh.find(e.hash, sh.key(e))
		sh.remove(slot, i)
		s.expiredKeys.Add(1)
		if len(sh.entries) != n { // compacted: ids moved, start over
			i = -1
		}
	}
	next := int64(0)
	for i := range sh.entries {
		if t := sh.entries[i].expireAt(); t != 0 && sh.entries[i].meta>>24 != uint32(kindFree) && (next == 0 || t < next) {
			next = t
		}
	}
	sh.nextExpiry = next
}

// needsPurge reports, under at least a read lock, whether sh may hold expired keys.
func (sh *shard) needsPurge(now int64) bool {
	return sh.nextExpiry != 0 && now > sh.nextExpiry
}
