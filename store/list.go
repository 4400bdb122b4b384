package store

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// List is a list value (LPUSH, LRANGE, ...), laid out like Redis's quicklist: a
// sequence of nodes, each one pointer-free byte buffer packing several elements
// (about 8 KiB of them at list-max-listpack-size -2, as in Redis). The
// collector sees one pointer per node, never one per element.
//
// An element is packed as uvarint(len) | bytes | backlen, where backlen is the size of
// the first two parts written so it reads from its last byte backwards: a node is
// walked in either direction without an index, so a pop at either end is O(1) and a
// lookup by position skips whole nodes by their counts, then walks at most half a
// node.
//
// A node keeps free room before its first element (start) as well as after its last,
// so pushes at the head do not move the node's contents.
type List struct {
	nodes []listNode
	n     int   // elements
	size  int64 // bytes held: see Size
}

type listNode struct {
	buf   []byte // elements packed in buf[start:]
	start int32
	count int32
}

// A node's size is bounded by list-max-listpack-size (EncodingLimits): Redis
// 7.0's default -2 makes nodes of up to 8 KiB. A single larger element gets a
// node of its own.

// fits reports whether nd can take need more bytes as one more element.
func (nd *listNode) fits(need int) bool {
	maxBytes, maxCount := listNodeLimits()
	return nd.used()+need <= maxBytes && (maxCount == 0 || int(nd.count) < maxCount)
}

// mergeable reports whether nodes a and b are small enough together to
// become one: at most half a node's bytes, and the count allowed.
func mergeable(a, b *listNode) bool {
	maxBytes, maxCount := listNodeLimits()
	return a.used()+b.used() <= maxBytes/2 && (maxCount == 0 || int(a.count+b.count) <= maxCount)
}

// listHeader is what a List costs besides its nodes' buffers.
const (
	listHeader   = int64(unsafe.Sizeof(List{})) + 16
	listNodeSize = int64(unsafe.Sizeof(listNode{}))
)

var _ Object = (*List)(nil)

// NewList returns an empty list.
func NewList() *List { return &List{size: listHeader} }

// Kind implements Object.
func (l *List) Kind() Kind { return KindList }

// Len implements Object: the number of elements.
func (l *List) Len() int { return l.n }

// Size implements Object: the bytes held by the list, its nodes and their buffers
// (capacity, not just the packed elements).
func (l *List) Size() int64 { return l.size }

// Encoding implements Object. Redis 7.0 reports every list as a quicklist (the
// listpack encoding of small lists came with 7.2).
func (l *List) Encoding() string { return "quicklist" }

// Clone implements Object.
func (l *List) Clone() Object {
	c := &List{n: l.n, nodes: make([]listNode, len(l.nodes))}
	c.size = listHeader + int64(cap(c.nodes))*listNodeSize
	for i, nd := range l.nodes {
		b := make([]byte, len(nd.buf)-int(nd.start))
		copy(b, nd.buf[nd.start:])
		c.nodes[i] = listNode{buf: b, count: nd.count}
		c.size += int64(cap(b))
	}
	return c
}

// Element encoding.

func uvarintLen(x int) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// entryLen is the packed size of an element of n bytes.
func entryLen(n int) int {
	h := uvarintLen(n) + n
	return h + uvarintLen(h)
}

// putEntry packs v into dst, which is exactly entryLen(len(v)) bytes.
func putEntry(dst, v []byte) {
	k := binary.PutUvarint(dst, uint64(len(v)))
	copy(dst[k:], v)
	h := k + len(v)
	// backlen: the low 7 bits in the last byte, each byte but the first flagged
	// with 0x80 to say that more bits lie to its left.
	i := len(dst) - 1
	x := h
	for {
		b := byte(x & 0x7f)
		x >>= 7
		if x == 0 {
			dst[i] = b
			return
		}
		dst[i] = b | 0x80
		i--
	}
}

// entryAt decodes the element starting at p: its bytes and the offset after it.
func entryAt(b []byte, p int) (v []byte, next int) {
	l, k := binary.Uvarint(b[p:])
	h := k + int(l)
	return b[p+k : p+h], p + h + uvarintLen(h)
}

// entryBefore returns the offset of the element ending at e.
func entryBefore(b []byte, e int) int {
	h, shift, i := 0, 0, e-1
	for {
		c := b[i]
		h |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
		shift += 7
		i--
	}
	return i - h
}

// Node helpers.

func (nd *listNode) used() int { return len(nd.buf) - int(nd.start) }

