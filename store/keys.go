package store

// ExpireCond is the NX / XX / GT / LT condition of the EXPIRE family.
type ExpireCond int

// Expire conditions (Redis 7). GT and LT treat a key without expiry as infinite.
const (
	ExpireAlways ExpireCond = iota
	ExpireNX                // only if the key has no expiry
	ExpireXX                // only if the key has an expiry
	ExpireGT                // only if the new expiry is greater than the current one
	ExpireLT                // only if the new expiry is less than the current one
)

// Del deletes keys and returns how many existed.
func (s *Store) Del(keys [][]byte) int {
	if len(keys) == 1 {
		l := s.lockKey(keys[0])
		n := s.delLocked(l.sh, l.h, keys[0])
		s.unlock(l)
		return n
	}
	return s.delEach(keys, nil)
}

// delEach deletes keys under one multi-key lock and returns how many existed;
// with deleted non-nil it also sets deleted[i] for each key i that existed.
func (s *Store) delEach(keys [][]byte, deleted []bool) int {
	ml := s.lockKeys(keys, 1, true)
	n := 0
	for i, k := range keys {
		d := s.delLocked(&s.shards[ml.shard[i]], uint32(ml.hash[i]), k)
		if deleted != nil {
			deleted[i] = d == 1
		}
		n += d
	}
	ml.unlock(s)
	return n
}

// delLocked deletes key from sh, whose write lock the caller holds; the caller's unlock
// accounts the memory freed.
func (s *Store) delLocked(sh *shard, h uint32, key []byte) int {
	slot, id := s.lookupWrite(sh, h, key)
	if id < 0 {
		return 0
	}
	sh.remove(slot, id)
	return 1
}

// MemoryUsage returns the bytes key takes, as the store accounts them
// against maxmemory: its entry, its key and value block, and a
// collection's own memory (MEMORY USAGE); found=false when it is missing.
func (s *Store) MemoryUsage(key []byte) (n int64, found bool) {
	found = s.peek(key, func(sh *shard, e *entry) {
		n = int64(sh.arena.blockBytes(e.ref, e.size())) + entryOverhead
		if isObject(e.kind()) {
			n += sh.objectOf(e).Size()
		}
	})
	return n, found
}

// Touch counts how many of keys exist, as Exists, and records an access
// to each (TOUCH): the LRU clock moves as for a read.
func (s *Store) Touch(keys [][]byte) int { return s.countLive(keys, true) }

// Exists counts how many of keys exist; a key named twice counts twice.
func (s *Store) Exists(keys [][]byte) int { return s.countLive(keys, false) }

// countLive counts the keys that exist, touching each when touch is set.
func (s *Store) countLive(keys [][]byte, touch bool) int {
	ml := s.lockKeys(keys, 1, false)
	n, now := 0, int64(-1)
	for i, k := range keys {
		if e := s.liveIn(&s.shards[ml.shard[i]], uint32(ml.hash[i]), k, &now); e != nil {
			if touch {
				s.touch(e)
			}
			n++
		}
	}
	ml.unlock(s)
	return n
}

// Type returns the type name of key: "none" when missing, "string", ...
func (s *Store) Type(key []byte) string {
	name := "none"
	s.peek(key, func(_ *shard, e *entry) { name = kindName(e.kind()) })
	return name
}

var kindNames = [...]string{kindFree: "none", kindString: "string", kindList: "list",
	kindHash: "hash", kindSet: "set", kindZSet: "zset", kindStream: "stream"}

func kindName(k uint8) string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "none"
}

// Expire sets key's expiry to atMillis (unix ms) if cond allows and reports whether it
// did. A time at or before now deletes the key (true if it existed and cond allowed).
func (s *Store) Expire(key []byte, atMillis int64, cond ExpireCond) bool {
	l := s.lockKey(key)
	defer s.unlock(l)
	sh, h := l.sh, l.h
	slot, id := s.lookupWrite(sh, h, key)
	if id < 0 {
		return false
	}
	e := &sh.entries[id]
	cur := e.expireAt()
	switch cond {
	case ExpireNX:
		if cur != 0 {
			return false
		}
	case ExpireXX:
		if cur == 0 {
			return false
		}
	case ExpireGT:
		if cur == 0 || atMillis <= cur {
			return false
		}
	case ExpireLT:
		if cur != 0 && atMillis >= cur {
			return false
		}
	}
	if atMillis <= s.now() {
		sh.remove(slot, id)
		return true
	}
	sh.setExpiry(e, atMillis)
	return true
}

// PTTL returns the milliseconds key has left: -2 if missing, -1 if it has no expiry.
func (s *Store) PTTL(key []byte) int64 {
	t, now := s.expiry(key)
	if t < 0 {
		return t
	}
	return t - now
}

// ExpireTime returns key's expiry as unix ms: -2 if missing, -1 if it has no expiry.
func (s *Store) ExpireTime(key []byte) int64 {
	t, _ := s.expiry(key)
	return t
}

func (s *Store) expiry(key []byte) (at, now int64) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	_, id := sh.find(uint32(h), key)
	if id < 0 {
		return -2, 0
	}
	t := sh.entries[id].expireAt()
	if t == 0 {
		return -1, 0
	}
	now = s.now()
	if now > t {
		return -2, 0
	}
	return t, now
}

