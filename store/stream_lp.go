package store

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Listpacks for streams. A stream node is kept exactly as Redis 7.0 keeps
// it: one listpack (a 6-byte header holding the total bytes, uint32 LE, and
// the element count, uint16 LE or 65535 when unknown; the elements; a 0xFF
// end byte). An element is an encoding byte with the integer or length it
// may carry, the data, and a backlen (the size of encoding and data in 1 to
// 5 bytes of 7 bits, readable from its end), so a node is walked in both
// directions. Keeping Redis's layout makes a node's size, and so where a
// stream starts a new node and what MAXLEN ~ trims, the same as Redis's,
// and DUMP, RESTORE and RDB files copy nodes as they are.

const (
	lpHdr     = 6
	lpEndByte = 0xFF
	lpUnknown = 65535
)

// lpStrInt reports whether s is the canonical text of an int64, as a
// listpack decides to store a string as an integer.
func lpStrInt(s []byte) (int64, bool) {
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
		d := uint64(c - '0')
		if u*10 > 1<<64-1-d {
			return 0, false
		}
		u = u*10 + d
	}
	if i == 1 {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

func lpBacklenSize(l int) int {
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

func lpPutBacklen(dst []byte, l int) []byte {
	n := lpBacklenSize(l)
	for i := n - 1; i >= 0; i-- {
		b := byte(l>>(7*uint(i))) & 127
		if i != n-1 {
			b |= 128
		}
		dst = append(dst, b)
	}
	return dst
}

// lpAppendInt appends integer v as one element (no header update).
func lpAppendInt(dst []byte, v int64) []byte {
	start := len(dst)
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
	return lpPutBacklen(dst, len(dst)-start)
}

// lpAppendStr appends s as one element, as an integer when it is one's
// canonical text, as lpAppend does.
func lpAppendStr(dst, s []byte) []byte {
	if v, ok := lpStrInt(s); ok {
		return lpAppendInt(dst, v)
	}
	start := len(dst)
	switch n := len(s); {
	case n < 64:
		dst = append(dst, byte(n)|0x80)
	case n < 4096:
		dst = append(dst, byte(n>>8)|0xE0, byte(n))
	default:
		dst = append(dst, 0xF0)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	dst = append(dst, s...)
	return lpPutBacklen(dst, len(dst)-start)
}

// lpElem is one decoded element: an integer (isInt) or a slice of the
// listpack.
type lpElem struct {
	isInt bool
	i     int64
	s     []byte
}

// appendTo appends the element's text.
func (e lpElem) appendTo(dst []byte) []byte {
	if e.isInt {
		return strconv.AppendInt(dst, e.i, 10)
	}
	return append(dst, e.s...)
}

// equal reports whether the element's text is s.
func (e lpElem) equal(s []byte) bool {
	if e.isInt {
		v, ok := lpStrInt(s)
		return ok && v == e.i
	}
	return string(e.s) == string(s)
}

var errLP = errors.New("corrupt listpack")

// lpDecode decodes the element at p of a listpack whose end byte is at
// end, checking bounds: the element, its encoding+data size, and an error
// for a malformed element.
func lpDecode(lp []byte, p, end int) (e lpElem, size int, err error) {
	if p >= end {
		return e, 0, errLP
	}
	c := lp[p]
	need := func(n int) bool { return p+n <= end }
	switch {
	case c&0x80 == 0:
		return lpElem{isInt: true, i: int64(c)}, 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return e, 0, errLP
		}
		return lpElem{s: lp[p+1 : p+1+n]}, 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return e, 0, errLP
		}
		u := uint64(c&0x1F)<<8 | uint64(lp[p+1])
		return lpElem{isInt: true, i: int64(u<<51) >> 51}, 2, nil
	case c&0xF0 == 0xE0:
		if !need(2) {
			return e, 0, errLP
		}
		n := int(c&0x0F)<<8 | int(lp[p+1])
		if !need(2 + n) {
			return e, 0, errLP
		}
		return lpElem{s: lp[p+2 : p+2+n]}, 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return e, 0, errLP
		}
		n := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
		if uint64(p)+5+n > uint64(end) {
			return e, 0, errLP
		}
		return lpElem{s: lp[p+5 : p+5+int(n)]}, 5 + int(n), nil
	case c == 0xF1:
		if !need(3) {
			return e, 0, errLP
		}
		return lpElem{isInt: true, i: int64(int16(binary.LittleEndian.Uint16(lp[p+1:])))}, 3, nil
	case c == 0xF2:
		if !need(4) {
			return e, 0, errLP
		}
		u := uint32(lp[p+1]) | uint32(lp[p+2])<<8 | uint32(lp[p+3])<<16
		return lpElem{isInt: true, i: int64(int32(u<<8) >> 8)}, 4, nil
	case c == 0xF3:
		if !need(5) {
			return e, 0, errLP
		}
		return lpElem{isInt: true, i: int64(int32(binary.LittleEndian.Uint32(lp[p+1:])))}, 5, nil
	case c == 0xF4:
		if !need(9) {
			return e, 0, errLP
		}
		return lpElem{isInt: true, i: int64(binary.LittleEndian.Uint64(lp[p+1:]))}, 9, nil
	}
	return e, 0, errLP
}

// lpNext decodes the element at p of a checked listpack and returns it
// with the offset of the next one.
func lpNext(lp []byte, p int) (lpElem, int) {
	e, size, _ := lpDecode(lp, p, len(lp)-1)
	return e, p + size + lpBacklenSize(size)
}

// lpPrev returns the offset of the element that ends at p.
func lpPrev(lp []byte, p int) int {
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

// lpBacklen decodes a backlen, or returns -1 when its continuation bits
// are misplaced.
func lpBacklen(b []byte) int {
	v := 0
	for j, c := range b {
		if (c&128 != 0) == (j == 0) {
			return -1
		}
		v = v<<7 | int(c&127)
	}
	return v
}

// lpCheck walks every element of lp, checking the header, the bounds and
// the backlens, and returns the number of elements.
func lpCheck(lp []byte) (int, error) {
	if len(lp) < lpHdr+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEndByte {
		return 0, errLP
	}
	end := len(lp) - 1
	n := 0
	for p := lpHdr; p < end; n++ {
		_, size, err := lpDecode(lp, p, end)
		if err != nil {
			return n, err
		}
		bl := lpBacklenSize(size)
		q := p + size + bl
		if q > end || lpBacklen(lp[p+size:q]) != size {
			return n, errLP
		}
		p = q
	}
	if declared := int(binary.LittleEndian.Uint16(lp[4:])); declared != lpUnknown && declared != n {
		return n, errLP
	}
	return n, nil
}

// lpSetHeader writes lp's total bytes and element count.
func lpSetHeader(lp []byte, count int) {
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	binary.LittleEndian.PutUint16(lp[4:], uint16(min(count, lpUnknown)))
}

func lpCount(lp []byte) int { return int(binary.LittleEndian.Uint16(lp[4:])) }
