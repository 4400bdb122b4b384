package kv_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// unlockScript releases a lock only for the token that holds it, as
// redsync's unlock does: 1 released, 0 held by another, -1 not held.
const unlockScript = `
local holder = redis.call("GET", KEYS[1])
if holder == ARGV[1] then
	return redis.call("DEL", KEYS[1])
elseif holder == false then
	return -1
end
return 0`

// gcraScript is a GCRA limiter in the shape of go-redis/redis_rate's:
// ARGV burst, rate, period (seconds), cost; the server's TIME; the
// theoretical arrival time stored as a float with a TTL; and the reply
// {allowed, remaining, tostring(retry_after), tostring(reset_after)}.
const gcraScript = `
redis.replicate_commands()
local key = KEYS[1]
local burst, rate, period = ARGV[1], ARGV[2], ARGV[3]
local cost = tonumber(ARGV[4])
local interval = period / rate
local now = redis.call("TIME")
now = (now[1] - 1483228800) + (now[2] / 1000000)
local tat = redis.call("GET", key)
if not tat then tat = now else tat = tonumber(tat) end
tat = math.max(tat, now)
local new_tat = tat + interval * cost
local diff = now - (new_tat - interval * burst)
local remaining = math.floor(diff / interval + 0.5)
if remaining >= 0 then
	local reset_after = new_tat - now
	redis.call("SET", key, new_tat, "EX", math.ceil(reset_after))
	return {cost, remaining, tostring(-1), tostring(reset_after)}
end
return {0, 0, tostring(-diff), tostring(tat - now)}`

// TestGoRedisScripts drives scripts through go-redis's Script.Run (EVALSHA,
// then EVAL on NOSCRIPT), in RESP2 and RESP3: a lock release and a rate
// limiter as redsync and redis_rate run them, and the reply types.
func TestGoRedisScripts(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		rdb.ScriptFlush(ctx)

		unlock := redis.NewScript(unlockScript)
		rdb.Set(ctx, "lock", "token-1", time.Minute)
		for _, tc := range []struct {
			token string
			want  int64
		}{{"token-2", 0}, {"token-1", 1}, {"token-1", -1}} {
			got, err := unlock.Run(ctx, rdb, []string{"lock"}, tc.token).Int64()
			if err != nil || got != tc.want {
				t.Fatalf("resp%d unlock(%s) = %d, %v; want %d", proto, tc.token, got, err, tc.want)
			}
		}
		if ok, _ := unlock.Exists(ctx, rdb).Result(); len(ok) != 1 || !ok[0] {
			t.Fatalf("resp%d: the script is not cached after Run: %v", proto, ok)
		}

		limiter := redis.NewScript(gcraScript)
		for i := 0; i < 5; i++ {
			res, err := limiter.Run(ctx, rdb, []string{"rate:user"}, 3, 1, 60, 1).Slice()
			if err != nil || len(res) != 4 {
				t.Fatalf("resp%d limiter: %v, %v", proto, res, err)
			}
			allowed, remaining := res[0].(int64), res[1].(int64)
			retry, errRetry := strconv.ParseFloat(res[2].(string), 64)
			reset, errReset := strconv.ParseFloat(res[3].(string), 64)
			if errRetry != nil || errReset != nil {
				t.Fatalf("resp%d limiter: retry %q, reset %q do not parse", proto, res[2], res[3])
			}
			switch {
			case i < 3 && (allowed != 1 || remaining != int64(2-i) || retry != -1 || reset <= 0):
				t.Fatalf("resp%d limiter call %d = %v, want allowed with %d remaining", proto, i, res, 2-i)
			case i >= 3 && (allowed != 0 || remaining != 0 || retry <= 0 || retry > 60):
				t.Fatalf("resp%d limiter call %d = %v, want refused with a retry time", proto, i, res)
			}
		}
		if ttl := rdb.TTL(ctx, "rate:user").Val(); ttl <= 0 || ttl > 4*time.Minute {
			t.Fatalf("resp%d limiter key TTL %v", proto, ttl)
		}

		types := []struct {
			script string
			want   any
		}{
			{"return {1, 'two', {3}, false, true}", []any{int64(1), "two", []any{int64(3)}, nil, int64(1)}},
			{"return redis.status_reply('FINE')", "FINE"},
			{"return 7.9", int64(7)},
		}
		for _, tc := range types {
			got, err := rdb.Eval(ctx, tc.script, nil).Result()
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("resp%d %s = %#v, %v; want %#v", proto, tc.script, got, err, tc.want)
			}
		}
		if err := rdb.Eval(ctx, "return nil", nil).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("resp%d return nil: %v, want redis.Nil", proto, err)
		}
		rdb.Set(ctx, "text", "x", 0)
		err := rdb.Eval(ctx, "return redis.call('INCR', KEYS[1])", []string{"text"}).Err()
		if err == nil || !strings.HasPrefix(err.Error(), "ERR value is not an integer or out of range script: ") {
			t.Fatalf("resp%d: error from redis.call = %v", proto, err)
		}
		if err := rdb.EvalSha(ctx, strings.Repeat("ab", 20), nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT ") {
			t.Fatalf("resp%d: EVALSHA of an unknown script: %v", proto, err)
		}
		if proto == 3 {
			got, err := rdb.Eval(ctx, "redis.setresp(3) return {double=1.5, map={}}", nil).Result()
			if err != nil || got != 1.5 {
				t.Fatalf("resp3 double = %#v, %v", got, err)
			}
			got, err = rdb.Eval(ctx, "redis.setresp(3) return redis.call('HGETALL', KEYS[1])", []string{"h"}).Result()
			if err != nil || fmt.Sprint(got) != "map[]" {
				t.Fatalf("resp3 map = %#v, %v", got, err)
			}
		}
	})
}

