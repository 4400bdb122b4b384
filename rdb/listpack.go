package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Listpacks, Redis 7's packed encoding of small hashes, sorted sets and
// list nodes: a 6-byte header (total bytes, uint32 LE; element count,
// uint16 LE, 65535 when it does not fit), the entries, and a 0xFF end
// byte. Each entry is an encoding byte (with the length or integer it
// may carry), the data, and a backlen: the size of encoding plus data in
// 1 to 5 bytes of 7 bits, read from the end backwards.

const (
	lpHeaderSize   = 6
	lpEnd          = 0xFF
	lpCountUnknown = 65535
)

// lpStringInt reports whether s is the canonical text of an int64, as
// listpacks decide to store an element as an integer (lpStringToInt64).
func lpStringInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	i := 0
	if s[0] == '-' {
		i = 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var u uint64
	for _, c := range s[i:] {
		if c < '0' || c > '9' || u > (1<<64-1)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u < uint64(c-'0') {
			return 0, false
		}
	}
	if i == 1 {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true // -1<<63 too: negating it wraps to itself
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// lpAppendEntry appends one element, encoded as Redis's lpAppend would.
func lpAppendEntry(dst, s []byte) []byte {
	start := len(dst)
	if v, ok := lpStringInt(s); ok {
		switch {
		case v >= 0 && v <= 127:
			dst = append(dst, byte(v))
		case v >= -4096 && v <= 4095:
			u := uint64(v) & (1<<13 - 1)
			dst = append(dst, byte(u>>8)|0xC0, byte(u))
		case v >= -32768 && v <= 32767:
			dst = append(dst, 0xF1, byte(v), byte(v>>8))
		case v >= -8388608 && v <= 8388607:
			dst = append(dst, 0xF2, byte(v), byte(v>>8), byte(v>>16))
		case v >= -2147483648 && v <= 2147483647:
			dst = append(dst, 0xF3)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = append(dst, 0xF4)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	} else {
		n := len(s)
		switch {
		case n < 64:
			dst = append(dst, byte(n)|0x80)
		case n < 4096:
			dst = append(dst, byte(n>>8)|0xE0, byte(n))
		default:
			dst = append(dst, 0xF0)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		}
		dst = append(dst, s...)
	}
	return lpAppendBacklen(dst, uint64(len(dst)-start))
}

// lpEntrySize is the bytes lpAppendEntry adds for s.
func lpEntrySize(s []byte) int {
	var n int
	if v, ok := lpStringInt(s); ok {
		switch {
		case v >= 0 && v <= 127:
			n = 1
		case v >= -4096 && v <= 4095:
			n = 2
		case v >= -32768 && v <= 32767:
			n = 3
		case v >= -8388608 && v <= 8388607:
			n = 4
		case v >= -2147483648 && v <= 2147483647:
			n = 5
		default:
			n = 9
		}
	} else {
		switch l := len(s); {
		case l < 64:
			n = 1 + l
		case l < 4096:
			n = 2 + l
		default:
			n = 5 + l
		}
	}
	return n + lpBacklenSize(uint64(n))
}

func lpBacklenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

func lpAppendBacklen(dst []byte, l uint64) []byte {
	n := lpBacklenSize(l)
	for i := n - 1; i >= 0; i-- {
		b := byte(l>>(7*uint(i))) & 127
		if i != n-1 {
			b |= 128 // every byte but the first one written continues
		}
		dst = append(dst, b)
	}
	return dst
}

// listpackBuilder builds one listpack in a reusable buffer.
type listpackBuilder struct {
	buf   []byte
	count int
}

func (b *listpackBuilder) reset() {
	b.buf = append(b.buf[:0], 0, 0, 0, 0, 0, 0)
	b.count = 0
}

func (b *listpackBuilder) add(s []byte) {
	b.buf = lpAppendEntry(b.buf, s)
	b.count++
}

// finish ends the listpack and returns it, valid until the next reset.
func (b *listpackBuilder) finish() []byte {
	b.buf = append(b.buf, lpEnd)
	binary.LittleEndian.PutUint32(b.buf, uint32(len(b.buf)))
	binary.LittleEndian.PutUint16(b.buf[4:], uint16(min(b.count, lpCountUnknown)))
	return b.buf
}

var (
	errLPHeader   = errors.New("listpack header does not match its length")
	errLPEntry    = errors.New("listpack entry runs past its end")
	errLPEncoding = errors.New("listpack entry has an invalid encoding")
	errLPBacklen  = errors.New("listpack entry's back length is wrong")
	errLPCount    = errors.New("listpack element count does not match its header")
)

// lpEach calls fn with every element of listpack lp, checking the
// structure as it goes. A string element is a slice of lp; an integer one
// is formatted into a scratch buffer fn must not keep (scratch is true).
// It returns the number of elements.
func lpEach(lp, scratch []byte, fn func(elem []byte, scratch bool) error) (int, error) {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEnd {
		return 0, errLPHeader
	}
	declared := int(binary.LittleEndian.Uint16(lp[4:]))
	n := 0
	p := lpHeaderSize
	for lp[p] != lpEnd {
		elem, size, err := lpEntryAt(lp, p, scratch[:0])
		if err != nil {
			return n, err
		}
		back := p + size
		bl := lpBacklenSize(uint64(size))
		if back+bl > len(lp)-1 || lpDecodeBacklen(lp[back:back+bl]) != uint64(size) {
			return n, errLPBacklen
		}
		if err := fn(elem, lpIsInt(lp[p])); err != nil {
			return n, err
		}
		n++
		p = back + bl
	}
	if p != len(lp)-1 || (declared != lpCountUnknown && declared != n) {
		return n, errLPCount
	}
	return n, nil
}

// lpIsInt reports whether an entry's encoding byte is an integer's.
func lpIsInt(c byte) bool {
	return c&0x80 == 0 || c&0xE0 == 0xC0 || (c >= 0xF1 && c <= 0xF4)
}

// lpDecodeBacklen decodes a backlen written by lpAppendBacklen.
func lpDecodeBacklen(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		if (c&128 != 0) == (i == 0) {
			return ^uint64(0) // continuation bits in the wrong places
		}
		v = v<<7 | uint64(c&127)
	}
	return v
}

// lpEntryAt decodes the entry at p: its element (an integer formatted
// into scratch) and the size of encoding plus data.
func lpEntryAt(lp []byte, p int, scratch []byte) (elem []byte, size int, err error) {
	end := len(lp) - 1 // the end byte
	c := lp[p]
	need := func(n int) bool { return p+n <= end }
	var v int64
	switch {
	case c&0x80 == 0:
		return strconv.AppendInt(scratch, int64(c), 10), 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return nil, 0, errLPEntry
		}
		return lp[p+1 : p+1+n], 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return nil, 0, errLPEntry
		}
		u := uint64(c&0x1F)<<8 | uint64(lp[p+1])
		v = int64(u<<51) >> 51
		size = 2
	case c&0xF0 == 0xE0:
		if !need(2) {
			return nil, 0, errLPEntry
		}
		n := int(c&0x0F)<<8 | int(lp[p+1])
		if !need(2 + n) {
			return nil, 0, errLPEntry
		}
		return lp[p+2 : p+2+n], 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return nil, 0, errLPEntry
		}
		n := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
		if uint64(p)+5+n > uint64(end) {
			return nil, 0, errLPEntry
		}
		return lp[p+5 : p+5+int(n)], 5 + int(n), nil
	case c == 0xF1:
		if !need(3) {
			return nil, 0, errLPEntry
		}
		v, size = int64(int16(binary.LittleEndian.Uint16(lp[p+1:]))), 3
	case c == 0xF2:
		if !need(4) {
			return nil, 0, errLPEntry
		}
		u := uint32(lp[p+1]) | uint32(lp[p+2])<<8 | uint32(lp[p+3])<<16
		v, size = int64(int32(u<<8)>>8), 4
	case c == 0xF3:
		if !need(5) {
			return nil, 0, errLPEntry
		}
		v, size = int64(int32(binary.LittleEndian.Uint32(lp[p+1:]))), 5
	case c == 0xF4:
		if !need(9) {
			return nil, 0, errLPEntry
		}
		v, size = int64(binary.LittleEndian.Uint64(lp[p+1:])), 9
	default:
		return nil, 0, errLPEncoding
	}
	return strconv.AppendInt(scratch, v, 10), size, nil
}
