package store

import (
	"bytes"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// ztree is the large encoding of a sorted set (Redis's "skiplist"): elements ordered
// by (score, member) with O(log n) insert, delete, rank and select, and a member ->
// element hash index, with no Go pointer per element.
//
//   - ents is the element table, indexed by a uint32 element id: score, the member's
//     place in arena, and the member's hash. Freed ids are reused.
//   - arena holds the member bytes back to back; deleted members leave garbage that is
//     compacted away once it is half the arena.
//   - slots is an open-addressing hash index (linear probing, backward-shift deletion,
//     so no tombstones) of id+1 values, 0 for empty.
//   - leaves and inners are the nodes of a B+tree with subtree counts, by index: a
//     leaf holds up to zfan ids in order and links to its neighbours; an inner node
//     holds up to zfan children with each child's element count and greatest element
//     (the separator its descent compares against). The root is at height levels
//     above the leaves.
//
// The collector sees a dozen slices, however many elements there are.
type ztree struct {
	ents    []zent
	freeIDs []uint32
	arena   []byte
	garbage int
	slots   []uint32
	leaves  []zleaf
	inners  []zinner
	// free node lists
	freeLeaves []uint32
	freeInners []uint32
	root       uint32
	height     int
	n          int
}

type zent struct {
	score float64
	off   uint32
	mlen  uint32
	hash  uint32
}

const (
	zfan = 64
	znil = ^uint32(0)
)

type zleaf struct {
	n          uint32
	prev, next uint32
	ids        [zfan]uint32
}

type zinner struct {
	n    uint32
	kids [zfan]uint32
	cnt  [zfan]uint32
	max  [zfan]uint32
}

const (
	zentSize   = int64(unsafe.Sizeof(zent{}))
	zleafSize  = int64(unsafe.Sizeof(zleaf{}))
	zinnerSize = int64(unsafe.Sizeof(zinner{}))
	ztreeSize  = int64(unsafe.Sizeof(ztree{}))
)

func newZTree() *ztree {
	t := &ztree{slots: make([]uint32, 16)}
	t.root = t.newLeaf()
	return t
}

// size is the memory the tree holds, from its slices' capacities.
func (t *ztree) size() int64 {
	return ztreeSize + int64(cap(t.ents))*zentSize + int64(cap(t.freeIDs))*4 + int64(cap(t.arena)) +
		int64(cap(t.slots))*4 + int64(cap(t.leaves))*zleafSize + int64(cap(t.inners))*zinnerSize +
		int64(cap(t.freeLeaves)+cap(t.freeInners))*4
}

func (t *ztree) clone() *ztree {
	c := *t
	c.ents = append([]zent(nil), t.ents...)
	c.freeIDs = append([]uint32(nil), t.freeIDs...)
	c.arena = append([]byte(nil), t.arena...)
	c.slots = append([]uint32(nil), t.slots...)
	c.leaves = append([]zleaf(nil), t.leaves...)
	c.inners = append([]zinner(nil), t.inners...)
	c.freeLeaves = append([]uint32(nil), t.freeLeaves...)
	c.freeInners = append([]uint32(nil), t.freeInners...)
	return &c
}

func (t *ztree) member(id uint32) []byte {
	e := &t.ents[id]
	return t.arena[e.off : e.off+e.mlen : e.off+e.mlen]
}

// cmp compares element id with the key (score, m).
func (t *ztree) cmp(id uint32, score float64, m []byte) int {
	s := t.ents[id].score
	switch {
	case s < score:
		return -1
	case s > score:
		return 1
	}
	return bytes.Compare(t.member(id), m)
}

func zhash(m []byte) uint32 { return uint32(xxhash.Sum64(m)) }

// find returns the id of member m, or znil.
func (t *ztree) find(m []byte) uint32 {
	h := zhash(m)
	return findID(t.slots, h, func(id uint32) bool {
		e := &t.ents[id]
		return e.hash == h && bytes.Equal(t.arena[e.off:e.off+e.mlen], m)
	})
}

func (t *ztree) placeSlot(id uint32) {
	placeID(t.slots, id, t.ents[id].hash)
}

func (t *ztree) resizeSlots(n int) {
	t.slots = reslotIDs(t.slots, n, t)
}

func (t *ztree) idHash(id uint32) uint32 { return t.ents[id].hash }

// insert adds member m (absent) with score.
func (t *ztree) insert(m []byte, score float64) {
	id := putFree(&t.ents, &t.freeIDs, zent{score: score, off: uint32(len(t.arena)), mlen: uint32(len(m)), hash: zhash(m)})
	t.arena = append(t.arena, m...)
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resizeSlots(len(t.slots) * 2)
	}
	t.placeSlot(id)
	t.treeInsert(id)
	t.n++
}

