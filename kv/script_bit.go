package kv

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library Redis loads (LuaBitOp 1.0.2): 32-bit operations on Lua
// numbers, which arrive wrapped to 32 bits and leave as signed integers.

// bitLib makes the table of the bit library.
func bitLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	unary := func(name string, op func(uint32) uint32) (string, lua.LGFunction) {
		return name, func(L *lua.LState) int { return bitReturn(L, op(bitArg(L, 1, name))) }
	}
	fold := func(name string, op func(a, b uint32) uint32) (string, lua.LGFunction) {
		return name, func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			for i := L.GetTop(); i > 1; i-- {
				b = op(b, bitArg(L, i, name))
			}
			return bitReturn(L, b)
		}
	}
	shift := func(name string, op func(b uint32, n uint) uint32) (string, lua.LGFunction) {
		return name, func(L *lua.LState) int { return bitReturn(L, op(bitArg(L, 1, name), uint(bitArg(L, 2, name)&31))) }
	}
	set := func(name string, fn lua.LGFunction) { t.RawSetString(name, L.NewFunction(fn)) }
	set(unary("tobit", func(b uint32) uint32 { return b }))
	set(unary("bnot", func(b uint32) uint32 { return ^b }))
	set(unary("bswap", func(b uint32) uint32 { return b>>24 | b>>8&0xff00 | b&0xff00<<8 | b<<24 }))
	set(fold("band", func(a, b uint32) uint32 { return a & b }))
	set(fold("bor", func(a, b uint32) uint32 { return a | b }))
	set(fold("bxor", func(a, b uint32) uint32 { return a ^ b }))
	set(shift("lshift", func(b uint32, n uint) uint32 { return b << n }))
	set(shift("rshift", func(b uint32, n uint) uint32 { return b >> n }))
	set(shift("arshift", func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }))
	set(shift("rol", func(b uint32, n uint) uint32 { return b<<n | b>>(32-n) }))
	set(shift("ror", func(b uint32, n uint) uint32 { return b>>n | b<<(32-n) }))
	set("tohex", bitToHex)
	return t
}

// bitArg is LuaBitOp's barg: argument n of the function name (a number,
// or a string that reads as one) wrapped to 32 bits by adding 2^52+2^51,
// which rounds a fraction to the nearest integer, ties to even, and keeping
// the low word.
func bitArg(L *lua.LState, n int, name string) uint32 {
	f, ok := luaNumberArg(L.Get(n))
	if !ok {
		got := L.Get(n).Type().String()
		if n > L.GetTop() {
			got = "no value"
		}
		L.RaiseError("bad argument #%d to '%s' (number expected, got %s)", n, name, got)
	}
	return uint32(math.Float64bits(f + 6755399441055744.0))
}

func bitReturn(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// bitToHex is bit.tohex(x [, n]): the low n hex digits, upper case for a
// negative n, at most 8.
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1, "tohex")
	n := int64(8)
	if L.GetTop() >= 2 {
		n = int64(int32(bitArg(L, 2, "tohex")))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n, digits = -n, "0123456789ABCDEF"
	}
	n = min(n, 8)
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
