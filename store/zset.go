package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"unsafe"
)

// ZSet is a sorted set: members ordered by (score, member bytes), as Redis orders
// them. Small sets use the "listpack" encoding, one byte slice of packed entries in
// order (8 bytes of score, a length byte, the member); a set that grows past
// zset-max-listpack-entries elements or gets a member longer than
// zset-max-listpack-value bytes (EncodingLimits) converts to the "skiplist" encoding (ztree: a counted B+tree plus a hash
// index, pointer-free), and stays there, as in Redis.
//
// A ZSet is not safe for concurrent use; the store serialises access through View,
// Update and Tx. Member slices it hands out are valid until its next change.
type ZSet struct {
	lp   []byte // listpack encoding; unused once tree is set
	n    int    // elements in lp
	tree *ztree
}

const zsetSize = int64(unsafe.Sizeof(ZSet{}))

// NewZSet returns an empty sorted set in the encoding Redis would create for
// sizeHint elements whose longest member has maxLen bytes.
func NewZSet(sizeHint, maxLen int) *ZSet {
	z := &ZSet{}
	if l := limits.Load(); int64(sizeHint) > l.ZSetMaxListpackEntries || int64(maxLen) > l.ZSetMaxListpackValue {
		z.tree = newZTree()
	}
	return z
}

// Kind implements Object.
func (z *ZSet) Kind() Kind { return KindZSet }

// Len implements Object.
func (z *ZSet) Len() int {
	if z.tree != nil {
		return z.tree.n
	}
	return z.n
}

// Size implements Object: the capacity of its slices, so O(1).
func (z *ZSet) Size() int64 {
	if z.tree != nil {
		return zsetSize + z.tree.size()
	}
	return zsetSize + int64(cap(z.lp))
}

// Encoding implements Object.
func (z *ZSet) Encoding() string {
	if z.tree != nil {
		return "skiplist"
	}
	return "listpack"
}

// Clone implements Object.
func (z *ZSet) Clone() Object {
	c := &ZSet{n: z.n}
	if z.tree != nil {
		c.tree = z.tree.clone()
	} else {
		c.lp = append([]byte(nil), z.lp...)
	}
	return c
}

// Listpack entries: score (8 bytes, little-endian IEEE 754), member length (1 byte),
// member.
const lpHeader = 9

func (z *ZSet) lpScore(off int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(z.lp[off:]))
}

func (z *ZSet) lpMember(off int) []byte {
	l := int(z.lp[off+8])
	return z.lp[off+lpHeader : off+lpHeader+l : off+lpHeader+l]
}

func (z *ZSet) lpNext(off int) int { return off + lpHeader + int(z.lp[off+8]) }

// lpFind returns the offset and position of member m, or -1.
func (z *ZSet) lpFind(m []byte) (off, pos int) {
	for off, pos = 0, 0; off < len(z.lp); off, pos = z.lpNext(off), pos+1 {
		if bytes.Equal(z.lpMember(off), m) {
			return off, pos
		}
	}
	return -1, -1
}

// lpOffset returns the offset of the entry at position pos (len(lp) for n).
func (z *ZSet) lpOffset(pos int) int {
	off := 0
	for ; pos > 0; pos-- {
		off = z.lpNext(off)
	}
	return off
}

func (z *ZSet) lpInsert(m []byte, score float64) {
	if score == 0 {
		score = 0 // a listpack stores scores as text, where -0 reads back as 0
	}
	off := 0
	for off < len(z.lp) {
		s := z.lpScore(off)
		if s > score || (s == score && bytes.Compare(z.lpMember(off), m) > 0) {
			break
		}
		off = z.lpNext(off)
	}
	need := lpHeader + len(m)
	z.lp = slices.Grow(z.lp, need)[:len(z.lp)+need]
	copy(z.lp[off+need:], z.lp[off:len(z.lp)-need])
	binary.LittleEndian.PutUint64(z.lp[off:], math.Float64bits(score))
	z.lp[off+8] = byte(len(m))
	copy(z.lp[off+lpHeader:], m)
	z.n++
}

func (z *ZSet) lpDelete(off int) {
	end := z.lpNext(off)
	z.lp = append(z.lp[:off], z.lp[end:]...)
	z.n--
}

// convert moves a listpack set to the skiplist encoding.
func (z *ZSet) convert() {
	t := newZTree()
	for off := 0; off < len(z.lp); off = z.lpNext(off) {
		t.insert(z.lpMember(off), z.lpScore(off))
	}
	z.tree, z.lp, z.n = t, nil, 0
}

