package kv_test

// Against redis-server 7.0 (diff_test.go runs them): what binding a
// script's code to its Lua state (script_bind.go) must not change, and
// the read-only tables that table.insert may not write.
func init() {
	ev := func(script string, rest ...string) step {
		return s(exact, append([]string{"EVAL", script}, rest...)...)
	}
	ev0 := func(script string) step { return ev(script, "0") }
	// The same script runs again after a run that changed KEYS or ARGV
	// (then the next run gets new tables): it must read the new ones, in
	// its main chunk and in a function it defines.
	const readArgs = "local function f() return {KEYS[1], ARGV[1]} end " +
		"local t = {KEYS[1], ARGV[1], f()} if ARGV[2] then KEYS.x = 1 ARGV[3] = 'gap' end return t"
	const field = "local f = (ARGV[1] == 'redis' and redis or string).len return type(f)"
	diffCases["script-bound-globals"] = []step{
		ev(readArgs, "1", "a", "x", "touch"), ev(readArgs, "1", "b", "y"), ev(readArgs, "1", "c", "z", "touch"),
		ev(readArgs, "1", "d", "w"), ev(readArgs, "0", "v"), ev(readArgs, "2", "e", "f", "u"),
		// A field read that a jump reaches with either table in the register.
		ev(field, "0", "redis"), ev(field, "0", "string"), ev(field, "0", "redis"),
		ev0("local r = redis return {type(r.call), type(redis.call), r == redis}"),
		ev0("local t = {} for i = 1, 3 do t[i] = redis.sha1hex(tostring(i)) end return t"),
		ev0("return {pcall(function() return redis.nosuchfield end)}"),
		ev0("return {pcall(function() return nosuchglobal end)}"),
		ev0("return {_G.KEYS == KEYS, _G.redis == redis, type(_G.string.len)}"),
		ev0("return {redis.LOG_WARNING, math.huge > 0, string.len('abc'), table.concat({1, 2}, tostring(math.floor(1.5)))}"),
		ev0("return coroutine.wrap(function() return redis.call('PING') end)()"),
	}
	diffCases["script-readonly-insert"] = []step{
		ev0("return {pcall(table.insert, string, 1)}"), ev0("return {pcall(table.insert, redis, 'x')}"),
		ev0("return {pcall(table.insert, _G, 1)}"), ev0("return {pcall(table.insert, string, 1, 2)}"),
		ev0("return {pcall(table.insert, math, '1', 2)}"),
		ev0("return {pcall(table.remove, string)}"), ev0("return {pcall(table.remove, string, 1)}"),
		ev0("return {pcall(table.sort, redis)}"), ev0("return {pcall(table.remove, _G)}"),
		ev("return {pcall(table.insert, KEYS, 'x'), #KEYS}", "1", "a"),
		ev0("table.insert(string, 1)"), ev0("table.insert(cjson, 1, 'x')"),
		ev0("return {pcall(table.insert, string, 1)} "), ev0("return #string"),
	}
}
