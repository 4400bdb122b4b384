package store

import (
	"github.com/shoalkv/shoal/internal/ascii"
)

// Collections. A hash, list, set or sorted set is an Object: a Go value kept in its
// shard's object table. Its key lives in the arena like a string key's, and the
// entry's four value bytes hold the object's index in the table, so the index, the
// entries and the LRU and expiry machinery work for every kind alike, and the GC sees
// one pointer per collection key, never one per element (the Object implementations
// keep their elements in pointer-free chunks).
//
// Objects are changed only under their shard's write lock (Update, Tx), and read only
// under at least its read lock (View, SnapshotShard). Their memory is accounted from
// Size before and after each change.

// Kind is the type of the value a key holds.
type Kind uint8

// Kinds, as TYPE names them: none, string, list, hash, set, zset, stream.
const (
	KindNone   = Kind(kindFree)
	KindString = Kind(kindString)
	KindList   = Kind(kindList)
	KindHash   = Kind(kindHash)
	KindSet    = Kind(kindSet)
	KindZSet   = Kind(kindZSet)
	KindStream = Kind(kindStream)
)

// String returns the kind's TYPE name.
func (k Kind) String() string { return kindName(uint8(k)) }

// Object is a collection value. Implementations must be pointer types (the store
// compares them by identity) and must not be shared between keys.
type Object interface {
	Kind() Kind
	// Len is the number of elements. A key whose object is empty after a write is
	// deleted, as Redis deletes an emptied collection.
	Len() int
	// Size is the memory the object holds, for maxmemory accounting; O(1).
	Size() int64
	// Encoding is what OBJECT ENCODING reports: listpack, quicklist, hashtable,
	// intset or skiplist.
	Encoding() string
	// Clone returns a deep copy (COPY).
	Clone() Object
}

// objRefSize is the value of a collection's entry: its index in the object table.
const objRefSize = 4

// objectOf returns the object of e, which holds a collection.
func (sh *shard) objectOf(e *entry) Object { return sh.objs[le32(sh.val(e))] }

// putObject inserts key (absent) holding o and returns its id, or ok=false when the
// shard is full.
func (sh *shard) putObject(h uint32, key []byte, o Object, clock uint32) (id int, ok bool) {
	id, ok = sh.insert(h, key, objRefSize, uint8(o.Kind()), clock)
	if !ok {
		return -1, false
	}
	var idx uint32
	if n := len(sh.freeObjs); n > 0 {
		idx = sh.freeObjs[n-1]
		sh.freeObjs = sh.freeObjs[:n-1]
		sh.objs[idx] = o
	} else {
		idx = uint32(len(sh.objs))
		sh.objs = append(sh.objs, o)
	}
	put32(sh.val(&sh.entries[id]), idx)
	sh.used += o.Size()
	return id, true
}

// dropObject releases the object of e (a collection entry about to be removed or
// overwritten) and its accounted memory. Dropping the reference is all the freeing a
// big collection needs: the collector reclaims its chunks concurrently, so a DEL
// never stalls the loop on the size of what it deletes.
func (sh *shard) dropObject(e *entry) {
	idx := le32(sh.val(e))
	sh.used -= sh.objs[idx].Size()
	sh.objs[idx] = nil
	sh.freeObjs = append(sh.freeObjs, idx)
}

// replaceObject makes e hold n instead of its current object; the caller has
// accounted the current object's in-place changes.
func (sh *shard) replaceObject(e *entry, n Object) {
	idx := le32(sh.val(e))
	sh.used += n.Size() - sh.objs[idx].Size()
	sh.objs[idx] = n
}

// isObject reports whether entry kind k keeps its value in the object table.
func isObject(k uint8) bool { return k != kindFree && k != kindString }

// View runs fn with key's object under the key's shard read lock. o is nil when the
// key is missing or expired; the error is ErrWrongType when the key holds another
// kind (fn is not called). fn must not keep o, or memory it returns, past the call,
// and must not call into the Store.
func (s *Store) View(key []byte, k Kind, fn func(o Object)) error {
	sh, e, err := s.readEntry(key, uint8(k))
	if e == nil {
		if err == nil {
			fn(nil)
		}
		return err
	}
	s.touch(e)
	sh.hits.Add(1)
	defer sh.mu.RUnlock()
	fn(sh.objectOf(e))
	return nil
}

