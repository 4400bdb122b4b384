package listpack

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Errors for malformed listpacks.
var (
	ErrHeader    = errors.New("listpack header does not match its length")
	ErrTruncated = errors.New("listpack entry runs past its end")
	ErrEncoding  = errors.New("listpack entry has an invalid encoding")
	ErrBacklen   = errors.New("listpack entry's back length is wrong")
	ErrCount     = errors.New("listpack element count does not match its header")
)

// Entry is one decoded element: an integer, or a string that is a slice
// of the listpack it was read from.
type Entry struct {
	Str   []byte // the string, capped at its length; nil for an integer
	Int   int64  // the integer, when IsInt
	IsInt bool
}

// AppendText appends the entry's text (an integer in decimal) to dst.
func (e Entry) AppendText(dst []byte) []byte {
	if e.IsInt {
		return strconv.AppendInt(dst, e.Int, 10)
	}
	return append(dst, e.Str...)
}

// Equal reports whether the entry's text is s, without formatting it.
func (e Entry) Equal(s []byte) bool {
	if e.IsInt {
		v, ok := ParseInt(s)
		return ok && v == e.Int
	}
	return string(e.Str) == string(s)
}

// TotalBytes is the total size lp's header declares; lp must hold a
// header (HeaderSize bytes).
func TotalBytes(lp []byte) int { return int(binary.LittleEndian.Uint32(lp)) }

// Count is the element count lp's header declares, CountUnknown when the
// entries must be counted; lp must hold a header (HeaderSize bytes).
func Count(lp []byte) int { return int(binary.LittleEndian.Uint16(lp[4:])) }

// CheckHeader checks what a listpack's header and end promise before its
// entries are read: room for both, a total that is len(lp), the End byte.
func CheckHeader(lp []byte) error {
	if len(lp) < HeaderSize+1 || TotalBytes(lp) != len(lp) || lp[len(lp)-1] != End {
		return ErrHeader
	}
	return nil
}

// Decode decodes the entry at offset p of lp, whose last byte is taken as
// its End byte: the entry and the bytes its encoding and data take (the
// backlen follows). Any bytes are safe: a malformed or out-of-bounds entry,
// or p past the entries, returns an error.
func Decode(lp []byte, p int) (e Entry, size int, err error) {
	end := len(lp) - 1
	if p < 0 || p >= end {
		return e, 0, ErrTruncated
	}
	c := lp[p]
	need := func(n int) bool { return p+n <= end }
	switch {
	case c&0x80 == 0:
		return Entry{IsInt: true, Int: int64(c)}, 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return e, 0, ErrTruncated
		}
		return Entry{Str: lp[p+1 : p+1+n : p+1+n]}, 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return e, 0, ErrTruncated
		}
		u := uint64(c&0x1F)<<8 | uint64(lp[p+1])
		return Entry{IsInt: true, Int: int64(u<<51) >> 51}, 2, nil
	case c&0xF0 == 0xE0:
		if !need(2) {
			return e, 0, ErrTruncated
		}
		n := int(c&0x0F)<<8 | int(lp[p+1])
		if !need(2 + n) {
			return e, 0, ErrTruncated
		}
		return Entry{Str: lp[p+2 : p+2+n : p+2+n]}, 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return e, 0, ErrTruncated
		}
		n := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
		if uint64(p)+5+n > uint64(end) {
			return e, 0, ErrTruncated
		}
		return Entry{Str: lp[p+5 : p+5+int(n) : p+5+int(n)]}, 5 + int(n), nil
	case c == 0xF1:
		if !need(3) {
			return e, 0, ErrTruncated
		}
		return Entry{IsInt: true, Int: int64(int16(binary.LittleEndian.Uint16(lp[p+1:])))}, 3, nil
	case c == 0xF2:
		if !need(4) {
			return e, 0, ErrTruncated
		}
		u := uint32(lp[p+1]) | uint32(lp[p+2])<<8 | uint32(lp[p+3])<<16
		return Entry{IsInt: true, Int: int64(int32(u<<8) >> 8)}, 4, nil
	case c == 0xF3:
		if !need(5) {
			return e, 0, ErrTruncated
		}
		return Entry{IsInt: true, Int: int64(int32(binary.LittleEndian.Uint32(lp[p+1:])))}, 5, nil
	case c == 0xF4:
		if !need(9) {
			return e, 0, ErrTruncated
		}
		return Entry{IsInt: true, Int: int64(binary.LittleEndian.Uint64(lp[p+1:]))}, 9, nil
	}
	return e, 0, ErrEncoding
}

// First is the offset of a listpack's first entry, or of its End byte when
// it has none.
const First = HeaderSize

// Next decodes the entry at offset p of a validated listpack (see the
// package doc) and returns it with the offset of the entry after it, or of
// the End byte after the last one.
func Next(lp []byte, p int) (Entry, int) {
	// The two smallest encodings, most of a stream node's entries, are
	// decoded here, the rest by Decode: a call saved per entry.
	switch c := lp[p]; {
	case c < 0x80:
		return Entry{Int: int64(c), IsInt: true}, p + 2
	case c < 0xC0:
		n := int(c & 0x3F)
		return Entry{Str: lp[p+1 : p+1+n : p+1+n]}, p + n + 2
	}
	e, size, _ := Decode(lp, p)
	return e, p + size + backlenSize(size)
}

// Prev returns the offset of the entry of a validated listpack that ends
// just before offset p (an entry's offset or the End byte's), read from
// its backlen. p must not be [First].
func Prev(lp []byte, p int) int {
	i := p - 1
	l, shift := 0, 0
	for {
		c := lp[i]
		l |= int(c&127) << shift
		if c&128 == 0 {
			break
		}
		shift += 7
		i--
	}
	return i - l
}

// decodeBacklen decodes a backlen of len(b) bytes written by appendBacklen,
// or returns -1 when its continuation flags are misplaced.
func decodeBacklen(b []byte) int {
	v := 0
	for j, c := range b {
		if (c&128 != 0) == (j == 0) {
			return -1
		}
		v = v<<7 | int(c&127)
	}
	return v
}

// Validate checks every byte of lp and returns its number of entries: the
// header and End byte, every entry's bounds and encoding, every backlen,
// and the declared count against the entries. After it succeeds, [Next]
// and [Prev] may walk lp.
func Validate(lp []byte) (int, error) {
	if err := CheckHeader(lp); err != nil {
		return 0, err
	}
	end := len(lp) - 1
	n := 0
	for p := First; p < end; n++ {
		_, size, err := Decode(lp, p)
		if err != nil {
			return n, err
		}
		q := p + size + backlenSize(size)
		if q > end || decodeBacklen(lp[p+size:q]) != size {
			return n, ErrBacklen
		}
		p = q
	}
	if declared := Count(lp); declared != CountUnknown && declared != n {
		return n, ErrCount
	}
	return n, nil
}

// Each validates lp ([Validate]) and, if it is well formed, calls fn with
// each entry in order, stopping at fn's first error. It returns the
// entries read: all of them, or those before the malformed one or before
// the one fn failed on.
func Each(lp []byte, fn func(Entry) error) (int, error) {
	n, err := Validate(lp)
	if err != nil {
		return n, err
	}
	i := 0
	for p := First; i < n; i++ {
		var e Entry
		e, p = Next(lp, p)
		if err := fn(e); err != nil {
			return i, err
		}
	}
	return n, nil
}