// offset returns the offset in nd.buf of element j (j == count: the end).
func (nd *listNode) offset(j int) int {
	if j <= int(nd.count)/2 {
		p := int(nd.start)
		for ; j > 0; j-- {
			_, p = entryAt(nd.buf, p)
		}
		return p
	}
	p := len(nd.buf)
	for k := int(nd.count); k > j; k-- {
		p = entryBefore(nd.buf, p)
	}
	return p
}

// setBuf replaces node i's buffer, keeping the size count.
func (l *List) setBuf(i int, b []byte, start int) {
	nd := &l.nodes[i]
	l.size += int64(cap(b) - cap(nd.buf))
	nd.buf, nd.start = b, int32(start)
}

// makeRoom reallocates, if needed, the buffer of node i so that it has at least front
// free bytes before its elements and back free bytes after them.
func (l *List) makeRoom(i, front, back int) {
	nd := &l.nodes[i]
	u := nd.used()
	if int(nd.start) >= front && cap(nd.buf)-len(nd.buf) >= back {
		return
	}
	slack := (u + front + back) / 4
	if slack < 16 {
		slack = 16
	}
	head := front
	if front > 0 {
		head += slack
	}
	tail := back
	if back > 0 {
		tail += slack
	}
	b := make([]byte, head+u, head+u+tail)
	copy(b[head:], nd.buf[nd.start:])
	l.setBuf(i, b, head)
}

// insertNode inserts an empty node at position i.
func (l *List) insertNode(i int) {
	before := cap(l.nodes)
	l.nodes = append(l.nodes, listNode{})
	copy(l.nodes[i+1:], l.nodes[i:])
	l.nodes[i] = listNode{}
	l.size += int64(cap(l.nodes)-before) * listNodeSize
}

// removeNode drops node i.
func (l *List) removeNode(i int) {
	l.size -= int64(cap(l.nodes[i].buf))
	copy(l.nodes[i:], l.nodes[i+1:])
	l.nodes[len(l.nodes)-1] = listNode{}
	l.nodes = l.nodes[:len(l.nodes)-1]
	if len(l.nodes) == 0 {
		l.size -= int64(cap(l.nodes)) * listNodeSize
		l.nodes = nil
	}
}

// PushFront inserts v at the head (LPUSH).
func (l *List) PushFront(v []byte) {
	need := entryLen(len(v))
	if len(l.nodes) == 0 || !l.nodes[0].fits(need) {
		l.insertNode(0)
	}
	l.makeRoom(0, need, 0)
	nd := &l.nodes[0]
	nd.start -= int32(need)
	putEntry(nd.buf[nd.start:int(nd.start)+need], v)
	nd.count++
	l.n++
}

// PushBack appends v at the tail (RPUSH).
func (l *List) PushBack(v []byte) {
	need := entryLen(len(v))
	last := len(l.nodes) - 1
	if last < 0 || !l.nodes[last].fits(need) {
		last++
		l.insertNode(last)
	}
	l.makeRoom(last, 0, need)
	nd := &l.nodes[last]
	e := len(nd.buf)
	nd.buf = nd.buf[:e+need]
	putEntry(nd.buf[e:], v)
	nd.count++
	l.n++
}

// PopFront removes the head element and appends it to dst. The list must not be
// empty.
func (l *List) PopFront(dst []byte) []byte {
	nd := &l.nodes[0]
	v, next := entryAt(nd.buf, int(nd.start))
	dst = append(dst, v...)
	nd.start = int32(next)
	nd.count--
	l.n--
	l.tidy(0, 0)
	return dst
}

// PopBack removes the tail element and appends it to dst. The list must not be
// empty.
func (l *List) PopBack(dst []byte) []byte {
	i := len(l.nodes) - 1
	nd := &l.nodes[i]
	p := entryBefore(nd.buf, len(nd.buf))
	v, _ := entryAt(nd.buf, p)
	dst = append(dst, v...)
	nd.buf = nd.buf[:p]
	nd.count--
	l.n--
	l.tidy(i, i)
	return dst
}

// locate returns the node holding element i (0 <= i < Len) and i's position in it,
// skipping whole nodes by their counts from the nearer end.
func (l *List) locate(i int) (node, j int) {
	if i < l.n/2 {
		for k := range l.nodes {
			c := int(l.nodes[k].count)
			if i < c {
				return k, i
			}
			i -= c
		}
	}
	rest := l.n - i // elements from i to the end
	for k := len(l.nodes) - 1; k >= 0; k-- {
		c := int(l.nodes[k].count)
		if rest <= c {
			return k, c - rest
		}
		rest -= c
	}
	return 0, 0 // unreachable for a valid i
}

// Index returns element i (0 <= i < Len). The slice is valid until the list changes.
func (l *List) Index(i int) []byte {
	k, j := l.locate(i)
	nd := &l.nodes[k]
	v, _ := entryAt(nd.buf, nd.offset(j))
	return v
}