// Compact converts a skiplist set back to a listpack when it is small enough, as
// Redis does for the results of ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE.
func (z *ZSet) Compact() {
	t := z.tree
	l := limits.Load()
	if t == nil || int64(t.n) > l.ZSetMaxListpackEntries {
		return
	}
	ok := true
	t.walk(0, t.n, false, func(id uint32) bool {
		ok = int64(t.ents[id].mlen) <= l.ZSetMaxListpackValue
		return ok
	})
	if !ok {
		return
	}
	c := &ZSet{}
	t.walk(0, t.n, false, func(id uint32) bool {
		c.lpInsert(t.member(id), t.ents[id].score)
		return true
	})
	*z = *c
}

// Score returns member m's score.
func (z *ZSet) Score(m []byte) (float64, bool) {
	if t := z.tree; t != nil {
		id := t.find(m)
		if id == znil {
			return 0, false
		}
		return t.ents[id].score, true
	}
	off, _ := z.lpFind(m)
	if off < 0 {
		return 0, false
	}
	return z.lpScore(off), true
}

// Set gives member m the score, adding it if absent; it reports whether m was added.
func (z *ZSet) Set(m []byte, score float64) (added bool) {
	if t := z.tree; t != nil {
		id := t.find(m)
		if id == znil {
			t.insert(m, score)
			return true
		}
		if t.ents[id].score != score { // -0 and 0 are equal here, as in Redis
			t.setScore(id, score)
		}
		return false
	}
	off, _ := z.lpFind(m)
	if off >= 0 {
		if z.lpScore(off) == score {
			return false
		}
		z.lpDelete(off)
		z.lpInsert(m, score)
		return false
	}
	if l := limits.Load(); int64(z.n+1) > l.ZSetMaxListpackEntries || int64(len(m)) > l.ZSetMaxListpackValue {
		z.convert()
		z.tree.insert(m, score)
		return true
	}
	z.lpInsert(m, score)
	return true
}

// Remove deletes member m and reports whether it was there.
func (z *ZSet) Remove(m []byte) bool {
	if t := z.tree; t != nil {
		id := t.find(m)
		if id == znil {
			return false
		}
		t.remove(id)
		return true
	}
	off, _ := z.lpFind(m)
	if off < 0 {
		return false
	}
	z.lpDelete(off)
	return true
}

// Rank returns member m's 0-based position in ascending order.
func (z *ZSet) Rank(m []byte) (int, bool) {
	if t := z.tree; t != nil {
		id := t.find(m)
		if id == znil {
			return 0, false
		}
		return t.rank(id), true
	}
	_, pos := z.lpFind(m)
	return pos, pos >= 0
}

// Range calls fn with the elements of ranks [lo, hi), ascending or, with rev, from
// hi-1 down to lo, until fn returns false. fn must not change z.
func (z *ZSet) Range(lo, hi int, rev bool, fn func(m []byte, score float64) bool) {
	lo, hi = max(lo, 0), min(hi, z.Len())
	if lo >= hi {
		return
	}
	if t := z.tree; t != nil {
		t.walk(lo, hi, rev, func(id uint32) bool { return fn(t.member(id), t.ents[id].score) })
		return
	}
	if !rev {
		off := z.lpOffset(lo)
		for i := lo; i < hi; i++ {
			if !fn(z.lpMember(off), z.lpScore(off)) {
				return
			}
			off = z.lpNext(off)
		}
		return
	}
	// Backwards: collect the offsets first.
	var stack [ZSetMaxListpackEntries]int
	offs := stack[:0]
	off := z.lpOffset(lo)
	for i := lo; i < hi; i++ {
		offs = append(offs, off)
		off = z.lpNext(off)
	}
	for i := hi - 1; i >= lo; i-- {
		if !fn(z.lpMember(offs[i-lo]), z.lpScore(offs[i-lo])) {
			return
		}
	}
}

// At returns the element of rank r (0 <= r < Len).
func (z *ZSet) At(r int) (m []byte, score float64) {
	z.Range(r, r+1, false, func(mm []byte, s float64) bool {
		m, score = mm, s
		return false
	})
	return m, score
}

// RemoveRange deletes the elements of ranks [lo, hi) and returns how many it deleted.
func (z *ZSet) RemoveRange(lo, hi int) int {
	lo, hi = max(lo, 0), min(hi, z.Len())
	if lo >= hi {
		return 0
	}
	if t := z.tree; t != nil {
		for i := lo; i < hi; i++ {
			lf, pos := t.seek(lo)
			t.remove(t.leaves[lf].ids[pos])
		}
		return hi - lo
	}
	start := z.lpOffset(lo)
	end := start
	for i := lo; i < hi; i++ {
		end = z.lpNext(end)
	}
	z.lp = append(z.lp[:start], z.lp[end:]...)
	z.n -= hi - lo
	return hi - lo
}

