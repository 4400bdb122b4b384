package kv_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// Busy scripts against redis-server 7.0: past busy-reply-threshold other
// clients get -BUSY except for the allow_busy commands, SCRIPT KILL and
// FUNCTION KILL stop a script that has not written, SHUTDOWN needs NOSAVE.
// Each scenario runs on both servers and their replies are compared byte
// for byte. Shoal's connections are dialled one after another on three
// loops that take them in turn, so the script's caller sits alone on its
// loop: the clients of the script's own loop wait for it instead (see
// script_busy.go).

// busyServers runs scenario against a redis-server and a Shoal, each with
// busy-reply-threshold at 100 ms, and compares what it returns.
func busyServers(t *testing.T, scenario func(t *testing.T, addr string) []string) {
	t.Helper()
	bothServers(t, 3, []string{"--busy-reply-threshold", "100"}, func(t *testing.T, addr string) []string {
		if got := dialRaw(t, addr).Do("CONFIG", "SET", "busy-reply-threshold", "100"); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET busy-reply-threshold: %q", got)
		}
		return scenario(t, addr)
	})
}

// startScript sends args on c and returns a channel that gets its reply
// (or the read error's text) when it comes.
func startScript(c *rawConn, args ...string) <-chan string {
	c.Send(encodeCommand(args))
	done := make(chan string, 1)
	go func() {
		reply, err := c.Read()
		if err != nil {
			reply = "read error: " + err.Error()
		}
		done <- reply
	}()
	return done
}

// waitBusy sends GET on c until the reply is -BUSY (the script may not have
// started yet) and returns that reply.
func waitBusy(t *testing.T, c *rawConn) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		reply := c.Do("GET", "probe")
		if strings.HasPrefix(reply, "-BUSY") {
			return reply
		}
		if time.Now().After(deadline) {
			t.Fatalf("no -BUSY reply within 20 s; the last was %q", reply)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// busyPair dials two connections to addr, the first of which sets
// busy-reply-threshold to ms: one to run scripts that loop, one to be
// answered -BUSY and stop them.
func busyPair(t *testing.T, addr, ms string) (c, other *rawConn) {
	t.Helper()
	c, other = dialRaw(t, addr), dialRaw(t, addr)
	if got := c.Do("CONFIG", "SET", "busy-reply-threshold", ms); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET busy-reply-threshold %s: %q", ms, got)
	}
	return c, other
}

// checkFailsAndServes sends each command of cases (its reply must start
// with the case's value) with busy-reply-threshold out of the way, as the
// limits take a while to reach under the race detector; after each, probe
// must still be answered probeWant.
func checkFailsAndServes(t *testing.T, c *rawConn, cases map[string]string, command func(string) []string, probe []string, probeWant string) {
	t.Helper()
	c.Do("CONFIG", "SET", "busy-reply-threshold", "60000")
	for name, want := range cases {
		if got := c.Do(command(name)...); !strings.HasPrefix(got, want) {
			t.Errorf("%.60s = %.200q, want %q", name, got, want)
		}
		if got := c.Do(probe...); got != probeWant {
			t.Fatalf("after %.60s: %q", name, got)
		}
	}
}

// scriptResult waits for a script's reply.
func scriptResult(t *testing.T, done <-chan string) string {
	t.Helper()
	select {
	case reply := <-done:
		return reply
	case <-time.After(30 * time.Second):
		t.Fatal("the script's caller got no reply within 30 s")
		return ""
	}
}

func TestBusyEvalAnswersBusyAndScriptKillStopsIt(t *testing.T) {
	busyServers(t, func(t *testing.T, addr string) []string {
		conns := dialInTurn(t, addr, 3)
		caller, other, third := conns[0], conns[1], conns[2]
		var out []string
		for _, script := range []string{
			"while true do end",
			// pcall cannot catch the kill for good.
			"while true do pcall(function() while true do end end) end",
			"local t = redis.call('TIME') while true do redis.call('TIME') end",
		} {
			done := startScript(caller, "EVAL", script, "0")
			out = append(out, waitBusy(t, other),
				other.Do("PING"), third.Do("SET", "k", "v"), third.Do("EVAL", "return 1", "0"),
				other.Do("FUNCTION", "STATS"), other.Do("FUNCTION", "KILL"), other.Do("SHUTDOWN"),
				other.Do("SHUTDOWN", "SAVE"), other.Do("AUTH", "pw"),
				third.Do("MULTI"), third.Do("GET", "k"), third.Do("EXEC"),
				third.Do("MULTI"), third.Do("DISCARD"), third.Do("WATCH", "k"), third.Do("UNWATCH"),
				other.Do("SCRIPT", "KILL"), scriptResult(t, done),
				other.Do("SCRIPT", "KILL"), other.Do("GET", "k"), caller.Do("PING"))
		}
		return out
	})
}