// Set replaces element i (0 <= i < Len) with v.
func (l *List) Set(i int, v []byte) {
	k, j := l.locate(i)
	nd := &l.nodes[k]
	p := nd.offset(j)
	_, q := entryAt(nd.buf, p)
	if q-p == entryLen(len(v)) {
		putEntry(nd.buf[p:q], v)
		return
	}
	l.deleteIn(k, p, q)
	nd.count--
	l.n--
	l.insertIn(k, j, v)
}

// Insert inserts v before element i (0 <= i <= Len; Len appends).
func (l *List) Insert(i int, v []byte) {
	switch {
	case i == 0:
		l.PushFront(v)
		return
	case i >= l.n:
		l.PushBack(v)
		return
	}
	k, j := l.locate(i)
	if j == 0 && k > 0 && l.nodes[k-1].fits(entryLen(len(v))) {
		// At a node boundary: the end of the previous node, if it has room.
		k, j = k-1, int(l.nodes[k-1].count)
	}
	l.insertIn(k, j, v)
}

// insertIn inserts v as element j of node k, splitting the node when it would
// grow past its limits.
func (l *List) insertIn(k, j int, v []byte) {
	need := entryLen(len(v))
	if nd := &l.nodes[k]; !nd.fits(need) && nd.count > 0 {
		if j == 0 || j == int(nd.count) {
			at := k
			if j > 0 {
				at = k + 1
			}
			l.insertNode(at)
			l.makeRoom(at, 0, need)
			nn := &l.nodes[at]
			nn.buf = nn.buf[:need]
			putEntry(nn.buf, v)
			nn.count = 1
			l.n++
			return
		}
		l.split(k, j)
		// v goes at the end of the first half.
		j = int(l.nodes[k].count)
	}
	nd := &l.nodes[k]
	p := nd.offset(j)
	front := p - int(nd.start)
	if front < len(nd.buf)-p && int(nd.start) >= need {
		// Fewer bytes before the insertion point: move them towards the head.
		s := int(nd.start)
		copy(nd.buf[s-need:], nd.buf[s:p])
		nd.start -= int32(need)
		putEntry(nd.buf[p-need:p], v)
	} else {
		l.makeRoom(k, 0, need)
		nd = &l.nodes[k]
		p = int(nd.start) + front
		e := len(nd.buf)
		nd.buf = nd.buf[:e+need]
		copy(nd.buf[p+need:], nd.buf[p:e])
		putEntry(nd.buf[p:p+need], v)
	}
	nd.count++
	l.n++
}

// split moves elements j.. of node k into a new node after it.
func (l *List) split(k, j int) {
	nd := &l.nodes[k]
	p := nd.offset(j)
	tail := make([]byte, len(nd.buf)-p)
	copy(tail, nd.buf[p:])
	moved := nd.count - int32(j)
	nd.buf = nd.buf[:p]
	nd.count = int32(j)
	l.insertNode(k + 1)
	l.nodes[k+1] = listNode{buf: tail, count: moved}
	l.size += int64(cap(tail))
}

// deleteIn removes bytes [p, q) of node k, moving whichever side is shorter.
func (l *List) deleteIn(k, p, q int) {
	nd := &l.nodes[k]
	s := int(nd.start)
	if p-s < len(nd.buf)-q {
		copy(nd.buf[s+q-p:q], nd.buf[s:p])
		nd.start += int32(q - p)
	} else {
		copy(nd.buf[p:], nd.buf[q:])
		nd.buf = nd.buf[:len(nd.buf)-(q-p)]
	}
}

// Delete removes count elements from index i on (0 <= i, i+count <= Len).
func (l *List) Delete(i, count int) {
	if count <= 0 {
		return
	}
	k, j := l.locate(i)
	first := k
	for x := k; count > 0; x++ {
		nd := &l.nodes[x]
		take := int(nd.count) - j
		if take > count {
			take = count
		}
		p := nd.offset(j)
		q := p
		for y := 0; y < take; y++ {
			_, q = entryAt(nd.buf, q)
		}
		l.deleteIn(x, p, q)
		nd.count -= int32(take)
		l.n -= take
		count -= take
		j = 0
		k = x
	}
	l.tidy(first, k)
}

// tidy drops the empty nodes among lo..hi, merges small neighbours there (and at
// the edges) and gives back buffers that are mostly empty, so deletions leave no
// trail of tiny nodes.
func (l *List) tidy(lo, hi int) {
	if hi >= len(l.nodes) {
		hi = len(l.nodes) - 1
	}
	for k := hi; k >= lo && k >= 0; k-- {
		if l.nodes[k].count == 0 {
			l.removeNode(k)
			hi--
		}
	}
	if lo > 0 {
		lo--
	}
	for k := lo; k <= hi+1 && k < len(l.nodes); {
		l.shrink(k)
		if k+1 < len(l.nodes) && mergeable(&l.nodes[k], &l.nodes[k+1]) {
			l.merge(k)
			hi--
			continue
		}
		k++
	}
}