// Update runs fn with key's object under the key's shard write lock. o is nil when the
// key is missing (or expired). fn returns what the key should hold: o after changing
// it in place, a replacement (another encoding; the key's TTL is kept), or nil or an
// empty object to delete the key or not create it. need is how many bytes the write
// may add: with a memory limit the store evicts first, and returns ErrOOM under
// noeviction when over it (0 for writes that only shrink). ErrWrongType when the key
// holds another kind (fn is not called).
func (s *Store) Update(key []byte, k Kind, need int64, fn func(o Object) Object) error {
	if need > 0 {
		if err := s.reserve(need); err != nil {
			return err
		}
	}
	l := s.lockKey(key)
	defer s.unlock(l)
	sh := l.sh
	slot, id := s.lookupWrite(sh, l.h, key)
	if id < 0 {
		n := fn(nil)
		if n == nil || n.Len() == 0 {
			return nil
		}
		if _, ok := sh.putObject(l.h, key, n, s.stamp()); !ok {
			return ErrOOM
		}
		return nil
	}
	e := &sh.entries[id]
	if Kind(e.kind()) != k {
		return ErrWrongType
	}
	s.touch(e)
	o := sh.objectOf(e)
	before := o.Size()
	n := fn(o)
	sh.used += o.Size() - before
	if n != nil && n != o {
		sh.replaceObject(e, n)
	}
	if n == nil || n.Len() == 0 {
		sh.remove(slot, id)
	}
	return nil
}

// Tx is a multi-key write on locked shards (see Store.Tx).
type Tx struct {
	s    *Store
	ml   *multiLock
	keys [][]byte
	// seen are the objects handed out by Object, with their size then, so the end of
	// the transaction can account their in-place changes and delete emptied keys.
	seen []txObject
}

type txObject struct {
	key    int
	o      Object
	before int64
	done   bool
}

// Tx write-locks the shards of keys and runs fn, for commands that read or write
// several keys at once (SMOVE, LMOVE, SINTERSTORE, ...). need is as for Update.
// Objects fn changed in place are accounted when it returns, and a key whose object
// it left empty is deleted; fn's error is returned.
func (s *Store) Tx(keys [][]byte, need int64, fn func(t *Tx) error) error {
	if need > 0 {
		if err := s.reserve(need); err != nil {
			return err
		}
	}
	t := &Tx{s: s, ml: s.lockKeys(keys, 1, true), keys: keys}
	defer t.ml.unlock(s)
	err := fn(t)
	for i := range t.seen {
		t.settle(&t.seen[i])
	}
	return err
}

func (t *Tx) lookup(i int) (sh *shard, h uint32, slot, id int) {
	sh = &t.s.shards[t.ml.shard[i]]
	h = uint32(t.ml.hash[i])
	slot, id = t.s.lookupWrite(sh, h, t.keys[i])
	return sh, h, slot, id
}

// settle accounts the in-place changes of a handed-out object and deletes its key
// if the object is empty; a key that no longer holds the object (Put replaced it)
// was settled by Put.
func (t *Tx) settle(r *txObject) {
	if r.done {
		return
	}
	r.done = true
	sh, _, slot, id := t.lookup(r.key)
	if id < 0 || !isObject(sh.entries[id].kind()) || sh.objectOf(&sh.entries[id]) != r.o {
		return
	}
	sh.used += r.o.Size() - r.before
	if r.o.Len() == 0 {
		sh.remove(slot, id)
	}
}

// Kind returns the kind of keys[i]: KindNone when missing or expired.
func (t *Tx) Kind(i int) Kind {
	sh, _, _, id := t.lookup(i)
	if id < 0 {
		return KindNone
	}
	return Kind(sh.entries[id].kind())
}

