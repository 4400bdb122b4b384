package kv

import (
	"errors"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The Lua state scripts run in, sandboxed as Redis 7.0's: the base library
// without the functions that reach files or the process, table, string,
// math and coroutine; every global and library table read-only; reading a
// global that does not exist is an error.
//
// Globals. A script's function environment is env, an empty table whose
// metatable refuses writes and shows base, the table of the globals (the
// libraries as read-only proxies, KEYS and ARGV of the run). base's own
// metatable turns a missing name into Redis's "nonexistent global" error.
// Scripts cannot reach base or the libraries' real tables: the metatables
// are protected (__metatable), getfenv and setfenv do not exist, rawset
// and table.insert refuse the protected tables (the only library functions
// that write a table they are given; table.remove and table.sort write
// only elements a proxy, which has none, would hold), and chunks made by
// loadstring get env. rawget, next and pairs see through a proxy to the
// table it shows. So the proxies stay empty and base holds what newLuaVM
// and the runs' KEYS and ARGV put there: script_bind.go relies on it.

// Limits of the Lua state, Lua 5.1's where it has them.
const (
	luaMaxCalls      = 20000   // nested calls: LUAI_MAXCALLS ("stack overflow")
	luaMaxSlots      = 1 << 20 // value stack slots (16 bytes each)
	luaMaxUnpack     = 8000    // values one call returns: LUAI_MAXCSTACK ("too many results to unpack")
	luaMaxSyntaxNest = 5000    // syntax tree depth: the compiler recurses on it
	luaMaxString     = 512 << 20
	luaChunkName     = "user_script"   // an EVAL script's chunk
	luaFunctionChunk = "user_function" // a function library's chunk
)

// luaVM is one Lua state with the sandbox around it.
type luaVM struct {
	L       *lua.LState
	env     *lua.LTable                 // every script function's environment (also _G)
	base    *lua.LTable                 // the globals env shows
	shows   map[*lua.LTable]*lua.LTable // read-only proxies → the table each shows
	handler *lua.LFunction              // the error handler of a run
	// keys and argv are an EVAL's KEYS and ARGV, kept from run to run
	// (script_run.go).
	keys, argv scriptArray
	// oks are the {ok="OK"} tables EVAL's redis.call hands out
	// (script_convert.go).
	oks okPool
	// fns are the EVAL scripts' functions in this state, made at each
	// one's first run here (script_run.go) from code bound to this state
	// (script_bind.go).
	fns map[*luaScript]*lua.LFunction

	// The functions' state only (function_load.go): the globals a
	// library's code sees while it loads, and whether a panic that escaped
	// PCall may have left the state inconsistent.
	loadBase *lua.LTable
	broken   bool
}

// newLuaVM makes a Lua state whose redis and math functions are e's.
func newLuaVM(e *scriptEngine) *luaVM {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       luaMaxCalls,
		RegistrySize:        1024,
		RegistryMaxSize:     luaMaxSlots,
		RegistryGrowStep:    1 << 16,
		MinimizeStackMemory: true,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	vm := &luaVM{L: L, env: L.NewTable(), base: L.NewTable(), shows: make(map[*lua.LTable]*lua.LTable),
		fns: make(map[*luaScript]*lua.LFunction)}
	g := L.G.Global
	for _, name := range []string{"assert", "getmetatable", "ipairs", "rawequal", "select",
		"setmetatable", "type", "xpcall", "_VERSION"} {
		vm.base.RawSetString(name, g.RawGetString(name))
	}
	vm.addBaseOverrides(g)
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(luaStringRep))
	if mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		mt.RawSetString("__metatable", lua.LFalse) // its __index is the real string table
	}
	tab := g.RawGetString("table").(*lua.LTable)
	tab.RawSetString("insert", vm.luaTableInsert(tab.RawGetString("insert").(*lua.LFunction)))
	mathLib := g.RawGetString("math").(*lua.LTable)
	mathLib.RawSetString("random", L.NewFunction(e.luaRandom))
	mathLib.RawSetString("randomseed", L.NewFunction(e.luaRandomSeed))
	mathLib.RawSetString("huge", lua.LNumber(math.Inf(1))) // gopher-lua's is the largest float
	for _, lib := range []string{"string", "table", "math", "coroutine"} {
		vm.base.RawSetString(lib, vm.readOnly(g.RawGetString(lib).(*lua.LTable)))
	}
	vm.base.RawSetString("redis", vm.readOnly(e.redisLib(L)))
	vm.base.RawSetString("bit", vm.readOnly(bitLib(L)))
	vm.base.RawSetString("cjson", vm.readOnly(cjsonLib(L)))
	vm.base.RawSetString("cmsgpack", vm.readOnly(cmsgpackLib(L)))
	vm.base.RawSetString("struct", vm.readOnly(structLib(L)))
	vm.base.RawSetString("_G", vm.env)
	vm.base.Metatable = vm.metatable(L.NewFunction(luaMissingGlobal), nil)
	vm.env.Metatable = vm.metatable(vm.base, L.NewFunction(luaReadOnly))
	vm.shows[vm.env] = vm.base
	// Functions made at run time (loadstring's chunks, coroutines) take
	// the state's environment.
	L.Env = vm.env
	vm.handler = L.NewFunction(luaErrorHandler)
	return vm
}

