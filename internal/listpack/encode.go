package listpack

import (
	"encoding/binary"

	"github.com/shoalkv/shoal/internal/ascii"
)

const (
	// HeaderSize is the bytes before the first entry: total bytes and
	// element count.
	HeaderSize = 6
	// End is the byte that ends every listpack.
	End = 0xFF
	// CountUnknown is the header's element count when the count does not fit
	// 16 bits; a reader then counts the entries.
	CountUnknown = 65535
)

// ParseInt reports whether s is the canonical text of an int64 (no sign but
// a minus, no leading zeros, no "-0"), the test by which a listpack stores
// an element as an integer (lpStringToInt64).
func ParseInt(s []byte) (int64, bool) { return ascii.ParseInt(s) }

// AppendHeader appends an empty listpack's header, to be filled by [Finish]
// or [SetHeader] once the entries are appended after it.
func AppendHeader(dst []byte) []byte {
	return append(dst, 0, 0, 0, 0, 0, 0)
}

// Finish appends the End byte to lp (a header and count entries) and writes
// its header, returning the finished listpack.
func Finish(lp []byte, count int) []byte {
	lp = append(lp, End)
	SetHeader(lp, count)
	return lp
}

// SetHeader writes lp's total bytes, len(lp), and its element count, as
// CountUnknown when count does not fit 16 bits.
func SetHeader(lp []byte, count int) {
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	binary.LittleEndian.PutUint16(lp[4:], uint16(min(count, CountUnknown)))
}

// AppendInt appends integer v as one entry, in the smallest encoding that
// holds it.
func AppendInt(dst []byte, v int64) []byte {
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
	return appendBacklen(dst, len(dst)-start)
}

// AppendString appends s as one entry the way Redis's lpAppend does: as an
// integer when s is one's canonical text ([ParseInt]), else as a string.
func AppendString(dst, s []byte) []byte {
	if v, ok := ParseInt(s); ok {
		return AppendInt(dst, v)
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
	return appendBacklen(dst, len(dst)-start)
}

// EntrySize is the number of bytes [AppendString] appends for s.
func EntrySize(s []byte) int {
	var n int
	if v, ok := ParseInt(s); ok {
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
	return n + backlenSize(n)
}

// backlenSize is the bytes of the backlen of an entry whose encoding and
// data take l bytes. The bounds are Redis's lpEncodeBacklen's, including
// its off-by-one at each power of 128, which changes the bytes written.
func backlenSize(l int) int {
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

// appendBacklen appends l as a backlen: 7 bits a byte, most significant
// first, every byte but the first one written flagged 128, so that a
// reader going backwards stops at the byte without the flag.
func appendBacklen(dst []byte, l int) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		b := byte(l>>(7*uint(i))) & 127
		if i != n-1 {
			b |= 128
		}
		dst = append(dst, b)
	}
	return dst
}
