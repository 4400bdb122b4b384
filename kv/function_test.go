package kv_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
)

// rateLib is a library as applications ship them: a limiter that writes,
// a reader flagged no-writes, state shared by its functions.
const rateLib = `#!lua name=ratelib
local function take(keys, args)
	local n = redis.call('INCR', keys[1])
	if n == 1 then redis.call('EXPIRE', keys[1], tonumber(args[1])) end
	return n
end
local function peek(keys)
	return tonumber(redis.call('GET', keys[1]) or '0')
end
redis.register_function('rl_take', take)
redis.register_function{function_name='rl_peek', callback=peek, flags={'no-writes'}, description='current count'}
`

// TestGoRedisFunctions drives functions through go-redis's typed API in
// RESP2 and RESP3: load, replace, call, call read-only, list, stats,
// dump and restore, delete, flush.
func TestGoRedisFunctions(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		rdb.FunctionFlush(ctx)
		if name, err := rdb.FunctionLoad(ctx, rateLib).Result(); err != nil || name != "ratelib" {
			t.Fatalf("resp%d FUNCTION LOAD = %q, %v", proto, name, err)
		}
		if err := rdb.FunctionLoad(ctx, rateLib).Err(); err == nil || err.Error() != "ERR Library 'ratelib' already exists" {
			t.Fatalf("resp%d FUNCTION LOAD again: %v", proto, err)
		}
		if name, err := rdb.FunctionLoadReplace(ctx, rateLib).Result(); err != nil || name != "ratelib" {
			t.Fatalf("resp%d FUNCTION LOAD REPLACE = %q, %v", proto, name, err)
		}
		for i := int64(1); i <= 3; i++ {
			if n, err := rdb.FCall(ctx, "rl_take", []string{"rl:user"}, 60).Int64(); err != nil || n != i {
				t.Fatalf("resp%d FCALL rl_take = %d, %v; want %d", proto, n, err, i)
			}
		}
		if ttl := rdb.TTL(ctx, "rl:user").Val(); ttl <= 0 || ttl > time.Minute {
			t.Fatalf("resp%d the function's EXPIRE: TTL %v", proto, ttl)
		}
		if n, err := rdb.FCallRo(ctx, "rl_peek", []string{"rl:user"}).Int64(); err != nil || n != 3 {
			t.Fatalf("resp%d FCALL_RO rl_peek = %d, %v", proto, n, err)
		}
		if err := rdb.FCallRo(ctx, "rl_take", []string{"rl:user"}, 60).Err(); err == nil ||
			err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
			t.Fatalf("resp%d FCALL_RO of a function that writes: %v", proto, err)
		}
		libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
		if err != nil || len(libs) != 1 || libs[0].Name != "ratelib" || libs[0].Engine != "LUA" || libs[0].Code != rateLib ||
			fmt.Sprint(libs[0].Functions) != "[{rl_peek current count [no-writes]} {rl_take  []}]" {
			t.Fatalf("resp%d FUNCTION LIST = %+v, %v", proto, libs, err)
		}
		stats, err := rdb.FunctionStats(ctx).Result()
		if err != nil || stats.Running() || fmt.Sprint(stats.Engines) != "[{LUA 1 2}]" {
			t.Fatalf("resp%d FUNCTION STATS = %+v, %v", proto, stats, err)
		}
		dump, err := rdb.FunctionDump(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.FunctionDelete(ctx, "ratelib").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.FCall(ctx, "rl_take", []string{"k"}, 1).Err(); err == nil || err.Error() != "ERR Function not found" {
			t.Fatalf("resp%d FCALL after FUNCTION DELETE: %v", proto, err)
		}
		if err := rdb.FunctionRestore(ctx, dump).Err(); err != nil {
			t.Fatalf("resp%d FUNCTION RESTORE: %v", proto, err)
		}
		if n, err := rdb.FCall(ctx, "rl_take", []string{"rl:user"}, 60).Int64(); err != nil || n != 4 {
			t.Fatalf("resp%d FCALL after FUNCTION RESTORE = %d, %v", proto, n, err)
		}
		if err := rdb.FunctionRestore(ctx, dump).Err(); err == nil || err.Error() != "ERR Library ratelib already exists" {
			t.Fatalf("resp%d FUNCTION RESTORE again (APPEND): %v", proto, err)
		}
		if err := rdb.Do(ctx, "FUNCTION", "RESTORE", dump, "REPLACE").Err(); err != nil {
			t.Fatalf("resp%d FUNCTION RESTORE REPLACE: %v", proto, err)
		}
		if err := rdb.FunctionFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if libs := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Val(); len(libs) != 0 {
			t.Fatalf("resp%d FUNCTION LIST after FLUSH: %+v", proto, libs)
		}
	})
}

