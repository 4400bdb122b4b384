package store

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"unsafe"
)

// Hash is a hash: fields mapped to values, both byte strings. Small hashes use the
// "listpack" encoding, one byte slice of (field length, field, value length, value)
// entries in insertion order, as Redis keeps them; a hash that grows past
// hash-max-listpack-entries fields or gets a field or value longer than
// hash-max-listpack-value bytes (EncodingLimits) converts to the "hashtable" encoding (bdict, pointer-free)
// and stays there, as in Redis.
//
// A Hash is not safe for concurrent use; the store serialises access through View,
// Update and Tx. Slices it hands out are valid until its next change.
type Hash struct {
	lp []byte // listpack encoding; nil once d is set
	n  int    // fields in lp
	d  *bdict
}

const hashSize = int64(unsafe.Sizeof(Hash{}))

// NewHash returns an empty hash in the listpack encoding.
func NewHash() *Hash { return &Hash{} }

// Kind implements Object.
func (h *Hash) Kind() Kind { return KindHash }

// Len implements Object: the number of fields.
func (h *Hash) Len() int {
	if h.d != nil {
		return h.d.n
	}
	return h.n
}

// Size implements Object, from its slices' capacities, so O(1).
func (h *Hash) Size() int64 {
	if h.d != nil {
		return hashSize + h.d.size()
	}
	return hashSize + int64(cap(h.lp))
}

// Encoding implements Object.
func (h *Hash) Encoding() string {
	if h.d != nil {
		return "hashtable"
	}
	return "listpack"
}

// Clone implements Object.
func (h *Hash) Clone() Object {
	c := &Hash{n: h.n}
	if h.d != nil {
		c.d = h.d.clone()
	} else {
		c.lp = bytes.Clone(h.lp)
	}
	return c
}

// Listpack entries: field length (1 byte), field, value length (1 byte), value.

func (h *Hash) lpField(off int) []byte {
	l := int(h.lp[off])
	return h.lp[off+1 : off+1+l : off+1+l]
}

func (h *Hash) lpValue(off int) []byte {
	v := off + 1 + int(h.lp[off])
	l := int(h.lp[v])
	return h.lp[v+1 : v+1+l : v+1+l]
}

func (h *Hash) lpNext(off int) int {
	v := off + 1 + int(h.lp[off])
	return v + 1 + int(h.lp[v])
}

func (h *Hash) lpFind(f []byte) int {
	for off := 0; off < len(h.lp); off = h.lpNext(off) {
		if bytes.Equal(h.lpField(off), f) {
			return off
		}
	}
	return -1
}

// lpOffsets appends the offset of every entry to dst.
func (h *Hash) lpOffsets(dst []int) []int {
	for off := 0; off < len(h.lp); off = h.lpNext(off) {
		dst = append(dst, off)
	}
	return dst
}

// convert moves a listpack hash to the hashtable encoding.
func (h *Hash) convert() {
	d := newBDict(h.n + 1)
	for off := 0; off < len(h.lp); off = h.lpNext(off) {
		d.insert(h.lpField(off), h.lpValue(off))
	}
	h.d, h.lp, h.n = d, nil, 0
}

// Get returns field f's value.
func (h *Hash) Get(f []byte) ([]byte, bool) {
	if h.d != nil {
		id := h.d.find(f)
		if id == dnil {
			return nil, false
		}
		return h.d.val(id), true
	}
	off := h.lpFind(f)
	if off < 0 {
		return nil, false
	}
	return h.lpValue(off), true
}

// Set gives field f the value v, adding f if absent, and reports whether it was
// added. A field or value too long for the listpack converts the hash first, and a
// field past hash-max-listpack-entries after it, as Redis's hashTypeSet does
// (EncodingLimits).
func (h *Hash) Set(f, v []byte) (added bool) {
	if maxLen := int(limits.Load().HashMaxListpackValue); h.d == nil && (len(f) > maxLen || len(v) > maxLen) {
		h.convert()
	}
	if d := h.d; d != nil {
		if id := d.find(f); id != dnil {
			d.setVal(id, v)
			return false
		}
		d.insert(f, v)
		return true
	}
	if off := h.lpFind(f); off >= 0 {
		// Replace the value in place, keeping the field's position.
		vo := off + 1 + int(h.lp[off])
		end := vo + 1 + int(h.lp[vo])
		tail := len(h.lp) - end
		grow := len(v) - (end - vo - 1)
		if grow > 0 {
			h.lp = append(h.lp, make([]byte, grow)...)
		}
		copy(h.lp[vo+1+len(v):], h.lp[end:end+tail])
		h.lp = h.lp[:vo+1+len(v)+tail]
		h.lp[vo] = byte(len(v))
		copy(h.lp[vo+1:], v)
		return false
	}
	h.lp = append(h.lp, byte(len(f)))
	h.lp = append(h.lp, f...)
	h.lp = append(h.lp, byte(len(v)))
	h.lp = append(h.lp, v...)
	h.n++
	if int64(h.n) > limits.Load().HashMaxListpackEntries {
		h.convert()
	}
	return true
}