var durationMs = regexp.MustCompile(`duration_ms\r\n:\d+\r\n`)

func TestBusyFunctionAnswersBusyAndFunctionKillStopsIt(t *testing.T) {
	busyServers(t, func(t *testing.T, addr string) []string {
		conns := dialInTurn(t, addr, 2)
		caller, other := conns[0], conns[1]
		lib := "#!lua name=busy\n" +
			"redis.register_function('spin', function(keys, args) while true do end end)\n" +
			"redis.register_function{function_name='rospin', callback=function() while true do end end, flags={'no-writes'}}\n"
		out := []string{other.Do("FUNCTION", "LOAD", lib)}
		for _, call := range [][]string{{"FCALL", "spin", "0", "a", "b"}, {"FCALL_RO", "rospin", "1", "k"}} {
			done := startScript(caller, call...)
			out = append(out, waitBusy(t, other),
				durationMs.ReplaceAllString(other.Do("FUNCTION", "STATS"), "duration_ms\r\n:N\r\n"),
				other.Do("PING"), other.Do("SCRIPT", "KILL"), other.Do("SHUTDOWN"),
				other.Do("FUNCTION", "KILL"), scriptResult(t, done),
				other.Do("FUNCTION", "KILL"), other.Do("FUNCTION", "STATS"), caller.Do("PING"))
		}
		return out
	})
}

func TestBusyScriptThatWroteIsUnkillable(t *testing.T) {
	busyServers(t, func(t *testing.T, addr string) []string {
		conns := dialInTurn(t, addr, 2)
		caller, other := conns[0], conns[1]
		done := startScript(caller, "EVAL", "redis.call('SET', 'w', '1') while true do end", "0")
		out := []string{waitBusy(t, other), other.Do("SCRIPT", "KILL"), other.Do("FUNCTION", "KILL"),
			other.Do("SHUTDOWN"), other.Do("GET", "w")}
		// SHUTDOWN NOSAVE ends it: redis-server exits, Shoal (in process)
		// closes the caller and answers -BUSY to everything after.
		other.Send(encodeCommand([]string{"SHUTDOWN", "NOSAVE"}))
		out = append(out, scriptResult(t, done))
		return out
	})
}

// TestBusyShutdownNoSaveFreezesTheServer: after SHUTDOWN NOSAVE stopped a
// busy script that wrote, the program is told to stop, the caller's
// connection closes without a reply, and no command reaches the store.
func TestBusyShutdownNoSaveFreezesTheServer(t *testing.T) {
	srv := startLoops(t, 3)
	conns := dialInTurn(t, srv.addr, 3)
	caller, other, third := conns[0], conns[1], conns[2]
	other.Do("CONFIG", "SET", "lua-time-limit", "50")
	done := startScript(caller, "EVAL", "redis.call('SET', 'w', '1') while true do end", "0")
	waitBusy(t, other)
	other.Send(encodeCommand([]string{"SHUTDOWN", "NOSAVE"}))
	select {
	case <-srv.handler.ShutdownRequested():
	case <-time.After(20 * time.Second):
		t.Fatal("SHUTDOWN NOSAVE did not ask the program to stop")
	}
	if got := scriptResult(t, done); got != "read error: EOF" {
		t.Fatalf("the stopped script's caller read %q, want the connection closed", got)
	}
	for _, cmd := range [][]string{{"GET", "w"}, {"SET", "x", "1"}, {"EVAL", "return 1", "0"}} {
		if got := third.Do(cmd...); got != "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n" {
			t.Fatalf("%q after SHUTDOWN NOSAVE: %q", cmd, got)
		}
	}
	if got := third.Do("SCRIPT", "KILL"); got != "-NOTBUSY No scripts in execution right now.\r\n" {
		t.Fatalf("SCRIPT KILL after SHUTDOWN NOSAVE: %q", got)
	}
}

