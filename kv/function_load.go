package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/config"
)

// Loading a library, as Redis 7.0's functionsCreateWithLibraryCtx and its
// Lua engine do: the "#!lua name=<lib>" line, the code compiled as
// "user_function" and run once with only the load API visible (the redis
// table with register_function, log, the LOG_ levels and the version;
// every other global, the libraries included, is a "nonexistent global"),
// stopped after loadTimeoutDefault. The functions it registers keep the
// environment they were made in, which shows the whole API once the load
// is over: env's __index is switched from the load API to the globals
// around the load, as Redis switches its globals' metatable.

// loadTimeoutDefault is Redis's LOAD_TIMEOUT_MS: how long a library's code
// may run at FUNCTION LOAD.
const loadTimeoutDefault = 500 * time.Millisecond

// libraryLoad is the library a load is registering functions into.
type libraryLoad struct {
	h   *Handler
	lib *funcLibrary
}

// loadTimeout is how long cl's FUNCTION LOAD may run its code: no limit
// for the AOF replay (a client without a connection), as Redis does not
// limit a master or the AOF.
func loadTimeout(cl *client) time.Duration {
	if cl.conn == nil {
		return 0
	}
	return loadTimeoutDefault
}

// errLibraryName is Redis's text for a library or function name that is
// not [A-Za-z0-9_]+ (its text says library for both).
const errLibraryName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

func validFunctionName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseLibraryMeta reads the shebang line of a library: its engine, its
// name, and the code after it (from the line's newline on, so that line
// numbers count the shebang line).
func parseLibraryMeta(code string) (engine, name, body, errText string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", "", "ERR Missing library metadata"
	}
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", "", "", "ERR Invalid library metadata"
	}
	line := code[:nl]
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i] // C reads the line as a string
	}
	parts, err := config.SplitArgs(line)
	if err != nil || len(parts) == 0 {
		return "", "", "", "ERR Invalid library metadata"
	}
	engine = strings.TrimPrefix(parts[0], "#!")
	hasName := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if hasName {
				return "", "", "", "ERR Invalid metadata value, name argument was given multiple times"
			}
			name, hasName = p[5:], true
			continue
		}
		return "", "", "", sanitizeError("ERR Invalid metadata value given: " + p)
	}
	if !hasName {
		return "", "", "", "ERR Library name was not given"
	}
	return engine, name, code[nl:], ""
}

// loadLibrary makes the library of code without linking it: checked
// against target (a library of its name is an error unless replace; a
// function another library of target has is an error), compiled and run
// in the functions' Lua state. It returns Redis's error text on failure.
// e.mu is held.
func (e *scriptEngine) loadLibrary(h *Handler, code string, target *functionSet, replace bool, timeout time.Duration) (*funcLibrary, string) {
	engine, name, body, errText := parseLibraryMeta(code)
	if errText != "" {
		return nil, errText
	}
	if !validFunctionName(name) {
		return nil, "ERR " + errLibraryName
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, sanitizeError("ERR Engine '" + cString([]byte(engine), len(engine)) + "' not found")
	}
	old := target.libs[name]
	if old != nil && !replace {
		return nil, "ERR Library '" + name + "' already exists"
	}
	proto, msg := compileLua([]byte(body), luaFunctionChunk)
	if msg != "" {
		return nil, sanitizeError("ERR Error compiling function: " + msg)
	}
	if e.funcVM == nil {
		e.funcVM = e.newFunctionVM()
	}
	lib := &funcLibrary{name: name, code: code}
	if msg := e.runLibraryCode(h, e.funcVM, proto, lib, timeout); msg != "" {
		return nil, sanitizeError("ERR Error registering functions: " + msg)
	}
	if len(lib.funcs) == 0 {
		return nil, "ERR No functions registered"
	}
	slices.SortFunc(lib.funcs, func(a, b *luaFunction) int { return strings.Compare(funcKey(a.name), funcKey(b.name)) })
	for _, f := range lib.funcs {
		if other := target.funcs[funcKey(f.name)]; other != nil && other.lib != old {
			return nil, "ERR Function " + f.name + " already exists"
		}
	}
	return lib, ""
}

// newFunctionVM makes the Lua state functions run in: a script's, plus the
// globals a library's code sees while it loads.
func (e *scriptEngine) newFunctionVM() *luaVM {
	vm := newLuaVM(e)
	L := vm.L
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(e.luaRegisterFunction))
	api.RawSetString("log", L.NewFunction(e.luaLog))
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3} {
		api.RawSetString(name, lua.LNumber(v))
	}
	api.RawSetString("REDIS_VERSION", lua.LString(Version))
	api.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNumber(Version)))
	missing := L.NewFunction(luaMissingGlobal)
	api.Metatable = vm.metatable(missing, nil)
	vm.loadBase = L.NewTable()
	vm.loadBase.RawSetString("redis", vm.readOnly(api))
	vm.loadBase.Metatable = vm.metatable(missing, nil)
	return vm
}

