package kv

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library Redis loads (Roberto Ierusalimschy's struct 0.2 as
// Redis patched it): pack, unpack and size over formats of > < ! x b B h
// H l L T i[n] I[n] f d c[n] s, with the sizes and alignment of x86-64
// (long and size_t 8 bytes, int 4, maximum alignment 8) and its errors.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

func structLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// structFormat walks a format string.
type structFormat struct {
	L      *lua.LState
	fn     string // the function, for argument errors
	fmt    string
	pos    int
	little bool
	align  int
}

func newStructFormat(L *lua.LState, fn string) *structFormat {
	v := L.Get(1)
	s, ok := luaText(v)
	if !ok {
		got := v.Type().String()
		if L.GetTop() < 1 {
			got = "no value"
		}
		luaArgError(L, 1, fn, "string expected, got "+got)
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // a C string
	}
	return &structFormat{L: L, fn: fn, fmt: s, little: true, align: 1}
}

func (f *structFormat) more() bool { return f.pos < len(f.fmt) }

func (f *structFormat) next() byte {
	c := f.fmt[f.pos]
	f.pos++
	return c
}

// number reads the digits after an option, def without any.
func (f *structFormat) number(def int) int {
	if !f.more() || f.fmt[f.pos] < '0' || f.fmt[f.pos] > '9' {
		return def
	}
	a := 0
	for f.more() && f.fmt[f.pos] >= '0' && f.fmt[f.pos] <= '9' {
		d := int(f.fmt[f.pos] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		f.pos++
	}
	return a
}

// size is optsize: the size of option opt (reading its digits).
func (f *structFormat) size(opt byte) int {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return f.number(1)
	case 'i', 'I':
		n := f.number(4)
		if n > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", n, structMaxIntSize)
		}
		return n
	}
	return 0
}

// toAlign is gettoalign: the padding before an item of size at offset n.
func (f *structFormat) toAlign(n, opt, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	size = min(size, f.align)
	return (size - (n & (size - 1))) & (size - 1)
}

// control handles the options that change the endianness or alignment.
func (f *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.little = false
	case '<':
		f.little = true
	case '!':
		a := f.number(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		luaArgError(f.L, 1, f.fn, "invalid format option '"+string(opt)+"'")
	}
}

func structNumberArg(L *lua.LState, n int, fn string) float64 {
	v := L.Get(n)
	x, ok := luaNumberArg(v)
	if !ok {
		got := v.Type().String()
		if n > L.GetTop()+1 || n > L.GetTop() && fn != "pack" {
			got = "no value" // pack has pushed a nil after its arguments
		}
		luaArgError(L, n, fn, "number expected, got "+got)
	}
	return x
}

func structPack(L *lua.LState) int {
	f := newStructFormat(L, "pack")
	var b []byte
	arg := 2
	for f.more() {
		opt := f.next()
		size := f.size(opt)
		pad := f.toAlign(len(b), int(opt), size)
		for ; pad > 0; pad-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := structNumberArg(L, arg, "pack")
			arg++
			var v uint64
			if n < 0 {
				v = uint64(luaInteger(n))
			} else if n < 0x1p64 {
				v = uint64(n)
			}
			b = structPutInt(b, v, size, f.little)
		case 'x':
			b = append(b, 0)
		case 'f':
			b = structPutInt(b, uint64(math.Float32bits(float32(structNumberArg(L, arg, "pack")))), 4, f.little)
			arg++
		case 'd':
			b = structPutInt(b, math.Float64bits(structNumberArg(L, arg, "pack")), 8, f.little)
			arg++
		case 'c', 's':
			v := L.Get(arg)
			s, ok := luaText(v)
			if !ok {
				got := v.Type().String()
				if arg > L.GetTop()+1 {
					got = "no value"
				}
				luaArgError(L, arg, "pack", "string expected, got "+got)
			}
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				luaArgError(L, arg, "pack", "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt)
		}
		if len(b) > luaMaxString {
			L.RaiseError("struct.pack would make a string of more than %d bytes", luaMaxString)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// structPutInt appends the size low octets of v (zeros past the eighth).
func structPutInt(b []byte, v uint64, size int, little bool) []byte {
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		at := size - 1 - i
		if little {
			at = i
		}
		buf[at] = byte(v)
		v >>= 8
	}
	return append(b, buf...)
}

// structGetInt reads an integer of size octets as struct's getinteger
// does in a 64-bit unsigned long (the high octets of a wider one lost, the
// sign mask's shift taken modulo 64 as x86 does).
func structGetInt(p string, size int, little, signed bool) float64 {
	var l uint64
	for i := 0; i < size; i++ {
		at := i
		if little {
			at = size - 1 - i
		}
		l = l<<8 | uint64(p[at])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(L, "unpack")
	dv := L.Get(2)
	data, ok := luaText(dv)
	if !ok {
		got := dv.Type().String()
		if L.GetTop() < 2 {
			got = "no value"
		}
		luaArgError(L, 2, "unpack", "string expected, got "+got)
	}
	pos := int64(1)
	if L.Get(3) != lua.LNil {
		pos = int64(structNumberArg(L, 3, "unpack"))
	}
	if pos <= 0 {
		luaArgError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos--
	base := max(L.GetTop(), 3)
	var results []lua.LValue
	short := func(size int64) {
		if size < 0 || size > int64(len(data)) || pos > int64(len(data))-size { // a negative c0 size is a huge size_t in C
			luaArgError(L, 2, "unpack", "data string too short")
		}
	}
	for f.more() {
		opt := f.next()
		size := int64(f.size(opt))
		pos += int64(f.toAlign(int(pos), int(opt), int(size)))
		short(size)
		if base+len(results)+2 > luaMaxCStack {
			L.RaiseError("stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			results = append(results, lua.LNumber(structGetInt(data[pos:pos+size], int(size), f.little, signed)))
		case 'x':
		case 'f':
			bits := uint32(structGetInt(data[pos:pos+4], 4, f.little, false))
			results = append(results, lua.LNumber(math.Float32frombits(bits)))
		case 'd':
			var raw [8]byte
			copy(raw[:], data[pos:pos+8])
			var bits uint64
			if f.little {
				bits = binary.LittleEndian.Uint64(raw[:])
			} else {
				bits = binary.BigEndian.Uint64(raw[:])
			}
			results = append(results, lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				var prev lua.LNumber
				ok := false
				if len(results) > 0 {
					prev, ok = results[len(results)-1].(lua.LNumber)
				}
				if !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				size = int64(prev)
				results = results[:len(results)-1]
				short(size)
			}
			results = append(results, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = int64(e) + 1
			results = append(results, lua.LString(data[pos:pos+size-1]))
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range results {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(results) + 1
}

func structSize(L *lua.LState) int {
	f := newStructFormat(L, "size")
	pos := 0
	for f.more() {
		opt := f.next()
		size := f.size(opt)
		pos += f.toAlign(pos, int(opt), size)
		switch {
		case opt == 's':
			luaArgError(L, 1, "size", "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			luaArgError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !(opt >= 'a' && opt <= 'z' || opt >= 'A' && opt <= 'Z' || opt >= '0' && opt <= '9') {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}