// TestBusyScriptIsNeverStoppedByTheThreshold: a script that runs well past
// busy-reply-threshold ends with its own reply when nobody kills it.
func TestBusyScriptIsNeverStoppedByTheThreshold(t *testing.T) {
	busyServers(t, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		return []string{c.Do("CONFIG", "SET", "busy-reply-threshold", "20"),
			c.Do("EVAL", "local t0 = redis.call('TIME') "+
				"repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 300000 "+
				"return 'done'", "0"),
			c.Do("GET", "probe")}
	})
}

func TestBusyThresholdConfig(t *testing.T) {
	busyServers(t, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		var out []string
		for _, cmd := range [][]string{
			{"CONFIG", "GET", "busy-reply-threshold"}, {"CONFIG", "GET", "lua-time-limit"},
			{"CONFIG", "SET", "lua-time-limit", "250"}, {"CONFIG", "GET", "busy-reply-threshold"},
			{"CONFIG", "GET", "lua-time-limit"}, {"CONFIG", "SET", "busy-reply-threshold", "-1"},
			{"CONFIG", "SET", "busy-reply-threshold", "0"}, {"CONFIG", "GET", "busy-reply-threshold"},
		} {
			out = append(out, c.Do(cmd...))
		}
		return out
	})
}

// TestBusyShutdownNoSaveStopsTheProcess runs the shoal binary and
// redis-server with an append-only file: a busy script that wrote is
// UNKILLABLE, SHUTDOWN NOSAVE makes the process exit, and after a restart
// the data has the writes before the script and none of the script's.
func TestBusyShutdownNoSaveStopsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the shoal binary")
	}
	bin := filepath.Join(t.TempDir(), "shoal")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/shoal").CombinedOutput(); err != nil {
		t.Fatalf("building shoal: %v\n%s", err, out)
	}
	redisPath := redistest.Binary(t, "redis-server")
	servers := map[string]func(port int, dir string) *exec.Cmd{
		"redis-server": func(port int, dir string) *exec.Cmd {
			return exec.Command(redisPath, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
				"--appendonly", "yes", "--dir", dir, "--busy-reply-threshold", "50", "--loglevel", "warning")
		},
		"shoal": func(port int, dir string) *exec.Cmd {
			return exec.Command(bin, "--port", strconv.Itoa(port), "--appendonly", "yes", "--dir", dir,
				"--lua-time-limit", "50", "--loops", "3", "--balancer", "roundrobin", "--loglevel", "warning")
		},
	}
	for name, command := range servers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			addr := "127.0.0.1:" + strconv.Itoa(port)
			cmd := startProcess(t, command(port, dir), addr)
			conns := dialInTurn(t, addr, 2)
			caller, other := conns[0], conns[1]
			if got := other.Do("SET", "a", "1"); got != "+OK\r\n" {
				t.Fatalf("SET: %q", got)
			}
			done := startScript(caller, "EVAL", "redis.call('SET', 'w', '1') while true do end", "0")
			waitBusy(t, other)
			if got := other.Do("SCRIPT", "KILL"); !strings.HasPrefix(got, "-UNKILLABLE ") {
				t.Fatalf("SCRIPT KILL: %q", got)
			}
			other.Send(encodeCommand([]string{"SHUTDOWN", "NOSAVE"}))
			if got, err := other.ReadUntilClose(); got != "" || err != nil {
				t.Fatalf("SHUTDOWN NOSAVE answered %q, %v; want the connection closed", got, err)
			}
			if got := scriptResult(t, done); got != "read error: EOF" {
				t.Fatalf("the script's caller read %q, want the connection closed", got)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("the process ended with %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the process did not exit within 20 s of SHUTDOWN NOSAVE")
			}
			startProcess(t, command(port, dir), addr)
			c := dialRaw(t, addr)
			if got := c.Do("MGET", "a", "w"); got != "*2\r\n$1\r\n1\r\n$-1\r\n" {
				t.Fatalf("after a restart MGET a w = %q, want a and not the stopped script's w", got)
			}
		})
	}
}

// startProcess starts cmd, waits until addr answers PING and stops the
// process (this PID only) when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, addr string) *exec.Cmd {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	if !waitPing(addr, 20*time.Second) {
		t.Fatalf("%s did not answer PING on %s", cmd.Path, addr)
	}
	return cmd
}
