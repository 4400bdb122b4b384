package kv_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSlowlogMatchesRedis logs every command on redis-server and on Shoal
// (slowlog-log-slower-than 0) and compares what SLOWLOG GET keeps of each:
// the arguments (passwords redacted, long ones cut, at most 32), the
// client's name, the order, and that ids count up by one from entry to
// entry. The times and durations are checked for sense, not equality.
func TestSlowlogMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t)
	srv := startLoops(t, 2)
	long := strings.Repeat("x", 300)
	many := []string{"RPUSH", "l"}
	for i := range 40 {
		many = append(many, fmt.Sprint(i))
	}
	type entry struct {
		Args []string
		Name string
	}
	scenario := func(addr string) ([]entry, []string) {
		c := dialRaw(t, addr)
		var replies []string
		for _, cmd := range [][]string{
			{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
			{"SLOWLOG", "RESET"},
			{"AUTH", "someone", "secret"},
			{"HELLO", "2", "AUTH", "default", "anything", "SETNAME", "named"},
			{"CONFIG", "SET", "requirepass", "", "maxmemory", "0"},
			many,
			{"SET", "k", long},
			{"CLIENT", "SETNAME", "renamed"},
			{"MULTI"}, {"SET", "a", "1"}, {"INCR", "a"}, {"EXEC"},
			{"SLOWLOG", "GET", "abc"}, {"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "GET", "1", "2"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-1"},
			{"SLOWLOG", "LEN"},
			{"CONFIG", "SET", "slowlog-max-len", "3"},
			{"SLOWLOG", "LEN"}, // a lower length applies at the next entry
			{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-1"},
			{"SLOWLOG", "LEN"},
			{"CONFIG", "GET", "slowlog-max-len"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-2"},
		} {
			replies = append(replies, c.Do(cmd...))
		}
		rdb := oneConn(t, addr, 2)
		logged, err := rdb.SlowLogGet(context.Background(), -1).Result()
		if err != nil {
			t.Fatalf("%s: SLOWLOG GET: %v", addr, err)
		}
		var got []entry
		for i, e := range logged {
			if i > 0 && e.ID != logged[i-1].ID-1 {
				t.Errorf("%s: entry ids %d then %d, want one less each", addr, logged[i-1].ID, e.ID)
			}
			if d := time.Since(e.Time); d < -time.Minute || d > time.Minute {
				t.Errorf("%s: entry %d logged at %v", addr, e.ID, e.Time)
			}
			if e.Duration < 0 || e.Duration > 10*time.Second {
				t.Errorf("%s: entry %d took %v", addr, e.ID, e.Duration)
			}
			if !strings.HasPrefix(e.ClientAddr, "127.0.0.1:") {
				t.Errorf("%s: entry %d from %q", addr, e.ID, e.ClientAddr)
			}
			got = append(got, entry{e.Args, e.ClientName})
		}
		rdb.ConfigSet(context.Background(), "slowlog-max-len", "128")
		return got, replies
	}
	want, wantReplies := scenario(redisAddr)
	have, haveReplies := scenario(srv.addr)
	const helloReply = 3 // holds the connection's id
	haveReplies[helloReply] = wantReplies[helloReply]
	if !reflect.DeepEqual(haveReplies, wantReplies) {
		t.Errorf("replies differ:\nredis: %q\nshoal: %q", wantReplies, haveReplies)
	}
	if len(want) != 3 {
		t.Fatalf("redis kept %d entries after slowlog-max-len 3: %v", len(want), want)
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("entries differ:\nredis: %v\nshoal: %v", want, have)
	}

	// The whole log before the trim, on Shoal: what each command left.
	c := dialRaw(t, srv.addr)
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	c.Do("SLOWLOG", "RESET")
	c.Do("AUTH", "someone", "secret")
	c.Do(many...)
	c.Do("SET", "k", long)
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	logged, err := oneConn(t, srv.addr, 2).SlowLogGet(context.Background(), 10).Result()
	if err != nil {
		t.Fatal(err)
	}
	var args [][]string
	for _, e := range logged {
		args = append(args, e.Args)
	}
	wantMany := append(append([]string(nil), many[:31]...), "... (11 more arguments)")
	wantArgs := [][]string{
		{"SET", "k", long[:128] + "... (172 more bytes)"},
		wantMany,
		{"AUTH", "(redacted)", "(redacted)"},
		{"SLOWLOG", "RESET"},
	}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("entries:\n%q\nwant\n%q", args, wantArgs)
	}
}

// TestSlowlogCatchesASlowCommandAtTheDefault checks the promise of the
// sampling: at the default threshold (10 ms) a command that is not flagged
// fast is timed every time, so one slow run of it is logged.
func TestSlowlogCatchesASlowCommandAtTheDefault(t *testing.T) {
	srv := startLoops(t, 1)
	c := dialRaw(t, srv.addr)
	if r := c.Do("CONFIG", "GET", "slowlog-log-slower-than"); !strings.Contains(r, "10000") {
		t.Fatalf("default threshold: %q", r)
	}
	for range 20 {
		c.Do("SET", "k", "v") // fast: sampled, and far below 10 ms
	}
	// A script that spins past 10 ms (EVAL is not flagged fast).
	script := "local n = 0 local t = redis.call('TIME') " +
		"while true do n = n + 1 local u = redis.call('TIME') " +
		"if (u[1] - t[1]) * 1000000 + (u[2] - t[2]) > 20000 then return n end end"
	if r := c.Do("EVAL", script, "0"); !strings.HasPrefix(r, ":") {
		t.Fatalf("EVAL: %q", r)
	}
	logged, err := oneConn(t, srv.addr, 2).SlowLogGet(context.Background(), -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || len(logged[0].Args) == 0 || logged[0].Args[0] != "EVAL" {
		t.Fatalf("slow log: %+v, want the one EVAL", logged)
	}
	if logged[0].Duration < 20*time.Millisecond {
		t.Errorf("EVAL logged as %v, it ran past 20ms", logged[0].Duration)
	}
}