// addBaseOverrides adds the base functions whose gopher-lua versions
// differ from what Redis's Lua does or would break the sandbox.
func (vm *luaVM) addBaseOverrides(g *lua.LTable) {
	L := vm.L
	next := g.RawGetString("next").(*lua.LFunction)
	rawget := g.RawGetString("rawget").(*lua.LFunction)
	rawset := g.RawGetString("rawset").(*lua.LFunction)
	seeThrough := func(orig *lua.LFunction) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok && vm.shows[t] != nil {
				L.Replace(1, vm.shows[t])
			}
			return orig.GFunction(L)
		})
	}
	seenNext := seeThrough(next)
	funcs := map[string]*lua.LFunction{
		"next":   seenNext,
		"rawget": seeThrough(rawget),
		// pairs(proxy) iterates what the proxy shows without handing the
		// shown table to the script (it is the iterator's state).
		"pairs": L.NewFunction(func(L *lua.LState) int {
			L.Push(seenNext)
			L.Push(L.CheckTable(1))
			L.Push(lua.LNil)
			return 3
		}),
		"rawset": L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok && vm.shows[t] != nil {
				L.Error(lua.LString("Attempt to modify a readonly table"), 0)
			}
			return rawset.GFunction(L)
		}),
		"error":          L.NewFunction(luaError),
		"pcall":          L.NewFunction(luaPCall(g.RawGetString("pcall").(*lua.LFunction))),
		"tostring":       L.NewFunction(luaToString),
		"tonumber":       L.NewFunction(luaToNumber),
		"unpack":         L.NewFunction(luaUnpack),
		"loadstring":     L.NewFunction(vm.luaLoadString),
		"load":           L.NewFunction(vm.luaLoad),
		"collectgarbage": L.NewFunction(luaNoGC),
		"gcinfo":         L.NewFunction(luaNoGC),
	}
	for name, fn := range funcs {
		vm.base.RawSetString(name, fn)
	}
}

// readOnly returns a proxy that shows t and refuses writes.
func (vm *luaVM) readOnly(t *lua.LTable) *lua.LTable {
	p := vm.L.NewTable()
	p.Metatable = vm.metatable(t, vm.L.NewFunction(luaReadOnly))
	vm.shows[p] = t
	return p
}

