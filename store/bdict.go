package store

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"unsafe"
)

// bdict is the large encoding of hashes and sets (Redis's "hashtable"): a map from
// byte-string keys to byte-string values (empty for sets) with no Go pointer per
// element, so a collection of millions of elements is a dozen objects to the
// collector.
//
//   - ents is the element table, indexed by a uint32 element id: where the element's
//     bytes are (page, offset), its key and value lengths and its key's hash. Freed
//     ids are reused; a freed entry has page == dnil.
//   - pages hold the elements' bytes, key then value, back to back. Small elements
//     share pages of up to dictPageSize bytes, filled one after another; an element
//     larger than a quarter page gets a page of its own, freed with it, so deleting a
//     big value never leaves garbage behind and growing the dict never copies the
//     bytes already stored. Each page counts its live bytes: a page left with none is
//     released, and when the garbage in partly used pages passes the live bytes the
//     sparse pages' elements are moved out (compact).
//   - slots is an open-addressing index of id+1 values (0 for empty), linear probing
//     with backward-shift deletion, so lookups need no tombstones. It holds between
//     1/8 and 3/4 of its slots filled (above 8 slots), so a random slot finds an
//     element within a few tries.
//
// Byte slices handed out (key, val) stay valid until the next change to the dict.
type bdict struct {
	ents      []dent
	freeIDs   []uint32
	pages     []dpage
	freePages []uint32
	cur       uint32 // the page small elements are appended to, dnil for none
	slots     []uint32
	n         int
	liveBytes int   // element bytes
	garbage   int   // bytes of deleted elements still inside pages
	pageBytes int64 // capacity of all pages, for size
}

type dent struct {
	page uint32
	off  uint32
	klen uint32
	vlen uint32
	hash uint32
}

type dpage struct {
	buf  []byte
	live int
}

const (
	dnil          = ^uint32(0)
	dictPageSize  = 32 << 10
	dictMinSlots  = 8
	dentSize      = int64(unsafe.Sizeof(dent{}))
	dpageSize     = int64(unsafe.Sizeof(dpage{}))
	bdictSize     = int64(unsafe.Sizeof(bdict{}))
	dictBigOnPage = dictPageSize / 4
)

// dictSeed keys the element hashes: a random seed per process, so a client cannot
// choose members that all collide and turn lookups quadratic.
var dictSeed = maphash.MakeSeed()

func dictHash(b []byte) uint32 { return uint32(maphash.Bytes(dictSeed, b)) }

func newBDict(sizeHint int) *bdict {
	n := dictMinSlots
	for n*3 < sizeHint*4 {
		n *= 2
	}
	return &bdict{slots: make([]uint32, n), cur: dnil}
}

// size is the memory the dict holds, from its slices' capacities.
func (d *bdict) size() int64 {
	return bdictSize + int64(cap(d.ents))*dentSize + int64(cap(d.freeIDs)+cap(d.freePages)+cap(d.slots))*4 +
		int64(cap(d.pages))*dpageSize + d.pageBytes
}

func (d *bdict) clone() *bdict {
	c := *d
	c.ents = append([]dent(nil), d.ents...)
	c.freeIDs = append([]uint32(nil), d.freeIDs...)
	c.freePages = append([]uint32(nil), d.freePages...)
	c.slots = append([]uint32(nil), d.slots...)
	c.pages = make([]dpage, len(d.pages))
	for i, p := range d.pages {
		if p.buf != nil {
			c.pages[i] = dpage{buf: append(make([]byte, 0, cap(p.buf)), p.buf...), live: p.live}
		}
	}
	return &c
}

func (d *bdict) key(id uint32) []byte {
	e := &d.ents[id]
	b := d.pages[e.page].buf
	return b[e.off : e.off+e.klen : e.off+e.klen]
}

func (d *bdict) val(id uint32) []byte {
	e := &d.ents[id]
	b := d.pages[e.page].buf
	s := e.off + e.klen
	return b[s : s+e.vlen : s+e.vlen]
}

// find returns the id of key k, or dnil.
func (d *bdict) find(k []byte) uint32 {
	h := dictHash(k)
	return findID(d.slots, h, func(id uint32) bool {
		e := &d.ents[id]
		return e.hash == h && int(e.klen) == len(k) && bytes.Equal(d.key(id), k)
	})
}

// alloc reserves n bytes for an element and returns where.
func (d *bdict) alloc(n int) (page, off uint32) {
	if n > dictBigOnPage {
		return d.newPage(n, n), 0
	}
	if d.cur != dnil {
		p := &d.pages[d.cur]
		if l := len(p.buf); cap(p.buf)-l >= n {
			p.buf = p.buf[:l+n]
			p.live += n
			return d.cur, uint32(l)
		}
	}
	// A new shared page, sized to the dict so small dicts stay small.
	c := min(max(256, d.liveBytes/2, n), dictPageSize)
	d.cur = d.newPage(c, n)
	return d.cur, 0
}

// newPage adds a page of capacity c with its first n bytes in use.
func (d *bdict) newPage(c, n int) uint32 {
	d.pageBytes += int64(c)
	return putFree(&d.pages, &d.freePages, dpage{buf: make([]byte, n, c), live: n})
}

// release marks an element's n bytes on page as garbage, dropping the page when
// nothing live is left on it.
func (d *bdict) release(page uint32, n int) {
	p := &d.pages[page]
	p.live -= n
	d.garbage += n
	if p.live == 0 {
		d.garbage -= len(p.buf)
		d.pageBytes -= int64(cap(p.buf))
		*p = dpage{}
		d.freePages = append(d.freePages, page)
		if page == d.cur {
			d.cur = dnil
		}
	}
}