// Delete removes field f and reports whether it was there.
func (h *Hash) Delete(f []byte) bool {
	if d := h.d; d != nil {
		id := d.find(f)
		if id == dnil {
			return false
		}
		d.remove(id)
		return true
	}
	off := h.lpFind(f)
	if off < 0 {
		return false
	}
	h.lp = append(h.lp[:off], h.lp[h.lpNext(off):]...)
	h.n--
	return true
}

// Range calls fn with every field and value, in insertion order for a listpack,
// until fn returns false. fn must not change h.
func (h *Hash) Range(fn func(f, v []byte) bool) {
	if d := h.d; d != nil {
		d.each(func(id uint32) bool { return fn(d.key(id), d.val(id)) })
		return
	}
	for off := 0; off < len(h.lp); off = h.lpNext(off) {
		if !fn(h.lpField(off), h.lpValue(off)) {
			return
		}
	}
}

// Random calls fn with k randomly chosen fields and their values: k distinct ones
// when unique is set (k < Len), else k independent draws, repeats allowed. The hash
// must not be empty.
func (h *Hash) Random(k int, unique bool, fn func(f, v []byte)) {
	if d := h.d; d != nil {
		if unique {
			for _, id := range d.sample(k) {
				fn(d.key(id), d.val(id))
			}
			return
		}
		for ; k > 0; k-- {
			id := d.random()
			fn(d.key(id), d.val(id))
		}
		return
	}
	var buf [512]int
	offs := h.lpOffsets(buf[:0])
	if unique {
		for i := 0; i < k; i++ {
			j := i + rand.IntN(len(offs)-i)
			offs[i], offs[j] = offs[j], offs[i]
			fn(h.lpField(offs[i]), h.lpValue(offs[i]))
		}
		return
	}
	for ; k > 0; k-- {
		off := offs[rand.IntN(len(offs))]
		fn(h.lpField(off), h.lpValue(off))
	}
}

// Scan calls fn with some of the fields from cursor on and returns the next cursor, 0
// when the iteration is complete. A listpack hash is returned whole at once, as in
// Redis; a hashtable is walked as Redis's dictScan walks it (see bdict.scan).
func (h *Hash) Scan(cursor uint64, count int, fn func(f, v []byte)) uint64 {
	d := h.d
	if d == nil {
		for off := 0; off < len(h.lp); off = h.lpNext(off) {
			fn(h.lpField(off), h.lpValue(off))
		}
		return 0
	}
	return d.scan(cursor, count, func(id uint32) { fn(d.key(id), d.val(id)) })
}

// HashIncrByFloat appends to dst the HINCRBYFLOAT result of adding incr (text, as the
// client sent it) to cur (nil for a missing field), computed in long double as Redis
// does. Errors carry Redis's replies: ErrNotFloat for an increment that is not a
// number, ErrHashNaNOrInf for an infinite one, ErrHashNotFloat for a current value
// that is not a number, and ErrNaNOrInf for a result that is not finite.
func HashIncrByFloat(dst, cur, incr []byte) ([]byte, error) {
	delta, err := parseLongDouble(incr)
	switch {
	case err == errInf:
		return dst, ErrHashNaNOrInf
	case err != nil:
		return dst, ErrNotFloat
	}
	sum := delta
	if cur != nil {
		x, err := parseLongDouble(cur)
		switch {
		case err == errInf:
			return dst, ErrNaNOrInf // inf + a finite increment: still infinite
		case err != nil:
			return dst, ErrHashNotFloat
		}
		sum = new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(x, delta)
	}
	if sum.MantExp(nil) > longDoubleMaxExp {
		return dst, ErrNaNOrInf
	}
	return appendHuman(dst, sum), nil
}

// Errors of the hash commands whose text differs from the string commands'.
var (
	// ErrHashNotInteger is HINCRBY's reply when the field's value is not an integer.
	ErrHashNotInteger = errors.New("ERR hash value is not an integer")
	// ErrHashNotFloat is HINCRBYFLOAT's reply when the field's value is not a number.
	ErrHashNotFloat = errors.New("ERR hash value is not a float")
	// ErrHashNaNOrInf is HINCRBYFLOAT's reply to an infinite increment.
	ErrHashNaNOrInf = errors.New("ERR value is NaN or Infinity")
)