// Persist removes key's expiry and reports whether it had one.
func (s *Store) Persist(key []byte) bool {
	l := s.lockKey(key)
	defer s.unlock(l)
	sh, h := l.sh, l.h
	_, id := s.lookupWrite(sh, h, key)
	if id < 0 || sh.entries[id].expireAt() == 0 {
		return false
	}
	sh.setExpiry(&sh.entries[id], 0)
	return true
}

// Rename moves from's value and expiry to the key to, replacing it. ErrNoSuchKey if
// from is missing. Renaming a key to itself succeeds and changes nothing.
func (s *Store) Rename(from, to []byte) error {
	_, err := s.rename(from, to, false)
	return err
}

// RenameNX is Rename only if to does not exist; it reports whether it renamed.
func (s *Store) RenameNX(from, to []byte) (bool, error) {
	return s.rename(from, to, true)
}

func (s *Store) rename(from, to []byte, nx bool) (bool, error) {
	keys := [2][]byte{from, to}
	ml := s.lockKeys(keys[:], 1, true)
	defer ml.unlock(s)
	ssh, dsh := &s.shards[ml.shard[0]], &s.shards[ml.shard[1]]
	sslot, sid := s.lookupWrite(ssh, uint32(ml.hash[0]), from)
	if sid < 0 {
		return false, ErrNoSuchKey
	}
	if string(from) == string(to) {
		return !nx, nil
	}
	dslot, did := s.lookupWrite(dsh, uint32(ml.hash[1]), to)
	if did >= 0 {
		if nx {
			return false, nil
		}
		dsh.remove(dslot, did)
		if ssh == dsh { // the removal may have moved from's slot or id
			sslot, sid = ssh.find(uint32(ml.hash[0]), from)
		}
	}
	e := ssh.entries[sid]
	if isObject(e.kind()) {
		// The collection moves to the destination shard's object table; the
		// source entry's removal then drops only its old table slot.
		o := ssh.objectOf(&e)
		nid, ok := dsh.putObject(uint32(ml.hash[1]), to, o, e.meta&lruMask)
		if !ok {
			return false, ErrOOM
		}
		dsh.setExpiry(&dsh.entries[nid], e.expireAt())
		sslot, sid = ssh.find(uint32(ml.hash[0]), from)
		idx := le32(ssh.val(&ssh.entries[sid]))
		ssh.used -= o.Size()
		ssh.objs[idx] = nil
		ssh.freeObjs = append(ssh.freeObjs, idx)
		ssh.entries[sid].meta = uint32(kindString)<<24 | e.meta&lruMask // no object left to drop
		ssh.remove(sslot, sid)
		return true, nil
	}
	nid, ok := dsh.insert(uint32(ml.hash[1]), to, int(e.vlen), e.kind(), e.meta&lruMask)
	if !ok {
		return false, ErrOOM
	}
	if ssh == dsh { // the insert may have rehashed the shard
		sslot, sid = ssh.find(uint32(ml.hash[0]), from)
		e = ssh.entries[sid]
	}
	ne := &dsh.entries[nid]
	copy(dsh.val(ne), ssh.val(&e))
	dsh.setExpiry(ne, e.expireAt())
	ssh.remove(sslot, sid)
	return true, nil
}

// MGet visits the value of every key in order (found=false for missing or non-string
// keys) while holding all their shards, so the result is one atomic snapshot. val is
// arena memory valid only during visit; visit must not call back into s.
func (s *Store) MGet(keys [][]byte, visit func(i int, val []byte, found bool)) {
	ml := s.lockKeys(keys, 1, false)
	now := int64(-1)
	for i, k := range keys {
		sh := &s.shards[ml.shard[i]]
		if e := s.liveIn(sh, uint32(ml.hash[i]), k, &now); e != nil && e.kind() == kindString {
			s.touch(e)
			sh.hits.Add(1)
			visit(i, sh.val(e), true)
			continue
		}
		sh.misses.Add(1)
		visit(i, nil, false)
	}
	ml.unlock(s)
}

// MSet sets k1 v1 k2 v2 ... atomically, clearing their expiries.
func (s *Store) MSet(pairs [][]byte) error {
	_, err := s.mset(pairs, false)
	return err
}

// MSetNX is MSet only if none of the keys exists; it reports whether it set them.
func (s *Store) MSetNX(pairs [][]byte) (bool, error) {
	return s.mset(pairs, true)
}

func (s *Store) mset(pairs [][]byte, nx bool) (bool, error) {
	if len(pairs)%2 != 0 {
		panic("store: MSet needs key value pairs")
	}
	if limit := s.g.maxMemory.Load(); limit > 0 {
		var need int64
		for i := 0; i < len(pairs); i += 2 {
			need += blockSize(len(pairs[i])+len(pairs[i+1])) + entryOverhead
		}
		if err := s.makeRoom(need, limit); err != nil {
			return false, err
		}
	}
	ml := s.lockKeys(pairs, 2, true)
	defer ml.unlock(s)
	if nx {
		for i := 0; i < len(pairs); i += 2 {
			if _, id := s.lookupWrite(&s.shards[ml.shard[i/2]], uint32(ml.hash[i/2]), pairs[i]); id >= 0 {
				return false, nil
			}
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		sh := &s.shards[ml.shard[i/2]]
		if _, _, _, err := s.setLocked(sh, uint32(ml.hash[i/2]), pairs[i], pairs[i+1], SetOptions{}, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}