// runLibraryCode runs a library's compiled code with the load API as its
// globals, registering its functions into lib. It returns the error's
// text ("" if none) as Redis's luaExtractErrorInformation makes it.
func (e *scriptEngine) runLibraryCode(h *Handler, vm *luaVM, proto *lua.FunctionProto, lib *funcLibrary, timeout time.Duration) string {
	L := vm.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = vm.env
	mt := vm.env.Metatable.(*lua.LTable)
	mt.RawSetString("__index", vm.loadBase)
	e.loading = &libraryLoad{h: h, lib: lib}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
		L.SetContext(ctx)
	}
	defer func() {
		cancel()
		L.RemoveContext()
		L.SetTop(0)
		e.loading = nil
		mt.RawSetString("__index", vm.base)
	}()
	err := vm.protect(func() error {
		L.Push(fn)
		return L.PCall(0, 0, nil)
	})
	switch {
	case err == nil:
		return ""
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "ERR FUNCTION LOAD timeout"
	}
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) {
		return "ERR " + err.Error()
	}
	if t, ok := apiErr.Object.(*lua.LTable); ok {
		if s, ok := luaText(t.RawGetString("err")); ok {
			return s
		}
		return ""
	}
	s, _ := luaText(apiErr.Object)
	return "ERR " + s
}

// protect runs fn, turning a panic that escapes gopher-lua's PCall into
// an error and marking the state broken.
func (vm *luaVM) protect(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			vm.broken = true
			if apiErr, ok := p.(*lua.ApiError); ok {
				err = apiErr
			} else {
				err = fmt.Errorf("%v", p)
			}
		}
	}()
	return fn()
}

// luaRegisterFunction is redis.register_function(name, fn) or
// redis.register_function{function_name=, callback=, flags=, description=},
// with Redis 7.0's checks and texts.
func (e *scriptEngine) luaRegisterFunction(L *lua.LState) int {
	ld := e.loading
	if ld == nil {
		return luaRaise(L, errorTable(L, "redis.register_function can only be called on FUNCTION LOAD command"))
	}
	var f *luaFunction
	var errText string
	switch L.GetTop() {
	case 1:
		f, errText = registerNamedArgs(L)
	case 2:
		f, errText = registerPositionalArgs(L)
	default:
		errText = "wrong number of arguments to redis.register_function"
	}
	if errText == "" {
		errText = ld.lib.add(f)
	}
	if errText != "" {
		return luaRaise(L, errorTable(L, errText))
	}
	return 0
}

// add adds f to the library being loaded.
func (lib *funcLibrary) add(f *luaFunction) string {
	if !validFunctionName(f.name) {
		return errLibraryName
	}
	for _, g := range lib.funcs {
		if g.name == f.name { // case-sensitive within a library, as Redis's
			return "Function already exists in the library"
		}
	}
	f.lib = lib
	f.run = &luaScript{sha: f.name, flags: scriptFlags{shebang: true, noWrites: f.flags&funcNoWrites != 0, allowOOM: f.flags&funcAllowOOM != 0}}
	lib.funcs = append(lib.funcs, f)
	return ""
}

func registerPositionalArgs(L *lua.LState) (*luaFunction, string) {
	name, ok := luaText(L.Get(1))
	if !ok {
		return nil, "first argument to redis.register_function must be a string"
	}
	fn, ok := L.Get(2).(*lua.LFunction)
	if !ok {
		return nil, "second argument to redis.register_function must be a function"
	}
	return &luaFunction{name: name, fn: fn}, ""
}

func registerNamedArgs(L *lua.LState) (*luaFunction, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &luaFunction{}
	hasName := false
	var errText string
	for k, v := t.Next(lua.LNil); k != lua.LNil && errText == ""; k, v = t.Next(k) {
		key, ok := luaText(k)
		if !ok {
			return nil, "named argument key given to redis.register_function is not a string"
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.name, ok = luaText(v); !ok {
				errText = "function_name argument given to redis.register_function must be a string"
			}
			hasName = true
		case "description":
			if f.desc, ok = luaText(v); !ok {
				errText = "description argument given to redis.register_function must be a string"
			}
			f.hasDesc = true
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				errText = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			flags, ok := v.(*lua.LTable)
			if !ok {
				errText = "flags argument to redis.register_function must be a table representing function flags"
			} else if f.flags, ok = readFunctionFlags(flags); !ok {
				errText = "unknown flag given"
			}
		default:
			errText = "unknown argument given to redis.register_function"
		}
	}
	switch {
	case errText != "":
		return nil, errText
	case !hasName:
		return nil, "redis.register_function must get a function name argument"
	case f.fn == nil:
		return nil, "redis.register_function must get a callback argument"
	}
	return f, ""
}

// readFunctionFlags reads a flags table: flag names, any case, from index
// 1 to the first nil.
func readFunctionFlags(t *lua.LTable) (funcFlag, bool) {
	var flags funcFlag
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaText(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, fl := range funcFlagNames {
			if strings.EqualFold(fl.name, s) {
				flags |= fl.flag
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
}

// repairFunctions replaces the functions' Lua state if a panic that
// escaped PCall may have left it inconsistent. e.mu is held.
func (e *scriptEngine) repairFunctions(h *Handler) {
	if e.funcVM != nil && e.funcVM.broken {
		e.reloadFunctions(h)
	}
}

// reloadFunctions replaces the functions' Lua state after a run broke it,
// loading every library again into a new one.
func (e *scriptEngine) reloadFunctions(h *Handler) {
	codes := e.functions.codes()
	e.functions = newFunctionSet()
	e.funcVM = nil
	for _, code := range codes {
		lib, errText := e.loadLibrary(h, code, &e.functions, false, 0)
		if errText != "" {
			h.opts.Logger.Warn("a library did not load again after its Lua state was replaced", "err", errText)
			continue
		}
		e.functions.link(lib)
	}
	e.publishCounts()
}
