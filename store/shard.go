package store

import (
	"bytes"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A shard is an open-addressing index (linear probing, backward-shift deletion, so no
// tombstones) of uint32 slots over a dense slice of pointer-free entries whose bytes live
// in the shard's arena. Nothing in the index or the entries holds a Go pointer, so the
// GC scans neither, however many keys there are.
//
// Slot layout: tag<<24 | (id+1), where tag is bits 24..31 of the key's 32-bit hash and id
// indexes entries; 0 is an empty slot. The tag lets a probe skip most non-matching slots
// without touching the entry. Every field is guarded by mu; the LRU clock in entry.meta is
// also written under the read lock, with atomics.
type shard struct {
	mu sync.RWMutex

	index   []uint32
	entries []entry
	// next is the index being built while the shard resizes incrementally: ids below
	// migrated are in it as well as in index, which stays the one lookups use until the
	// last id has moved (see migrateStep).
	next      []uint32
	migrated  int
	freeEntry uint32 // id+1 of the first free entry, chained through entry.ref

	// objs holds the collections (hashes, lists, sets, sorted sets) of the shard; a
	// collection's entry value is its index here (object.go). freeObjs are reusable
	// indices.
	objs     []Object
	freeObjs []uint32

	count      int   // live entries, expired-but-unreclaimed included
	volatile   int   // entries with an expiry
	nextExpiry int64 // lower bound of every expiry in the shard; 0 = none set
	used       int64 // accounted bytes: blocks plus entryOverhead per key
	arena      arena

	expireCursor int // where the active expirer resumes in entries

	hits, misses atomic.Int64
	_            [64]byte // keep neighbouring shards' locks off this cache line
}

const (
	slotIDBits = 24
	slotIDMask = 1<<slotIDBits - 1
	// maxEntries bounds one shard: ids must fit the slot's 24 bits.
	maxEntries = slotIDMask - 1
	minIndex   = 16

	// entryOverhead is what a key costs beyond its block: the entry plus about two index
	// slots (the table is kept between 1/8 and 3/4 full, 5/16 to 5/8 in steady growth).
	entryOverhead = 28 + 8

	// migrateBatch is how many entry ids each write moves into the next index while a
	// resize is under way. Growth starts at 5/8 load and must end before 3/4: that
	// leaves count/5 inserts, and a migration takes len(entries)/migrateBatch of them,
	// with len(entries) at most 4×count before the entries are compacted.
	migrateBatch = 32
)

// Value kinds, kept in the top byte of entry.meta. kindFree marks a free entry.
// Only strings are created today; the other kinds reserve their tags so TYPE and
// WRONGTYPE already work through one place when their commands arrive (their values
// will hang off the entry through a per-shard object table).
const (
	kindFree uint8 = iota
	kindString
	kindList
	kindHash
	kindSet
	kindZSet
	kindStream
)

// entry is 28 bytes with no pointers. The expiry is split in two words so the struct has
// 4-byte alignment and no padding.
type entry struct {
	hash  uint32 // low 32 bits of the key hash: home slot and tag
	ref   uint32 // arena ref of the key+value block; next free id+1 while free
	klen  uint32
	vlen  uint32
	expLo uint32 // unix ms of expiry, 0 = none
	expHi uint32
	meta  uint32 // kind<<24 | LRU clock (24 bits of seconds)
}

func (e *entry) expireAt() int64     { return int64(e.expHi)<<32 | int64(e.expLo) }
func (e *entry) setExpireAt(t int64) { e.expLo, e.expHi = uint32(t), uint32(uint64(t)>>32) }
func (e *entry) kind() uint8         { return uint8(atomic.LoadUint32(&e.meta) >> 24) }
func (e *entry) size() int           { return int(e.klen) + int(e.vlen) }

// expired reports whether e is past its expiry at now (Redis: expired when now > when).
func (e *entry) expired(now int64) bool {
	t := e.expireAt()
	return t != 0 && now > t
}

func (sh *shard) key(e *entry) []byte { return sh.arena.block(e.ref, e.size())[:e.klen] }
func (sh *shard) val(e *entry) []byte { return sh.arena.block(e.ref, e.size())[e.klen:] }

// find returns the slot and id of key, or id = -1 and the empty slot ending its probe.
func (sh *shard) find(h uint32, key []byte) (slot int, id int) {
	if len(sh.index) == 0 {
		return -1, -1
	}
	mask := len(sh.index) - 1
	tag := h >> slotIDBits
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := sh.index[i]
		if s == 0 {
			return i, -1
		}
		if s>>slotIDBits != tag {
			continue
		}
		id := int(s&slotIDMask) - 1
		e := &sh.entries[id]
		if e.hash == h && int(e.klen) == len(key) && bytes.Equal(sh.key(e), key) {
			return i, id
		}
	}
}

// insert adds key (absent) with room for vlen value bytes and returns its id. The value
// bytes are left for the caller to fill. ok is false when the shard is full.
func (sh *shard) insert(h uint32, key []byte, vlen int, kind uint8, clock uint32) (id int, ok bool) {
	if sh.count+1 > maxEntries {
		return -1, false
	}
	sh.growIndex()
	n := len(key) + vlen
	ref, ok := sh.arena.alloc(n, n)
	if !ok {
		return -1, false
	}
	if sh.freeEntry != 0 {
		id = int(sh.freeEntry) - 1
		sh.freeEntry = sh.entries[id].ref
	} else {
		id = len(sh.entries)
		if id == cap(sh.entries) {
			sh.growEntries()
		}
		sh.entries = sh.entries[:id+1]
	}
	sh.entries[id] = entry{hash: h, ref: ref, klen: uint32(len(key)), vlen: uint32(vlen),
		meta: uint32(kind)<<24 | clock&lruMask}
	copy(sh.arena.block(ref, n), key)
	sh.place(h, id)
	sh.count++
	sh.used += int64(sh.arena.blockBytes(ref, n)) + entryOverhead
	return id, true
}

// place puts id in the index (and in the next index if the migration has passed it).
func (sh *shard) place(h uint32, id int) {
	placeIn(sh.index, h, id)
	if sh.next != nil && id < sh.migrated {
		placeIn(sh.next, h, id)
	}
}

// placeIn puts id in the first empty slot of h's probe sequence in tab.
func placeIn(tab []uint32, h uint32, id int) {
	mask := len(tab) - 1
	i := int(h) & mask
	for tab[i] != 0 {
		i = (i + 1) & mask
	}
	tab[i] = (h>>slotIDBits)<<slotIDBits | uint32(id+1)
}

// remove deletes the entry id found at slot.
func (sh *shard) remove(slot, id int) {
	e := &sh.entries[id]
	if isObject(e.kind()) {
		sh.dropObject(e)
	}
	n := e.size()
	sh.used -= int64(sh.arena.blockBytes(e.ref, n)) + entryOverhead
	sh.arena.release(e.ref, n)
	if e.expireAt() != 0 {
		sh.volatile--
	}
	if sh.next != nil && id < sh.migrated {
		sh.unslotID(sh.next, e.hash, id)
	}
	*e = entry{ref: sh.freeEntry}
	sh.freeEntry = uint32(id + 1)
	sh.count--
	sh.unslot(sh.index, slot)
	switch {
	case sh.count == 0:
		sh.rehash(minIndex) // gives all the shard's memory back
	case sh.next != nil:
		sh.migrateStep()
	case len(sh.index) > minIndex && sh.count*8 < len(sh.index):
		if sh.count*4 < len(sh.entries) && len(sh.entries) >= 64 {
			sh.rehash(len(sh.index) / 2) // compacts the entries too
		} else {
			sh.startMigration(len(sh.index) / 2)
		}
	}
}

// unslot empties slot hole of tab and shifts later members of the cluster back so that
// every key stays reachable from its home slot without tombstones.
func (sh *shard) unslot(tab []uint32, hole int) {
	mask := len(tab) - 1
	tab[hole] = 0
	for j := (hole + 1) & mask; ; j = (j + 1) & mask {
		s := tab[j]
		if s == 0 {
			return
		}
		home := int(sh.entries[int(s&slotIDMask)-1].hash) & mask
		// s may move to hole only if hole lies cyclically within [home, j).
		if (j-home)&mask >= (j-hole)&mask {
			tab[hole] = s
			tab[j] = 0
			hole = j
		}
	}
}

// unslotID removes id (hash h) from tab.
func (sh *shard) unslotID(tab []uint32, h uint32, id int) {
	mask := len(tab) - 1
	want := (h>>slotIDBits)<<slotIDBits | uint32(id+1)
	for i := int(h) & mask; tab[i] != 0; i = (i + 1) & mask {
		if tab[i] == want {
			sh.unslot(tab, i)
			return
		}
	}
}

// Resizing. Doubling or halving the index is done a step at a time, as Redis rehashes
// its dicts: startMigration allocates the next index, each later write of the shard
// moves the next migrateBatch entry ids into it (migrateStep), and when the last id has
// moved it replaces the index. Lookups, Scan and the expirer keep using the complete
// old index meanwhile; place and remove keep both up to date. So no write pays for
// more than migrateBatch placements, whatever the shard's size. Two cases stay
// stop-the-world, both bounded by one shard's keys: compacting the entries after 3/4
// of them were deleted (rehash), and a migration overtaken by inserts (finishMigration
// before the old index reaches 3/4 full; the thresholds make it unreachable by inserts
// alone, see migrateBatch).

// syncResize makes growth rebuild the index at once, at 3/4 load, as before the
// step-by-step resize: the peer BenchmarkGrowthStall measures it against.
var syncResize bool

// growIndex makes room for one more key before an insert.
func (sh *shard) growIndex() {
	if sh.next != nil {
		if (sh.count+1)*4 > len(sh.next)*3 {
			sh.cancelMigration() // a shrink that inserts have made wrong
		} else {
			sh.migrateStep()
		}
	}
	switch {
	case (sh.count+1)*4 > len(sh.index)*3:
		sh.finishMigration()
		if (sh.count+1)*4 > len(sh.index)*3 {
			sh.rehash(max(minIndex, len(sh.index)*2))
		}
	case sh.next == nil && (sh.count+1)*8 > len(sh.index)*5 && !syncResize:
		sh.startMigration(len(sh.index) * 2)
	}
}

// startMigration begins moving the index to size slots.
func (sh *shard) startMigration(size int) {
	sh.next = makeSlice[uint32](size, sh.arena.heap)
	sh.migrated = 0
}

// migrateStep moves the next migrateBatch ids into the next index and finishes the
// migration after the last one.
func (sh *shard) migrateStep() {
	end := min(sh.migrated+migrateBatch, len(sh.entries))
	for id := sh.migrated; id < end; id++ {
		if e := &sh.entries[id]; e.meta>>24 != uint32(kindFree) {
			placeIn(sh.next, e.hash, id)
		}
	}
	sh.migrated = end
	if end == len(sh.entries) {
		freeSlice(sh.index, sh.arena.heap)
		sh.index, sh.next, sh.migrated = sh.next, nil, 0
	}
}

// finishMigration completes a migration under way at once.
func (sh *shard) finishMigration() {
	for sh.next != nil {
		sh.migrateStep()
	}
}

// cancelMigration drops the next index.
func (sh *shard) cancelMigration() {
	freeSlice(sh.next, sh.arena.heap)
	sh.next, sh.migrated = nil, 0
}

// growEntries makes room for more entries. Off the heap the new capacity is double: the
// untouched tail of a mapping costs address space, not RSS, and fewer copies mean
// shorter stalls. On the heap it grows by 1/8 rather than append's 1/4, since there the
// slack is per-key overhead.
func (sh *shard) growEntries() {
	n := len(sh.entries)
	want := n + n/8 + 16
	if !sh.arena.heap && mmapAvailable && want*int(entrySize) >= offHeapMin {
		want = max(want, 2*n)
	}
	sh.entries = growSlice(sh.entries, want, sh.arena.heap)
}

// entrySize is the size of an entry (28 bytes).
const entrySize = unsafe.Sizeof(entry{})

// freeMemory releases the index, the entries and the arena and empties the shard's
// bookkeeping (not its counters, which the caller settles).
func (sh *shard) freeMemory() {
	sh.cancelMigration()
	freeSlice(sh.index, sh.arena.heap)
	freeSlice(sh.entries, sh.arena.heap)
	sh.index, sh.entries, sh.freeEntry, sh.expireCursor = nil, nil, 0, 0
	sh.objs, sh.freeObjs = nil, nil
	sh.arena.reset()
}

// rehash rebuilds the index at size slots (a power of two) at once, dropping any
// migration. When the entries slice is mostly free it is compacted too, so memory comes
// back after mass deletes.
func (sh *shard) rehash(size int) {
	sh.cancelMigration()
	if sh.count == 0 {
		// An empty shard gives all its memory back.
		sh.freeMemory()
		sh.index = makeSlice[uint32](max(size, minIndex), sh.arena.heap)
		sh.volatile, sh.nextExpiry = 0, 0
		return
	}
	if len(sh.entries) >= 64 && sh.count*4 < len(sh.entries) {
		live := makeSlice[entry](sh.count+sh.count/4, sh.arena.heap)[:0]
		for i := range sh.entries {
			if sh.entries[i].meta>>24 != uint32(kindFree) {
				live = append(live, sh.entries[i])
			}
		}
		freeSlice(sh.entries, sh.arena.heap)
		sh.entries, sh.freeEntry, sh.expireCursor = live, 0, 0
	}
	freeSlice(sh.index, sh.arena.heap)
	sh.index = makeSlice[uint32](size, sh.arena.heap)
	for id := range sh.entries {
		if e := &sh.entries[id]; e.meta>>24 != uint32(kindFree) {
			sh.place(e.hash, id)
		}
	}
}

// setExpiry changes e's expiry keeping the volatile count and the lower bound right.
func (sh *shard) setExpiry(e *entry, t int64) {
	old := e.expireAt()
	if (old != 0) != (t != 0) {
		if t != 0 {
			sh.volatile++
		} else {
			sh.volatile--
		}
	}
	e.setExpireAt(t)
	if t != 0 && (sh.nextExpiry == 0 || t < sh.nextExpiry) {
		sh.nextExpiry = t
	}
}

// resize makes e's value vlen bytes long, keeping the first keep value bytes, moving the
// block if its class changes. room is the capacity hint for large blocks.
func (sh *shard) resize(e *entry, vlen, keep, room int) bool {
	n, m := e.size(), int(e.klen)+vlen
	if sh.arena.fits(e.ref, n, m) {
		e.vlen = uint32(vlen)
		sh.used += int64(sh.arena.blockBytes(e.ref, m) - sh.arena.blockBytes(e.ref, n))
		return true
	}
	ref, ok := sh.arena.alloc(m, room)
	if !ok {
		return false
	}
	copy(sh.arena.block(ref, m), sh.arena.block(e.ref, n)[:int(e.klen)+min(keep, vlen)])
	sh.used += int64(sh.arena.blockBytes(ref, m) - sh.arena.blockBytes(e.ref, n))
	sh.arena.release(e.ref, n)
	e.ref, e.vlen = ref, uint32(vlen)
	return true
}
