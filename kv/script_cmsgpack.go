package kv

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library Redis loads (lua-cmsgpack 0.4.0): pack, unpack,
// unpack_one and unpack_limit, with its encodings (the smallest integer
// form for a number that is an int64, float 32 when that loses nothing,
// else float 64; str8/16/32 for strings; a table whose keys are 1..n is
// an array, any other a map; tables nested past 16 levels and values
// with no MessagePack form are nil) and its errors. As for cjson, a map's
// keys come in gopher-lua's iteration order.

const (
	msgpackMaxNesting = 16
	luaMaxCStack      = 8000 // LUAI_MAXCSTACK: the stack slots a C function may use
)

func cmsgpackLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return msgpackUnpack(L, 0, 0) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		offset := luaOptInteger(L, 2, 0, "unpack_one")
		L.SetTop(1)
		return msgpackUnpack(L, 1, offset)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		limit := luaCheckInteger(L, 2, "unpack_limit")
		offset := luaOptInteger(L, 3, 0, "unpack_limit")
		L.SetTop(1)
		return msgpackUnpack(L, limit, offset)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// luaCheckInteger is luaL_checkinteger: a number (or numeric string),
// truncated.
func luaCheckInteger(L *lua.LState, n int, name string) int64 {
	v := L.Get(n)
	f, ok := luaNumberArg(v)
	if !ok {
		got := v.Type().String()
		if n > L.GetTop() {
			got = "no value"
		}
		luaArgError(L, n, name, "number expected, got "+got)
	}
	return luaInteger(f)
}

// luaOptInteger is luaL_optinteger.
func luaOptInteger(L *lua.LState, n int, def int64, name string) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return luaCheckInteger(L, n, name)
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		luaArgError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = msgpackEncode(buf, L.Get(i), 0)
		if len(buf) > luaMaxString {
			L.RaiseError("cmsgpack.pack would make a string of more than %d bytes", luaMaxString)
		}
	}
	L.Push(lua.LString(buf))
	return 1
}

func msgpackEncode(b []byte, v lua.LValue, level int) []byte {
	if len(b) > luaMaxString {
		return b
	}
	switch x := v.(type) {
	case lua.LString:
		n := len(x)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
		default:
			b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
		}
		return append(b, x...)
	case lua.LBool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if !math.IsInf(f, 0) && f >= -0x1p63 && f < 0x1p63 && float64(int64(f)) == f {
			return msgpackInt(b, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(f32))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := msgpackArrayLen(x); ok {
			b = msgpackHeader(b, 0x90, 0xdc, n)
			for i := 1; i <= n; i++ {
				b = msgpackEncode(b, x.RawGetInt(i), level+1)
			}
			return b
		}
		b = msgpackHeader(b, 0x80, 0xde, tableSize(x))
		x.ForEach(func(k, val lua.LValue) {
			b = msgpackEncode(b, k, level+1)
			b = msgpackEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// msgpackArrayLen is table_is_an_array: every key a positive number that
// is a C int, and the largest as many as the keys.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, maxKey := 0, 0
	array := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !array || !ok || n <= 0 || n >= 1<<31 || float64(int32(n)) != float64(n) {
			array = false
			return
		}
		maxKey = max(maxKey, int(n))
		count++
	})
	return maxKey, array && maxKey == count
}

// msgpackHeader writes an array's or a map's header: fix form, 16 or 32
// bits.
func msgpackHeader(b []byte, fix, wide byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, wide), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, wide+1), uint32(n))
}

func msgpackInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(b, byte(n))
	case n >= 0 && n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// msgpackDecoder reads values; top counts the stack slots lua-cmsgpack
// would use, for its "stack overflow" errors.
type msgpackDecoder struct {
	L   *lua.LState
	p   string
	top int
	err string
}

func msgpackUnpack(L *lua.LState, limit, offset int64) int {
	v := L.Get(1)
	s, ok := luaText(v)
	if !ok {
		got := v.Type().String()
		if L.GetTop() < 1 {
			got = "no value"
		}
		luaArgError(L, 1, "unpack", "string expected, got "+got)
	}
	all := limit == 0 && offset == 0 // unpack_limit(s, 0) is unpack(s), as in lua-cmsgpack
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	}
	if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if all {
		limit = math.MaxInt32
	}
	d := &msgpackDecoder{L: L, p: s[offset:], top: 1}
	var values []lua.LValue
	for len(d.p) > 0 && int64(len(values)) < limit {
		v := d.value()
		switch d.err {
		case "eof":
			L.RaiseError("Missing bytes in input.")
		case "format":
			L.RaiseError("Bad data format in input.")
		}
		values = append(values, v)
		d.top++
	}
	if !all {
		next := lua.LNumber(len(s) - len(d.p))
		if len(d.p) == 0 {
			next = -1
		}
		values = append([]lua.LValue{next}, values...)
	}
	for _, v := range values {
		L.Push(v)
	}
	return len(values)
}