// store writes key and value to newly allocated space and points entry id at it.
func (d *bdict) store(id uint32, k, v []byte) {
	page, off := d.alloc(len(k) + len(v))
	b := d.pages[page].buf[off:]
	copy(b, k)
	copy(b[len(k):], v)
	e := &d.ents[id]
	e.page, e.off, e.klen, e.vlen = page, off, uint32(len(k)), uint32(len(v))
	d.liveBytes += len(k) + len(v)
}

// insert adds key k (absent) with value v and returns its id.
func (d *bdict) insert(k, v []byte) uint32 {
	id := putFree(&d.ents, &d.freeIDs, dent{hash: dictHash(k)})
	d.store(id, k, v)
	d.n++
	if d.n*4 > len(d.slots)*3 {
		d.resize(len(d.slots) * 2)
	}
	d.place(id)
	return id
}

// setVal replaces the value of element id.
func (d *bdict) setVal(id uint32, v []byte) {
	e := d.ents[id]
	if int(e.vlen) == len(v) {
		copy(d.val(id), v)
		return
	}
	b := d.pages[e.page].buf
	old := b[e.off : e.off+e.klen+e.vlen]
	// Allocating never moves a page's bytes, so the old key stays readable.
	d.store(id, old[:e.klen], v)
	d.liveBytes -= len(old)
	d.release(e.page, len(old))
	d.maybeCompact()
}

// remove deletes element id.
func (d *bdict) remove(id uint32) {
	unslotID(d.slots, id, d)
	e := d.ents[id]
	n := int(e.klen + e.vlen)
	d.liveBytes -= n
	d.release(e.page, n)
	d.ents[id] = dent{page: dnil}
	d.freeIDs = append(d.freeIDs, id)
	d.n--
	if len(d.ents) > 64 && d.n*4 < len(d.ents) {
		d.renumber()
	} else if len(d.slots) > dictMinSlots && d.n*8 < len(d.slots) {
		d.resize(len(d.slots) / 2)
	}
	d.maybeCompact()
}

// renumber gives the elements dense ids again once most ids are free, so the
// element table shrinks with the dict; the index is rebuilt at a size for n.
func (d *bdict) renumber() {
	ents := make([]dent, 0, d.n)
	for _, e := range d.ents {
		if e.page != dnil {
			ents = append(ents, e)
		}
	}
	d.ents, d.freeIDs = ents, nil
	n := dictMinSlots
	for n*3 < d.n*4 {
		n *= 2
	}
	d.slots = make([]uint32, n)
	for id := range d.ents {
		d.place(uint32(id))
	}
}

// maybeCompact moves the elements off sparse pages once deleted bytes outweigh
// live ones, so the pages' memory stays within about twice the elements'.
func (d *bdict) maybeCompact() {
	if d.garbage < dictPageSize || d.garbage < d.liveBytes {
		return
	}
	sparse := func(page uint32) bool {
		p := &d.pages[page]
		return p.live*2 < len(p.buf)
	}
	d.cur = dnil // never append to a page being emptied
	for id := range d.ents {
		e := &d.ents[id]
		if e.page == dnil || !sparse(e.page) {
			continue
		}
		oldPage, n := e.page, int(e.klen+e.vlen)
		src := d.pages[oldPage].buf[e.off : int(e.off)+n]
		page, off := d.alloc(n)
		copy(d.pages[page].buf[off:], src)
		e.page, e.off = page, off
		d.release(oldPage, n) // its old place is garbage now, its page maybe free
	}
}

func (d *bdict) place(id uint32) {
	placeID(d.slots, id, d.ents[id].hash)
}

func (d *bdict) resize(n int) {
	d.slots = reslotIDs(d.slots, n, d)
}

func (d *bdict) idHash(id uint32) uint32 { return d.ents[id].hash }

// each calls fn with every element id in slot order until fn returns false.
func (d *bdict) each(fn func(id uint32) bool) {
	for _, s := range d.slots {
		if s != 0 && !fn(s-1) {
			return
		}
	}
}

// random returns the id of a uniformly chosen element of a non-empty dict: every
// element holds exactly one slot, so a uniformly chosen filled slot will do.
func (d *bdict) random() uint32 {
	mask := len(d.slots) - 1
	for {
		if s := d.slots[rand.IntN(mask+1)]; s != 0 {
			return s - 1
		}
	}
}

// sample returns k distinct element ids chosen uniformly (k <= n), in no
// particular order.
func (d *bdict) sample(k int) []uint32 {
	if k*3 > d.n {
		// Dense: a partial shuffle of all ids.
		all := make([]uint32, 0, d.n)
		d.each(func(id uint32) bool { all = append(all, id); return true })
		for i := 0; i < k; i++ {
			j := i + rand.IntN(len(all)-i)
			all[i], all[j] = all[j], all[i]
		}
		return all[:k]
	}
	seen := make(map[uint32]struct{}, k)
	out := make([]uint32, 0, k)
	for len(out) < k {
		id := d.random()
		if _, dup := seen[id]; !dup {
			seen[id] = struct{}{}
			out = append(out, id)
		}
	}
	return out
}

// scan visits the elements from cursor on, as scanIDs.
func (d *bdict) scan(cursor uint64, count int, fn func(id uint32)) uint64 {
	return scanIDs(d.slots, cursor, count, d, fn)
}