// shrink gives back most of node k's buffer when it holds far less than it could.
func (l *List) shrink(k int) {
	nd := &l.nodes[k]
	if u := nd.used(); cap(nd.buf) > 256 && u < cap(nd.buf)/4 {
		b := make([]byte, u, u+u/4+16)
		copy(b, nd.buf[nd.start:])
		l.setBuf(k, b, 0)
	}
}

// merge appends node k+1's elements to node k and drops node k+1.
func (l *List) merge(k int) {
	l.makeRoom(k, 0, l.nodes[k+1].used())
	na, nb := &l.nodes[k], &l.nodes[k+1]
	na.buf = append(na.buf, nb.buf[nb.start:]...)
	na.count += nb.count
	l.removeNode(k + 1)
}

// Range calls fn for elements start..stop (inclusive, valid indexes) from the head
// side, until fn returns false.
func (l *List) Range(start, stop int, fn func(v []byte) bool) {
	if start > stop || l.n == 0 {
		return
	}
	k, j := l.locate(start)
	left := stop - start + 1
	for ; k < len(l.nodes) && left > 0; k++ {
		nd := &l.nodes[k]
		p := nd.offset(j)
		for ; j < int(nd.count) && left > 0; j++ {
			var v []byte
			v, p = entryAt(nd.buf, p)
			left--
			if !fn(v) {
				return
			}
		}
		j = 0
	}
}

// RangeBack calls fn for elements from index from (a valid index) down to the head,
// with each element's index, until fn returns false.
func (l *List) RangeBack(from int, fn func(i int, v []byte) bool) {
	if l.n == 0 {
		return
	}
	k, j := l.locate(from)
	i := from
	for ; k >= 0; k-- {
		nd := &l.nodes[k]
		if j < 0 {
			j = int(nd.count) - 1
		}
		_, p := entryAt(nd.buf, nd.offset(j))
		for ; j >= 0; j-- {
			p = entryBefore(nd.buf, p)
			v, _ := entryAt(nd.buf, p)
			if !fn(i, v) {
				return
			}
			i--
		}
	}
}

// Remove deletes up to limit elements equal to v (all of them when limit is 0),
// from the head side, or from the tail side when fromTail is set (LREM), and
// returns how many it removed. Each node is compacted in one pass.
func (l *List) Remove(v []byte, limit int, fromTail bool) int {
	removed := 0
	lo, hi := len(l.nodes), -1
	var drop []int
	for x := 0; x < len(l.nodes) && (limit == 0 || removed < limit); x++ {
		k := x
		if fromTail {
			k = len(l.nodes) - 1 - x
		}
		nd := &l.nodes[k]
		drop = drop[:0]
		if fromTail {
			p, j := len(nd.buf), int(nd.count)
			for j > 0 && (limit == 0 || removed+len(drop) < limit) {
				p = entryBefore(nd.buf, p)
				j--
				if e, _ := entryAt(nd.buf, p); bytes.Equal(e, v) {
					drop = append(drop, j)
				}
			}
			for a, b := 0, len(drop)-1; a < b; a, b = a+1, b-1 {
				drop[a], drop[b] = drop[b], drop[a]
			}
		} else {
			p := int(nd.start)
			for j := 0; j < int(nd.count) && (limit == 0 || removed+len(drop) < limit); j++ {
				var e []byte
				e, p = entryAt(nd.buf, p)
				if bytes.Equal(e, v) {
					drop = append(drop, j)
				}
			}
		}
		if len(drop) == 0 {
			continue
		}
		removed += len(drop)
		l.compactNode(k, drop)
		lo, hi = min(lo, k), max(hi, k)
	}
	if removed > 0 {
		l.tidy(lo, hi)
	}
	return removed
}

// compactNode rewrites node k without the elements at the positions in drop
// (ascending). It may leave the node empty; the caller tidies.
func (l *List) compactNode(k int, drop []int) {
	nd := &l.nodes[k]
	total := int(nd.count)
	nd.count, l.n = nd.count-int32(len(drop)), l.n-len(drop)
	w, p := int(nd.start), int(nd.start)
	for j := 0; j < total; j++ {
		_, q := entryAt(nd.buf, p)
		if len(drop) > 0 && drop[0] == j {
			drop = drop[1:]
		} else {
			w += copy(nd.buf[w:], nd.buf[p:q])
		}
		p = q
	}
	nd.buf = nd.buf[:w]
}