func (d *msgpackDecoder) need(n int) bool {
	if len(d.p) < n {
		d.err = "eof"
		return false
	}
	return true
}

func (d *msgpackDecoder) checkStack(what string) {
	if d.top+1 > luaMaxCStack {
		d.L.RaiseError("stack overflow (%s)", what)
	}
}

// value decodes one value at the front of d.p; on a failure d.err says
// which and the value is nil.
func (d *msgpackDecoder) value() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	d.checkStack("too many return values at once; use unpack_one or unpack_limit instead.")
	c := d.p[0]
	fixed := func(n int) string {
		if !d.need(n) {
			return ""
		}
		b := d.p[1:n]
		d.p = d.p[n:]
		return b
	}
	switch {
	case c == 0xcc:
		if b := fixed(2); d.err == "" {
			return lua.LNumber(b[0])
		}
	case c == 0xd0:
		if b := fixed(2); d.err == "" {
			return lua.LNumber(int8(b[0]))
		}
	case c == 0xcd:
		if b := fixed(3); d.err == "" {
			return lua.LNumber(binary.BigEndian.Uint16([]byte(b)))
		}
	case c == 0xd1:
		if b := fixed(3); d.err == "" {
			return lua.LNumber(int16(binary.BigEndian.Uint16([]byte(b))))
		}
	case c == 0xce:
		if b := fixed(5); d.err == "" {
			return lua.LNumber(binary.BigEndian.Uint32([]byte(b)))
		}
	case c == 0xd2:
		if b := fixed(5); d.err == "" {
			return lua.LNumber(int32(binary.BigEndian.Uint32([]byte(b))))
		}
	case c == 0xcf:
		if b := fixed(9); d.err == "" {
			return lua.LNumber(binary.BigEndian.Uint64([]byte(b)))
		}
	case c == 0xd3:
		if b := fixed(9); d.err == "" {
			return lua.LNumber(int64(binary.BigEndian.Uint64([]byte(b))))
		}
	case c == 0xc0:
		d.p = d.p[1:]
		return lua.LNil
	case c == 0xc3, c == 0xc2:
		d.p = d.p[1:]
		return lua.LBool(c == 0xc3)
	case c == 0xca:
		if b := fixed(5); d.err == "" {
			return lua.LNumber(math.Float32frombits(binary.BigEndian.Uint32([]byte(b))))
		}
	case c == 0xcb:
		if b := fixed(9); d.err == "" {
			return lua.LNumber(math.Float64frombits(binary.BigEndian.Uint64([]byte(b))))
		}
	case c == 0xd9:
		if b := fixed(2); d.err == "" {
			return d.bytes(int(b[0]))
		}
	case c == 0xda:
		if b := fixed(3); d.err == "" {
			return d.bytes(int(binary.BigEndian.Uint16([]byte(b))))
		}
	case c == 0xdb:
		if b := fixed(5); d.err == "" {
			return d.bytes(int(binary.BigEndian.Uint32([]byte(b))))
		}
	case c == 0xdc, c == 0xde:
		if b := fixed(3); d.err == "" {
			return d.container(c == 0xdc, int(binary.BigEndian.Uint16([]byte(b))))
		}
	case c == 0xdd, c == 0xdf:
		if b := fixed(5); d.err == "" {
			return d.container(c == 0xdd, int(binary.BigEndian.Uint32([]byte(b))))
		}
	case c&0x80 == 0:
		d.p = d.p[1:]
		return lua.LNumber(c)
	case c&0xe0 == 0xe0:
		d.p = d.p[1:]
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		d.p = d.p[1:]
		return d.bytes(int(c & 0x1f))
	case c&0xf0 == 0x90, c&0xf0 == 0x80:
		d.p = d.p[1:]
		return d.container(c&0xf0 == 0x90, int(c&0xf))
	default:
		d.err = "format"
	}
	return lua.LNil
}

// bytes is a string of n octets at the front of d.p (its header read).
func (d *msgpackDecoder) bytes(n int) lua.LValue {
	if !d.need(n) {
		return lua.LNil
	}
	s := d.p[:n]
	d.p = d.p[n:]
	return lua.LString(s)
}

// container decodes an array or a map of n elements (its header read).
func (d *msgpackDecoder) container(array bool, n int) lua.LValue {
	t := d.L.NewTable()
	d.top++ // the table
	defer func() { d.top-- }()
	if array {
		d.checkStack("in function mp_decode_to_lua_array")
		for i := 1; i <= n; i++ {
			d.top++ // the index
			v := d.value()
			d.top--
			if d.err != "" {
				return t
			}
			t.RawSetInt(i, v)
		}
		return t
	}
	for i := 0; i < n; i++ {
		k := d.value()
		if d.err != "" {
			return t
		}
		d.top++
		v := d.value()
		d.top--
		if d.err != "" {
			return t
		}
		if k != lua.LNil {
			t.RawSet(k, v)
		}
	}
	return t
}
