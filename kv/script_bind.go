package kv

import (
	lua "github.com/yuin/gopher-lua"
)

// Binding an EVAL script's code to the Lua state it runs in. A global read
// (GETGLOBAL) goes through the environment's metatable to base, two table
// lookups, and a library field (redis.call) through its proxy's metatable
// to the library, two more: a rate limiter's redis.call, KEYS[1] and
// ARGV[1] cost a dozen before any command runs. But in the sandbox those
// values never change while the state lives (script_lua.go: scripts cannot
// write base, the proxies or the libraries), so each state runs a copy of
// the script's code in which such reads are constant loads (LOADK) of the
// values they would find. KEYS and ARGV are the exception: a run that
// changed its table makes the next run a new one (scriptArray), and the
// copies' constants that hold the old one are repointed then.
//
// What stays a lookup: globals base does not have (their read raises
// Redis's error, as before), fields the library does not have, and a field
// read that is not the instruction right after its library's load or that a
// jump can reach (another path could bring another table there).

// The layout of gopher-lua's (Lua 5.1's) instructions: opcode, A, C, B or
// opcode, A, Bx.
const (
	opMaxBx  = 1<<18 - 1
	opMaxSbx = opMaxBx >> 1
	opBitRK  = 1 << 8 // a B or C operand with it is a constant's index
)

func opCode(i uint32) int { return int(i >> 26) }
func opA(i uint32) int    { return int(i>>18) & 0xff }
func opB(i uint32) int    { return int(i & 0x1ff) }
func opC(i uint32) int    { return int(i>>9) & 0x1ff }
func opBx(i uint32) int   { return int(i & 0x3ffff) }
func opSbx(i uint32) int  { return opBx(i) - opMaxSbx }

func opLoadK(a, bx int) uint32 { return uint32(lua.OP_LOADK)<<26 | uint32(a)<<18 | uint32(bx) }

// constRef is a constant of a bound copy that holds KEYS or ARGV.
type constRef struct {
	proto *lua.FunctionProto
	i     int
}

// bind returns a copy of proto, and of the functions it defines, whose
// reads of read-only globals and of their fields are constant loads of the
// values vm holds now. proto is not changed: it is the cached script's,
// shared by every state.
func (vm *luaVM) bind(proto *lua.FunctionProto) *lua.FunctionProto {
	p := *proto
	p.Code = append([]uint32(nil), proto.Code...)
	p.Constants = append([]lua.LValue(nil), proto.Constants...)
	p.FunctionPrototypes = make([]*lua.FunctionProto, len(proto.FunctionPrototypes))
	for i, child := range proto.FunctionPrototypes {
		p.FunctionPrototypes[i] = vm.bind(child)
	}
	b := binder{vm: vm, p: &p, added: make(map[lua.LValue]int)}
	b.fold(jumpTargets(proto))
	return &p
}

// binder rewrites one function's copy.
type binder struct {
	vm    *luaVM
	p     *lua.FunctionProto
	added map[lua.LValue]int // constants appended to p, by value
}

func (b *binder) fold(target []bool) {
	code := b.p.Code
	for pc := 0; pc < len(code); pc++ {
		inst := code[pc]
		switch opCode(inst) {
		case lua.OP_SETLIST, lua.OP_CLOSURE:
			pc += dataWords(b.p, inst)
		case lua.OP_GETGLOBAL:
			name, ok := b.p.Constants[opBx(inst)].(lua.LString)
			if !ok {
				continue
			}
			v := b.vm.base.RawGetString(string(name))
			k := b.constant(v)
			if v == lua.LNil || k < 0 {
				continue
			}
			a := opA(inst)
			code[pc] = opLoadK(a, k)
			if pc+1 < len(code) && !target[pc+1] && b.foldField(pc+1, a, v) {
				pc++
			}
		}
	}
}

// dataWords is how many words after inst, an instruction of p, are not
// instructions: SETLIST's block number when it does not fit in C, CLOSURE's
// upvalue descriptions.
func dataWords(p *lua.FunctionProto, inst uint32) int {
	switch opCode(inst) {
	case lua.OP_SETLIST:
		if opC(inst) == 0 {
			return 1
		}
	case lua.OP_CLOSURE:
		return int(p.FunctionPrototypes[opBx(inst)].NumUpvalues)
	}
	return 0
}

// foldField makes the instruction at pc a constant load if it reads a
// constant field of register a, which holds lib: a library's proxy (not
// _G, whose fields include KEYS and ARGV).
func (b *binder) foldField(pc, a int, lib lua.LValue) bool {
	inst := b.p.Code[pc]
	t, ok := lib.(*lua.LTable)
	if !ok || t == b.vm.env || opCode(inst) != lua.OP_GETTABLEKS || opB(inst) != a || opC(inst)&opBitRK == 0 {
		return false
	}
	shown := b.vm.shows[t]
	name, ok := b.p.Constants[opC(inst)&^opBitRK].(lua.LString)
	if shown == nil || !ok {
		return false
	}
	v := shown.RawGetString(string(name))
	k := b.constant(v)
	if v == lua.LNil || k < 0 {
		return false
	}
	b.p.Code[pc] = opLoadK(opA(inst), k)
	return true
}

// constant returns the index of a constant of p holding v, appending one
// if needed; -1 if LOADK cannot reach it. It notes the constants that hold
// KEYS and ARGV, which a later run may replace.
func (b *binder) constant(v lua.LValue) int {
	if v == lua.LNil {
		return -1
	}
	if k, ok := b.added[v]; ok {
		return k
	}
	k := len(b.p.Constants)
	if k > opMaxBx {
		return -1
	}
	b.p.Constants = append(b.p.Constants, v)
	b.added[v] = k
	for _, a := range []*scriptArray{&b.vm.keys, &b.vm.argv} {
		if a.t != nil && v == lua.LValue(a.t) {
			a.refs = append(a.refs, constRef{b.p, k})
		}
	}
	return k
}

// jumpTargets marks the instructions of proto that a jump or a skip can
// reach other than from the instruction before them.
func jumpTargets(proto *lua.FunctionProto) []bool {
	code := proto.Code
	target := make([]bool, len(code))
	mark := func(pc int) {
		if pc >= 0 && pc < len(target) {
			target[pc] = true
		}
	}
	for pc := 0; pc < len(code); pc++ {
		inst := code[pc]
		switch opCode(inst) {
		case lua.OP_JMP, lua.OP_FORLOOP, lua.OP_FORPREP:
			mark(pc + 1 + opSbx(inst))
		case lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_TESTSET, lua.OP_TFORLOOP:
			mark(pc + 2)
		case lua.OP_LOADBOOL:
			if opC(inst) != 0 {
				mark(pc + 2)
			}
		case lua.OP_SETLIST, lua.OP_CLOSURE:
			pc += dataWords(proto, inst)
		}
	}
	return target
}
