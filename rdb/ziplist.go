package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// The other packed encodings a 7.0 file may hold: intsets (written and
// read), and, read only, ziplists and zipmaps, which older Redis versions
// wrote and 7.0 still loads.

// Intsets: encoding (bytes per integer: 2, 4 or 8; uint32 LE), count
// (uint32 LE), the integers sorted ascending, little-endian.

// intsetWidth is the narrowest width that holds v.
func intsetWidth(v int64) int {
	switch {
	case v >= -32768 && v <= 32767:
		return 2
	case v >= -2147483648 && v <= 2147483647:
		return 4
	}
	return 8
}

// appendIntset appends the intset of the sorted, distinct vals.
func appendIntset(dst []byte, vals []int64) []byte {
	w := 2
	for _, v := range vals {
		w = max(w, intsetWidth(v))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(w))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vals)))
	for _, v := range vals {
		switch w {
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

var (
	errIntsetHeader = errors.New("intset length does not match its header")
	errIntsetOrder  = errors.New("intset is not sorted or has duplicates")
)

// intsetEach calls fn with every member of intset is, formatted as text in
// a buffer fn must not keep (scratch is always true).
func intsetEach(is, scratch []byte, fn func(elem []byte, scratch bool) error) (int, error) {
	if len(is) < 8 {
		return 0, errIntsetHeader
	}
	w := binary.LittleEndian.Uint32(is)
	n := uint64(binary.LittleEndian.Uint32(is[4:]))
	if (w != 2 && w != 4 && w != 8) || 8+n*uint64(w) != uint64(len(is)) {
		return 0, errIntsetHeader
	}
	var prev int64
	for i := 0; i < int(n); i++ {
		p := is[8+i*int(w):]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return i, errIntsetOrder
		}
		prev = v
		if err := fn(strconv.AppendInt(scratch[:0], v, 10), true); err != nil {
			return i, err
		}
	}
	return int(n), nil
}

// Ziplists: zlbytes (uint32 LE), zltail (uint32 LE), zllen (uint16 LE,
// 65535 when it does not fit), entries, 0xFF. Each entry: the previous
// entry's length (1 byte, or 0xFE and uint32 LE), an encoding (strings:
// 00pppppp, 01pppppp qqqqqqqq big-endian, 10000000 and uint32 big-endian;
// integers: 0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8,
// 0xF1..0xFD the values 0..12), then the data.

const zipHeaderSize = 10

var (
	errZipHeader = errors.New("ziplist header does not match its length")
	errZipEntry  = errors.New("ziplist entry runs past its end or has an invalid encoding")
	errZipCount  = errors.New("ziplist element count does not match its header")
)

// ziplistEach calls fn with every element of ziplist zl; integers are
// formatted into a buffer fn must not keep (scratch is true).
func ziplistEach(zl, scratch []byte, fn func(elem []byte, scratch bool) error) (int, error) {
	if len(zl) < zipHeaderSize+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xFF {
		return 0, errZipHeader
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:]))
	declared := int(binary.LittleEndian.Uint16(zl[8:]))
	end := len(zl) - 1
	n, p, prevLen, last := 0, zipHeaderSize, 0, zipHeaderSize
	for zl[p] != 0xFF {
		start := p
		// previous entry length
		var pl int
		if zl[p] < 0xFE {
			pl = int(zl[p])
			p++
		} else if zl[p] == 0xFE {
			if p+5 > end {
				return n, errZipEntry
			}
			pl = int(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		}
		if pl != prevLen || p >= end {
			return n, errZipEntry
		}
		elem, next, err := zipEntryAt(zl, p, scratch[:0])
		if err != nil {
			return n, err
		}
		if err := fn(elem, zl[p]>>6 == 3); err != nil {
			return n, err
		}
		n++
		prevLen = next - start
		last = start
		p = next
	}
	if (declared != 65535 && declared != n) || (n > 0 && tail != last) || (n == 0 && tail != zipHeaderSize) {
		return n, errZipCount
	}
	return n, nil
}

