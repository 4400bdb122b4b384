package kv

import (
	"slices"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func opABC(op, a, b, c int) uint32 { return uint32(op)<<26 | uint32(a)<<18 | uint32(c)<<9 | uint32(b) }
func opABx(op, a, bx int) uint32   { return uint32(op)<<26 | uint32(a)<<18 | uint32(bx) }

// TestBindLoadsReadOnlyGlobalsAsConstants: in a state's copy of the rate
// limiter's code every global and library field it reads is a constant
// load, the cached script's own code is left as compiled, and a global
// that does not exist is still looked up (its read raises Redis's error).
func TestBindLoadsReadOnlyGlobalsAsConstants(t *testing.T) {
	h, _ := scriptHandler(t)
	vm := newLuaVM(h.scripts())
	s, msg := compileScript("sha", []byte("local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) "+
		"local function f() return string.len(ARGV[1]) + nosuchglobal end return n"))
	if msg != "" {
		t.Fatal(msg)
	}
	vm.keys.fill(vm, "KEYS", [][]byte{[]byte("k")})
	vm.argv.fill(vm, "ARGV", [][]byte{[]byte("60")})
	compiled := slices.Clone(s.proto.Code)
	bound := vm.bind(s.proto)
	count := func(p *lua.FunctionProto, op int) int {
		n := 0
		for _, inst := range p.Code {
			if opCode(inst) == op {
				n++
			}
		}
		return n
	}
	if n := count(bound, lua.OP_GETGLOBAL) + count(bound, lua.OP_GETTABLEKS); n != 0 {
		t.Errorf("the bound main chunk still has %d global or field reads:\n%s", n, bound)
	}
	if n := count(bound.FunctionPrototypes[0], lua.OP_GETGLOBAL); n != 1 {
		t.Errorf("the bound function has %d global reads, want 1 (nosuchglobal):\n%s", n, bound.FunctionPrototypes[0])
	}
	if !slices.Equal(s.proto.Code, compiled) || count(s.proto, lua.OP_GETGLOBAL) == 0 {
		t.Error("bind changed the cached script's code")
	}
	if bound.FunctionPrototypes[0] == s.proto.FunctionPrototypes[0] {
		t.Error("bind shares the cached script's inner function")
	}
}

// TestBindLeavesJumpTargetsAndDataWords: a field read that a jump reaches
// stays a lookup (the register may hold another table there), and the
// word after a SETLIST whose block number does not fit in C is data, not an
// instruction, however it reads.
func TestBindLeavesJumpTargetsAndDataWords(t *testing.T) {
	h, _ := scriptHandler(t)
	vm := newLuaVM(h.scripts())
	getCall := func(a int) uint32 { return opABC(lua.OP_GETTABLEKS, a, a, opBitRK|1) }
	proto := &lua.FunctionProto{
		Code: []uint32{
			opABx(lua.OP_JMP, 0, opMaxSbx+1), // to 2
			opABx(lua.OP_GETGLOBAL, 0, 0),
			getCall(0),
			opABx(lua.OP_GETGLOBAL, 1, 0),
			getCall(1),
			opABC(lua.OP_SETLIST, 0, 1, 0),
			opABx(lua.OP_GETGLOBAL, 2, 0), // SETLIST's block number
			opABC(lua.OP_RETURN, 0, 1, 0),
		},
		Constants: []lua.LValue{lua.LString("redis"), lua.LString("call")},
	}
	compiled := slices.Clone(proto.Code)
	bound := vm.bind(proto)
	for pc, want := range []int{lua.OP_JMP, lua.OP_LOADK, lua.OP_GETTABLEKS, lua.OP_LOADK, lua.OP_LOADK, lua.OP_SETLIST, lua.OP_GETGLOBAL, lua.OP_RETURN} {
		if got := opCode(bound.Code[pc]); got != want {
			t.Errorf("instruction %d: opcode %d, want %d", pc, got, want)
		}
	}
	if bound.Code[6] != compiled[6] {
		t.Error("SETLIST's data word was rewritten")
	}
	redisLib := vm.shows[vm.base.RawGetString("redis").(*lua.LTable)]
	if got := bound.Constants[opBx(bound.Code[4])]; got != redisLib.RawGetString("call") {
		t.Errorf("redis.call loads %v", got)
	}
}

// TestSandboxLibrariesLeaveReadOnlyTablesAlone: no function a script can
// reach writes a read-only table (binding relies on their contents), with
// any of them as its first argument: the proxies stay empty, and base
// holds what it held.
func TestSandboxLibrariesLeaveReadOnlyTablesAlone(t *testing.T) {
	h, cl := scriptHandler(t)
	if got := run(h, cl, "EVAL", "return 1", "0"); got != ":1\r\n" {
		t.Fatal(got)
	}
	e := h.scripts()
	snapshot := func() map[lua.LValue]lua.LValue {
		m := make(map[lua.LValue]lua.LValue)
		e.vm.base.ForEach(func(k, v lua.LValue) {
			if k != lua.LString("KEYS") && k != lua.LString("ARGV") {
				m[k] = v
			}
		})
		return m
	}
	before := snapshot()
	const script = `
local targets = {_G, string, table, math, coroutine, redis, bit, cjson, cmsgpack, struct}
local funcs = {}
for _, v in pairs(_G) do
	if type(v) == 'function' then funcs[#funcs + 1] = v end
	if type(v) == 'table' then
		for _, f in pairs(v) do if type(f) == 'function' then funcs[#funcs + 1] = f end end
	end
end
local shapes = {{}, {1}, {1, 2}, {'x', 1}, {1, 'x'}, {'1', 2}, {true}}
local calls = 0
for _, f in ipairs(funcs) do
	for _, target in ipairs(targets) do
		for _, shape in ipairs(shapes) do
			pcall(f, target, unpack(shape))
			calls = calls + 1
		end
	end
end
return calls`
	got := run(h, cl, "EVAL", script, "0")
	if len(got) < 4 || got[0] != ':' || got == ":0\r\n" {
		t.Fatalf("the script: %q", got)
	}
	for p := range e.vm.shows {
		if k, v := p.Next(lua.LNil); k != lua.LNil {
			t.Errorf("a read-only table holds %v = %v (%s)", k, v, got)
		}
	}
	after := snapshot()
	if len(after) != len(before) {
		t.Errorf("base has %d globals, had %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("global %v changed", k)
		}
	}
}

// TestIntegerReplyAgreesWithTheReader: the integer fast path gives what
// the general reader gives, and leaves it whatever is not one whole
// integer reply.
func TestIntegerReplyAgreesWithTheReader(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, buf := range []string{":0\r\n", ":-1\r\n", ":42\r\n", ":9223372036854775807\r\n", ":-9223372036854775808\r\n",
		":01\r\n", ":-0\r\n", ":+1\r\n", ": 1\r\n", ":1\r\n:2\r\n", ":\r\n", ":x\r\n", ":1\n", "$1\r\n1\r\n", "+1\r\n"} {
		fast, ok := integerReply([]byte(buf))
		want, _, isErr, err := convertReply(L, []byte(buf))
		switch {
		case !ok:
			continue
		case err != nil || isErr:
			t.Errorf("%q: the fast path gives %v, the reader fails (%v, error reply %v)", buf, fast, err, isErr)
		case fast != want:
			t.Errorf("%q: the fast path gives %v, the reader %v", buf, fast, want)
		}
	}
	if _, ok := integerReply([]byte(":42\r\n")); !ok {
		t.Error("the fast path left a plain integer reply to the reader")
	}
}

// TestOKTablesAreFreshToEachCall: the {ok="OK"} tables redis.call hands
// out again from run to run are distinct within a run, and one that a run
// changed in any way is not handed out again.
func TestOKTablesAreFreshToEachCall(t *testing.T) {
	if lTableArray < 0 || lTableKeys < 0 {
		t.Fatal("gopher-lua's LTable has no array or keys slice: pristineOK takes no table, and SET from scripts got slower")
	}
	h, cl := scriptHandler(t)
	const distinct = "local a = redis.call('SET', 'k', 'v') local b = redis.call('SET', 'k', 'v') " +
		"a.ok = 'changed' return {rawequal(a, b) and 1 or 0, b.ok, a.ok}"
	for range 3 {
		if got := run(h, cl, "EVAL", distinct, "0"); got != "*3\r\n:0\r\n$2\r\nOK\r\n$7\r\nchanged\r\n" {
			t.Fatalf("two calls: %q", got)
		}
	}
	for _, change := range []string{"r.x = 1", "r.x = 1 r.x = nil", "r[1] = 1", "r[1] = 1 r[1] = nil", "r[3] = 1",
		"r.ok = 'no'", "setmetatable(r, {})", "r.ok = nil"} {
		script := "local r = redis.call('SET', 'k', 'v') " + change + " return 1"
		if got := run(h, cl, "EVAL", script, "0"); got != ":1\r\n" {
			t.Fatalf("%s: %q", change, got)
		}
		const look = "local r = redis.call('SET', 'k', 'v') local n = 0 for _ in pairs(r) do n = n + 1 end " +
			"return {n, r.ok, #r, getmetatable(r) == nil and 1 or 0}"
		if got := run(h, cl, "EVAL", look, "0"); got != "*4\r\n:1\r\n$2\r\nOK\r\n:0\r\n:1\r\n" {
			t.Errorf("after %s, the next run's table: %q", change, got)
		}
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	fresh := fieldTable(L, "ok", luaOK)
	if !pristineOK(fresh) {
		t.Error("a fresh {ok='OK'} is not taken for pristine")
	}
	fresh.RawSetString("x", lua.LTrue)
	fresh.RawSetString("x", lua.LNil)
	if pristineOK(fresh) {
		t.Error("a table that had another key is taken for pristine")
	}
}
