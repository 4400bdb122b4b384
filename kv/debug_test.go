package kv_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// startDebugShoal is an in-process Shoal with enable-debug-command set.
func startDebugShoal(t *testing.T, mode string) *shoalServer {
	t.Helper()
	params := config.New(config.Params())
	if err := params.ParseFlags(flag.NewFlagSet("t", flag.ContinueOnError), []string{"--enable-debug-command", mode}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	return startShoal(t, kv.Options{Params: params}, eventloop.Options{Loops: 2, Balancer: &eventloop.RoundRobin{}})
}

// TestDebugMatchesRedis compares DEBUG's replies with redis-server's in
// both protocols: PROTOCOL for every type, ERROR, the argument errors, and
// DIGEST / DIGEST-VALUE over every type in its small and large encodings,
// with expiries and in several databases, which must equal Redis's digits
// (so a Shoal and a redis-server holding the same data say so).
func TestDebugMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t, "--enable-debug-command", "yes")
	srv := startDebugShoal(t, "yes")
	var steps [][]string
	for _, proto := range []string{"2", "3"} {
		steps = append(steps, []string{"HELLO", proto, "SETNAME", "x"})
		for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false", "nosuch", "STRING"} {
			steps = append(steps, []string{"DEBUG", "PROTOCOL", typ})
		}
	}
	steps = append(steps, [][]string{
		{"DEBUG", "ERROR", "CUSTOM something\r\nwent wrong"}, {"DEBUG", "NOSUCH"}, {"DEBUG", "PROTOCOL"},
		{"DEBUG", "SLEEP", "0"}, {"DEBUG", "SLEEP", "abc"}, {"DEBUG", "DIGEST", "extra"},
		{"DEBUG", "OBJECT", "missing"},
		{"FLUSHALL"}, {"DEBUG", "DIGEST"}, {"DEBUG", "DIGEST-VALUE"}, {"DEBUG", "DIGEST-VALUE", "missing"},
		{"SET", "s", "hello"}, {"SET", "n", "12345"}, {"SET", "e", "v", "EX", "1000"},
		{"RPUSH", "l", "a", "1", "b"}, {"SADD", "set", "x", "y", "z"}, {"SADD", "ints", "1", "2", "3"},
		{"HSET", "h", "f1", "v1", "f2", "v2"}, {"ZADD", "z", "1", "a", "2.5", "b", "-inf", "c", "0.1", "d"},
		{"PEXPIRE", "h", "100000"}, {"XADD", "st", "1-1", "f", "v", "n", "12"}, {"XADD", "st", "2-5", "f", "w"},
		{"XADD", "st", "3-0", "g", "x"}, {"XDEL", "st", "2-5"},
	}...)
	big := func(cmd, key string, n int, pair bool) []string {
		args := []string{cmd, key}
		for i := range n {
			if pair {
				args = append(args, fmt.Sprint(float64(i)/3), fmt.Sprintf("member-%d", i))
			} else {
				args = append(args, fmt.Sprintf("element-%d", i))
			}
		}
		return args
	}
	steps = append(steps, big("RPUSH", "bl", 1000, false), big("SADD", "bs", 600, false), big("ZADD", "bz", 300, true))
	bigHash := []string{"HSET", "bh"}
	for i := range 300 {
		bigHash = append(bigHash, fmt.Sprintf("field-%d", i), strings.Repeat("v", i%100))
	}
	steps = append(steps, bigHash,
		[]string{"DEBUG", "DIGEST"},
		[]string{"DEBUG", "DIGEST-VALUE", "s", "n", "e", "l", "set", "ints", "h", "z", "bl", "bs", "bz", "bh", "st", "missing"},
		[]string{"SELECT", "3"}, []string{"SET", "s", "hello"}, []string{"DEBUG", "DIGEST"},
		[]string{"SELECT", "0"}, []string{"DEL", "s"}, []string{"DEBUG", "DIGEST"},
		[]string{"OBJECT", "ENCODING", "bl"}, []string{"OBJECT", "ENCODING", "bz"})
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		var got []string
		for _, s := range steps {
			r := c.Do(s...)
			if s[0] == "HELLO" {
				r = "(hello)" // holds the connection id
			}
			got = append(got, r)
			if strings.HasPrefix(r, "|") || strings.HasPrefix(r, ">") {
				// The attribute or push came first; the real reply follows.
				next, err := c.Read()
				if err != nil {
					t.Fatalf("%s: after %q: %v", addr, s, err)
				}
				got = append(got, next)
			}
		}
		return got
	}
	want, have := run(redisAddr), run(srv.addr)
	if len(want) != len(have) {
		t.Fatalf("%d replies from redis, %d from shoal", len(want), len(have))
	}
	for i := range want {
		if want[i] != have[i] {
			t.Errorf("reply %d differs:\nredis: %q\nshoal: %q", i, want[i], have[i])
		}
	}
	zeros := "+" + strings.Repeat("0", 40) + "\r\n"
	if !strings.Contains(strings.Join(want, ""), zeros) {
		t.Fatalf("redis's empty digest is not all zeros: %q", want)
	}
}

