package kv

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The redis table scripts call: call and pcall (commands through the
// script client), error_reply, status_reply, sha1hex, log, setresp,
// set_repl, acl_check_cmd and the constants, with Redis 7.0's arguments
// checks and error texts.

// Redis's log levels (redis.LOG_*) and the slog levels Shoal logs them at,
// as loglevel maps them (config.go: ParseLogLevel).
var luaLogLevels = []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelInfo, slog.LevelWarn}

// redisLib makes the table of the redis library, bound to e.
func (e *scriptEngine) redisLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	for name, fn := range map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return e.luaCall(L, true) },
		"pcall":              func(L *lua.LState) int { return e.luaCall(L, false) },
		"log":                e.luaLog,
		"sha1hex":            luaSHA1Hex,
		"error_reply":        luaErrorReply,
		"status_reply":       luaStatusReply,
		"setresp":            e.luaSetResp,
		"set_repl":           e.luaSetRepl,
		"acl_check_cmd":      e.luaACLCheck,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(*lua.LState) int { return 0 },
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(Version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNumber(Version)))
	return t
}

// versionNumber is Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNumber(v string) int {
	n := 0
	for _, part := range strings.SplitN(v, ".", 3) {
		d, _ := strconv.Atoi(part)
		n = n<<8 | d
	}
	return n
}

// luaRaise raises t as a script error.
func luaRaise(L *lua.LState, t *lua.LTable) int {
	L.Error(t, 0)
	return 0
}

// luaFail answers a call that failed before its command ran: redis.call
// raises the error, redis.pcall returns it.
func luaFail(L *lua.LState, t *lua.LTable, raise bool) int {
	if raise {
		return luaRaise(L, t)
	}
	L.Push(t)
	return 1
}

// luaCall is redis.call (raise) and redis.pcall: the command runs through
// dispatch on the script client, its reply becomes a Lua value.
func (e *scriptEngine) luaCall(L *lua.LState, raise bool) int {
	if !e.running {
		return luaRaise(L, errorTable(L, "redis.call/pcall can only be called inside a script invocation"))
	}
	r := &e.run
	args, errText := r.luaArgs(L)
	if errText != "" {
		return luaFail(L, errorTable(L, errText), raise)
	}
	if errText := r.refuse(args); errText != "" {
		t := errorTable(L, errText)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return luaFail(L, t, raise)
	}
	sc := r.sc
	sc.out = sc.out[:0]
	r.h.dispatch(sc, args)
	var v lua.LValue
	var isErr bool
	if r.oks != nil && string(sc.out) == "+OK\r\n" {
		v = r.oks.next(L)
	} else {
		v, isErr = replyToLua(L, sc.out)
	}
	if isErr && raise {
		L.Error(v, 0)
	}
	L.Push(v)
	return 1
}

// luaArgs converts the arguments of redis.call into a command line:
// strings as they are, numbers in "%.17g" (Redis does not use Lua's lossy
// "%.14g" here). The slices are valid until the next call.
func (r *scriptRun) luaArgs(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf := r.argBuf[:0]
	ends := r.ends[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendCFloat(buf, float64(v), 17)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(buf))
	}
	args := r.args[:0]
	start := 0
	for _, end := range ends {
		args = append(args, buf[start:end:end])
		start = end
	}
	r.argBuf, r.ends, r.args = buf, ends, args
	return args, ""
}

// refuse returns why Redis's scriptCall refuses a command before it runs
// ("" to run it): unknown, wrong arity, not allowed in scripts, a write in
// a read-only script, or the first denyoom write over maxmemory.
func (r *scriptRun) refuse(args [][]byte) string {
	cmd := dispatchIdx.find(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = lookupName(cmd.subs, args[1])
	}
	switch {
	case cmd == nil:
		return "Unknown Redis command called from script"
	case !arityOK(cmd.arity, len(args)):
		return "Wrong number of args calling Redis command from script"
	case scriptCallFlags[cmd.statsID]&callNoScript != 0:
		return "This Redis command is not allowed from script"
	}
	if msg := r.h.scriptACLRefuses(r.caller, args); msg != "" {
		return msg
	}
	switch {
	case r.readOnly && (cmd.logged || scriptCallFlags[cmd.statsID]&callMayReplicate != 0):
		return "Write commands are not allowed from read-only scripts."
	case !cmd.logged:
		return ""
	}
	if !r.wrote && !r.script.flags.allowOOM && r.caller.conn != nil && scriptCallFlags[cmd.statsID]&callDenyOOM != 0 && r.h.outOfMemory() {
		return "-" + errOOMCommand
	}
	if !r.h.noteWrite() {
		return "Script killed by user with SCRIPT KILL..." // the kill came first; its error replaces this one
	}
	r.wrote = true
	return ""
}