// remove deletes element id.
func (t *ztree) remove(id uint32) {
	t.treeDelete(id)
	unslotID(t.slots, id, t)
	t.garbage += int(t.ents[id].mlen)
	t.ents[id] = zent{}
	t.freeIDs = append(t.freeIDs, id)
	t.n--
	if len(t.slots) > 16 && t.n*8 < len(t.slots) {
		t.resizeSlots(len(t.slots) / 2)
	}
	if t.garbage > 4096 && t.garbage*2 > len(t.arena) {
		t.compact()
	}
}

// setScore moves element id to a new score.
func (t *ztree) setScore(id uint32, score float64) {
	t.treeDelete(id)
	t.ents[id].score = score
	t.treeInsert(id)
}

// compact rewrites the arena without the deleted members, in element order.
func (t *ztree) compact() {
	arena := make([]byte, 0, len(t.arena)-t.garbage)
	for lf := t.first(); lf != znil; lf = t.leaves[lf].next {
		l := &t.leaves[lf]
		for _, id := range l.ids[:l.n] {
			e := &t.ents[id]
			off := len(arena)
			arena = append(arena, t.arena[e.off:e.off+e.mlen]...)
			e.off = uint32(off)
		}
	}
	t.arena = arena
	t.garbage = 0
}

// first returns the leftmost leaf.
func (t *ztree) first() uint32 {
	node := t.root
	for level := t.height; level > 0; level-- {
		node = t.inners[node].kids[0]
	}
	return node
}

func (t *ztree) newLeaf() uint32 {
	return putFree(&t.leaves, &t.freeLeaves, zleaf{prev: znil, next: znil})
}

func (t *ztree) newInner() uint32 { return putFree(&t.inners, &t.freeInners, zinner{}) }

// countOf and maxOf describe the subtree rooted at node, level levels above the leaves.
func (t *ztree) countOf(node uint32, level int) uint32 {
	if level == 0 {
		return t.leaves[node].n
	}
	in := &t.inners[node]
	var c uint32
	for _, x := range in.cnt[:in.n] {
		c += x
	}
	return c
}

func (t *ztree) maxOf(node uint32, level int) uint32 {
	if level == 0 {
		l := &t.leaves[node]
		return l.ids[l.n-1]
	}
	in := &t.inners[node]
	return in.max[in.n-1]
}

// childFor returns the index of the child of inner node in whose range the key
// (score, m) falls: the first whose greatest element is >= the key, else the last.
func (t *ztree) childFor(in *zinner, score float64, m []byte) int {
	return firstID(in.max[:in.n-1], func(id uint32) bool { return t.cmp(id, score, m) >= 0 })
}

// leafPos returns the first position in leaf l whose element is >= the key.
func (t *ztree) leafPos(l *zleaf, score float64, m []byte) int {
	return firstID(l.ids[:l.n], func(id uint32) bool { return t.cmp(id, score, m) >= 0 })
}

