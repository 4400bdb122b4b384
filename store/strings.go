package store

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"math"
	"math/big"
	"strconv"
)

// SetMode is the NX / XX condition of Set.
type SetMode int

// Set conditions.
const (
	SetAlways SetMode = iota
	SetNX             // only if the key does not exist
	SetXX             // only if the key exists
)

// SetOptions are SET's options.
type SetOptions struct {
	Mode     SetMode
	KeepTTL  bool
	ExpireAt int64 // unix ms; 0 = no expiry (the key's TTL is cleared unless KeepTTL)
	Get      bool  // return the old value (SET ... GET); WRONGTYPE if old is not a string
}

// Get appends key's value to dst. found is false for a missing key; err is ErrWrongType
// for a non-string key.
func (s *Store) Get(dst, key []byte) (val []byte, found bool, err error) {
	sh, e, err := s.readEntry(key, kindString)
	if e == nil {
		return dst, false, err
	}
	s.touch(e)
	dst = append(dst, sh.val(e)...)
	sh.mu.RUnlock()
	sh.hits.Add(1)
	return dst, true, nil
}

// Set stores val at key under o's conditions. It appends the old value to dst when o.Get
// and the key existed (old, hadOld); dst comes first as in Get. written reports whether the condition allowed the
// write. An ExpireAt already in the past deletes the key, as Redis 7 does.
func (s *Store) Set(dst, key, val []byte, o SetOptions) (old []byte, hadOld bool, written bool, err error) {
	old = dst
	if err = s.reserve(int64(len(key) + len(val))); err != nil {
		return old, false, false, err
	}
	l := s.lockKey(key)
	old, hadOld, written, err = s.setLocked(l.sh, l.h, key, val, o, old)
	s.unlock(l)
	return old, hadOld, written, err
}

func (s *Store) setLocked(sh *shard, h uint32, key, val []byte, o SetOptions, old []byte) ([]byte, bool, bool, error) {
	slot, id := s.lookupWrite(sh, h, key)
	hadOld := false
	if id >= 0 {
		e := &sh.entries[id]
		if o.Get {
			if e.kind() != kindString {
				return old, false, false, ErrWrongType
			}
			old, hadOld = append(old, sh.val(e)...), true
		}
		if o.Mode == SetNX {
			return old, hadOld, false, nil
		}
		expire := o.ExpireAt
		if o.KeepTTL {
			expire = e.expireAt()
		} else if expire != 0 && expire <= s.now() {
			sh.remove(slot, id)
			return old, hadOld, true, nil
		}
		if isObject(e.kind()) {
			sh.dropObject(e) // SET replaces a value of any kind
			e.meta = uint32(kindString)<<24 | e.meta&lruMask
		}
		if !sh.resize(e, len(val), 0, len(val)) {
			return old, hadOld, false, ErrOOM
		}
		copy(sh.val(e), val)
		e.meta = uint32(kindString)<<24 | e.meta&lruMask
		s.touch(e)
		sh.setExpiry(e, expire)
		return old, hadOld, true, nil
	}
	if o.Mode == SetXX {
		return old, false, false, nil
	}
	if !o.KeepTTL && o.ExpireAt != 0 && o.ExpireAt <= s.now() {
		return old, false, true, nil
	}
	id, ok := sh.insert(h, key, len(val), kindString, s.stamp())
	if !ok {
		return old, false, false, ErrOOM
	}
	e := &sh.entries[id]
	copy(sh.val(e), val)
	if !o.KeepTTL {
		sh.setExpiry(e, o.ExpireAt)
	}
	return old, false, true, nil
}

// GetDel appends key's value to dst and deletes the key.
func (s *Store) GetDel(dst, key []byte) ([]byte, bool, error) {
	return s.getThenUpdate(dst, key, GetExOptions{}, true)
}

// GetExOptions are GETEX's options.
type GetExOptions struct {
	Persist  bool
	ExpireAt int64 // unix ms, 0 = leave the expiry alone
}

// GetEx appends key's value to dst and then changes its expiry per o; an ExpireAt in the
// past deletes the key after reading it.
func (s *Store) GetEx(dst, key []byte, o GetExOptions) ([]byte, bool, error) {
	return s.getThenUpdate(dst, key, o, false)
}