// metatable returns a protected metatable with the given __index and
// __newindex (nil: none).
func (vm *luaVM) metatable(index, newIndex lua.LValue) *lua.LTable {
	mt := vm.L.NewTable()
	mt.RawSetString("__index", index)
	if newIndex != nil {
		mt.RawSetString("__newindex", newIndex)
	}
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// luaTableInsert is table.insert refusing the read-only tables, as Redis's
// Lua does (every insert that gets past its arguments' checks writes); the
// other calls go to orig, which checks the arguments.
func (vm *luaVM) luaTableInsert(orig *lua.LFunction) *lua.LFunction {
	return vm.L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && vm.shows[t] != nil {
			_, posOK := luaNumberArg(L.Get(2))
			if n := L.GetTop(); n == 2 || (n == 3 && posOK) {
				L.Error(lua.LString("Attempt to modify a readonly table"), 0)
			}
		}
		return orig.GFunction(L)
	})
}

func luaReadOnly(L *lua.LState) int {
	L.RaiseError("Attempt to modify a readonly table")
	return 0
}

func luaMissingGlobal(L *lua.LState) int {
	L.RaiseError("Script attempted to access nonexistent global variable '%s'", luaToText(L.Get(2)))
	return 0
}

// luaError is Lua 5.1's error(message [, level]): a number message gets
// the position like a string, and error() raises nil.
func luaError(L *lua.LState) int {
	msg := L.Get(1)
	if n, ok := msg.(lua.LNumber); ok {
		msg = lua.LString(formatLuaNumber(float64(n)))
	}
	level := L.OptInt(2, 1)
	if level > 0 && calledFromGo(L, level) {
		level = 0 // Lua's luaL_where gives no position for a C caller (pcall(error, "x"))
	}
	L.Error(msg, level)
	return 0
}

// calledFromGo reports whether the function at level (1: the caller of
// the running Go function) is a Go function.
func calledFromGo(L *lua.LState, level int) bool {
	dbg, ok := L.GetStack(level)
	if !ok {
		return false
	}
	_, err := L.GetInfo("S", dbg, lua.LNil)
	return err == nil && dbg.What == "G"
}

// luaPCall is Redis 7.0's pcall (luaRedisPcall): an error table with an
// err field is returned as that string.
func luaPCall(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		n := orig.GFunction(L)
		top := L.GetTop()
		if n == 2 && L.Get(top-1) == lua.LFalse {
			if t, ok := L.Get(top).(*lua.LTable); ok {
				if s, ok := luaText(t.RawGetString("err")); ok {
					L.Replace(top, lua.LString(s))
				}
			}
		}
		return n
	}
}

func luaNoGC(L *lua.LState) int {
	L.Push(lua.LNumber(0))
	return 1
}