// TestFunctionDumpRestoresAcrossServers: a FUNCTION DUMP of redis-server
// 7.0 restores on Shoal and Shoal's on redis-server, and for the same
// libraries the two payloads are the same bytes (the RDB strings are LZF
// compressed as redis compresses them). Libraries of random sizes and
// repetitiveness exercise every LZF case: literal runs, short and long
// back references, references past 264 octets.
func TestFunctionDumpRestoresAcrossServers(t *testing.T) {
	ctx := context.Background()
	ref := redis.NewClient(&redis.Options{Addr: startRedis(t), Protocol: 2})
	defer ref.Close()
	ours := oneConn(t, startLoops(t, 1).addr, 2)
	rng := rand.New(rand.NewSource(1))
	words := []string{"redis", "call", "local", "return", " ", "\n", "keys", "args", "x", "0123456789", "=", "(", ")"}
	for round := 0; round < 40; round++ {
		var body strings.Builder
		for n := rng.Intn(1 << uint(rng.Intn(14))); body.Len() < n; {
			switch rng.Intn(4) {
			case 0:
				body.WriteString(strings.Repeat(words[rng.Intn(len(words))], 1+rng.Intn(300)))
			case 1:
				body.WriteByte(byte('a' + rng.Intn(26)))
			default:
				body.WriteString(words[rng.Intn(len(words))])
			}
		}
		code := fmt.Sprintf("#!lua name=lib%d\n--[[%s]]\nredis.register_function('f%d', function() return %d end)\n",
			round, strings.ReplaceAll(body.String(), "]]", ""), round, round)
		for _, c := range []*redis.Client{ref, ours} {
			c.FunctionFlush(ctx)
			if err := c.FunctionLoad(ctx, code).Err(); err != nil {
				t.Fatalf("round %d: FUNCTION LOAD: %v", round, err)
			}
		}
		want, err := ref.FunctionDump(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		have := ours.FunctionDump(ctx).Val()
		if have != want {
			t.Fatalf("round %d (code of %d bytes): FUNCTION DUMP differs:\nredis: %q\nshoal: %q", round, len(code), want, have)
		}
		for _, c := range []*redis.Client{ref, ours} {
			c.FunctionFlush(ctx)
		}
		if err := ours.FunctionRestore(ctx, want).Err(); err != nil {
			t.Fatalf("round %d: Shoal restoring redis's payload: %v", round, err)
		}
		if err := ref.FunctionRestore(ctx, have).Err(); err != nil {
			t.Fatalf("round %d: redis restoring Shoal's payload: %v", round, err)
		}
		for _, c := range []*redis.Client{ref, ours} {
			if n, err := c.FCall(ctx, fmt.Sprintf("f%d", round), nil).Int(); err != nil || n != round {
				t.Fatalf("round %d: FCALL after RESTORE = %d, %v", round, n, err)
			}
			libs := c.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Val()
			if len(libs) != 1 || libs[0].Code != code {
				t.Fatalf("round %d: the restored library's code differs", round)
			}
		}
	}
}

// dumpPayload frames body as a FUNCTION DUMP payload: RDB version 10 and
// the CRC64 (Jones) redis-server checks.
func dumpPayload(body []byte) string {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), 10)
	crc := ^crc64.Update(^uint64(0), crc64.MakeTable(0x95ac9329ac4bc9b5), p)
	return string(binary.LittleEndian.AppendUint64(p, crc))
}