// getThenUpdate is GETEX and GETDEL: read a string under the write lock, then change its
// expiry per o or, with del, delete it.
func (s *Store) getThenUpdate(dst, key []byte, o GetExOptions, del bool) ([]byte, bool, error) {
	l := s.lockKey(key)
	defer s.unlock(l)
	sh, h := l.sh, l.h
	slot, id, err := s.lookupString(sh, h, key)
	if err != nil {
		return dst, false, err
	}
	if id < 0 {
		sh.misses.Add(1)
		return dst, false, nil
	}
	e := &sh.entries[id]
	sh.hits.Add(1)
	s.touch(e)
	dst = append(dst, sh.val(e)...)
	switch {
	case del, o.ExpireAt != 0 && o.ExpireAt <= s.now():
		sh.remove(slot, id)
	case o.ExpireAt != 0:
		sh.setExpiry(e, o.ExpireAt)
	case o.Persist:
		sh.setExpiry(e, 0)
	}
	return dst, true, nil
}

// lookupString finds key for a string command that writes, under sh's write lock,
// reclaiming it if expired. id < 0 means missing; err is ErrWrongType for other kinds.
func (s *Store) lookupString(sh *shard, h uint32, key []byte) (slot, id int, err error) {
	slot, id = s.lookupWrite(sh, h, key)
	if id >= 0 && sh.entries[id].kind() != kindString {
		return -1, -1, ErrWrongType
	}
	return slot, id, nil
}

// lockString reserves room for a string write adding about n bytes, write-locks
// key's shard and finds key's string there (id < 0 when missing). On an error
// nothing stays locked; otherwise the caller unlocks l.
func (s *Store) lockString(key []byte, n int64) (l shardLock, id int, err error) {
	if err = s.reserve(n); err != nil {
		return l, -1, err
	}
	l = s.lockKey(key)
	if _, id, err = s.lookupString(l.sh, l.h, key); err != nil {
		s.unlock(l)
		return l, -1, err
	}
	return l, id, nil
}

// putString stores val at key (new or existing string), keeping an existing expiry.
func (s *Store) putString(sh *shard, h uint32, key []byte, id int, val []byte) error {
	if id < 0 {
		nid, ok := sh.insert(h, key, len(val), kindString, s.stamp())
		if !ok {
			return ErrOOM
		}
		copy(sh.val(&sh.entries[nid]), val)
		return nil
	}
	e := &sh.entries[id]
	if !sh.resize(e, len(val), 0, len(val)) {
		return ErrOOM
	}
	copy(sh.val(e), val)
	s.touch(e)
	return nil
}

// IncrBy adds delta to the integer at key (0 if missing) and returns the result. The
// expiry is kept.
func (s *Store) IncrBy(key []byte, delta int64) (int64, error) {
	l, id, err := s.lockString(key, int64(len(key)+20))
	if err != nil {
		return 0, err
	}
	defer s.unlock(l)
	sh, h := l.sh, l.h
	var cur int64
	if id >= 0 {
		v, ok := ascii.ParseInt(sh.val(&sh.entries[id]))
		if !ok {
			return 0, ErrNotInteger
		}
		cur = v
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return 0, ErrOverflow
	}
	cur += delta
	var buf [20]byte
	return cur, s.putString(sh, h, key, id, strconv.AppendInt(buf[:0], cur, 10))
}

// IncrByFloat adds delta to the number at key (0 if missing) with long double arithmetic
// like Redis, stores the result formatted as INCRBYFLOAT does and appends it to dst.
// delta is widened through its shortest decimal form; IncrByFloatText takes the
// increment as the client typed it, which a float64 cannot always hold.
func (s *Store) IncrByFloat(dst, key []byte, delta float64) ([]byte, error) {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return dst, ErrNaNOrInf
	}
	return s.incrByLongDouble(dst, key, float64ToLongDouble(delta))
}

// IncrByFloatText is IncrByFloat with the increment parsed as Redis's string2ld
// parses it, into a long double: so 12345678901234567890 stays exact and 1e400 is a
// valid increment. An increment that is not a number gives ErrNotFloat; "inf" gives
// ErrNaNOrInf, as in Redis.
func (s *Store) IncrByFloatText(dst, key, incr []byte) ([]byte, error) {
	delta, err := parseLongDouble(incr)
	if err == errInf {
		return dst, ErrNaNOrInf
	}
	if err != nil {
		return dst, ErrNotFloat
	}
	return s.incrByLongDouble(dst, key, delta)
}

func (s *Store) incrByLongDouble(dst, key []byte, delta *big.Float) ([]byte, error) {
	l, id, err := s.lockString(key, int64(len(key)+40))
	if err != nil {
		return dst, err
	}
	defer s.unlock(l)
	sh, h := l.sh, l.h
	var cur []byte
	if id >= 0 {
		cur = sh.val(&sh.entries[id])
	}
	start := len(dst)
	dst, err = addLongDouble(dst, cur, delta)
	if err != nil {
		return dst[:start], err
	}
	return dst, s.putString(sh, h, key, id, dst[start:])
}

