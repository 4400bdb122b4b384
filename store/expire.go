package store

import (
	"math"
	"time"
)

// Active expiry, after Redis's activeExpireCycle: hz times a second (every 100 ms by
// default) a cycle walks every shard that has keys with a TTL, examining up to
// expireSample of them from where the last walk stopped and deleting the expired ones; a
// shard is walked again while more than a quarter of its sample had expired, until the
// cycle's time budget, a quarter of the interval, runs out. active-expire-effort (1-10)
// raises all three as Redis's does: each extra step samples a quarter more keys, allows
// 2% more of the interval, and walks a shard again at 2% fewer expired.

const (
	expireSample = 20
	// expireScanPerSample bounds the entries looked at to find one sample in a shard
	// where few keys have a TTL.
	expireScanPerSample = 20
)

// SetHz sets how often the active expirer runs, hz cycles a second (1-500), for
// every database of s's group.
func (s *Store) SetHz(hz int) {
	s.g.expireEvery.Store(int64(time.Second) / int64(min(max(hz, 1), 500)))
}

// SetExpireEffort sets how hard each active expiry cycle works
// (active-expire-effort, 1-10), for every database of s's group.
func (s *Store) SetExpireEffort(effort int) { s.g.expireEffort.Store(int64(min(max(effort, 1), 10))) }

// ActiveExpire returns hz and active-expire-effort as SetHz and SetExpireEffort took
// them (hz 10 unless set; 0 while the expirer is off by Options.ActiveExpireInterval).
func (s *Store) ActiveExpire() (hz, effort int) {
	every := s.g.expireEvery.Load()
	if every > 0 {
		hz = min(max(int((int64(time.Second)+every/2)/every), 1), 500)
	}
	return hz, int(s.g.expireEffort.Load())
}

// expireBudget is the wall time of one cycle run every interval.
func (s *Store) expireBudget(every time.Duration) time.Duration {
	return every * time.Duration(25+2*(s.g.expireEffort.Load()-1)) / 100
}

// activeExpire runs one cycle within budget of wall time.
// Nothing is done while DEBUG SET-ACTIVE-EXPIRE 0 turned it off, or on a
// replica, whose keys go when its primary deletes them.
func (s *Store) activeExpire(budget time.Duration) {
	if s.g.activeExpireOff.Load() || s.replica() {
		return
	}
	deadline := time.Now().Add(budget)
	extra := int(s.g.expireEffort.Load() - 1)
	sample := expireSample + expireSample/4*extra
	stalePercent := 25 - 2*extra
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		volatile := sh.volatile
		sh.mu.RUnlock()
		if volatile == 0 {
			continue
		}
		e, _ := s.enter(i, true) // the expirer holds no other: it may wait
		l := s.lockShard(sh)
		for sh.volatile > 0 {
			var ttls ttlSample
			sampled, expired := s.expireStep(sh, s.now(), sample, &ttls)
			s.noteTTLs(ttls)
			if sampled == 0 || expired*100 <= sampled*stalePercent || time.Now().After(deadline) {
				break
			}
		}
		s.unlock(l)
		s.leave(e)
		if time.Now().After(deadline) {
			return
		}
	}
}

// ttlSample sums the time to live of the keys one expiry step met alive;
// in floating point, since TTLs near the int64 limit (PEXPIREAT far in the
// future) would overflow an integer sum.
type ttlSample struct {
	sum float64
	n   int64
}

// noteTTLs folds a step's sample into the running estimate of avg_ttl as
// Redis's activeExpireCycle does: each new average weighs 1/50.
func (s *Store) noteTTLs(t ttlSample) {
	if t.n == 0 {
		return
	}
	avg := int64(min(t.sum/float64(t.n), math.MaxInt64/2))
	if old := s.avgTTL.Load(); old != 0 {
		avg = old/50*49 + avg/50
	}
	s.avgTTL.Store(avg)
}

// expireStep examines up to sample keys with a TTL in sh (write-locked) and deletes the
// expired ones; ttls gets the time to live of those it keeps.
func (s *Store) expireStep(sh *shard, now int64, sample int, ttls *ttlSample) (sampled, expired int) {
	for scanned := 0; scanned < sample*expireScanPerSample && sampled < sample && sh.volatile > 0; scanned++ {
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
		} else {
			ttls.sum += float64(e.expireAt() - now)
			ttls.n++
		}
	}
	return sampled, expired
}

// purgeExpired deletes every expired key of sh (write-locked, entered in the deletion
// log: purgeShard) unless the shard's lower bound on expiry times shows there is none,
// and recomputes that bound.
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

// purgeShard purges shard i if the deletion log lets it without waiting (the caller
// may run inside a write that holds other shard indexes), and reports whether it did.
// A replica purges nothing.
func (s *Store) purgeShard(i int, now int64) bool {
	if s.replica() {
		return false
	}
	e, ok := s.enter(i, false)
	if !ok {
		return false
	}
	sh := &s.shards[i]
	l := s.lockShard(sh)
	s.purgeExpired(sh, now)
	s.unlock(l)
	s.leave(e)
	return true
}
