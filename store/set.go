package store

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/shoalkv/shoal/internal/ascii"
)

// Set is a set of byte strings. As in Redis 7.0 it has two encodings: "intset", the
// members as sorted integers of the narrowest width (2, 4 or 8 bytes) that holds them
// all, while every member is the canonical text of a 64-bit integer and there are at
// most set-max-intset-entries of them (EncodingLimits); and "hashtable" (bdict, pointer-free) otherwise.
// A set never converts back, as in Redis.
//
// A Set is not safe for concurrent use; the store serialises access through View,
// Update and Tx. Slices it hands out are valid until its next change; an intset's
// members are formatted into a buffer valid only during the callback.
type Set struct {
	is []byte // intset: sorted, little-endian, w bytes each
	w  int
	d  *bdict
}

const setSize = int64(unsafe.Sizeof(Set{}))

// NewSet returns an empty set in the intset encoding.
func NewSet() *Set { return &Set{w: 2} }

// Kind implements Object.
func (s *Set) Kind() Kind { return KindSet }

// Len implements Object.
func (s *Set) Len() int {
	if s.d != nil {
		return s.d.n
	}
	return len(s.is) / s.w
}

// Size implements Object, from its slices' capacities, so O(1).
func (s *Set) Size() int64 {
	if s.d != nil {
		return setSize + s.d.size()
	}
	return setSize + int64(cap(s.is))
}

// Encoding implements Object.
func (s *Set) Encoding() string {
	if s.d != nil {
		return "hashtable"
	}
	return "intset"
}

// Clone implements Object.
func (s *Set) Clone() Object {
	c := &Set{w: s.w}
	if s.d != nil {
		c.d = s.d.clone()
	} else {
		c.is = bytes.Clone(s.is)
	}
	return c
}

// intset access.