// Append appends val to the string at key (creating it) and returns the new length.
func (s *Store) Append(key, val []byte) (int, error) {
	l, id, err := s.lockString(key, int64(len(key)+len(val)))
	if err != nil {
		return 0, err
	}
	defer s.unlock(l)
	sh, h := l.sh, l.h
	if id < 0 {
		if len(val) > MaxStringLen {
			return 0, ErrTooLong
		}
		return len(val), s.putString(sh, h, key, -1, val)
	}
	e := &sh.entries[id]
	old := int(e.vlen)
	if old+len(val) > MaxStringLen {
		return 0, ErrTooLong
	}
	if !sh.resize(e, old+len(val), old, growRoom(int(e.klen)+old+len(val))) {
		return 0, ErrOOM
	}
	copy(sh.val(e)[old:], val)
	s.touch(e)
	return int(e.vlen), nil
}

// growRoom is the capacity given to a growing large string: doubling up to 1 MiB, then
// 1 MiB more, like sdsMakeRoomFor.
func growRoom(n int) int {
	if n < 1<<20 {
		return 2 * n
	}
	return n + 1<<20
}

// freshLarge reports whether e, once ref wasRef (large if wasLarge), now
// has a large block that arena.alloc has just made: zero memory, from the
// OS or the Go heap, that SetRange need not clear. Clearing it anyway
// writes every page of a string of up to 512 MiB, which is the whole cost
// of a SETRANGE far past the end (seconds where page faults are slow).
// Small blocks come from free lists, and a large block grown in place may
// hold the bytes of a longer value it had: both hold old bytes.
func freshLarge(e *entry, wasRef uint32, wasLarge bool) bool {
	return e.size() > maxSmall && (!wasLarge || e.ref != wasRef)
}

// Strlen returns the length of the string at key (0 if missing).
func (s *Store) Strlen(key []byte) (int, error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	id, expired := s.lookupRead(sh, uint32(h), key)
	n, err := 0, error(nil)
	if id >= 0 {
		if e := &sh.entries[id]; e.kind() != kindString {
			err = ErrWrongType
		} else {
			n = int(e.vlen)
		}
	}
	sh.mu.RUnlock()
	if expired {
		s.reclaim(sh, uint32(h), key)
	}
	return n, err
}

// GetRange appends the substring [start, end] (inclusive, negative counts from the end)
// of the string at key to dst, with Redis's clamping; a missing key gives "".
func (s *Store) GetRange(dst, key []byte, start, end int64) ([]byte, error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	id, expired := s.lookupRead(sh, uint32(h), key)
	var err error
	if id >= 0 {
		if e := &sh.entries[id]; e.kind() != kindString {
			err = ErrWrongType
		} else {
			v := sh.val(e)
			if lo, hi, ok := clampRange(int64(len(v)), start, end); ok {
				dst = append(dst, v[lo:hi+1]...)
			}
		}
	}
	sh.mu.RUnlock()
	if expired {
		s.reclaim(sh, uint32(h), key)
	}
	return dst, err
}

// clampRange applies GETRANGE's index rules to a string of length n.
func clampRange(n, start, end int64) (lo, hi int64, ok bool) {
	if start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if n == 0 || start > end {
		return 0, 0, false
	}
	return start, end, true
}

// SetRange overwrites the string at key from offset with val, zero-padding as needed,
// and returns the new length. An empty val only reports the length (and creates nothing).
// The write is GrowString's (bitmaps grow strings the same way).
func (s *Store) SetRange(key []byte, offset int64, val []byte) (int, error) {
	if offset < 0 {
		return 0, ErrOffsetRange
	}
	// offset comes from the client: compare it against the room left rather than adding
	// it to len(val), which wraps negative for offsets near MaxInt64 and let them through.
	if len(val) == 0 || offset > MaxStringLen-int64(len(val)) {
		// Nothing is written. Like Redis, the length error comes after the type check,
		// and an empty val neither fails the length check nor reserves room for offset.
		l, id, err := s.lockString(key, 0)
		if err != nil {
			return 0, err
		}
		defer s.unlock(l)
		switch {
		case len(val) > 0:
			return 0, ErrTooLong
		case id < 0:
			return 0, nil
		}
		return int(l.sh.entries[id].vlen), nil
	}
	n := 0
	_, _, err := s.GrowString(key, int(offset)+len(val), func(v []byte) {
		copy(v[offset:], val)
		n = len(v)
	})
	return n, err
}
