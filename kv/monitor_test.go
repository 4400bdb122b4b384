package kv_test

import (
	"regexp"
	"strings"
	"testing"
)

// monitorHead is MONITOR's time and client address, which differ between
// servers and runs.
var monitorHead = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (?:[0-9.:]+|(lua))\]`)

// TestMonitorMatchesRedis: a monitor sees the same lines from redis-server
// and from Shoal for the same commands, the time and the client's port
// masked: the database, the quoting of every byte, AUTH redacted (and
// HELLO's and MIGRATE's credentials, as those commands parse them), admin
// commands and rejected ones left out, EXEC's commands one by one, a
// script's and a function's after the EVAL or FCALL, from "lua".
func TestMonitorMatchesRedis(t *testing.T) {
	want := bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		mon, c := dialRaw(t, addr), dialRaw(t, addr)
		if r := mon.Do("MONITOR"); r != "+OK\r\n" {
			t.Fatalf("%s: MONITOR: %q", addr, r)
		}
		for _, cmd := range [][]string{
			{"SET", "k", "v"}, {"GET", "k"}, {"SELECT", "2"}, {"SET", "a b", "x\ny\x01\"\\\xff"}, {"AUTH", "secret"},
			{"CONFIG", "GET", "maxmemory"}, {"NOSUCH", "x"}, {"MULTI"}, {"INCR", "n"}, {"PING"}, {"EXEC"},
			{"HELLO", "2", "AUTH", "default", "pw"}, {"SELECT", "0"}, {"DEL", "k"},
			{"HELLO", "2", "SETNAME", "auth", "AUTH", "default", "pw"}, {"HELLO", "2", "AUTH", "default"},
			{"MIGRATE", "127.0.0.1", "1", "", "0", "1000", "AUTH", "pw", "KEYS", "auth", "x"},
			{"MIGRATE", "127.0.0.1", "1", "", "0", "1000", "COPY", "AUTH2", "u", "pw", "KEYS", "k"},
			{"MIGRATE", "127.0.0.1", "1", "", "0", "1000", "FOO", "AUTH", "pw"},
			{"EVAL", "redis.call('set', KEYS[1], '1') return redis.call('get', KEYS[1])", "1", "s"},
			{"EVALSHA", "0000000000000000000000000000000000000000", "0"},
			{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mon\nredis.register_function('f', function(k) return redis.call('incr', k[1]) end)"},
			{"FCALL", "f", "1", "cnt"}, {"FUNCTION", "DELETE", "mon"}, {"ECHO", "end"},
		} {
			c.Do(cmd...)
		}
		var got []string
		for {
			line, err := mon.Read()
			if err != nil {
				t.Fatalf("%s: reading the monitor: %v (so far %q)", addr, err, got)
			}
			got = append(got, monitorHead.ReplaceAllString(line, "+T [$1 ADDR$2]"))
			if strings.HasSuffix(strings.ToLower(line), "\"echo\" \"end\"\r\n") {
				return got
			}
		}
	})
	if !strings.Contains(strings.Join(want, ""), `ADDRlua] "incr" "cnt"`) {
		t.Fatalf("redis-server showed no function's command: %q", want)
	}
}

// TestStalledMonitorIsClosedAtItsLimit: a monitor that stops reading is
// closed at the replica class's hard limit (Redis's class for monitors)
// instead of holding every command it was sent.
func TestStalledMonitorIsClosedAtItsLimit(t *testing.T) {
	srv := startLoops(t, 2)
	ctl := dialRaw(t, srv.addr)
	configure(t, ctl, "client-output-buffer-limit", "replica 1mb 0 0", "replica 256mb 64mb 60")
	mon := dialRaw(t, srv.addr)
	if r := mon.Do("MONITOR"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if !strings.Contains(ctl.Do("CLIENT", "LIST"), "flags=O ") {
		t.Fatal("CLIENT LIST does not show the monitor's O flag")
	}
	w := dialRaw(t, srv.addr)
	val := strings.Repeat("v", 64<<10)
	for i := 0; i < 400 && strings.Contains(ctl.Do("CLIENT", "LIST"), "flags=O "); i++ { // up to 25 MB of lines
		w.Do("SET", "k", val)
	}
	if strings.Contains(ctl.Do("CLIENT", "LIST"), "flags=O ") {
		t.Fatal("the stalled monitor was not closed after 25 MB of commands over its 1 MB limit")
	}
}