func (s *Set) at(i int) int64 {
	b := s.is[i*s.w:]
	switch s.w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

func (s *Set) put(i int, v int64) {
	b := s.is[i*s.w:]
	switch s.w {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

// search returns v's position, or where it would go.
func (s *Set) search(v int64) (int, bool) {
	lo, hi := 0, len(s.is)/s.w
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.at(mid) < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.is)/s.w && s.at(lo) == v
}

func widthOf(v int64) int {
	switch {
	case v >= -1<<15 && v < 1<<15:
		return 2
	case v >= -1<<31 && v < 1<<31:
		return 4
	}
	return 8
}

// intsetAdd inserts v (absent) at position pos, widening every member first if v
// needs more bytes.
func (s *Set) intsetAdd(v int64, pos int) {
	n := len(s.is) / s.w
	if w := widthOf(v); w > s.w {
		old := s
		wide := &Set{is: make([]byte, (n+1)*w), w: w}
		for i := 0; i < n; i++ {
			wide.put(i, old.at(i))
		}
		s.is, s.w = wide.is[:n*w], w
	}
	s.is = append(s.is, make([]byte, s.w)...)
	copy(s.is[(pos+1)*s.w:], s.is[pos*s.w:n*s.w])
	s.put(pos, v)
}

// convert moves an intset to the hashtable encoding.
func (s *Set) convert(sizeHint int) {
	n := len(s.is) / s.w
	d := newBDict(max(n, sizeHint))
	var buf [20]byte
	for i := 0; i < n; i++ {
		d.insert(strconv.AppendInt(buf[:0], s.at(i), 10), nil)
	}
	s.d, s.is = d, nil
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.d != nil {
		return s.d.find(m) != dnil
	}
	v, ok := ascii.ParseInt(m)
	if !ok {
		return false
	}
	_, found := s.search(v)
	return found
}

// Add adds m and reports whether it was new. A member that is not an integer, or
// one past set-max-intset-entries (EncodingLimits), converts an intset to a hashtable, as Redis's
// setTypeAdd does.
func (s *Set) Add(m []byte) bool {
	if s.d == nil {
		v, ok := ascii.ParseInt(m)
		if ok {
			pos, found := s.search(v)
			if found {
				return false
			}
			s.intsetAdd(v, pos)
			if int64(s.Len()) > limits.Load().SetMaxIntsetEntries {
				s.convert(0)
			}
			return true
		}
		s.convert(s.Len() + 1)
	}
	if s.d.find(m) != dnil {
		return false
	}
	s.d.insert(m, nil)
	return true
}

// Remove deletes m and reports whether it was a member.
func (s *Set) Remove(m []byte) bool {
	if d := s.d; d != nil {
		id := d.find(m)
		if id == dnil {
			return false
		}
		d.remove(id)
		return true
	}
	v, ok := ascii.ParseInt(m)
	if !ok {
		return false
	}
	pos, found := s.search(v)
	if !found {
		return false
	}
	s.is = append(s.is[:pos*s.w], s.is[(pos+1)*s.w:]...)
	return true
}

// Range calls fn with every member, ascending for an intset, until fn returns false.
// fn must not change s.
func (s *Set) Range(fn func(m []byte) bool) {
	if d := s.d; d != nil {
		d.each(func(id uint32) bool { return fn(d.key(id)) })
		return
	}
	var buf [20]byte
	for i := 0; i < len(s.is)/s.w; i++ {
		if !fn(strconv.AppendInt(buf[:0], s.at(i), 10)) {
			return
		}
	}
}

// Random calls fn with k randomly chosen members: k distinct ones when unique is set
// (k < Len), else k independent draws, repeats allowed. The set must not be empty.
func (s *Set) Random(k int, unique bool, fn func(m []byte)) {
	if d := s.d; d != nil {
		if unique {
			for _, id := range d.sample(k) {
				fn(d.key(id))
			}
			return
		}
		for ; k > 0; k-- {
			fn(d.key(d.random()))
		}
		return
	}
	var buf [20]byte
	n := s.Len()
	if !unique {
		for ; k > 0; k-- {
			fn(strconv.AppendInt(buf[:0], s.at(rand.IntN(n)), 10))
		}
		return
	}
	// Distinct positions: a partial Fisher-Yates shuffle.
	var stack [512]int32
	idx := stack[:0]
	for i := range n {
		idx = append(idx, int32(i))
	}
	for i := 0; i < k; i++ {
		j := i + rand.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
		fn(strconv.AppendInt(buf[:0], s.at(int(idx[i])), 10))
	}
}

// Pop removes k random distinct members (0 < k < Len) and calls fn with each. As
// Redis's SPOP does, when k is more than a fifth of the set it keeps the rest in a
// new set built member by member, which is an intset again if they all fit one.
func (s *Set) Pop(k int, fn func(m []byte)) {
	n := s.Len()
	if k*5 <= n {
		var buf [64]byte
		for ; k > 0; k-- {
			var m []byte
			if d := s.d; d != nil {
				m = append(buf[:0], d.key(d.random())...)
			} else {
				m = strconv.AppendInt(buf[:0], s.at(rand.IntN(s.Len())), 10)
			}
			fn(m)
			s.Remove(m)
		}
		return
	}
	// Pick the members to keep, report the others, and rebuild from the kept.
	keep := make(map[string]struct{}, n-k)
	s.Random(n-k, true, func(m []byte) { keep[string(m)] = struct{}{} })
	rest := NewSet()
	s.Range(func(m []byte) bool {
		if _, ok := keep[string(m)]; ok {
			rest.Add(m)
		} else {
			fn(m)
		}
		return true
	})
	*s = *rest
}

// Scan calls fn with some of the members from cursor on and returns the next cursor,
// 0 when the iteration is complete. An intset is returned whole at once, as in Redis;
// a hashtable is walked as Redis's dictScan walks it (see bdict.scan).
func (s *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	d := s.d
	if d == nil {
		s.Range(func(m []byte) bool { fn(m); return true })
		return 0
	}
	return d.scan(cursor, count, func(id uint32) { fn(d.key(id)) })
}
