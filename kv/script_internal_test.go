package kv

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/store"
)

// scriptHandler is a Handler and a client without a connection, which runs
// scripts without stopping any loop.
func scriptHandler(t testing.TB) (*Handler, *client) {
	t.Helper()
	st := store.New(store.Options{Shards: 16})
	h := New(st, Options{})
	t.Cleanup(func() { h.Close(); st.Close() })
	return h, &client{h: h, proto: 2, authed: true, valueDigits: 1}
}

func run(h *Handler, cl *client, args ...string) string {
	cl.out = cl.out[:0]
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	h.dispatch(cl, argv)
	return string(cl.out)
}

// TestMathRandomIsRedisSequence pins redis-server 7.0.15's math.random: the
// values a fresh server gives, and after math.randomseed(0).
func TestMathRandomIsRedisSequence(t *testing.T) {
	h, cl := scriptHandler(t)
	for _, tc := range []struct{ script, want string }{
		{"return tostring(math.random())", "$16\r\n0.39646477363839\r\n"},
		{"return tostring(math.random())", "$16\r\n0.84048536971234\r\n"},
		{"math.randomseed(0) return {tostring(math.random()), tostring(math.random())}",
			"*2\r\n$16\r\n0.17082803611217\r\n$16\r\n0.74990198051087\r\n"},
		{"math.randomseed(42) return {tostring(math.random()), math.random(1000)}", "*2\r\n$16\r\n0.74452500033403\r\n:343\r\n"},
	} {
		if got := run(h, cl, "EVAL", tc.script, "0"); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestLuaIntegerIsTheCCast(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want int64
	}{
		{3.99, 3}, {-3.99, -3}, {0, 0}, {math.Copysign(0, -1), 0}, {0x1p62, 1 << 62}, {-0x1p63, math.MinInt64},
		{0x1p63, math.MinInt64}, {math.Inf(1), math.MinInt64}, {math.Inf(-1), math.MinInt64}, {math.NaN(), math.MinInt64},
	} {
		if got := luaInteger(tc.in); got != tc.want {
			t.Errorf("luaInteger(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		body  string
		flags scriptFlags
		n     int
		err   string
	}{
		{"return 1", scriptFlags{}, 0, ""},
		{"#!lua\nreturn 1", scriptFlags{shebang: true}, 5, ""},
		{"#!lua flags=no-writes,allow-oom\n", scriptFlags{shebang: true, noWrites: true, allowOOM: true}, 31, ""},
		{"#!lua  flags=  \n", scriptFlags{shebang: true}, 15, ""},
		{"#!lua", scriptFlags{}, 0, "ERR Invalid script shebang"},
		{"#!luajit\n", scriptFlags{}, 0, "ERR Unexpected engine in script shebang: #!luajit"},
		{"#!lua flags=x\n", scriptFlags{}, 0, "ERR Unexpected flag in script shebang: x"},
		{"#!lua name=f\n", scriptFlags{}, 0, "ERR Unknown lua shebang option: name=f"},
	} {
		flags, n, err := parseShebang([]byte(tc.body))
		if err != tc.err || (err == "" && (flags != tc.flags || n != tc.n)) {
			t.Errorf("parseShebang(%q) = %+v, %d, %q; want %+v, %d, %q", tc.body, flags, n, err, tc.flags, tc.n, tc.err)
		}
	}
}

// TestScriptHeapLimit: a script that keeps growing a table is stopped once
// the live heap has grown by scriptHeapLimit, before the time limit.
func TestScriptHeapLimit(t *testing.T) {
	h, cl := scriptHandler(t)
	defer func(old uint64) { scriptHeapLimit = old }(scriptHeapLimit)
	scriptHeapLimit = 16 << 20
	start := time.Now()
	got := run(h, cl, "EVAL", "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1e5) .. i end", "0")
	if !strings.HasPrefix(got, "-ERR Script grew the heap by more than 16 MB and was stopped") {
		t.Fatalf("after %v: %q", time.Since(start), got)
	}
	if got := run(h, cl, "EVAL", "return 1", "0"); got != ":1\r\n" {
		t.Fatalf("after the heap limit: %q", got)
	}
}

// TestScriptReplyLimit: tables that share tables make a reply of 2^60
// elements; the reply stops at luaMaxReply with an error instead.
func TestScriptReplyLimit(t *testing.T) {
	h, cl := scriptHandler(t)
	defer func(old int) { luaMaxReply = old }(luaMaxReply)
	luaMaxReply = 1 << 20
	got := run(h, cl, "EVAL", "local t = {1} for i = 1, 60 do t = {t, t} end return t", "0")
	if got != "-ERR Script reply is larger than 1048576 bytes\r\n" {
		t.Fatalf("%.100q", got)
	}
}

// TestScriptEngineGoesWithItsHandler: the registry of engines does not keep
// a Handler alive, and drops its engine with it.
func TestScriptEngineGoesWithItsHandler(t *testing.T) {
	st := store.New(store.Options{Shards: 16})
	defer st.Close()
	h := New(st, Options{})
	cl := &client{h: h, proto: 2, authed: true, valueDigits: 1}
	if got := run(h, cl, "EVAL", "return redis.call('SET', 'k', 'v')", "0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	key := weak.Make(h)
	loop := &h.scripts().loop
	h.Close()
	h, cl = nil, nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if _, ok := scriptLoops.Load(loop); !ok && key.Value() == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the Handler or its script client's loop is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FuzzReplyToLua: whatever the bytes, converting them as a command's reply
// neither panics nor loops; a reply that does not parse is an error.
func FuzzReplyToLua(f *testing.F) {
	for _, seed := range []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$1\r\nx\r\n", "$-1\r\n", "*-1\r\n",
		"*2\r\n:1\r\n$1\r\na\r\n", "%1\r\n$1\r\nk\r\n:2\r\n", "~1\r\n$1\r\nm\r\n", "_\r\n", "#t\r\n", ",1.5\r\n",
		"(123\r\n", "=7\r\ntxt:abc\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n", "*4294967295\r\n", "*3\r\n*1\r\n"} {
		f.Add([]byte(seed))
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	f.Fuzz(func(t *testing.T, buf []byte) {
		if v, _ := replyToLua(L, buf); v == nil {
			t.Fatalf("replyToLua(%q) = nil", buf)
		}
	})
}

// FuzzCompileScript: any body compiles or is refused with a message;
// neither panics, however deep it nests.
func FuzzCompileScript(f *testing.F) {
	for _, seed := range []string{"return 1", "#!lua flags=no-writes\nreturn 1", "return 1 +", "#!", "#!lua",
		"return " + strings.Repeat("{", 6000) + strings.Repeat("}", 6000), "local function f() end", "x = [[", "return '\\"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, msg := compileScript("sha", body)
		if (s == nil) == (msg == "") {
			t.Fatalf("compileScript(%q) = %v, %q", body, s, msg)
		}
	})
}

// BenchmarkEvalSHA is a small script by its SHA1 (the rate limiters' and
// locks' path): one INCR through redis.call, the reply converted both ways.
func BenchmarkEvalSHA(b *testing.B) {
	h, cl := scriptHandler(b)
	sha := strings.TrimSpace(strings.Split(run(h, cl, "SCRIPT", "LOAD", "return redis.call('INCR', KEYS[1])"), "\r\n")[1])
	args := [][]byte{[]byte("EVALSHA"), []byte(sha), []byte("1"), []byte("counter")}
	b.ReportAllocs()
	for b.Loop() {
		cl.out = cl.out[:0]
		h.dispatch(cl, args)
	}
	if !strings.HasPrefix(string(cl.out), ":") {
		b.Fatalf("%q", cl.out)
	}
}

// BenchmarkEvalSHARateLimiter is issue 23's benchmark script, a rate
// limiter: INCR then EXPIRE of one key, KEYS and ARGV both used.
func BenchmarkEvalSHARateLimiter(b *testing.B) {
	h, cl := scriptHandler(b)
	body := "local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) return n"
	sha := strings.TrimSpace(strings.Split(run(h, cl, "SCRIPT", "LOAD", body), "\r\n")[1])
	args := [][]byte{[]byte("EVALSHA"), []byte(sha), []byte("1"), []byte("rl:1"), []byte("60")}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := threadCPU()
	for b.Loop() {
		cl.out = cl.out[:0]
		h.dispatch(cl, args)
	}
	if cpu := threadCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
	if !strings.HasPrefix(string(cl.out), ":") {
		b.Fatalf("%q", cl.out)
	}
}

// TestScriptWatchRearmsForAnEarlierThreshold: the watch's timer stays
// armed between runs, so a run whose threshold comes before the armed
// check must re-arm it; and a run that passes its threshold after many
// short ones is still marked busy.
func TestScriptWatchRearmsForAnEarlierThreshold(t *testing.T) {
	h, _ := scriptHandler(t)
	var w scriptWatch
	h.busy.threshold.Store(5000)
	for range 1000 {
		w.begin(h, true, monotonicNanos())
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
	}
	h.busy.threshold.Store(10)
	start := monotonicNanos()
	w.begin(h, true, start)
	w.mu.Lock()
	due := w.due
	w.mu.Unlock()
	if want := start + int64(10*time.Millisecond); due != want {
		t.Fatalf("the check is due %v after the start, want 10ms", time.Duration(due-start))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !h.busy.busy.Load() {
		if time.Now().After(deadline) {
			t.Fatal("a run past its 10 ms threshold was not marked busy in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if elapsed := time.Duration(monotonicNanos() - start); elapsed < 10*time.Millisecond {
		t.Fatalf("marked busy %v into the run, before its threshold", elapsed)
	}
	if err := w.end(); err != nil {
		t.Fatal(err)
	}
}

// TestReplacedLuaStateIsNotKeptByCachedScripts: a script's function is
// made once per Lua state; when a run breaks the state and the next run
// replaces it, the old state must go, though the scripts that ran in it
// stay cached.
func TestReplacedLuaStateIsNotKeptByCachedScripts(t *testing.T) {
	h, cl := scriptHandler(t)
	if got := run(h, cl, "EVAL", "return redis.call('PING')", "0"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	e := h.scripts()
	e.mu.Lock()
	old := weak.Make(e.vm)
	e.vm = nil // what execute does after a run that broke the state
	e.mu.Unlock()
	if got := run(h, cl, "EVAL", "return redis.call('PING')", "0"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for old.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the replaced Lua state is still reachable")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