// Object returns the object of keys[i]: nil when missing, ErrWrongType when it holds
// another kind. The object may be changed in place until fn returns.
func (t *Tx) Object(i int, k Kind) (Object, error) {
	sh, _, _, id := t.lookup(i)
	if id < 0 {
		return nil, nil
	}
	e := &sh.entries[id]
	if Kind(e.kind()) != k {
		return nil, ErrWrongType
	}
	t.s.touch(e)
	o := sh.objectOf(e)
	for _, r := range t.seen {
		if r.o == o && !r.done {
			return o, nil
		}
	}
	t.seen = append(t.seen, txObject{key: i, o: o, before: o.Size()})
	return o, nil
}

// Put makes keys[i] hold o, replacing whatever it held (its TTL too), as Redis's
// *STORE commands do; nil or an empty o deletes the key. It returns ErrOOM when
// the shard is full.
func (t *Tx) Put(i int, o Object) error {
	for j := range t.seen {
		if r := &t.seen[j]; !r.done && string(t.keys[r.key]) == string(t.keys[i]) {
			t.settle(r)
		}
	}
	sh, h, slot, id := t.lookup(i)
	if id >= 0 {
		sh.remove(slot, id)
	}
	if o == nil || o.Len() == 0 {
		return nil
	}
	if _, ok := sh.putObject(h, t.keys[i], o, t.s.stamp()); !ok {
		return ErrOOM
	}
	return nil
}

// Copy copies src's value and TTL to dst (COPY). It reports false, changing nothing,
// when src is missing or dst exists and replace is false.
func (s *Store) Copy(src, dst []byte, replace bool) (bool, error) {
	keys := [2][]byte{src, dst}
	ml := s.lockKeys(keys[:], 1, true)
	defer ml.unlock(s)
	ssh, dsh := &s.shards[ml.shard[0]], &s.shards[ml.shard[1]]
	_, sid := s.lookupWrite(ssh, uint32(ml.hash[0]), src)
	if sid < 0 {
		return false, nil
	}
	dslot, did := s.lookupWrite(dsh, uint32(ml.hash[1]), dst)
	if did >= 0 {
		if !replace {
			return false, nil
		}
		dsh.remove(dslot, did)
		if ssh == dsh { // the removal may have moved src's id
			_, sid = ssh.find(uint32(ml.hash[0]), src)
		}
	}
	e := ssh.entries[sid]
	var nid int
	var ok bool
	if isObject(e.kind()) {
		nid, ok = dsh.putObject(uint32(ml.hash[1]), dst, ssh.objectOf(&e).Clone(), s.stamp())
	} else {
		nid, ok = dsh.insert(uint32(ml.hash[1]), dst, int(e.vlen), e.kind(), s.stamp())
		if ok {
			if ssh == dsh { // the insert may have rehashed the shard
				_, sid = ssh.find(uint32(ml.hash[0]), src)
				e = ssh.entries[sid]
			}
			copy(dsh.val(&dsh.entries[nid]), ssh.val(&e))
		}
	}
	if !ok {
		return false, ErrOOM
	}
	dsh.setExpiry(&dsh.entries[nid], e.expireAt())
	return true, nil
}

// Encoding returns what OBJECT ENCODING reports for key (found=false when missing):
// a collection's Encoding, and for a string, as Redis 7.0 does, "int" when it is a
// 64-bit integer of at most 20 characters, "embstr" up to 44 bytes, "raw" above.
func (s *Store) Encoding(key []byte) (enc string, found bool) {
	found = s.peek(key, func(sh *shard, e *entry) {
		if isObject(e.kind()) {
			enc = sh.objectOf(e).Encoding()
		} else {
			enc = stringEncoding(sh.val(e))
		}
	})
	return enc, found
}

func stringEncoding(v []byte) string {
	if len(v) <= 20 {
		if _, ok := ascii.ParseInt(v); ok {
			return "int"
		}
	}
	if len(v) <= 44 {
		return "embstr"
	}
	return "raw"
}

// IdleSeconds returns the seconds since key was last accessed, by the LRU clock
// (OBJECT IDLETIME); found=false when missing. Reading it does not touch the key.
func (s *Store) IdleSeconds(key []byte) (secs int64, found bool) {
	found = s.peek(key, func(_ *shard, e *entry) {
		c := int64(s.lruClock())
		last := int64(e.meta & lruMask)
		if c < last {
			c += lruMask + 1
		}
		secs = c - last
	})
	return secs, found
}
