package kv_test

import (
	"strings"
	"testing"
	"time"
)

// TestClientReplyAndUnblockMatchRedis runs CLIENT REPLY OFF/SKIP/ON and
// CLIENT UNBLOCK (TIMEOUT and ERROR) on redis-server and on Shoal and
// compares every byte the clients receive. (CLIENT REPLY OFF inside
// MULTI is left out: Redis then sends EXEC's array header without the
// element, and the next reply fills it.)
func TestClientReplyAndUnblockMatchRedis(t *testing.T) {
	bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		var got []string
		c := dialRaw(t, addr)
		c.Do("FLUSHALL")
		var pipe []byte
		for _, cmd := range [][]string{
			{"CLIENT", "REPLY", "OFF"}, {"SET", "a", "1"}, {"GET", "a"}, {"NOSUCH"}, {"CLIENT", "REPLY", "SKIP"},
			{"CLIENT", "REPLY", "ON"}, {"GET", "a"}, {"CLIENT", "REPLY", "SKIP"}, {"SET", "b", "2"}, {"GET", "b"},
			{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "b"},
			{"CLIENT", "REPLY", "OFF"}, {"GETT"}, {"CLIENT", "REPLY", "ON"}, {"ECHO", "end"},
		} {
			pipe = append(pipe, encodeCommand(cmd)...)
		}
		c.Send(pipe)
		for {
			r, err := c.Read()
			if err != nil {
				t.Fatalf("%s: %v (so far %q)", addr, err, got)
			}
			got = append(got, r)
			if r == "$3\r\nend\r\n" {
				break
			}
		}
		blocked, ctl := dialRaw(t, addr), dialRaw(t, addr)
		id := strings.TrimSuffix(strings.TrimPrefix(blocked.Do("CLIENT", "ID"), ":"), "\r\n")
		for _, mode := range []string{"TIMEOUT", "ERROR"} {
			blocked.Send(encodeCommand([]string{"BLPOP", "q", "0"}))
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(ctl.Do("INFO", "clients"), "blocked_clients:1\r\n") {
				if time.Now().After(deadline) {
					t.Fatalf("%s: BLPOP never blocked", addr)
				}
				time.Sleep(time.Millisecond)
			}
			got = append(got, ctl.Do("CLIENT", "UNBLOCK", id, mode))
			r, err := blocked.Read()
			if err != nil {
				t.Fatalf("%s: the unblocked client's reply: %v", addr, err)
			}
			got = append(got, r, ctl.Do("CLIENT", "UNBLOCK", id, mode))
		}
		return got
	})
}

// TestLatencyHistogramCountsCalls: LATENCY HISTOGRAM reports every call
// of a command and a cumulative distribution that ends at (about) the
// call count, from the same timed sample as INFO latencystats.
func TestLatencyHistogramCountsCalls(t *testing.T) {
	srv := startLoops(t, 1)
	c := dialRaw(t, srv.addr)
	c.Do("CONFIG", "RESETSTAT")
	for i := 0; i < 320; i++ {
		c.Do("ECHO", "x")
	}
	r := c.Do("LATENCY", "HISTOGRAM", "echo", "ECHO", "nosuch")
	lines := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
	if len(lines) < 10 || lines[0] != "*2" || lines[2] != "echo" || lines[6] != ":320" {
		t.Fatalf("LATENCY HISTOGRAM echo: %q", r)
	}
	// The last bucket's cumulative count is every call (the sample, 20
	// of 320, scaled by 16).
	if last := lines[len(lines)-1]; last != ":320" {
		t.Fatalf("the distribution ends at %s, want :320: %q", last, r)
	}
	// Calls made with latency-tracking off are not in the histogram, as
	// in Redis: its calls stay at 320, and a command first called then
	// is not listed.
	c.Do("CONFIG", "SET", "latency-tracking", "no")
	for i := 0; i < 320; i++ {
		c.Do("ECHO", "x")
	}
	for i := 0; i < 320; i++ {
		c.Do("PING")
	}
	c.Do("CONFIG", "SET", "latency-tracking", "yes")
	r = c.Do("LATENCY", "HISTOGRAM", "echo", "ping")
	lines = strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
	if len(lines) < 10 || lines[0] != "*2" || lines[2] != "echo" || lines[6] != ":320" {
		t.Fatalf("LATENCY HISTOGRAM echo ping after 320 untracked calls of each: %q", r)
	}
	if strings.Contains(r, "ping") {
		t.Fatalf("PING, never tracked, is listed: %q", r)
	}
}