// mayReplicate are the commands that are not writes but that Redis 7.0
// flags may_replicate (a flag COMMAND INFO does not show): a read-only
// script may not run them either.
var mayReplicate = map[string]bool{"publish": true, "spublish": true, "pfcount": true}

// What refuse asks of a command, read once from its flags: a script's
// call checks a bit instead of scanning the flag words.
const (
	callNoScript uint8 = 1 << iota
	callDenyOOM
	callMayReplicate
)

// scriptCallFlags are every command's call flags, by statsID.
var scriptCallFlags []uint8

func init() {
	scriptCallFlags = make([]uint8, len(commandsByID))
	for id, cmd := range commandsByID {
		var f uint8
		if hasFlag(cmd.flags, "noscript") {
			f |= callNoScript
		}
		if hasFlag(cmd.flags, "denyoom") {
			f |= callDenyOOM
		}
		if mayReplicate[cmd.name] {
			f |= callMayReplicate
		}
		scriptCallFlags[id] = f
	}
}

// hasFlag is hasWord without allocating.
func hasFlag(list, w string) bool {
	for list != "" {
		var f string
		f, list, _ = strings.Cut(list, " ")
		if f == w {
			return true
		}
	}
	return false
}

// luaNumberArg is lua_tonumber: a number, or a string that reads as one;
// 0 otherwise.
func luaNumberArg(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return parseLuaNumber(string(x))
	}
	return 0, false
}

func (e *scriptEngine) luaLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return luaRaise(L, errorTable(L, "redis.log() requires two arguments or more."))
	}
	f, ok := luaNumberArg(L.Get(1))
	if !ok {
		return luaRaise(L, errorTable(L, "First argument must be a number (log level)."))
	}
	level := int(f)
	if level < 0 || level >= len(luaLogLevels) {
		return luaRaise(L, errorTable(L, "Invalid debug level."))
	}
	var msg strings.Builder
	for i := 2; i <= n; i++ {
		if s, ok := luaText(L.Get(i)); ok {
			if i != 2 {
				msg.WriteByte(' ')
			}
			msg.WriteString(s)
		}
	}
	switch {
	case e.running:
		e.run.h.opts.Logger.Log(context.Background(), luaLogLevels[level], msg.String())
	case e.loading != nil:
		e.loading.h.opts.Logger.Log(context.Background(), luaLogLevels[level], msg.String())
	}
	return 0
}

func luaSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return luaRaise(L, errorTable(L, "wrong number of arguments"))
	}
	s, ok := luaText(L.Get(1))
	if !ok {
		s = ""
	}
	sum := sha1.Sum([]byte(s))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// luaErrorReply is redis.error_reply(msg): {err=msg}, with the code ERR
// unless msg starts with "-CODE".
func luaErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	text := string(s)
	if !strings.HasPrefix(text, "-") {
		text = "-" + text
	}
	L.Push(errorTable(L, text))
	return 1
}

func luaStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	L.Push(fieldTable(L, "ok", s))
	return 1
}

// luaSetResp is redis.setresp(2|3): the protocol of the replies redis.call
// converts from then on, and of the script's booleans.
func (e *scriptEngine) luaSetResp(L *lua.LState) int {
	if !e.running {
		return luaRaise(L, errorTable(L, "redis.setresp can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		return luaRaise(L, errorTable(L, "redis.setresp() requires one argument."))
	}
	f, _ := luaNumberArg(L.Get(1))
	if v := int(f); v != 2 && v != 3 {
		return luaRaise(L, errorTable(L, "RESP version must be 2 or 3."))
	}
	e.run.sc.proto = uint8(f)
	return 0
}

// luaSetRepl is redis.set_repl(flags). Its arguments are checked as
// Redis does, but Shoal has no replicas and logs every write of a script
// to the AOF whatever the flags.
func (e *scriptEngine) luaSetRepl(L *lua.LState) int {
	if !e.running {
		return luaRaise(L, errorTable(L, "redis.set_repl can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		return luaRaise(L, errorTable(L, "redis.set_repl() requires two arguments."))
	}
	f, _ := luaNumberArg(L.Get(1))
	if int(f)&^3 != 0 {
		return luaRaise(L, errorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."))
	}
	return 0
}

// luaACLCheck is redis.acl_check_cmd(command, args...): the default user,
// the only one, may run every command.
func (e *scriptEngine) luaACLCheck(L *lua.LState) int {
	if !e.running {
		return luaRaise(L, errorTable(L, "redis.acl_check_cmd can only be called inside a script invocation"))
	}
	args, errText := e.run.luaArgs(L)
	if errText != "" {
		return luaRaise(L, errorTable(L, errText))
	}
	cmd := dispatchIdx.find(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = lookupName(cmd.subs, args[1])
	}
	if cmd == nil {
		return luaRaise(L, errorTable(L, "Invalid command passed to redis.acl_check_cmd()"))
	}
	L.Push(lua.LTrue)
	return 1
}