// TestFunctionRestoreRefusesBadPayloads: payloads with a valid footer but
// contents that are not libraries get redis-server's errors, and nothing
// is restored from a payload with one bad library among good ones.
func TestFunctionRestoreRefusesBadPayloads(t *testing.T) {
	redisAddr := startRedis(t)
	srv := startLoops(t, 1)
	good := func(name string) []byte {
		code := "#!lua name=" + name + "\nredis.register_function('" + name + "f', function() return 1 end)"
		return append([]byte{0xf5, byte(len(code))}, code...)
	}
	old := append([]byte{0xf6, 4}, "oldf"...)
	old = append(old, 3, 'L', 'U', 'A', 1, 4, 'd', 'e', 's', 'c')
	oldBody := "redis.register_function('old_fn', function() return 'old' end)"
	old = append(append(old, byte(len(oldBody))), oldBody...)
	steps := []step{
		c("FUNCTION FLUSH"),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0x01})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0xf5})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0xf5, 0x3f, 'x'})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0xf5, 0xc0, 7})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0xf5, 0xc3, 2, 9, 0, 'x'})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload([]byte{0xf5, 3, 'a', 'b', 'c'})),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(append(good("a"), good("a")...))),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(append(good("a"), 0xf5, 3, 'a', 'b', 'c'))),
		c("FUNCTION LIST"),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(good("a"))),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(good("a"))),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(good("a")), "REPLACE"),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(good("a")), "FLUSH"),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(old)), c("FCALL old_fn 0"),
		s(exact, "FUNCTION", "RESTORE", dumpPayload(nil)),
		c("FUNCTION DELETE a"), c("FUNCTION DELETE oldf"), c("FUNCTION STATS"),
	}
	runDiff(t, redisAddr, srv.addr, 2, steps, false)
}

// TestFunctionsSurviveRestartAndRewrite: libraries loaded, replaced,
// deleted, flushed and restored are in the AOF as those commands; a
// restart brings back exactly the libraries there were; after
// BGREWRITEAOF the file loads them with one FUNCTION LOAD each, and a
// restart from the rewritten file has them too, with the data the
// functions wrote.
func TestFunctionsSurviveRestartAndRewrite(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	lib := func(name, fn, ret string) string {
		return "#!lua name=" + name + "\nredis.register_function('" + fn + "', function(keys, args) redis.call('SET', keys[1], '" + ret + "') return '" + ret + "' end)"
	}
	for _, step := range []struct{ args []string }{
		{[]string{"FUNCTION", "LOAD", lib("gone", "gone_f", "x")}},
		{[]string{"FUNCTION", "FLUSH"}},
		{[]string{"FUNCTION", "LOAD", lib("keep", "keep_f", "v1")}},
		{[]string{"FUNCTION", "LOAD", "REPLACE", lib("keep", "keep_f", "v2")}},
		{[]string{"FUNCTION", "LOAD", lib("dropped", "dropped_f", "d")}},
		{[]string{"FUNCTION", "DELETE", "dropped"}},
		{[]string{"FCALL", "keep_f", "1", "written"}},
	} {
		if got := c.Do(step.args...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q: %q", step.args, got)
		}
	}
	dump := c.Do("FUNCTION", "DUMP")
	c.Do("FUNCTION", "LOAD", lib("other", "other_f", "o"))
	payload := strings.SplitN(dump, "\r\n", 2)[1]
	payload = payload[:len(payload)-2]
	if got := c.Do("FUNCTION", "RESTORE", payload, "FLUSH"); got != "+OK\r\n" {
		t.Fatalf("FUNCTION RESTORE FLUSH: %q", got)
	}
	wantList := c.Do("FUNCTION", "LIST", "WITHCODE")

	log := s.stopAndReadLog(t)
	for _, want := range []string{"$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n", "$8\r\nFUNCTION\r\n$5\r\nFLUSH\r\n", "$6\r\nDELETE\r\n$7\r\ndropped\r\n", "$7\r\nRESTORE\r\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("the AOF lacks %q", want)
		}
	}
	if strings.Contains(log, "FCALL") || !strings.Contains(log, "$7\r\nwritten\r\n$2\r\nv2\r\n") {
		t.Errorf("the AOF has FCALL, or not the SET it did:\n%q", log)
	}

	r := s.restart(t)
	rc := dialRaw(t, r.addr)
	if got := rc.Do("FUNCTION", "LIST", "WITHCODE"); got != wantList {
		t.Fatalf("after a restart FUNCTION LIST = %q, want %q", got, wantList)
	}
	if got := rc.Do("FCALL", "keep_f", "1", "again"); got != "$2\r\nv2\r\n" {
		t.Fatalf("after a restart FCALL keep_f = %q", got)
	}
	if got := rc.Do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background append only file rewriting") {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(rc.Do("INFO", "persistence"), "aof_rewrite_in_progress:0") || !strings.Contains(rc.Do("INFO", "persistence"), "aof_rewrites:1") {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rc.Do("FUNCTION", "LOAD", lib("after", "after_f", "a"))
	wantList = rc.Do("FUNCTION", "LIST", "WITHCODE")
	log = r.stopAndReadLog(t)
	if n := strings.Count(log, "$8\r\nFUNCTION\r\n"); n != 2 || strings.Contains(log, "FLUSH") || strings.Contains(log, "dropped") {
		t.Errorf("the rewritten AOF has %d FUNCTION records (want a LOAD for keep, one for after) or old ones:\n%q", n, log)
	}
	rc2 := dialRaw(t, r.restart(t).addr)
	if got := rc2.Do("FUNCTION", "LIST", "WITHCODE"); got != wantList {
		t.Fatalf("after the rewrite and a restart FUNCTION LIST = %q, want %q", got, wantList)
	}
	if got := rc2.Do("MGET", "written", "again"); got != "*2\r\n$2\r\nv2\r\n$2\r\nv2\r\n" {
		t.Fatalf("the functions' writes after the rewrite: %q", got)
	}
}