// ScoreRange is a range of scores: Min and Max, each excluded when its Ex flag is set.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// Empty reports whether no score can be in r.
func (r ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

func (r ScoreRange) gteMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r ScoreRange) lteMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// ScoreRanks returns the ranks [lo, hi) of the elements whose score is in r.
func (z *ZSet) ScoreRanks(r ScoreRange) (lo, hi int) {
	if r.Empty() {
		return 0, 0
	}
	if t := z.tree; t != nil {
		lo = t.countBefore(func(id uint32) bool { return r.gteMin(t.ents[id].score) })
		hi = t.countBefore(func(id uint32) bool { return !r.lteMax(t.ents[id].score) })
		return lo, max(lo, hi)
	}
	pos := 0
	for off := 0; off < len(z.lp); off, pos = z.lpNext(off), pos+1 {
		s := z.lpScore(off)
		if !r.gteMin(s) {
			lo = pos + 1
		}
		if r.lteMax(s) {
			hi = pos + 1
		}
	}
	return lo, max(lo, hi)
}

// LexBound is one end of a lexicographic range: - (Inf < 0), + (Inf > 0), or Value,
// excluded when Ex is set.
type LexBound struct {
	Inf   int
	Value []byte
	Ex    bool
}

// cmpLex compares member m with bound b as Redis's sdscmplex does.
func cmpLex(m []byte, b LexBound) int {
	switch {
	case b.Inf < 0:
		return 1
	case b.Inf > 0:
		return -1
	}
	return bytes.Compare(m, b.Value)
}

// LexRange is a range of members between two bounds.
type LexRange struct{ Min, Max LexBound }

// Empty reports whether no member can be in r.
func (r LexRange) Empty() bool {
	var c int
	switch {
	case r.Min.Inf != 0 && r.Min.Inf == r.Max.Inf:
		c = 0
	case r.Min.Inf < 0 || r.Max.Inf > 0:
		c = -1
	case r.Min.Inf > 0 || r.Max.Inf < 0:
		c = 1
	default:
		c = bytes.Compare(r.Min.Value, r.Max.Value)
	}
	return c > 0 || (c == 0 && (r.Min.Ex || r.Max.Ex))
}

func (r LexRange) gteMin(m []byte) bool {
	c := cmpLex(m, r.Min)
	return c > 0 || (c == 0 && !r.Min.Ex)
}

func (r LexRange) lteMax(m []byte) bool {
	c := cmpLex(m, r.Max)
	return c < 0 || (c == 0 && !r.Max.Ex)
}

// LexRanks returns the ranks [lo, hi) of the members in r, for a set whose elements
// all have the same score (the lexicographic commands' precondition). For other
// sets the answer is what Redis's walk gives: in a listpack, from the first member
// >= Min (or, with rev, the last member <= Max) for as long as the members stay in
// range.
func (z *ZSet) LexRanks(r LexRange, rev bool) (lo, hi int) {
	if r.Empty() || z.Len() == 0 {
		return 0, 0
	}
	if t := z.tree; t != nil {
		lo = t.countBefore(func(id uint32) bool { return r.gteMin(t.member(id)) })
		hi = t.countBefore(func(id uint32) bool { return !r.lteMax(t.member(id)) })
		return lo, max(lo, hi)
	}
	// Redis first checks the set's ends against the range.
	lastOff := z.lpOffset(z.n - 1)
	if !r.gteMin(z.lpMember(lastOff)) || !r.lteMax(z.lpMember(0)) {
		return 0, 0
	}
	var stack [ZSetMaxListpackEntries]int
	offs := stack[:0]
	off := 0
	for i := 0; i < z.n; i++ {
		offs = append(offs, off)
		off = z.lpNext(off)
	}
	if !rev {
		lo = 0
		for lo < z.n && !r.gteMin(z.lpMember(offs[lo])) {
			lo++
		}
		hi = lo
		for hi < z.n && r.lteMax(z.lpMember(offs[hi])) {
			hi++
		}
		return lo, hi
	}
	hi = z.n
	for hi > 0 && !r.lteMax(z.lpMember(offs[hi-1])) {
		hi--
	}
	lo = hi
	for lo > 0 && r.gteMin(z.lpMember(offs[lo-1])) {
		lo--
	}
	return lo, hi
}

// Scan calls fn with some of the elements from cursor on and returns the next cursor,
// 0 when the iteration is complete. A listpack set is returned whole at once, as in
// Redis. Otherwise the cursor walks the hash index's buckets in reverse-binary order,
// as Redis's dictScan does, so every element present for the whole iteration is
// returned at least once even if the index grows or shrinks in between; count bounds
// the elements per call (roughly) and the buckets visited (ten times count).
func (z *ZSet) Scan(cursor uint64, count int, fn func(m []byte, score float64)) uint64 {
	t := z.tree
	if t == nil {
		for off := 0; off < len(z.lp); off = z.lpNext(off) {
			fn(z.lpMember(off), z.lpScore(off))
		}
		return 0
	}
	return t.scan(cursor, count, func(id uint32) { fn(t.member(id), t.ents[id].score) })
}