// firstID returns the index of the first of ids for which pred holds, or len(ids);
// pred must be false for a prefix of ids and true after it.
func firstID(ids []uint32, pred func(id uint32) bool) int {
	lo, hi := 0, len(ids)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if pred(ids[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (t *ztree) treeInsert(id uint32) {
	right, split := t.insertAt(t.root, t.height, id)
	if !split {
		return
	}
	left := t.root
	r := t.newInner()
	in := &t.inners[r]
	in.n = 2
	in.kids[0], in.kids[1] = left, right
	in.cnt[0], in.cnt[1] = t.countOf(left, t.height), t.countOf(right, t.height)
	in.max[0], in.max[1] = t.maxOf(left, t.height), t.maxOf(right, t.height)
	t.root = r
	t.height++
}

// insertAt inserts id under node; when node had to split, it returns the new right
// sibling.
func (t *ztree) insertAt(node uint32, level int, id uint32) (uint32, bool) {
	e := &t.ents[id]
	score, m := e.score, t.member(id)
	if level == 0 {
		l := &t.leaves[node]
		pos := t.leafPos(l, score, m)
		if l.n < zfan {
			copy(l.ids[pos+1:l.n+1], l.ids[pos:l.n])
			l.ids[pos] = id
			l.n++
			return 0, false
		}
		r := t.newLeaf()
		l = &t.leaves[node]
		rl := &t.leaves[r]
		const half = zfan / 2
		copy(rl.ids[:], l.ids[half:])
		rl.n, l.n = zfan-half, half
		rl.prev, rl.next = node, l.next
		if l.next != znil {
			t.leaves[l.next].prev = r
		}
		l.next = r
		if pos <= half {
			copy(l.ids[pos+1:l.n+1], l.ids[pos:l.n])
			l.ids[pos] = id
			l.n++
		} else {
			pos -= half
			copy(rl.ids[pos+1:rl.n+1], rl.ids[pos:rl.n])
			rl.ids[pos] = id
			rl.n++
		}
		return r, true
	}
	i := t.childFor(&t.inners[node], score, m)
	child := t.inners[node].kids[i]
	nn, split := t.insertAt(child, level-1, id)
	in := &t.inners[node] // the child's split may have moved the slice
	if !split {
		in.cnt[i]++
		if t.cmp(in.max[i], score, m) < 0 {
			in.max[i] = id
		}
		return 0, false
	}
	in.cnt[i] = t.countOf(child, level-1)
	in.max[i] = t.maxOf(child, level-1)
	ncnt, nmax := t.countOf(nn, level-1), t.maxOf(nn, level-1)
	if in.n < zfan {
		t.innerInsertAt(in, i+1, nn, ncnt, nmax)
		return 0, false
	}
	r := t.newInner()
	in = &t.inners[node]
	ri := &t.inners[r]
	const half = zfan / 2
	copy(ri.kids[:], in.kids[half:])
	copy(ri.cnt[:], in.cnt[half:])
	copy(ri.max[:], in.max[half:])
	ri.n, in.n = zfan-half, half
	if i+1 <= half {
		t.innerInsertAt(in, i+1, nn, ncnt, nmax)
	} else {
		t.innerInsertAt(ri, i+1-half, nn, ncnt, nmax)
	}
	return r, true
}

func (t *ztree) innerInsertAt(in *zinner, at int, kid, cnt, max uint32) {
	n := int(in.n)
	copy(in.kids[at+1:n+1], in.kids[at:n])
	copy(in.cnt[at+1:n+1], in.cnt[at:n])
	copy(in.max[at+1:n+1], in.max[at:n])
	in.kids[at], in.cnt[at], in.max[at] = kid, cnt, max
	in.n++
}

func (t *ztree) innerRemoveAt(in *zinner, at int) {
	n := int(in.n)
	copy(in.kids[at:n-1], in.kids[at+1:n])
	copy(in.cnt[at:n-1], in.cnt[at+1:n])
	copy(in.max[at:n-1], in.max[at+1:n])
	in.n--
}

func (t *ztree) treeDelete(id uint32) {
	t.deleteAt(t.root, t.height, id)
	for t.height > 0 && t.inners[t.root].n == 1 {
		old := t.root
		t.root = t.inners[old].kids[0]
		t.freeInners = append(t.freeInners, old)
		t.height--
	}
}

// deleteAt removes id from under node and reports whether node is left empty.
func (t *ztree) deleteAt(node uint32, level int, id uint32) bool {
	e := &t.ents[id]
	score, m := e.score, t.member(id)
	if level == 0 {
		l := &t.leaves[node]
		pos := t.leafPos(l, score, m)
		copy(l.ids[pos:l.n-1], l.ids[pos+1:l.n])
		l.n--
		return l.n == 0
	}
	in := &t.inners[node]
	i := t.childFor(in, score, m)
	child := in.kids[i]
	emptied := t.deleteAt(child, level-1, id)
	in = &t.inners[node]
	if emptied {
		t.freeNode(child, level-1)
		t.innerRemoveAt(in, i)
		return in.n == 0
	}
	in.cnt[i]--
	in.max[i] = t.maxOf(child, level-1)
	t.maybeMerge(node, level, i)
	return false
}

func (t *ztree) freeNode(node uint32, level int) {
	if level > 0 {
		t.freeInners = append(t.freeInners, node)
		return
	}
	l := &t.leaves[node]
	if l.prev != znil {
		t.leaves[l.prev].next = l.next
	}
	if l.next != znil {
		t.leaves[l.next].prev = l.prev
	}
	t.freeLeaves = append(t.freeLeaves, node)
}

// maybeMerge merges child i of node with a neighbour when it has shrunk below a
// quarter and both fit in one node, so that nodes stay reasonably full and the tree
// shallow after mass deletions.
func (t *ztree) maybeMerge(node uint32, level, i int) {
	in := &t.inners[node]
	if in.n < 2 || t.nodeLen(in.kids[i], level-1) >= zfan/4 {
		return
	}
	a := i
	if i == int(in.n)-1 {
		a = i - 1
	}
	left, right := in.kids[a], in.kids[a+1]
	ln, rn := t.nodeLen(left, level-1), t.nodeLen(right, level-1)
	if ln+rn > zfan*3/4 {
		return
	}
	if level-1 == 0 {
		l, r := &t.leaves[left], &t.leaves[right]
		copy(l.ids[l.n:], r.ids[:r.n])
		l.n += r.n
	} else {
		l, r := &t.inners[left], &t.inners[right]
		copy(l.kids[l.n:], r.kids[:r.n])
		copy(l.cnt[l.n:], r.cnt[:r.n])
		copy(l.max[l.n:], r.max[:r.n])
		l.n += r.n
	}
	in.cnt[a] += in.cnt[a+1]
	in.max[a] = in.max[a+1]
	t.freeNode(right, level-1)
	t.innerRemoveAt(in, a+1)
}

func (t *ztree) nodeLen(node uint32, level int) int {
	if level == 0 {
		return int(t.leaves[node].n)
	}
	return int(t.inners[node].n)
}

// countBefore returns how many elements fail pred, which must be false for a prefix
// of the order and true after it.
func (t *ztree) countBefore(pred func(id uint32) bool) int {
	r := 0
	node := t.root
	for level := t.height; level > 0; level-- {
		in := &t.inners[node]
		lo := firstID(in.max[:in.n], pred)
		for _, c := range in.cnt[:lo] {
			r += int(c)
		}
		if lo == int(in.n) {
			return r
		}
		node = in.kids[lo]
	}
	l := &t.leaves[node]
	return r + firstID(l.ids[:l.n], pred)
}

// rank returns the 0-based position of element id.
func (t *ztree) rank(id uint32) int {
	e := &t.ents[id]
	score, m := e.score, t.member(id)
	return t.countBefore(func(x uint32) bool { return t.cmp(x, score, m) >= 0 })
}

// seek returns the leaf and position of the element of rank r (0 <= r < n).
func (t *ztree) seek(r int) (uint32, int) {
	node := t.root
	for level := t.height; level > 0; level-- {
		in := &t.inners[node]
		i := 0
		for r >= int(in.cnt[i]) {
			r -= int(in.cnt[i])
			i++
		}
		node = in.kids[i]
	}
	return node, r
}

// walk calls fn on the elements of ranks [lo, hi), ascending or, with rev, from hi-1
// down to lo, until fn returns false.
func (t *ztree) walk(lo, hi int, rev bool, fn func(id uint32) bool) {
	if lo >= hi {
		return
	}
	k := hi - lo
	if !rev {
		lf, pos := t.seek(lo)
		for k > 0 {
			l := &t.leaves[lf]
			for ; pos < int(l.n) && k > 0; pos++ {
				if !fn(l.ids[pos]) {
					return
				}
				k--
			}
			lf, pos = l.next, 0
		}
		return
	}
	lf, pos := t.seek(hi - 1)
	for k > 0 {
		l := &t.leaves[lf]
		for ; pos >= 0 && k > 0; pos-- {
			if !fn(l.ids[pos]) {
				return
			}
			k--
		}
		if l.prev == znil {
			return
		}
		lf = l.prev
		pos = int(t.leaves[lf].n) - 1
	}
}

// scan visits the elements from cursor on, as scanIDs; see ZSet.Scan.
func (t *ztree) scan(cursor uint64, count int, fn func(id uint32)) uint64 {
	return scanIDs(t.slots, cursor, count, t, fn)
}