// TestDebugIsRefusedUnlessEnabled: enable-debug-command no (the default)
// refuses DEBUG with Redis's text, local lets loopback clients in, and the
// setting cannot change at run time.
func TestDebugIsRefusedUnlessEnabled(t *testing.T) {
	redisAddr := startRedis(t)
	def := startLoops(t, 1)
	want := dialRaw(t, redisAddr).Do("DEBUG", "DIGEST")
	if !strings.HasPrefix(want, "-ERR DEBUG command not allowed.") {
		t.Fatalf("redis-server: %q", want)
	}
	c := dialRaw(t, def.addr)
	if have := c.Do("DEBUG", "DIGEST"); have != want {
		t.Errorf("default: %q, want %q", have, want)
	}
	wantSet := dialRaw(t, redisAddr).Do("CONFIG", "SET", "enable-debug-command", "yes")
	if have := c.Do("CONFIG", "SET", "enable-debug-command", "yes"); have != wantSet {
		t.Errorf("CONFIG SET: %q, want %q", have, wantSet)
	}
	local := startDebugShoal(t, "local")
	if r := dialRaw(t, local.addr).Do("DEBUG", "DIGEST"); r != "+"+strings.Repeat("0", 40)+"\r\n" {
		t.Errorf("local, from loopback: %q", r)
	}
	if r := dialRaw(t, local.addr).Do("DEBUG", "SEGFAULT"); !strings.HasPrefix(r, "-ERR DEBUG SEGFAULT is not supported") {
		t.Errorf("SEGFAULT: %q", r)
	}
}

// TestDebugSleepStopsTheServer: as in Redis, DEBUG SLEEP stops every
// client, not only the one that sent it. Another client on the other loop
// PINGs without pause while a 300 ms sleep runs: some PING must wait for
// the sleep, a gap of most of it between two of its replies.
func TestDebugSleepStopsTheServer(t *testing.T) {
	srv := startDebugShoal(t, "yes")
	sleeper, other := dialRaw(t, srv.addr), dialRaw(t, srv.addr)
	other.Do("PING") // connected, on the other loop (round robin)
	done := make(chan string, 1)
	go func() {
		r, err := sleeper.Read()
		if err != nil {
			r = err.Error()
		}
		done <- r
	}()
	sleeper.Send(encodeCommand([]string{"DEBUG", "SLEEP", "0.3"}))
	var gap time.Duration
	last := time.Now()
	for {
		if r := other.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING: %q", r)
		}
		now := time.Now()
		gap = max(gap, now.Sub(last))
		last = now
		select {
		case r := <-done:
			if r != "+OK\r\n" {
				t.Fatalf("DEBUG SLEEP: %q", r)
			}
			if gap < 200*time.Millisecond {
				t.Errorf("the other loop answered PINGs at most %v apart during a 300 ms DEBUG SLEEP", gap)
			}
			return
		default:
		}
	}
}