// TestFunctionLimits: functions meet the limits scripts do: one that loops
// runs until FUNCTION KILL stops it, one that recurses without end or
// returns a table inside itself gets an error, cjson and cmsgpack stop at
// their depth limits on a cyclic table; the server goes on serving and the
// library stays loaded. A library whose code loops at load is refused
// after the load timeout.
func TestFunctionLimits(t *testing.T) {
	srv := startLoops(t, 2)
	c, other := busyPair(t, srv.addr, "200")
	lib := "#!lua name=bad\n" +
		"redis.register_function('spin', function() while true do end end)\n" +
		"redis.register_function('recurse', function() local function f(n) return f(n + 1) + 1 end return f(1) end)\n" +
		"redis.register_function('cycle', function() local t = {} t[1] = t return t end)\n" +
		"redis.register_function('json', function() local t = {} t[1] = t return cjson.encode(t) end)\n" +
		"redis.register_function('pack', function() local t = {} t[1] = t return #cmsgpack.pack(t) end)\n" +
		"redis.register_function('ok', function() return 'fine' end)\n"
	if got := c.Do("FUNCTION", "LOAD", lib); got != "$3\r\nbad\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", got)
	}
	done := startScript(c, "FCALL", "spin", "0")
	waitBusy(t, other)
	if got := other.Do("FUNCTION", "KILL"); got != "+OK\r\n" {
		t.Fatalf("FUNCTION KILL = %q", got)
	}
	if got := scriptResult(t, done); got != "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n" {
		t.Fatalf("FCALL spin = %q", got)
	}
	checkFailsAndServes(t, c, map[string]string{
		"recurse": "-ERR Error running script recurse, stack overflow",
		"cycle":   "-ERR Script returned a table that contains itself",
		"json":    "-ERR user_function:5: Cannot serialise, excessive nesting (1001) script: json, on @user_function:5.",
		"pack":    ":17\r\n",
	}, func(fn string) []string { return []string{"FCALL", fn, "0"} }, []string{"FCALL", "ok", "0"}, "$4\r\nfine\r\n")
	start := time.Now()
	if got := c.Do("FUNCTION", "LOAD", "#!lua name=loops\nwhile true do end"); got != "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n" {
		t.Fatalf("a library that loops at load: %q", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the load was stopped after %v, want about 500ms", d)
	}
	if got := c.Do("FCALL", "ok", "0"); got != "$4\r\nfine\r\n" {
		t.Fatalf("after the refused load: %q", got)
	}
}