// zipEntryAt decodes the entry whose encoding is at p and returns the
// element and where the next entry starts.
func zipEntryAt(zl []byte, p int, scratch []byte) ([]byte, int, error) {
	end := len(zl) - 1
	c := zl[p]
	str := func(hdr, n int) ([]byte, int, error) {
		if n < 0 || p+hdr+n > end {
			return nil, 0, errZipEntry
		}
		return zl[p+hdr : p+hdr+n], p + hdr + n, nil
	}
	in := func(n int) bool { return p+1+n <= end }
	switch c >> 6 {
	case 0:
		return str(1, int(c&0x3F))
	case 1:
		if !in(1) {
			return nil, 0, errZipEntry
		}
		return str(2, int(c&0x3F)<<8|int(zl[p+1]))
	case 2:
		if c != 0x80 || !in(4) {
			return nil, 0, errZipEntry
		}
		n := binary.BigEndian.Uint32(zl[p+1:])
		if uint64(n) > uint64(end) {
			return nil, 0, errZipEntry
		}
		return str(5, int(n))
	}
	var v int64
	var size int
	switch {
	case c == 0xC0:
		if in(2) {
			v, size = int64(int16(binary.LittleEndian.Uint16(zl[p+1:]))), 2
		}
	case c == 0xD0:
		if in(4) {
			v, size = int64(int32(binary.LittleEndian.Uint32(zl[p+1:]))), 4
		}
	case c == 0xE0:
		if in(8) {
			v, size = int64(binary.LittleEndian.Uint64(zl[p+1:])), 8
		}
	case c == 0xF0:
		if in(3) {
			u := uint32(zl[p+1]) | uint32(zl[p+2])<<8 | uint32(zl[p+3])<<16
			v, size = int64(int32(u<<8)>>8), 3
		}
	case c == 0xFE:
		if in(1) {
			v, size = int64(int8(zl[p+1])), 1
		}
	case c >= 0xF1 && c <= 0xFD:
		return strconv.AppendInt(scratch, int64(c&0x0F)-1, 10), p + 1, nil
	default:
		return nil, 0, errZipEntry
	}
	if size == 0 {
		return nil, 0, errZipEntry
	}
	return strconv.AppendInt(scratch, v, 10), p + 1 + size, nil
}

// Zipmaps (Redis 2.4's small hashes): a count byte (254 or more: count
// it), then per pair the field length (1 byte, or 254 and uint32 LE), the
// field, the value length, a free-bytes count (1 byte), the value and the
// free bytes; 0xFF ends it.

var errZipmap = errors.New("zipmap entry runs past its end")

// zipmapEach calls fn with every field and value of zipmap zm.
func zipmapEach(zm []byte, fn func(field, value []byte) error) (int, error) {
	if len(zm) < 2 || zm[len(zm)-1] != 0xFF {
		return 0, errZipmap
	}
	end := len(zm) - 1
	readLen := func(p int) (n, next int, ok bool) {
		if p >= end {
			return 0, 0, false
		}
		if zm[p] < 254 {
			return int(zm[p]), p + 1, true
		}
		if zm[p] == 254 && p+5 <= end {
			return int(binary.LittleEndian.Uint32(zm[p+1:])), p + 5, true
		}
		return 0, 0, false
	}
	n, p := 0, 1
	for zm[p] != 0xFF {
		fl, q, ok := readLen(p)
		if !ok || uint64(q)+uint64(fl) > uint64(end) {
			return n, errZipmap
		}
		field := zm[q : q+fl]
		vl, q2, ok := readLen(q + fl)
		if !ok || q2 >= end {
			return n, errZipmap
		}
		free := int(zm[q2])
		q2++
		if uint64(q2)+uint64(vl)+uint64(free) > uint64(end) {
			return n, errZipmap
		}
		if err := fn(field, zm[q2:q2+vl]); err != nil {
			return n, err
		}
		n++
		p = q2 + vl + free
	}
	if n == 0 || (zm[0] < 254 && int(zm[0]) != n) {
		return n, errZipCount
	}
	return n, nil
}