// luaToString is tostring with Lua 5.1's "%.14g" for numbers (gopher-lua
// prints Go's shortest form).
func luaToString(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(formatLuaNumber(float64(n))))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// luaToNumber is Lua 5.1's tonumber(v [, base]): in base 10 what C's
// strtod reads (exponents, inf, nan, "0x" hexadecimal), surrounded by
// spaces; in another base an unsigned integer.
func luaToNumber(L *lua.LState) int {
	v := L.CheckAny(1)
	base := L.OptInt(2, 10)
	if base == 10 {
		switch x := v.(type) {
		case lua.LNumber:
			L.Push(x)
		case lua.LString:
			if f, ok := parseLuaNumber(string(x)); ok {
				L.Push(lua.LNumber(f))
			} else {
				L.Push(lua.LNil)
			}
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	s := strings.ToLower(strings.Trim(luaToText(v), " \t\n\v\f\r"))
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil || s == "" {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(float64(n)))
	return 1
}

// parseLuaNumber is Lua 5.1's luaO_str2d.
func parseLuaNumber(s string) (float64, bool) {
	s = strings.Trim(s, " \t\n\v\f\r")
	if s == "" {
		return 0, false
	}
	body, neg := s, false
	if body[0] == '-' || body[0] == '+' {
		body, neg = body[1:], body[0] == '-'
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		n, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		if neg {
			return -float64(n), true
		}
		return float64(n), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// formatLuaNumber formats f as C's "%.14g", Lua 5.1's number format.
func formatLuaNumber(f float64) string {
	return string(appendCFloat(nil, f, 14))
}

// appendCFloat appends f as C's "%.<prec>g" (glibc), "-nan" included.
func appendCFloat(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f) && math.Signbit(f):
		return append(b, "-nan"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// luaToText is lua_tolstring: strings, and numbers in "%.14g"; ok is false
// for the other types.
func luaToText(v lua.LValue) string {
	s, _ := luaText(v)
	return s
}

func luaText(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return formatLuaNumber(float64(x)), true
	}
	return v.String(), false
}

// luaUnpack is Lua 5.1's unpack, with its limit on the values returned.
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	first := int64(L.OptInt(2, 1))
	last := int64(L.OptInt(3, t.Len()))
	if first > last {
		return 0
	}
	if n := last - first + 1; n <= 0 || n+int64(L.GetTop()) > luaMaxUnpack {
		L.RaiseError("too many results to unpack")
	}
	for i := first; i <= last; i++ {
		L.Push(t.RawGetInt(int(i)))
	}
	return int(last - first + 1)
}

// luaStringRep is string.rep, refusing results no reply could carry
// rather than allocate them.
func luaStringRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt64(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if n > luaMaxString/int64(len(s)) {
		L.RaiseError("string.rep would make a string of more than %d bytes", luaMaxString)
	}
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

// luaLoadString is loadstring(s [, chunkname]) compiling with the same
// checks as a script, for a chunk whose environment is the script's.
func (vm *luaVM) luaLoadString(L *lua.LState) int {
	src := L.CheckString(1)
	return vm.pushChunk(L, src, L.OptString(2, chunkID(src)))
}

// luaLoad is load(fn [, chunkname]): the chunk is the concatenation of
// fn's results until it returns nil or "".
func (vm *luaVM) luaLoad(L *lua.LState) int {
	fn := L.CheckFunction(1)
	name := L.OptString(2, "=(load)")
	var src strings.Builder
	for {
		L.Push(fn)
		L.Call(0, 1)
		piece := L.Get(-1)
		L.Pop(1)
		s, ok := piece.(lua.LString)
		if !ok || s == "" {
			if piece != lua.LNil && !ok {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			break
		}
		if src.Len()+len(s) > luaMaxString {
			L.RaiseError("load: chunk larger than %d bytes", luaMaxString)
		}
		src.WriteString(string(s))
	}
	return vm.pushChunk(L, src.String(), name)
}

func (vm *luaVM) pushChunk(L *lua.LState, src, name string) int {
	proto, err := compileLua([]byte(src), name)
	if err != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(err))
		return 2
	}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = vm.env
	L.Push(fn)
	return 1
}

// luaErrorHandler is the message handler of a run, Redis's
// __redis__err__handler: it makes any error a table {err=...} and adds
// where it was raised (the Lua function that raised it or called the Go
// function that did), which the reply names.
func luaErrorHandler(L *lua.LState) int {
	obj := L.Get(1)
	t, ok := obj.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		msg := "nil"
		if obj != lua.LNil {
			msg, _ = luaText(obj)
		}
		t.RawSetString("err", lua.LString("ERR "+msg))
	}
	dbg, found := L.GetStack(1)
	if found {
		if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
			dbg, found = L.GetStack(2)
		}
	}
	if found {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine >= 0 {
			source := dbg.Source
			if source == luaChunkName || source == luaFunctionChunk {
				source = "@" + source
			}
			t.RawSetString("source", lua.LString(source))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		}
	}
	L.Push(t)
	return 1
}

// rand48 is the generator behind Redis's math.random (rand.c): POSIX
// lrand48, starting from the libc's default seed.
type rand48 struct{ x uint64 }

func newRand48() rand48 { return rand48{x: 0x1234ABCD330E} }

func (r *rand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

func (r *rand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}

// luaRandom is Redis's redis_math_random.
func (e *scriptEngine) luaRandom(L *lua.LState) int {
	const max = math.MaxInt32
	r := float64(e.rand.next()%max) / max
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt64(1)
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt64(1), L.CheckInt64(2)
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *scriptEngine) luaRandomSeed(L *lua.LState) int {
	e.rand.seed(int32(L.CheckInt64(1)))
	return 0
}
