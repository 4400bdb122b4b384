package store

// Strings read and changed where they lie. The bitmap and HyperLogLog
// commands (SETBIT, BITFIELD, PFADD, PFCOUNT's cache) touch a few bytes of
// a string that may be 512 MiB long: they work on the value in the arena,
// under its shard's lock, instead of copying it out and back.

// maxGrowString bounds GrowString: BITFIELD may address a field that starts
// at the last bit under proto-max-bulk-len and ends 63 bits later.
const maxGrowString = MaxStringLen + 8

// ViewString calls fn with the string at key, under its shard's read lock.
// found is false for a missing key, and then fn is not called; err is
// ErrWrongType for a key of another kind. fn must not keep v, change it, or
// call the store.
func (s *Store) ViewString(key []byte, fn func(v []byte)) (found bool, err error) {
	sh, e, err := s.readEntry(key, kindString)
	if e == nil {
		return false, err
	}
	s.touch(e)
	fn(sh.val(e))
	sh.mu.RUnlock()
	sh.hits.Add(1)
	return true, nil
}

// GrowString write-locks the string at key, creates it or pads it with zero
// bytes to at least n bytes, and calls fn with the whole value, which fn
// may change in place (but must not keep, or call the store). created
// reports that the key was missing, grown that its length changed; an
// existing key keeps its expiry. n above 512 MiB + 8 is ErrTooLong: the
// caller bounds offsets by proto-max-bulk-len first, and nothing is
// allocated for a larger n.
func (s *Store) GrowString(key []byte, n int, fn func(v []byte)) (created, grown bool, err error) {
	if n < 0 || n > maxGrowString {
		return false, false, ErrTooLong
	}
	// Reserve room for what the write adds, not for the whole string: a
	// SETBIT inside a 100 MiB bitmap must not evict 100 MiB of other keys.
	add := int64(n)
	if s.g.maxMemory.Load() > 0 {
		if cur, err := s.Strlen(key); err == nil {
			add = max(add-int64(cur), 0)
		}
	}
	l, id, err := s.lockString(key, int64(len(key))+add)
	if err != nil {
		return false, false, err
	}
	defer s.unlock(l)
	sh, h := l.sh, l.h
	if id < 0 {
		nid, ok := sh.insert(h, key, n, kindString, s.stamp())
		if !ok {
			return false, false, ErrOOM
		}
		v := sh.val(&sh.entries[nid])
		if len(key)+n <= maxSmall { // a large block is new, so zero (freshLarge)
			clear(v)
		}
		fn(v)
		return true, true, nil
	}
	e := &sh.entries[id]
	if old := int(e.vlen); n > old {
		wasRef, wasLarge := e.ref, e.size() > maxSmall
		if !sh.resize(e, n, old, growRoom(int(e.klen)+n)) {
			return false, false, ErrOOM
		}
		if !freshLarge(e, wasRef, wasLarge) {
			clear(sh.val(e)[old:])
		}
		grown = true
	}
	fn(sh.val(e))
	s.touch(e)
	return false, grown, nil
}

// EditString write-locks the string at key and calls fn with its value (nil
// and found false when key is missing). fn either changes v in place and
// returns nil, or returns a new value for key, which creates a missing key
// and keeps an existing key's expiry; the new value must not share memory
// with v. need is the room a new value may take, for maxmemory.
func (s *Store) EditString(key []byte, need int64, fn func(v []byte, found bool) []byte) error {
	l, id, err := s.lockString(key, int64(len(key))+need)
	if err != nil {
		return err
	}
	defer s.unlock(l)
	sh, h := l.sh, l.h
	var v []byte
	if id >= 0 {
		v = sh.val(&sh.entries[id])
	}
	nv := fn(v, id >= 0)
	if nv == nil {
		if id >= 0 {
			s.touch(&sh.entries[id])
		}
		return nil
	}
	return s.putString(sh, h, key, id, nv)
}