// TestScriptIsAtomic: scripts that INCR a key many times run while
// clients on other loops INCR it too; every script sees its own increments
// one after another (no other command between them), and no increment is
// lost.
func TestScriptIsAtomic(t *testing.T) {
	srv := startLoops(t, 4)
	const (
		scriptConns, runs, perScript = 4, 25, 200
		incrConns, incrs             = 4, 1500
	)
	script := `
local first = redis.call('INCR', KEYS[1])
for i = 2, tonumber(ARGV[1]) do
	local v = redis.call('INCR', KEYS[1])
	if v ~= first + i - 1 then
		return redis.error_reply('ERR interleaved: expected ' .. (first + i - 1) .. ', got ' .. v)
	end
end
return first`
	var wg sync.WaitGroup
	errs := make(chan string, scriptConns*runs+incrConns)
	for i := 0; i < scriptConns+incrConns; i++ {
		c := dialRaw(t, srv.addr) // dialled in turn: the balancer spreads them over the loops
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i < scriptConns {
				for r := 0; r < runs; r++ {
					if reply := c.Do("EVAL", script, "1", "counter", strconv.Itoa(perScript)); reply[0] != ':' {
						errs <- reply
						return
					}
				}
				return
			}
			for n := 0; n < incrs; n++ {
				if reply := c.Do("INCR", "counter"); reply[0] != ':' {
					errs <- reply
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	want := scriptConns*runs*perScript + incrConns*incrs
	if got := dialRaw(t, srv.addr).Do("GET", "counter"); got != fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(want)), want) {
		t.Fatalf("counter = %q, want %d", got, want)
	}
}

// TestAOFLogsScriptEffects: the AOF has what scripts did, never EVAL:
// their writes between MULTI and EXEC (one pair inside a transaction, the
// transaction's), relative times made absolute, nothing for a script that
// only read, the writes before an error kept; and a replay rebuilds the
// keyspace of every database.
func TestAOFLogsScriptEffects(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	for _, step := range []struct{ args, want string }{
		{"EVAL|redis.call('SET','a','1') redis.call('INCR','a') redis.call('RPUSH','l','x','y') return 1|0", ":1\r\n"},
		{"EVAL|return redis.call('SET', KEYS[1], ARGV[1])|1|b|v", "+OK\r\n"},
		{"EVAL|return redis.call('GET','a')|0", "$1\r\n2\r\n"},
		{"EVAL_RO|return redis.call('LLEN','l')|0", ":2\r\n"},
		{"EVAL|redis.call('SET','c','3') error({err='ERR stopped'})|0", "-ERR stopped script: "},
		{"EVAL|redis.call('SELECT','1') redis.call('SET','d','in db1') return redis.call('DBSIZE')|0", ":1\r\n"},
		{"EVAL|redis.call('SET','e','x') return redis.call('PEXPIRE','e', 100000)|0", ":1\r\n"},
		{"MULTI", "+OK\r\n"},
		{"EVAL|return redis.call('SET','f','1')|0", "+QUEUED\r\n"},
		{"SET|g|2", "+QUEUED\r\n"},
		{"EXEC", "*2\r\n+OK\r\n+OK\r\n"},
		{"EVAL|return redis.call('SET','b','nx', 'NX')|0", "$-1\r\n"},
	} {
		if got := c.Do(strings.Split(step.args, "|")...); !strings.HasPrefix(got, step.want) {
			t.Fatalf("%s = %q, want %q", step.args, got, step.want)
		}
	}
	before := keyspace(t, s.addr)
	log := strings.ReplaceAll(s.stopAndReadLog(t), "\r\n", " ")
	for _, want := range []string{
		"*1 $5 MULTI *3 $3 SET $1 a $1 1 *2 $4 INCR $1 a *4 $5 RPUSH $1 l $1 x $1 y *1 $4 EXEC ",
		"*1 $5 MULTI *3 $3 SET $1 b $1 v *1 $4 EXEC ",
		"*1 $5 MULTI *3 $3 SET $1 c $1 3 *1 $4 EXEC ",
		"*2 $6 SELECT $1 1 *1 $5 MULTI *3 $3 SET $1 d $6 in db1 *1 $4 EXEC ",
		"*1 $5 MULTI *3 $3 SET $1 f $1 1 *3 $3 SET $1 g $1 2 *1 $4 EXEC ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "EVAL") || strings.Contains(log, "PEXPIRE $1 e") || !strings.Contains(log, "PEXPIREAT $1 e") {
		t.Errorf("the log has EVAL, or a relative expiry:\n%s", log)
	}
	if n, m := strings.Count(log, "MULTI"), strings.Count(log, "EXEC"); n != 6 || m != 6 {
		t.Errorf("the log has %d MULTI and %d EXEC, want 6 of each:\n%s", n, m, log)
	}
	r := s.restart(t)
	checkKeyspace(t, r.addr, before, 7)
	rc := dialRaw(t, r.addr)
	rc.Do("SELECT", "1")
	if got := rc.Do("GET", "d"); got != "$6\r\nin db1\r\n" {
		t.Errorf("database 1 after replay: GET d = %q", got)
	}
}

// TestScriptServesBlockedClientsAfterItEnds: a client blocked on a list a
// script pushes to is served once the script has ended, so the script
// still sees its own push.
func TestScriptServesBlockedClientsAfterItEnds(t *testing.T) {
	srv := startLoops(t, 2)
	waiter := dialRaw(t, srv.addr)
	got := make(chan string, 1)
	go func() { got <- waiter.Do("BLPOP", "q", "5") }()
	admin := oneConn(t, srv.addr, 2)
	waitBlocked(t, admin, 1)
	c := dialRaw(t, srv.addr)
	if reply := c.Do("EVAL", "redis.call('RPUSH', KEYS[1], 'job') return redis.call('LLEN', KEYS[1])", "1", "q"); reply != ":1\r\n" {
		t.Fatalf("the script saw LLEN %q, want :1 (the waiter served before the script ended)", reply)
	}
	select {
	case reply := <-got:
		if reply != "*2\r\n$1\r\nq\r\n$3\r\njob\r\n" {
			t.Fatalf("BLPOP = %q", reply)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked client was not served after the script")
	}
	if reply := c.Do("EVAL", "return redis.call('BLPOP', 'q', 0)", "0"); !strings.HasPrefix(reply, "-ERR This Redis command is not allowed from script") {
		t.Fatalf("BLPOP in a script: %q", reply)
	}
}

// TestScriptLimits: a script that loops runs until SCRIPT KILL stops it,
// however it loops; one that recurses without end, builds a huge string
// or stack, returns a table inside itself or nests its syntax a million
// deep gets an error; the server goes on serving, and other clients wait
// for the looping script rather than interleave with it.
func TestScriptLimits(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2, Balancer: &eventloop.RoundRobin{}})
	c, other := busyPair(t, srv.addr, "300")
	for _, loop := range []string{
		"while true do end",
		"local i = 0 while true do i = i + 1 if i % 1000 == 0 then redis.call('GET', 'progress') end end",
		"while true do pcall(function() while true do end end) end",
		"local co = coroutine.wrap(function() while true do end end) co()",
	} {
		start := time.Now()
		done := startScript(c, "EVAL", loop, "0")
		waitBusy(t, other)
		if d := time.Since(start); d < 290*time.Millisecond {
			t.Fatalf("%s: another client was answered -BUSY after %v, before the threshold", loop, d)
		}
		if got := other.Do("SCRIPT", "KILL"); got != "+OK\r\n" {
			t.Fatalf("%s: SCRIPT KILL = %q", loop, got)
		}
		if got := scriptResult(t, done); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
			t.Fatalf("%s = %q", loop, got)
		}
	}
	// The scripts below fail on their own limits.
	checkFailsAndServes(t, c, map[string]string{
		"local function f(n) return f(n+1)+1 end return f(1)":                 "-ERR Error running script ",
		"return string.rep('x', 1e10)":                                        "-ERR user_script:1: string.rep would make a string of more than",
		"return select('#', unpack({}, 1, 1e6))":                              "-ERR user_script:1: too many results to unpack",
		"return {string.byte(string.rep('x', 11e5), 1, -1)}":                  "-ERR Error running script ",
		"local t = {} t[1] = t return t":                                      "-ERR Script returned a table that contains itself",
		"return " + strings.Repeat("{", 1e5) + strings.Repeat("}", 1e5):       "-ERR Error compiling script (new function): user_script: chunk has too many syntax levels",
		"return loadstring('return ' .. string.rep('- ', 1e5) .. '1') == nil": ":1\r\n",
		"return pcall(string.rep, 'x', 1e10) == false":                        ":1\r\n",
	}, func(script string) []string { return []string{"EVAL", script, "0"} },
		[]string{"EVAL", "return 'still serving'", "0"}, "$13\r\nstill serving\r\n")
	if got := c.Do("CONFIG", "SET", "busy-reply-threshold", "0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET busy-reply-threshold 0: %q", got)
	}
	// Long enough to outlast several of the watch's 50 ms checks, which
	// with no threshold mark it busy at once; 3e6 rounds took 9 s on two
	// loaded cores under -race, near the 30 s a raw read waits.
	if got := c.Do("EVAL", "local n = 0 for i = 1, 3e5 do n = n + i end return n", "0"); got != ":45000150000\r\n" {
		t.Fatalf("a long script without a time limit: %q", got)
	}
}
